"""The library's ops in TensorFlow.

    import PACKAGE.tensorflow as ops
    ops.zero_out([[1, 2], [3, 4]])

Importing this module loads the library into TensorFlow
(`tf.load_op_library`): its ops, kernels and shape functions register, and
each op's wrapper is a function here, with its docstring. Each op with a
gradient in Rust (`#[gradient]`) gets it in TensorFlow (`tf.GradientTape`,
`tf.gradients`): a Python gradient that calls the library's gradient op,
`OpkitGradient>{op}`; ops marked `not_differentiable` get `tf.no_gradient`.
`library_path()` gives the library for a direct `tf.load_op_library`.

Written by `cargo xtask package` (op-tf/python/package/tensorflow.py).
"""

import ctypes as _ctypes
import json as _json
import os as _os

import tensorflow as _tf

_HERE = _os.path.dirname(_os.path.abspath(__file__))
with open(_os.path.join(_HERE, "manifest.json")) as _f:
    _MANIFEST = _json.load(_f)
_LIBRARY = _os.path.join(_HERE, _MANIFEST["library"])


def library_path():
    """The path of the shared library, for `tf.load_op_library`."""
    return _LIBRARY


_module = _tf.load_op_library(_LIBRARY)
_lib = _ctypes.CDLL(_LIBRARY)
_lib.op_tf_load_report.restype = _ctypes.c_char_p
#: What loading the library registered, line by line ("ok" first).
LOAD_REPORT = _lib.op_tf_load_report().decode()
if not LOAD_REPORT.startswith("ok"):
    raise ImportError(f"{_LIBRARY} did not load into TensorFlow: {LOAD_REPORT}")

__all__ = ["library_path", "LOAD_REPORT"]
for _op in _MANIFEST["ops"]:
    _name = _op["python_name"]
    # TensorFlow appends "_" to a name Python reserves.
    _wrapper = getattr(_module, _name, None) or getattr(_module, _name + "_", None)
    if _wrapper is None:
        raise ImportError(f"TensorFlow made no wrapper {_name} for op {_op['name']} of {_LIBRARY}")
    _wrapper.__doc__ = _op["doc"]
    globals()[_name] = _wrapper
    __all__.append(_name)


def _groups(args, tensors, op):
    """`tensors` (flat, as `op.inputs` lists them) grouped by arg: a list
    for a list arg, the tensor itself otherwise."""
    grouped, k = [], 0
    for arg in args:
        if arg["number_attr"]:
            n = op.get_attr(arg["number_attr"])
        elif arg["type_list_attr"]:
            n = len(op.get_attr(arg["type_list_attr"]))
        else:
            grouped.append(tensors[k])
            k += 1
            continue
        grouped.append(list(tensors[k : k + n]))
        k += n
    return grouped


def _flat(values):
    if not isinstance(values, (list, tuple)):
        return [values]
    flat = []
    for value in values:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


def _gradient_of(entry):
    gradient = entry["gradient"]
    wrapper = getattr(_module, gradient["python_name"])

    def grad(op, *grads):
        dys = [d if d is not None else _tf.zeros_like(y) for d, y in zip(grads, op.outputs)]
        kwargs = {}
        for prefix, args, tensors in (
            ("x_", gradient["inputs"], list(op.inputs)),
            ("y_", gradient["outputs"], list(op.outputs)),
            ("dy_", gradient["outputs"], dys),
        ):
            for arg, value in zip(args, _groups(args, tensors, op)):
                kwargs[prefix + arg["name"]] = value
        for name in gradient["attrs"]:
            kwargs[name] = op.get_attr(name)
        dxs = _flat(wrapper(**kwargs))
        # Integer (and other non-float) inputs take no gradient.
        return [
            dx if (x.dtype.is_floating or x.dtype.is_complex) else None
            for dx, x in zip(dxs, op.inputs)
        ]

    return grad


for _op in _MANIFEST["ops"]:
    try:
        if _op["gradient"] is not None:
            _tf.RegisterGradient(_op["name"])(_gradient_of(_op))
        elif _op["not_differentiable"]:
            _tf.no_gradient(_op["name"])
    except KeyError:
        # Registered already: the library was loaded by another path first.
        pass
