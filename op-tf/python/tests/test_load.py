"""Loading the library: what it registers, and that TensorFlow's OpDefs are ours."""

import json
import os

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.framework import kernels, op_def_registry

from common import LIBRARY, REPORT, TestCase, exported_ops, ops, report_lines, run_python

OPS_PBTXT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "ops", "ops.pbtxt")


def without_docs(op):
    """The OpDef as TensorFlow's C op builder gives it: it has no call for docs."""
    op = op_def_pb2.OpDef.FromString(op.SerializeToString())
    op.summary = ""
    op.description = ""
    for arg in list(op.input_arg) + list(op.output_arg):
        arg.description = ""
    for attr in op.attr:
        attr.description = ""
    return op


class LoadTest(TestCase):
    def test_the_load_succeeded(self):
        self.assertEqual(REPORT[0], "ok", "\n".join(REPORT))

    def test_every_exported_op_is_in_tensorflow_as_we_define_it(self):
        ours = op_def_pb2.OpList()
        with open(OPS_PBTXT) as f:
            text_format.Parse(f.read(), ours)
        ours = {op.name: op for op in ours.op}
        exported = exported_ops()
        self.assertIn("ZeroOut", exported)
        for name in exported:
            with self.subTest(op=name):
                theirs = op_def_registry.get(name)
                self.assertIsNotNone(theirs, f"{name} is not in TensorFlow's registry")
                self.assertProtoEquals(without_docs(ours[name]), theirs)

    def test_tensorflows_own_ops_are_left_out_and_keyword_args_held_back_with_a_reason(self):
        skipped = dict(line.split(": ", 1) for line in report_lines("skipped"))
        self.assertIn("TensorFlow has an op of this name", skipped["AddV2"])
        held_back = dict(line.split(": ", 1) for line in report_lines("held back"))
        self.assertIn("input 'in' is a Python keyword", held_back["PolymorphicListExample"])
        self.assertNotIn("PolymorphicListExample", skipped)
        # TensorFlow's own AddV2 still runs.
        self.assertAllEqual(tf.raw_ops.AddV2(x=1, y=2), 3)

    def test_our_pool_size_is_reported_and_set_by_opkit_tf_threads(self):
        (line,) = report_lines("threads")
        self.assertEqual(int(line.split()[0]), int(os.environ.get("OPKIT_TF_THREADS", os.cpu_count())))
        script = "import opkit_ops.tensorflow as ops; print(ops.LOAD_REPORT)"
        out = run_python(script, OPKIT_TF_THREADS="1")
        self.assertRanWell(out)
        self.assertIn("threads 1 (our kernels' own pool; OPKIT_TF_THREADS sets it)", out.stdout)

    def test_outside_tensorflow_the_load_names_the_c_functions_it_lacks(self):
        # A process without TensorFlow: the library loads, registers
        # nothing, and its report says why (the package raises it as an
        # ImportError).
        script = (
            "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
            "lib.op_tf_load_report.restype = ctypes.c_char_p; "
            "print(lib.op_tf_load_report().decode())"
        )
        out = run_python(script, LIBRARY)
        self.assertRanWell(out)
        self.assertTrue(out.stdout.startswith("error: "), out.stdout)
        self.assertIn("lacks C function(s) the plugin needs: TF_NewStatus", out.stdout)

    def test_every_cpu_kernel_is_registered(self):
        kernels = report_lines("kernel")
        self.assertIn("ZeroOut zero_out_int32 (CPU)", kernels)
        polymorphic = [k for k in kernels if k.startswith("ZeroOutPolymorphic ") and k.endswith("(CPU)")]
        self.assertEqual(len(polymorphic), 3, polymorphic)

    def test_tensorflows_kernel_registry_holds_each_kernel_as_we_declare_it(self):
        # The manifest lists every kernel the library gives TensorFlow (CPU
        # and GPU, with type constraints and host-memory args); TensorFlow's
        # own registry must hold exactly those, for every exported op. The
        # GPU kernels cannot run in tensorflow-cpu, but they are registered.
        with open(os.path.join(os.path.dirname(ops.__file__), "manifest.json")) as f:
            manifest = json.load(f)

        def key(device, constraints, host_memory):
            return (device, tuple(sorted(constraints)), tuple(sorted(host_memory)))

        ours = {}
        for k in manifest["kernels"]:
            constraints = [(c["attr"], c["dtype"]) for c in k["constraints"]]
            ours.setdefault(k["op"], []).append(key(k["device"], constraints, k["host_memory"]))
        self.assertTrue(any(k[0] == "GPU" for k in ours["ZeroOut"]), ours["ZeroOut"])
        for name in exported_ops():
            with self.subTest(op=name):
                theirs = []
                for k in kernels.get_registered_kernels_for_op(name).kernel:
                    constraints = [(c.name, t) for c in k.constraint for t in c.allowed_values.list.type]
                    theirs.append(key(k.device_type, constraints, k.host_memory_arg))
                self.assertCountEqual(theirs, ours.get(name, []))


if __name__ == "__main__":
    tf.test.main()
