"""Threads and processes: calls release the GIL; one Function serves
several threads at once; Module and Function pickle into a process pool."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import pickle
import threading
import time

import numpy as np

import fnabi
from conftest import MLIR, PY_FIXTURES, run_child


def spin_expected(n: int) -> float:
    # Closed form of x = x * a + 1 from 0: (1 - a^n) / (1 - a).
    a = 0.999999
    return (1 - a**n) / (1 - a)


def test_one_function_many_threads(memref_abi, dict8):
    f, g = memref_abi.transpose, dict8.dict8

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(300):
            x = rng.standard_normal((5, 7)).astype(np.float32)
            np.testing.assert_array_equal(f(x), x.T)
            d = {f"k{i}": rng.standard_normal(4).astype(np.float32) for i in range(8)}
            np.testing.assert_allclose(g(d), np.sum(list(d.values()), axis=0), rtol=1e-5, atol=1e-6)
        return seed

    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        assert sorted(pool.map(work, range(8))) == list(range(8))


CALLS_BACK = """
import sys
import numpy as np
import fnabi

g = fnabi.load(sys.argv[1]).dict8
inner = {f"k{i}": np.full(4, i, np.float32) for i in range(8)}


class CallsBack:
    def __array__(self, dtype=None, copy=None):
        return np.asarray(g(inner))  # 0 + 1 + ... + 7 = 28


outer = {f"k{i}": np.full(4, 10 * i, np.float32) for i in range(8)}
outer["k3"] = CallsBack()
expected = sum(10 * i for i in range(8) if i != 3) + 28
for _ in range(3):
    np.testing.assert_array_equal(g(outer), np.full(4, expected, np.float32))
np.testing.assert_array_equal(g(inner), np.full(4, 28, np.float32))
print("ok")
"""


def test_a_conversion_that_calls_back_into_fnabi():
    """An argument whose conversion calls a function with a dict again,
    while the outer call is converting its own dict keys (the key cache is
    then held): neither call blocks, and neither mixes up the keys. In a
    child process, so that a call that blocks (holding the GIL) fails the
    test instead of hanging it."""
    run = run_child(CALLS_BACK, MLIR / "sip_dict8.mlir")
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr


def test_calls_release_the_gil(pyfix):
    """While one thread is in a long native call, another runs Python."""
    n = 150_000_000
    window = {}
    ticks = []

    def call():
        window["start"] = time.perf_counter()
        window["result"] = pyfix.spin(n)
        window["end"] = time.perf_counter()

    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    t = threading.Thread(target=call)
    c = threading.Thread(target=count)
    c.start()
    t.start()
    t.join()
    stop.set()
    c.join()
    start, end = window["start"], window["end"]
    assert end - start > 0.1, "the call was too short to tell"
    inside = [x for x in ticks if start + 0.02 < x < end - 0.02]
    assert len(inside) > 100, f"only {len(inside)} Python steps ran during a {end - start:.2f} s native call"
    assert abs(window["result"] - spin_expected(n)) < 1e-3 * spin_expected(n)


def _call_in_worker(f, x):
    return f(x)


def _call_module_in_worker(m, x):
    return m["transpose"](x)


def test_pickle_round_trip(memref_abi):
    f = memref_abi.transpose
    g = pickle.loads(pickle.dumps(f))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(g(x), x.T)
    m = pickle.loads(pickle.dumps(memref_abi))
    assert m.functions == memref_abi.functions
    assert m.kind == "mlir" and m.path == MLIR / "memref_abi.mlir"
    src = fnabi.compile_mlir(PY_FIXTURES.read_text())
    h = pickle.loads(pickle.dumps(src.count_above))
    assert h(np.array([1, 5, 9], np.int32), 4) == 2


def test_process_pool(memref_abi):
    ctx = multiprocessing.get_context("spawn")
    xs = [np.arange(k * 3, dtype=np.float32).reshape(k, 3) for k in (1, 2, 5)]
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        outs = list(pool.map(_call_in_worker, [memref_abi.transpose] * len(xs), xs))
        outs2 = list(pool.map(_call_module_in_worker, [memref_abi] * len(xs), xs))
    for x, y, z in zip(xs, outs, outs2):
        np.testing.assert_array_equal(y, x.T)
        np.testing.assert_array_equal(z, x.T)
