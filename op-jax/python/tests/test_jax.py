"""op-kernels' ops in JAX, from the installed opkit_ops package: each op a
JAX function, under jit, grad and vmap, against numpy's results."""

import ctypes
import json
import os
import subprocess
import sys
import textwrap
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads

import opkit_ops.jax as ops


class Calls(unittest.TestCase):
    def test_an_op_is_a_function_of_jax_arrays(self):
        y = ops.zero_out(jnp.array([[1, 2], [3, 4]], dtype=jnp.int32))
        self.assertIsInstance(y, jax.Array)
        np.testing.assert_array_equal(y, [[1, 0], [0, 0]])

    def test_an_op_runs_under_jit_beside_jaxs_own(self):
        f = jax.jit(lambda x: ops.zero_out_polymorphic(x * 2.0) + 1.0)
        np.testing.assert_array_equal(f(jnp.array([1.0, 2.0, 3.0])), [3.0, 1.0, 1.0])

    def test_each_dtype_the_kernel_takes(self):
        for dtype in (jnp.float32, jnp.int32):
            y = ops.zero_out_polymorphic(jnp.array([5, 6, 7], dtype=dtype))
            self.assertEqual(y.dtype, dtype)
            np.testing.assert_array_equal(y, [5, 0, 0])

    def test_a_large_input_runs_in_xlas_buffers(self):
        x = jnp.arange(1, 100_001, dtype=jnp.int32)
        y = jax.jit(ops.zero_out)(x)
        self.assertEqual(int(y[0]), 1)
        self.assertFalse(bool(y[1:].any()))

    def test_matmul_matches_numpy(self):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((3, 2), np.float32), rng.standard_normal((3, 4), np.float32)
        c = jax.jit(lambda a, b: ops.mat_mul(a, b, transpose_a=True))(a, b)
        np.testing.assert_allclose(c, a.T @ b, rtol=1e-5)

    def test_inputs_by_name(self):
        np.testing.assert_array_equal(ops.zero_out(to_zero=jnp.array([4, 5], jnp.int32)), [4, 0])


class Attrs(unittest.TestCase):
    def test_an_attr_is_a_keyword_argument(self):
        y = jax.jit(lambda x: ops.zero_out_preserve_index(x, preserve_index=2))(jnp.arange(4, dtype=jnp.int32))
        np.testing.assert_array_equal(y, [0, 0, 2, 0])

    def test_a_type_attr_no_input_sets_is_a_dtype(self):
        y = ops.cast(jnp.array([1, 2], jnp.int32), DstT=jnp.float32)
        self.assertEqual(y.dtype, jnp.float32)
        np.testing.assert_array_equal(y, [1.0, 2.0])

    def test_bool_attrs(self):
        x = jnp.array([1.0, 2.0, 3.0])
        y = ops.cumsum(x, jnp.array(0, jnp.int32), exclusive=True, reverse=True)
        np.testing.assert_allclose(y, [5.0, 3.0, 0.0])

    def test_a_bad_attr_value_is_refused_when_traced_as_our_runtime_refuses_it(self):
        with self.assertRaises(ValueError) as caught:
            jax.jit(lambda x: ops.zero_out_preserve_index(x, preserve_index=-1))(jnp.arange(4, dtype=jnp.int32))
        self.assertIn("preserve_index", str(caught.exception))

    def test_a_missing_attr_names_it(self):
        with self.assertRaises(ValueError) as caught:
            ops.zero_out_preserve_index(jnp.arange(4, dtype=jnp.int32))
        self.assertIn("preserve_index", str(caught.exception))

    def test_an_attr_of_the_wrong_kind_names_op_and_attr(self):
        with self.assertRaises(ValueError) as caught:
            ops.zero_out_preserve_index(jnp.arange(4, dtype=jnp.int32), preserve_index="two")
        self.assertIn("ZeroOutPreserveIndex", str(caught.exception))
        self.assertIn("preserve_index", str(caught.exception))

    def test_an_attr_the_op_does_not_have_is_a_type_error(self):
        with self.assertRaises(TypeError) as caught:
            ops.zero_out(jnp.array([1], jnp.int32), preserve_index=1)
        self.assertIn("ZeroOut", str(caught.exception))


