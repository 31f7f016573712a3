"""Records, for every TensorFlow Lite builtin that op-graph's exporter
writes, the op version and the builtin options table that TensorFlow's own
converter writes for it, so that a test can hold the exporter's table
(op-graph/src/tflite/builtins.rs) to the converter's.

Each case is a small tf.function of the TensorFlow op that the framework op
of the same name stands for, converted once per dtype (float32, int32,
int64, int16, int8, uint8, bool): the converter's op versions depend on the
dtype, and where TensorFlow Lite has no builtin for the op on a dtype the
converter refuses it (the exporter then writes a custom op). Run from
anywhere, with a Python that has TensorFlow (`pip install tensorflow-cpu`):

    python op-graph/tests/data/make_converter_ops.py

It writes converter_ops.json beside itself: the TensorFlow version and, by
case and dtype, the operators the converter wrote, [builtin, version,
options table or null] each, or null where it refused.
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
DTYPES = [tf.float32, tf.int32, tf.int64, tf.int16, tf.int8, tf.uint8, tf.bool]


def same(n):
    """n inputs of the case's dtype, [2, 3]."""
    return lambda dt: [S([2, 3], dt)] * n


def ones(dt, shape):
    return tf.ones(shape, dt)


# (case, function, input specs by dtype): the case is the TensorFlow op. A
# case's dtype is that of its first input (of its second for Select and
# SelectV2, whose first is the condition).
CASES = [
    ("AddV2", lambda a, b: tf.raw_ops.AddV2(x=a, y=b), same(2)),
    ("Sub", lambda a, b: tf.raw_ops.Sub(x=a, y=b), same(2)),
    ("Mul", lambda a, b: tf.raw_ops.Mul(x=a, y=b), same(2)),
    ("RealDiv", lambda a, b: tf.raw_ops.RealDiv(x=a, y=b), same(2)),
    ("Maximum", lambda a, b: tf.raw_ops.Maximum(x=a, y=b), same(2)),
    ("Minimum", lambda a, b: tf.raw_ops.Minimum(x=a, y=b), same(2)),
    ("SquaredDifference", lambda a, b: tf.raw_ops.SquaredDifference(x=a, y=b), same(2)),
    ("Pow", lambda a, b: tf.raw_ops.Pow(x=a, y=b), same(2)),
    ("FloorDiv", lambda a, b: tf.raw_ops.FloorDiv(x=a, y=b), same(2)),
    ("FloorMod", lambda a, b: tf.raw_ops.FloorMod(x=a, y=b), same(2)),
    ("Greater", lambda a, b: tf.raw_ops.Greater(x=a, y=b), same(2)),
    ("GreaterEqual", lambda a, b: tf.raw_ops.GreaterEqual(x=a, y=b), same(2)),
    ("Less", lambda a, b: tf.raw_ops.Less(x=a, y=b), same(2)),
    ("LessEqual", lambda a, b: tf.raw_ops.LessEqual(x=a, y=b), same(2)),
    ("Equal", lambda a, b: tf.raw_ops.Equal(x=a, y=b), same(2)),
    ("AddN", lambda a, b, c: tf.raw_ops.AddN(inputs=[a, b, c]), same(3)),
    ("Select", lambda c, a, b: tf.raw_ops.Select(condition=c, x=a, y=b), lambda dt: [S([2, 3], tf.bool), S([2, 3], dt), S([2, 3], dt)]),
    # Without broadcasting the converter writes SELECT.
    ("SelectV2", lambda c, a, b: tf.raw_ops.SelectV2(condition=c, t=a, e=b), lambda dt: [S([2, 3], tf.bool), S([2, 3], dt), S([2, 3], dt)]),
    ("SelectV2 (broadcast)", lambda c, a, b: tf.raw_ops.SelectV2(condition=c, t=a, e=b), lambda dt: [S([2, 1], tf.bool), S([2, 3], dt), S([3], dt)]),
    ("Neg", lambda a: tf.raw_ops.Neg(x=a), same(1)),
    ("Square", lambda a: tf.raw_ops.Square(x=a), same(1)),
    ("Exp", lambda a: tf.raw_ops.Exp(x=a), same(1)),
    ("Sqrt", lambda a: tf.raw_ops.Sqrt(x=a), same(1)),
    ("Rsqrt", lambda a: tf.raw_ops.Rsqrt(x=a), same(1)),
    ("Log", lambda a: tf.raw_ops.Log(x=a), same(1)),
    ("Sin", lambda a: tf.raw_ops.Sin(x=a), same(1)),
    ("Cos", lambda a: tf.raw_ops.Cos(x=a), same(1)),
    ("Tanh", lambda a: tf.raw_ops.Tanh(x=a), same(1)),
    ("Sigmoid", lambda a: tf.raw_ops.Sigmoid(x=a), same(1)),
    ("Relu", lambda a: tf.raw_ops.Relu(features=a), same(1)),
    # To float32, or from float32 to int32 (a cast to the same type is none).
    ("Cast", lambda a: tf.raw_ops.Cast(x=a, DstT=tf.int32 if a.dtype == tf.float32 else tf.float32), same(1)),
    ("MatMul (constant b)", lambda a: tf.raw_ops.MatMul(a=a, b=ones(a.dtype, [3, 4])), same(1)),
    ("MatMul (transpose_b)", lambda a, b: tf.raw_ops.MatMul(a=a, b=b, transpose_b=True), same(2)),
    ("MatMul (transpose_a)", lambda a, b: tf.raw_ops.MatMul(a=a, b=b, transpose_a=True), same(2)),
    ("Mean", lambda a: tf.raw_ops.Mean(input=a, axis=[1], keep_dims=True), same(1)),
    ("Sum", lambda a: tf.raw_ops.Sum(input=a, axis=[0]), same(1)),
    ("Max", lambda a: tf.raw_ops.Max(input=a, axis=[0]), same(1)),
    ("Prod", lambda a: tf.raw_ops.Prod(input=a, axis=[0]), same(1)),
    ("Cumsum", lambda a: tf.raw_ops.Cumsum(x=a, axis=1), same(1)),
    ("Reshape", lambda a: tf.raw_ops.Reshape(tensor=a, shape=[3, 2]), same(1)),
    ("Transpose", lambda a: tf.raw_ops.Transpose(x=a, perm=[1, 0]), same(1)),
    # Without an unknown dimension the converter folds these into RESHAPE.
    ("ExpandDims", lambda a: tf.raw_ops.ExpandDims(input=a, axis=0), lambda dt: [S(None, dt)]),
    ("Squeeze", lambda a: tf.raw_ops.Squeeze(input=a, axis=[1]), lambda dt: [S([None, 1, None], dt)]),
    ("Slice", lambda a: tf.raw_ops.Slice(input=a, begin=[0, 1], size=[2, 2]), same(1)),
    ("Pad", lambda a: tf.raw_ops.Pad(input=a, paddings=[[1, 0], [0, 1]]), same(1)),
    ("Tile", lambda a: tf.raw_ops.Tile(input=a, multiples=[2, 1]), same(1)),
    ("BroadcastTo", lambda a: tf.raw_ops.BroadcastTo(input=a, shape=[4, 2, 3]), same(1)),
    ("Pack", lambda a, b: tf.raw_ops.Pack(values=[a, b], axis=1), same(2)),
    ("ConcatV2", lambda a, b: tf.raw_ops.ConcatV2(values=[a, b], axis=1), same(2)),
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
    cases = {}
    for case, function, specs in CASES:
        cases[case] = {}
        for dtype in DTYPES:
            try:
                found = [list(op) for op in operators(function, specs(dtype))]
            except Exception:  # the converter has no builtin for the op on dtype
                found = None
            cases[case][dtype.name] = found
    path = os.path.join(HERE, "converter_ops.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    converted = sum(found is not None for by_dtype in cases.values() for found in by_dtype.values())
    print(f"wrote {path}: {len(cases)} ops x {len(DTYPES)} dtypes, {converted} converted")


if __name__ == "__main__":
    main()
