"""The Python package around the library: wrappers with our docs, the
library's path for a direct tf.load_op_library."""

import tensorflow as tf

from common import LIBRARY, TestCase, exported_ops, ops


class PackageTest(TestCase):
    def test_every_exported_op_has_a_wrapper_with_our_docstring(self):
        wrappers = [n for n in ops.__all__ if n not in ("library_path", "LOAD_REPORT", "HELD_BACK_REPORT")]
        self.assertEqual(len(wrappers), len(exported_ops()), wrappers)
        self.assertIn("examples_multiplex_dense", wrappers)
        for name in wrappers:
            with self.subTest(wrapper=name):
                self.assertNotIn("TODO: add doc", getattr(ops, name).__doc__)
        self.assertTrue(ops.zero_out.__doc__.startswith("Zeroes every element but the first."))
        self.assertIn("to_zero: A `Tensor`. the tensor to zero out.", ops.zero_out.__doc__)

    def test_the_library_path_loads_directly_and_twice(self):
        direct = tf.load_op_library(LIBRARY)
        self.assertAllEqual(direct.zero_out([4, 5]), [4, 0])
        again = tf.load_op_library(LIBRARY)
        self.assertAllEqual(again.zero_out([6, 7]), [6, 0])


if __name__ == "__main__":
    tf.test.main()
