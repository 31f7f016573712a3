//! Lite kernels written with `#[lite_kernel]`: the seed's `Sin` (two
//! functions, no state), an override of the builtin ADD for versions 1 and
//! 2, and a kernel with state read from its options, all found through
//! `linked_kernels`, `MutableOpResolver::add` and `add_linked`.

mod common;

use common::{ModelBuilder, SEED_X, assert_close, seed_sin_model};
use op_core::{Code, DType, Error, Result};
use op_lite::kernel::{InitContext, InvokeContext, PrepareContext};
use op_lite::model::BuiltinOperator;
use op_lite::registration::LiteOpName;
use op_lite::resolver::Versions;
use op_lite::{
    Interpreter, MutableOpResolver, OpResolver, linked_kernels, lite_ensure_eq,
    lite_ensure_types_eq, lite_kernel,
};

/// The seed's custom `Sin`, as `SinPrepare` and `SinEval`.
struct Sin;

#[lite_kernel(custom = "Sin")]
impl Sin {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
        lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
        lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
        let shape = ctx.input_shape(0)?;
        ctx.set_output_dtype(0, DType::F32)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let input = ctx.input::<f32>(0)?;
        let output = ctx.output_mut::<f32>(0)?;
        for (y, x) in output.iter_mut().zip(input) {
            *y = x.sin();
        }
        Ok(())
    }
}

/// An override of the builtin ADD, versions 1 and 2: same-shape floats, or
/// a scalar added to each element.
struct Add;

#[lite_kernel(builtin = "ADD", versions = 1..=2)]
impl Add {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        lite_ensure_eq!(ctx, ctx.num_inputs(), 2);
        let shape = ctx.input_shape(0)?;
        let other = ctx.input_len(1)?;
        if other != 1 && other != ctx.input_len(0)? {
            return Err(
                ctx.error("ADD (linked): the second input is a scalar or of the first's size")
            );
        }
        ctx.set_output_shape(0, shape)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (a, b) = (ctx.input::<f32>(0)?, ctx.input::<f32>(1)?);
        let out = ctx.output_mut::<f32>(0)?;
        for (i, (y, x)) in out.iter_mut().zip(a).enumerate() {
            *y = x + b[if b.len() == 1 { 0 } else { i }];
        }
        Ok(())
    }
}

/// A kernel with state: multiplies by its `scale` option, and counts its
/// invocations.
struct Scale {
    scale: f32,
    calls: usize,
}

#[lite_kernel(custom = "Scale", versions = 1)]
impl Scale {
    fn init(ctx: &InitContext<'_>) -> Result<Scale> {
        Ok(Scale {
            scale: ctx.option("scale")?,
            calls: 0,
        })
    }

    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        self.calls += 1;
        let x = ctx.input::<f32>(0)?;
        let y = ctx.output_mut::<f32>(0)?;
        for (y, x) in y.iter_mut().zip(x) {
            *y = x * self.scale + self.calls as f32;
        }
        Ok(())
    }
}

fn linked() -> MutableOpResolver {
    let mut resolver = MutableOpResolver::new();
    resolver.add_linked();
    resolver
}

#[test]
fn the_linked_kernels_are_listed_with_their_ops_versions_and_places() {
    let kernels = linked_kernels();
    let listed: Vec<(LiteOpName, Versions)> =
        kernels.iter().map(|k| (k.name(), k.versions())).collect();
    assert_eq!(
        listed,
        [
            (
                LiteOpName::Builtin(BuiltinOperator::ADD),
                Versions::from(1..=2)
            ),
            (LiteOpName::Custom("Scale"), Versions::from(1)),
            (LiteOpName::Custom("Sin"), Versions::ALL),
        ]
    );
    let sin = kernels[2];
    assert_eq!(sin.module_path(), "lite_kernel");
    assert!(
        sin.location().starts_with("op-lite/tests/lite_kernel.rs:"),
        "{}",
        sin.location()
    );
    assert_eq!(sin.name().to_string(), "custom op 'Sin'");
    assert_eq!(kernels[0].name().to_string(), "builtin ADD");
}

#[test]
fn the_seed_s_model_runs_on_the_linked_sin_and_add() {
    let mut interpreter = Interpreter::new(&seed_sin_model(), &linked()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &SEED_X).unwrap();
    interpreter.invoke().unwrap();
    let expected = SEED_X.map(|x| (x + 1.0).sin());
    assert_close(interpreter.output::<f32>(0).unwrap(), &expected);
}

