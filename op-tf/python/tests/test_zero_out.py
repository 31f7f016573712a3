"""Seed 001/003's zero_out_op_test.py and the guide's four ZeroOut forms.

TensorFlow allows one op per name in a process, so each form has a name of
its own here (ZeroOut, ZeroOutPolymorphic, ZeroOutPreserveIndex,
ZeroOutVector); each test takes the op as a parameter.
"""

import tensorflow as tf

from common import TestCase, ops


class ZeroOutTest(TestCase):
    def testZeroOut(self):
        # The seed's test, as it reads there (a session, then eval).
        with tf.Graph().as_default(), self.session():
            result = ops.zero_out([5, 4, 3, 2, 1])
            self.assertAllEqual(result.eval(), [5, 0, 0, 0, 0])

    def test_eager_and_in_a_function(self):
        self.assertAllEqual(ops.zero_out([[1, 2], [3, 4]]), [[1, 0], [0, 0]])

        @tf.function
        def twice(x):
            return ops.zero_out(ops.zero_out(x))

        self.assertAllEqual(twice(tf.constant([7, 8, 9])), [7, 0, 0])

    def test_the_input_is_not_written(self):
        x = tf.constant([5, 4, 3])
        ops.zero_out(x)
        self.assertAllEqual(x, [5, 4, 3])

    def test_a_float_input_is_refused_by_the_op(self):
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "int32"):
            ops.zero_out(tf.constant([1.5]))

    def test_polymorphic_form(self, op=None):
        op = op or ops.zero_out_polymorphic
        for dtype in (tf.float32, tf.float64, tf.int32):
            with self.subTest(dtype=dtype):
                result = op(tf.constant([3, 2, 1], dtype))
                self.assertEqual(result.dtype, dtype)
                self.assertAllEqual(result, [3, 0, 0])
        with self.assertRaises((TypeError, tf.errors.InvalidArgumentError)):
            op(tf.constant([1], tf.int64))

    def test_preserve_index_form(self, op=None):
        op = op or ops.zero_out_preserve_index
        self.assertAllEqual(op([5, 4, 3], preserve_index=1), [0, 4, 0])
        # A negative index fails the kernel's construction, with our message.
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "preserve_index"):
            op([5, 4, 3], preserve_index=-1)
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "preserve_index"):
            op([5, 4, 3], preserve_index=7)

    def test_vector_form(self, op=None):
        op = op or ops.zero_out_vector
        self.assertAllEqual(op([5, 4, 3]), [5, 0, 0])
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "vector"):
            op([[5, 4], [3, 2]])


if __name__ == "__main__":
    tf.test.main()
