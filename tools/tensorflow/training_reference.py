"""Prints what TensorFlow computes for the training ops and the Keras
optimizers, as Rust constants for the tests that compare opkit with it.

Usage: python tools/tensorflow/training_reference.py   (the venv of requirements.txt)

Two sections, each pasted into its test file:

- `op-kernels/tests/training_ops.rs`: three steps of the raw ops
  `ResourceApplyGradientDescent`, `ResourceApplyMomentum` (plain and
  Nesterov) and `ResourceApplyAdam` (plain and Nesterov) on one variable with
  fixed gradients and fixed scalar inputs, in float32, float64 and half: the
  variable (and the slots) after each step.
- `op-autodiff/tests/optimizers.rs`: three steps of Keras' `SGD()`,
  `SGD(momentum=0.9)`, `SGD(momentum=0.9, nesterov=True)`, `Adam()` and
  `Adam(learning_rate=0.01)` (Keras 3, the defaults otherwise) applying the
  same fixed gradients to a float32 variable (and Adam to a float64 one):
  the variable after each step; and Adam's formula on float64 with float64
  hyperparameters, through `ResourceApplyAdam` (see `adam_f64`).

Values are printed with the fewest digits that read back as the same number
of their type (NumPy's shortest repr), so a Rust literal of that type is
exactly TensorFlow's value.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.dont_write_bytecode = True

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# The variable's initial value and the gradient of each step (shared with
# the Rust tests, which print them back in their constants).
INITIAL = [1.0, 2.0, -3.0]
GRADS = [[0.1, -0.2, 0.3], [0.5, 0.5, -1.0], [-0.25, 0.75, 2.0]]

RUST_TYPE = {np.float32: "f32", np.float64: "f64", np.float16: "f32"}


def literal(x, dtype):
    """`x` as the shortest literal that reads back as the same `dtype` value
    (half values are printed as the float32 they widen to)."""
    if dtype == np.float16:
        return str(np.float32(np.float16(x)))
    return str(dtype(x)) if dtype == np.float32 else repr(float(x))


def rows(name, steps, dtype):
    """A Rust const of the values after each step: `[[T; 3]; STEPS]`."""
    t = RUST_TYPE[dtype]
    body = ",\n".join(
        "    [" + ", ".join(literal(x, dtype) for x in step) + "]" for step in steps
    )
    return f"const {name}: [[{t}; 3]; {len(steps)}] = [\n{body},\n];"


def variable(value, dtype):
    return tf.Variable(np.array(value, dtype=dtype))


def raw_ops(dtype):
    """Three steps of each raw training op in `dtype`; the consts printed."""
    tfd = tf.as_dtype(dtype)
    c = lambda x: tf.constant(x, tfd)  # noqa: E731
    out = []
    suffix = {np.float32: "F32", np.float64: "F64", np.float16: "F16"}[dtype]

    var = variable(INITIAL, dtype)
    steps = []
    for g in GRADS:
        tf.raw_ops.ResourceApplyGradientDescent(var=var.handle, alpha=c(0.1), delta=c(g))
        steps.append(var.numpy())
    out.append(rows(f"GRADIENT_DESCENT_{suffix}", steps, dtype))

    for nesterov in (False, True):
        var = variable(INITIAL, dtype)
        accum = variable([0.0, 0.0, 0.0], dtype)
        steps, accums = [], []
        for g in GRADS:
            tf.raw_ops.ResourceApplyMomentum(
                var=var.handle, accum=accum.handle, lr=c(0.1), grad=c(g), momentum=c(0.9),
                use_nesterov=nesterov,
            )
            steps.append(var.numpy())
            accums.append(accum.numpy())
        tag = "NESTEROV_" if nesterov else ""
        out.append(rows(f"MOMENTUM_{tag}{suffix}", steps, dtype))
        out.append(rows(f"MOMENTUM_{tag}ACCUM_{suffix}", accums, dtype))

    for nesterov in (False, True):
        var = variable(INITIAL, dtype)
        m = variable([0.0, 0.0, 0.0], dtype)
        v = variable([0.0, 0.0, 0.0], dtype)
        steps, ms, vs = [], [], []
        for t, g in enumerate(GRADS, start=1):
            tf.raw_ops.ResourceApplyAdam(
                var=var.handle, m=m.handle, v=v.handle,
                beta1_power=c(0.9**t), beta2_power=c(0.999**t), lr=c(0.01),
                beta1=c(0.9), beta2=c(0.999), epsilon=c(1e-7), grad=c(g),
                use_nesterov=nesterov,
            )
            steps.append(var.numpy())
            ms.append(m.numpy())
            vs.append(v.numpy())
        tag = "NESTEROV_" if nesterov else ""
        out.append(rows(f"ADAM_{tag}{suffix}", steps, dtype))
        out.append(rows(f"ADAM_{tag}M_{suffix}", ms, dtype))
        out.append(rows(f"ADAM_{tag}V_{suffix}", vs, dtype))
    return out


def keras(name, make, dtype=np.float32):
    """Three steps of the Keras optimizer `make()` on a `dtype` variable."""
    var = variable(INITIAL, dtype)
    opt = make()
    steps = []
    for g in GRADS:
        opt.apply_gradients([(tf.constant(g, tf.as_dtype(dtype)), var)])
        steps.append(var.numpy())
    return rows(name, steps, dtype)


def adam_f64():
    """Three steps of Keras' Adam formula on a float64 variable with every
    hyperparameter in float64: `ResourceApplyAdam` with `beta^t` from
    TensorFlow's `Pow`, as opkit's `Adam` computes it. (Keras' own `Adam()`
    on float64 first rounds the betas to float32, since `ops.cast` of a
    Python float makes a float32 tensor, which moves the result in the
    eighth digit: `KERAS_ADAM_F64`.)"""
    f64 = tf.float64
    var = variable(INITIAL, np.float64)
    m = variable([0.0, 0.0, 0.0], np.float64)
    v = variable([0.0, 0.0, 0.0], np.float64)
    steps = []
    for t, g in enumerate(GRADS, start=1):
        step = tf.cast(tf.constant(t, tf.int64), f64)
        tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=m.handle, v=v.handle,
            beta1_power=tf.pow(tf.constant(0.9, f64), step),
            beta2_power=tf.pow(tf.constant(0.999, f64), step),
            lr=tf.constant(0.001, f64), beta1=tf.constant(0.9, f64),
            beta2=tf.constant(0.999, f64), epsilon=tf.constant(1e-7, f64),
            grad=tf.constant(g, f64),
        )
        steps.append(var.numpy())
    return rows("ADAM_F64_DOUBLE_BETAS", steps, np.float64)


def main():
    print(f"// TensorFlow {tf.__version__}: tools/tensorflow/training_reference.py")
    print("// ---- op-kernels/tests/training_ops.rs ----")
    for dtype in (np.float32, np.float64, np.float16):
        for const in raw_ops(dtype):
            print(const)
    print(f"// ---- op-autodiff/tests/optimizers.rs (Keras {tf.keras.__version__}) ----")
    opt = tf.keras.optimizers
    print(keras("KERAS_SGD", lambda: opt.SGD()))
    print(keras("KERAS_SGD_MOMENTUM", lambda: opt.SGD(momentum=0.9)))
    print(keras("KERAS_SGD_NESTEROV", lambda: opt.SGD(momentum=0.9, nesterov=True)))
    print(keras("KERAS_ADAM", lambda: opt.Adam()))
    print(keras("KERAS_ADAM_LR_0_01", lambda: opt.Adam(learning_rate=0.01)))
    print(keras("KERAS_ADAM_F64", lambda: opt.Adam(), np.float64))
    print(adam_f64())


if __name__ == "__main__":
    main()
