"""Runs the TensorFlow plugin's Python tests against the installed package.

    cargo xtask package --crate opkit-ops --out target/python --python VENV/bin/python
    pip install target/python/opkit_ops      # into that venv, which has tensorflow-cpu
    cargo xtask package --crate examples-tf --out target/python --python VENV/bin/python
    pip install target/python/examples_tf
    OPKIT_TF_PYTHON=$PWD/VENV/bin/python cargo build -p op-tf-test-ops
    python op-tf/python/run_tests.py target/debug/libop_tf_test_ops.so

Prints one line per failure and a summary, "N passed, N failed, N skipped",
and exits non-zero when any test failed.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
import suite  # noqa: E402

if __name__ == "__main__":
    # TensorFlow's C++ logs (oneDNN, CPU features) are not the tests' output.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # The library of test ops: some fail on purpose, one has a named resource (op-tf/test-ops).
    suite.main("TensorFlow plugin tests", __file__, "OPKIT_TF_TEST_OPS", "TEST_OPS.so (with the packages opkit_ops and examples_tf installed)")
