"""The library's ops in ONNX Runtime.

    import onnx, onnxruntime as ort
    import PACKAGE.onnx as ops

    node = ops.make_node("zero_out", ["x"], ["y"])      # an ONNX node of our op
    graph = onnx.helper.make_graph([node], "g", [...inputs], [...outputs])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17), ops.opset()])
    options = ort.SessionOptions()
    options.register_custom_ops_library(ops.library_path())
    session = ort.InferenceSession(model.SerializeToString(), options)

The library is an ONNX Runtime custom-op library (`RegisterCustomOps`): its
ops are in the custom-op domain `DOMAIN`, under their own names (`ZeroOut`),
with one kernel per combination of input dtypes; their attrs are the node's
ONNX attributes, checked when the session is made; their output shapes come
from the op's shape function. `OPS` lists them, `SKIPPED` says why an op is
left out. Importing this module needs neither onnx nor onnxruntime;
`make_node` and `opset` need onnx.

Written by `cargo xtask package` (op-tf/python/package/onnx.py).
"""

from . import _host

_MANIFEST, _LIBRARY = _host.manifest("onnx")

#: The custom-op domain of the library's ops.
DOMAIN = _MANIFEST["domain"]
#: The ONNX Runtime API version the library asks for (ONNX Runtime 1.17+).
API_VERSION = _MANIFEST["api_version"]
#: Each exported op's entry, by Python name (`zero_out`).
OPS = {op["python_name"]: op for op in _MANIFEST["ops"]}
#: Why each op left out is left out, by op name.
SKIPPED = {op["name"]: op["why"] for op in _MANIFEST["skipped"]}

__all__ = ["DOMAIN", "API_VERSION", "OPS", "SKIPPED", "library_path", "opset", "make_node"]


def library_path():
    """The path of the shared library, for `SessionOptions.register_custom_ops_library`."""
    return _LIBRARY


def opset():
    """The opset import a model that uses the library's ops needs."""
    import onnx

    return onnx.helper.make_opsetid(DOMAIN, 1)


def _entry(op):
    if op in OPS:
        return OPS[op]
    for entry in OPS.values():
        if entry["name"] == op:
            return entry
    if op in SKIPPED:
        raise ValueError(f"op {op} is not in ONNX Runtime: {SKIPPED[op]}")
    raise ValueError(f"the library has no op {op!r} for ONNX Runtime (its ops: {', '.join(sorted(OPS))})")


def make_node(op, inputs, outputs, name=None, **attrs):
    """An ONNX node of op `op` (its Python name, `zero_out`, or its own,
    `ZeroOut`) in `DOMAIN`, with its attrs as keyword arguments under their
    Python names (`in_` for `in`); a bool is written as ONNX's int. An attr
    the op does not have is a TypeError here; a bad value is an error when
    the session is made, as in our runtime."""
    import onnx

    entry = _entry(op)
    known = {a["python_name"]: a for a in entry["attrs"]}
    values = {}
    for key, value in attrs.items():
        if key not in known:
            raise TypeError(
                f"op {entry['name']} has no attr {key!r} (its attrs: {', '.join(known) or 'none'})"
            )
        if isinstance(value, bool):
            value = int(value)
        values[known[key]["name"]] = value
    node = onnx.helper.make_node(entry["name"], list(inputs), list(outputs), name=name, domain=DOMAIN)
    # Each attribute typed by the op's declaration, so that an empty list
    # (which onnx.helper cannot type) is written too.
    kinds = {"list(int)": onnx.AttributeProto.INTS, "list(float)": onnx.AttributeProto.FLOATS}
    types = {a["name"]: a["type"] for a in entry["attrs"]}
    for key, value in values.items():
        node.attribute.append(onnx.helper.make_attribute(key, value, attr_type=kinds.get(types[key])))
    return node
