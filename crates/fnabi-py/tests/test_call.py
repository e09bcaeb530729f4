"""Calling real MLIR-compiled functions: positional, keyword and nested
arguments, scalars and arrays of every dtype, every input layout, and the
shape of results."""

from __future__ import annotations

import json
import subprocess

import ml_dtypes
import numpy as np
import pytest

import fnabi
from conftest import MLIR, PY_FIXTURES, REPO


def mlp_inputs():
    with open(REPO / "examples" / "mlp_inputs.json") as f:
        x, params = json.load(f)

    def arr(d):
        return np.array(d["data"], dtype=np.float32).reshape(d["shape"])

    return arr(x), {k: arr(v) for k, v in params.items()}


def mlp_numpy(x, p):
    h = np.maximum(x @ p["w1"] + p["b1"], 0)
    return h @ p["w2"] + p["b2"]


def test_mlp_nested_dict(mlp):
    x, p = mlp_inputs()
    assert mlp.functions == ["mlp"]
    y = mlp.mlp(x, p)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (2, 3)
    np.testing.assert_allclose(y, mlp_numpy(x, p), rtol=1e-6, atol=1e-6)
    # m["f"], m.f and m.function("f") are the same function.
    np.testing.assert_array_equal(mlp["mlp"](x, p), y)
    np.testing.assert_array_equal(mlp.function("mlp")(x, p), y)


def test_mlp_batch_sizes(mlp):
    rng = np.random.default_rng(0)
    _, p = mlp_inputs()
    for n in (1, 3, 17):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(mlp.mlp(x, p), mlp_numpy(x, p), rtol=1e-5, atol=1e-5)


def test_signature_text(mlp, structured):
    f = mlp.mlp
    assert f.name == "mlp"
    assert f.sip == '([$0, {"b1": $2, "b2": $4, "w1": $1, "w2": $3}]) -> $0'
    assert f.raw == (
        "(Buffer<float32[?x4]>, Buffer<float32[4x8]>, Buffer<float32[8]>, Buffer<float32[8x3]>, "
        "Buffer<float32[3]>) -> (Buffer<float32[?x3]>)"
    )
    assert f.signature.startswith("@mlp(")
    assert "memref<?x4xf32>" in f.signature
    assert f.module is mlp
    assert structured.add_into.sip is None


def test_keyword_arguments(structured):
    x = np.array([1.0, -2.0, 3.5], dtype=np.float32)
    np.testing.assert_array_equal(structured.scale_kw(x=x, scale=2.0), x * 2)
    np.testing.assert_array_equal(structured.scale_kw(scale=0.5, x=x), x * 0.5)
    # An int for a float parameter is fine.
    np.testing.assert_array_equal(structured.scale_kw(x=x, scale=3), x * 3)
    np.testing.assert_array_equal(structured.scale_kw(**{"x": x, "scale": 2.0}), x * 2)


def test_nested_tuple_and_list_arguments(structured):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    b = np.array([0.5, -0.5, 2.0], dtype=np.float32)
    expected = x @ w + b
    np.testing.assert_allclose(structured.affine(x, {"w": w, "b": b}), expected, rtol=1e-6)
    np.testing.assert_allclose(structured.affine(x, {"b": b, "w": w}), expected, rtol=1e-6)


def test_structured_results(structured):
    x = np.array([1.0, 5.0, -2.0, 3.0], dtype=np.float32)
    out = structured.stats(x)
    assert out == {"max": float(x.max()), "sum": float(x.sum())}
    assert isinstance(out["sum"], float)
    # Destination passing: the result fnabi allocates is returned.
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    b = np.array([10, 20, 30, 40], dtype=np.float32)
    np.testing.assert_array_equal(structured.add_into(a, b), a + b)
    np.testing.assert_array_equal(structured.scale_into(np.arange(5, dtype=np.float32), 3.0), np.arange(5) * 3.0)
    # Several results: a tuple.
    r = structured.split_into(a)
    assert isinstance(r, tuple) and len(r) == 2
    np.testing.assert_array_equal(r[0], a * 2)
    np.testing.assert_array_equal(r[1], a[2:])


