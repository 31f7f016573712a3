"""What the package's host modules share: each reads its manifest (written
beside it by `cargo xtask package`) and the library's path, and JAX's and
PyTorch's ask the library's shape functions for output dtypes and shapes.

Written by `cargo xtask package` (op-tf/python/package/_host.py).
"""

import ctypes as _ctypes
import json as _json
import os as _os

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def manifest(host):
    """The manifest `<host>_manifest.json`, and the library's path."""
    with open(_os.path.join(_HERE, f"{host}_manifest.json")) as f:
        data = _json.load(f)
    return data, _os.path.join(_HERE, data["library"])


class ShapeFunctions:
    """The library's `<prefix>_infer` and `<prefix>_free`: output dtypes and
    shapes of a call request (op_host::request), through ctypes."""

    def __init__(self, lib, prefix):
        self._infer = getattr(lib, f"{prefix}_infer")
        self._infer.restype = _ctypes.c_void_p
        self._infer.argtypes = [_ctypes.c_char_p]
        self._free = getattr(lib, f"{prefix}_free")
        self._free.argtypes = [_ctypes.c_void_p]

    def outputs(self, request):
        """`request`'s outputs, `[{"dtype", "shape"}]`; ValueError with our message otherwise."""
        text = request if isinstance(request, str) else _json.dumps(request)
        pointer = self._infer(text.encode())
        try:
            answer = _json.loads(_ctypes.string_at(pointer).decode())
        finally:
            self._free(pointer)
        if "error" in answer:
            raise ValueError(answer["error"])
        return answer["outputs"]
