"""Ops written with opkit, for the runtimes they run in.

Submodules, one per runtime:

- `tensorflow`: the ops in TensorFlow (`import PACKAGE.tensorflow as ops`).

Written by `cargo xtask package` (op-tf/python/package/__init__.py).
"""
