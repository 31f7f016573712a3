"""Times LiteRT (the real TensorFlow Lite interpreter) on what
op-lite/benches/builtin_models.rs times: invoke of cnn.tflite (1x12x12x3),
mlp.tflite (batch 3) and a chain of 1,000 ADD nodes of 4 floats (built here
as the Rust bench builds it: t[k+1] = t[k] + c, c a constant of ones).

Run with a Python that has ai-edge-litert (made with 2.3.0):

    /work/tf-venv/bin/python op-lite/benches/litert_models.py

Prints, per model, the median time of one invoke (medians of 51 samples of
N invokes each) with LiteRT's builtin kernels alone
(BUILTIN_WITHOUT_DEFAULT_DELEGATES, what op-lite's tests compare against)
and with its default XNNPACK delegate, single-threaded (num_threads=1);
the last line, a 1-node model, is Python's per-invoke overhead.
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from importlib.metadata import version
from tensorflow.lite.python import schema_py_generated as schema
from tensorflow.lite.python import util as tflite_util

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def add_chain(nodes=1000, length=4):
    """The ADD chain as a .tflite, written through the schema's object API."""
    model = schema.ModelT()
    model.version = 3
    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.ADD
    code.deprecatedBuiltinCode = schema.BuiltinOperator.ADD
    code.version = 1
    model.operatorCodes = [code]
    empty, ones = schema.BufferT(), schema.BufferT()
    ones.data = np.ones(length, np.float32).tobytes()
    model.buffers = [empty, ones]

    def tensor(name, buffer=0):
        t = schema.TensorT()
        t.name, t.shape, t.type, t.buffer = name, [length], schema.TensorType.FLOAT32, buffer
        return t

    subgraph = schema.SubGraphT()
    subgraph.tensors = [tensor("x"), tensor("c", 1)]
    subgraph.operators = []
    previous = 0
    for k in range(nodes):
        subgraph.tensors.append(tensor("y" if k + 1 == nodes else f"t{k}"))
        op = schema.OperatorT()
        op.opcodeIndex = 0
        op.inputs = [previous, 1]
        op.outputs = [len(subgraph.tensors) - 1]
        op.builtinOptionsType = schema.BuiltinOptions.AddOptions
        op.builtinOptions = schema.AddOptionsT()
        subgraph.operators.append(op)
        previous = len(subgraph.tensors) - 1
    subgraph.inputs, subgraph.outputs = [0], [previous]
    model.subgraphs = [subgraph]
    return bytes(tflite_util._convert_model_from_object_to_bytearray(model))


def median_seconds(interpreter, iters, samples=51):
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(iters):
            interpreter.invoke()
        times.append((time.perf_counter() - start) / iters)
    return sorted(times)[samples // 2]


def ready(content, shape, resolver):
    interpreter = Interpreter(
        model_content=content, experimental_op_resolver_type=resolver, num_threads=1
    )
    detail = interpreter.get_input_details()[0]
    if list(detail["shape"]) != list(shape):
        interpreter.resize_tensor_input(detail["index"], shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(detail["index"], np.full(shape, 0.5, np.float32))
    interpreter.invoke()
    return interpreter


def main():
    print(f"LiteRT (ai-edge-litert) {version('ai-edge-litert')}")
    models = [
        ("cnn", open(os.path.join(DATA, "cnn.tflite"), "rb").read(), [1, 12, 12, 3], 2000),
        ("mlp", open(os.path.join(DATA, "mlp.tflite"), "rb").read(), [3, 6], 5000),
        ("add_chain_1000", add_chain(), [4], 20),
        # One ADD of 4 floats: what a call costs from Python (LiteRT's own
        # invoke included), to subtract from the timings above.
        ("add_1 (Python's per-invoke overhead)", add_chain(1), [4], 5000),
    ]
    resolvers = [
        ("builtin kernels", OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
        ("default (XNNPACK)", OpResolverType.AUTO),
    ]
    for name, content, shape, iters in models:
        for label, resolver in resolvers:
            seconds = median_seconds(ready(content, shape, resolver), iters)
            per_node = f", {seconds / 1000 * 1e9:.1f} ns/node" if name.startswith("add_chain") else ""
            print(f"{name}, {label}: {seconds * 1e6:.2f} us per invoke{per_node}")


if __name__ == "__main__":
    main()
