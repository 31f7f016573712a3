//! op-kernels' ops (those TensorFlow does not have: `ZeroOut`, the
//! guide's examples, the hash table...) as a library TensorFlow loads:
//! `tf.load_op_library("target/debug/libopkit_ops.so")`.

op_tf::export!();

// Links op-kernels, whose ops and kernels are what the library exports.
extern crate op_kernels;

// The same library is an ONNX Runtime custom-op library (domain
// `opkit_ops`): `SessionOptions.register_custom_ops_library(path)`.
op_onnx::export!();

// And a JAX library: `opkit_ops.jax` registers its XLA FFI handler.
op_jax::export!();

// And a PyTorch library: `torch.ops.load_library(path)` registers its ops
// as `torch.ops.opkit_ops.<name>`.
op_torch::export!();

// And a LiteRT delegate: `load_delegate(opkit_ops.litert.delegate_path())`
// claims a model's custom ops that the library has (seed 002's `Sin`).
op_litert::export!();
