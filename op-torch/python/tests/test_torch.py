"""op-kernels' ops in PyTorch, from the installed opkit_ops package: the
schemas PyTorch sees, eager calls against numpy's results, errors, faults
that must leave PyTorch running, torch.compile, torch.export and autograd."""

import ctypes
import os
import subprocess
import sys
import unittest

import numpy as np
import torch

import opkit_ops.torch as ops

NS = torch.ops.opkit_ops


class Schemas(unittest.TestCase):
    def test_each_op_has_the_schema_translated_from_its_opdef(self):
        self.assertEqual(str(NS.zero_out.default._schema), "opkit_ops::zero_out(Tensor to_zero) -> Tensor")
        self.assertEqual(
            str(NS.zero_out_preserve_index.default._schema),
            "opkit_ops::zero_out_preserve_index(Tensor to_zero, *, int preserve_index) -> Tensor",
        )
        # An attr's default is the schema's.
        self.assertEqual(str(NS.cast.default._schema), "opkit_ops::cast(Tensor x, *, ScalarType DstT, bool Truncate=False) -> Tensor")

    def test_a_type_attr_no_input_sets_is_a_dtype_argument(self):
        schema = str(NS.cast.default._schema)
        self.assertIn("ScalarType DstT", schema)
        y = NS.cast(torch.tensor([1.5, -2.5]), DstT=torch.int32)
        self.assertEqual(y.dtype, torch.int32)
        self.assertEqual(y.tolist(), [1, -2])

    def test_a_gradient_is_an_op_of_its_own(self):
        self.assertEqual(
            str(NS.zero_out_polymorphic_backward.default._schema),
            "opkit_ops::zero_out_polymorphic_backward(Tensor to_zero, Tensor zeroed, Tensor zeroed_grad) -> Tensor",
        )

    def test_the_load_report_names_every_op_and_why_others_are_left_out(self):
        self.assertTrue(ops.LOAD_REPORT.startswith("ok\n"))
        self.assertIn("op opkit_ops::zero_out(Tensor to_zero) -> Tensor", ops.LOAD_REPORT)
        self.assertIn("AddN", ops.SKIPPED)
        self.assertIn("list of tensors", ops.SKIPPED["AddN"])
        self.assertNotIn("refused", ops.LOAD_REPORT)

    def test_the_plain_functions_carry_the_ops_docs(self):
        self.assertIn("Zeroes every element but the first", ops.zero_out.__doc__)
        self.assertIn("Schema: opkit_ops::zero_out(Tensor to_zero) -> Tensor", ops.zero_out.__doc__)


class Eager(unittest.TestCase):
    def test_zero_out_keeps_the_first_element(self):
        x = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
        self.assertEqual(ops.zero_out(x).tolist(), [[1, 0], [0, 0]])
        self.assertEqual(ops.zero_out_preserve_index(torch.arange(5, dtype=torch.int32), preserve_index=3).tolist(), [0, 0, 0, 3, 0])

    def test_a_non_contiguous_input_is_read_in_its_logical_order(self):
        x = torch.arange(1, 7, dtype=torch.int32).reshape(2, 3)
        for view in (x.t(), x[:, ::2], x[:, 1:].expand(4, 2, 2)):
            self.assertFalse(view.is_contiguous())
            expected = torch.zeros_like(view.contiguous())
            expected.view(-1)[0] = view.contiguous().view(-1)[0]
            self.assertEqual(ops.zero_out(view).tolist(), expected.tolist())

    def test_inputs_are_not_written(self):
        x = torch.arange(1, 5, dtype=torch.float32)
        ops.zero_out_polymorphic(x)
        self.assertEqual(x.tolist(), [1, 2, 3, 4])

    def test_each_dtype_of_a_polymorphic_op_runs(self):
        for dtype in (torch.float32, torch.float64, torch.int32):
            y = ops.zero_out_polymorphic(torch.tensor([5, 6, 7], dtype=dtype))
            self.assertEqual(y.dtype, dtype)
            self.assertEqual(y.tolist(), [5, 0, 0])

    def test_a_large_input_matches_numpy(self):
        x = torch.randn(300_000, dtype=torch.float64)
        np.testing.assert_allclose(ops.add_v2(x, x).numpy(), 2 * x.numpy())

    def test_zero_sized_and_scalar_inputs(self):
        self.assertEqual(ops.zero_out_polymorphic(torch.zeros(0, 3)).shape, (0, 3))
        self.assertEqual(ops.add_v2(torch.tensor(2.0), torch.tensor(3.0)).item(), 5.0)

    def test_an_op_of_no_tensors_runs(self):
        self.assertIsNone(NS.no_op())