def test_dict8(dict8):
    arrays = {f"k{i}": np.full(4, i, dtype=np.float32) + np.arange(4, dtype=np.float32) for i in range(8)}
    expected = np.sum(list(arrays.values()), axis=0)
    np.testing.assert_array_equal(dict8.dict8(arrays), expected)


def sip_span(tag: bytes, content: bytes) -> bytes:
    """A length-prefixed SIP component: the length counts the `!` too."""
    return tag + str(len(content) + 1).encode() + b"!" + content


def test_long_and_non_ascii_keys(pyfix):
    # Keys of 27 and 28 bytes (over the 23 that fnabi keeps in place) and
    # non-ASCII ones, in the argument and in the result; the signature is
    # mangled here from the specification, independently of fnabi.
    def sip_dict(keys):
        ordered = sorted(keys.items(), key=lambda kv: kv[0].encode())
        return sip_span(b"D", b"".join(sip_span(b"K", k.encode()) + b"_%d" % i for k, i in ordered))

    inputs = sip_dict({"a_key_longer_than_23_bytes": 0, "k": 1, "ключ": 2})
    results = sip_dict({"difference_of_the_first_two": 0, "é": 1})
    mangled = sip_span(b"I", sip_span(b"S", b"k0" + inputs)) + sip_span(b"R", results)
    assert pyfix.long_keys.sip is not None
    source = PY_FIXTURES.read_text(encoding="utf-8")
    assert f'sip = "{mangled.decode()}"' in source
    a = np.array([5.0, 7.5], np.float32)
    k = np.array([1.0, -2.0], np.float32)
    u = np.array([3.25, -0.5], np.float32)
    for _ in range(3):  # the cached keys are the same each call
        r = pyfix.long_keys({"a_key_longer_than_23_bytes": a, "k": k, "ключ": u})
        assert sorted(r) == ["difference_of_the_first_two", "é"]
        np.testing.assert_array_equal(r["difference_of_the_first_two"], a - k)
        np.testing.assert_array_equal(r["é"], u)
    with pytest.raises(fnabi.CallError) as e:
        pyfix.long_keys({"a_key_longer_than_23_bytes": a, "k": k})
    assert str(e.value) == 'argument [0]: missing key "ключ"'


def test_scalar_results(scalars, memref_abi):
    assert scalars.inc_i8(-128) == -127
    assert scalars.inc_i16(41) == 42
    assert scalars.inc_i32(2**31 - 2) == 2**31 - 1
    assert scalars.inc_i64(-1) == 0
    assert scalars.inc_index(9) == 10
    assert scalars.neg_i1(True) is False
    assert scalars.half_f32(3) == 1.5
    assert scalars.half_f64(-1.0) == -0.5
    assert scalars.neg_f16(1.5) == -1.5
    assert scalars.neg_bf16(2.0) == -2.0
    assert scalars.nothing() is None
    # numpy scalars are the Python scalars they hold.
    assert scalars.inc_i32(np.int32(4)) == 5
    assert scalars.half_f32(np.float32(3.0)) == 1.5
    assert memref_abi.two_results(1, 5) == (2, 10)
    out = scalars.all_types(True, 1, 2, 3, 4, 5, 1.5, 2.5, 3.5, 4.5)
    assert out == (False, 0, 1, 2, 3, 4, -1.5, -2.5, 1.75, 2.25)
    assert [type(v) for v in out] == [bool, int, int, int, int, int, float, float, float, float]


REVERSE_DTYPES = [
    ("i1", np.bool_),
    ("i8", np.int8),
    ("i16", np.int16),
    ("i32", np.int32),
    ("i64", np.int64),
    ("ui8", np.uint8),
    ("ui16", np.uint16),
    ("ui32", np.uint32),
    ("ui64", np.uint64),
    ("f16", np.float16),
    ("bf16", ml_dtypes.bfloat16),
    ("f32", np.float32),
    ("f64", np.float64),
]


