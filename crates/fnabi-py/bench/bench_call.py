"""Call cost from Python, printed as one JSON object.

- ``count_above``: a small MLIR-compiled function (``memref<?xi32>`` and
  ``i32`` in, ``i32`` out; crates/fnabi-py/tests/mlir/py_fixtures.mlir)
  called through fnabi, against a hand-written ctypes call of the same
  ``_mlir_ciface_count_above`` symbol in the same library that builds the
  memref descriptor from the numpy array on every call (what calling MLIR
  code from Python without a runtime package takes).
- ``dict8_mlir``: a dict of 8 ``f32[4]`` arrays bound through ``sip``
  (crates/fnabi/tests/mlir/sip_dict8.mlir), a fresh ``f32[4]`` result.
- ``dict8_iree``: the same dict through the IREE module
  crates/fnabi/tests/fixtures/iree/nested.vmfb (``local-sync``) when fnabi
  was built with IREE, and through ``iree.runtime``'s ``FunctionInvoker``
  when ``iree-base-runtime`` is installed.

Each figure is the best of 15 repeats of the mean per-call time, in
microseconds. Build the package optimized first:
``maturin develop --release -m crates/fnabi-py/Cargo.toml [--features iree]``.
"""

from __future__ import annotations

import ctypes
import json
import platform
import sys
import timeit
from pathlib import Path

import numpy as np

import fnabi

REPO = Path(__file__).resolve().parents[3]


def per_call_us(fn, number: int, repeat: int = 15) -> float:
    fn()  # warm up
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


class MemRef1D(ctypes.Structure):
    """MLIR's descriptor of a rank-1 memref (allocated, aligned, offset, sizes, strides)."""

    _fields_ = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
        ("sizes", ctypes.c_int64 * 1),
        ("strides", ctypes.c_int64 * 1),
    ]


def bench_count_above(number: int) -> dict:
    m = fnabi.load(REPO / "crates/fnabi-py/tests/mlir/py_fixtures.mlir")
    f = m.count_above
    x = np.arange(16, dtype=np.int32)
    t = 7

    lib = ctypes.CDLL(str(m.library_path))
    sym = lib._mlir_ciface_count_above
    sym.argtypes = [ctypes.POINTER(MemRef1D), ctypes.c_int32]
    sym.restype = ctypes.c_int32

    def by_ctypes():
        if x.dtype != np.int32 or x.ndim != 1:
            raise TypeError("count_above takes a 1-D int32 array")
        ptr = x.ctypes.data
        d = MemRef1D(ptr, ptr, 0, (x.shape[0],), (x.strides[0] // x.itemsize,))
        return sym(ctypes.byref(d), t)

    expected = int((x > t).sum())
    assert f(x, t) == expected and by_ctypes() == expected
    ours = per_call_us(lambda: f(x, t), number)
    theirs = per_call_us(by_ctypes, number)
    return {"fnabi_us": round(ours, 3), "ctypes_us": round(theirs, 3), "ratio": round(ours / theirs, 3)}


def dict8_inputs() -> dict:
    return {f"k{i}": np.full(4, i, np.float32) for i in range(8)}


def bench_dict8_mlir(number: int) -> dict:
    f = fnabi.load(REPO / "crates/fnabi/tests/mlir/sip_dict8.mlir").dict8
    d = dict8_inputs()
    np.testing.assert_array_equal(f(d), np.full(4, 28, np.float32))
    return {"fnabi_us": round(per_call_us(lambda: f(d), number), 3)}


def bench_dict8_iree(number: int) -> dict:
    vmfb = REPO / "crates/fnabi/tests/fixtures/iree/nested.vmfb"
    d = {k: v for k, v in dict8_inputs().items()}
    out: dict = {"fnabi_us": None, "iree_runtime_us": None}
    if fnabi.has_iree():
        f = fnabi.load(vmfb).dict8
        np.testing.assert_array_equal(f(d), np.full(4, 28, np.float32))
        out["fnabi_us"] = round(per_call_us(lambda: f(d), number), 3)
    try:
        import iree.runtime as rt
    except ImportError:
        out["iree_runtime"] = "not installed (pip install iree-base-runtime==3.13.0)"
    else:
        config = rt.Config("local-sync")
        ctx = rt.SystemContext(config=config)
        ctx.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
        g = ctx.modules.module["dict8"]
        r = g(d)
        np.testing.assert_array_equal(np.asarray(r), np.full(4, 28, np.float32))
        out["iree_runtime_us"] = round(per_call_us(lambda: g(d), number), 3)
        from importlib.metadata import version

        out["iree_runtime_version"] = version("iree-base-runtime")
    if out["fnabi_us"] and out["iree_runtime_us"]:
        out["ratio"] = round(out["fnabi_us"] / out["iree_runtime_us"], 3)
    return out


def main() -> None:
    number = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    report = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "calls_per_repeat": number,
        "count_above": bench_count_above(number),
        "dict8_mlir": bench_dict8_mlir(number),
        "dict8_iree": bench_dict8_iree(number),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
