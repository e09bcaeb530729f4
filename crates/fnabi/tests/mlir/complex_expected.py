#!/usr/bin/env python3
"""Writes complex_expected.json: inputs and numpy-computed expected results
for the functions of complex.mlir (tests/mlir_complex.rs calls each
function with the inputs through fnabi and compares).

Run from this directory with numpy installed: python3 complex_expected.py
Arrays use fnabi's JSON form {"dtype", "shape", "data"}; a complex element
is an [re, im] pair, a non-finite part "nan", "inf" or "-inf".
"""
import json
import math

import numpy as np

rng = np.random.default_rng(1414)

NAMES = {np.float32: "f32", np.float64: "f64", np.complex64: "c64", np.complex128: "c128"}


def part(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def arr(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if np.iscomplexobj(a):
        data = [[part(z.real), part(z.imag)] for z in flat]
    else:
        data = [part(x) for x in flat]
    return {"dtype": NAMES[a.dtype.type], "shape": list(a.shape), "data": data}


def c64(n):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)


cases = []


def case(function, inputs, expected, tol=0.0):
    cases.append({"function": function, "inputs": inputs, "expected": expected, "tol": tol})


a, b = c64(7), c64(7)
case("cmul", [arr(a), arr(b)], [arr(a * b)], 1e-6)

a = np.concatenate([c64(5), np.array([3 + 4j, -0.0 - 0.0j, 1e-30 + 1e30j], dtype=np.complex64)])
case("abs_conj", [arr(a)], [arr(np.abs(a)), arr(np.conj(a))], 1e-6)

z = np.array(
    [[1 + 2j, complex(math.nan, -math.inf), complex(-0.0, 0.1)], [1e-300 - 5e300j, 5e-324 + 0j, complex(math.inf, -0.0)]],
    dtype=np.complex128,
)
case("pass128", [arr(z)], [arr(z)])

x, y = np.complex128(0.1 + 2.5j), np.complex128(-3.0 + 1e-3j)
case("fma0", [arr(np.array(x)), arr(np.array(y))], [arr(np.array(x * y + 1))], 1e-15)

with open("complex_expected.json", "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
