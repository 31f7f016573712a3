"""What the LiteRT tests share: the delegate library, the models, and a
one-input, one-output run."""

import os

import numpy as np
from ai_edge_litert.interpreter import Interpreter, load_delegate

LIB = os.environ["OP_LITERT_TEST_DELEGATE"]
DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "op-lite", "tests", "data")


def model(name):
    """The path of op-lite's test model `name`.tflite."""
    return os.path.join(DATA, name + ".tflite")


def npy(name):
    return np.load(os.path.join(DATA, name))


def interpreter(path=None, options=None, content=None):
    """LiteRT's interpreter on a model, with our delegate."""
    delegate = load_delegate(LIB, options or {})
    if content is not None:
        return Interpreter(model_content=content, experimental_delegates=[delegate])
    return Interpreter(model_path=path, experimental_delegates=[delegate])


def run(interp, x):
    """Runs a one-input model on `x` (resizing the input if need be)."""
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    if list(inp["shape"]) != list(x.shape):
        interp.resize_tensor_input(inp["index"], x.shape)
    interp.allocate_tensors()
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    return interp.get_tensor(out["index"])


def renamed(old, new):
    """sin_custom.tflite with its custom op renamed (same length)."""
    with open(model("sin_custom"), "rb") as f:
        data = f.read()
    key = len(old).to_bytes(4, "little") + old.encode() + b"\0"
    assert data.count(key) == 1
    return data.replace(key, len(new).to_bytes(4, "little") + new.encode() + b"\0")
