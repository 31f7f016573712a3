//! `cargo xtask codegen`: writing the workspace's op artifacts into a
//! temporary root, `--check` naming each stale or missing file, the
//! refusal to generate from a registry with conflicts, and the committed
//! files being up to date.

use std::path::Path;
use std::process::Command;

use op_core::OpDefBuilder;
use op_core::registry::{OpRegistration, Registry};
use xtask::codegen::{self, DIR};

/// `run` on `registry` and `root`, with its report.
fn run(registry: &Registry, root: &Path, check: bool) -> (bool, String) {
    let mut out = Vec::new();
    let ok = codegen::run(registry, root, check, &mut out).unwrap();
    (ok, String::from_utf8(out).unwrap())
}

#[test]
fn check_fails_naming_each_missing_or_stale_file_until_they_are_written() {
    let registry = codegen::workspace_registry();
    let root = tempfile::tempdir().unwrap();
    let root = root.path();

    let (ok, report) = run(registry, root, true);
    assert!(!ok);
    assert_eq!(
        report,
        "docs/ops/ops.pbtxt: missing\n\
         docs/ops/reference.md: missing\n\
         docs/ops/coverage.md: missing\n\
         3 generated file(s) out of date: run `cargo xtask codegen` and commit the result\n"
    );
    assert!(!root.join(DIR).exists(), "--check wrote something");

    let (ok, report) = run(registry, root, false);
    assert!(ok, "{report}");
    let ops = registry.ops().count();
    assert!(ops > 50, "op-kernels is linked: {ops} op(s)");
    assert!(
        report.ends_with(&format!(
            "{ops} op(s) in docs/ops/: 3 file(s) rewritten, 0 unchanged\n"
        )),
        "{report}"
    );
    assert_eq!(run(registry, root, true), (true, String::new()));

    // A hand edit, a deleted file: both named, nothing else.
    let reference = root.join(DIR).join("reference.md");
    let text = std::fs::read_to_string(&reference).unwrap();
    std::fs::write(&reference, text.replacen("`ZeroOut`", "`ZeroOut2`", 1)).unwrap();
    std::fs::remove_file(root.join(DIR).join("coverage.md")).unwrap();
    let (ok, report) = run(registry, root, true);
    assert!(!ok);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 3, "{report}");
    assert!(
        lines[0].starts_with("docs/ops/reference.md: stale (first difference at line "),
        "{report}"
    );
    assert_eq!(lines[1], "docs/ops/coverage.md: missing");

    let (ok, report) = run(registry, root, false);
    assert!(ok);
    assert!(
        report.starts_with("wrote docs/ops/reference.md\nwrote docs/ops/coverage.md\n"),
        "{report}"
    );
    assert!(
        report.ends_with("2 file(s) rewritten, 1 unchanged\n"),
        "{report}"
    );
    assert_eq!(run(registry, root, true), (true, String::new()));
}

#[test]
fn the_generated_files_name_every_registered_op_with_no_absolute_paths() {
    let registry = codegen::workspace_registry();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let files = codegen::artifacts(registry, root).files();
    for file in &files {
        for op in registry.ops() {
            let name = &op.def().name;
            assert!(
                file.contents.contains(&format!("\"{name}\""))
                    || file.contents.contains(&format!("`{name}`")),
                "{} does not name {name}",
                file.name
            );
        }
        assert!(
            !file.contents.contains(&*root.to_string_lossy()),
            "{}",
            file.name
        );
    }
}

#[test]
fn the_op_list_reads_back_as_protobuf_text_with_each_op_by_name_in_order() {
    let registry = codegen::workspace_registry();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let text = codegen::artifacts(registry, root).op_list();
    let message = op_spec::text::parse_message(&text).unwrap();
    let ops = message.root().fields("OpList").unwrap();
    let names: Vec<String> = ops
        .iter()
        .map(|op| {
            assert_eq!(op.name, "op");
            let fields = op.value.fields("OpDef").unwrap();
            let name = fields.iter().find(|f| f.name == "name").unwrap();
            String::from_utf8(name.value.to_bytes().unwrap()).unwrap()
        })
        .collect();
    let registered: Vec<&str> = registry.ops().map(|op| op.def().name.as_str()).collect();
    assert_eq!(names, registered);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

static TWICE_A: OpRegistration = OpRegistration::new(
    "Twice",
    || OpDefBuilder::new("Twice").output("y: float").build(),
    "a.rs",
    1,
);
static TWICE_B: OpRegistration = OpRegistration::new(
    "Twice",
    || OpDefBuilder::new("Twice").output("y: float").build(),
    "b.rs",
    1,
);

#[test]
fn a_registry_with_conflicts_is_refused_and_nothing_is_written() {
    let registry = Registry::new([&TWICE_A, &TWICE_B], []);
    let root = tempfile::tempdir().unwrap();
    for check in [false, true] {
        let (ok, report) = run(&registry, root.path(), check);
        assert!(!ok);
        assert!(
            report.starts_with("the registry has conflicts; fix them first:\n"),
            "{report}"
        );
        assert!(
            report.contains("op 'Twice' is registered twice"),
            "{report}"
        );
    }
    assert!(!root.path().join(DIR).exists());
}

#[test]
fn the_committed_files_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (ok, report) = run(codegen::workspace_registry(), root, true);
    assert!(ok, "{report}");
}

#[test]
fn cargo_xtask_codegen_check_exits_with_success_on_the_workspace() {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["codegen", "--check"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
