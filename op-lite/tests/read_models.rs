//! The models TensorFlow 2.21's converter wrote (`tests/data/make_models.py`)
//! read as TensorFlow wrote them: op codes (extended ones included), the
//! custom `Sin`, shapes and shape signatures, constant data, options,
//! signatures; and each written back reads the same.

use op_core::DType;
use op_lite::Model;
use op_lite::model::{Activation, BuiltinOperator, BuiltinOptions, Padding, Signature, TensorInfo};

fn read(name: &str) -> Model {
    let path = format!("{}/tests/data/{name}.tflite", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Each operator of the main subgraph: its op's name and its options.
fn ops(model: &Model) -> Vec<(String, BuiltinOptions)> {
    model.subgraphs[0]
        .operators
        .iter()
        .map(|op| {
            let code = &model.operator_codes[op.opcode_index];
            let name = match &code.custom_name {
                Some(name) => name.clone(),
                None => code.builtin.to_string(),
            };
            (name, op.builtin_options.clone())
        })
        .collect()
}

/// The tensor input `k` of operator `o` of the main subgraph reads.
fn input(model: &Model, o: usize, k: usize) -> &TensorInfo {
    let t = model.subgraphs[0].operators[o].inputs[k].expect("an input tensor");
    &model.subgraphs[0].tensors[t]
}

/// A tensor's constant data, as `f32`s.
fn floats(model: &Model, tensor: &TensorInfo) -> Vec<f32> {
    let data = &model.buffers[tensor.buffer].data;
    data.chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn signature(inputs: &[(&str, usize)], outputs: &[(&str, usize)]) -> Signature {
    Signature {
        key: "serving_default".into(),
        subgraph: 0,
        inputs: inputs.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
        outputs: outputs.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
    }
}

#[test]
fn the_seeds_sin_model_reads_with_its_custom_sin_op() {
    let model = read("sin_custom");
    assert_eq!(model.version, 3);
    assert_eq!(model.description, "MLIR Converted.");
    let codes: Vec<_> = model
        .operator_codes
        .iter()
        .map(|c| (c.builtin, c.custom_name.as_deref(), c.version))
        .collect();
    assert_eq!(
        codes,
        [
            (BuiltinOperator::ADD, None, 1),
            (BuiltinOperator::CUSTOM, Some("Sin"), 1)
        ]
    );
    assert_eq!(
        ops(&model),
        [
            (
                "ADD".to_owned(),
                BuiltinOptions::Arithmetic {
                    activation: Activation::None
                }
            ),
            ("Sin".to_owned(), BuiltinOptions::None),
        ]
    );
    let main = &model.subgraphs[0];
    assert_eq!(main.name, "main");
    let x = &main.tensors[main.inputs[0]];
    assert_eq!(
        (x.name.as_str(), x.dtype, x.shape.as_slice()),
        ("serving_default_x:0", DType::F32, &[5][..])
    );
    assert_eq!(x.buffer, 1, "a buffer of its own, empty");
    assert!(model.buffers[1].data.is_empty());
    // The trained offset, frozen into a scalar constant that ADD reads.
    let offset = input(&model, 0, 1);
    assert!(offset.shape.is_empty(), "a scalar");
    let value = floats(&model, offset);
    assert_eq!(value.len(), 1);
    assert!(
        (value[0] - 1.0).abs() < 1e-3,
        "the trained offset is {}",
        value[0]
    );
    let sin = &main.operators[1];
    assert_eq!(sin.inputs, [Some(2)]);
    assert_eq!(sin.outputs, main.outputs);
    assert!(
        sin.custom_options.is_empty(),
        "the seed's Sin has no options"
    );
    assert_eq!(
        model.signatures,
        [signature(&[("x", 0)], &[("output_0", 3)])]
    );
}

#[test]
fn the_sin_model_left_to_the_converter_uses_the_builtin_sin() {
    let custom = read("sin_custom");
    let builtin = read("sin_builtin");
    assert_eq!(builtin.operator_codes[1].builtin, BuiltinOperator::SIN);
    assert_eq!(builtin.operator_codes[1].custom_name, None);
    assert_eq!(ops(&builtin)[1], ("SIN".to_owned(), BuiltinOptions::None));
    // The rename touched the operator code only.
    assert_eq!(builtin.subgraphs, custom.subgraphs);
    assert_eq!(builtin.buffers, custom.buffers);
}

#[test]
fn the_cnn_reads_with_its_window_ops_and_their_options() {
    let model = read("cnn");
    let none = Activation::None;
    assert_eq!(
        ops(&model),
        [
            ("RELU6".to_owned(), BuiltinOptions::None),
            (
                "CONV_2D".to_owned(),
                BuiltinOptions::Conv2D {
                    padding: Padding::Same,
                    stride_w: 1,
                    stride_h: 1,
                    dilation_w: 1,
                    dilation_h: 1,
                    activation: Activation::Relu6,
                }
            ),
            (
                "DEPTHWISE_CONV_2D".to_owned(),
                BuiltinOptions::DepthwiseConv2D {
                    padding: Padding::Valid,
                    stride_w: 1,
                    stride_h: 1,
                    dilation_w: 2,
                    dilation_h: 2,
                    depth_multiplier: 2,
                    activation: Activation::Relu,
                }
            ),
            (
                "MAX_POOL_2D".to_owned(),
                BuiltinOptions::Pool2D {
                    padding: Padding::Valid,
                    stride_w: 2,
                    stride_h: 2,
                    filter_w: 2,
                    filter_h: 2,
                    activation: none,
                }
            ),
            (
                "AVERAGE_POOL_2D".to_owned(),
                BuiltinOptions::Pool2D {
                    padding: Padding::Same,
                    stride_w: 2,
                    stride_h: 2,
                    filter_w: 2,
                    filter_h: 2,
                    activation: none,
                }
            ),
            ("RESHAPE".to_owned(), BuiltinOptions::None),
            (
                "FULLY_CONNECTED".to_owned(),
                BuiltinOptions::FullyConnected {
                    activation: none,
                    keep_num_dims: false
                }
            ),
            ("SOFTMAX".to_owned(), BuiltinOptions::Softmax { beta: 1.0 }),
        ]
    );
    assert_eq!(
        model.operator_codes[2].version, 2,
        "DEPTHWISE_CONV_2D with dilation is version 2"
    );
    let main = &model.subgraphs[0];
    assert_eq!(main.tensors[main.inputs[0]].shape, [1, 12, 12, 3]);
    assert_eq!(main.tensors[main.outputs[0]].shape, [1, 5]);
    // Weights as TensorFlow Lite lays them out: OHWI for CONV_2D, 1HWO for
    // DEPTHWISE_CONV_2D, [out, in] for FULLY_CONNECTED, with their data.
    for (o, k, shape) in [
        (1, 1, &[4, 3, 3, 3][..]),
        (1, 2, &[4]),
        (2, 1, &[1, 3, 3, 8]),
        (2, 2, &[8]),
        (6, 1, &[5, 32]),
        (6, 2, &[5]),
    ] {
        let tensor = input(&model, o, k);
        assert_eq!(tensor.shape, shape, "operator {o} input {k}");
        assert_eq!(
            floats(&model, tensor).len(),
            shape.iter().product::<usize>()
        );
    }
    let new_shape = input(&model, 5, 1);
    assert_eq!(
        (new_shape.dtype, new_shape.shape.as_slice()),
        (DType::I32, &[2][..])
    );
    assert_eq!(
        model.buffers[new_shape.buffer].data,
        [1, 0, 0, 0, 32, 0, 0, 0],
        "RESHAPE to [1, 32]"
    );
    assert_eq!(
        model.signatures,
        [signature(&[("image", 0)], &[("output_0", 15)])]
    );
}

#[test]
fn the_mlp_reads_with_gelu_an_optional_bias_and_a_dynamic_batch() {
    let model = read("mlp");
    let fc = |activation| BuiltinOptions::FullyConnected {
        activation,
        keep_num_dims: false,
    };
    assert_eq!(
        ops(&model),
        [
            ("FULLY_CONNECTED".to_owned(), fc(Activation::Relu)),
            ("FULLY_CONNECTED".to_owned(), fc(Activation::None)),
            ("TANH".to_owned(), BuiltinOptions::None),
            ("FULLY_CONNECTED".to_owned(), fc(Activation::None)),
            ("LOGISTIC".to_owned(), BuiltinOptions::None),
            (
                "ADD".to_owned(),
                BuiltinOptions::Arithmetic {
                    activation: Activation::None
                }
            ),
            (
                "GELU".to_owned(),
                BuiltinOptions::Gelu { approximate: false }
            ),
            ("FULLY_CONNECTED".to_owned(), fc(Activation::None)),
        ]
    );
    // GELU (150) is past the byte field: the file says 127 there and 150 in
    // `builtin_code`, and the larger is the code.
    assert_eq!(model.operator_codes[4].builtin, BuiltinOperator::GELU);
    let main = &model.subgraphs[0];
    let no_bias = &main.operators[3];
    assert_eq!(no_bias.inputs.len(), 3);
    assert_eq!(
        no_bias.inputs[2], None,
        "the matmul without a bias has -1 as its third input"
    );
    let features = &main.tensors[main.inputs[0]];
    assert_eq!(features.shape, [1, 6]);
    assert_eq!(
        features.shape_signature.as_deref(),
        Some(&[-1, 6][..]),
        "a dynamic batch"
    );
    let output = &main.tensors[main.outputs[0]];
    assert_eq!(output.shape_signature.as_deref(), Some(&[-1, 3][..]));
    assert_eq!(input(&model, 0, 1).shape, [16, 6]);
    assert_eq!(
        input(&model, 0, 1).shape_signature,
        None,
        "constants have no signature"
    );
    assert_eq!(
        model.signatures,
        [signature(&[("features", 0)], &[("output_0", 15)])]
    );
}

#[test]
fn every_model_written_back_reads_the_same() {
    for name in ["sin_custom", "sin_builtin", "cnn", "mlp"] {
        let model = read(name);
        let bytes = model.to_bytes().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(Model::from_bytes(&bytes).unwrap(), model, "{name}");
        assert_eq!(
            Model::from_bytes(&bytes).unwrap().to_bytes().unwrap(),
            bytes,
            "{name}: writing is deterministic"
        );
    }
}

#[test]
fn files_that_are_not_regular_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.tflite");
    let at = path.clone();
    op_core::testing::files::assert_refuses_non_regular_files(&path, move || {
        Model::from_file(&at).map(drop)
    });
    let err = Model::from_file(dir.path().join("missing.tflite")).unwrap_err();
    assert_eq!(err.code(), op_core::Code::NotFound, "{err}");
}
