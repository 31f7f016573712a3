"""Tensors crossing between TensorFlow and our kernels: strings, several
outputs, bools, every dtype an op allows; errors keep their code and message."""

import numpy as np
import tensorflow as tf

import os

from common import REPORT, TestCase, ops, run_python


class ValuesTest(TestCase):
    def test_string_outputs_and_several_outputs(self):
        a, b = ops.multiple_ins_and_outs(y=[1, 2, 3], z=[1.5, -2.0])
        self.assertEqual(a.dtype, tf.string)
        self.assertAllEqual(a, [b"1.5", b"-2"])
        self.assertAllEqual(b, [1, 2, 3])

    def test_bool_inputs(self):
        y = ops.examples_multiplex_dense(cond=[True, False, True], a_values=[1, 2, 3], b_values=[10, 20, 30])
        self.assertAllEqual(y, [1, 20, 3])

    def test_every_dtype_the_op_allows(self):
        for dtype in (tf.float32, tf.float64, tf.int32, tf.uint8, tf.int16, tf.int8, tf.int64,
                      tf.bfloat16, tf.uint16, tf.half, tf.uint32, tf.uint64, tf.complex64, tf.complex128):
            with self.subTest(dtype=dtype):
                y = ops.example(tf.constant([1, 2, 3], dtype))
                self.assertEqual(y.dtype, dtype)
                self.assertAllEqual(tf.cast(y, tf.float64) if not dtype.is_complex else tf.math.real(y), [2, 4, 6])

    def test_large_and_empty_tensors(self):
        x = tf.constant(np.arange(1_000_000, dtype=np.float32))
        self.assertAllEqual(ops.example(x), np.arange(1_000_000, dtype=np.float32) * 2)
        self.assertAllEqual(ops.example(tf.zeros([0, 3])).shape, [0, 3])
        self.assertAllEqual(ops.zero_out(tf.zeros([0], tf.int32)), [])

    def test_large_outputs_go_in_tensorflows_buffers_and_inputs_stay_intact(self):
        # Past 64 KiB the outputs are TensorFlow's buffers, forwarded from an
        # input TensorFlow holds nowhere else; `x` is held here, so it must
        # come out as it went in.
        x = tf.constant(np.arange(100_000, dtype=np.int32))
        y = ops.zero_out(x)
        self.assertAllEqual(y[:3], [0, 0, 0])
        self.assertAllEqual(x[:3], [0, 1, 2])
        self.assertAllEqual(ops.example(x)[:3], [0, 2, 4])
        self.assertAllEqual(x[-1], 99_999)

        @tf.function
        def chain(v):
            # Intermediate results are TensorFlow's alone: forwarded.
            return ops.example(ops.example(ops.zero_out_polymorphic(v + 1.0)))

        v = tf.fill([200_000], 3.0)
        out = chain(v)
        self.assertAllEqual(out[:2], [16.0, 0.0])
        self.assertAllEqual(v[:2], [3.0, 3.0])

    def test_a_kernel_error_keeps_its_code_and_message_and_the_process_goes_on(self):
        with self.assertRaises(tf.errors.InvalidArgumentError) as caught:
            ops.examples_multiplex_dense(cond=[True, False], a_values=[1.0, 2.0, 3.0], b_values=[1.0, 2.0, 3.0])
        self.assertIn("Examples>MultiplexDense", str(caught.exception))
        # The next call works.
        self.assertAllEqual(ops.zero_out([1, 2]), [1, 0])



C_API_ONLY = """
import sys, unittest
sys.path.insert(0, sys.argv[1])
import common
print([line for line in common.REPORT if line.startswith("shim ")])
suite = unittest.defaultTestLoader.loadTestsFromName("test_values.ValuesTest")
result = unittest.TextTestRunner(stream=sys.stderr).run(suite)
print(result.testsRun, len(result.failures) + len(result.errors))
"""


class PathsTest(TestCase):
    def test_the_shim_s_views_carry_plain_tensors_here(self):
        shim = [line for line in REPORT if line.startswith("shim ")]
        self.assertEqual(len(shim), 1, REPORT[:3])
        self.assertTrue(shim[0].endswith("plain tensors: its views"), shim)

    def test_the_c_api_path_carries_them_as_well(self):
        # The same value tests, in a process whose plain tensors take the C
        # API (TF_GetInput, TF_AllocateOutput), as they do without a shim.
        here = os.path.dirname(os.path.abspath(__file__))
        out = run_python(C_API_ONLY, here, OPKIT_TF_C_API_ONLY="1")
        self.assertRanWell(out)
        shim_line, counts = out.stdout.strip().splitlines()[-2:]
        self.assertIn("plain tensors: the C API, as OPKIT_TF_C_API_ONLY=1 asks", shim_line)
        ran, failed = map(int, counts.split())
        self.assertGreater(ran, 5)
        self.assertEqual(failed, 0, out.stderr[-3000:])


if __name__ == "__main__":
    tf.test.main()
