//! `cargo run --example op_artifacts`: a downstream crate's own op
//! artifacts name its ops and only those (even with op-kernels linked),
//! the committed `examples/ops/` is up to date, and the binary writes and
//! checks a folder.

use std::process::Command;

use op_core::Registry;

mod common;

#[path = "../examples/op_artifacts.rs"]
#[allow(dead_code)]
mod example;

const OURS: [&str; 3] = ["Examples>ClipByValue", "Examples>L2Norm", "Examples>Lerp"];

#[test]
fn the_artifacts_describe_this_crates_ops_and_no_others() {
    examples::link();
    op_kernels::link();
    let registry = Registry::global();
    assert!(registry.get("Examples>SimpleHashTableFind").is_some());
    let artifacts = example::artifacts(registry);
    let names: Vec<&str> = artifacts
        .ops()
        .iter()
        .map(|op| op.def().name.as_str())
        .collect();
    assert_eq!(names, OURS);

    let op_list = artifacts.op_list();
    let reference = artifacts.reference();
    let coverage = artifacts.coverage();
    for op in OURS {
        assert!(
            op_list.contains(&format!("  name: \"{op}\"\n")),
            "{op_list}"
        );
        assert!(reference.contains(&format!("\n## `{op}`\n")), "{reference}");
        assert!(
            coverage.contains(&format!("\n| `{op}` | cpu |")),
            "{coverage}"
        );
    }
    assert!(reference.contains("Declared at `examples/src/lib.rs:"));
    assert!(reference.contains("- `clip_min: float = 0`: The smallest value kept."));
    for file in [&op_list, &reference, &coverage] {
        assert!(!file.contains("SimpleHashTable"));
        assert!(!file.contains("ZeroOut"));
    }
}

#[test]
fn the_committed_examples_ops_folder_is_up_to_date() {
    examples::link();
    let stale = example::artifacts(Registry::global())
        .check(&example::default_dir())
        .unwrap();
    let names: Vec<String> = stale.iter().map(ToString::to_string).collect();
    assert!(
        stale.is_empty(),
        "{names:?}: run `cargo run -p examples --example op_artifacts`"
    );
}

#[test]
fn the_example_binary_writes_a_folder_and_checks_it() {
    let Some(binary) = common::example_binary("op_artifacts") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ops");

    let check = |expect: i32| {
        let output = Command::new(&binary)
            .arg("--check")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(expect), "{output:?}");
        String::from_utf8(output.stderr).unwrap()
    };
    let stderr = check(1);
    assert!(
        stderr.contains(&format!("{}: missing", out.join("ops.pbtxt").display())),
        "{stderr}"
    );

    let output = Command::new(&binary).arg(&out).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        ["ops.pbtxt", "reference.md", "coverage.md"]
            .map(|name| format!("wrote {}\n", out.join(name).display()))
            .concat()
    );
    let op_list = std::fs::read_to_string(out.join("ops.pbtxt")).unwrap();
    for op in OURS {
        assert!(
            op_list.contains(&format!("  name: \"{op}\"\n")),
            "{op_list}"
        );
    }
    assert_eq!(check(0), "");

    std::fs::write(out.join("coverage.md"), "edited\n").unwrap();
    let stderr = check(1);
    assert!(
        stderr.contains(&format!(
            "{}: stale (first difference at line 1)",
            out.join("coverage.md").display()
        )),
        "{stderr}"
    );
}
