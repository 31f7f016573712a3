"""The library's ops in PyTorch.

    import torch
    import PACKAGE.torch as ops

    ops.zero_out(torch.tensor([[1, 2], [3, 4]], dtype=torch.int32))   # tensor([[1, 0], [0, 0]])
    torch.ops.PACKAGE.zero_out_preserve_index(torch.arange(4, dtype=torch.int32), preserve_index=2)
    torch.compile(lambda x: ops.zero_out_polymorphic(x) * 2, fullgraph=True)(torch.ones(3))
    x = torch.ones(3, requires_grad=True); ops.zero_out_polymorphic(x).sum().backward()

Importing the module loads the library with `torch.ops.load_library`, which
registers every op under `torch.ops.NAMESPACE` with a schema from its OpDef
(inputs as tensors, attrs keyword-only with their defaults, a `type` attr
that no input sets as a `torch.dtype`) and a CPU kernel that runs ours
(contiguous tensors without a copy; others are first made contiguous). This
module adds, for each op, a fake implementation from the op's shape function
(so that `torch.compile(fullgraph=True)` and `torch.export` trace through it:
an output dim that the shape function cannot know is a new dynamic size), and,
for each op with a `#[gradient]`, an autograd formula that calls the op's
`<name>_backward`. Each op is also a plain function here (`ops.zero_out`).
`SKIPPED` says why an op is left out; `LOAD_REPORT` is what the load did.

Written by `cargo xtask package` (op-tf/python/package/torch.py).
"""

import ctypes as _ctypes

import torch as _torch

from . import _host

_MANIFEST, _LIBRARY = _host.manifest("torch")

#: The namespace of the library's ops: `torch.ops.NAMESPACE.<name>`.
NAMESPACE = _MANIFEST["namespace"]
#: The oldest PyTorch whose stable ABI the library needs.
TARGET = _MANIFEST["target"]
#: Why each op left out is left out, by op name.
SKIPPED = {op["name"]: op["why"] for op in _MANIFEST["skipped"]}

_torch.ops.load_library(_LIBRARY)
_lib = _ctypes.CDLL(_LIBRARY)
_lib.op_torch_load_report.restype = _ctypes.c_char_p
_infer = _host.ShapeFunctions(_lib, "op_torch").outputs
#: What loading the library registered with PyTorch, a line per op.
LOAD_REPORT = _lib.op_torch_load_report().decode()
if not LOAD_REPORT.startswith("ok"):
    raise ImportError(f"{_LIBRARY} did not register its ops with PyTorch: {LOAD_REPORT}")

# Our DataType numbers and PyTorch's dtypes.
_DTYPES = {
    1: _torch.float32, 2: _torch.float64, 3: _torch.int32, 4: _torch.uint8, 5: _torch.int16,
    6: _torch.int8, 8: _torch.complex64, 9: _torch.int64, 10: _torch.bool, 14: _torch.bfloat16,
    17: _torch.uint16, 18: _torch.complex128, 19: _torch.float16, 22: _torch.uint32, 23: _torch.uint64,
}
_NUMBERS = {v: k for k, v in _DTYPES.items()}
_NAMESPACE = getattr(_torch.ops, NAMESPACE)


def library_path():
    """The path of the shared library."""
    return _LIBRARY


def _number(dtype):
    try:
        return _NUMBERS[dtype]
    except KeyError:
        raise TypeError(f"dtype {dtype} does not cross to the library's ops") from None


def _attrs(entry, given):
    """The request's attrs (our names and values) from the schema's keyword arguments."""
    by_python = {a["python_name"]: a for a in entry["attrs"]}
    attrs = {}
    for key, value in given.items():
        attr = by_python[key]
        if value is None:
            continue  # a `ScalarType?` left to the attr's default
        if attr["type"] == "type":
            value = _number(value)
        attrs[attr["name"]] = value
    return attrs


# Sentinel values for symbolic dims: a shape function run on two sets of them
# tells an output dim that is an input's dim (it follows the sentinel) from a
# constant one (it stays).
_SENTINELS = (10007, 20011)


