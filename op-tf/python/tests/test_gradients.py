"""Our #[gradient]s in TensorFlow: under tf.GradientTape, in graphs
(tf.gradients), and against the numeric Jacobian (tf.test.compute_gradient),
with no Python written by the op's author."""

import numpy as np
import tensorflow as tf

from common import TestCase, ops


class GradientTest(TestCase):
    def test_zero_out_under_a_tape(self):
        x = tf.constant([3.0, 2.0, 1.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(ops.zero_out_polymorphic(x) * [10.0, 20.0, 30.0])
        # Only the first element passes through (seed 001's Python gradient).
        self.assertAllEqual(tape.gradient(loss, x), [10.0, 0.0, 0.0])

    def test_in_a_graph_with_tf_gradients(self):
        with tf.Graph().as_default(), self.session() as session:
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
            y = ops.example(x)
            (dx,) = tf.gradients(tf.reduce_sum(y), [x])
            self.assertAllEqual(session.run(dx), [[2.0, 2.0], [2.0, 2.0]])

    def test_the_gradient_checker_agrees_with_the_numeric_jacobian(self):
        cases = {
            "zero_out_polymorphic": (ops.zero_out_polymorphic, [np.array([1.0, -2.0, 3.0])]),
            "example": (ops.example, [np.array([0.5, 1.5])]),
            "examples_multiplex_dense": (
                lambda a, b: ops.examples_multiplex_dense(
                    cond=[True, False, True], a_values=a, b_values=b
                ),
                [np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])],
            ),
        }
        for name, (f, args) in cases.items():
            with self.subTest(op=name):
                theoretical, numerical = tf.test.compute_gradient(f, args)
                for t, n in zip(theoretical, numerical):
                    self.assertAllClose(t, n, atol=1e-6)

    def test_a_bool_input_takes_no_gradient(self):
        cond = tf.constant([True, False])
        a = tf.constant([1.0, 2.0])
        b = tf.constant([3.0, 4.0])
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = ops.examples_multiplex_dense(cond=cond, a_values=a, b_values=b)
        da, db = tape.gradient(y, [a, b])
        self.assertAllEqual(da, [1.0, 0.0])
        self.assertAllEqual(db, [0.0, 1.0])

    def test_a_not_differentiable_op_is_registered_as_having_none(self):
        from tensorflow.python.framework import ops as framework_ops

        registry = framework_ops._gradient_registry
        # tf.no_gradient registers the name with no function.
        self.assertIn("Examples>SimpleHashTableFind", registry.list())
        self.assertIsNone(registry.lookup("Examples>SimpleHashTableFind"))
        self.assertIsNotNone(registry.lookup("ZeroOutPolymorphic"))


if __name__ == "__main__":
    tf.test.main()
