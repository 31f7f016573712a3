"""Our shape functions at graph construction in TensorFlow (seed 001's
"Shape functions in C++"): `(3, ?)` in, `(3, ?)` out, and the vector form
refuses rank 2 when the graph is built, not when it runs."""

import tensorflow as tf

from common import TestCase, exported_ops, ops


def static_shape(op, spec, **attrs):
    """The output shape TensorFlow infers for `op` on an input of `spec`."""
    shapes = []

    @tf.function(input_signature=[spec])
    def build(x):
        y = op(x, **attrs)
        shapes.append(y.shape)
        return y

    build.get_concrete_function()
    return shapes[0]


class ShapeTest(TestCase):
    def test_zero_out_keeps_a_partly_known_shape(self):
        shape = static_shape(ops.zero_out, tf.TensorSpec([3, None], tf.int32))
        self.assertEqual(shape.as_list(), [3, None])

    def test_known_and_unknown_ranks(self):
        self.assertEqual(static_shape(ops.example, tf.TensorSpec([2, 5], tf.float32)).as_list(), [2, 5])
        self.assertIsNone(static_shape(ops.example, tf.TensorSpec(None, tf.float32)).rank)

    def test_the_vector_form_refuses_rank_2_at_construction(self):
        with self.assertRaisesRegex(ValueError, "must be rank 1 but is rank 2"):
            static_shape(ops.zero_out_vector, tf.TensorSpec([3, None], tf.int32))
        self.assertEqual(static_shape(ops.zero_out_vector, tf.TensorSpec([4], tf.int32)).as_list(), [4])

    def test_an_op_with_a_non_type_attr_gets_unknown_shapes_never_wrong_ones(self):
        self.assertIn("attr other than a type", exported_ops()["ZeroOutPreserveIndex"])
        shape = static_shape(ops.zero_out_preserve_index, tf.TensorSpec([3], tf.int32), preserve_index=1)
        self.assertIsNone(shape.rank)

    def test_the_report_says_which_ops_get_our_shapes(self):
        shapes = exported_ops()
        self.assertEqual(shapes["ZeroOut"], "ours")
        self.assertEqual(shapes["ZeroOutVector"], "ours")


if __name__ == "__main__":
    tf.test.main()
