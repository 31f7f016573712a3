"""Makes the .tflite files that op-lite's tests read, with TensorFlow's own
converter, and what LiteRT computes on a fixed input for each.

Run from anywhere, with a Python that has TensorFlow and LiteRT
(`pip install tensorflow-cpu ai-edge-litert`):

    python op-lite/tests/data/make_models.py

It writes, beside itself:

- sin_custom.tflite: the seed's model y = sin(x + offset), trained as the
  seed trains it, with its SIN operator renamed to a custom op `Sin` (the
  converter emits the builtin SIN; the seed treats Sin as custom);
- sin_builtin.tflite: the same model, left with the builtin SIN;
- cnn.tflite: a RELU6 of its own, CONV_2D (fused RELU6),
  DEPTHWISE_CONV_2D (fused RELU, dilation 2), MAX_POOL_2D,
  AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED and SOFTMAX, float32, batch 1;
- mlp.tflite: FULLY_CONNECTED (fused RELU, plain, and without bias), TANH,
  ADD, LOGISTIC, GELU (an extended op code, above 127), a dynamic batch;
- for each model NAME, NAME.input.npy (the fixed input) and
  NAME.output.npy (LiteRT's output on it). The custom Sin model does not
  run in LiteRT (it has no kernel for `Sin`); its output is the builtin
  model's, computed by LiteRT, which is the same function.

Every number is drawn from fixed seeds, so running it again writes the
same models, up to the converter's version.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from importlib.metadata import version
from litert_invoke import invoke
from tensorflow.lite.python import schema_py_generated as schema
from tensorflow.lite.python import util as tflite_util

HERE = os.path.dirname(os.path.abspath(__file__))


def convert(module, function):
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [function.get_concrete_function()], module
    )
    return converter.convert()


def save(name, model_bytes, inputs):
    path = os.path.join(HERE, name + ".tflite")
    with open(path, "wb") as f:
        f.write(model_bytes)
    print(f"wrote {name}.tflite ({len(model_bytes)} bytes)")
    return run_litert(name, model_bytes, inputs)


def litert(model_bytes):
    """LiteRT's interpreter with its builtin kernels only: no XNNPACK
    delegate, so that outputs are those of TensorFlow Lite's own kernels."""
    return Interpreter(
        model_content=model_bytes,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )


def run_litert(name, model_bytes, inputs):
    """Runs the model in LiteRT on `inputs` and saves both as .npy."""
    interpreter = litert(model_bytes)
    output = invoke(interpreter, inputs)
    np.save(os.path.join(HERE, name + ".input.npy"), inputs)
    np.save(os.path.join(HERE, name + ".output.npy"), output)
    ops = sorted({op["op_name"] for op in interpreter._get_ops_details()})
    print(f"  LiteRT ran {name}: {ops}, output shape {list(output.shape)}")
    return output


# (a) The seed's Sin model, y = sin(x + offset), trained as the seed does.
class SinModel(tf.Module):
    def __init__(self):
        super().__init__()
        self.offset = tf.Variable(0.0)

    # A TensorSpec input, not the seed's Python list: with a list, the
    # converter folds the whole model into a constant.
    @tf.function(input_signature=[tf.TensorSpec([5], tf.float32, name="x")])
    def sin(self, x):
        return tf.sin(x + self.offset, name="Sin")


def make_sin_models():
    x = tf.constant([-8, 0.5, 2, 2.2, 201], tf.float32)
    y = tf.constant(
        [-0.6569866, 0.99749499, 0.14112001, -0.05837414, 0.80641841], tf.float32
    )
    model = SinModel()
    optimizer = tf.optimizers.Adam(0.01)
    for _ in range(1000):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(model.sin(x) - y))
        grads = tape.gradient(loss, [model.offset])
        optimizer.apply_gradients(zip(grads, [model.offset]))
    print(f"sin: the trained offset is {model.offset.numpy():.6f} (the seed's: 1.0)")

    builtin = convert(model, model.sin)
    inputs = x.numpy()
    output = save("sin_builtin", builtin, inputs)

    custom = rename_sin_to_custom(builtin)
    path = os.path.join(HERE, "sin_custom.tflite")
    with open(path, "wb") as f:
        f.write(custom)
    print(f"wrote sin_custom.tflite ({len(custom)} bytes)")
    np.save(os.path.join(HERE, "sin_custom.input.npy"), inputs)
    np.save(os.path.join(HERE, "sin_custom.output.npy"), output)
    try:
        interpreter = litert(custom)
        interpreter.allocate_tensors()
        print("  LiteRT ran sin_custom (unexpected)")
    except RuntimeError as error:
        print(f"  LiteRT on sin_custom: {str(error).strip().splitlines()[0]}")


