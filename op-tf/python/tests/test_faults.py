"""Faults in our code inside TensorFlow: each is a clear Python error, and
the process goes on. The ops are op-tf/test-ops' (libop_tf_test_ops.so, whose
path run_tests.py gives in OPKIT_TF_TEST_OPS)."""

import os

import tensorflow as tf

from common import TestCase, ops

test_ops = tf.load_op_library(os.environ["OPKIT_TF_TEST_OPS"])


class FaultTest(TestCase):
    def test_a_panicking_kernel_is_an_internal_error_with_its_message(self):
        with self.assertRaisesRegex(tf.errors.InternalError, "kernel panicked at .*lib.rs:.*: the kernel was given 7"):
            test_ops.panic_in_compute([7.0])
        # TensorFlow, and our kernels, go on.
        self.assertAllEqual(ops.zero_out([1, 2]), [1, 0])
        with self.assertRaises(tf.errors.InternalError):
            test_ops.panic_in_compute([8.0])

    def test_a_panicking_constructor_is_an_internal_error(self):
        with self.assertRaisesRegex(tf.errors.InternalError, "panicked at .*no kernel today"):
            test_ops.panic_in_construction([1.0])

    def test_a_panicking_shape_function_fails_graph_construction(self):
        @tf.function
        def build(x):
            return test_ops.panic_in_shape(x)

        with self.assertRaisesRegex(tf.errors.InternalError, "the shape function panicked at .*gave up"):
            build(tf.constant([1.0]))
        # Eagerly, a debug build of our runtime checks the kernel's output
        # against the shape function, which panics there too; a release
        # build does not run it.
        try:
            self.assertAllEqual(test_ops.panic_in_shape([2.0]), [2.0])
        except tf.errors.InternalError as e:
            self.assertIn("shape function panicked", str(e))
        self.assertAllEqual(ops.zero_out([3, 4]), [3, 0])

    def test_a_wrong_attr_value_and_a_wrong_dtype(self):
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "preserve_index"):
            ops.zero_out_preserve_index([1, 2], preserve_index=-3)
        with self.assertRaises((TypeError, tf.errors.InvalidArgumentError)):
            test_ops.panic_in_compute(tf.constant([1], tf.int32))


if __name__ == "__main__":
    tf.test.main()
