"""Bad input raises fnabi.Error (a subclass) naming the index path and
expected vs got; nothing crashes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import fnabi
from conftest import MLIR, REPO, run_child
from test_call import mlp_inputs


def test_hierarchy():
    for cls in (
        fnabi.CallError,
        fnabi.SignatureError,
        fnabi.LoadError,
        fnabi.FunctionNotFoundError,
        fnabi.CompileError,
        fnabi.ExecutionError,
    ):
        assert issubclass(cls, fnabi.Error)
    assert issubclass(fnabi.CallError, ValueError)
    assert issubclass(fnabi.FunctionNotFoundError, KeyError)
    assert issubclass(fnabi.FunctionNotFoundError, AttributeError)


def test_wrong_dtype_names_the_path(mlp):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w2": p["w2"].astype(np.float64)})
    assert e.value.path == '[1]["w2"]'
    assert (e.value.expected, e.value.got) == ("f32", "f64")
    assert '[1]["w2"]' in str(e.value)


def test_wrong_static_dim_and_rank(mlp):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w1": p["w1"][:3]})
    assert e.value.path == '[1]["w1"]'
    assert (e.value.expected, e.value.got) == ("4", "3")
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x[0], p)
    assert e.value.path == "[0]"
    assert e.value.expected == "2"


def test_error_attributes_come_from_the_typed_error(mlp):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w1": p["w1"].ravel()})
    assert (e.value.path, e.value.expected, e.value.got) == ('[1]["w1"]', "2", "1")
    assert str(e.value).startswith('argument [1]["w1"] (memref<4x8xf32>, raw argument 1): rank: ')
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {k: v for k, v in p.items() if k != "b2"})
    assert (e.value.path, e.value.expected, e.value.got) == ("[1]", 'key "b2"', "no such key")
    assert str(e.value) == 'argument [1]: missing key "b2"'
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w3": p["w2"]})
    assert (e.value.path, e.value.expected, e.value.got) == ("[1]", "no such key", 'key "w3"')


def test_missing_and_unknown_keys(mlp):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {k: v for k, v in p.items() if k != "b2"})
    assert e.value.path == "[1]" and "b2" in str(e.value)
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w3": p["w2"]})
    assert e.value.path == "[1]" and "w3" in str(e.value)
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, [p["w1"]])
    assert e.value.path == "[1]"
    assert (e.value.expected, e.value.got) == ("a dict", "a list")


def test_arity(mlp, structured):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x)
    assert e.value.path == "[1]"
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, p, x)
    assert (e.value.expected, e.value.got) == ("2 positional", "3")
    with pytest.raises(fnabi.CallError):
        structured.scale_kw(x=np.ones(2, np.float32), scale=1.0, bias=2.0)
    with pytest.raises(fnabi.CallError):
        structured.add_into(np.ones(4, np.float32), np.ones(4, np.float32), y=1)


def test_scalar_checks(scalars):
    with pytest.raises(fnabi.CallError) as e:
        scalars.inc_i32(1.5)
    assert e.value.path == "[0]" and e.value.got == "float 1.5"
    with pytest.raises(fnabi.CallError, match="out of range"):
        scalars.inc_i8(300)
    with pytest.raises(fnabi.CallError):
        scalars.neg_i1(2)
    with pytest.raises(fnabi.CallError):
        scalars.inc_i32("3")
    with pytest.raises(fnabi.CallError) as e:
        scalars.inc_i64(2**70)
    assert e.value.path == "[0]"


def test_unsupported_python_objects(mlp, memref_abi):
    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "b1": {1, 2}})
    assert e.value.path == '[1]["b1"]' and e.value.got == "set"
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, 3: p["b1"]})
    assert e.value.path == "[1]"
    # complex64 is an element type (issue 14), just not this one.
    with pytest.raises(fnabi.CallError) as e:
        memref_abi.sum_f32(np.zeros(3, np.complex64))
    assert (e.value.expected, e.value.got) == ("f32", "c64")
    with pytest.raises(fnabi.CallError, match="clongdouble|complex256|float128"):
        memref_abi.sum_f32(np.zeros(3, np.clongdouble))
    with pytest.raises(fnabi.CallError):
        memref_abi.sum_f32(np.zeros(3, object))


DEEP = """
import sys, fnabi
m = fnabi.load(sys.argv[1])
for make in (lambda x: [x], lambda x: (x,), lambda x: {"a": x}):
    x = 1.0
    for _ in range(100_000):
        x = make(x)
    try:
        m.mlp(x, {})
    except fnabi.CallError as e:
        print(e.path.count("["), e.expected, e.got)
