"""What every test of the TensorFlow plugin shares: the package, imported once.

The package is `opkit_ops`, op-kernels' ops as `cargo xtask package --crate
opkit-ops` writes them, installed in the venv that runs the tests (see
run_tests.py). Importing `opkit_ops.tensorflow` loads its library into
TensorFlow.
"""

import os
import subprocess
import sys

import tensorflow as tf

import opkit_ops.tensorflow as ops

LIBRARY = ops.library_path()
REPORT = ops.LOAD_REPORT.splitlines()


#: What registering the held-back ops (see test_lists.py) did, line by line.
HELD_BACK_REPORT = ops.HELD_BACK_REPORT.splitlines()


def exported_ops():
    """The ops the library registered, at load or held back until after it,
    by name, each with what shapes it gets ("ours", or "unknown, <why>")."""
    found = {}
    held_back = [line[len("op "):] for line in HELD_BACK_REPORT if line.startswith("op ")]
    for line in report_lines("op") + held_back:
        name, shapes = line.split(" (shapes: ", 1)
        found[name] = shapes.rstrip(")")
    return found


def report_lines(kind):
    """The report's lines of one kind ("op", "kernel", "skipped"), without it."""
    prefix = kind + " "
    return [line[len(prefix):] for line in REPORT if line.startswith(prefix)]


def run_python(script, *args, **env):
    """Runs `script` with `args` in a fresh Python process (TensorFlow's C++
    logs quiet, `env` added to the environment); returns the finished
    process, its output as text."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env)
    return subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True)


class TestCase(tf.test.TestCase):
    """tf.test.TestCase, less its deprecated `test_session` method, which
    unittest would otherwise count as a skipped test of every class."""

    test_session = None

    def assertRanWell(self, process):
        """`process` (from `run_python`) exited 0; returns its last line."""
        self.assertEqual(process.returncode, 0, process.stderr[-2000:])
        return process.stdout.strip().splitlines()[-1]
