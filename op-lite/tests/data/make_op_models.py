"""Makes small .tflite models that together use every builtin op-lite
implements, with TensorFlow's own converter, and what LiteRT computes on a
fixed input for each: op-lite/tests/builtin_models.rs runs them with
op-lite's BuiltinOpResolver and compares.

Run from anywhere, with a Python that has TensorFlow and LiteRT (made with
TensorFlow 2.21 and ai-edge-litert 2.3.0):

    /work/tf-venv/bin/python op-lite/tests/data/make_op_models.py

It writes, beside itself, for each model NAME below, ops/NAME.tflite,
ops/NAME.input.npy (the fixed input) and ops/NAME.output.npy (LiteRT's
output on it, with its builtin kernels and no XNNPACK delegate), and
prints the ops each model holds. Each model has one input and one output:
the results of its ops, flattened and concatenated.

- unary: the sixteen unary ops, standalone (RELU and RELU6 on the input,
  where nothing can fuse them), LEAKY_RELU's alpha, GELU both ways,
  HARD_SWISH as the converter matches it;
- binary: the seven binary ops, broadcasting, with fused activations
  (RELU, RELU6, RELU_N1_TO_1);
- shapes: RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, CONCATENATION, PACK,
  STRIDED_SLICE (begin and end masks, shrink axis, negative stride; the
  converter resolves ellipses and new axes into those), SLICE, PAD, GATHER,
  CAST (to int32 and back), CUMSUM (exclusive, reverse), MEAN, SUM
  (keep_dims both ways), BATCH_MATMUL (adj_y);
- nn: CONV_2D (VALID, stride 2, no activation), DEPTHWISE_CONV_2D (SAME,
  stride 2, multiplier 2, RELU6), AVERAGE_POOL_2D (SAME), MAX_POOL_2D
  (VALID, 3x3, stride 1), FULLY_CONNECTED (keep_num_dims), SOFTMAX (beta);
- dims: SQUEEZE and EXPAND_DIMS, on an input of dynamic batch (run at
  batch 3);
- quantized: FULLY_CONNECTED with full-integer quantization, between
  QUANTIZE and DEQUANTIZE (no outputs: op-lite rejects it);
- int32: int32 ADD, SUB, MUL, DIV (truncating), MAXIMUM, MINIMUM,
  SQUARED_DIFFERENCE, ABS, NEG, SUM, MEAN, CUMSUM, GATHER, TRANSPOSE, PACK,
  CONCATENATION.

Every number is drawn from fixed seeds, so running it again writes the
same models, up to the converter's version.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from importlib.metadata import version

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
rng = np.random.default_rng(1616)


def const(*shape, low=-1.0, high=1.0):
    return tf.constant(rng.uniform(low, high, shape).astype(np.float32))


def flat(*tensors):
    """The tensors flattened and concatenated (one CONCATENATION)."""
    return tf.concat([tf.reshape(tf.cast(t, tf.float32), [-1]) for t in tensors], axis=0)


def unary(x):
    # x: [2, 3, 4], in [-3, 3].
    pos = tf.abs(x) + 0.5  # ABS; ADD
    return flat(
        tf.nn.relu(x),
        tf.nn.relu6(x),
        tf.nn.relu6(x * 3.0),
        tf.square(x),
        tf.sqrt(pos),
        tf.math.rsqrt(pos),
        tf.exp(x),
        tf.math.log(pos),
        tf.sin(x),
        tf.cos(x),
        -x,
        tf.tanh(x),
        tf.sigmoid(x),
        tf.nn.leaky_relu(x, alpha=0.1),
        tf.nn.gelu(x - 0.25, approximate=False),
        tf.nn.gelu(x, approximate=True),
        x * tf.nn.relu6(x + 3.0) / 6.0,
    )


def binary(x):
    # x: [2, 3, 4]; constants broadcast from [4], [3, 1] and [1].
    a, b, c = const(4), const(3, 1, low=0.5, high=2.0), const(1)
    return flat(
        tf.nn.relu(x + a),
        x - b,
        tf.nn.relu6(x * b),
        tf.clip_by_value(x / b, -1.0, 1.0),
        tf.maximum(x, a),
        tf.minimum(x, c),
        tf.math.squared_difference(x, a),
        x * x,
        x / (tf.abs(a) + x * x),
    )


def shapes(x):
    # x: [2, 3, 4].
    y = tf.reshape(x, [1, 6, 4])
    return flat(
        tf.squeeze(y, axis=0),
        tf.expand_dims(x, 1) * 2.0,
        tf.transpose(x, [2, 0, 1]),
        tf.stack([x, x * 2.0], axis=1),
        x[:, 1:, ::-2],
        x[1, :, 1:3],
        x[..., 1:3] * 2.0,
        x[:, tf.newaxis, 1, ::3] * 3.0,
        tf.slice(x, [0, 1, 1], [2, 2, 3]),
        tf.pad(x, [[0, 1], [2, 0], [1, 1]]),
        tf.gather(x, [2, 0, 2], axis=1),
        tf.cast(tf.cast(x * 3.0, tf.int32), tf.float32),
        tf.math.cumsum(x, axis=2, exclusive=True, reverse=True),
        tf.reduce_mean(x, axis=[0, 2]),
        tf.reduce_mean(x, axis=1, keepdims=True),
        tf.reduce_sum(x, axis=-1),
        tf.matmul(x, x * 0.5, transpose_b=True),
    )


class Nn(tf.Module):
    def __init__(self):
        super().__init__()
        self.conv_w = const(3, 3, 3, 4)  # HWIO
        self.conv_b = const(4)
        self.dw_w = const(3, 3, 3, 2)  # H, W, in, multiplier
        self.dw_b = const(6)
        self.fc_w = const(4, 5)
        self.fc_b = const(5)

    def __call__(self, image):
        # image: [1, 9, 9, 3].
        conv = tf.nn.conv2d(image, self.conv_w, strides=2, padding="VALID") + self.conv_b
        dw = tf.nn.depthwise_conv2d(image, self.dw_w, strides=[1, 2, 2, 1], padding="SAME")
        dw = tf.nn.relu6(dw + self.dw_b)
        avg = tf.nn.avg_pool2d(dw, ksize=2, strides=2, padding="SAME")
        mx = tf.nn.max_pool2d(conv, ksize=3, strides=1, padding="VALID")
        dense = tf.tensordot(conv, self.fc_w, axes=1) + self.fc_b  # [1, 4, 4, 5]
        return flat(conv, dw, avg, mx, tf.nn.softmax(dense * 0.5), tf.nn.softmax(dense))


def dims(x):
    # x: [batch, 1, 4], the batch dynamic: with static shapes the converter
    # turns SQUEEZE and EXPAND_DIMS into RESHAPE.
    return flat(tf.expand_dims(tf.squeeze(x, axis=1), -1), tf.squeeze(tf.expand_dims(x, 0)))


def int32(x):
    # x: [3, 4], int32.
    c = tf.constant([[1, -2, 3, -4]], tf.int32)
    return flat(
        x + c,
        x - 3,
        x * c,
        tf.maximum(x, c),
        tf.minimum(x, 0),
        tf.abs(x),
        -x,
        tf.reduce_sum(x, axis=1),
        tf.math.cumsum(x, axis=0),
        tf.gather(x, [1, 1, 0]),
        tf.transpose(x),
        tf.stack([x, c + x]),
        tf.reduce_mean(x, axis=0),
        tf.math.squared_difference(x, c),
        tf.truncatediv(x, tf.constant([[2, -3, 4, 5]], tf.int32)),
    )


def convert(function, spec):
    concrete = tf.function(function).get_concrete_function(spec)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    return converter.convert()


def save(name, function, inputs, shape=None):
    """Converts `function` for inputs of `shape` (default: `inputs`'), runs
    it in LiteRT on `inputs`, and saves the model, the input and the output."""
    shape = inputs.shape if shape is None else shape
    spec = tf.TensorSpec(shape, tf.as_dtype(inputs.dtype), name="x")
    model = convert(function, spec)
    with open(os.path.join(OUT, name + ".tflite"), "wb") as f:
        f.write(model)
    interpreter = Interpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    (input_detail,) = interpreter.get_input_details()
    (output_detail,) = interpreter.get_output_details()
    interpreter.resize_tensor_input(input_detail["index"], inputs.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(input_detail["index"], inputs)
    interpreter.invoke()
    output = interpreter.get_tensor(output_detail["index"])
    np.save(os.path.join(OUT, name + ".input.npy"), inputs)
    np.save(os.path.join(OUT, name + ".output.npy"), output)
    ops = sorted({op["op_name"] for op in interpreter._get_ops_details()})
    print(f"{name}.tflite ({len(model)} bytes): {', '.join(ops)}; output {list(output.shape)}")
    return set(ops)


def quantized():
    """A tiny model with full-integer quantization (int8 inside, float
    input and output through QUANTIZE and DEQUANTIZE), which op-lite must
    reject with a clear error: saved as ops/quantized.tflite, no outputs."""
    w, b = const(4, 3), const(3)

    def dense(x):
        return tf.nn.relu(tf.matmul(x, w) + b)

    concrete = tf.function(dense).get_concrete_function(tf.TensorSpec([1, 4], tf.float32, name="x"))
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    samples = rng.uniform(-1, 1, (16, 1, 4)).astype(np.float32)
    converter.representative_dataset = lambda: ([s] for s in samples)
    model = converter.convert()
    with open(os.path.join(OUT, "quantized.tflite"), "wb") as f:
        f.write(model)
    interpreter = Interpreter(model_content=model)
    interpreter.allocate_tensors()
    ops = [op["op_name"] for op in interpreter._get_ops_details()]
    print(f"quantized.tflite ({len(model)} bytes): {', '.join(ops)}")


def main():
    print(f"TensorFlow {tf.__version__}, LiteRT (ai-edge-litert) {version('ai-edge-litert')}")
    os.makedirs(OUT, exist_ok=True)
    ops = set()
    ops |= save("unary", unary, rng.uniform(-3, 3, (2, 3, 4)).astype(np.float32))
    ops |= save("binary", binary, rng.uniform(-3, 3, (2, 3, 4)).astype(np.float32))
    ops |= save("shapes", shapes, rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32))
    ops |= save("nn", Nn(), rng.uniform(-1, 1, (1, 9, 9, 3)).astype(np.float32))
    ops |= save("dims", dims, rng.uniform(-2, 2, (3, 1, 4)).astype(np.float32), [None, 1, 4])
    ops |= save("int32", int32, rng.integers(-9, 10, (3, 4)).astype(np.int32))
    print(f"all ops: {', '.join(sorted(ops))} ({len(ops)})")
    quantized()


if __name__ == "__main__":
    main()
