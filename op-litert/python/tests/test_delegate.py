"""The custom Sin in LiteRT, with our kernel; the options; the errors."""

import ctypes
import json
import unittest

import numpy as np
from ai_edge_litert.interpreter import Interpreter, load_delegate

from common import LIB, interpreter, model, npy, renamed, run


class SinInLiteRT(unittest.TestCase):
    def test_sin_custom_gives_the_saved_output(self):
        y = run(interpreter(model("sin_custom")), npy("sin_custom.input.npy"))
        np.testing.assert_allclose(y, npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)

    def test_it_matches_litert_s_builtin_sin_twin(self):
        x = np.linspace(-20, 20, 4097, dtype=np.float32)
        ours = run(interpreter(model("sin_custom")), x)
        builtin = run(Interpreter(model_path=model("sin_builtin")), x)
        self.assertEqual(ours.shape, (4097,))
        np.testing.assert_allclose(ours, builtin, rtol=1e-6, atol=1e-6)

    def test_resizing_the_input_resizes_the_output_each_time(self):
        interp = interpreter(model("sin_custom"))
        for n in (1, 7, 1000, 3):
            x = np.arange(n, dtype=np.float32) * 0.25
            y = run(interp, x)
            self.assertEqual(y.shape, (n,))
            np.testing.assert_allclose(y, run(Interpreter(model_path=model("sin_builtin")), x),
                                       rtol=1e-6, atol=1e-6)

    def test_ops_naming_sin_claims_it(self):
        y = run(interpreter(model("sin_custom"), {"ops": "Sin"}), npy("sin_custom.input.npy"))
        np.testing.assert_allclose(y, npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)


class Options(unittest.TestCase):
    def test_claiming_nothing_leaves_litert_s_unresolved_op_error(self):
        interp = interpreter(model("sin_custom"), {"ops": ""})
        with self.assertRaises(RuntimeError) as caught:
            interp.allocate_tensors()
        message = str(caught.exception)
        self.assertIn("Encountered unresolved custom op: Sin", message)
        self.assertIn("custom op 'Sin' (version 1, node 1) left to LiteRT by the option 'ops'",
                      message)

    def test_without_the_delegate_litert_cannot_run_sin(self):
        with self.assertRaises(RuntimeError) as caught:
            Interpreter(model_path=model("sin_custom")).allocate_tensors()
        self.assertIn("Encountered unresolved custom op: Sin", str(caught.exception))

    def test_an_unknown_key_is_named(self):
        with self.assertRaises(ValueError) as caught:
            load_delegate(LIB, {"opps": "Sin"})
        self.assertIn("unknown option 'opps': the options are 'ops', 'unclaimed'; "
                      "did you mean 'ops'?", str(caught.exception))

    def test_an_op_the_library_lacks_in_ops_is_named(self):
        with self.assertRaises(ValueError) as caught:
            load_delegate(LIB, {"ops": "Sin,Cumprod"})
        self.assertIn("option 'ops' names 'Cumprod', which this library has no kernel for: "
                      "it has 'Bad', 'Sin', 'Two'", str(caught.exception))

    def test_a_bad_value_is_named(self):
        with self.assertRaises(ValueError) as caught:
            load_delegate(LIB, {"unclaimed": "maybe"})
        self.assertIn("option 'unclaimed' = 'maybe': expected 'report', 'error' or 'ignore'",
                      str(caught.exception))


class Errors(unittest.TestCase):
    def test_a_custom_op_the_library_lacks_is_named_beside_litert_s_error(self):
        interp = interpreter(model("cumprod_custom"))
        with self.assertRaises(RuntimeError) as caught:
            interp.allocate_tensors()
        message = str(caught.exception)
        self.assertIn("op-litert delegate: this library has no kernel for custom op 'Cumprod' "
                      "(version 1, nodes 0, 1) (it has 'Bad', 'Sin', 'Two')", message)
        self.assertIn("Encountered unresolved custom op: Cumprod", message)

    def test_unclaimed_error_fails_when_the_delegate_is_applied(self):
        with self.assertRaises(RuntimeError) as caught:
            interpreter(model("cumprod_custom"), {"unclaimed": "error"})
        self.assertIn("no kernel for custom op 'Cumprod'", str(caught.exception))

    def test_unclaimed_ignore_leaves_litert_s_error_alone(self):
        interp = interpreter(model("cumprod_custom"), {"unclaimed": "ignore"})
        with self.assertRaises(RuntimeError) as caught:
            interp.allocate_tensors()
        self.assertNotIn("op-litert", str(caught.exception))
        self.assertIn("Encountered unresolved custom op: Cumprod", str(caught.exception))

    def test_a_kernel_s_error_names_the_op_and_what_was_expected(self):
        interp = interpreter(content=renamed("Sin", "Two"))
        with self.assertRaises(RuntimeError) as caught:
            interp.allocate_tensors()
        message = str(caught.exception)
        self.assertIn("ctx.num_inputs() != 2 (1 != 2)", message)
        self.assertIn("Node number 1 (Two) failed to prepare.", message)

    def test_a_panicking_kernel_is_an_error_not_a_crash(self):
        interp = interpreter(content=renamed("Sin", "Bad"))
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], np.ones(5, np.float32))
        with self.assertRaises(RuntimeError) as caught:
            interp.invoke()
        message = str(caught.exception)
        self.assertIn("Bad's invoke panics on purpose", message)
        self.assertIn("Bad", message)
        # The interpreter goes on: a fresh one runs.
        y = run(interpreter(model("sin_custom")), npy("sin_custom.input.npy"))
        np.testing.assert_allclose(y, npy("sin_custom.output.npy"), rtol=1e-6, atol=1e-6)


class Manifest(unittest.TestCase):
    def test_the_manifest_lists_the_linked_kernels(self):
        lib = ctypes.CDLL(LIB)
        lib.op_litert_manifest.restype = ctypes.c_char_p
        manifest = json.loads(lib.op_litert_manifest())
        self.assertEqual(manifest["host"], "litert")
        self.assertEqual(manifest["options"], ["ops", "unclaimed"])
        self.assertEqual(manifest["ops"], [{"name": "Bad", "from": "lite_kernel"},
                                           {"name": "Sin", "from": "lite_kernel"},
                                           {"name": "Two", "from": "lite_kernel"}])


if __name__ == "__main__":
    unittest.main()