def rename_sin_to_custom(model_bytes):
    """The model with its SIN operator code made the custom op `Sin`."""
    model = tflite_util._convert_model_from_bytearray_to_object(model_bytes)
    renamed = 0
    for code in model.operatorCodes:
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        if builtin == schema.BuiltinOperator.SIN:
            code.builtinCode = schema.BuiltinOperator.CUSTOM
            code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
            code.customCode = "Sin"
            code.version = 1
            renamed += 1
    assert renamed == 1, f"expected one SIN operator code, found {renamed}"
    return bytes(tflite_util._convert_model_from_object_to_bytearray(model))


# (b) A small CNN and a small MLP, float32, with small weights.
def weights(rng, *shape):
    return tf.Variable(rng.normal(0.0, 0.3, shape).astype(np.float32))


class Cnn(tf.Module):
    def __init__(self, rng):
        super().__init__()
        self.conv_w = weights(rng, 3, 3, 3, 4)  # HWIO
        self.conv_b = weights(rng, 4)
        self.dw_w = weights(rng, 3, 3, 4, 2)  # H, W, in, multiplier
        self.dw_b = weights(rng, 8)
        self.fc_w = weights(rng, 32, 5)
        self.fc_b = weights(rng, 5)

    @tf.function(input_signature=[tf.TensorSpec([1, 12, 12, 3], tf.float32, name="image")])
    def __call__(self, image):
        # A RELU6 of its own: on the input, nothing before it to fuse into.
        x = tf.nn.relu6(image)
        x = tf.nn.conv2d(x, self.conv_w, strides=1, padding="SAME")
        x = tf.nn.relu6(tf.nn.bias_add(x, self.conv_b))
        x = tf.nn.depthwise_conv2d(
            x, self.dw_w, strides=[1, 1, 1, 1], padding="VALID", dilations=[2, 2]
        )
        x = tf.nn.relu(tf.nn.bias_add(x, self.dw_b))
        x = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")
        x = tf.nn.avg_pool2d(x, ksize=[2, 2], strides=[2, 2], padding="SAME")
        x = tf.reshape(x, [1, 32])
        logits = tf.matmul(x, self.fc_w) + self.fc_b
        return tf.nn.softmax(logits)


class Mlp(tf.Module):
    def __init__(self, rng):
        super().__init__()
        self.w1 = weights(rng, 6, 16)
        self.b1 = weights(rng, 16)
        self.w2 = weights(rng, 16, 16)
        self.b2 = weights(rng, 16)
        self.w3 = weights(rng, 16, 16)
        self.w4 = weights(rng, 16, 3)
        self.b4 = weights(rng, 3)

    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="features")])
    def __call__(self, features):
        h1 = tf.nn.relu(tf.matmul(features, self.w1) + self.b1)
        h2 = tf.tanh(tf.matmul(h1, self.w2) + self.b2)
        h3 = tf.sigmoid(tf.matmul(h2, self.w3))  # no bias
        h = tf.nn.gelu(h2 + h3, approximate=False)
        return tf.matmul(h, self.w4) + self.b4


def main():
    print(f"TensorFlow {tf.__version__}, LiteRT (ai-edge-litert) {version('ai-edge-litert')}")
    make_sin_models()

    rng = np.random.default_rng(16)
    cnn = Cnn(rng)
    save("cnn", convert(cnn, cnn.__call__), rng.uniform(-2, 8, (1, 12, 12, 3)).astype(np.float32))
    mlp = Mlp(rng)
    save("mlp", convert(mlp, mlp.__call__), rng.uniform(-2, 2, (3, 6)).astype(np.float32))


if __name__ == "__main__":
    main()
