//! The README's demo command runs the `demo` binary: check that it succeeds
//! and shows an op's definition, kernels running, caught mistakes, and
//! state saved and restored.

use std::process::Command;

#[test]
fn demo_shows_definition_kernels_and_errors() {
    let output = Command::new(env!("CARGO_BIN_EXE_demo")).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "kernel ClipKernel::<f32>: device='cpu'; T=float",
        "name: \"Examples>ClipByValue\"",
        "ClipByValue([-2.0, 0.25, 0.5, 3.0], clip_max=0.5) = [0.0, 0.25, 0.5, 0.5]",
        "ZeroOut([5, 4, 3, 2, 1]) = [5, 0, 0, 0, 0]",
        "InvalidArgument: clip_min (2) must not exceed clip_max (1)",
        "did you mean 'Examples>ClipByValue'?",
        "no kernel for op 'Example' on device 'cpu' with attrs T=qint8",
        "table.find_many([1, 2, 3]) = [0.5, -1.0, 1.5]",
        "saved [\"table/keys\", \"table/values\", \"weights/value\"]",
        "restored: table.find(1) = 0.5, weights = [4.0, 5.0, 6.0]",
        "input 0 ('resource_handle'): resource handle '_anonymous_0' refers to a op_kernels::hash_table::resource::SimpleHashTable<i64, f32>, not a op_kernels::hash_table::resource::SimpleHashTable<i32, f32>",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}
