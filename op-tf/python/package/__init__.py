"""Ops written with opkit, for the runtimes they run in.

Submodules, one per runtime:

- `tensorflow`: the ops in TensorFlow (`import PACKAGE.tensorflow as ops`).
- `onnx`: the ops in ONNX Runtime (`PACKAGE.onnx.library_path()`, `PACKAGE.onnx.DOMAIN`,
  `PACKAGE.onnx.make_node(...)`), when the library exports them (`op_onnx::export!()`).
- `jax`: the ops as JAX functions (`import PACKAGE.jax as ops`), when the library
  exports them (`op_jax::export!()`).
- `torch`: the ops in PyTorch, `torch.ops.PACKAGE.<name>` and plain functions
  (`import PACKAGE.torch as ops`), when the library exports them (`op_torch::export!()`).
- `litert`: the library as a LiteRT delegate (`PACKAGE.litert.delegate_path()`,
  `PACKAGE.litert.load_delegate()`), when it is one (`op_litert::export!()`).

Each submodule imports only its own framework.

Written by `cargo xtask package` (op-tf/python/package/__init__.py).
"""
