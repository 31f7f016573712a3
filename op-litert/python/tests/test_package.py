"""Seed 002's custom Sin in LiteRT through the installed packages:
`opkit_ops.litert` is the library as a delegate, whose Sin is the framework's
op through the lite bridge; `examples_tf.litert`, a downstream crate's, whose
Sin is the seed's own kernel. Skipped, and said, without a package."""

import unittest

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from common import model, npy, run

try:
    import opkit_ops.litert as ops
except ImportError:
    ops = None
try:
    import examples_tf.litert as user_ops
except ImportError:
    user_ops = None


@unittest.skipIf(ops is None, "the opkit_ops package is not installed in this Python")
class OpkitOpsInLiteRT(unittest.TestCase):
    def test_the_package_names_its_delegate_and_ops(self):
        self.assertTrue(ops.delegate_path().endswith(".so"))
        self.assertEqual(ops.OPS.get("Sin"), "framework")
        self.assertIn("ops", ops.OPTIONS)

    def test_seed_002_sin_model_gives_the_seed_s_results(self):
        interpreter = Interpreter(model_path=model("sin_custom"), experimental_delegates=[ops.load_delegate()])
        x = npy("sin_custom.input.npy")
        np.testing.assert_allclose(run(interpreter, x), npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)

    def test_claiming_only_named_ops(self):
        interpreter = Interpreter(model_path=model("sin_custom"), experimental_delegates=[ops.load_delegate(ops=["Sin"])])
        x = npy("sin_custom.input.npy")
        np.testing.assert_allclose(run(interpreter, x), npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(user_ops is None, "the examples_tf package is not installed in this Python")
class ADownstreamCratesSinInLiteRT(unittest.TestCase):
    """The examples crate's library: its delegate claims the seed's own Sin
    (SinPrepare and SinEval, added by `export!(register = ...)`)."""

    def test_the_seed_s_sin_is_the_registered_one(self):
        self.assertEqual(user_ops.OPS.get("Sin"), "registered")

    def test_seed_002_sin_model_gives_the_seed_s_results(self):
        interpreter = Interpreter(model_path=model("sin_custom"), experimental_delegates=[user_ops.load_delegate(ops="Sin")])
        x = npy("sin_custom.input.npy")
        np.testing.assert_allclose(run(interpreter, x), npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)
