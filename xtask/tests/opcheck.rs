//! `cargo xtask opcheck`, the binary: its exit status and summary line for
//! an op that passes and for one that is not registered.

use std::process::Command;

/// Runs `xtask opcheck` with `args`: its exit code and stdout.
fn opcheck(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("opcheck")
        .args(args)
        .output()
        .expect("xtask runs");
    (
        output.status.code(),
        String::from_utf8(output.stdout).expect("utf-8"),
    )
}

#[test]
fn an_op_that_passes_exits_0_after_the_summary() {
    let (code, out) = opcheck(&["--op", "AddV2", "--cases", "2"]);
    assert_eq!(code, Some(0), "{out}");
    // Its 14 CPU kernels are checked; the GPU ones (the default `gpu`
    // feature of op-kernels) are listed and skipped.
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("AddV2: ") && first.contains(" kernel(s) (14 checked)"),
        "{out}"
    );
    let summary = out.lines().rev().nth(1).unwrap_or_default();
    assert!(
        summary.starts_with("1 ops, 14 kernels checked, 0 failures, "),
        "{out}"
    );
}

#[test]
fn an_op_that_is_not_registered_is_a_failure_and_exits_1() {
    let (code, out) = opcheck(&["--op", "AddV3", "--quiet"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAIL [registration] op AddV3"), "{out}");
    assert!(out.contains("did you mean 'AddV2'?"), "{out}");
    assert!(
        out.contains("1 ops, 0 kernels checked, 1 failures, 0 warnings"),
        "{out}"
    );
}
