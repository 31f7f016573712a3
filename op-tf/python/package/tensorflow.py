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

An op with an arg named after a Python keyword (`in`) is held back at load,
as TensorFlow would write a wrapper for it that does not compile (and then
load none of the library): this module registers it right after the load
(`op_tf_register_held_back()`) and wraps it itself, with the arg as `in_`.
Such an op runs eagerly through a `tf.function` of its own; its gradient
op is wrapped the same way.

Written by `cargo xtask package` (op-tf/python/package/tensorflow.py).
"""

import ctypes as _ctypes
import json as _json
import os as _os

import tensorflow as _tf
from tensorflow.core.framework import attr_value_pb2 as _attr_value_pb2
from tensorflow.python.framework import op_def_library as _op_def_library
from tensorflow.python.framework import op_def_registry as _op_def_registry

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


def _gradient_of(entry, wrapper):
    """The Python gradient of op `entry`: it calls `wrapper`, the wrapper
    of the op's gradient op, with the op's inputs, outputs, incoming
    gradients and attrs."""

    def grad(op, *grads):
        dys = [d if d is not None else _tf.zeros_like(y) for d, y in zip(grads, op.outputs)]
        kwargs = {}
        for prefix, args, tensors in (
            ("x_", entry["inputs"], list(op.inputs)),
            ("y_", entry["outputs"], list(op.outputs)),
            ("dy_", entry["outputs"], dys),
        ):
            for arg, value in zip(args, _groups(args, tensors, op)):
                kwargs[prefix + arg["name"]] = value
        for attr in entry["attrs"]:
            kwargs[attr["python_name"]] = op.get_attr(attr["name"])
        dxs = _flat(wrapper(**kwargs))
        # Integer (and other non-float) inputs take no gradient.
        return [
            dx if (x.dtype.is_floating or x.dtype.is_complex) else None
            for dx, x in zip(dxs, op.inputs)
        ]

    return grad


def _attr_value(value):
    """An `AttrValue` proto (an attr's default) as the Python value
    TensorFlow's op builder takes."""
    kind = value.WhichOneof("value")
    if kind == "list":
        for field in ("s", "i", "f", "b", "type", "shape", "tensor"):
            items = getattr(value.list, field)
            if items:
                return [_attr_value(_attr_value_pb2.AttrValue(**{field: item})) for item in items]
        return []
    if kind == "type":
        return _tf.as_dtype(value.type)
    if kind == "shape":
        return _tf.TensorShape(value.shape)
    if kind == "tensor":
        return _tf.make_ndarray(value.tensor)
    return getattr(value, kind)


def _held_back_wrapper(entry):
    """The wrapper of an op the package registers after the load (an arg
    named after a Python keyword, for which TensorFlow's own wrapper would
    not compile): inputs positional or by their Python names (`in_`), the
    attrs no input gives as keywords. In a graph (a `tf.function`) it adds
    the op with TensorFlow's op builder; eagerly it runs it through a
    `tf.function` of its own, traced once per input signature and attrs."""
    op_name = entry["name"]
    inputs, outputs = entry["inputs"], entry["outputs"]
    attrs = {a["python_name"]: a["name"] for a in entry["attrs"]}

    def build(tensors, attr_values, name=None):
        kwargs = {arg["name"]: value for arg, value in zip(inputs, tensors)}
        # TensorFlow's op builder fills no attr default but a type's (its
        # generated wrappers pass them): the OpDef's, for those not given.
        for attr in _op_def_registry.get(op_name).attr:
            if attr.name in attrs.values() and attr.name not in attr_values and attr.HasField("default_value"):
                kwargs[attr.name] = _attr_value(attr.default_value)
        kwargs.update(attr_values)
        _, _, op, _ = _op_def_library._apply_op_helper(op_name, name=name, **kwargs)
        if not outputs:
            return op
        grouped = _groups(outputs, list(op.outputs), op)
        return grouped[0] if len(grouped) == 1 else tuple(grouped)

    eager = _tf.function(build, autograph=False, reduce_retracing=True)

    def tensors_of(arg, value):
        dtype = _tf.as_dtype(arg["dtype"]) if arg["dtype"] is not None else None
        if arg["number_attr"] or arg["type_list_attr"]:
            return [_tf.convert_to_tensor(v, dtype=dtype) for v in value]
        return _tf.convert_to_tensor(value, dtype=dtype)

    def wrapper(*args, name=None, **kwargs):
        if len(args) > len(inputs):
            raise TypeError(f"{entry['python_name']}() takes {len(inputs)} positional inputs")
        values = list(args)
        for arg in inputs[len(args):]:
            if arg["python_name"] not in kwargs:
                raise TypeError(f"{entry['python_name']}() lacks input '{arg['python_name']}'")
            values.append(kwargs.pop(arg["python_name"]))
        unknown = sorted(set(kwargs) - set(attrs))
        if unknown:
            raise TypeError(f"{entry['python_name']}() got unknown argument(s) {unknown}")
        attr_values = {attrs[k]: v for k, v in kwargs.items()}
        if _tf.executing_eagerly():
            tensors = [tensors_of(arg, value) for arg, value in zip(inputs, values)]
            return eager(tensors, attr_values)
        return build(values, attr_values, name)

    wrapper.__name__ = entry["python_name"]
    wrapper.__doc__ = entry["doc"]
    return wrapper


#: What registering the held-back ops did, line by line ("ok" first).
HELD_BACK_REPORT = "ok\n"
if _MANIFEST["held_back"]:
    _lib.op_tf_register_held_back.restype = _ctypes.c_char_p
    HELD_BACK_REPORT = _lib.op_tf_register_held_back().decode()
    if not HELD_BACK_REPORT.startswith("ok"):
        raise ImportError(f"{_LIBRARY}: registering its held-back ops failed: {HELD_BACK_REPORT}")
    for _op in _MANIFEST["held_back"]:
        globals()[_op["python_name"]] = _held_back_wrapper(_op)
        __all__.append(_op["python_name"])


def _gradient_op_entry(entry):
    """What the package knows of the gradient op of a held-back op, as of an
    op of the manifest: its inputs the op's inputs, outputs and incoming
    gradients (`x_`, `y_`, `dy_` before each name), its outputs one
    gradient per input (`dx_`), its attrs the op's (op-tf's
    `gradient::specs` declares it so)."""

    def renamed(prefix, args):
        return [dict(arg, name=prefix + arg["name"], python_name=prefix + arg["name"]) for arg in args]

    return {
        "name": entry["gradient"]["op"],
        "python_name": entry["gradient"]["python_name"],
        "doc": f"The gradient of {entry['name']}, by our gradient function.",
        "inputs": renamed("x_", entry["inputs"]) + renamed("y_", entry["outputs"]) + renamed("dy_", entry["outputs"]),
        "outputs": renamed("dx_", entry["inputs"]),
        "attrs": entry["attrs"],
    }


# Each op with a gradient in Rust gets a Python gradient that calls its
# gradient op: through TensorFlow's wrapper, or for a held-back op (whose
# gradient op is registered after the load too, with no wrapper of
# TensorFlow's) through one of the package's.
_GRADIENTS = [(op, lambda op: getattr(_module, op["gradient"]["python_name"])) for op in _MANIFEST["ops"]]
_GRADIENTS += [(op, lambda op: _held_back_wrapper(_gradient_op_entry(op))) for op in _MANIFEST["held_back"]]
for _op, _gradient_wrapper in _GRADIENTS:
    try:
        if _op["gradient"] is not None:
            _tf.RegisterGradient(_op["name"])(_gradient_of(_op, _gradient_wrapper(_op)))
        elif _op["not_differentiable"]:
            _tf.no_gradient(_op["name"])
    except KeyError:
        # Registered already: the library was loaded by another path first.
        pass
