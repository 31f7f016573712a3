"""Beyond one machine: two TensorFlow workers on 127.0.0.1 under
tf.distribute.MultiWorkerMirroredStrategy, both loading our package, take a
training step through our op and its gradient; the result is the same step
in one process."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import tensorflow as tf

from common import TestCase, ops

WORKER = """
import json, sys
import tensorflow as tf
import opkit_ops.tensorflow as ops

index = int(sys.argv[1])
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    w = tf.Variable([1.0, 2.0, 3.0])
x = tf.constant([[1.0, 0.5, -1.0], [2.0, -1.0, 0.25]])[index]

@tf.function
def step():
    def replica():
        with tf.GradientTape() as tape:
            # Each worker's share of the mean over the global batch of 2.
            loss = tf.reduce_sum(ops.example(ops.zero_out_polymorphic(w * x) + w)) / 2.0
        grad = tape.gradient(loss, w)
        w.assign_sub(0.1 * tf.distribute.get_replica_context().all_reduce("sum", grad))
    strategy.run(replica)

step()
print("RESULT " + json.dumps(w.numpy().tolist()))
"""


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def one_process_step():
    w = tf.Variable([1.0, 2.0, 3.0])
    xs = tf.constant([[1.0, 0.5, -1.0], [2.0, -1.0, 0.25]])
    with tf.GradientTape() as tape:
        loss = sum(
            tf.reduce_sum(ops.example(ops.zero_out_polymorphic(w * xs[i]) + w)) for i in range(2)
        ) / 2.0
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return w.numpy().tolist()


class DistributeTest(TestCase):
    def test_two_workers_take_the_step_one_process_takes(self):
        ports = free_ports(2)
        cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
        workers = []
        for index in range(2):
            env = dict(
                os.environ,
                TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
                TF_CPP_MIN_LOG_LEVEL="3",
            )
            workers.append(subprocess.Popen(
                [sys.executable, "-c", WORKER, str(index)],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            ))
        results = []
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            self.assertEqual(worker.returncode, 0, err[-3000:])
            line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1]
            results.append(json.loads(line[len("RESULT "):]))
        expected = one_process_step()
        # Our gradient moved w, and both workers agree with one process.
        self.assertNotEqual(expected, [1.0, 2.0, 3.0])
        for result in results:
            np.testing.assert_allclose(result, expected, rtol=1e-6)


if __name__ == "__main__":
    tf.test.main()
