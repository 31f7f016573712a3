//! `cargo run --example multiplex_2_variable` prints the guide's five
//! lines: checked on the example's own code (included here as a module)
//! and, when `cargo test` has built it, on the example binary's output.

use std::process::Command;

mod common;

#[path = "../examples/multiplex_2_variable.rs"]
#[allow(dead_code)]
mod example;

/// The output the guide shows for `variable_and_stateless_op()`.
const GUIDE: [&str; 5] = [
    "[1 1 1 1 1 1 1 1 1 1]",
    "[1 1 1 1 1 2 1 1 1 1]",
    "[1 2 1 1 1 2 1 1 1 1]",
    "[1 2 1 1 1 2 1 2 1 1]",
    "[1 2 1 1 1 4 1 2 1 1]",
];

#[test]
fn the_example_code_prints_the_guides_lines() {
    op_kernels::link();
    let mut lines = Vec::new();
    example::variable_and_stateless_op(|line| lines.push(line)).unwrap();
    assert_eq!(lines, GUIDE);
}

#[test]
fn the_example_binary_prints_exactly_the_guides_lines() {
    let Some(binary) = common::example_binary("multiplex_2_variable") else {
        return;
    };
    let output = Command::new(&binary).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{} failed:\n{stdout}\n{}",
        binary.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout, GUIDE.map(|l| format!("{l}\n")).concat());
}

#[test]
fn numpy_style_and_one_hot() {
    assert_eq!(example::numpy_str(&[1, 2, 10]), "[ 1  2 10]");
    assert_eq!(example::numpy_str(&[-5, 3]), "[-5  3]");
    assert_eq!(example::numpy_str(&[]), "[]");
    let hot = example::one_hot(2, 4).unwrap();
    assert_eq!(hot.as_slice::<bool>().unwrap(), [false, false, true, false]);
    assert_eq!(
        example::one_hot(9, 3).unwrap().as_slice::<bool>().unwrap(),
        [false; 3]
    );
}
