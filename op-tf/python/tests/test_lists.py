"""The guide's list examples in TensorFlow. Each has an input named `in`, for
which TensorFlow 2.21's wrapper generator writes Python that does not
compile, failing `tf.load_op_library` for the whole library; so the library
holds them back at load, the package registers them right after
(`op_tf_register_held_back()`), and wraps each with Python of its own, whose
input is `in_` (as TensorFlow's wrappers name a keyword arg)."""

import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from common import TestCase, ops, report_lines

LIST_EXAMPLES = [
    "IntListInputExample",
    "ListTypeRestrictionExample",
    "MinLengthIntListExample",
    "MinimumLengthPolymorphicListExample",
    "PolymorphicListExample",
    "SameListInputExample",
]


def values(tensors):
    return [v.tolist() if hasattr(v, "tolist") else v for v in (t.numpy() for t in tensors)]


# Eagerly, a held-back op runs through a tf.function of its own, traced per
# input signature; the tests call each with many, which TensorFlow's logger
# would warn of ("triggered tf.function retracing"). Its warnings are not
# the tests' output.
tf.get_logger().setLevel("ERROR")


class ListExamplesTest(TestCase):
    def test_every_list_example_is_held_back_at_load_and_registered_after(self):
        held = [line.split(":")[0] for line in report_lines("held back")]
        self.assertEqual(sorted(held), LIST_EXAMPLES)
        registered = [line.split(" (")[0] for line in ops.HELD_BACK_REPORT.splitlines() if line.startswith("op ")]
        self.assertEqual(sorted(op[len("op "):] for op in registered), LIST_EXAMPLES)
        for name in LIST_EXAMPLES:
            self.assertIsNotNone(op_def_registry.get(name), name)

    def test_polymorphic_list_passes_tensors_of_any_types_through(self):
        out = ops.polymorphic_list_example([1, 2.5, "three"])
        self.assertEqual([t.dtype for t in out], [tf.int32, tf.float32, tf.string])
        self.assertEqual(values(out), [1, 2.5, b"three"])
        # By its Python name, as TensorFlow names a keyword arg.
        self.assertEqual(values(ops.polymorphic_list_example(in_=[7])), [7])

    def test_a_type_restricted_list_refuses_other_types(self):
        out = ops.list_type_restriction_example([tf.constant(1.0), tf.constant(2.0, tf.float64)])
        self.assertEqual(values(out), [1.0, 2.0])
        with self.assertRaisesRegex((TypeError, ValueError), "int32"):
            ops.list_type_restriction_example([tf.constant(1)])

    def test_int_lists_add(self):
        self.assertAllEqual(ops.int_list_input_example([[1, 2], [3, 4], [5, 6]]), [9, 12])
        self.assertAllEqual(ops.same_list_input_example([[1.5], [2.0]]), [3.5])
        self.assertAllEqual(ops.min_length_int_list_example([1, 2]), 3)

    def test_minimum_lengths_are_checked(self):
        with self.assertRaisesRegex((ValueError, tf.errors.InvalidArgumentError), "2"):
            ops.min_length_int_list_example([1])
        with self.assertRaisesRegex((ValueError, tf.errors.InvalidArgumentError), "3"):
            ops.minimum_length_polymorphic_list_example([1, 2.0])
        self.assertEqual(values(ops.minimum_length_polymorphic_list_example([1, 2.0, True])), [1, 2.0, True])

    def test_in_a_graph_with_shapes(self):
        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.int32)])
        def add(x):
            y = ops.int_list_input_example([x, x, x])
            # The op has an int attr, so TensorFlow's C shape API leaves the
            # shape unknown (never a wrong one).
            self.assertIsNone(y.shape.rank)
            return y

        self.assertAllEqual(add(tf.constant([[1, 2]])), [[3, 6]])

    def test_the_wrapper_has_its_docstring_and_refuses_unknown_arguments(self):
        self.assertIn("in_: A `Tensor`. the tensors to add.", ops.int_list_input_example.__doc__)
        with self.assertRaisesRegex(TypeError, "unknown argument"):
            ops.int_list_input_example([1], bogus=2)
        with self.assertRaisesRegex(TypeError, "lacks input 'in_'"):
            ops.int_list_input_example()


if __name__ == "__main__":
    tf.test.main()