"""


def test_values_nested_past_the_depth_limit():
    """A value nested deeper than any structure (128 levels) is a CallError
    at the level where it passes the limit, not a stack overflow (100 000
    levels crashed the interpreter). In a child process, so that a crash
    fails the test instead of the run."""
    run = run_child(DEEP, REPO / "examples" / "mlp.mlir")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "129 at most 128 levels a list at level 129",
        "129 at most 128 levels a tuple at level 129",
        "129 at most 128 levels a dict at level 129",
    ], run.stdout


def test_lookup_errors(mlp, tmp_path):
    with pytest.raises(fnabi.FunctionNotFoundError):
        mlp["nope"]
    with pytest.raises(KeyError):
        mlp["nope"]
    with pytest.raises(AttributeError):
        mlp.nope
    assert not hasattr(mlp, "nope")
    assert "mlp" in mlp and "nope" not in mlp
    assert "mlp" in dir(mlp)
    with pytest.raises(fnabi.LoadError):
        fnabi.load(tmp_path / "missing.mlir")
    with pytest.raises(fnabi.LoadError):
        fnabi.load(tmp_path / "missing.so")
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: i32) -> i32 { return %y : i32 }\n")
    with pytest.raises(fnabi.CompileError) as e:
        fnabi.load(bad)
    assert "mlir-opt" in str(e.value)
    assert f"{bad}:1:" in str(e.value)
    # Text has no file: its errors name `<string>`, as Python's `compile`.
    with pytest.raises(fnabi.CompileError) as e:
        fnabi.compile_mlir(bad.read_text())
    assert "<string>:1:" in str(e.value) and "input.mlir" not in str(e.value)
    with pytest.raises(fnabi.CallError):
        fnabi.load(MLIR / "scalars.mlir", device="local-task")
    # A file is checked as `fnabi run` checks it; source text is any module.
    for text, message in [
        (" \n", "is empty: there is nothing to compile"),
        ("module {}\n", "has no function to call"),
    ]:
        src = tmp_path / "nothing.mlir"
        src.write_text(text)
        with pytest.raises(fnabi.LoadError, match=message) as e:
            fnabi.load(src)
        assert str(src) in str(e.value)
        assert fnabi.compile_mlir(text).functions == []


def test_signature_errors():
    with pytest.raises(fnabi.SignatureError) as e:
        fnabi.demangle("I5!B1!")
    with pytest.raises(fnabi.SignatureError) as e:
        fnabi.demangle("I5!B1!", kind="raw")
    assert e.value.offset == 0
    assert "span declares 5 byte(s)" in str(e.value)
    with pytest.raises(fnabi.SignatureError):
        fnabi.mangle("(Buffer<float32[?x4]>")
    with pytest.raises(fnabi.SignatureError, match="ambiguous"):
        fnabi.demangle("I1!R1!")
    # A long one is quoted by its start and length; the offset says where.
    for kind in (None, "raw", "sip"):
        with pytest.raises(fnabi.SignatureError) as e:
            fnabi.demangle("I100000!" + "B3!d4" * 20000, kind=kind)
        assert "[100008 bytes]" in str(e.value) and len(str(e.value)) < 400, str(e.value)[:400]


def test_malformed_limits_in_the_environment_are_errors():
    # As the CLI refuses to start: a limit that is not a byte size would
    # otherwise be ignored silently (the default applied). In a child, whose
    # environment the test sets.
    import os
    import subprocess
    import sys

    code = (
        "import fnabi\n"
        "try:\n"
        "    fnabi.compile_mlir('func.func @f(%x: i32) -> i32 { return %x : i32 }')\n"
        "except fnabi.Error as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    env = dict(os.environ, FNABI_MAX_ARRAY_BYTES="lots")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == 'Error FNABI_MAX_ARRAY_BYTES="lots" is not a byte size (such as 1048576, 64K, 8M or 16G)\n'
    env["FNABI_MAX_ARRAY_BYTES"] = "64K"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == ""


def test_errors_pickle(mlp):
    import pickle

    x, p = mlp_inputs()
    with pytest.raises(fnabi.CallError) as e:
        mlp.mlp(x, {**p, "w2": p["w2"].astype(np.float64)})
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is fnabi.CallError
    assert (again.path, again.expected, again.got, str(again)) == (
        e.value.path,
        e.value.expected,
        e.value.got,
        str(e.value),
    )


def test_keyword_argument_errors_name_the_keyword(structured):
    with pytest.raises(fnabi.CallError) as e:
        structured.scale_kw(x=np.ones(2, np.float64), scale=1.0)
    assert (e.value.path, e.value.expected, e.value.got) == ('["x"]', "f32", "f64")
    with pytest.raises(fnabi.CallError) as e:
        structured.scale_kw(x=np.ones(2, np.float32), scale={1})
    assert (e.value.path, e.value.got) == ('["scale"]', "set")


def test_runtime_checks_raise_execution_error_with_the_users_line():
    m = fnabi.load(MLIR / "verify.mlir", runtime_checks=True)
    assert m.kind == "mlir-checked" and fnabi.load(MLIR / "verify.mlir").kind == "mlir"
    x = np.array([1, 2, 3, 4], np.float32)
    assert m.element(x, 3) == 4.0
    with pytest.raises(fnabi.ExecutionError) as e:
        m.element(x, 4)
    first = str(e.value).splitlines()[0]
    # The file as it was given, as compile errors name it.
    path = str(MLIR / "verify.mlir")
    assert first == f"@element: runtime op verification failed at {path}:5:8: out-of-bounds access"
    # Text has no file: `<string>`, as in its compile errors.
    text = (MLIR / "verify.mlir").read_text()
    with pytest.raises(fnabi.ExecutionError) as e:
        fnabi.compile_mlir(text, runtime_checks=True).element(x, 4)
    assert str(e.value).splitlines()[0] == "@element: runtime op verification failed at <string>:5:8: out-of-bounds access"
    assert "input.mlir" not in str(e.value)
    # Two dynamic dims that must be equal: linalg's check stops the call.
    with pytest.raises(fnabi.ExecutionError, match="verify.mlir:21:8: dimension #0"):
        m.dyn_add(np.ones((3, 4), np.float32), np.ones((2, 4), np.float32))
    np.testing.assert_array_equal(m.dyn_add(np.ones((2, 4), np.float32), np.ones((2, 4), np.float32)), 2)
    # The module keeps working, and pickles with its checks.
    again = pickle.loads(pickle.dumps(m))
    with pytest.raises(fnabi.ExecutionError):
        again.element(x, -1)
    with pytest.raises(fnabi.CallError, match="runtime_checks= applies to MLIR source"):
        fnabi.load(MLIR / "verify.mlir", runtime_checks=True, backend="iree")


def test_allocations_of_compiled_code_are_bounded():
    """An outer product of 1000 and 2000 floats allocates 8000064 bytes
    (m*n*4 plus MLIR's 64-byte pad), over a 1 MiB per-array limit: with
    runtime checks an ExecutionError, the module still usable; without
    them the interpreter aborts saying why (it was a segfault: MLIR's code
    wrote through the allocator's null)."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, fnabi\n"
        "m = fnabi.load(sys.argv[1], runtime_checks=sys.argv[2] == 'checked')\n"
        "big = (np.ones(1000, np.float32), np.ones(2000, np.float32))\n"
        "try:\n"
        "    m.outer(*big)\n"
        "except fnabi.ExecutionError as e:\n"
        "    print(type(e).__name__, e)\n"
        "print(m.outer(np.array([1, 2], np.float32), np.array([1, 2, 3], np.float32)).tolist())\n"
    )
    env = dict(os.environ, FNABI_MAX_ARRAY_BYTES="1M")
    path = str(MLIR / "alloc.mlir")
    run = [sys.executable, "-c", code, path]
    out = subprocess.run(run + ["checked"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "ExecutionError @outer: memory exhausted: an allocation of the compiled code takes 8000064 bytes, "
        "over the limit of 1048576 bytes per array (raise it with FNABI_MAX_ARRAY_BYTES=BYTES, e.g. 64G, "
        "fnabi's --max-array-bytes BYTES, or fnabi::limits::set_max_bytes); "
        "a module keeps the limit in force when it was loaded\n"
        "[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]\n"
    )
    out = subprocess.run(run + ["unchecked"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == -6, out.stderr
    assert "fnabi: memory exhausted: the compiled code asked for 8000064 bytes, over the limit of 1048576" in out.stderr


def test_a_list_for_an_array_parameter_says_array(memref_abi, structured):
    # It said "expected an array or a scalar (of an MLIR function)": the
    # parameter's type says which.
    with pytest.raises(fnabi.CallError) as e:
        memref_abi.sum_f32([1.0, 2.0])
    assert (e.value.path, e.value.expected, e.value.got) == ("[0]", "an array", "a list")
    with pytest.raises(fnabi.CallError) as e:
        structured.scale_kw(2.0, (1.0, 2.0))
    assert (e.value.path, e.value.expected, e.value.got) == ('["x"]', "an array", "a tuple")
