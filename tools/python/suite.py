"""Runs one host's Python test suite (a folder of test_*.py files) and
prints the summary CI quotes: "LABEL: N passed, N failed, N skipped".
each host's run_tests.py calls it (`main`)."""

import os
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


def main(label, script, library_variable, usage):
    """A host's run_tests.py: `python run_tests.py LIBRARY.so` puts the
    library's path in the environment variable `library_variable` (for the
    tests to load) and runs the tests in the folder `tests` beside `script`."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: run_tests.py {usage}")
    os.environ[library_variable] = os.path.abspath(sys.argv[1])
    run(label, os.path.join(os.path.dirname(os.path.abspath(script)), "tests"))
