"""The library's ops in TensorFlow.

    import PACKAGE.tensorflow as ops
    ops.zero_out([[1, 2], [3, 4]])

Importing this module loads the library into TensorFlow
(`tf.load_op_library`): its ops, kernels and shape functions register, and
each op's wrapper is a function here, with its docstring.
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
