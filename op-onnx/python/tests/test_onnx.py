"""op-kernels' ops in ONNX Runtime, from the installed opkit_ops package:
models built with onnx.helper that use our ops beside ONNX's own, run by
onnxruntime with our library registered, against numpy's results."""

import os
import unittest

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import opkit_ops.onnx as ops

ONNX_OPSET = helper.make_opsetid("", 17)


def session(nodes, inputs, outputs, library=None, domain=None):
    """A session over a one-graph model of `nodes`, our library registered."""
    opsets = [ONNX_OPSET, ops.opset() if domain is None else helper.make_opsetid(domain, 1)]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=opsets)
    options = ort.SessionOptions()
    options.register_custom_ops_library(library or ops.library_path())
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


class ZeroOutBesideOnnxOps(unittest.TestCase):
    def test_our_op_feeds_onnxs_add(self):
        nodes = [ops.make_node("zero_out", ["x"], ["z"]), helper.make_node("Add", ["z", "x"], ["y"])]
        s = session(nodes, [value("x", TensorProto.INT32, [2, 3])], [value("y", TensorProto.INT32, [2, 3])])
        x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
        (y,) = s.run(None, {"x": x})
        # ZeroOut keeps the first element only; Add then adds x back.
        expected = x.copy()
        expected.flat[0] *= 2
        np.testing.assert_array_equal(y, expected)

    def test_each_dtype_combination_is_a_kernel(self):
        for np_type, onnx_type in [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE), (np.int32, TensorProto.INT32)]:
            s = session([ops.make_node("zero_out_polymorphic", ["x"], ["y"])], [value("x", onnx_type, [3])], [value("y", onnx_type, [3])])
            (y,) = s.run(None, {"x": np.array([5, 6, 7], dtype=np_type)})
            self.assertEqual(y.dtype, np_type)
            np.testing.assert_array_equal(y, np.array([5, 0, 0], dtype=np_type))

    def test_a_dtype_the_op_does_not_take_fails_the_session_naming_the_op(self):
        with self.assertRaises(Exception) as caught:
            session([ops.make_node("zero_out_polymorphic", ["x"], ["y"])], [value("x", TensorProto.INT64, [3])], [value("y", TensorProto.INT64, [3])])
        self.assertIn("ZeroOutPolymorphic", str(caught.exception))

    def test_a_large_input_is_written_into_onnx_runtimes_output(self):
        # 400 KB: above op-host's PLACED_BYTES, so the output is allocated first.
        n = 100_000
        s = session([ops.make_node("zero_out", ["x"], ["y"])], [value("x", TensorProto.INT32, [n])], [value("y", TensorProto.INT32, [n])])
        x = np.arange(1, n + 1, dtype=np.int32)
        (y,) = s.run(None, {"x": x})
        self.assertEqual(y[0], 1)
        self.assertFalse(y[1:].any())


class Attrs(unittest.TestCase):
    def zero_out_preserve_index(self, **attrs):
        return session([ops.make_node("zero_out_preserve_index", ["x"], ["y"], **attrs)], [value("x", TensorProto.INT32, [4])], [value("y", TensorProto.INT32, [4])])

    def test_an_int_attr_is_the_nodes_onnx_attribute(self):
        (y,) = self.zero_out_preserve_index(preserve_index=2).run(None, {"x": np.array([1, 2, 3, 4], dtype=np.int32)})
        np.testing.assert_array_equal(y, [0, 0, 3, 0])

    def test_a_bad_attr_value_fails_the_session_as_our_runtime_refuses_it(self):
        with self.assertRaises(Exception) as caught:
            self.zero_out_preserve_index(preserve_index=-1)
        message = str(caught.exception)
        self.assertIn("preserve_index", message)

    def test_a_missing_required_attr_fails_the_session_naming_it(self):
        with self.assertRaises(Exception) as caught:
            self.zero_out_preserve_index()
        self.assertIn("preserve_index", str(caught.exception))

    def test_an_attr_of_the_wrong_onnx_type_is_an_error_not_the_default(self):
        node = helper.make_node("Cumsum", ["x", "axis"], ["y"], domain=ops.DOMAIN, exclusive=1.5)
        with self.assertRaises(Exception) as caught:
            session([node], [value("x", TensorProto.FLOAT, [4]), value("axis", TensorProto.INT32, [])], [value("y", TensorProto.FLOAT, [4])])
        self.assertIn("exclusive", str(caught.exception))

    def test_bool_attrs_are_onnx_ints(self):
        x = np.array([1, 2, 3, 4], dtype=np.float32)
        for exclusive in (False, True):
            for reverse in (False, True):
                node = ops.make_node("cumsum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
                s = session([node], [value("x", TensorProto.FLOAT, [4]), value("axis", TensorProto.INT32, [])], [value("y", TensorProto.FLOAT, [4])])
                (y,) = s.run(None, {"x": x, "axis": np.array(0, dtype=np.int32)})
                v = x[::-1] if reverse else x
                expected = np.cumsum(v) - (v if exclusive else 0)
                expected = expected[::-1] if reverse else expected
                np.testing.assert_allclose(y, expected, err_msg=f"exclusive={exclusive} reverse={reverse}")

    def test_a_list_of_ints_attr_is_onnxs_ints(self):
        node = ops.make_node("squeeze", ["x"], ["y"], squeeze_dims=[0, 2])
        s = session([node], [value("x", TensorProto.FLOAT, [1, 3, 1, 2])], [value("y", TensorProto.FLOAT, None)])
        x = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)
        (y,) = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, x.reshape(3, 2))
        self.assertEqual(s.get_outputs()[0].shape, [3, 2])

    def test_make_node_refuses_an_attr_the_op_does_not_have(self):
        with self.assertRaises(TypeError) as caught:
            ops.make_node("zero_out", ["x"], ["y"], preserve_index=1)
        self.assertIn("ZeroOut", str(caught.exception))

    def test_make_node_says_why_an_op_is_left_out(self):
        with self.assertRaises(ValueError) as caught:
            ops.make_node("AddN", ["x"], ["y"])
        self.assertIn("list of tensors", str(caught.exception))
        self.assertIn("StringToNumber", ops.SKIPPED)