class Shapes(unittest.TestCase):
    def test_output_shapes_come_from_our_shape_function(self):
        traced = jax.eval_shape(lambda a, b: ops.mat_mul(a, b), jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((3, 5), jnp.float32))
        self.assertEqual(traced.shape, (2, 5))

    def test_a_shape_error_is_raised_when_traced(self):
        with self.assertRaises(ValueError) as caught:
            jax.jit(ops.mat_mul)(jnp.ones((2, 3)), jnp.ones((2, 3)))
        self.assertIn("MatMul", str(caught.exception))

    def test_an_output_shape_that_depends_on_input_values_says_so(self):
        with self.assertRaises(ValueError) as caught:
            jax.jit(ops.fill)(jnp.array([2, 3], jnp.int32), jnp.float32(1.0))
        self.assertIn("Fill", str(caught.exception))
        self.assertIn("depends on input values", str(caught.exception))

    def test_outside_jit_a_shape_input_with_values_fixes_the_output_shape(self):
        # Concrete int32 inputs carry their values to our shape function.
        y = ops.fill(jnp.array([2, 3], jnp.int32), jnp.float32(1.5))
        np.testing.assert_array_equal(y, np.full((2, 3), 1.5, np.float32))

    def test_a_dtype_the_op_does_not_take_names_the_op(self):
        with self.assertRaises(ValueError) as caught:
            ops.zero_out(jnp.array([1.0]))
        self.assertIn("ZeroOut", str(caught.exception))


# Differentiable ops and inputs away from kinks, for check_grads (order 1,
# reverse mode: our gradients are first-order).
GRADIENT_CASES = [
    ("zero_out_polymorphic", [np.array([1.0, 2.0, 3.0])], {}),
    ("square", [np.array([0.5, -1.5, 2.0])], {}),
    ("sin", [np.array([0.1, 1.0, 2.0])], {}),
    ("tanh", [np.array([0.1, -0.7, 0.3])], {}),
    ("sigmoid", [np.array([0.1, -0.7, 0.3])], {}),
    ("exp", [np.array([0.1, -0.7, 0.3])], {}),
    ("mul", [np.array([1.0, 2.0]), np.array([3.0, -1.0])], {}),
    ("sub", [np.array([1.0, 2.0]), np.array([3.0, -1.0])], {}),
    ("mat_mul", [np.arange(6.0).reshape(2, 3) / 7, np.arange(12.0).reshape(3, 4) / 5], {}),
    ("mat_mul", [np.arange(6.0).reshape(3, 2) / 7, np.arange(12.0).reshape(3, 4) / 5], {"transpose_a": True}),
]


class Gradients(unittest.TestCase):
    def test_check_grads_passes_for_each_case(self):
        for name, args, attrs in GRADIENT_CASES:
            with self.subTest(op=name, attrs=attrs):
                op = getattr(ops, name)
                args = [jnp.asarray(a, jnp.float32) for a in args]
                check_grads(lambda *a: op(*a, **attrs), args, order=1, modes=["rev"], atol=1e-2, rtol=1e-2)

    def test_check_grads_passes_for_every_op_with_a_gradient(self):
        cases = os.environ.get("OPKIT_CONFORMANCE_CASES")
        if not cases:
            self.skipTest("OPKIT_CONFORMANCE_CASES (cargo xtask conformance's cases) is not set")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "every_gradient.py")
        run = subprocess.run([sys.executable, script, cases], capture_output=True, text=True, timeout=600)
        print("\n" + run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "", file=sys.stderr)
        self.assertEqual(run.returncode, 0, run.stdout[-4000:] + run.stderr[-2000:])

    def test_grad_under_jit(self):
        g = jax.jit(jax.grad(lambda x: ops.zero_out_polymorphic(x).sum()))(jnp.ones(3))
        np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])

    def test_every_differentiable_op_is_a_custom_vjp(self):
        names = [op["python_name"] for op in ops._MANIFEST["ops"] if op["differentiable"]]
        self.assertIn("zero_out_polymorphic", names)
        self.assertGreater(len(names), 20)


