"""Records, for every TensorFlow Lite builtin that op-graph's exporter
writes, the op version and the builtin options table that TensorFlow's own
converter writes for it, so that a test can hold the exporter's table
(op-graph/src/tflite/builtins.rs) to the converter's.

Each case is a small tf.function of the TensorFlow op that the framework op
of the same name stands for, on float32 (int32 where the op is integer
only); some have an unknown dimension, without which the converter folds
the op into a RESHAPE. Run from anywhere, with a Python that has
TensorFlow (`pip install tensorflow-cpu`):

    python op-graph/tests/data/make_converter_ops.py

It writes converter_ops.json beside itself: the TensorFlow version and, by
builtin name, {"version": N, "options": "AddOptions" or null} with the
case that made it. A builtin that two cases make must agree.
"""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
OPTION_NAMES = {v: k for k, v in vars(schema.BuiltinOptions).items() if not k.startswith("_")}

S = tf.TensorSpec
F = S([2, 3], tf.float32)
I = S([2, 3], tf.int32)
DYNAMIC = S([None, 3], tf.float32)
W = np.ones((3, 4), np.float32)

# (case, function, input specs): the case is the TensorFlow op.
CASES = [
    ("AddV2", lambda a, b: tf.raw_ops.AddV2(x=a, y=b), [F, F]),
    ("Sub", lambda a, b: tf.raw_ops.Sub(x=a, y=b), [F, F]),
    ("Mul", lambda a, b: tf.raw_ops.Mul(x=a, y=b), [F, F]),
    ("RealDiv", lambda a, b: tf.raw_ops.RealDiv(x=a, y=b), [F, F]),
    ("Maximum", lambda a, b: tf.raw_ops.Maximum(x=a, y=b), [F, F]),
    ("Minimum", lambda a, b: tf.raw_ops.Minimum(x=a, y=b), [F, F]),
    ("SquaredDifference", lambda a, b: tf.raw_ops.SquaredDifference(x=a, y=b), [F, F]),
    ("Pow", lambda a, b: tf.raw_ops.Pow(x=a, y=b), [F, F]),
    ("FloorDiv", lambda a, b: tf.raw_ops.FloorDiv(x=a, y=b), [I, I]),
    ("FloorMod", lambda a, b: tf.raw_ops.FloorMod(x=a, y=b), [I, I]),
    ("Greater", lambda a, b: tf.cast(tf.raw_ops.Greater(x=a, y=b), tf.float32), [F, F]),
    ("GreaterEqual", lambda a, b: tf.cast(tf.raw_ops.GreaterEqual(x=a, y=b), tf.float32), [F, F]),
    ("Less", lambda a, b: tf.cast(tf.raw_ops.Less(x=a, y=b), tf.float32), [F, F]),
    ("LessEqual", lambda a, b: tf.cast(tf.raw_ops.LessEqual(x=a, y=b), tf.float32), [F, F]),
    ("Equal", lambda a, b: tf.cast(tf.raw_ops.Equal(x=a, y=b), tf.float32), [F, F]),
    ("AddN", lambda a, b: tf.raw_ops.AddN(inputs=[a, b, a]), [F, F]),
    ("Select", lambda a, b: tf.raw_ops.Select(condition=a > b, x=a, y=b), [F, F]),
    ("SelectV2", lambda a, b: tf.raw_ops.SelectV2(condition=a[:, :1] > 0, t=a, e=b), [F, F]),
    ("Neg", lambda a: tf.raw_ops.Neg(x=a), [F]),
    ("Square", lambda a: tf.raw_ops.Square(x=a), [F]),
    ("Exp", lambda a: tf.raw_ops.Exp(x=a), [F]),
    ("Sqrt", lambda a: tf.raw_ops.Sqrt(x=a), [F]),
    ("Rsqrt", lambda a: tf.raw_ops.Rsqrt(x=a), [F]),
    ("Log", lambda a: tf.raw_ops.Log(x=a), [F]),
    ("Sin", lambda a: tf.raw_ops.Sin(x=a), [F]),
    ("Cos", lambda a: tf.raw_ops.Cos(x=a), [F]),
    ("Tanh", lambda a: tf.raw_ops.Tanh(x=a), [F]),
    ("Sigmoid", lambda a: tf.raw_ops.Sigmoid(x=a), [F]),
    ("Relu", lambda a: tf.raw_ops.Relu(features=a), [F]),
    ("Cast", lambda a: tf.raw_ops.Cast(x=a, DstT=tf.int32), [F]),
    ("MatMul (constant b)", lambda a: tf.raw_ops.MatMul(a=a, b=tf.constant(W)), [F]),
    ("MatMul (transpose_b)", lambda a, b: tf.raw_ops.MatMul(a=a, b=b, transpose_b=True), [F, F]),
    ("MatMul (transpose_a)", lambda a, b: tf.raw_ops.MatMul(a=a, b=b, transpose_a=True), [F, F]),
    ("Mean", lambda a: tf.raw_ops.Mean(input=a, axis=[1], keep_dims=True), [F]),
    ("Sum", lambda a: tf.raw_ops.Sum(input=a, axis=[0]), [F]),
    ("Max", lambda a: tf.raw_ops.Max(input=a, axis=[0]), [F]),
    ("Prod", lambda a: tf.raw_ops.Prod(input=a, axis=[0]), [F]),
    ("Cumsum", lambda a: tf.raw_ops.Cumsum(x=a, axis=1), [F]),
    ("Reshape", lambda a: tf.raw_ops.Reshape(tensor=a, shape=[3, 2]), [F]),
    ("Transpose", lambda a: tf.raw_ops.Transpose(x=a, perm=[1, 0]), [F]),
    ("ExpandDims", lambda a: tf.raw_ops.ExpandDims(input=a, axis=0), [S(None, tf.float32)]),
    ("Squeeze", lambda a: tf.raw_ops.Squeeze(input=a, axis=[1]), [S([None, 1, None], tf.float32)]),
    ("Slice", lambda a: tf.raw_ops.Slice(input=a, begin=[0, 1], size=[2, 2]), [F]),
    ("Pad", lambda a: tf.raw_ops.Pad(input=a, paddings=[[1, 0], [0, 1]]), [F]),
    ("Tile", lambda a: tf.raw_ops.Tile(input=a, multiples=[2, 1]), [F]),
    ("BroadcastTo", lambda a: tf.raw_ops.BroadcastTo(input=a, shape=[4, 2, 3]), [F]),
    ("Pack", lambda a, b: tf.raw_ops.Pack(values=[a, b], axis=1), [F, F]),
    ("ConcatV2", lambda a, b: tf.raw_ops.ConcatV2(values=[a, b], axis=1), [F, F]),
]


def operators(function, specs):
    concrete = tf.function(function, autograph=False).get_concrete_function(*specs)
    model_bytes = tf.lite.TFLiteConverter.from_concrete_functions([concrete]).convert()
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model_bytes, 0))
    for op in model.subgraphs[0].operators:
        code = model.operatorCodes[op.opcodeIndex]
        builtin = BUILTIN_NAMES[max(code.builtinCode, code.deprecatedBuiltinCode)]
        options = OPTION_NAMES[op.builtinOptionsType] if op.builtinOptionsType else None
        yield builtin, code.version, options


def main():
    found = {}
    for case, function, specs in CASES:
        for builtin, version, options in operators(function, specs):
            entry = {"version": version, "options": options, "case": case}
            previous = found.setdefault(builtin, entry)
            if (previous["version"], previous["options"]) != (version, options):
                raise SystemExit(f"{builtin}: {case} gives {entry}, {previous['case']} gave {previous}")
    path = os.path.join(HERE, "converter_ops.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "builtins": dict(sorted(found.items()))}, f, indent=1)
        f.write("\n")
    print(f"wrote {path}: {len(found)} builtins ({', '.join(sorted(found))})")


if __name__ == "__main__":
    main()