class Shapes(unittest.TestCase):
    def test_incompatible_shapes_are_our_error_when_the_node_runs(self):
        # Our shape function refuses [2,3] x [2,3], and returns the error to
        # ONNX Runtime's shape inference, which (onnxruntime 1.32) does not
        # fail the session for a custom op's shape error: the kernel's own
        # check then names the op when it runs.
        node = ops.make_node("mat_mul", ["a", "b"], ["c"])
        s = session([node], [value("a", TensorProto.FLOAT, [2, 3]), value("b", TensorProto.FLOAT, [2, 3])], [value("c", TensorProto.FLOAT, None)])
        with self.assertRaises(Exception) as caught:
            s.run(None, {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.float32)})
        self.assertIn("MatMul", str(caught.exception))

    def test_matmul_with_transpose_matches_numpy(self):
        a = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
        b = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
        node = ops.make_node("mat_mul", ["a", "b"], ["c"], transpose_a=True)
        s = session([node], [value("a", TensorProto.FLOAT, [3, 2]), value("b", TensorProto.FLOAT, [3, 4])], [value("c", TensorProto.FLOAT, None)])
        (c,) = s.run(None, {"a": a, "b": b})
        np.testing.assert_allclose(c, a.T @ b, rtol=1e-5)

    def test_our_inferred_output_shape_reaches_onnx_runtimes_graph(self):
        # The graph's output is declared without a shape: the session's
        # output shape is what our shape function gave ZeroOut's output,
        # carried through ONNX's Identity.
        nodes = [ops.make_node("zero_out", ["x"], ["z"]), helper.make_node("Identity", ["z"], ["y"])]
        s = session(nodes, [value("x", TensorProto.INT32, [2, 5])], [value("y", TensorProto.INT32, None)])
        self.assertEqual(s.get_outputs()[0].shape, [2, 5])
        (y,) = s.run(None, {"x": np.ones((2, 5), dtype=np.int32)})
        self.assertEqual(y.shape, (2, 5))


class Faults(unittest.TestCase):
    TEST_OPS = os.environ.get("OPKIT_ONNX_TEST_OPS")

    def setUp(self):
        if not self.TEST_OPS:
            self.skipTest("OPKIT_ONNX_TEST_OPS (the op-tf-test-ops library) is not set")

    def faulty(self, op):
        node = helper.make_node(op, ["x"], ["y"], domain="op_tf_test_ops")
        return session([node], [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])], library=self.TEST_OPS, domain="op_tf_test_ops")

    def test_a_panicking_kernel_is_an_exception_and_onnx_runtime_goes_on(self):
        s = self.faulty("PanicInCompute")
        for _ in range(2):
            with self.assertRaises(Exception) as caught:
                s.run(None, {"x": np.array([7, 8], dtype=np.float32)})
            self.assertIn("panicked", str(caught.exception))
            self.assertIn("the kernel was given 7", str(caught.exception))
        # The process is fine: another session runs.
        z = session([ops.make_node("zero_out", ["x"], ["y"])], [value("x", TensorProto.INT32, [2])], [value("y", TensorProto.INT32, [2])])
        np.testing.assert_array_equal(z.run(None, {"x": np.array([3, 4], dtype=np.int32)})[0], [3, 0])

    def test_a_kernel_that_panics_when_made_fails_the_session(self):
        with self.assertRaises(Exception) as caught:
            self.faulty("PanicInConstruction")
        self.assertIn("no kernel today", str(caught.exception))

    def test_a_panicking_shape_function_is_contained(self):
        # The panic becomes an error status, which ONNX Runtime's shape
        # inference (1.32) sets aside, so the session is made; our runtime
        # runs the shape function again on the call, and the run fails
        # with the panic's message, every time, ONNX Runtime going on.
        s = self.faulty("PanicInShape")
        for _ in range(2):
            with self.assertRaises(Exception) as caught:
                s.run(None, {"x": np.array([1, 2], dtype=np.float32)})
            self.assertIn("the shape function gave up", str(caught.exception))

    def test_a_kernel_error_at_run_time_names_the_op(self):
        node = ops.make_node("mat_mul", ["a", "b"], ["c"])
        s = session([node], [value("a", TensorProto.FLOAT, [None, None]), value("b", TensorProto.FLOAT, [None, None])], [value("c", TensorProto.FLOAT, None)])
        with self.assertRaises(Exception) as caught:
            s.run(None, {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.float32)})
        self.assertIn("MatMul", str(caught.exception))
        (c,) = s.run(None, {"a": np.ones((2, 3), np.float32), "b": np.ones((3, 1), np.float32)})
        np.testing.assert_array_equal(c, np.full((2, 1), 3, np.float32))


if __name__ == "__main__":
    unittest.main()
