//! Fuzzes op-spec's parser and validator (`OpDefBuilder::build`), its error
//! formatting, its text-format printer, and the `to_spec` round trip.
//!
//! The input is read as UTF-8 (invalid bytes become U+FFFD) and split into
//! lines. The first line is the op's name; each later line is one of
//!
//! ```text
//! a <attr spec>       i <input spec>      o <output spec>
//! f <full-type spec>  (`y: TFT_TENSOR[TFT_VAR{'T'}]`)
//! d <doc line>        (lines joined with '\n' into the op's docs)
//! ! <flags>           s stateful, c commutative, g aggregate,
//!                     u allows_uninitialized_input, x distributed_communication
//! ```
//!
//! and any other line is ignored. See `seeds/` for examples.
//!
//! Oracles:
//! - nothing panics;
//! - an error list is never empty, and every error formats (Display and
//!   `one_line`) with a column inside its spec;
//! - a valid op prints (`op_list_to_string`, `op_def_to_short_string`), and
//!   rebuilding it from the `to_spec()` of its attrs, inputs and outputs and
//!   the full types of its outputs (their `Display`), with the same name,
//!   docs and flags, gives an equal op (and equal text).

#![no_main]

use libfuzzer_sys::fuzz_target;
use op_spec::{OpDef, OpDefBuilder, SpecErrors, pbtxt};

/// The builder flags a `!` line can set.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    stateful: bool,
    commutative: bool,
    aggregate: bool,
    uninitialized: bool,
    distributed: bool,
}

impl Flags {
    fn apply(self, mut b: OpDefBuilder) -> OpDefBuilder {
        if self.stateful {
            b = b.set_is_stateful();
        }
        if self.commutative {
            b = b.set_is_commutative();
        }
        if self.aggregate {
            b = b.set_is_aggregate();
        }
        if self.uninitialized {
            b = b.set_allows_uninitialized_input();
        }
        if self.distributed {
            b = b.set_is_distributed_communication();
        }
        b
    }
}

fn check_errors(errors: &SpecErrors) {
    assert!(!errors.errors().is_empty(), "Err with no errors");
    let _ = errors.to_string();
    for e in errors.errors() {
        let _ = e.to_string();
        let _ = e.one_line();
        let _ = e.spec_label();
        assert!(
            e.column() <= e.spec.chars().count() + 1,
            "column {} past the end of {:?}",
            e.column(),
            e.spec
        );
    }
}

/// Whether two ops are the same, counting NaN defaults as equal to
/// themselves (`OpDef`'s `PartialEq` compares floats with `==`).
fn same_op(a: &OpDef, b: &OpDef) -> bool {
    a == b || format!("{a:?}") == format!("{b:?}")
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let name = lines.next().unwrap_or_default();
    let mut builder = OpDefBuilder::new(name);
    let mut doc: Option<String> = None;
    let mut flags = Flags::default();
    for line in lines {
        let Some((tag, rest)) = line.split_at_checked(2) else {
            continue;
        };
        match tag {
            "a " => builder = builder.attr(rest),
            "i " => builder = builder.input(rest),
            "o " => builder = builder.output(rest),
            "f " => builder = builder.full_type(rest),
            "d " => match &mut doc {
                Some(d) => {
                    d.push('\n');
                    d.push_str(rest);
                }
                None => doc = Some(rest.to_owned()),
            },
            "! " => {
                for c in rest.chars() {
                    match c {
                        's' => flags.stateful = true,
                        'c' => flags.commutative = true,
                        'g' => flags.aggregate = true,
                        'u' => flags.uninitialized = true,
                        'x' => flags.distributed = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(d) = &doc {
        builder = builder.doc(d.as_str());
    }
    builder = flags.apply(builder);

    let op = match builder.build() {
        Ok(op) => op,
        Err(errors) => {
            check_errors(&errors);
            return;
        }
    };
    let printed = pbtxt::op_list_to_string([&op]);
    let _ = pbtxt::op_def_to_short_string(&op);

    // The round trip: the specs `to_spec` writes parse back to the same op.
    // The flags are the ones asked for, not `op.is_stateful`: a resource
    // input or output makes the op stateful on its own, and must do so again.
    let mut again = OpDefBuilder::new(op.name.as_str());
    let mut specs = Vec::new();
    for attr in &op.attrs {
        let spec = attr.to_spec();
        again = again.attr(spec.as_str());
        specs.push(format!("a {spec}"));
    }
    for arg in &op.inputs {
        let spec = arg.to_spec();
        again = again.input(spec.as_str());
        specs.push(format!("i {spec}"));
    }
    for arg in &op.outputs {
        let spec = arg.to_spec();
        again = again.output(spec.as_str());
        specs.push(format!("o {spec}"));
    }
    for arg in &op.outputs {
        if let Some(full_type) = &arg.full_type {
            let spec = format!("{}: {full_type}", arg.name);
            again = again.full_type(spec.as_str());
            specs.push(format!("f {spec}"));
        }
    }
    if let Some(d) = &doc {
        again = again.doc(d.as_str());
    }
    again = flags.apply(again);
    let rebuilt = match again.build() {
        Ok(rebuilt) => rebuilt,
        Err(errors) => panic!(
            "round trip: the specs written by to_spec() do not build\n\
             input: {text:?}\nspecs: {specs:#?}\nerrors:\n{errors}"
        ),
    };
    assert!(
        same_op(&op, &rebuilt),
        "round trip: to_spec() changed the op\ninput: {text:?}\nspecs: {specs:#?}\n\
         first:   {op:?}\nrebuilt: {rebuilt:?}"
    );
    assert_eq!(
        printed,
        pbtxt::op_list_to_string([&rebuilt]),
        "round trip: the text format changed\ninput: {text:?}\nspecs: {specs:#?}"
    );
});
