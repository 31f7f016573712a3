"""What every test of the TensorFlow plugin shares: the library, loaded once.

The library is the path in OPKIT_TF_LIBRARY (run_tests.py sets it), the
shared library `cargo build -p opkit-ops` makes: op-kernels' ops, exported
by op_tf::export!().
"""

import ctypes
import os

import tensorflow as tf

LIBRARY = os.environ["OPKIT_TF_LIBRARY"]

# tf.load_op_library returns the generated wrappers of the ops the library
# registered while it loaded.
ops = tf.load_op_library(LIBRARY)

_lib = ctypes.CDLL(LIBRARY)
_lib.op_tf_load_report.restype = ctypes.c_char_p
REPORT = _lib.op_tf_load_report().decode().splitlines()


def exported_ops():
    """The ops the library registered, by name, each with what shapes it gets
    ("ours", or "unknown, <why>")."""
    ops = {}
    for line in report_lines("op"):
        name, shapes = line.split(" (shapes: ", 1)
        ops[name] = shapes.rstrip(")")
    return ops


def report_lines(kind):
    """The report's lines of one kind ("op", "kernel", "skipped"), without it."""
    prefix = kind + " "
    return [line[len(prefix):] for line in REPORT if line.startswith(prefix)]


class TestCase(tf.test.TestCase):
    """tf.test.TestCase, less its deprecated `test_session` method, which
    unittest would otherwise count as a skipped test of every class."""

    test_session = None
