//! `cargo run --example hash_table_checkpoint -- PATH` saves a filled table
//! and `-- --restore PATH` loads it into a fresh one: checked on the
//! example's own code (included as a module) and on the example binary,
//! run as two separate processes, so the restore starts from nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

#[path = "../examples/hash_table_checkpoint.rs"]
#[allow(dead_code)]
mod example;

const NAMES: [&str; 2] = ["table/keys", "table/values"];
const RESTORED: [&str; 2] = ["restored 1000 entries", "key 10 = 5"];

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "hash_table_checkpoint_{}_{name}.safetensors",
        std::process::id()
    ))
}

#[test]
fn the_example_code_saves_and_restores() {
    let path = temp_path("code");
    let path_str = path.to_str().unwrap();
    assert_eq!(example::save(path_str).unwrap(), NAMES);
    assert_eq!(example::restore(path_str).unwrap(), RESTORED);

    // What other tools see: the two tensors, int64 keys and float values.
    let tensors = op_core::checkpoint::read(&path).unwrap();
    let keys = tensors["table/keys"].as_slice::<i64>().unwrap();
    let values = tensors["table/values"].as_slice::<f32>().unwrap();
    assert_eq!(keys.len(), 1000);
    for (k, v) in keys.iter().zip(values) {
        assert_eq!(*v, *k as f32 * 0.5);
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn restoring_a_missing_file_is_an_error() {
    let err = example::restore(temp_path("missing").to_str().unwrap()).unwrap_err();
    assert_eq!(err.code(), op_core::Code::NotFound, "{err}");
}

fn run(binary: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(binary).args(args).output().unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_example_binary_saves_then_a_new_process_restores() {
    let Some(binary) = common::example_binary("hash_table_checkpoint") else {
        return;
    };
    let path = temp_path("binary");
    let path_str = path.to_str().unwrap();
    let (ok, stdout, stderr) = run(&binary, &[path_str]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "table/keys\ntable/values\n");
    let (ok, stdout, stderr) = run(&binary, &["--restore", path_str]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "restored 1000 entries\nkey 10 = 5\n");

    // A corrupt file: a clear error and a failure exit status.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&path, bytes).unwrap();
    let (ok, stdout, stderr) = run(&binary, &["--restore", path_str]);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(path_str), "{stderr}");

    let (ok, _, stderr) = run(&binary, &[]);
    assert!(!ok);
    assert!(stderr.starts_with("usage: "), "{stderr}");
    std::fs::remove_file(&path).unwrap();
}
