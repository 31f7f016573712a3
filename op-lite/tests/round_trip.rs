//! Writing then reading gives the model back: `read(write(m)) == m` for
//! generated models with every dtype, shapes with zeros and scalars, shape
//! signatures, quantization, string constants, custom ops and codes past
//! 127, every options variant, several subgraphs and signatures.

use op_core::DType;
use op_lite::Model;
use op_lite::model::{
    Activation, Buffer, BuiltinOperator, BuiltinOptions, Operator, OperatorCode, Padding,
    Quantization, Signature, Subgraph, TensorInfo, encode_strings,
};
use proptest::prelude::*;

const DTYPES: [DType; 18] = [
    DType::F32,
    DType::F16,
    DType::I32,
    DType::U8,
    DType::I64,
    DType::String,
    DType::Bool,
    DType::I16,
    DType::Complex64,
    DType::I8,
    DType::F64,
    DType::Complex128,
    DType::U64,
    DType::Resource,
    DType::Variant,
    DType::U32,
    DType::U16,
    DType::BF16,
];

/// Builtin codes, from the byte field's range and past it (127 is the
/// placeholder itself), and CUSTOM.
const CODES: [i32; 14] = [0, 3, 4, 9, 18, 22, 32, 41, 42, 66, 126, 127, 128, 150];

/// Options union types this crate does not parse (from `schema.fbs`, and
/// past its end).
const UNPARSED: [u8; 12] = [3, 4, 6, 7, 12, 22, 24, 26, 33, 52, 127, 255];

fn quantization(shape: Vec<usize>) -> impl Strategy<Value = Option<Quantization>> {
    let rank = shape.len();
    (0..rank.max(1), any::<bool>()).prop_flat_map(move |(dim, per_channel)| {
        let channels = if per_channel && rank > 0 && shape[dim] > 0 {
            shape[dim]
        } else {
            1
        };
        let params = (
            prop::collection::vec(-10.0f32..10.0, channels),
            prop::collection::vec(any::<i64>(), channels),
        )
            .prop_map(move |(scale, zero_point)| Quantization {
                scale,
                zero_point,
                quantized_dimension: dim,
            });
        prop::option::of(params)
    })
}

/// A tensor, and the data of its constant when it has one.
fn tensor() -> impl Strategy<Value = (TensorInfo, Option<Vec<u8>>)> {
    (
        ".{0,10}",
        prop::sample::select(&DTYPES[..]),
        prop::collection::vec(0usize..4, 0..4),
        any::<bool>(),
    )
        .prop_flat_map(|(name, dtype, shape, is_variable)| {
            let count: usize = shape.iter().product();
            let data = match (dtype, dtype.size_of()) {
                (DType::String, _) => prop::collection::vec(".{0,4}", count)
                    .prop_map(|items| encode_strings(&items).unwrap())
                    .boxed(),
                (_, Some(size)) => prop::collection::vec(any::<u8>(), count * size).boxed(),
                (_, None) => Just(Vec::new()).boxed(),
            };
            let signature = prop::collection::vec(any::<bool>(), shape.len()).prop_map({
                let shape = shape.clone();
                move |dynamic| {
                    shape
                        .iter()
                        .zip(dynamic)
                        .map(|(&d, dynamic)| if dynamic { -1 } else { d as i32 })
                        .collect()
                }
            });
            (
                Just(name),
                Just(dtype),
                Just(shape.clone()),
                prop::option::of(signature),
                quantization(shape),
                Just(is_variable),
                prop::option::of(data),
            )
        })
        .prop_map(
            |(name, dtype, shape, shape_signature, quantization, is_variable, data)| {
                let tensor = TensorInfo {
                    name,
                    dtype,
                    shape,
                    shape_signature,
                    buffer: 0,
                    quantization,
                    is_variable,
                };
                (tensor, data.filter(|data| !data.is_empty()))
            },
        )
}

fn activation() -> impl Strategy<Value = Activation> {
    prop::sample::select(vec![
        Activation::None,
        Activation::Relu,
        Activation::ReluN1To1,
        Activation::Relu6,
        Activation::Tanh,
        Activation::SignBit,
    ])
}

fn padding() -> impl Strategy<Value = Padding> {
    prop::sample::select(vec![Padding::Same, Padding::Valid])
}