class Errors(unittest.TestCase):
    def test_an_attr_value_our_op_refuses_names_the_op_and_attr(self):
        with self.assertRaises(RuntimeError) as caught:
            ops.zero_out_preserve_index(torch.arange(3, dtype=torch.int32), preserve_index=-1)
        message = str(caught.exception)
        self.assertIn("preserve_index", message)
        self.assertIn("opkit_ops::zero_out_preserve_index", message)

    def test_a_dtype_the_op_does_not_take_names_the_input(self):
        with self.assertRaises(RuntimeError) as caught:
            ops.zero_out(torch.tensor([1.0]))
        self.assertIn("input 'to_zero' must be int32", str(caught.exception))

    def test_a_dtype_we_do_not_have_is_refused(self):
        with self.assertRaises(RuntimeError) as caught:
            ops.zero_out_polymorphic(torch.tensor([1.0], dtype=torch.float8_e4m3fn))
        self.assertIn("has no dtype of ours", str(caught.exception))

    def test_a_missing_or_unknown_keyword_is_pytorchs_own_error(self):
        with self.assertRaises(RuntimeError) as caught:
            NS.zero_out_preserve_index(torch.arange(3, dtype=torch.int32))
        self.assertIn("missing value for argument 'preserve_index'", str(caught.exception))
        with self.assertRaises(RuntimeError) as caught:
            NS.zero_out_preserve_index(torch.arange(3, dtype=torch.int32), preserve_index=1, nonsense=1)
        self.assertIn("expected at most 2 argument(s)", str(caught.exception))

    def test_errors_leave_pytorch_working(self):
        for _ in range(3):
            with self.assertRaises(RuntimeError):
                ops.zero_out(torch.tensor([1.0]))
        self.assertEqual(ops.zero_out(torch.tensor([7, 8], dtype=torch.int32)).tolist(), [7, 0])


@unittest.skipUnless(os.environ.get("OPKIT_TORCH_TEST_OPS"), "needs OPKIT_TORCH_TEST_OPS (run_tests.py sets it)")
class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.ops.load_library(os.environ["OPKIT_TORCH_TEST_OPS"])
        cls.ns = torch.ops.op_tf_test_ops

    def test_a_panic_in_a_kernel_is_a_runtime_error_naming_it(self):
        for op, text in [
            (self.ns.panic_in_compute, "the kernel was given 2.5"),
            (self.ns.panic_in_construction, "no kernel today"),
        ]:
            with self.assertRaises(RuntimeError) as caught:
                op(torch.tensor([2.5]))
            self.assertIn(text, str(caught.exception))
        self.assertEqual(ops.zero_out(torch.tensor([3, 4], dtype=torch.int32)).tolist(), [3, 0])

    def test_the_library_loads_without_the_package_and_loading_twice_is_harmless(self):
        torch.ops.load_library(os.environ["OPKIT_TORCH_TEST_OPS"])
        self.assertIn("op_tf_test_ops::panic_in_shape", str(self.ns.panic_in_shape.default._schema))

    def test_a_process_without_pytorch_is_told_why_nothing_was_registered(self):
        code = (
            "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
            "lib.op_torch_load_report.restype = ctypes.c_char_p; print(lib.op_torch_load_report().decode())"
        )
        out = subprocess.run([sys.executable, "-c", code, os.environ["OPKIT_TORCH_TEST_OPS"]], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("error: "), out.stdout)
        self.assertIn("PyTorch's stable ABI is not in this process", out.stdout)


class Compile(unittest.TestCase):
    def test_torch_compile_fullgraph_traces_through_our_op(self):
        f = torch.compile(lambda x: ops.zero_out_polymorphic(x) * 2 + 1, fullgraph=True)
        self.assertEqual(f(torch.ones(4)).tolist(), [3, 1, 1, 1])
        # Another shape: recompiled or dynamic, the answer is right.
        self.assertEqual(f(torch.ones(6)).tolist(), [3, 1, 1, 1, 1, 1])

    def test_torch_export_keeps_our_op_in_the_graph(self):
        class M(torch.nn.Module):
            def forward(self, x):
                return ops.zero_out_polymorphic(x) + x

        dim = torch.export.Dim("n")
        program = torch.export.export(M(), (torch.ones(5),), dynamic_shapes={"x": {0: dim}})
        self.assertIn("torch.ops.opkit_ops.zero_out_polymorphic.default", program.graph_module.code)
        self.assertEqual(program.module()(torch.ones(3)).tolist(), [2, 1, 1])

    def test_a_fake_output_dim_follows_a_symbolic_input_dim(self):
        from torch.fx.experimental.proxy_tensor import make_fx

        graph = make_fx(lambda x: ops.add_v2(ops.zero_out_polymorphic(x), x), tracing_mode="symbolic")(torch.ones(4, 3))
        shapes = [n.meta["val"].shape for n in graph.graph.nodes if "val" in n.meta]
        x, *outputs = shapes
        self.assertIsInstance(x[0], torch.SymInt)
        for shape in outputs:
            self.assertEqual([str(d) for d in shape], [str(d) for d in x])

    def test_opcheck_passes(self):
        from torch.library import opcheck

        opcheck(NS.zero_out_polymorphic.default, (torch.randn(4),))
        opcheck(NS.zero_out_preserve_index.default, (torch.arange(4, dtype=torch.int32),), {"preserve_index": 2})
        opcheck(NS.add_v2.default, (torch.randn(2, 3), torch.randn(3)))


class Autograd(unittest.TestCase):
    def test_backward_runs_our_gradient(self):
        x = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
        ops.zero_out_polymorphic(x).sum().backward()
        self.assertEqual(x.grad.tolist(), [1, 0, 0])

    def test_a_broadcast_gradient_is_summed_back_to_the_input_shape(self):
        a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        b = torch.randn(3, dtype=torch.float64, requires_grad=True)
        ops.add_v2(a, b).sum().backward()
        self.assertEqual(b.grad.tolist(), [2.0, 2.0, 2.0])

    def test_gradcheck(self):
        a = torch.randn(4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(ops.add_v2, (a, b)))

    def test_grad_under_torch_compile(self):
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        torch.compile(lambda x: ops.zero_out_polymorphic(x).sum(), fullgraph=True)(x).backward()
        self.assertEqual(x.grad.tolist(), [1, 0])


if __name__ == "__main__":
    unittest.main()
