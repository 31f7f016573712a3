//! `cargo xtask compat` against golden files in a temporary directory: a
//! blessed golden is compatible, an incompatible change is reported op by
//! op and fails, added ops are named but pass; the real binary's exit
//! status says the same. And the committed golden holds for the ops the
//! workspace registers now.

use std::path::Path;
use std::process::Command;

use op_spec::attr_value::ListValue;
use op_spec::compat::Rule;
use op_spec::{DType, OpDef, OpDefBuilder, pbtxt};
use xtask::compat::{self, Error};

/// The registered ops, with `op`'s definition changed by `change`.
fn with_changed(op: &str, change: impl FnOnce(&mut OpDef)) -> Vec<OpDef> {
    let mut ops = compat::registered_ops();
    let target = ops
        .iter_mut()
        .find(|o| o.name == op)
        .unwrap_or_else(|| panic!("{op} is registered"));
    change(target);
    ops
}

/// Runs the check of `current` against `golden`, returning its result and output.
fn check(golden: &Path, current: &[OpDef]) -> (Result<bool, Error>, String) {
    let mut out = Vec::new();
    let result = compat::run(golden, current, false, &mut out);
    (result, String::from_utf8(out).unwrap())
}

#[test]
fn a_blessed_golden_is_compatible_and_holds_every_op_without_docs() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("nested/ops.golden.pbtxt");
    let ops = compat::registered_ops();
    assert!(ops.len() > 50, "{} ops registered", ops.len());

    let mut out = Vec::new();
    assert!(compat::run(&golden, &ops, true, &mut out).unwrap());
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("wrote {}: {} ops\n", golden.display(), ops.len())
    );
    let text = std::fs::read_to_string(&golden).unwrap();
    assert!(text.starts_with("# The ops this workspace registers"));
    let read = pbtxt::parse_op_list(&text).unwrap();
    let stripped: Vec<OpDef> = ops.iter().map(compat::without_docs).collect();
    assert_eq!(read, stripped);
    assert!(read.iter().all(|op| op.summary.is_empty()));

    let (result, out) = check(&golden, &ops);
    assert!(result.unwrap());
    assert_eq!(
        out,
        format!(
            "compatible: the {} ops of {} are backwards compatible\n",
            ops.len(),
            golden.display()
        )
    );
}

#[test]
fn an_incompatible_change_is_reported_by_op_and_part_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ops.golden.pbtxt");
    // The golden allowed half too, and had an op since removed: the ops
    // registered now narrow ZeroOutPolymorphic's T and lack `Retired`.
    let mut released = with_changed("ZeroOutPolymorphic", |op| {
        let Some(ListValue::Type(types)) = &mut op.attrs[0].allowed_values else {
            panic!("T has allowed types");
        };
        types.push(DType::F16);
    });
    released.push(
        OpDefBuilder::new("Retired")
            .input("x: float")
            .build()
            .unwrap(),
    );
    std::fs::write(&golden, compat::golden_text(&released)).unwrap();

    let (result, out) = check(&golden, &compat::registered_ops());
    assert!(!result.unwrap(), "{out}");
    assert!(
        out.starts_with("Retired: op was removed or renamed: an op may not be removed or renamed"),
        "{out}"
    );
    assert!(
        out.contains(
            "ZeroOutPolymorphic: attr 'T' narrowed its allowed values: a constraint may only widen"
        ),
        "{out}"
    );
    assert!(
        out.contains("  old: T: {float, double, int32, half} = DT_INT32\n  new: T: {float, double, int32} = DT_INT32\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "incompatible: 2 violation(s) of backwards compatibility against {}.",
            golden.display()
        )),
        "{out}"
    );

    let report = compat::compare(
        &std::fs::read_to_string(&golden).unwrap(),
        &compat::registered_ops(),
    )
    .unwrap();
    let rules: Vec<(&str, Rule)> = report
        .violations
        .iter()
        .map(|v| (v.op.as_str(), v.rule))
        .collect();
    assert_eq!(
        rules,
        [
            ("Retired", Rule::OpRemoved),
            ("ZeroOutPolymorphic", Rule::AllowedValuesNarrowed)
        ]
    );
}