fn options() -> impl Strategy<Value = BuiltinOptions> {
    let size = || 0usize..1000;
    let dims = || prop::collection::vec(-5i32..10, 0..5);
    let dtype = || prop::option::of(prop::sample::select(&DTYPES[..]));
    prop_oneof![
        Just(BuiltinOptions::None),
        activation().prop_map(|activation| BuiltinOptions::Arithmetic { activation }),
        (padding(), size(), size(), size(), size(), activation()).prop_map(
            |(padding, sw, sh, dw, dh, activation)| {
                BuiltinOptions::Conv2D {
                    padding,
                    stride_w: sw,
                    stride_h: sh,
                    dilation_w: dw,
                    dilation_h: dh,
                    activation,
                }
            }
        ),
        (
            padding(),
            size(),
            size(),
            size(),
            size(),
            size(),
            activation()
        )
            .prop_map(|(padding, sw, sh, dw, dh, depth_multiplier, activation)| {
                BuiltinOptions::DepthwiseConv2D {
                    padding,
                    stride_w: sw,
                    stride_h: sh,
                    dilation_w: dw,
                    dilation_h: dh,
                    depth_multiplier,
                    activation,
                }
            }),
        (padding(), size(), size(), size(), size(), activation()).prop_map(
            |(padding, sw, sh, fw, fh, activation)| {
                BuiltinOptions::Pool2D {
                    padding,
                    stride_w: sw,
                    stride_h: sh,
                    filter_w: fw,
                    filter_h: fh,
                    activation,
                }
            }
        ),
        (activation(), any::<bool>()).prop_map(|(activation, keep_num_dims)| {
            BuiltinOptions::FullyConnected {
                activation,
                keep_num_dims,
            }
        }),
        (-10.0f32..10.0).prop_map(|beta| BuiltinOptions::Softmax { beta }),
        dims().prop_map(|new_shape| BuiltinOptions::Reshape { new_shape }),
        dims().prop_map(|squeeze_dims| BuiltinOptions::Squeeze { squeeze_dims }),
        (any::<i32>(), activation())
            .prop_map(|(axis, activation)| BuiltinOptions::Concatenation { axis, activation }),
        (size(), any::<i32>())
            .prop_map(|(values_count, axis)| BuiltinOptions::Pack { values_count, axis }),
        any::<bool>().prop_map(|keep_dims| BuiltinOptions::Reducer { keep_dims }),
        (any::<[i32; 5]>(), any::<bool>()).prop_map(|(m, offset)| BuiltinOptions::StridedSlice {
            begin_mask: m[0],
            end_mask: m[1],
            ellipsis_mask: m[2],
            new_axis_mask: m[3],
            shrink_axis_mask: m[4],
            offset
        }),
        (any::<i32>(), any::<i32>())
            .prop_map(|(axis, batch_dims)| BuiltinOptions::Gather { axis, batch_dims }),
        (dtype(), dtype())
            .prop_map(|(in_type, out_type)| BuiltinOptions::Cast { in_type, out_type }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(adj_x, adj_y)| BuiltinOptions::BatchMatMul { adj_x, adj_y }),
        any::<bool>().prop_map(|approximate| BuiltinOptions::Gelu { approximate }),
        (-1.0f32..1.0).prop_map(|alpha| BuiltinOptions::LeakyRelu { alpha }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(exclusive, reverse)| BuiltinOptions::CumSum { exclusive, reverse }),
        prop::sample::select(&UNPARSED[..])
            .prop_map(|union_type| BuiltinOptions::Other { union_type }),
    ]
}

/// An operator with its indices still raw (reduced modulo the counts when
/// the model is put together).
#[derive(Clone, Debug)]
struct RawOperator {
    opcode: usize,
    inputs: Vec<Option<usize>>,
    outputs: Vec<usize>,
    intermediates: Vec<usize>,
    options: BuiltinOptions,
    custom_options: Vec<u8>,
}

fn raw_operator() -> impl Strategy<Value = RawOperator> {
    let indices = || prop::collection::vec(any::<usize>(), 0..4);
    (
        any::<usize>(),
        prop::collection::vec(prop::option::of(any::<usize>()), 0..4),
        indices(),
        indices(),
        options(),
        prop::collection::vec(any::<u8>(), 0..6),
    )
        .prop_map(
            |(opcode, inputs, outputs, intermediates, options, custom_options)| RawOperator {
                opcode,
                inputs,
                outputs,
                intermediates,
                options,
                custom_options,
            },
        )
}

type RawSubgraph = (
    String,
    Vec<(TensorInfo, Option<Vec<u8>>)>,
    Vec<usize>,
    Vec<usize>,
    Vec<RawOperator>,
);

fn raw_subgraph() -> impl Strategy<Value = RawSubgraph> {
    let indices = || prop::collection::vec(any::<usize>(), 0..3);
    (
        ".{0,6}",
        prop::collection::vec(tensor(), 1..6),
        indices(),
        indices(),
        prop::collection::vec(raw_operator(), 0..5),
    )
}

fn operator_code() -> impl Strategy<Value = OperatorCode> {
    (
        prop::sample::select(&CODES[..]),
        "[A-Za-z][A-Za-z0-9_]{0,8}",
        1..4i32,
    )
        .prop_map(|(code, name, version)| {
            let builtin = BuiltinOperator(code);
            let custom_name = (builtin == BuiltinOperator::CUSTOM).then_some(name);
            OperatorCode {
                builtin,
                custom_name,
                version,
            }
        })
}