#[test]
fn add_registers_one_linked_kernel() {
    let sin = linked_kernels()
        .into_iter()
        .find(|k| k.name() == LiteOpName::Custom("Sin"))
        .unwrap();
    let mut resolver = MutableOpResolver::new();
    resolver.add(sin);
    assert!(resolver.find_custom("Sin", 7).is_some());
    assert!(resolver.find_custom("Scale", 1).is_none());
    assert!(resolver.find_builtin(BuiltinOperator::ADD, 1).is_none());
    // Without ADD, the seed's model names what is missing.
    let err = Interpreter::new(&seed_sin_model(), &resolver).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("builtin opcode 'ADD'"), "{err}");
}

/// ADD through the seed's model: `x + 1` for ADD at `version`.
fn run_add(resolver: &MutableOpResolver, version: i32) -> Result<Vec<f32>> {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[3]);
    let one = b.constant("one", &[1], &[1.0]);
    let y = b.f32("y", &[3]);
    b.builtin(BuiltinOperator::ADD, version, &[x, one], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), resolver)?;
    interpreter.allocate_tensors()?;
    interpreter.set_input(0, &[1.0f32, 2.0, 3.0])?;
    interpreter.invoke()?;
    Ok(interpreter.output::<f32>(0)?.to_vec())
}

#[test]
fn a_builtin_override_replaces_the_earlier_kernel_for_its_versions_only() {
    fn failing(_: &mut InvokeContext<'_>) -> Result<()> {
        Err(Error::internal("the kernel that was overridden"))
    }
    fn same_shape(ctx: &mut PrepareContext<'_>) -> Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }
    let mut resolver = MutableOpResolver::new();
    resolver.add_builtin(
        BuiltinOperator::ADD,
        op_lite::FnOp::new(same_shape, failing),
    );
    assert!(run_add(&resolver, 1).is_err());
    resolver.add_linked();
    assert_eq!(run_add(&resolver, 1).unwrap(), [2.0, 3.0, 4.0]);
    assert_eq!(run_add(&resolver, 2).unwrap(), [2.0, 3.0, 4.0]);
    // Version 3 is not the override's: the earlier kernel still serves it.
    let err = run_add(&resolver, 3).unwrap_err();
    assert!(
        err.message().contains("the kernel that was overridden"),
        "{err}"
    );
    // And with the override alone, version 3 is missing, with the versions there are.
    let err = run_add(&linked(), 3).unwrap_err();
    assert!(
        err.message()
            .contains("the resolver has ADD for versions 1 to 2"),
        "{err}"
    );
}

#[test]
fn a_kernel_with_state_reads_its_options_once_and_keeps_its_state() {
    let options = {
        let mut builder = flexbuffers::Builder::default();
        let mut map = builder.start_map();
        map.push("scale", 2.0f32);
        map.end_map();
        builder.view().to_vec()
    };
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom_with("Scale", &[x], &[y], options);
    b.input(x).output(y);
    let model = b.build();
    let mut interpreter = Interpreter::new(&model, &linked()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[1.0f32, -1.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [3.0, -1.0]);
    interpreter.invoke().unwrap();
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [4.0, 0.0],
        "the second call"
    );

    // Without the option, init fails naming it.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom("Scale", &[x], &[y]);
    b.input(x).output(y);
    let err = Interpreter::new(&b.build(), &linked()).unwrap_err();
    assert!(
        err.message().contains("custom option 'scale' is missing"),
        "{err}"
    );
}

#[test]
fn a_linked_override_replaces_the_builtin_kernel_for_its_versions() {
    let mut resolver = op_lite::builtins::BuiltinOpResolver::new().into_inner();
    let builtin = resolver.find_builtin(BuiltinOperator::ADD, 1).unwrap() as *const _ as *const u8;
    resolver.add_linked();
    let linked = resolver.find_builtin(BuiltinOperator::ADD, 1).unwrap() as *const _ as *const u8;
    assert_ne!(builtin, linked, "versions 1 and 2 are the linked kernel's");
    // Version 3 is still the builtin library's (which has ADD up to version 5).
    assert!(resolver.find_builtin(BuiltinOperator::ADD, 3).is_some());
    assert_eq!(run_add(&resolver, 1).unwrap(), [2.0, 3.0, 4.0]);
    assert_eq!(run_add(&resolver, 3).unwrap(), [2.0, 3.0, 4.0]);
}

#[test]
fn a_missing_op_whose_kernel_is_linked_says_how_to_add_it() {
    // The seed's model asks for custom Sin and builtin ADD; both have
    // linked kernels here, and an empty resolver has neither.
    let err = Interpreter::new(&seed_sin_model(), &MutableOpResolver::new()).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let text = err.to_string();
    assert_eq!(
        text.matches("add the linked kernels with `resolver.add_linked()`")
            .count(),
        2,
        "{text}"
    );
    assert!(
        text.contains(
            "A #[lite_kernel] for it is linked into this program (op-lite/tests/lite_kernel.rs:"
        ),
        "{text}"
    );
    // With them added, nothing is missing.
    Interpreter::new(&seed_sin_model(), &linked()).unwrap();
}
