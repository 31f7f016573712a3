"""Our ops in a SavedModel: saved here, loaded and run in a fresh process
that loads our library first (as TensorFlow requires for custom ops)."""

import tempfile

import tensorflow as tf

from common import TestCase, ops, run_python


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable([1.0, 2.0, 3.0])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return ops.example(ops.zero_out_polymorphic(x) * self.scale)


LOAD = """
import sys
import tensorflow as tf
import opkit_ops.tensorflow  # registers our ops before the model is read
model = tf.saved_model.load(sys.argv[1])
print(model(tf.constant([5.0, 6.0, 7.0])).numpy().tolist())
"""


class SavedModelTest(TestCase):
    def test_a_saved_model_runs_our_ops_in_a_fresh_process(self):
        model = Model()
        expected = model(tf.constant([5.0, 6.0, 7.0])).numpy().tolist()
        self.assertEqual(expected, [10.0, 0.0, 0.0])
        with tempfile.TemporaryDirectory() as directory:
            tf.saved_model.save(model, directory)
            self.assertEqual(self.assertRanWell(run_python(LOAD, directory)), str(expected))

    def test_without_our_library_the_load_names_the_missing_op(self):
        with tempfile.TemporaryDirectory() as directory:
            tf.saved_model.save(Model(), directory)
            script = "import sys, tensorflow as tf; tf.saved_model.load(sys.argv[1])"
            out = run_python(script, directory)
            self.assertNotEqual(out.returncode, 0)
            self.assertRegex(out.stderr, "ZeroOutPolymorphic|Example")


if __name__ == "__main__":
    tf.test.main()
