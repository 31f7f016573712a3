//! Builtin options both ways: an operator's `builtin_options` union read
//! into [`BuiltinOptions`], and written back, side by side so that each
//! table's fields are translated in one place.
//!
//! Options tables this crate does not parse come out as
//! [`BuiltinOptions::Other`] with their union type, and go back as an empty
//! table of that type (every field at its default), which is what the
//! converter writes for the ops that have no options worth a field
//! (`ExpandDimsOptions`, `SquaredDifferenceOptions`, ...).

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};
use op_core::{DType, Error, Result};

use super::{Activation, BuiltinOperator, BuiltinOptions, Padding, dtype_from_tflite, tflite_type};
use crate::schema as fb;

/// The union types [`read`] parses into their own variant: an
/// [`BuiltinOptions::Other`] of one of these would read back as that
/// variant, so a model may not hold one.
const PARSED: [fb::BuiltinOptions; 21] = [
    fb::BuiltinOptions::Conv2DOptions,
    fb::BuiltinOptions::DepthwiseConv2DOptions,
    fb::BuiltinOptions::Pool2DOptions,
    fb::BuiltinOptions::FullyConnectedOptions,
    fb::BuiltinOptions::SoftmaxOptions,
    fb::BuiltinOptions::ConcatenationOptions,
    fb::BuiltinOptions::AddOptions,
    fb::BuiltinOptions::ReshapeOptions,
    fb::BuiltinOptions::MulOptions,
    fb::BuiltinOptions::GatherOptions,
    fb::BuiltinOptions::ReducerOptions,
    fb::BuiltinOptions::SubOptions,
    fb::BuiltinOptions::DivOptions,
    fb::BuiltinOptions::SqueezeOptions,
    fb::BuiltinOptions::StridedSliceOptions,
    fb::BuiltinOptions::CastOptions,
    fb::BuiltinOptions::PackOptions,
    fb::BuiltinOptions::LeakyReluOptions,
    fb::BuiltinOptions::BatchMatMulOptions,
    fb::BuiltinOptions::CumsumOptions,
    fb::BuiltinOptions::GeluOptions,
];

/// The ops whose options are [`BuiltinOptions::Arithmetic`], each with the
/// table it is written as.
const ARITHMETIC: [(BuiltinOperator, fb::BuiltinOptions); 4] = [
    (BuiltinOperator::ADD, fb::BuiltinOptions::AddOptions),
    (BuiltinOperator::SUB, fb::BuiltinOptions::SubOptions),
    (BuiltinOperator::MUL, fb::BuiltinOptions::MulOptions),
    (BuiltinOperator::DIV, fb::BuiltinOptions::DivOptions),
];

