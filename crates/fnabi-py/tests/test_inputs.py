"""Array-like inputs that numpy views without copying: a DLPack producer,
`__array__`, the buffer protocol. Zero copy is shown by a function that
writes into its argument."""

from __future__ import annotations

import array

import numpy as np
import pytest

import fnabi
from conftest import MLIR, run_child


class DLPackOnly:
    """A producer with only the DLPack protocol (as a CPU torch/JAX tensor)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class ArrayOnly:
    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a


def test_dlpack_producer_zero_copy(memref_abi):
    a = np.arange(6, dtype=np.float32)
    assert memref_abi.sum_f32(DLPackOnly(a)) == 15.0
    memref_abi.scale_f32(DLPackOnly(a), 3.0)
    np.testing.assert_array_equal(a, np.arange(6) * 3.0)


def test_array_protocol_zero_copy(memref_abi):
    a = np.arange(4, dtype=np.float32)
    memref_abi.scale_f32(ArrayOnly(a), 2.0)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])


def test_buffer_protocol_zero_copy(memref_abi):
    buf = array.array("f", [1.0, 2.0, 3.0])
    memref_abi.scale_f32(buf, 2.0)
    assert list(buf) == [2.0, 4.0, 6.0]
    assert memref_abi.sum_f32(memoryview(buf)) == 12.0
    # A dtype mismatch is still an error, never a cast.
    with pytest.raises(fnabi.CallError) as e:
        memref_abi.sum_f32(array.array("d", [1.0]))
    assert (e.value.expected, e.value.got) == ("f32", "f64")


def test_nested_array_likes(mlp):
    from test_call import mlp_inputs, mlp_numpy

    x, p = mlp_inputs()
    wrapped = {k: DLPackOnly(v) for k, v in p.items()}
    np.testing.assert_allclose(mlp.mlp(ArrayOnly(x), wrapped), mlp_numpy(x, p), rtol=1e-6, atol=1e-6)


READ_ONLY = """
import sys
import numpy as np
import fnabi

m = fnabi.load(sys.argv[1])
path = sys.argv[2]
np.save(path, np.array([2, 5, 9], np.float32))
raw = np.array([2, 5, 9], np.float32).tobytes()
frozen = np.array([2, 5, 9], np.float32)
frozen.flags.writeable = False
for a in (np.load(path, mmap_mode="r"), np.frombuffer(raw, np.float32), frozen, memoryview(raw).cast("f")):
    assert m.bump_first(a) == 2.0
    assert np.asarray(a).tolist() == [2, 5, 9], a
assert raw == np.array([2, 5, 9], np.float32).tobytes()
assert np.load(path).tolist() == [2, 5, 9]
w = np.array([2, 5, 9], np.float32)
assert m.bump_first(w) == 2.0 and w.tolist() == [3, 5, 9]
assert m.same(frozen).tolist() == [2, 5, 9]
# A converted argument is a copy: the update does not reach the caller.
for converted in (np.array([2, 5, 9], ">f4"), np.array([9, 0, 5, 0, 2], np.float32)[::-2]):
    assert m.bump_first(converted) == 2.0 and converted.tolist() == [2, 5, 9]
print("ok")
"""


def test_read_only_memory_is_never_written(tmp_path):
    """A function that writes its argument in place (memref-level) gets a
    copy of memory that must not be written: a read-only mapping
    (``mmap_mode="r"``: the write crashed the interpreter), a view of
    ``bytes`` (which it changed), an array marked read-only, a read-only
    buffer. A writable array is still updated in place (unless it had to be
    converted: then the copy is), and a tensor-level
    function (which cannot write its argument) reads read-only memory as it
    is. In a child process, so that a crash fails the test."""
    run = run_child(READ_ONLY, MLIR / "in_place.mlir", tmp_path / "y.npy")
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr
