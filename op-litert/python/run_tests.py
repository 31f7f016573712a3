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


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: run_tests.py DELEGATE.so (in a Python with ai-edge-litert and numpy)")
    os.environ["OP_LITERT_TEST_DELEGATE"] = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tools", "python"))
    import suite

    suite.run("LiteRT delegate tests", os.path.join(here, "tests"))


if __name__ == "__main__":
    main()