class Vmap(unittest.TestCase):
    def test_vmap_runs_each_row(self):
        x = jnp.arange(1, 7, dtype=jnp.int32).reshape(2, 3)
        np.testing.assert_array_equal(jax.vmap(ops.zero_out)(x), [[1, 0, 0], [4, 0, 0]])
        self.assertTrue(all(op["vmap"] == "sequential" for op in ops._MANIFEST["ops"]))

    def test_vmap_of_grad(self):
        x = jnp.ones((2, 3))
        g = jax.vmap(jax.grad(lambda r: ops.zero_out_polymorphic(r).sum()))(x)
        np.testing.assert_array_equal(g, [[1, 0, 0], [1, 0, 0]])


class Sharding(unittest.TestCase):
    def test_shard_map_over_two_host_devices_gives_the_single_device_result(self):
        script = textwrap.dedent(
            """
            import os
            os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
            import jax, jax.numpy as jnp, numpy as np
            from jax.sharding import Mesh, PartitionSpec as P, NamedSharding
            import opkit_ops.jax as ops
            assert len(jax.devices()) == 2, jax.devices()
            mesh = Mesh(np.array(jax.devices()), ("x",))
            x = jnp.arange(1, 9, dtype=jnp.float32).reshape(2, 4)
            x = jax.device_put(x, NamedSharding(mesh, P("x")))
            f = jax.jit(jax.shard_map(lambda b: ops.zero_out_polymorphic(b.reshape(-1)).reshape(b.shape), mesh=mesh, in_specs=P("x"), out_specs=P("x")))
            y = f(x)
            single = np.stack([np.asarray(ops.zero_out_polymorphic(r)) for r in np.arange(1, 9, dtype=np.float32).reshape(2, 4)])
            np.testing.assert_array_equal(np.asarray(y), single)
            print("sharded ok", y.sharding)
            """
        )
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertIn("sharded ok", run.stdout)


    def test_two_processes_each_run_the_op_on_their_shard(self):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_processes.py")
        runs = [subprocess.Popen([sys.executable, script, str(i), port], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (0, 1)]
        outputs = [r.communicate(timeout=300) for r in runs]
        for i, (run, (out, err)) in enumerate(zip(runs, outputs)):
            self.assertEqual(run.returncode, 0, err[-3000:])
            self.assertIn(f"process {i} ok", out)


class Faults(unittest.TestCase):
    """The test ops' library (op-tf/test-ops) under a target of its own."""

    TEST_OPS = os.environ.get("OPKIT_JAX_TEST_OPS")
    TARGET = "opkit.op_tf_test_ops"

    @classmethod
    def setUpClass(cls):
        if not cls.TEST_OPS:
            raise unittest.SkipTest("OPKIT_JAX_TEST_OPS (the op-tf-test-ops library) is not set")
        cls.lib = ctypes.CDLL(cls.TEST_OPS)
        jax.ffi.register_ffi_target(cls.TARGET, jax.ffi.pycapsule(cls.lib.op_jax_call), platform="cpu")

    def call(self, op, x):
        request = json.dumps({"op": op, "inputs": [{"dtype": 1, "shape": list(x.shape)}], "attrs": {}})
        return jax.ffi.ffi_call(self.TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, opkit=request)

    def test_a_panicking_kernel_is_an_exception_and_jax_goes_on(self):
        for _ in range(2):
            with self.assertRaises(Exception) as caught:
                jax.block_until_ready(self.call("PanicInCompute", jnp.array([7.0, 8.0])))
            self.assertIn("panicked", str(caught.exception))
            self.assertIn("the kernel was given 7", str(caught.exception))
        np.testing.assert_array_equal(ops.zero_out(jnp.array([3, 4], jnp.int32)), [3, 0])

    def test_a_kernel_that_panics_when_made_is_an_exception(self):
        with self.assertRaises(Exception) as caught:
            jax.block_until_ready(self.call("PanicInConstruction", jnp.array([1.0])))
        self.assertIn("no kernel today", str(caught.exception))

    def test_a_call_without_the_request_says_what_it_lacks(self):
        with self.assertRaises(Exception) as caught:
            jax.block_until_ready(jax.ffi.ffi_call(self.TARGET, jax.ShapeDtypeStruct((1,), jnp.float32))(jnp.array([1.0])))
        self.assertIn("opkit", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