/// The options of `op`, parsed. The error's message says what is wrong,
/// without the place: the caller names the operator.
pub(super) fn read(op: &fb::Operator<'_>) -> Result<BuiltinOptions> {
    use fb::BuiltinOptions as T;
    let union_type = op.builtin_options_type();
    let missing = || {
        Error::invalid_argument(format!(
            "builtin options of type {} are missing",
            union_name(union_type)
        ))
    };
    Ok(match union_type {
        T::NONE => BuiltinOptions::None,
        T::Conv2DOptions => {
            let o = op
                .builtin_options_as_conv_2_doptions()
                .ok_or_else(missing)?;
            let (padding, stride_w, stride_h, activation) = window(
                o.padding(),
                o.stride_w(),
                o.stride_h(),
                o.fused_activation_function(),
            )?;
            let (dilation_w, dilation_h) = dilation(o.dilation_w_factor(), o.dilation_h_factor())?;
            BuiltinOptions::Conv2D {
                padding,
                stride_w,
                stride_h,
                dilation_w,
                dilation_h,
                activation,
            }
        }
        T::DepthwiseConv2DOptions => {
            let o = op
                .builtin_options_as_depthwise_conv_2_doptions()
                .ok_or_else(missing)?;
            let (padding, stride_w, stride_h, activation) = window(
                o.padding(),
                o.stride_w(),
                o.stride_h(),
                o.fused_activation_function(),
            )?;
            let (dilation_w, dilation_h) = dilation(o.dilation_w_factor(), o.dilation_h_factor())?;
            let depth_multiplier = non_negative("depth_multiplier", o.depth_multiplier())?;
            BuiltinOptions::DepthwiseConv2D {
                padding,
                stride_w,
                stride_h,
                dilation_w,
                dilation_h,
                depth_multiplier,
                activation,
            }
        }
        T::Pool2DOptions => {
            let o = op
                .builtin_options_as_pool_2_doptions()
                .ok_or_else(missing)?;
            let (padding, stride_w, stride_h, activation) = window(
                o.padding(),
                o.stride_w(),
                o.stride_h(),
                o.fused_activation_function(),
            )?;
            let filter_w = non_negative("filter_width", o.filter_width())?;
            let filter_h = non_negative("filter_height", o.filter_height())?;
            BuiltinOptions::Pool2D {
                padding,
                stride_w,
                stride_h,
                filter_w,
                filter_h,
                activation,
            }
        }
        T::FullyConnectedOptions => {
            let o = op
                .builtin_options_as_fully_connected_options()
                .ok_or_else(missing)?;
            if o.weights_format() != fb::FullyConnectedOptionsWeightsFormat::DEFAULT {
                return Err(Error::unimplemented(format!(
                    "FULLY_CONNECTED weights format {} is not supported, only DEFAULT",
                    o.weights_format()
                        .variant_name()
                        .map_or_else(|| o.weights_format().0.to_string(), str::to_owned)
                )));
            }
            BuiltinOptions::FullyConnected {
                activation: activation(o.fused_activation_function())?,
                keep_num_dims: o.keep_num_dims(),
            }
        }
        T::SoftmaxOptions => {
            let o = op
                .builtin_options_as_softmax_options()
                .ok_or_else(missing)?;
            BuiltinOptions::Softmax { beta: o.beta() }
        }
        T::ConcatenationOptions => {
            let o = op
                .builtin_options_as_concatenation_options()
                .ok_or_else(missing)?;
            BuiltinOptions::Concatenation {
                axis: o.axis(),
                activation: activation(o.fused_activation_function())?,
            }
        }
        T::AddOptions | T::SubOptions | T::MulOptions | T::DivOptions => {
            let code = match union_type {
                T::AddOptions => op
                    .builtin_options_as_add_options()
                    .map(|o| o.fused_activation_function()),
                T::SubOptions => op
                    .builtin_options_as_sub_options()
                    .map(|o| o.fused_activation_function()),
                T::MulOptions => op
                    .builtin_options_as_mul_options()
                    .map(|o| o.fused_activation_function()),
                _ => op
                    .builtin_options_as_div_options()
                    .map(|o| o.fused_activation_function()),
            };
            BuiltinOptions::Arithmetic {
                activation: activation(code.ok_or_else(missing)?)?,
            }
        }
        T::ReshapeOptions => {
            let o = op
                .builtin_options_as_reshape_options()
                .ok_or_else(missing)?;
            BuiltinOptions::Reshape {
                new_shape: o
                    .new_shape()
                    .map(|v| v.iter().collect())
                    .unwrap_or_default(),
            }
        }
        T::SqueezeOptions => {
            let o = op
                .builtin_options_as_squeeze_options()
                .ok_or_else(missing)?;
            BuiltinOptions::Squeeze {
                squeeze_dims: o
                    .squeeze_dims()
                    .map(|v| v.iter().collect())
                    .unwrap_or_default(),
            }
        }
        T::PackOptions => {
            let o = op.builtin_options_as_pack_options().ok_or_else(missing)?;
            BuiltinOptions::Pack {
                values_count: non_negative("values_count", o.values_count())?,
                axis: o.axis(),
            }
        }
        T::ReducerOptions => {
            let o = op
                .builtin_options_as_reducer_options()
                .ok_or_else(missing)?;
            BuiltinOptions::Reducer {
                keep_dims: o.keep_dims(),
            }
        }
        T::StridedSliceOptions => {
            let o = op
                .builtin_options_as_strided_slice_options()
                .ok_or_else(missing)?;
            BuiltinOptions::StridedSlice {
                begin_mask: o.begin_mask(),
                end_mask: o.end_mask(),
                ellipsis_mask: o.ellipsis_mask(),
                new_axis_mask: o.new_axis_mask(),
                shrink_axis_mask: o.shrink_axis_mask(),
                offset: o.offset(),
            }
        }
        T::GatherOptions => {
            let o = op.builtin_options_as_gather_options().ok_or_else(missing)?;
            BuiltinOptions::Gather {
                axis: o.axis(),
                batch_dims: o.batch_dims(),
            }
        }
        T::CastOptions => {
            let o = op.builtin_options_as_cast_options().ok_or_else(missing)?;
            // Absent and FLOAT32 (the default) differ here: `None` says the
            // converter did not record the type. The vtable tells them apart.
            let given = |slot| o._tab.vtable().get(slot) != 0;
            BuiltinOptions::Cast {
                in_type: given(fb::CastOptions::VT_IN_DATA_TYPE)
                    .then(|| cast_type("in_data_type", o.in_data_type()))
                    .transpose()?,
                out_type: given(fb::CastOptions::VT_OUT_DATA_TYPE)
                    .then(|| cast_type("out_data_type", o.out_data_type()))
                    .transpose()?,
            }
        }
        T::BatchMatMulOptions => {
            let o = op
                .builtin_options_as_batch_mat_mul_options()
                .ok_or_else(missing)?;
            BuiltinOptions::BatchMatMul {
                adj_x: o.adj_x(),
                adj_y: o.adj_y(),
            }
        }
        T::GeluOptions => {
            let o = op.builtin_options_as_gelu_options().ok_or_else(missing)?;
            BuiltinOptions::Gelu {
                approximate: o.approximate(),
            }
        }
        T::LeakyReluOptions => {
            let o = op
                .builtin_options_as_leaky_relu_options()
                .ok_or_else(missing)?;
            BuiltinOptions::LeakyRelu { alpha: o.alpha() }
        }
        T::CumsumOptions => {
            let o = op.builtin_options_as_cumsum_options().ok_or_else(missing)?;
            BuiltinOptions::CumSum {
                exclusive: o.exclusive(),
                reverse: o.reverse(),
            }
        }
        other => BuiltinOptions::Other {
            union_type: other.0,
        },
    })
}

