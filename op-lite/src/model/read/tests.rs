//! Each kind of bad index, size and code in a file, with the error it
//! gives: files built field by field with the generated builder, so that
//! any field can hold any value (the writer would refuse most of these).

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};
use op_core::{Code, Error};

use crate::model::{Activation, BuiltinOperator, BuiltinOptions, Model};
use crate::schema as fb;

type Options = fn(&mut FlatBufferBuilder<'_>) -> (fb::BuiltinOptions, WIPOffset<UnionWIPOffset>);

/// A model of one op (`y = op(x, x)`) and two tensors, in raw fields.
struct Raw {
    version: u32,
    /// Tensor 0, `x`.
    dtype: i8,
    shape: Vec<i32>,
    shape_signature: Option<Vec<i32>>,
    buffer: u32,
    quantization: Option<(Vec<f32>, Vec<i64>, i32)>,
    custom_quantization: bool,
    sparse: bool,
    deprecated_builtin_code: i8,
    builtin_code: i32,
    custom_code: Option<&'static str>,
    opcode_index: u32,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
    intermediates: Vec<i32>,
    options: Option<Options>,
    stablehlo_options: bool,
    custom_options_format: i8,
    custom_options: Option<Vec<u8>>,
    large_custom_options: (u64, u64),
    subgraph_inputs: Vec<i32>,
    subgraph_outputs: Vec<i32>,
    /// Buffers 0 and 1: inline data, offset, size.
    buffers: [(Option<Vec<u8>>, u64, u64); 2],
    metadata: Vec<u32>,
    metadata_buffer: Vec<i32>,
    /// The signature's subgraph and output tensor.
    signature: (u32, u32),
    /// Bytes after the flatbuffer.
    trailing: Vec<u8>,
}

impl Default for Raw {
    fn default() -> Raw {
        Raw {
            version: 3,
            dtype: 0,
            shape: vec![2],
            shape_signature: None,
            buffer: 1,
            quantization: None,
            custom_quantization: false,
            sparse: false,
            deprecated_builtin_code: 0,
            builtin_code: 0,
            custom_code: None,
            opcode_index: 0,
            inputs: vec![0, 0],
            outputs: vec![1],
            intermediates: vec![],
            options: None,
            stablehlo_options: false,
            custom_options_format: 0,
            custom_options: None,
            large_custom_options: (0, 0),
            subgraph_inputs: vec![0],
            subgraph_outputs: vec![1],
            buffers: [(None, 0, 0), (None, 0, 0)],
            metadata: vec![],
            metadata_buffer: vec![],
            signature: (0, 1),
            trailing: vec![],
        }
    }
}

impl Raw {
    fn bytes(&self) -> Vec<u8> {
        let mut fbb = FlatBufferBuilder::new();
        let buffers: Vec<_> = (self.buffers.iter())
            .map(|(data, offset, size)| {
                let data = data.as_ref().map(|d| fbb.create_vector(d));
                fb::Buffer::create(
                    &mut fbb,
                    &fb::BufferArgs {
                        data,
                        offset: *offset,
                        size: *size,
                    },
                )
            })
            .collect();
        let buffers = fbb.create_vector(&buffers);
        let custom_code = self.custom_code.map(|c| fbb.create_string(c));
        let code = fb::OperatorCode::create(
            &mut fbb,
            &fb::OperatorCodeArgs {
                deprecated_builtin_code: self.deprecated_builtin_code,
                custom_code,
                version: 1,
                builtin_code: fb::BuiltinOperator(self.builtin_code),
            },
        );
        let codes = fbb.create_vector(&[code]);

        let quantization = self.quantization.as_ref().map(|(scale, zero_point, dim)| {
            let scale = Some(fbb.create_vector(scale));
            let zero_point = Some(fbb.create_vector(zero_point));
            fb::QuantizationParameters::create(
                &mut fbb,
                &fb::QuantizationParametersArgs {
                    scale,
                    zero_point,
                    quantized_dimension: *dim,
                    ..Default::default()
                },
            )
        });
        let quantization = match self.custom_quantization {
            true => {
                let details =
                    fb::CustomQuantization::create(&mut fbb, &Default::default()).as_union_value();
                let args = fb::QuantizationParametersArgs {
                    details_type: fb::QuantizationDetails::CustomQuantization,
                    details: Some(details),
                    ..Default::default()
                };
                Some(fb::QuantizationParameters::create(&mut fbb, &args))
            }
            false => quantization,
        };
        let sparsity = self
            .sparse
            .then(|| fb::SparsityParameters::create(&mut fbb, &Default::default()));
        let x = {
            let shape = Some(fbb.create_vector(&self.shape));
            let shape_signature = self.shape_signature.as_ref().map(|s| fbb.create_vector(s));
            let name = Some(fbb.create_string("x"));
            let args = fb::TensorArgs {
                shape,
                type_: fb::TensorType(self.dtype),
                buffer: self.buffer,
                name,
                quantization,
                sparsity,
                shape_signature,
                ..Default::default()
            };
            fb::Tensor::create(&mut fbb, &args)
        };
        let y = {
            let shape = Some(fbb.create_vector(&[2]));
            let name = Some(fbb.create_string("y"));
            fb::Tensor::create(
                &mut fbb,
                &fb::TensorArgs {
                    shape,
                    name,
                    ..Default::default()
                },
            )
        };
        let tensors = fbb.create_vector(&[x, y]);

        let (builtin_options_type, builtin_options) = match self.options {
            Some(options) => {
                let (union_type, table) = options(&mut fbb);
                (union_type, Some(table))
            }
            None => (fb::BuiltinOptions::NONE, None),
        };
        let (builtin_options_2_type, builtin_options_2) = match self.stablehlo_options {
            true => {
                let table = fb::StablehloConcatenateOptions::create(&mut fbb, &Default::default());
                (
                    fb::BuiltinOptions2::StablehloConcatenateOptions,
                    Some(table.as_union_value()),
                )
            }
            false => (fb::BuiltinOptions2::NONE, None),
        };
        let op = {
            let inputs = Some(fbb.create_vector(&self.inputs));
            let outputs = Some(fbb.create_vector(&self.outputs));
            let intermediates = Some(fbb.create_vector(&self.intermediates));
            let custom_options = self.custom_options.as_ref().map(|c| fbb.create_vector(c));
            let args = fb::OperatorArgs {
                opcode_index: self.opcode_index,
                inputs,
                outputs,
                builtin_options_type,
                builtin_options,
                custom_options,
                custom_options_format: fb::CustomOptionsFormat(self.custom_options_format),
                intermediates,
                large_custom_options_offset: self.large_custom_options.0,
                large_custom_options_size: self.large_custom_options.1,
                builtin_options_2_type,
                builtin_options_2,
                ..Default::default()
            };
            fb::Operator::create(&mut fbb, &args)
        };
        let operators = fbb.create_vector(&[op]);
        let subgraph = {
            let inputs = Some(fbb.create_vector(&self.subgraph_inputs));
            let outputs = Some(fbb.create_vector(&self.subgraph_outputs));
            let args = fb::SubGraphArgs {
                tensors: Some(tensors),
                inputs,
                outputs,
                operators: Some(operators),
                name: None,
            };
            fb::SubGraph::create(&mut fbb, &args)
        };
        let subgraphs = fbb.create_vector(&[subgraph]);
        let signature = {
            let name = Some(fbb.create_string("y"));
            let map = fb::TensorMap::create(
                &mut fbb,
                &fb::TensorMapArgs {
                    name,
                    tensor_index: self.signature.1,
                },
            );
            let outputs = Some(fbb.create_vector(&[map]));
            let signature_key = Some(fbb.create_string("serving_default"));
            let args = fb::SignatureDefArgs {
                outputs,
                signature_key,
                subgraph_index: self.signature.0,
                ..Default::default()
            };
            fb::SignatureDef::create(&mut fbb, &args)
        };
        let signature_defs = Some(fbb.create_vector(&[signature]));
        let metadata: Vec<_> = (self.metadata.iter())
            .map(|&buffer| {
                let name = Some(fbb.create_string("m"));
                fb::Metadata::create(&mut fbb, &fb::MetadataArgs { name, buffer })
            })
            .collect();
        let metadata = Some(fbb.create_vector(&metadata));
        let metadata_buffer = Some(fbb.create_vector(&self.metadata_buffer));
        let args = fb::ModelArgs {
            version: self.version,
            operator_codes: Some(codes),
            subgraphs: Some(subgraphs),
            description: None,
            buffers: Some(buffers),
            metadata_buffer,
            metadata,
            signature_defs,
        };
        let root = fb::Model::create(&mut fbb, &args);
        fb::finish_model_buffer(&mut fbb, root);
        let mut bytes = fbb.finished_data().to_vec();
        bytes.extend(&self.trailing);
        bytes
    }

    /// The file with `data` after the flatbuffer, at the offset that `edit`
    /// is given: a first build with a placeholder offset gives the
    /// flatbuffer's size.
    fn bytes_with_trailing(mut self, data: &[u8], edit: impl Fn(&mut Raw, u64)) -> Vec<u8> {
        edit(&mut self, u64::MAX);
        let offset = self.bytes().len() as u64;
        edit(&mut self, offset);
        self.trailing = data.to_vec();
        self.bytes()
    }
}

fn read(edit: impl FnOnce(&mut Raw)) -> Model {
    let mut raw = Raw::default();
    edit(&mut raw);
    Model::from_bytes(&raw.bytes()).unwrap_or_else(|e| panic!("{e}"))
}

fn error(edit: impl FnOnce(&mut Raw)) -> Error {
    let mut raw = Raw::default();
    edit(&mut raw);
    Model::from_bytes(&raw.bytes()).expect_err("a bad file")
}

fn invalid(edit: impl FnOnce(&mut Raw)) -> String {
    let error = error(edit);
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    error.message().to_owned()
}

fn unimplemented(edit: impl FnOnce(&mut Raw)) -> String {
    let error = error(edit);
    assert_eq!(error.code(), Code::Unimplemented, "{error}");
    error.message().to_owned()
}

#[test]
fn the_raw_model_reads() {
    let model = read(|_| {});
    assert_eq!(model.operator_codes[0].builtin, BuiltinOperator::ADD);
    assert_eq!(model.subgraphs[0].operators[0].inputs, [Some(0), Some(0)]);
}

#[test]
fn tensor_indices_out_of_range_name_the_operator_and_the_count() {
    assert_eq!(
        invalid(|r| r.inputs = vec![0, 57]),
        "subgraph 0, operator 0 (ADD): input 1 is tensor 57, but the subgraph has 2 tensors"
    );
    assert_eq!(
        invalid(|r| r.outputs = vec![2]),
        "subgraph 0, operator 0 (ADD): output 0 is tensor 2, but the subgraph has 2 tensors"
    );
    assert_eq!(
        invalid(|r| r.intermediates = vec![1, 9]),
        "subgraph 0, operator 0 (ADD): intermediate 1 is tensor 9, but the subgraph has 2 tensors"
    );
    assert_eq!(
        invalid(|r| r.subgraph_inputs = vec![7]),
        "subgraph 0: input 0 is tensor 7, but the subgraph has 2 tensors"
    );
    assert_eq!(
        invalid(|r| r.subgraph_outputs = vec![1, 2]),
        "subgraph 0: output 1 is tensor 2, but the subgraph has 2 tensors"
    );
}

#[test]
fn negative_indices_fail_except_minus_one_for_an_optional_input() {
    assert_eq!(
        read(|r| r.inputs = vec![0, -1]).subgraphs[0].operators[0].inputs,
        [Some(0), None]
    );
    assert_eq!(
        invalid(|r| r.inputs = vec![-2]),
        "subgraph 0, operator 0 (ADD): input 0 is -2, expected a tensor index or -1 (no tensor)"
    );
    assert_eq!(
        invalid(|r| r.outputs = vec![-1]),
        "subgraph 0, operator 0 (ADD): output 0 is -1, expected a tensor index"
    );
    assert_eq!(
        invalid(|r| r.intermediates = vec![-5]),
        "subgraph 0, operator 0 (ADD): intermediate 0 is -5, expected a tensor index"
    );
    assert_eq!(
        invalid(|r| r.subgraph_inputs = vec![-1]),
        "subgraph 0: input 0 is -1, expected a tensor index"
    );
}

#[test]
fn an_opcode_index_out_of_range_fails() {
    assert_eq!(
        invalid(|r| r.opcode_index = 5),
        "subgraph 0, operator 0 (opcode index 5, out of range): opcode index 5 is out of range, the model has 1 operator codes"
    );
}

#[test]
fn buffer_indices_and_sizes_are_checked() {
    assert_eq!(
        invalid(|r| r.buffer = 9),
        "subgraph 0, tensor 0 ('x'): buffer 9 is out of range, the model has 2 buffers"
    );
    assert_eq!(
        invalid(|r| r.buffers[1].0 = Some(vec![0; 5])),
        "subgraph 0, tensor 0 ('x'): buffer 1 holds 5 bytes, but shape [2] of float needs 8"
    );
    let model = read(|r| r.buffers[1].0 = Some(vec![0; 8]));
    assert_eq!(model.buffers[1].data, [0; 8]);
    assert_eq!(
        invalid(|r| r.buffers[0].0 = Some(vec![1])),
        "buffer 0 holds 1 bytes, but buffer 0 must be empty: a tensor with buffer 0 has no constant data"
    );
    assert_eq!(
        invalid(|r| {
            r.dtype = fb::TensorType::RESOURCE.0;
            r.buffers[1].0 = Some(vec![1]);
        }),
        "subgraph 0, tensor 0 ('x'): a resource tensor cannot have constant data, but buffer 1 holds 1 bytes"
    );
    assert_eq!(
        invalid(|r| {
            r.dtype = fb::TensorType::STRING.0;
            r.buffers[1].0 = Some(vec![1, 0, 0, 0]);
        }),
        "subgraph 0, tensor 0 ('x'): buffer 1: the string tensor has 2 elements, but its data holds 1 strings"
    );
}

#[test]
fn shapes_must_be_non_negative_and_fit_in_memory() {
    assert_eq!(
        invalid(|r| r.shape = vec![2, -3]),
        "subgraph 0, tensor 0 ('x'): dimension 1 is -3, expected at least 0"
    );
    assert_eq!(
        invalid(|r| r.shape = vec![i32::MAX; 4]),
        "subgraph 0, tensor 0 ('x'): shape [2147483647, 2147483647, 2147483647, 2147483647] has more elements than fit in memory"
    );
    // A zero makes it empty, however large the rest.
    assert_eq!(
        read(|r| r.shape = vec![i32::MAX, i32::MAX, 0, i32::MAX]).subgraphs[0].tensors[0].shape[2],
        0
    );
}

#[test]
fn shape_signatures_must_agree_with_the_shape() {
    assert_eq!(
        read(|r| r.shape_signature = Some(vec![-1])).subgraphs[0].tensors[0].shape_signature,
        Some(vec![-1])
    );
    assert_eq!(
        invalid(|r| r.shape_signature = Some(vec![3])),
        "subgraph 0, tensor 0 ('x'): shape signature [3] gives dimension 0 as 3, but shape [2] has 2 (only -1, for a dimension known at run time, may differ)"
    );
    assert_eq!(
        invalid(|r| r.shape_signature = Some(vec![-1, 2])),
        "subgraph 0, tensor 0 ('x'): shape signature [-1, 2] has rank 2, but shape [2] has rank 1"
    );
}

#[test]
fn unknown_tensor_types_are_invalid_and_int4_is_unimplemented() {
    assert_eq!(
        invalid(|r| r.dtype = 42),
        "subgraph 0, tensor 0 ('x'): unknown tensor type code 42"
    );
    assert_eq!(
        invalid(|r| r.dtype = -1),
        "subgraph 0, tensor 0 ('x'): unknown tensor type code -1"
    );
    assert_eq!(
        unimplemented(|r| r.dtype = 17),
        "subgraph 0, tensor 0 ('x'): type INT4 is not supported"
    );
}

#[test]
fn quantization_parameters_are_kept_and_checked() {
    let model = read(|r| r.quantization = Some((vec![0.5, 0.25], vec![1, 2], 0)));
    let q = model.subgraphs[0].tensors[0].quantization.as_ref().unwrap();
    assert_eq!(
        (
            q.scale.as_slice(),
            q.zero_point.as_slice(),
            q.quantized_dimension
        ),
        (&[0.5, 0.25][..], &[1, 2][..], 0)
    );
    assert_eq!(
        read(|r| r.quantization = Some((vec![], vec![], 0))).subgraphs[0].tensors[0].quantization,
        None
    );
    assert_eq!(
        invalid(|r| r.quantization = Some((vec![0.5, 0.25], vec![1], 0))),
        "subgraph 0, tensor 0 ('x'): quantization has 2 scales but 1 zero points"
    );
    assert_eq!(
        invalid(|r| r.quantization = Some((vec![0.5; 3], vec![0; 3], 0))),
        "subgraph 0, tensor 0 ('x'): quantization has 3 scales, but dimension 0 of shape [2] is not 3"
    );
    assert_eq!(
        invalid(|r| r.quantization = Some((vec![0.5], vec![0], 1))),
        "subgraph 0, tensor 0 ('x'): quantized dimension 1 is out of range for shape [2]"
    );
    assert_eq!(
        invalid(|r| r.quantization = Some((vec![0.5], vec![0], -1))),
        "subgraph 0, tensor 0 ('x'): quantized dimension -1 is negative"
    );
    assert_eq!(
        unimplemented(|r| r.custom_quantization = true),
        "subgraph 0, tensor 0 ('x'): custom quantization details are not supported"
    );
}

#[test]
fn sparse_tensors_stablehlo_options_and_other_custom_option_formats_are_unimplemented() {
    assert_eq!(
        unimplemented(|r| r.sparse = true),
        "subgraph 0, tensor 0 ('x'): sparse tensors are not supported"
    );
    assert_eq!(
        unimplemented(|r| r.stablehlo_options = true),
        "subgraph 0, operator 0 (ADD): builtin_options_2 (StablehloConcatenateOptions) are not supported"
    );
    assert_eq!(
        unimplemented(|r| r.custom_options_format = 1),
        "subgraph 0, operator 0 (ADD): custom options format 1 is not supported, only 0 (FLEXBUFFERS)"
    );
}

#[test]
fn builtin_codes_are_the_larger_of_the_two_fields() {
    let code = |deprecated, builtin| {
        read(|r| (r.deprecated_builtin_code, r.builtin_code) = (deprecated, builtin)).operator_codes
            [0]
        .builtin
    };
    assert_eq!(
        code(127, 150),
        BuiltinOperator::GELU,
        "a new writer, past 127"
    );
    assert_eq!(
        code(66, 0),
        BuiltinOperator::SIN,
        "an old writer, the byte field only"
    );
    assert_eq!(code(66, 66), BuiltinOperator::SIN);
    assert_eq!(code(-4, 3), BuiltinOperator::CONV_2D);
    assert_eq!(
        code(0, 1000),
        BuiltinOperator(1000),
        "a code this crate has no name for still reads"
    );
    assert_eq!(
        invalid(|r| (r.deprecated_builtin_code, r.builtin_code) = (-5, -3)),
        "operator code 0: builtin code -3 is negative (deprecated_builtin_code -5, builtin_code -3)"
    );
}

#[test]
fn custom_ops_need_a_name() {
    let custom = |r: &mut Raw| (r.deprecated_builtin_code, r.builtin_code) = (32, 32);
    let model = read(|r| {
        custom(r);
        r.custom_code = Some("Sin");
        r.custom_options = Some(vec![1, 2, 3]);
    });
    assert_eq!(model.operator_codes[0].custom_name.as_deref(), Some("Sin"));
    assert_eq!(model.subgraphs[0].operators[0].custom_options, [1, 2, 3]);
    assert_eq!(
        invalid(custom),
        "operator code 0: a CUSTOM operator code needs a custom name, and this one has none"
    );
    assert_eq!(
        invalid(|r| {
            custom(r);
            r.custom_code = Some("");
        }),
        "operator code 0: a CUSTOM operator code needs a custom name, and this one has none"
    );
}

#[test]
fn other_schema_versions_are_unimplemented() {
    assert_eq!(
        unimplemented(|r| r.version = 2),
        "schema version 2 is not supported, only version 3 (as in TensorFlow Lite)"
    );
}

fn conv_options(
    stride_w: i32,
    padding: i8,
    activation: i8,
) -> impl Fn(&mut FlatBufferBuilder<'_>) -> (fb::BuiltinOptions, WIPOffset<UnionWIPOffset>) {
    move |fbb| {
        let args = fb::Conv2DOptionsArgs {
            stride_w,
            padding: fb::Padding(padding),
            fused_activation_function: fb::ActivationFunctionType(activation),
            ..Default::default()
        };
        (
            fb::BuiltinOptions::Conv2DOptions,
            fb::Conv2DOptions::create(fbb, &args).as_union_value(),
        )
    }
}

#[test]
fn options_with_negative_sizes_or_unknown_codes_fail() {
    let conv = |r: &mut Raw, options: Options| {
        r.builtin_code = 3;
        r.deprecated_builtin_code = 3;
        r.options = Some(options);
    };
    assert_eq!(
        invalid(|r| conv(r, |fbb| conv_options(-1, 0, 0)(fbb))),
        "subgraph 0, operator 0 (CONV_2D): option stride_w is -1, expected at least 0"
    );
    assert_eq!(
        invalid(|r| conv(r, |fbb| conv_options(1, 2, 0)(fbb))),
        "subgraph 0, operator 0 (CONV_2D): unknown padding 2, expected 0 (SAME) or 1 (VALID)"
    );
    assert_eq!(
        invalid(|r| conv(r, |fbb| conv_options(1, 0, 9)(fbb))),
        "subgraph 0, operator 0 (CONV_2D): unknown fused activation 9, expected 0 to 5 (NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT)"
    );
    let model = read(|r| conv(r, |fbb| conv_options(2, 1, 3)(fbb)));
    assert!(matches!(
        model.subgraphs[0].operators[0].builtin_options,
        BuiltinOptions::Conv2D {
            stride_w: 2,
            activation: Activation::Relu6,
            dilation_w: 1,
            ..
        }
    ));
}

#[test]
fn shuffled_fully_connected_weights_and_int4_casts_are_unimplemented() {
    assert_eq!(
        unimplemented(|r| {
            (r.deprecated_builtin_code, r.builtin_code) = (9, 9);
            r.options = Some(|fbb| {
                let args = fb::FullyConnectedOptionsArgs {
                    weights_format: fb::FullyConnectedOptionsWeightsFormat::SHUFFLED4x16INT8,
                    ..Default::default()
                };
                (
                    fb::BuiltinOptions::FullyConnectedOptions,
                    fb::FullyConnectedOptions::create(fbb, &args).as_union_value(),
                )
            });
        }),
        "subgraph 0, operator 0 (FULLY_CONNECTED): FULLY_CONNECTED weights format SHUFFLED4x16INT8 is not supported, only DEFAULT"
    );
    assert_eq!(
        unimplemented(|r| {
            (r.deprecated_builtin_code, r.builtin_code) = (53, 53);
            r.options = Some(|fbb| {
                let args = fb::CastOptionsArgs {
                    in_data_type: fb::TensorType::INT4,
                    ..Default::default()
                };
                (
                    fb::BuiltinOptions::CastOptions,
                    fb::CastOptions::create(fbb, &args).as_union_value(),
                )
            });
        }),
        "subgraph 0, operator 0 (CAST): CAST option in_data_type: type INT4 is not supported"
    );
}

#[test]
fn arithmetic_options_on_another_op_fail() {
    let add_options: Options = |fbb| {
        let table = fb::AddOptions::create(fbb, &Default::default());
        (fb::BuiltinOptions::AddOptions, table.as_union_value())
    };
    assert!(matches!(
        read(|r| r.options = Some(add_options)).subgraphs[0].operators[0].builtin_options,
        BuiltinOptions::Arithmetic {
            activation: Activation::None
        }
    ));
    assert_eq!(
        invalid(|r| {
            (r.deprecated_builtin_code, r.builtin_code) = (66, 66);
            r.options = Some(add_options);
        }),
        "subgraph 0, operator 0 (SIN): arithmetic options (those of ADD, SUB, MUL and DIV) on a SIN operator"
    );
}

#[test]
fn signatures_name_subgraphs_and_tensors_in_range() {
    assert_eq!(
        invalid(|r| r.signature = (4, 1)),
        "signature 0 ('serving_default'): subgraph 4 is out of range, the model has 1 subgraphs"
    );
    assert_eq!(
        invalid(|r| r.signature = (0, 2)),
        "signature 0 ('serving_default'): output 'y' is tensor 2, but subgraph 0 has 2 tensors"
    );
}

#[test]
fn metadata_must_name_buffers_in_range() {
    assert_eq!(read(|r| r.metadata = vec![1]).buffers.len(), 2);
    assert_eq!(
        invalid(|r| r.metadata = vec![0, 9]),
        "metadata 1 ('m') names buffer 9, but the model has 2 buffers"
    );
    assert_eq!(
        invalid(|r| r.metadata_buffer = vec![-1]),
        "metadata_buffer 0 is buffer -1, but the model has 2 buffers"
    );
}

#[test]
fn buffers_after_the_flatbuffer_are_read_from_the_file() {
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let bytes =
        Raw::default().bytes_with_trailing(&data, |r, offset| r.buffers[1] = (None, offset, 8));
    let model = Model::from_bytes(&bytes).unwrap();
    assert_eq!(model.buffers[1].data, data);

    let mut raw = Raw::default();
    raw.buffers[1] = (None, 1 << 40, 8);
    let error = Model::from_bytes(&raw.bytes()).unwrap_err();
    assert!(
        error.message().starts_with(
            "buffer 1: its data at offset 1099511627776, 8 bytes, lies outside the file ("
        ),
        "{error}"
    );
    let mut raw = Raw::default();
    raw.buffers[1] = (None, 2, u64::MAX);
    assert!(
        Model::from_bytes(&raw.bytes())
            .unwrap_err()
            .message()
            .contains("lies outside the file")
    );

    let both = |r: &mut Raw, offset| r.buffers[1] = (Some(data.to_vec()), offset, 8);
    let error = Model::from_bytes(&Raw::default().bytes_with_trailing(&data, both)).unwrap_err();
    assert!(
        error
            .message()
            .starts_with("buffer 1 has both data inside the flatbuffer and an offset"),
        "{error}"
    );

    // Two buffers that claim the whole file: copies of the same bytes.
    let bytes = Raw::default().bytes_with_trailing(&[], |r, _| {
        r.buffers[0] = (None, 2, 0);
        r.buffers[1] = (None, 2, 0);
    });
    let len = bytes.len() as u64;
    let mut raw = Raw {
        buffer: 0,
        ..Raw::default()
    };
    raw.buffers = [(None, 0, 0), (None, 2, len - 2)];
    raw.metadata = vec![1];
    assert!(
        Model::from_bytes(&raw.bytes()).is_ok(),
        "one region inside the file"
    );
    raw.buffers[0] = (None, 2, len - 2);
    let error = Model::from_bytes(&raw.bytes()).unwrap_err();
    assert!(
        error.message().contains("overlaps data read already"),
        "{error}"
    );
}

#[test]
fn large_custom_options_are_read_from_the_file() {
    let options = [0xAAu8, 0xBB, 0xCC];
    let bytes = Raw::default()
        .bytes_with_trailing(&options, |r, offset| r.large_custom_options = (offset, 3));
    assert_eq!(
        Model::from_bytes(&bytes).unwrap().subgraphs[0].operators[0].custom_options,
        options
    );
    let raw = Raw {
        large_custom_options: (1 << 33, 3),
        ..Raw::default()
    };
    let error = Model::from_bytes(&raw.bytes()).unwrap_err();
    assert!(
        error.message().starts_with(
            "subgraph 0, operator 0 (ADD): custom options: its data at offset 8589934592"
        ),
        "{error}"
    );
}
