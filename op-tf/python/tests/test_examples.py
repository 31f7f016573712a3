"""The `examples` crate's ops as a downstream user's package (`cargo xtask
package --crate examples-tf`), loaded beside `opkit_ops`: the library holds
its crate's ops only (`export!(crates = [examples])`), so the op-kernels ops
that `examples` links are not registered twice."""

import math

import tensorflow as tf

import examples_tf.tensorflow as examples
from common import TestCase, ops, report_lines


class ExamplesPackageTest(TestCase):
    def test_it_holds_its_crates_ops_only(self):
        registered = [line.split(" (")[0] for line in examples.LOAD_REPORT.splitlines() if line.startswith("op ")]
        self.assertEqual(registered, ["op Examples>ClipByValue", "op Examples>L2Norm"])
        self.assertIn(
            "skipped ZeroOut: it is an op of crate op_kernels, which this library does not export",
            examples.LOAD_REPORT.splitlines(),
        )
        # opkit_ops' ZeroOut is untouched.
        self.assertAllEqual(ops.zero_out([5, 6]), [5, 0])
        self.assertIn("ZeroOut (shapes: ours)", report_lines("op"))

    def test_clip_by_value_with_its_attrs_and_their_defaults(self):
        self.assertAllClose(examples.examples_clip_by_value([-2.0, 0.25, 3.0]), [0.0, 0.25, 1.0])
        clipped = examples.examples_clip_by_value([-5, 5, 50], clip_min=-1.0, clip_max=10.0)
        self.assertEqual(clipped.dtype, tf.int32)
        self.assertAllEqual(clipped, [-1, 5, 10])

    def test_a_bad_attr_fails_kernel_construction_with_our_message(self):
        with self.assertRaisesRegex(
            tf.errors.InvalidArgumentError, r"clip_min \(2\) must not exceed clip_max \(1\)"
        ):
            examples.examples_clip_by_value([1.0], clip_min=2.0, clip_max=1.0)

    def test_l2_norm_in_a_graph_is_a_scalar(self):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])
        def norm(x):
            y = examples.examples_l2_norm(x)
            self.assertEqual(y.shape.as_list(), [])
            return y

        self.assertAlmostEqual(float(norm(tf.constant([3.0, 4.0], tf.float64))), 5.0)
        self.assertAlmostEqual(float(examples.examples_l2_norm([1.0, 1.0])), math.sqrt(2), places=6)


class HeldBackGradientTest(TestCase):
    """`Examples>Lerp` has an input named `from`, a Python keyword: it is
    held back at load, wrapped by the package (`from_`), and its gradient
    op, registered after the load too, is wrapped the same way."""

    def test_lerp_is_held_back_naming_its_keyword_input_and_runs(self):
        held_back = [line for line in examples.LOAD_REPORT.splitlines() if line.startswith("held back ")]
        self.assertEqual(len(held_back), 1, held_back)
        self.assertIn("Examples>Lerp: its input 'from' is a Python keyword", held_back[0])
        self.assertIn("gradient Examples>Lerp OpkitGradient>Examples>Lerp", examples.HELD_BACK_REPORT.splitlines())
        y = examples.examples_lerp(from_=[0.0, 10.0], to=[4.0, 20.0], weight=0.25)
        self.assertAllClose(y, [1.0, 12.5])
        self.assertAllClose(examples.examples_lerp([0.0], [2.0]), [1.0])

    def test_lerp_is_differentiable_under_a_tape_in_a_graph_and_by_the_checker(self):
        a = tf.constant([0.0, 10.0, -3.0], tf.float64)
        b = tf.constant([4.0, 20.0, 5.0], tf.float64)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            y = examples.examples_lerp(from_=a, to=b, weight=0.25)
        da, db = tape.gradient(y, [a, b])
        self.assertAllClose(da, [0.75] * 3)
        self.assertAllClose(db, [0.25] * 3)

        @tf.function
        def graph_gradients(a, b):
            y = examples.examples_lerp(from_=a, to=b, weight=0.75)
            return tf.gradients(y * y, [a, b])

        da, db = graph_gradients(a, b)
        y = a + 0.75 * (b - a)
        self.assertAllClose(da, 2 * y * 0.25)
        self.assertAllClose(db, 2 * y * 0.75)

        theoretical, numerical = tf.test.compute_gradient(
            lambda a, b: examples.examples_lerp(from_=a, to=b, weight=0.4), [a, b]
        )
        for t, n in zip(theoretical, numerical):
            self.assertAllClose(t, n, atol=1e-6)


if __name__ == "__main__":
    tf.test.main()
