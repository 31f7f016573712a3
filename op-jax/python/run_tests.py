"""Runs op-jax's Python tests against the installed package, in JAX.

    cargo xtask package --crate opkit-ops --out target/python
    pip install target/python/opkit_ops      # into a venv with jax, jaxlib and numpy
    cargo build -p op-tf-test-ops
    python op-jax/python/run_tests.py target/debug/libop_tf_test_ops.so

Prints one line per failure and a summary, "N passed, N failed, N skipped",
and exits non-zero when any test failed.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
import suite  # noqa: E402

if __name__ == "__main__":
    # Ops that fail on purpose (op-tf/test-ops), exported to JAX too.
    suite.main("JAX tests", __file__, "OPKIT_JAX_TEST_OPS", "TEST_OPS.so (with the package opkit_ops installed)")
