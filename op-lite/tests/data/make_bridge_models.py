"""Makes the .tflite model that op-lite's bridge tests (tests/bridge.rs)
read: framework ops that TensorFlow Lite lacks, kept as custom ops by
TensorFlow's own converter (`allow_custom_ops=True`), whose custom options
are the flexbuffer map of the ops' attrs.

Run from anywhere, with a Python that has TensorFlow and LiteRT
(`pip install tensorflow-cpu ai-edge-litert`):

    python op-lite/tests/data/make_bridge_models.py

It writes, beside itself:

- cumprod_custom.tflite: y = cumprod(cumprod(x, axis=1, exclusive=True,
  reverse=True), axis=0) on a float x of shape [2, 4]: two custom
  `Cumprod` nodes, with options {T: 0, Tidx: 2, exclusive: true,
  reverse: true} and {T: 0, Tidx: 2, exclusive: false, reverse: false}
  (types as TensorFlow Lite's TensorType codes: 0 is float32, 2 int32),
  their axes constant int32 tensors;
- cumprod_custom.input.npy, cumprod_custom.output.npy: a fixed input and
  TensorFlow's own result on it (LiteRT cannot run the model: it has no
  `Cumprod`; the script checks that it says so).

The numbers are drawn from a fixed seed, so running it again writes the
same files, up to the converter's version.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter
from importlib.metadata import version
from tensorflow.lite.python import schema_py_generated as schema

HERE = os.path.dirname(os.path.abspath(__file__))


class CumprodModel(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([2, 4], tf.float32, name="x")])
    def cumprod(self, x):
        inner = tf.math.cumprod(x, axis=1, exclusive=True, reverse=True)
        return tf.math.cumprod(inner, axis=0)


def main():
    print(f"TensorFlow {tf.__version__}, LiteRT {version('ai-edge-litert')}")
    model = CumprodModel()
    function = model.cumprod.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function], model)
    converter.allow_custom_ops = True
    model_bytes = converter.convert()
    with open(os.path.join(HERE, "cumprod_custom.tflite"), "wb") as f:
        f.write(model_bytes)
    print(f"wrote cumprod_custom.tflite ({len(model_bytes)} bytes)")

    # What the converter wrote: two custom Cumprod nodes and their options.
    parsed = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model_bytes, 0))
    codes = [(c.customCode, c.builtinCode) for c in parsed.operatorCodes]
    import flatbuffers.flexbuffers as flex

    for op in parsed.subgraphs[0].operators:
        name, builtin = codes[op.opcodeIndex]
        options = flex.Loads(bytes(op.customOptions)) if op.customOptions is not None else None
        print(f"  node: {name} (builtin code {builtin}), options {options}")
    assert [c[0] for c in codes] == [b"Cumprod"], codes

    rng = np.random.default_rng(16)
    x = rng.uniform(0.5, 2.0, size=(2, 4)).astype(np.float32)
    y = model.cumprod(tf.constant(x)).numpy()
    np.save(os.path.join(HERE, "cumprod_custom.input.npy"), x)
    np.save(os.path.join(HERE, "cumprod_custom.output.npy"), y)
    print(f"  TensorFlow's output on the fixed input: {y.tolist()}")

    try:
        interpreter = Interpreter(model_content=model_bytes)
        interpreter.allocate_tensors()
        raise SystemExit("LiteRT ran a model with a custom Cumprod it has no kernel for")
    except RuntimeError as e:
        message = str(e).strip().splitlines()[0]
        assert "Encountered unresolved custom op: Cumprod" in message, message
        print(f"  LiteRT, as expected: {message}")


if __name__ == "__main__":
    main()