type RawSignature = (String, usize, Vec<(String, usize)>, Vec<(String, usize)>);

fn model() -> impl Strategy<Value = Model> {
    let names = || prop::collection::vec((".{0,6}", any::<usize>()), 0..3);
    (
        ".{0,20}",
        prop::collection::vec(operator_code(), 1..5),
        prop::collection::vec(raw_subgraph(), 1..3),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..8), 0..3),
        prop::collection::vec((".{0,8}", any::<usize>(), names(), names()), 0..3),
    )
        .prop_map(
            |(description, operator_codes, subgraphs, orphans, signatures)| {
                assemble(description, operator_codes, subgraphs, orphans, signatures)
            },
        )
}

/// A valid model from raw parts: each constant gets a buffer of its own,
/// indices are reduced into range, and options that would not suit their
/// op are dropped.
fn assemble(
    description: String,
    operator_codes: Vec<OperatorCode>,
    raw_subgraphs: Vec<RawSubgraph>,
    orphans: Vec<Vec<u8>>,
    raw_signatures: Vec<RawSignature>,
) -> Model {
    let mut buffers = vec![Buffer::default()];
    let mut subgraphs = Vec::new();
    for (name, raw_tensors, inputs, outputs, raw_operators) in raw_subgraphs {
        let n = raw_tensors.len();
        let tensors = raw_tensors
            .into_iter()
            .map(|(mut tensor, data)| {
                if let Some(data) = data {
                    tensor.buffer = buffers.len();
                    buffers.push(Buffer { data });
                }
                tensor
            })
            .collect();
        let operators = raw_operators
            .into_iter()
            .map(|raw| {
                let opcode_index = raw.opcode % operator_codes.len();
                let code = operator_codes[opcode_index].builtin;
                let arithmetic = [
                    BuiltinOperator::ADD,
                    BuiltinOperator::SUB,
                    BuiltinOperator::MUL,
                    BuiltinOperator::DIV,
                ];
                let builtin_options = match raw.options {
                    BuiltinOptions::Arithmetic { .. } if !arithmetic.contains(&code) => {
                        BuiltinOptions::None
                    }
                    options => options,
                };
                Operator {
                    opcode_index,
                    inputs: raw.inputs.into_iter().map(|t| t.map(|t| t % n)).collect(),
                    outputs: raw.outputs.into_iter().map(|t| t % n).collect(),
                    intermediates: raw.intermediates.into_iter().map(|t| t % n).collect(),
                    builtin_options,
                    custom_options: raw.custom_options,
                }
            })
            .collect();
        subgraphs.push(Subgraph {
            name,
            tensors,
            inputs: inputs.into_iter().map(|t| t % n).collect(),
            outputs: outputs.into_iter().map(|t| t % n).collect(),
            operators,
        });
    }
    buffers.extend(orphans.into_iter().map(|data| Buffer { data }));
    let signatures = raw_signatures
        .into_iter()
        .map(|(key, subgraph, inputs, outputs)| {
            let subgraph = subgraph % subgraphs.len();
            let n = subgraphs[subgraph].tensors.len();
            let reduce = |list: Vec<(String, usize)>| {
                list.into_iter().map(|(name, t)| (name, t % n)).collect()
            };
            Signature {
                key,
                subgraph,
                inputs: reduce(inputs),
                outputs: reduce(outputs),
            }
        })
        .collect();
    Model {
        version: 3,
        description,
        operator_codes,
        subgraphs,
        buffers,
        signatures,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn generated_models_are_valid_and_read_back_equal_after_writing(model in model()) {
        model.validate().unwrap();
        let bytes = model.to_bytes().unwrap();
        let read = Model::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&read, &model);
        prop_assert_eq!(read.to_bytes().unwrap(), bytes);
    }
}

#[test]
fn the_file_says_version_3_whatever_the_model_says() {
    let model = Model {
        version: 7,
        buffers: vec![Buffer::default()],
        ..Model::default()
    };
    let read = Model::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(
        read,
        Model {
            version: 3,
            ..model
        }
    );
}

#[test]
fn invalid_models_are_not_written() {
    let mut model = Model {
        version: 3,
        buffers: vec![Buffer { data: vec![1, 2] }],
        ..Model::default()
    };
    let error = model.to_bytes().unwrap_err();
    assert!(
        error.message().starts_with("buffer 0 holds 2 bytes"),
        "{error}"
    );
    model.buffers[0].data.clear();
    model.operator_codes.push(OperatorCode {
        builtin: BuiltinOperator::CUSTOM,
        custom_name: None,
        version: 1,
    });
    let error = model.to_bytes().unwrap_err();
    assert_eq!(
        error.message(),
        "operator code 0: a CUSTOM operator code needs a custom name, and this one has none"
    );
}
