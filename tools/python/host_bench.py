"""Our ops in JAX, ONNX Runtime and PyTorch against each host's own builtin
op of the same bytes, measured in the same process, in alternation:

    cargo xtask package --crate opkit-ops --out target/python-bench   # release (no --dev)
    pip install target/python-bench/opkit_ops    # into a venv with jax, jaxlib, onnxruntime, onnx
    python tools/python/host_bench.py            # and in one with torch: each host that imports

For each host: our `Example` (x * 2, the guide's example op) against the
host's own x * 2 (a jitted `x * 2` in JAX; ONNX's `Mul` by a constant 2 in
a session with the same options in ONNX Runtime; eager `x * 2` in PyTorch,
beside our op called eagerly through `torch.ops`), each a whole call, on one
element (the cost of a call) and on 1e7 float32 (ratio: the host's time
over ours, so that more than 1 is ours faster). Prints one line per
figure.
"""

import statistics
import time

import numpy as np

ROUNDS = 7


def per_call(f, calls):
    """Seconds per call of `f`, over `calls` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls


def compare(name, ours, theirs, calls):
    """Median seconds per call of `ours` and `theirs`, in alternation."""
    for f in (ours, theirs):
        f()  # compiled, warmed
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(per_call(ours, calls))
        b.append(per_call(theirs, calls))
    return statistics.median(a), statistics.median(b)


def report(host, what, ours, theirs):
    print(
        f"{host:13} {what:28} ours {ours * 1e6:10.2f} us   builtin {theirs * 1e6:10.2f} us   "
        f"ours - builtin {(ours - theirs) * 1e6:+8.2f} us   builtin/ours {theirs / ours:5.2f}x"
    )


def jax_figures():
    import jax
    import jax.numpy as jnp

    import opkit_ops.jax as ops

    ours = jax.jit(ops.example)
    theirs = jax.jit(lambda x: x * 2)
    for n, calls, what in [(1, 2000, "one element, per call"), (10_000_000, 5, "1e7 float32")]:
        x = jnp.arange(n, dtype=jnp.float32)
        np.testing.assert_array_equal(ours(x), theirs(x))
        a, b = compare(what, lambda: ours(x).block_until_ready(), lambda: theirs(x).block_until_ready(), calls)
        report("JAX", what, a, b)


def onnx_figures():
    import onnxruntime as ort
    from onnx import TensorProto, helper

    ort.set_default_logger_severity(3)
    import opkit_ops.onnx as ops

    def session(node, spinning="1"):
        two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
            [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n"])],
            initializer=[two],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), ops.opset()])
        options = ort.SessionOptions()
        options.register_custom_ops_library(ops.library_path())
        options.add_session_config_entry("session.intra_op.allow_spinning", spinning)
        return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    ours = session(ops.make_node("example", ["x"], ["z"]))
    theirs = session(helper.make_node("Mul", ["x", "two"], ["z"]))
    for n, calls, what in [(1, 2000, "one element, per call"), (10_000_000, 5, "1e7 float32")]:
        feed = {"x": np.arange(n, dtype=np.float32)}
        np.testing.assert_array_equal(ours.run(None, feed)[0], theirs.run(None, feed)[0])
        a, b = compare(what, lambda: ours.run(None, feed), lambda: theirs.run(None, feed), calls)
        report("ONNX Runtime", what, a, b)
    # ONNX Runtime's intra-op threads spin between ops by default, on the
    # cores our kernel's own pool splits its work over; without spinning:
    ours = session(ops.make_node("example", ["x"], ["z"]), spinning="0")
    theirs = session(helper.make_node("Mul", ["x", "two"], ["z"]), spinning="0")
    feed = {"x": np.arange(10_000_000, dtype=np.float32)}
    a, b = compare("", lambda: ours.run(None, feed), lambda: theirs.run(None, feed), 5)
    report("ONNX Runtime", "1e7 float32, no spinning", a, b)


def torch_figures():
    import torch

    import opkit_ops.torch as ops

    ours = torch.ops.opkit_ops.example.default
    for n, calls, what in [(1, 20000, "one element, per call"), (10_000_000, 5, "1e7 float32")]:
        x = torch.arange(n, dtype=torch.float32)
        torch.testing.assert_close(ours(x), x * 2)
        a, b = compare(what, lambda: ours(x), lambda: x * 2, calls)
        report("PyTorch", what, a, b)
    # Example has a #[gradient]: its autograd formula is registered from
    # Python (torch.library.register_autograd), whose kernel runs on every
    # call. Equal has none, so it shows the C ABI's own cost:
    x = torch.arange(1, dtype=torch.float32)
    a, b = compare("", lambda: torch.ops.opkit_ops.equal.default(x, x), lambda: torch.eq(x, x), 20000)
    report("PyTorch", "Equal (no autograd), per call", a, b)

    # And a peer: the same x * 2 as PyTorch's own Python custom op with an
    # autograd formula (torch.library.custom_op), against ours.
    @torch.library.custom_op("host_bench::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    double.register_autograd(lambda ctx, grad: grad * 2)
    peer = torch.ops.host_bench.double.default
    a, b = compare("", lambda: ours(x), lambda: peer(x), 20000)
    print(
        f"{'PyTorch':13} {'vs a torch.library.custom_op':28} ours {a * 1e6:10.2f} us   peer    {b * 1e6:10.2f} us   "
        f"ours - peer    {(a - b) * 1e6:+8.2f} us   peer/ours    {b / a:5.2f}x"
    )
    del ops


if __name__ == "__main__":
    import importlib.util

    for module, figures in [("jax", jax_figures), ("onnxruntime", onnx_figures), ("torch", torch_figures)]:
        if importlib.util.find_spec(module) is None:
            print(f"skipped: {module} is not installed in this Python")
        else:
            figures()