def _fake_outputs(entry, tensors, attrs):
    """The outputs' dtypes and shapes (ints or SymInts), from our shape function."""
    shapes = [list(t.shape) for t in tensors]
    # Each symbolic dim's symbol number, fixed before any `int(d)` below
    # specializes a symbol (after which it prints as its value).
    symbols, by_symbol, numbered = [], {}, []
    for shape in shapes:
        row = []
        for d in shape:
            if isinstance(d, int):
                row.append(None)
                continue
            if str(d) not in by_symbol:
                symbols.append(str(d))
                by_symbol[str(d)] = d
            row.append(symbols.index(str(d)))
        numbered.append(row)

    def run(value):
        inputs = []
        for t, shape, row in zip(tensors, shapes, numbered):
            dims = [d if k is None else value(k, d) for d, k in zip(shape, row)]
            inputs.append({"dtype": _number(t.dtype), "shape": dims})
        return _infer({"op": entry["name"], "inputs": inputs, "attrs": attrs})

    def fixed():
        return run(lambda k, d: int(d))

    try:
        first = run(lambda k, d: _SENTINELS[0] + 7 * k)
        second = run(lambda k, d: _SENTINELS[1] + 7 * k) if symbols else first
    except ValueError:
        if not symbols:
            raise
        # The sentinels broke a rule between inputs (a vector whose length
        # is another input's rank): the dims are fixed at their values.
        first = second = fixed()
    ranks = [None if o["shape"] is None else len(o["shape"]) for o in first]
    if symbols and ranks != [None if o["shape"] is None else len(o["shape"]) for o in second]:
        # An output's rank follows an input's dim (a shape input's length):
        # PyTorch has no dynamic rank, so the dims are fixed at their values.
        first = second = fixed()
    outputs = []
    for a, b in zip(first, second):
        if a["shape"] is None:
            raise ValueError(f"op {entry['name']}: an output's rank depends on input values")
        dims = []
        for da, db in zip(a["shape"], b["shape"]):
            if da is not None and da == db:
                dims.append(da)
                continue
            symbol = None
            if da is not None and db is not None:
                k, rest = divmod(da - _SENTINELS[0], 7)
                if rest == 0 and 0 <= k < len(symbols) and db == _SENTINELS[1] + 7 * k:
                    symbol = by_symbol[symbols[k]]
            dims.append(symbol if symbol is not None else _torch.library.get_ctx().new_dynamic_size())
        outputs.append((_DTYPES[a["dtype"]], dims))
    return outputs


def _one_or_tuple(results):
    """What an op of `results` returns: a tensor, a tuple, or None (`-> ()`)."""
    if not results:
        return None
    return results[0] if len(results) == 1 else tuple(results)


def _fake(entry):
    def fake(*tensors, **kwargs):
        outputs = _fake_outputs(entry, tensors, _attrs(entry, kwargs))
        device = tensors[0].device if tensors else "cpu"
        return _one_or_tuple([_torch.empty(dims, dtype=dtype, device=device) for dtype, dims in outputs])

    return fake


def _fake_backward(entry):
    n = len(entry["inputs"])

    def fake(*tensors, **kwargs):
        return _one_or_tuple([_torch.empty_like(x) for x in tensors[:n]])

    return fake


def _differentiable(dtype):
    return dtype.is_floating_point or dtype.is_complex


def _autograd(entry):
    """`setup_context` and `backward` for an op with a `#[gradient]`."""
    n = len(entry["inputs"])
    backward_op = getattr(_NAMESPACE, entry["backward"])

    def save(ctx, inputs, keyword_only_inputs, output):
        outputs = output if isinstance(output, tuple) else (output,)
        ctx.save_for_backward(*inputs[:n], *outputs)
        ctx.attrs = dict(keyword_only_inputs)

    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        xs, ys = saved[:n], saved[n:]
        # An output nothing used has no gradient: ours takes zeros.
        grads = [g if g is not None else _torch.zeros_like(y) for g, y in zip(grads, ys)]
        results = backward_op(*xs, *ys, *grads, **ctx.attrs)
        results = results if isinstance(results, tuple) else (results,)
        return tuple(g if _differentiable(x.dtype) else None for g, x in zip(results, xs))

    if entry["attrs"]:
        return save, backward

    def save_positional(ctx, inputs, output):
        save(ctx, inputs, {}, output)

    return save_positional, backward


def _function(entry):
    packet = getattr(_NAMESPACE, entry["torch_name"])

    def op(*args, **kwargs):
        return packet(*args, **kwargs)

    op.__name__ = entry["python_name"]
    op.__qualname__ = entry["python_name"]
    op.__doc__ = f"{entry['doc']}\n\nSchema: {NAMESPACE}::{entry['schema']}"
    return op


#: Each exported op's `torch.ops` overload packet, by Python name.
OPS = {}
__all__ = ["NAMESPACE", "TARGET", "SKIPPED", "LOAD_REPORT", "OPS", "library_path"]
for _entry in _MANIFEST["ops"]:
    _qualified = f"{NAMESPACE}::{_entry['torch_name']}"
    _torch.library.register_fake(_qualified)(_fake(_entry))
    if _entry["backward"]:
        _torch.library.register_fake(f"{NAMESPACE}::{_entry['backward']}")(_fake_backward(_entry))
        _setup, _backward = _autograd(_entry)
        _torch.library.register_autograd(_qualified, _backward, setup_context=_setup)
    OPS[_entry["python_name"]] = getattr(_NAMESPACE, _entry["torch_name"])
    globals()[_entry["python_name"]] = _function(_entry)
    __all__.append(_entry["python_name"])
