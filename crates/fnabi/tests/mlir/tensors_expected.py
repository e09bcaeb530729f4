#!/usr/bin/env python3
"""Writes tensors_expected.json: inputs and numpy-computed expected results
for the functions of tensors.mlir and transform.mlir (tests/mlir_tensor.rs
calls each function with the inputs through fnabi and compares).

Run from this directory with numpy installed: python3 tensors_expected.py
Arrays use fnabi's JSON form {"dtype", "shape", "data"}.
"""
import json

import numpy as np

rng = np.random.default_rng(14)

NAMES = {
    np.float32: "f32", np.float64: "f64", np.float16: "f16", np.int8: "i8",
    np.int32: "i32", np.int64: "i64", np.uint16: "u16", np.bool_: "bool",
    np.int16: "i16", np.uint8: "u8", np.uint32: "u32", np.uint64: "u64",
}


def arr(a, dtype=None):
    a = np.asarray(a)
    name = dtype or NAMES[a.dtype.type]
    data = a.reshape(-1).tolist()
    return {"dtype": name, "shape": list(a.shape), "data": data}


def bf16_round(x):
    """Rounds float32 values to bfloat16 (round to nearest even), as floats."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


cases = []


def case(module, function, inputs, expected, tol=0.0):
    cases.append({"module": module, "function": function, "inputs": inputs, "expected": expected, "tol": tol})


a = rng.standard_normal((3, 5)).astype(np.float32)
b = rng.standard_normal((3, 5)).astype(np.float32)
case("tensors.mlir", "add", [arr(a), arr(b)], [arr(a + b)])

a = rng.standard_normal((4, 7)).astype(np.float32)
b = rng.standard_normal((7, 3)).astype(np.float32)
case("tensors.mlir", "matmul", [arr(a), arr(b)], [arr(a @ b)], 1e-5)

x = rng.standard_normal((2, 3))
case("tensors.mlir", "scale_exp", [arr(x), 0.75], [arr(np.exp(x * 0.75))], 1e-12)

x = rng.standard_normal(10).astype(np.float32)
case("tensors.mlir", "sum", [arr(x)], [arr(np.array(x.sum(dtype=np.float32), dtype=np.float32))], 1e-5)

x = np.array([0.5, 1.5, -2.0, 3.25, 1.0], dtype=np.float16)
case("tensors.mlir", "above", [arr(x), {"dtype": "f16", "shape": [], "data": [1.0]}], [arr(x > np.float16(1.0))])

m = np.array([True, False, True, True, False, True])
case("tensors.mlir", "count", [arr(m)], [int(m.sum())])

x = np.array([[1, 2], [3, 4]], dtype=np.int32)
case("tensors.mlir", "pad", [arr(x)], [arr(np.pad(x, ((1, 1), (2, 1)), constant_values=-1))])

x = np.arange(16, dtype=np.float32).reshape(4, 4)
case("tensors.mlir", "corner", [arr(x)], [arr(x[1:3, 2:4])])

x = np.array([3, -1, 4, 1, -5, 9], dtype=np.int64)
case("tensors.mlir", "views", [arr(x)], [arr(x), arr(x.reshape(2, 3)), arr(x + x), 6])

x = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
case("tensors.mlir", "fill", [arr(x), 2.5], [arr(np.full(4, 2.5, dtype=np.float32))])

x = np.array([0, 1, 127, -128, -56, -1], dtype=np.int8)
case("tensors.mlir", "bytes_to_bf16", [arr(x)],
     [{"dtype": "bf16", "shape": [6], "data": bf16_round(x.view(np.uint8).astype(np.float32) * 0.5).tolist()}])

x = np.array([0, 7, 65535], dtype=np.uint16)
case("tensors.mlir", "same_u16", [arr(x)], [arr(x)])

a = np.array([-32768, 32767], dtype=np.int16)
b = np.array([0, 255, 7], dtype=np.uint8)
c = np.array([0, 4294967295, 12345], dtype=np.uint32)
d = np.array(18446744073709551615, dtype=np.uint64)
case("tensors.mlir", "reverse", [arr(a), arr(b), arr(c), arr(d)], [arr(d), arr(c), arr(b), arr(a)])

a = rng.integers(-3, 4, (6, 5)).astype(np.float32)
b = rng.integers(-3, 4, (5, 4)).astype(np.float32)
c = rng.integers(-3, 4, (6, 4)).astype(np.float32)
case("transform.mlir", "tiled_matmul", [arr(a), arr(b), arr(c)], [arr(a @ b + c)])



def matmul_in_k_order(a, b):
    """a @ b in float32, each element summed over k in ascending order with
    a rounding after every product and every sum: what the loops compute
    (tiling changes the order of the elements, never that of the sum)."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = (acc + (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    return acc


# Shapes across the tile blocks (8 x 32 x 4): remainders in every dimension,
# one that fills blocks exactly, empty ones; exact, not within a tolerance.
for m, k, n in [(19, 13, 45), (8, 4, 32), (1, 1, 1), (33, 7, 70), (0, 3, 5), (5, 0, 3)]:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    case("tensors.mlir", "matmul", [arr(a), arr(b)], [arr(matmul_in_k_order(a, b))])

a = rng.standard_normal((16, 8)).astype(np.float32)
b = rng.standard_normal((8, 64)).astype(np.float32)
case("tensors.mlir", "matmul_static", [arr(a), arr(b)], [arr(matmul_in_k_order(a, b))])

a = rng.integers(-1000, 1000, (3, 11, 9)).astype(np.int32)
b = rng.integers(-1000, 1000, (3, 9, 37)).astype(np.int32)
case("tensors.mlir", "batch_matmul", [arr(a), arr(b)], [arr(np.matmul(a.astype(np.int64), b).astype(np.int32))])

with open("tensors_expected.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
