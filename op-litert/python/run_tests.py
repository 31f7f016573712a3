"""Runs op-litert's Python tests: our lite kernels in LiteRT's interpreter,
through the delegate library.

    cargo build -p op-litert-test-delegate
    python -m venv target/litert-venv && target/litert-venv/bin/pip install ai-edge-litert numpy
    target/litert-venv/bin/python op-litert/python/run_tests.py target/debug/libop_litert_test_delegate.so

Prints one line per failure and a summary, "N passed, N failed, N skipped",
and exits non-zero when any test failed.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
import suite  # noqa: E402

if __name__ == "__main__":
    # The delegate library of test kernels (op-litert/test-delegate).
    suite.main("LiteRT delegate tests", __file__, "OP_LITERT_TEST_DELEGATE", "DELEGATE.so (in a Python with ai-edge-litert and numpy)")
