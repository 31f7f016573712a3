//! `cargo xtask conformance`, the binary: the cases it writes carry our
//! runtime's outputs, the same cases for the same seed, and a reason for
//! each op it cannot draw.

use std::process::Command;

/// Runs `xtask conformance` for `ops`: the lines it wrote.
fn cases(ops: &[&str], seed: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = dir.path().join("cases.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command
        .args(["conformance", "--cases", "2", "--seed", seed, "--out"])
        .arg(&out);
    for op in ops {
        command.args(["--op", op]);
    }
    let status = command.status().expect("xtask runs");
    assert!(status.success());
    std::fs::read_to_string(&out)
        .expect("the cases")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_case_has_our_runtimes_outputs() {
    let lines = cases(&["ZeroOut"], "0");
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        let input = &line["inputs"][0]["values"];
        let output = &line["outputs"][0]["values"];
        assert_eq!(line["input_names"], serde_json::json!(["to_zero"]));
        assert_eq!(
            input.as_array().unwrap().len(),
            output.as_array().unwrap().len()
        );
        if let Some(first) = input.get(0) {
            assert_eq!(&output[0], first);
            assert!(output.as_array().unwrap()[1..].iter().all(|v| v == 0));
        }
    }
}

#[test]
fn the_same_seed_draws_the_same_cases_and_another_seed_others() {
    assert_eq!(cases(&["AddV2"], "7"), cases(&["AddV2"], "7"));
    assert_ne!(cases(&["AddV2"], "7"), cases(&["AddV2"], "8"));
}

#[test]
fn an_op_that_cannot_be_drawn_says_why() {
    let lines = cases(&["AddN"], "0");
    assert!(
        lines
            .iter()
            .all(|l| l["not_drawn"].as_str().unwrap().contains("list input")),
        "{lines:?}"
    );
}
