"""Runs one host's Python test suite (a folder of test_*.py files) and
prints the summary CI quotes: "LABEL: N passed, N failed, N skipped".
op-tf/python/run_tests.py and op-onnx/python/run_tests.py call it."""

import sys
import unittest


def run(label, tests_dir):
    """Runs every test_*.py in `tests_dir` and exits: non-zero when any failed."""
    sys.path.insert(0, tests_dir)
    suite = unittest.defaultTestLoader.discover(tests_dir, pattern="test_*.py")
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"{label}: {passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
