//! TensorFlow Lite's builtin op library: the kernels of the builtins that
//! small float models converted by TensorFlow use, and the resolver that
//! registers them.
//!
//! - [`BuiltinOpResolver`] is TensorFlow Lite's resolver of the same name:
//!   every builtin below, for the versions TensorFlow Lite's own registers
//!   (`tensorflow/lite/core/kernels/register.cc`). It derefs to a
//!   [`MutableOpResolver`](crate::MutableOpResolver), so custom ops are
//!   added, and builtins overridden, on it.
//! - [`builtin_kernel`] (or [`BuiltinKernel::find`]) gives the kernel of one
//!   builtin code and [`BuiltinKernel::all`] lists them: what a resolver of
//!   only the ops some models use is built from.
//! - [`math`] holds the arithmetic of every builtin as plain functions over
//!   slices, tested against LiteRT; the kernels (`kernels/`, private) are
//!   the lite interface around it: `init` reads the builtin options into the
//!   math's params, `prepare` checks counts, dtypes and shapes and sets the
//!   outputs through the math's `*_shape` functions, `invoke` calls the math
//!   on slices of the arena and allocates nothing.
//!
//! ```
//! use op_lite::{BuiltinOpResolver, Interpreter, Model};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cnn.tflite");
//! let model = Model::from_bytes(&std::fs::read(path)?)?;
//! let mut interpreter = Interpreter::new(&model, &BuiltinOpResolver::new())?;
//! interpreter.allocate_tensors()?;
//! interpreter.set_input(0, &[0.5f32; 12 * 12 * 3])?;
//! interpreter.invoke()?;
//! let probabilities = interpreter.output::<f32>(0)?;
//! assert!((probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The builtins
//!
//! | builtins | versions | dtypes | options and inputs |
//! | --- | --- | --- | --- |
//! | ADD, SUB, MUL | 1-5, 1-5, 1-7 | float32, int32, int64 | NumPy broadcasting (rank ≤ 6), fused activation |
//! | DIV | 1-2 | float32, int32 | as ADD; an int32 zero divisor is an error |
//! | MAXIMUM, MINIMUM | 1-4 | float32, int32, int64 | broadcasting |
//! | SQUARED_DIFFERENCE | 1-2 | float32, int32 | broadcasting |
//! | RELU, RELU6, LOGISTIC, TANH | 1-3 | float32 | |
//! | SQUARE, SIN, COS, HARD_SWISH; SQRT, EXP, LOG; RSQRT | 1; 1-2; 1-3 | float32 | |
//! | LEAKY_RELU | 1-2 | float32 | `alpha` |
//! | GELU | 1-2 | float32 | `approximate` |
//! | ABS; NEG | 1-5; 1 | float32, int32 (NEG also int64) | |
//! | CONV_2D | 1-8 | float32 | padding SAME/VALID, strides, dilation, fused activation, optional bias; im2col in a scratch temporary |
//! | DEPTHWISE_CONV_2D | 1-7 | float32 | as CONV_2D, the multiplier from the filter |
//! | AVERAGE_POOL_2D, MAX_POOL_2D | 1-3 | float32 | window, strides, padding, fused activation |
//! | FULLY_CONNECTED | 1-13 | float32 | optional bias, `keep_num_dims`, fused activation |
//! | BATCH_MATMUL | 1-4 | float32 | `adj_x`, `adj_y`, broadcast batch |
//! | SOFTMAX | 1-3 | float32 | `beta`, along the last axis |
//! | MEAN, SUM | 1-3, 1-2 | float32, int32, int64 | constant axes, `keep_dims` |
//! | CUMSUM | 1 | float32, int32, int64 | constant axis, `exclusive`, `reverse` |
//! | RESHAPE | 1 | any | constant shape input (or the `new_shape` option), one `-1` |
//! | SQUEEZE; EXPAND_DIMS | 1-2; 1 | any | `squeeze_dims`; constant axis |
//! | TRANSPOSE | 1-7 | any | constant permutation |
//! | CONCATENATION; PACK | 1-4; 1-4 | any | axis (no fused activation); `values_count`, axis |
//! | STRIDED_SLICE; SLICE | 1-8; 1-6 | any | constant begin, end, strides and the five masks, `offset`; constant begin and size |
//! | PAD | 1-5 | any | constant paddings, zeros |
//! | GATHER | 1-7 | any, int32 or int64 indices | `axis`, `batch_dims`; an index out of range is an error |
//! | CAST | 1-7 | float32, int32, int64, bool both ways; from uint8, int8, int16 (a float model's image input) | the output's dtype |
//! | QUANTIZE, DEQUANTIZE | 1-4, 1-6 | | always an error: quantized models are not supported |
//!
//! "Any" is any fixed-size dtype but the quantized integer ones: those
//! ops move elements by their width. Shapes are static: a constant input a
//! shape depends on must be a constant of the model, or prepare fails
//! naming it.
//!
//! # Quantized models
//!
//! Quantized models are refused with an error that says so, never run
//! wrong: a tensor with quantization parameters fails
//! [`Interpreter::new`](crate::Interpreter::new), naming the tensor and the
//! first node that uses it; an int8, uint8 or int16 input of a float
//! kernel fails its prepare, naming the node, the op and the tensor; and
//! QUANTIZE and DEQUANTIZE are registered only to fail the same way.
pub mod math;

mod kernels;
mod resolver;

pub use resolver::{BuiltinKernel, BuiltinOpResolver, builtin_kernel};
