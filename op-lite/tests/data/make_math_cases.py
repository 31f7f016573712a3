"""Runs small single-op models in LiteRT (TensorFlow Lite's reference
kernels) and saves their inputs and outputs as .npy files under math/, for
op-lite/tests/builtin_math_litert.rs.

Each case is a tf.function converted by TensorFlow's converter; the script
checks that the model holds the expected builtin, runs it with LiteRT's
BUILTIN_REF op resolver (the reference kernels, no XNNPACK), and saves the
operands in the layout the op-lite math functions take (filters OHWI, fully
connected weights [units, depth]).

Made with TensorFlow 2.21 and ai-edge-litert 2.3.0:

    /work/tf-venv/bin/pip install ai-edge-litert
    /work/tf-venv/bin/python op-lite/tests/data/make_math_cases.py
"""

import os
import shutil

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "math")
rng = np.random.default_rng(16)


def rand(*shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def run(name, fn, inputs, expect_op, saved):
    """Converts fn, checks it holds expect_op, runs it and saves `saved`
    (operands for op-lite) plus the model's output as out.npy."""
    specs = [tf.TensorSpec(a.shape, tf.as_dtype(a.dtype)) for a in inputs]
    concrete = tf.function(fn).get_concrete_function(*specs)
    model = tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf.function(fn)).convert()
    it = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    ops = [o["op_name"] for o in it._get_ops_details()]
    assert expect_op in ops, (name, ops)
    for detail, value in zip(it.get_input_details(), inputs):
        it.set_tensor(detail["index"], value)
    it.invoke()
    out = it.get_tensor(it.get_output_details()[0]["index"])
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    for key, value in saved.items():
        np.save(os.path.join(folder, key + ".npy"), value)
    np.save(os.path.join(folder, "out.npy"), out)
    print(f"{name}: {ops} -> {out.shape}")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    # CONV_2D: SAME, stride 2, bias, relu; VALID with dilation 2.
    x, w, b = rand(1, 7, 6, 3), rand(3, 3, 3, 4), rand(4)
    run("conv_same_stride2_relu", lambda x: tf.nn.relu(tf.nn.conv2d(x, w, 2, "SAME") + b), [x], "CONV_2D",
        {"input": x, "filter": w.transpose(3, 0, 1, 2).copy(), "bias": b})
    x, w = rand(2, 8, 7, 2), rand(2, 3, 2, 5)
    run("conv_valid_dilation2", lambda x: tf.nn.conv2d(x, w, 1, "VALID", dilations=2), [x], "CONV_2D",
        {"input": x, "filter": w.transpose(3, 0, 1, 2).copy()})
    # DEPTHWISE_CONV_2D: multiplier 2, SAME, stride 2, relu6.
    x, w, b = rand(1, 6, 5, 3), rand(3, 3, 3, 2), rand(6)
    run("depthwise_same_stride2_relu6",
        lambda x: tf.nn.relu6(tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME") + b), [x], "DEPTHWISE_CONV_2D",
        {"input": x, "filter": w.reshape(1, 3, 3, 6), "bias": b})
    # Pooling: SAME windows over the edge (average counts in-bounds only).
    x = rand(1, 5, 7, 2)
    run("average_pool_same_3x3_stride2", lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), [x], "AVERAGE_POOL_2D",
        {"input": x})
    run("max_pool_same_3x2_stride2", lambda x: tf.nn.max_pool2d(x, [3, 2], 2, "SAME"), [x], "MAX_POOL_2D",
        {"input": x})
    # FULLY_CONNECTED: [3, 10] x [10, 6] + bias.
    x, w, b = rand(3, 10), rand(10, 6), rand(6)
    run("fully_connected_bias", lambda x: tf.matmul(x, w) + b, [x], "FULLY_CONNECTED",
        {"input": x, "weights": w.T.copy(), "bias": b})
    # BATCH_MATMUL: broadcast batch, adj_y.
    a, c = rand(2, 1, 3, 4), rand(3, 5, 4)
    run("batch_matmul_adj_y", lambda a, c: tf.linalg.matmul(a, c, adjoint_b=True), [a, c], "BATCH_MATMUL",
        {"lhs": a, "rhs": c})
    # SOFTMAX, MEAN, SUM.
    x = rand(2, 3, 7)
    run("softmax", lambda x: tf.nn.softmax(x * 3.0), [x], "SOFTMAX", {"input": x * 3.0})
    run("mean_axes_0_2_keep", lambda x: tf.reduce_mean(x, axis=[0, 2], keepdims=True), [x], "MEAN",
        {"input": x})
    run("sum_axis_minus1", lambda x: tf.reduce_sum(x, axis=-1), [x], "SUM", {"input": x})
    # Unary ops with their own formulas.
    x = np.concatenate([rand(20) * 6, np.array([-100, -9.5, 17, 100], np.float32)])
    run("gelu_exact", lambda x: tf.nn.gelu(x, approximate=False), [x], "GELU", {"input": x})
    run("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), [x], "GELU", {"input": x})
    run("logistic", tf.sigmoid, [x], "LOGISTIC", {"input": x})
    run("hard_swish", lambda x: x * tf.nn.relu6(x + 3) / 6, [x], "HARD_SWISH", {"input": x})
    # ADD with broadcasting and a fused RELU; inf clamps to float max.
    a, c = rand(2, 1, 4), rand(3, 1)
    a[0, 0, 0] = np.inf
    run("add_broadcast_relu", lambda a, c: tf.nn.relu(a + c), [a, c], "ADD", {"a": a, "b": c})
    # STRIDED_SLICE with a negative stride and a shrunk axis.
    x = rand(3, 4, 5)
    run("strided_slice_reverse_shrink", lambda x: x[1, ::-2, 1:4], [x], "STRIDED_SLICE", {"input": x})
    # CAST float32 to int32: saturating, NaN to int32 max.
    x = np.array([np.nan, 3e9, -3e9, -1.7, 2.9, np.inf, -np.inf], np.float32)
    run("cast_float_to_int32", lambda x: tf.cast(x, tf.int32), [x], "CAST", {"input": x})


if __name__ == "__main__":
    main()
