"""`opkit graph export --onnx`: a GraphDef of ours (ops with ONNX
equivalents, a constant, MatMul with a transpose, and our own ops) written
as an ONNX model that onnx's checker accepts, and that ONNX Runtime, with
our library registered, runs to our runtime's results (`opkit graph run`)."""

import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
import onnxruntime as ort

import opkit_ops.onnx as ops

GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } dim { size: 3 } } float_val: [0.5, -1, 2, 0, 1, 1, -0.5, 3, 0.25, 1, 0, -2] } } } }
node { name: "m" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } attr { key: "transpose_b" value { b: true } } }
node { name: "e" op: "Example" input: "m" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "r" op: "Relu" input: "e" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "z" op: "ZeroOutPolymorphic" input: "r" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "AddV2" input: "z" input: "r" attr { key: "T" value { type: DT_FLOAT } } }
"""


class Export(unittest.TestCase):
    CLI = os.environ.get("OPKIT_CLI")

    def setUp(self):
        if not self.CLI:
            self.skipTest("OPKIT_CLI (the opkit binary) is not set")

    def test_a_graph_of_ours_runs_in_onnx_runtime_to_our_runtimes_result(self):
        with tempfile.TemporaryDirectory() as d:
            graph, model, x_npy = os.path.join(d, "g.pbtxt"), os.path.join(d, "g.onnx"), os.path.join(d, "x.npy")
            with open(graph, "w") as f:
                f.write(GRAPH)
            x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
            np.save(x_npy, x)
            subprocess.run([self.CLI, "graph", "export", "--onnx", graph, model, "--fetch", "y", "--domain", ops.DOMAIN], check=True, capture_output=True)
            subprocess.run([self.CLI, "graph", "run", graph, "--input", f"x={x_npy}", "--output", "y", "--output-dir", d], check=True, capture_output=True)
            ours = np.load(os.path.join(d, "y.npy"))
            loaded = onnx.load(model)
            onnx.checker.check_model(loaded)
            kinds = [(n.domain, n.op_type) for n in loaded.graph.node]
            self.assertIn(("", "MatMul"), kinds)
            self.assertIn(("", "Transpose"), kinds)
            self.assertIn((ops.DOMAIN, "Example"), kinds)
            options = ort.SessionOptions()
            options.register_custom_ops_library(ops.library_path())
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            (y,) = session.run(None, {"x": x})
            np.testing.assert_allclose(y, ours, rtol=1e-6)
            # And by hand: relu(2 * x @ w.T), first element kept, plus itself.
            w = np.array([0.5, -1, 2, 0, 1, 1, -0.5, 3, 0.25, 1, 0, -2], np.float32).reshape(4, 3)
            r = np.maximum(2 * x @ w.T, 0)
            z = np.zeros_like(r)
            z.flat[0] = r.flat[0]
            np.testing.assert_allclose(y, z + r, rtol=1e-6)

    def test_an_attr_onnx_cannot_hold_is_an_error_naming_the_node(self):
        with tempfile.TemporaryDirectory() as d:
            graph = os.path.join(d, "g.pbtxt")
            with open(graph, "w") as f:
                f.write('node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { dim { size: 2 } } } } }\n'
                        'node { name: "c" op: "Cast" input: "x" attr { key: "SrcT" value { type: DT_INT32 } } attr { key: "DstT" value { type: DT_FLOAT } } }\n')
            run = subprocess.run([self.CLI, "graph", "export", "--onnx", graph, os.path.join(d, "g.onnx"), "--fetch", "c"], capture_output=True, text=True)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("'c'", run.stderr)
            self.assertIn("DstT", run.stderr)


if __name__ == "__main__":
    unittest.main()