#[test]
fn ops_added_since_the_golden_are_named_and_pass() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ops.golden.pbtxt");
    let mut released = compat::registered_ops();
    released.retain(|op| op.name != "ZeroOut" && op.name != "AddN");
    std::fs::write(&golden, compat::golden_text(&released)).unwrap();
    let (result, out) = check(&golden, &compat::registered_ops());
    assert!(result.unwrap(), "{out}");
    assert!(
        out.ends_with(
            "\n2 op(s) added since (compatible; `--bless` at the next release records them): AddN, ZeroOut\n"
        ),
        "{out}"
    );
}

/// A change TensorFlow accepts (a full type added, a type allowed) is
/// named as a changed op and passes; the op is the same to the checker.
#[test]
fn ops_changed_compatibly_since_the_golden_are_named_and_pass() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ops.golden.pbtxt");
    let released = with_changed("Shape", |op| op.outputs[0].full_type = None);
    let released = {
        let mut ops = released;
        let narrow = ops
            .iter_mut()
            .find(|o| o.name == "ZeroOutPolymorphic")
            .unwrap();
        let Some(ListValue::Type(types)) = &mut narrow.attrs[0].allowed_values else {
            panic!("T has allowed types");
        };
        types.retain(|t| *t != DType::F64);
        ops
    };
    std::fs::write(&golden, compat::golden_text(&released)).unwrap();
    let (result, out) = check(&golden, &compat::registered_ops());
    assert!(result.unwrap(), "{out}");
    assert!(
        out.contains(
            "\n2 op(s) changed compatibly since (`--bless` at the next release records them): Shape, ZeroOutPolymorphic\n"
        ),
        "{out}"
    );
    let report = compat::compare(
        &std::fs::read_to_string(&golden).unwrap(),
        &compat::registered_ops(),
    )
    .unwrap();
    assert_eq!(report.changed, ["Shape", "ZeroOutPolymorphic"]);
    assert!(report.violations.is_empty() && report.added.is_empty());
}

#[test]
fn a_missing_or_broken_golden_is_an_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.pbtxt");
    let (result, _) = check(&missing, &compat::registered_ops());
    let e = result.unwrap_err();
    assert!(matches!(e, Error::Io(..)));
    assert!(
        e.to_string()
            .ends_with("none.pbtxt: not found; write it from the registered ops with `cargo xtask compat --bless`"),
        "{e}"
    );

    let broken = dir.path().join("broken.pbtxt");
    std::fs::write(
        &broken,
        "op {\n  name: \"A\"\n  attr { name: \"T\" typ: \"type\" }\n}\n",
    )
    .unwrap();
    let (result, _) = check(&broken, &compat::registered_ops());
    let e = result.unwrap_err();
    assert!(matches!(e, Error::Golden(..)));
    assert!(
        e.to_string().ends_with(
            "broken.pbtxt: line 3, column 20: op 'A', attr 'T': AttrDef has no field 'typ' (did you mean 'type'?)"
        ),
        "{e}"
    );
}

#[test]
fn the_command_exits_1_on_an_incompatible_change_0_when_compatible_and_2_when_it_cannot_check() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("ops.golden.pbtxt");
    let xtask = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("compat")
            .args(args)
            .output()
            .expect("xtask runs")
    };
    let golden_arg = golden.to_str().unwrap();

    let blessed = xtask(&["--bless", "--golden", golden_arg]);
    assert_eq!(blessed.status.code(), Some(0));
    assert_eq!(xtask(&["--golden", golden_arg]).status.code(), Some(0));

    // A release that had a default on ZeroOutPolymorphic's T of float.
    let released = with_changed("ZeroOutPolymorphic", |op| {
        op.attrs[0].default_value = Some(DType::F32.into());
    });
    std::fs::write(&golden, compat::golden_text(&released)).unwrap();
    let failed = xtask(&["--golden", golden_arg]);
    assert_eq!(failed.status.code(), Some(1));
    let stdout = String::from_utf8(failed.stdout).unwrap();
    assert!(
        stdout.starts_with("ZeroOutPolymorphic: attr 'T' changed its default"),
        "{stdout}"
    );

    let missing = xtask(&["--golden", dir.path().join("none").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8(missing.stderr)
            .unwrap()
            .starts_with("cargo xtask compat: ")
    );
}

#[test]
fn the_committed_golden_holds_for_the_registered_ops() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(compat::GOLDEN);
    let text = std::fs::read_to_string(&golden).unwrap();
    let report = compat::compare(&text, &compat::registered_ops()).unwrap();
    let shown: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    assert!(report.is_compatible(), "{}", shown.join("\n\n"));
}