@pytest.mark.parametrize("mlir_type,dtype", REVERSE_DTYPES, ids=[t for t, _ in REVERSE_DTYPES])
def test_every_dtype_in_and_out(pyfix, mlir_type, dtype):
    rng = np.random.default_rng(7)
    if dtype == np.bool_:
        x = rng.integers(0, 2, 11).astype(np.bool_)
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 11, dtype=dtype, endpoint=True)
    else:
        x = (rng.standard_normal(11) * 100).astype(dtype)
    y = pyfix[f"reverse_{mlir_type}"](x)
    assert y.dtype == np.dtype(dtype)
    assert y.shape == x.shape
    np.testing.assert_array_equal(y.view(np.uint8), x[::-1].copy().view(np.uint8))


def test_every_dtype_rejects_others(pyfix):
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(fnabi.CallError) as e:
        pyfix.reverse_f32(x)
    assert (e.value.path, e.value.expected, e.value.got) == ("[0]", "f32", "i32")
    with pytest.raises(fnabi.CallError) as e:
        pyfix.reverse_ui8(x.astype(np.int8))
    assert (e.value.expected, e.value.got) == ("u8", "i8")


def test_bool_and_rank0_results(memref_abi):
    m = np.array([True, False, False, True])
    out = memref_abi.not_mask(m)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, ~m)
    r = memref_abi.rank0_double(np.array(2.25))
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == np.float64 and r == 4.5


def test_results_own_their_memory(memref_abi):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = memref_abi.transpose(x)
    np.testing.assert_array_equal(t, x.T)
    assert t.flags.c_contiguous and t.flags.writeable
    assert type(t.base).__name__ == "_ResultMemory"
    t[0, 0] = 42  # writable memory of its own
    assert x[0, 0] == 0
    # Aligned allocation (allocated != aligned pointer).
    a = memref_abi.alloc_aligned(5)
    np.testing.assert_array_equal(a, np.arange(5, dtype=np.float32))
    assert a.ctypes.data % 64 == 0
    # The same allocation returned twice: two views of one memory.
    r1, r2 = memref_abi.twice(4)
    np.testing.assert_array_equal(r1, np.arange(4))
    assert np.shares_memory(r1, r2)
    # A module global comes back as its values.
    np.testing.assert_array_equal(memref_abi.global_table(), [1.5, 2.5, 3.5, 4.5])
    u = memref_abi.to_unranked(np.ones((2, 3), np.float32))
    assert u.shape == (2, 3)


def test_no_result_and_static_shapes(memref_abi):
    np.testing.assert_array_equal(memref_abi.iota_2x3(), np.arange(6, dtype=np.int32).reshape(2, 3))
    assert memref_abi.iota_2x3().dtype == np.int32


def weighted(m):
    """sum over (i, j) of m[i, j] * (i * cols + j + 1): the fixtures' check."""
    r, c = m.shape
    w = np.arange(1, r * c + 1, dtype=np.float64).reshape(r, c)
    return float((m.astype(np.float64) * w).sum())


def test_layouts_zero_copy_and_converted(memref_abi):
    base = np.arange(48, dtype=np.float64).reshape(6, 8)
    for view in (
        base,  # C order
        np.asfortranarray(base),  # Fortran order: converted for an identity-layout memref
        base[::2, 1::3],  # strided
        base[::-1, ::-1],  # negative strides
        base.T,  # transposed view
    ):
        assert memref_abi.weighted_sum2d(view) == pytest.approx(weighted(view), rel=1e-12)
    f = np.arange(12, dtype=np.float32).reshape(3, 4)
    for view in (f, f.T, f[::-1], f[:, ::2], np.asfortranarray(f)):
        assert memref_abi.sum_strided(view) == pytest.approx(weighted(view), rel=1e-6)
    cm = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3) + 1)
    assert memref_abi.sum_colmajor(cm) == pytest.approx(weighted(cm), rel=1e-6)
    # A C-order array for a column-major memref is converted.
    assert memref_abi.sum_colmajor(np.ascontiguousarray(cm)) == pytest.approx(weighted(cm), rel=1e-6)
    v = np.arange(10, dtype=np.float32)[::-3]
    assert memref_abi.sum_f32(v) == pytest.approx(float(v.sum()))
    assert memref_abi.sum_f32(np.zeros(0, np.float32)) == 0.0
    # Strides that are not whole elements (6 bytes apart, then 1 byte off
    # alignment as well): the values are read through a copy.
    raw = np.frombuffer(np.arange(1, 9, dtype=np.float32).tobytes() * 2, np.uint8)
    for offset, step in ((0, 6), (1, 6), (2, 10)):
        odd = np.ndarray((3,), np.float32, buffer=raw, offset=offset, strides=(step,))
        assert memref_abi.sum_f32(odd) == pytest.approx(float(odd.astype(np.float64).sum()))
    assert memref_abi.sum_f32(np.arange(12, dtype=np.float32)[::-4]) == 11 + 7 + 3


