//! What the `opkit lite` tests share: running the tool, scratch folders,
//! models of one custom op, `.npy` files.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::write_npy;
use op_core::DType;
use op_lite::Model;
use op_lite::model::{
    Buffer, BuiltinOperator, BuiltinOptions, Operator, OperatorCode, Subgraph, TensorInfo,
};

/// Runs the tool; returns its status, stdout and stderr.
pub fn opkit(args: &[&str]) -> (ExitCode, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("opkit").chain(args.iter().copied());
    let status = opkit::cli::run(argv, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// A file of op-lite's test data.
pub fn data(name: &str) -> String {
    format!(
        "{}/../op-lite/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A fresh folder for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("opkit-lite-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `y = op(x)` for a custom `op`, `x` of shape `[1, 3]` with the batch left
/// open in its shape signature (`[-1, 3]`), written to `dir/NAME.tflite`.
pub fn custom_model(dir: &Path, op: &str) -> PathBuf {
    custom_model_with(dir, op, |_| {})
}

/// [`custom_model`], changed by `change` before it is written.
pub fn custom_model_with(dir: &Path, op: &str, change: impl FnOnce(&mut Model)) -> PathBuf {
    let tensor = |name: &str| TensorInfo {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![1, 3],
        shape_signature: Some(vec![-1, 3]),
        buffer: 0,
        quantization: None,
        is_variable: false,
    };
    let mut model = Model {
        version: 3,
        operator_codes: vec![OperatorCode {
            builtin: BuiltinOperator::CUSTOM,
            custom_name: Some(op.into()),
            version: 1,
        }],
        subgraphs: vec![Subgraph {
            tensors: vec![
                tensor("serving_default_x:0"),
                tensor("StatefulPartitionedCall:0"),
            ],
            inputs: vec![0],
            outputs: vec![1],
            operators: vec![Operator {
                opcode_index: 0,
                inputs: vec![Some(0)],
                outputs: vec![1],
                intermediates: vec![],
                builtin_options: BuiltinOptions::None,
                custom_options: vec![],
            }],
            ..Subgraph::default()
        }],
        buffers: vec![Buffer::default()],
        ..Model::default()
    };
    change(&mut model);
    let path = dir.join(format!("{op}.tflite"));
    std::fs::write(&path, model.to_bytes().unwrap()).unwrap();
    path
}

pub fn write_f32(path: &Path, shape: &[usize], values: &[f32]) {
    let array = ArrayD::from_shape_vec(IxDyn(shape), values.to_vec()).unwrap();
    write_npy(path, &array).unwrap();
}

/// The arguments of `opkit lite run MODEL --input INPUT --output-dir OUT`.
pub fn lite_run<'a>(model: &'a str, input: &'a str, out: &'a Path) -> [&'a str; 7] {
    [
        "lite",
        "run",
        model,
        "--input",
        input,
        "--output-dir",
        s(out),
    ]
}

/// The tool's error for `args`, after checking it failed with status 1.
pub fn error(args: &[&str]) -> String {
    let (status, out, err) = opkit(args);
    assert_eq!(status, ExitCode::FAILURE, "{out}");
    assert!(out.is_empty(), "{out}");
    err
}
