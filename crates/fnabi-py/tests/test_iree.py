"""Real IREE 3.13 modules (crates/fnabi/tests/fixtures/iree) through the
same Python interface: structured arguments by their `iree.abi` records,
keyword arguments through `named` records, both devices, errors, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import fnabi


@pytest.fixture(scope="module", params=["local-sync", "local-task"])
def add(iree_dir, request):
    return fnabi.load(iree_dir / "add.vmfb", device=request.param)


@pytest.fixture(scope="module")
def nested(iree_dir):
    return fnabi.load(iree_dir / "nested.vmfb")


def test_add_module(add):
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([10, 20, 30, 40], np.float32)
    assert add.kind == "vmfb"
    assert set(add.functions) == {"add", "add_one", "scale", "add_i32"}
    np.testing.assert_array_equal(add.add(a, b), a + b)
    np.testing.assert_array_equal(add.add_one(a), a + 1)
    np.testing.assert_array_equal(add.scale(a, 2.5), a * 2.5)
    assert add.add_i32(2, 40) == 42
    # Strided and Fortran inputs are converted for the runtime.
    np.testing.assert_array_equal(add.add(np.arange(8, dtype=np.float32)[::2], b), np.arange(8)[::2] + b)


def test_a_module_by_another_name_is_known_by_its_bytes(iree_dir, tmp_path):
    # `iree-compile -o model.bin`: an IREE module whatever its file is called,
    # as `fnabi run` knows it; other files without a known extension still
    # load as shared libraries (and say what they are not).
    renamed = tmp_path / "model.bin"
    renamed.write_bytes((iree_dir / "add.vmfb").read_bytes())
    m = fnabi.load(renamed)
    assert m.kind == "vmfb"
    assert m.add_i32(2, 40) == 42
    other = tmp_path / "weights.bin"
    other.write_bytes(b"\0" * 64)
    with pytest.raises(fnabi.LoadError, match="no ELF header"):
        fnabi.load(other)


def test_results_are_read_only_views_of_runtime_buffers(add):
    a = np.ones(4, np.float32)
    y = add.add_one(a)
    assert not y.flags.writeable
    assert type(y.base).__name__ == "_ResultMemory"


def test_multi_result_and_dynamic(iree_dir):
    m = fnabi.load(iree_dir / "multi_result.vmfb")
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([10, 20, 30, 40], np.float32)
    s, p, n = m.sum_and_product(a, b)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)
    assert n == 42
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.array([1.5, -2, 3], np.float64)
    r0, r1 = m.mixed(np.asfortranarray(x), y)
    np.testing.assert_array_equal(r0, x.T)
    np.testing.assert_array_equal(r1, -y)
    d = fnabi.load(iree_dir / "dynamic.vmfb")
    z = np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_array_equal(d.dyn_add(z, z[::-1]), z + z[::-1])
    assert d.dyn_dim(np.zeros((7, 4), np.float32)) == 7


def test_async_module(iree_dir):
    m = fnabi.load(iree_dir / "async.vmfb")
    a = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(m.add_async(a, a), a + a)


def test_nested_structures_and_keywords(nested):
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([10, 20, 30, 40], np.float32)
    c = np.full(4, 2, np.float32)
    out = nested.nested_deep({"a": [a, b], "b": {"c": c}}, alpha=3.0)
    assert isinstance(out, tuple) and isinstance(out[1], dict) and isinstance(out[1]["t"], tuple)
    # (a + b) * c + alpha * b ... as the fixture's README records: [15, 28, 41, 54].
    np.testing.assert_array_equal(out[0], [15, 28, 41, 54])
    np.testing.assert_array_equal(out[1]["s"], a + b)
    np.testing.assert_array_equal(out[1]["t"][0], a * c)
    np.testing.assert_array_equal(out[1]["t"][1], b * c)
    x = a.reshape(1, 4)
    y = b.reshape(1, 4)
    s, p = nested.dict_in_tuple_out({"y": y, "x": x})
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(p, x * y)
    d = {f"k{i}": np.full(4, i, np.float32) for i in range(8)}
    np.testing.assert_array_equal(nested.dict8(d), np.full(4, 28, np.float32))
    assert nested.bytes_sum([1, 2, 3, 4, -6]) == (4, 5)
    assert nested.str_len("hello") == (5, 104)
    assert nested.nested_deep.signature.startswith("@nested_deep(")


def test_iree_error_attributes_come_from_the_typed_error(nested, add):
    a = np.ones(4, np.float32)

    def raised(f, *args, **kwargs):
        with pytest.raises(fnabi.CallError) as e:
            f(*args, **kwargs)
        return e.value.path, e.value.expected, e.value.got

    # Rank and dim of an array argument.
    assert raised(add.add, a, np.ones((2, 2), np.float32)) == ("[1]", "1", "2")
    assert raised(add.add, np.ones(5, np.float32), a) == ("[0]", "4", "5")
    # Arity: a missing argument at its position, one too many at the root.
    assert raised(add.add, a) == ("[1]", "an argument", "none")
    assert raised(add.add, a, a, a) == ("", "2 positional", "3")
    # A missing dict key, at the dict; a value out of its record's range, at the item.
    seven = {f"k{i}": a for i in range(7)}
    assert raised(nested.dict8, seven) == ("[0]", 'key "k7"', "no such key")
    assert raised(nested.bytes_sum, [1, 2, 3, 4, 300]) == ("[0][4]", "i8 in -128..=127", "300")
    # A missing keyword argument, at its keyword.
    deep = {"a": [a, a], "b": {"c": a}}
    assert raised(nested.nested_deep, deep) == ('["alpha"]', "an argument", "none")


def test_iree_errors(nested, add):
    a = np.ones(4, np.float32)
    with pytest.raises(fnabi.CallError) as e:
        add.add(a.astype(np.int32), a)
    assert e.value.path == "[0]" and "f32[4]" in str(e.value)
    with pytest.raises(fnabi.CallError) as e:
        nested.nested_deep({"a": [a, a], "b": {"c": a.astype(np.float64)}}, alpha=1.0)
    assert e.value.path == '[0]["b"]["c"]'
    assert (e.value.expected, e.value.got) == ("f32", "f64")
    assert str(e.value) == 'argument [0]["b"]["c"] (f32[4]): element type: expected f32, got f64'
    with pytest.raises(fnabi.CallError):
        nested.nested_deep({"a": [a, a], "b": {"c": a}})
    with pytest.raises(fnabi.FunctionNotFoundError):
        nested["nope"]
    with pytest.raises(fnabi.Error):
        fnabi.load(add.path, device="cuda")


def test_iree_pickle(nested):
    f = pickle.loads(pickle.dumps(nested.dict8))
    d = {f"k{i}": np.full(4, i, np.float32) for i in range(8)}
    np.testing.assert_array_equal(f(d), np.full(4, 28, np.float32))


def test_mlir_source_on_both_backends(iree_dir):
    """The same tensor-level .mlir through iree-compile and IREE's runtime,
    and through the MLIR backend: both equal numpy's forward pass."""
    from conftest import REPO

    src = REPO / "examples" / "mlp_tensor.mlir"
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w1, b1 = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    w2, b2 = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    on_iree = fnabi.load(src, backend="iree")
    on_mlir = fnabi.load(src)
    assert on_iree.kind == "vmfb" and on_mlir.kind == "mlir"
    for m in (on_iree, on_mlir):
        np.testing.assert_allclose(m.mlp(x, w1, b1, w2, b2), want, rtol=1e-5, atol=1e-5)
    # The compiled module pickles as its bytes.
    again = pickle.loads(pickle.dumps(on_iree))
    np.testing.assert_allclose(again.mlp(x, w1, b1, w2, b2), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(fnabi.CallError, match="backend= applies to MLIR source"):
        fnabi.load(iree_dir / "add.vmfb", backend="iree")
    with pytest.raises(fnabi.CallError, match="signature= applies to the MLIR backend"):
        fnabi.load(src, backend="iree", signature="(memref<?xf32>) -> f32")
    with pytest.raises(fnabi.CallError, match='backend must be "mlir" or "iree"'):
        fnabi.load(src, backend="tpu")
