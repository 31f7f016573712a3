"""The library's ops in JAX.

    import jax, jax.numpy as jnp
    import PACKAGE.jax as ops

    ops.zero_out(jnp.array([[1, 2], [3, 4]]))                 # [[1, 0], [0, 0]]
    jax.jit(lambda x: ops.zero_out_preserve_index(x, preserve_index=2))(jnp.arange(4))
    jax.grad(lambda x: ops.zero_out_polymorphic(x).sum())(jnp.ones(3))

Each op is a function of `jax.Array`s (or anything `jnp.asarray` takes),
its attrs keyword arguments under their Python names; a `type` attr is a
dtype (`jnp.float32`). Output dtypes and shapes come from the op's shape
function when the function is traced: an op whose output shape depends on
input values cannot run here, and says so. The call runs the library's
XLA FFI handler (`TARGET`, on the CPU). An op with a `#[gradient]` is a
`jax.custom_vjp` whose backward runs that gradient; every op gets
`vmap_method="sequential"` (a batch is a loop of calls: our ops declare no
batching rule). `SKIPPED` says why an op is left out.

Written by `cargo xtask package` (op-tf/python/package/jax.py).
"""

import ctypes as _ctypes
import functools as _functools
import json as _json

import jax as _jax
import jax.numpy as _jnp
import numpy as _np

from . import _host

_MANIFEST, _LIBRARY = _host.manifest("jax")

#: The XLA FFI target every op of the library calls.
TARGET = "opkit.PACKAGE"
#: The XLA FFI API version the library's handler declares.
FFI_API_VERSION = tuple(_MANIFEST["ffi_api_version"])
#: Why each op left out is left out, by op name.
SKIPPED = {op["name"]: op["why"] for op in _MANIFEST["skipped"]}

_lib = _ctypes.CDLL(_LIBRARY)
_infer = _host.ShapeFunctions(_lib, "op_jax").outputs
_jax.ffi.register_ffi_target(TARGET, _jax.ffi.pycapsule(_lib.op_jax_call), platform="cpu")

# Our DataType numbers and numpy's dtypes.
_DTYPES = {
    1: _np.float32, 2: _np.float64, 3: _np.int32, 4: _np.uint8, 5: _np.int16, 6: _np.int8,
    8: _np.complex64, 9: _np.int64, 10: _np.bool_, 14: _jnp.bfloat16, 17: _np.uint16,
    18: _np.complex128, 19: _np.float16, 22: _np.uint32, 23: _np.uint64,
}
_NUMBERS = {_np.dtype(v): k for k, v in _DTYPES.items()}


def library_path():
    """The path of the shared library."""
    return _LIBRARY


def _number(dtype):
    try:
        return _NUMBERS[_np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"dtype {dtype} does not cross to the library's ops") from None


#: Concrete int32 and int64 inputs of at most this many elements have their values
#: sent to the shape function (outside `jit`, an op whose output shape
#: depends on such an input, `Fill`'s dims, runs).
_VALUES_MAX = 64


def _request(entry, args, attrs, gradient=False, values=False):
    def described(a):
        d = {"dtype": _number(a.dtype), "shape": list(a.shape)}
        concrete = not isinstance(a, _jax.core.Tracer)
        if values and concrete and a.dtype in (_np.int32, _np.int64) and a.size <= _VALUES_MAX:
            d["values"] = _np.asarray(a).ravel().tolist()
        return d

    return _json.dumps(
        {
            "op": entry["name"],
            "inputs": [described(a) for a in args],
            "attrs": attrs,
            "gradient": gradient,
            "fixed_shapes": True,
        },
        sort_keys=True,
    )


def _results(entry, args, attrs, gradient=False):
    """The outputs of one call of the handler, as a list."""
    # The handler's request carries no values (the kernel reads them from
    # its buffers, and one kernel serves every value).
    request = _request(entry, args, attrs, gradient)
    answer = _infer(_request(entry, args, attrs, gradient, values=True))
    types = [_jax.ShapeDtypeStruct(tuple(o["shape"]), _DTYPES[o["dtype"]]) for o in answer]
    return list(_jax.ffi.ffi_call(TARGET, types, vmap_method="sequential")(*args, opkit=request))


def _one_or_tuple(results):
    return results[0] if len(results) == 1 else tuple(results)


def _is_float(dtype):
    return _jnp.issubdtype(dtype, _jnp.inexact)


@_functools.lru_cache(maxsize=None)
def _differentiable(name, attrs_key):
    """The op with these attrs as a `jax.custom_vjp` whose backward runs our gradient."""
    entry = _BY_NAME[name]
    attrs = _json.loads(attrs_key)

    @_jax.custom_vjp
    def op(*args):
        return _one_or_tuple(_results(entry, args, attrs))

    def forward(*args):
        outputs = _results(entry, args, attrs)
        return _one_or_tuple(outputs), (args, outputs)

    def backward(saved, cotangents):
        args, outputs = saved
        cotangents = list(cotangents) if isinstance(cotangents, tuple) else [cotangents]
        # An integer output's cotangent is float0: our gradient takes zeros.
        cotangents = [
            c if _is_float(o.dtype) else _jnp.zeros(o.shape, o.dtype) for c, o in zip(cotangents, outputs)
        ]
        grads = _results(entry, list(args) + outputs + cotangents, attrs, gradient=True)
        return tuple(
            g if _is_float(a.dtype) else _np.zeros(a.shape, _jax.dtypes.float0) for a, g in zip(args, grads)
        )

    op.defvjp(forward, backward)
    return op


def _attrs(entry, given):
    known = {a["python_name"]: a for a in entry["attrs"]}
    attrs = {}
    for key, value in given.items():
        if key not in known:
            raise TypeError(f"op {entry['name']} has no attr {key!r} (its attrs: {', '.join(known) or 'none'})")
        attr = known[key]
        if attr["type"] == "type":
            value = _number(value)
        elif attr["type"] == "list(type)":
            value = [_number(v) for v in value]
        elif isinstance(value, _np.ndarray):
            value = value.tolist()
        elif isinstance(value, _np.generic):
            value = value.item()
        attrs[attr["name"]] = value
    return attrs


def _wrapper(entry):
    inputs = [a["python_name"] for a in entry["inputs"]]

    def op(*args, **kwargs):
        args = list(args)
        for name in inputs[len(args):]:
            if name not in kwargs:
                raise TypeError(f"{entry['python_name']}() is missing input {name!r}")
            args.append(kwargs.pop(name))
        if len(args) != len(inputs):
            raise TypeError(f"{entry['python_name']}() takes {len(inputs)} inputs, but got {len(args)}")
        attrs = _attrs(entry, kwargs)
        args = [_jnp.asarray(a) for a in args]
        if entry["differentiable"]:
            return _differentiable(entry["name"], _json.dumps(attrs, sort_keys=True))(*args)
        return _one_or_tuple(_results(entry, args, attrs))

    op.__name__ = entry["python_name"]
    op.__qualname__ = entry["python_name"]
    op.__doc__ = entry["doc"]
    return op


_BY_NAME = {op["name"]: op for op in _MANIFEST["ops"]}
__all__ = ["TARGET", "FFI_API_VERSION", "SKIPPED", "library_path"]
for _entry in _MANIFEST["ops"]:
    globals()[_entry["python_name"]] = _wrapper(_entry)
    __all__.append(_entry["python_name"])