/// Writes `options` for an operator of op `code`: the union's type and its
/// table (`None` for [`BuiltinOptions::None`]).
pub(super) fn write<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    code: BuiltinOperator,
    options: &BuiltinOptions,
) -> Result<(fb::BuiltinOptions, Option<WIPOffset<UnionWIPOffset>>)> {
    use fb::BuiltinOptions as T;
    let (union_type, table) = match options {
        BuiltinOptions::None => return Ok((T::NONE, None)),
        &BuiltinOptions::Conv2D {
            padding,
            stride_w,
            stride_h,
            dilation_w,
            dilation_h,
            activation,
        } => {
            let args = fb::Conv2DOptionsArgs {
                padding: padding_code(padding),
                stride_w: int("stride_w", stride_w)?,
                stride_h: int("stride_h", stride_h)?,
                dilation_w_factor: int("dilation_w", dilation_w)?,
                dilation_h_factor: int("dilation_h", dilation_h)?,
                fused_activation_function: activation_code(activation),
                ..Default::default()
            };
            (
                T::Conv2DOptions,
                fb::Conv2DOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::DepthwiseConv2D {
            padding,
            stride_w,
            stride_h,
            dilation_w,
            dilation_h,
            depth_multiplier,
            activation,
        } => {
            let args = fb::DepthwiseConv2DOptionsArgs {
                padding: padding_code(padding),
                stride_w: int("stride_w", stride_w)?,
                stride_h: int("stride_h", stride_h)?,
                dilation_w_factor: int("dilation_w", dilation_w)?,
                dilation_h_factor: int("dilation_h", dilation_h)?,
                depth_multiplier: int("depth_multiplier", depth_multiplier)?,
                fused_activation_function: activation_code(activation),
            };
            (
                T::DepthwiseConv2DOptions,
                fb::DepthwiseConv2DOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Pool2D {
            padding,
            stride_w,
            stride_h,
            filter_w,
            filter_h,
            activation,
        } => {
            let args = fb::Pool2DOptionsArgs {
                padding: padding_code(padding),
                stride_w: int("stride_w", stride_w)?,
                stride_h: int("stride_h", stride_h)?,
                filter_width: int("filter_w", filter_w)?,
                filter_height: int("filter_h", filter_h)?,
                fused_activation_function: activation_code(activation),
            };
            (
                T::Pool2DOptions,
                fb::Pool2DOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::FullyConnected {
            activation,
            keep_num_dims,
        } => {
            let args = fb::FullyConnectedOptionsArgs {
                fused_activation_function: activation_code(activation),
                keep_num_dims,
                ..Default::default()
            };
            (
                T::FullyConnectedOptions,
                fb::FullyConnectedOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Softmax { beta } => {
            let args = fb::SoftmaxOptionsArgs { beta };
            (
                T::SoftmaxOptions,
                fb::SoftmaxOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Concatenation { axis, activation } => {
            let args = fb::ConcatenationOptionsArgs {
                axis,
                fused_activation_function: activation_code(activation),
            };
            (
                T::ConcatenationOptions,
                fb::ConcatenationOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Arithmetic { activation } => {
            let activation = activation_code(activation);
            let union_type = ARITHMETIC
                .iter()
                .find(|(op, _)| *op == code)
                .map(|(_, t)| *t);
            let table = match union_type {
                Some(T::AddOptions) => {
                    let args = fb::AddOptionsArgs {
                        fused_activation_function: activation,
                        ..Default::default()
                    };
                    fb::AddOptions::create(fbb, &args).as_union_value()
                }
                Some(T::SubOptions) => {
                    let args = fb::SubOptionsArgs {
                        fused_activation_function: activation,
                        ..Default::default()
                    };
                    fb::SubOptions::create(fbb, &args).as_union_value()
                }
                Some(T::MulOptions) => {
                    let args = fb::MulOptionsArgs {
                        fused_activation_function: activation,
                    };
                    fb::MulOptions::create(fbb, &args).as_union_value()
                }
                Some(T::DivOptions) => {
                    let args = fb::DivOptionsArgs {
                        fused_activation_function: activation,
                    };
                    fb::DivOptions::create(fbb, &args).as_union_value()
                }
                _ => return Err(Error::invalid_argument(arithmetic_mismatch(code))),
            };
            (union_type.unwrap_or_default(), table)
        }
        BuiltinOptions::Reshape { new_shape } => {
            let new_shape = (!new_shape.is_empty()).then(|| fbb.create_vector(new_shape));
            let args = fb::ReshapeOptionsArgs { new_shape };
            (
                T::ReshapeOptions,
                fb::ReshapeOptions::create(fbb, &args).as_union_value(),
            )
        }
        BuiltinOptions::Squeeze { squeeze_dims } => {
            let squeeze_dims = (!squeeze_dims.is_empty()).then(|| fbb.create_vector(squeeze_dims));
            let args = fb::SqueezeOptionsArgs { squeeze_dims };
            (
                T::SqueezeOptions,
                fb::SqueezeOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Pack { values_count, axis } => {
            let args = fb::PackOptionsArgs {
                values_count: int("values_count", values_count)?,
                axis,
            };
            (
                T::PackOptions,
                fb::PackOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Reducer { keep_dims } => {
            let args = fb::ReducerOptionsArgs { keep_dims };
            (
                T::ReducerOptions,
                fb::ReducerOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::StridedSlice {
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_axis_mask,
            offset,
        } => {
            let args = fb::StridedSliceOptionsArgs {
                begin_mask,
                end_mask,
                ellipsis_mask,
                new_axis_mask,
                shrink_axis_mask,
                offset,
            };
            (
                T::StridedSliceOptions,
                fb::StridedSliceOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Gather { axis, batch_dims } => {
            let args = fb::GatherOptionsArgs { axis, batch_dims };
            (
                T::GatherOptions,
                fb::GatherOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Cast { in_type, out_type } => {
            // By hand: the generated builder leaves out a FLOAT32 (the
            // default), which would read back as `None`.
            let start = fbb.start_table();
            for (slot, dtype) in [
                (fb::CastOptions::VT_IN_DATA_TYPE, in_type),
                (fb::CastOptions::VT_OUT_DATA_TYPE, out_type),
            ] {
                if let Some(dtype) = dtype {
                    let code = tflite_type(dtype).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "CAST options: {dtype} has no TensorFlow Lite type"
                        ))
                    })?;
                    fbb.push_slot_always(slot, fb::TensorType(code));
                }
            }
            (T::CastOptions, fbb.end_table(start).as_union_value())
        }
        &BuiltinOptions::BatchMatMul { adj_x, adj_y } => {
            let args = fb::BatchMatMulOptionsArgs {
                adj_x,
                adj_y,
                ..Default::default()
            };
            (
                T::BatchMatMulOptions,
                fb::BatchMatMulOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Gelu { approximate } => {
            let args = fb::GeluOptionsArgs { approximate };
            (
                T::GeluOptions,
                fb::GeluOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::LeakyRelu { alpha } => {
            let args = fb::LeakyReluOptionsArgs { alpha };
            (
                T::LeakyReluOptions,
                fb::LeakyReluOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::CumSum { exclusive, reverse } => {
            let args = fb::CumsumOptionsArgs { exclusive, reverse };
            (
                T::CumsumOptions,
                fb::CumsumOptions::create(fbb, &args).as_union_value(),
            )
        }
        &BuiltinOptions::Other { union_type } => {
            // Every options table reads as its defaults when empty.
            let start = fbb.start_table();
            (T(union_type), fbb.end_table(start).as_union_value())
        }
    };
    Ok((union_type, Some(table)))
}

/// What [`Model::validate`](super::Model::validate) asks of an operator's
/// options: arithmetic options only on the arithmetic ops (the writer picks
/// the table by op), and [`BuiltinOptions::Other`] only for a type that
/// [`read`] does not parse, so that what is written reads back the same.
pub(super) fn check(code: BuiltinOperator, options: &BuiltinOptions) -> Result<(), String> {
    match *options {
        BuiltinOptions::Arithmetic { .. } if !ARITHMETIC.iter().any(|(op, _)| *op == code) => {
            Err(arithmetic_mismatch(code))
        }
        BuiltinOptions::Other { union_type }
            if union_type == 0 || PARSED.contains(&fb::BuiltinOptions(union_type)) =>
        {
            Err(format!(
                "builtin options Other {{ union_type: {union_type} }} stand for {}, which has a variant of its own",
                union_name(fb::BuiltinOptions(union_type))
            ))
        }
        _ => Ok(()),
    }
}

fn arithmetic_mismatch(code: BuiltinOperator) -> String {
    format!("arithmetic options (those of ADD, SUB, MUL and DIV) on a {code} operator")
}

fn union_name(union_type: fb::BuiltinOptions) -> String {
    match union_type.variant_name() {
        Some(name) => name.to_owned(),
        None => format!("union type {}", union_type.0),
    }
}

/// The fields the window ops (CONV_2D, DEPTHWISE_CONV_2D, the poolings)
/// share: padding, strides and fused activation.
fn window(
    padding_code: fb::Padding,
    stride_w: i32,
    stride_h: i32,
    activation_code: fb::ActivationFunctionType,
) -> Result<(Padding, usize, usize, Activation)> {
    Ok((
        padding(padding_code)?,
        non_negative("stride_w", stride_w)?,
        non_negative("stride_h", stride_h)?,
        activation(activation_code)?,
    ))
}

/// A convolution's dilation factors.
fn dilation(w: i32, h: i32) -> Result<(usize, usize)> {
    Ok((
        non_negative("dilation_w_factor", w)?,
        non_negative("dilation_h_factor", h)?,
    ))
}

fn non_negative(field: &str, value: i32) -> Result<usize> {
    usize::try_from(value).map_err(|_| {
        Error::invalid_argument(format!("option {field} is {value}, expected at least 0"))
    })
}

fn int(field: &str, value: usize) -> Result<i32> {
    i32::try_from(value).map_err(|_| {
        Error::invalid_argument(format!(
            "option {field} is {value}, more than a .tflite file can hold ({})",
            i32::MAX
        ))
    })
}

fn padding(code: fb::Padding) -> Result<Padding> {
    match code {
        fb::Padding::SAME => Ok(Padding::Same),
        fb::Padding::VALID => Ok(Padding::Valid),
        other => Err(Error::invalid_argument(format!(
            "unknown padding {}, expected 0 (SAME) or 1 (VALID)",
            other.0
        ))),
    }
}

fn padding_code(padding: Padding) -> fb::Padding {
    match padding {
        Padding::Same => fb::Padding::SAME,
        Padding::Valid => fb::Padding::VALID,
    }
}

/// The fused activations, beside their codes.
const ACTIVATIONS: [(Activation, fb::ActivationFunctionType); 6] = [
    (Activation::None, fb::ActivationFunctionType::NONE),
    (Activation::Relu, fb::ActivationFunctionType::RELU),
    (
        Activation::ReluN1To1,
        fb::ActivationFunctionType::RELU_N1_TO_1,
    ),
    (Activation::Relu6, fb::ActivationFunctionType::RELU6),
    (Activation::Tanh, fb::ActivationFunctionType::TANH),
    (Activation::SignBit, fb::ActivationFunctionType::SIGN_BIT),
];

fn activation(code: fb::ActivationFunctionType) -> Result<Activation> {
    ACTIVATIONS.iter().find(|(_, c)| *c == code).map(|(a, _)| *a).ok_or_else(|| {
        Error::invalid_argument(format!(
            "unknown fused activation {}, expected 0 to 5 (NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT)",
            code.0
        ))
    })
}

fn activation_code(activation: Activation) -> fb::ActivationFunctionType {
    ACTIVATIONS
        .iter()
        .find(|(a, _)| *a == activation)
        .map_or(fb::ActivationFunctionType::NONE, |(_, c)| *c)
}

fn cast_type(field: &str, code: fb::TensorType) -> Result<DType> {
    dtype_from_tflite(code.0).ok_or_else(|| {
        let message = format!("CAST option {field}: {}", super::read::type_problem(code.0));
        if code == fb::TensorType::INT4 {
            Error::unimplemented(message)
        } else {
            Error::invalid_argument(message)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operator whose options are an empty table of `union_type`, read.
    fn read_empty(union_type: u8) -> Result<BuiltinOptions> {
        let mut fbb = FlatBufferBuilder::new();
        let start = fbb.start_table();
        let table = fbb.end_table(start).as_union_value();
        let args = fb::OperatorArgs {
            builtin_options_type: fb::BuiltinOptions(union_type),
            builtin_options: (union_type != 0).then_some(table),
            ..Default::default()
        };
        let op = fb::Operator::create(&mut fbb, &args);
        fbb.finish_minimal(op);
        let op = flatbuffers::root::<fb::Operator>(fbb.finished_data()).expect("a valid operator");
        read(&op)
    }

    #[test]
    fn every_union_type_reads_as_its_own_variant_exactly_when_it_is_parsed() {
        for union_type in 0..=u8::MAX {
            let options = read_empty(union_type).expect("empty tables read as their defaults");
            let parsed = union_type == 0 || PARSED.contains(&fb::BuiltinOptions(union_type));
            assert_eq!(
                !parsed,
                options == BuiltinOptions::Other { union_type },
                "union type {union_type} read as {options:?}"
            );
        }
    }

    #[test]
    fn empty_tables_read_as_the_schemas_defaults() {
        assert_eq!(
            read_empty(fb::BuiltinOptions::Conv2DOptions.0).unwrap(),
            BuiltinOptions::Conv2D {
                padding: Padding::Same,
                stride_w: 0,
                stride_h: 0,
                dilation_w: 1,
                dilation_h: 1,
                activation: Activation::None,
            }
        );
        assert_eq!(
            read_empty(fb::BuiltinOptions::CastOptions.0).unwrap(),
            BuiltinOptions::Cast {
                in_type: None,
                out_type: None
            }
        );
    }

    #[test]
    fn activation_codes_map_both_ways() {
        for (activation, code) in ACTIVATIONS {
            assert_eq!(super::activation(code).unwrap(), activation);
            assert_eq!(activation_code(activation), code);
        }
        let error = super::activation(fb::ActivationFunctionType(6)).unwrap_err();
        assert!(
            error.message().starts_with("unknown fused activation 6"),
            "{error}"
        );
    }

    #[test]
    fn other_options_of_a_parsed_type_and_misplaced_arithmetic_options_fail_the_check() {
        let other = BuiltinOptions::Other {
            union_type: fb::BuiltinOptions::Conv2DOptions.0,
        };
        assert_eq!(
            check(BuiltinOperator::CONV_2D, &other).unwrap_err(),
            "builtin options Other { union_type: 1 } stand for Conv2DOptions, which has a variant of its own"
        );
        let none = BuiltinOptions::Other { union_type: 0 };
        assert!(
            check(BuiltinOperator::ADD, &none)
                .unwrap_err()
                .contains("stand for NONE")
        );
        let expand_dims = BuiltinOptions::Other {
            union_type: fb::BuiltinOptions::ExpandDimsOptions.0,
        };
        assert_eq!(check(BuiltinOperator::EXPAND_DIMS, &expand_dims), Ok(()));
        let arithmetic = BuiltinOptions::Arithmetic {
            activation: Activation::Relu,
        };
        assert_eq!(check(BuiltinOperator::MUL, &arithmetic), Ok(()));
        assert_eq!(
            check(BuiltinOperator::SIN, &arithmetic).unwrap_err(),
            "arithmetic options (those of ADD, SUB, MUL and DIV) on a SIN operator"
        );
    }
}