def test_dense_input_is_not_copied(memref_abi):
    # scale_f32 writes into its argument: a dense array is passed as is.
    a = np.arange(5, dtype=np.float32)
    memref_abi.scale_f32(a, 2.0)
    np.testing.assert_array_equal(a, np.arange(5) * 2.0)
    # A strided view that the memref's layout cannot describe is converted:
    # the function writes a copy, not the caller's array.
    b = np.arange(10, dtype=np.float32)
    memref_abi.scale_f32(b[::2], 2.0)
    np.testing.assert_array_equal(b, np.arange(10))


def test_non_writeable_and_byte_swapped_inputs(memref_abi):
    x = np.arange(6, dtype=np.float32)
    x.flags.writeable = False
    assert memref_abi.sum_f32(x) == 15.0
    ro = np.frombuffer(np.arange(4, dtype=np.float32).tobytes(), dtype=np.float32)
    assert memref_abi.sum_f32(ro) == 6.0
    swapped = np.arange(4, dtype=">f4")
    assert memref_abi.sum_f32(swapped) == 6.0


def test_ml_dtypes_missing_is_named(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import fnabi\n"
        f"m = fnabi.load({str(REPO / 'crates/fnabi-py/tests/mlir/py_fixtures.mlir')!r})\n"
        "import numpy as np\n"
        "try:\n"
        "    m.reverse_bf16(np.zeros(2, np.float32))\n"
        "except fnabi.CallError as e:\n"
        "    print('call', e.expected, e.got)\n"
        "f = fnabi.compile_mlir('func.func @z(%n: index) -> memref<?xbf16> { %m = memref.alloc(%n) : memref<?xbf16>\\n return %m : memref<?xbf16> }')\n"
        "try:\n"
        "    f.z(2)\n"
        "except fnabi.Error as e:\n"
        "    print('result', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "call bf16 f32" in out
    assert "ml_dtypes" in out.split("result", 1)[1]


def test_library_without_source(pyfix):
    """A shared library of MLIR-compiled code (here the one fnabi compiled
    the fixtures into) takes its functions' types from `signature=`."""
    import pickle

    lib = pyfix.library_path
    m = fnabi.load(lib, signature={"count_above": "(memref<?xi32>, i32) -> i32"})
    assert m.kind == "library" and m.path == lib
    assert {"count_above", "reverse_f32", "spin"} <= set(m.functions)
    x = np.array([3, 9, 1, 12], np.int32)
    assert m.count_above(x, 2) == int((x > 2).sum())
    bare = fnabi.load(lib)
    with pytest.raises(fnabi.Error, match="type"):
        bare.count_above(x, 2)
    f = bare.function("reverse_f32", signature="(memref<?xf32>) -> memref<?xf32>")
    assert f.raw == "(Buffer<float32[?]>) -> (Buffer<float32[?]>)"
    np.testing.assert_array_equal(f(np.arange(3, dtype=np.float32)), [2, 1, 0])
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(np.arange(2, dtype=np.float32)), [1, 0])
    h = bare.function("count_above", signature=fnabi.mangle("(Buffer<sint32[?]>, sint32) -> (sint32)"))
    assert h(x, 5) == int((x > 5).sum())


