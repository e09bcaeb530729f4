"""fnabi: call compiled tensor functions (MLIR-compiled native code, IREE
modules) with numpy arrays and nested dicts, lists and tuples.

>>> import fnabi, numpy as np
>>> m = fnabi.load("examples/mlp.mlir")      # compiled and cached
>>> m.functions
['mlp']
>>> y = m.mlp(x, {"w1": w1, "b1": b1, "w2": w2, "b2": b2})

Every error fnabi raises is a `fnabi.Error` (see its subclasses).
"""

from ._errors import (
    CallError,
    CompileError,
    Error,
    ExecutionError,
    FunctionNotFoundError,
    LoadError,
    SignatureError,
)
from ._fnabi import Function, Module, compile_mlir, demangle, has_iree, load, mangle

__version__ = "0.1.0"

__all__ = [
    "CallError",
    "CompileError",
    "Error",
    "ExecutionError",
    "Function",
    "FunctionNotFoundError",
    "LoadError",
    "Module",
    "SignatureError",
    "compile_mlir",
    "demangle",
    "has_iree",
    "load",
    "mangle",
]
