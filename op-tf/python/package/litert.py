"""The library's ops in LiteRT (PyPI `ai-edge-litert`), through an external delegate.

    from ai_edge_litert.interpreter import Interpreter
    import PACKAGE.litert as ops

    interpreter = Interpreter("sin_custom.tflite", experimental_delegates=[ops.load_delegate()])
    # or by hand: load_delegate(ops.delegate_path(), {"ops": "Sin"})

LiteRT's Python interpreter adds no custom kernel, but it loads delegates:
the library is one, which claims each custom-op node of a model that it has
a kernel for (`OPS`: its `#[lite_kernel]`s, then its framework ops through
the lite bridge) and runs it with ours over LiteRT's tensors. A custom op the
library lacks is named beside LiteRT's own error. `OPTIONS` lists the
delegate's options (`ops`: a comma-separated list of the only custom ops to
claim; `unclaimed`: `report`, `error` or `ignore` for the custom ops it
leaves). Importing this module needs no LiteRT; `load_delegate` does.

Written by `cargo xtask package` (op-tf/python/package/litert.py).
"""

from . import _host

_MANIFEST, _LIBRARY = _host.manifest("litert")

#: The custom ops the delegate can claim, by name: "lite_kernel" or "framework".
OPS = {op["name"]: op["from"] for op in _MANIFEST["ops"]}
#: The delegate's options.
OPTIONS = list(_MANIFEST["options"])


def delegate_path():
    """The path to pass to `ai_edge_litert.interpreter.load_delegate`."""
    return _LIBRARY


def load_delegate(**options):
    """The library's delegate, loaded by LiteRT with these options
    (`load_delegate(ops="Sin")`; lists are joined with commas)."""
    from ai_edge_litert.interpreter import load_delegate as _load

    values = {k: ",".join(v) if isinstance(v, (list, tuple)) else str(v) for k, v in options.items()}
    return _load(_LIBRARY, values)