def test_llvm_level_module_needs_signatures_for_pointers(tmp_path):
    """An LLVM-dialect module (lowered here by Debian's mlir-opt): scalar
    functions run as they are; one that takes memref descriptors needs its
    MLIR type, and asking for it without one is a LoadError that says how
    (not a missing function: it is listed and `in` the module)."""
    lowered = tmp_path / "lowered.mlir"
    flags = ["--convert-scf-to-cf", "--expand-strided-metadata", "--finalize-memref-to-llvm"]
    flags += ["--convert-arith-to-llvm", "--convert-index-to-llvm", "--convert-cf-to-llvm"]
    flags += ["--convert-func-to-llvm", "--reconcile-unrealized-casts"]
    subprocess.run(["mlir-opt-22", str(MLIR / "llvm_entry.mlir"), "-o", str(lowered), *flags], check=True)
    m = fnabi.load(lowered)
    assert m.kind == "mlir"
    assert "dot" in m.functions and "dot" in m
    assert m.main() == sum(i * i for i in range(1, 11))
    with pytest.raises(fnabi.LoadError, match=r"signature=") as e:
        m.dot
    assert not isinstance(e.value, fnabi.FunctionNotFoundError)
    with pytest.raises(fnabi.FunctionNotFoundError):
        m.nope
    typed = fnabi.load(lowered, signature={"dot": "(memref<?xf32>, memref<?xf32>) -> f32"})
    a, b = np.arange(1, 4, dtype=np.float32), np.arange(4, 7, dtype=np.float32)
    assert typed.dot(a, b) == float(a @ b)
    # The source's own type is checked against a given one.
    source = fnabi.load(MLIR / "llvm_entry.mlir", signature={"dot": "(memref<?xf64>, memref<?xf64>) -> f64"})
    with pytest.raises(fnabi.CallError, match="expected"):
        source.dot(a, b)
    source = fnabi.load(MLIR / "llvm_entry.mlir", signature={"dot": "(memref<?xf32>, memref<?xf32>) -> f32"})
    assert source.dot(a, b) == float(a @ b)


def test_float8_passes_through_ml_dtypes():
    # f8E4M3FN values exactly representable (hand-derived: 1.5 = 0x3c,
    # -2 = 0xc0, 448 = 0x7e, 0.015625 = 2**-6 = 0x08): reversed bit for bit.
    m = fnabi.load(REPO / "crates/fnabi/tests/mlir/float8.mlir")
    x = np.array([1.5, -2.0, 448.0, 0.015625], dtype=ml_dtypes.float8_e4m3fn)
    y = m.reverse(x)
    assert y.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert y.view(np.uint8).tolist() == [0x08, 0x7E, 0xC0, 0x3C]
    assert y.astype(np.float32).tolist() == [0.015625, 448.0, -2.0, 1.5]


def test_vector_signatures_take_and_return_arrays():
    # Public functions with vector<…> arguments and results, called through
    # fnabi's wrapper: each vector is a numpy array of its shape.
    m = fnabi.load(REPO / "crates/fnabi/tests/mlir/vectors.mlir")
    r = m.vadd(np.array([1, 2, 3, 4], np.float32), np.array([10, 20, 30, 40], np.float32))
    assert r.dtype == np.float32 and r.tolist() == [11, 22, 33, 44]
    t = np.array([5, 6], np.float32)
    flags = np.array([[1, 0, 1], [0, 0, 1]], bool)
    neg, s, same = m.mixed(t, 1.5, flags)
    assert neg.dtype == np.bool_ and neg.tolist() == [[False, True, False], [True, True, False]]
    assert s == 1.5 and same.tolist() == [5, 6]
    with pytest.raises(fnabi.CallError) as e:
        m.vadd(np.zeros(3, np.float32), np.zeros(4, np.float32))
    assert (e.value.path, e.value.expected, e.value.got) == ("[0]", "4", "3")


