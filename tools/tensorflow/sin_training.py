"""Trains seed 002's model with TensorFlow, as a reference for
`cargo run --example sin_training`.

y = sin(x + offset), offset a variable starting at 0.0, trained on the
seed's five points with Adam(0.01) for 1,000 steps on the loss
reduce_sum(square(pred - y)): the program of the seed, once eagerly with a
GradientTape and once inside a tf.function (a graph).

Usage: python sin_training.py
Prints the offset each way, with all the digits float32 has; the example's
test (examples/tests/sin_training.rs) holds the numbers this printed.
"""

import numpy as np
import tensorflow as tf

X = [-8, 0.5, 2, 2.2, 201]
Y = [-0.6569866, 0.99749499, 0.14112001, -0.05837414, 0.80641841]
STEPS = 1000


def train(step_fn_wrapper):
    offset = tf.Variable(0.0)
    optimizer = tf.optimizers.Adam(0.01)
    x = tf.constant(X, dtype=tf.float32)
    y = tf.constant(Y, dtype=tf.float32)

    def step():
        with tf.GradientTape() as t:
            predicted_y = tf.sin(x + offset, name="Sin")
            loss = tf.reduce_sum(tf.square(predicted_y - y))
        grads = t.gradient(loss, [offset])
        optimizer.apply_gradients(zip(grads, [offset]))
        return loss

    step = step_fn_wrapper(step)
    for _ in range(STEPS):
        loss = step()
    return offset.numpy(), float(loss)


def main():
    print(f"tensorflow {tf.__version__}")
    for name, wrapper in [("eager", lambda f: f), ("graph", tf.function)]:
        offset, loss = train(wrapper)
        print(f"{name}: offset {np.float32(offset)!r} ({float(offset):.9g}), final loss {loss:.9g}")


if __name__ == "__main__":
    main()
