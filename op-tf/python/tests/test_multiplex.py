"""Seed 000's multiplex example with a `tf.Variable`: indices from a
`tf.data.Dataset` double the variable's element at each index, through our
`Examples>MultiplexDense` (the seed's `multiplex_2`) in `v.assign`."""

import tensorflow as tf

from common import TestCase, ops


def variable_and_stateless_op(multiplex):
    """The seed's `variable_and_stateless_op`, returning what it prints."""
    n = 10
    v = tf.Variable(tf.ones(n, dtype=tf.int64), trainable=False)
    dataset = tf.data.Dataset.from_tensor_slices([5, 1, 7, 5])
    printed = []
    for position in dataset:
        printed.append(v.numpy().tolist())
        cond = tf.one_hot(position, depth=n, on_value=True, off_value=False, dtype=bool)
        v.assign(multiplex(cond, v * 2, v))
    printed.append(v.numpy().tolist())
    return printed


# What the seed says it prints.
SEED_OUTPUT = [
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 2, 1, 1, 1, 1],
    [1, 2, 1, 1, 1, 2, 1, 1, 1, 1],
    [1, 2, 1, 1, 1, 2, 1, 2, 1, 1],
    [1, 2, 1, 1, 1, 4, 1, 2, 1, 1],
]


class MultiplexVariableTest(TestCase):
    def test_the_seeds_variable_example_prints_what_the_seed_shows(self):
        self.assertEqual(variable_and_stateless_op(ops.examples_multiplex_dense), SEED_OUTPUT)

    def test_it_agrees_with_tensorflows_where(self):
        self.assertEqual(variable_and_stateless_op(tf.where), SEED_OUTPUT)

    def test_in_a_tf_function_over_the_dataset(self):
        v = tf.Variable(tf.ones(10, dtype=tf.int64), trainable=False)

        @tf.function
        def run(dataset):
            for position in dataset:
                cond = tf.one_hot(position, depth=10, on_value=True, off_value=False, dtype=bool)
                v.assign(ops.examples_multiplex_dense(cond, v * 2, v))
            return v.read_value()

        dataset = tf.data.Dataset.from_tensor_slices(tf.constant([5, 1, 7, 5], tf.int64))
        self.assertEqual(run(dataset).numpy().tolist(), SEED_OUTPUT[-1])


if __name__ == "__main__":
    tf.test.main()