def test_complex_arrays_in_and_out():
    # complex.mlir (issue 14): numpy complex64/complex128 pass in as they
    # are and come back as numpy complex arrays; expected values by numpy.
    m = fnabi.load(REPO / "crates/fnabi/tests/mlir/complex.mlir")
    a = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=np.complex64)
    b = np.array([0.5 + 0.5j, -2 + 0j, 4 - 3j], dtype=np.complex64)
    p = m.cmul(a, b)
    assert p.dtype == np.complex64
    np.testing.assert_allclose(p, a * b, rtol=1e-6)
    mag, conj = m.abs_conj(a)
    assert (mag.dtype, conj.dtype) == (np.float32, np.complex64)
    np.testing.assert_allclose(mag, np.abs(a), rtol=1e-6)
    assert conj.tolist() == np.conj(a).tolist()
    z = np.array([[1 + 2j, complex(np.nan, -np.inf)], [complex(-0.0, 0.1), 1e-300 - 5e300j]])
    y = m.pass128(z)
    assert y.dtype == np.complex128
    assert y.view(np.uint64).tolist() == z.view(np.uint64).tolist()
    # complex64 is 4-byte aligned but 8 bytes wide: a 12-byte stride is
    # aligned yet not a whole number of elements, so it is read through a
    # copy (a stride cut down to 1 element would read the wrong values).
    parts = np.arange(1, 13, dtype=np.float32)
    odd = np.ndarray((3,), np.complex64, buffer=parts, offset=0, strides=(12,))
    assert odd.flags.aligned and odd.tolist() == [1 + 2j, 4 + 5j, 7 + 8j]
    np.testing.assert_allclose(m.cmul(odd, b), odd * b, rtol=1e-6)
    r = m.fma0(np.array(1 + 2j), np.array(3 - 1j))
    assert r.dtype == np.complex128 and r.shape == () and complex(r) == (1 + 2j) * (3 - 1j) + 1
    with pytest.raises(fnabi.CallError) as e:
        m.cmul(a.real.copy(), b)
    assert (e.value.expected, e.value.got) == ("c64", "f32")


def test_numbers_for_0d_tensor_parameters():
    # A Python number (or numpy scalar) for a 0-d tensor parameter is a 0-d
    # array of its dtype, as `fnabi run` reads a bare number; it was
    # "expected an array, got float". Arrays are still never cast.
    m = fnabi.compile_mlir(
        "func.func @scale(%x: tensor<3xf32>, %s: tensor<f32>) -> tensor<3xf32> {\n"
        "  %v = tensor.extract %s[] : tensor<f32>\n"
        "  %b = tensor.splat %v : tensor<3xf32>\n"
        "  %r = arith.mulf %x, %b : tensor<3xf32>\n"
        "  return %r : tensor<3xf32>\n"
        "}\n"
    )
    x = np.array([1, 2, 3], np.float32)
    for s in (2.5, np.float32(2.5), np.array(2.5, np.float32)):
        np.testing.assert_array_equal(m.scale(x, s), x * np.float32(2.5))
    np.testing.assert_array_equal(m.scale(x, 2), x * np.float32(2))
    np.testing.assert_array_equal(m.scale(x, 0.1), x * np.float32(0.1))
    with pytest.raises(fnabi.CallError, match="out of range for f32"):
        m.scale(x, 1e39)
    with pytest.raises(fnabi.CallError):
        m.scale(x, np.array(2.5))  # a float64 array: not cast
    # Only numbers are converted: a list beside a number gets the call's
    # own error (it was "nested deeper than the array's rank").
    two = fnabi.compile_mlir(
        "func.func @add(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {\n"
        "  %r = arith.addf %a, %b : tensor<f32>\n"
        "  return %r : tensor<f32>\n"
        "}\n"
    )
    assert two.add(1.5, 2) == np.float32(3.5)
    with pytest.raises(fnabi.CallError) as e:
        two.add([1.0], 2.0)
    assert (e.value.path, e.value.expected, e.value.got) == ("[0]", "an array", "a list")
