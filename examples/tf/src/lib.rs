//! The `examples` crate's own ops (`Examples>ClipByValue`,
//! `Examples>L2Norm`, ...) as a library TensorFlow loads, made as a
//! downstream user makes one:
//!
//! ```sh
//! cargo xtask package --crate examples-tf --out target/python
//! pip install target/python/examples_tf
//! python -c "import examples_tf.tensorflow as ops; print(ops.examples_clip_by_value([-1.0, 0.5, 2.0]))"
//! python -c "import examples_tf.jax as ops; print(ops.examples_clip_by_value([-1.0, 0.5, 2.0]))"
//! ```
//!
//! `examples` links op-kernels, whose ops have their own library
//! (`opkit_ops`): `crates = [examples]` keeps them out of this one, so the
//! two load side by side.

op_tf::export!(crates = [examples]);
// The same library in ONNX Runtime (domain `examples_tf`), JAX and PyTorch
// (namespace `examples_tf`).
op_onnx::export!(crates = [examples]);
op_jax::export!(crates = [examples]);
op_torch::export!(crates = [examples]);
// And a LiteRT delegate with the seed's own `Sin` (its `SinPrepare` and
// `SinEval`, registered as the seed's `resolver.AddCustom` does).
op_litert::export!(register = examples::sin_lite::register_sin);

extern crate examples;
