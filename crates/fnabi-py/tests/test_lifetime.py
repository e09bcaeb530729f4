"""Reference counting: results own the callee's memory (freed with their
last reference), outlive their module and function objects, and repeated
calls do not grow the process."""

from __future__ import annotations

import gc
import os
import weakref

import numpy as np

import fnabi
from conftest import MLIR


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_result_outlives_module_and_function():
    m = fnabi.load(MLIR / "memref_abi.mlir")
    f = m.transpose
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = f(x)
    view = y[1:, ::2]
    del m, f, y
    gc.collect()
    # The library is still loaded and the memory still valid.
    np.testing.assert_array_equal(view, x.T[1:, ::2])
    owner = view.base.base if view.base is not None and view.base.base is not None else view.base
    assert type(owner).__name__ == "_ResultMemory"
    ref = weakref.ref(view)
    del view
    gc.collect()
    assert ref() is None


def test_module_and_function_are_freed():
    m = fnabi.load(MLIR / "memref_abi.mlir")
    f = m.sum_f32
    refs = weakref.ref(m), weakref.ref(f)
    assert f(np.ones(3, np.float32)) == 3.0
    del m, f
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_no_rss_growth_over_many_calls(memref_abi, dict8, mlp):
    """100k calls each of a fresh-result call, a dict of 8 arrays through
    sip and a scalar call: the resident set stays flat (every callee
    allocation freed once, no leaked Python objects)."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    d = {f"k{i}": np.full(4, i, np.float32) for i in range(8)}
    t, s, first = memref_abi.transpose, dict8.dict8, memref_abi.first_f32

    def burst(n):
        for _ in range(n):
            t(x)
            s(d)
            first(x[0])

    burst(20_000)  # warm up: allocator pools, caches
    gc.collect()
    before = rss_bytes()
    burst(100_000)
    gc.collect()
    grown = rss_bytes() - before
    # 100k leaked 256-byte results alone would be 25 MB.
    assert grown < 4 * 1024 * 1024, f"RSS grew by {grown} bytes over 100k calls"
