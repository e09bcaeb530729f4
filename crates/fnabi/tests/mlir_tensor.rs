//! Tensor-level MLIR through fnabi's default pipeline: the functions of
//! `tests/mlir/tensors.mlir` and `tests/mlir/transform.mlir` (bufferized
//! with identity-layout function boundaries, a transform-dialect schedule
//! applied) called with the inputs of `tests/mlir/tensors_expected.json`,
//! whose expected results numpy computed (`tensors_expected.py`). Also:
//! results that alias an argument share its memory, arguments are never
//! written, functions with vector signatures take and return arrays
//! (`tests/mlir/vectors.mlir`), errors name the user's file, line and pass. Also run
//! under valgrind by `scripts/test.sh`.

mod common;

use fnabi::mlir::{CompileOptions, MlirModule};
use fnabi::{Array, Value};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

fn fixture(name: &str) -> String {
    format!("{}/tests/mlir/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn module(name: &str) -> MlirModule {
    static MODULES: OnceLock<Mutex<HashMap<String, MlirModule>>> = OnceLock::new();
    let mut m = MODULES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    m.entry(name.to_owned())
        .or_insert_with(|| {
            let path = fixture(name);
            // SAFETY: the fixtures write only into memory they allocate.
            unsafe { MlirModule::load(&path) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"))
        })
        .clone()
}

/// The results of a call as a list of JSON values (a tuple is several).
fn result_list(v: &Value<'_>) -> Vec<serde_json::Value> {
    let items: Vec<&Value<'_>> = match v {
        Value::Tuple(items) => items.iter().collect(),
        one => vec![one],
    };
    items.iter().map(|v| serde_json::from_str(&fnabi::json::to_string(v)).unwrap()).collect()
}

/// Compares one result with its expected JSON form (arrays: dtype, shape,
/// and each element within `tol`, relative to max(1, |expected|)).
fn same(got: &serde_json::Value, want: &serde_json::Value, tol: f64) -> Result<(), String> {
    use serde_json::Value as J;
    match (got, want) {
        (J::Object(g), J::Object(w)) => {
            for key in ["dtype", "shape"] {
                if g.get(key) != w.get(key) {
                    return Err(format!("{key}: got {:?}, expected {:?}", g.get(key), w.get(key)));
                }
            }
            let (Some(J::Array(gd)), Some(J::Array(wd))) = (g.get("data"), w.get("data")) else {
                return Err(format!("no data: {got} vs {want}"));
            };
            if gd.len() != wd.len() {
                return Err(format!("{} elements, expected {}", gd.len(), wd.len()));
            }
            // fnabi prints the shortest decimal of each element in its own
            // dtype, numpy's expectations are written as f64: allow the
            // dtype's rounding on top of the case's tolerance.
            let rounding = match w.get("dtype").and_then(J::as_str) {
                Some("f32") => 1e-7,
                Some("f16" | "bf16") => 1e-3,
                _ => 0.0,
            };
            for (i, (a, b)) in gd.iter().zip(wd).enumerate() {
                same(a, b, tol + rounding).map_err(|e| format!("element {i}: {e}"))?;
            }
            Ok(())
        }
        (J::Number(a), J::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if (a - b).abs() <= tol * b.abs().max(1.0) { Ok(()) } else { Err(format!("{a} != {b}")) }
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{a} != {b}")),
    }
}

#[test]
fn results_match_numpy() {
    let text = std::fs::read_to_string(fixture("tensors_expected.json")).unwrap();
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() >= 13);
    for c in &cases {
        let (m, f) = (c["module"].as_str().unwrap(), c["function"].as_str().unwrap());
        let inputs: Vec<Value<'static>> =
            c["inputs"].as_array().unwrap().iter().map(|j| fnabi::json::from_str(&j.to_string()).unwrap()).collect();
        let got = module(m).function(f).unwrap().call(inputs).unwrap_or_else(|e| panic!("@{f}: {e}"));
        let got = result_list(&got);
        let want = c["expected"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "@{f}: number of results");
        let tol = c["tol"].as_f64().unwrap();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            same(g, w, tol).unwrap_or_else(|e| panic!("@{f} result {i}: {e}\n got {g}\n expected {w}"));
        }
    }
}

#[test]
fn tensor_signatures_are_the_bufferized_memrefs() {
    let m = module("tensors.mlir");
    assert_eq!(
        m.function("views").unwrap().describe(),
        "@views(memref<6xi64>) -> (memref<6xi64>, memref<2x3xi64>, memref<6xi64>, index)"
    );
    assert_eq!(m.function("sum").unwrap().describe(), "@sum(memref<?xf32>) -> (memref<f32>)");
    assert_eq!(m.function("above").unwrap().describe(), "@above(memref<?xf16>, f16) -> (memref<?xi1>)");
}

#[test]
fn results_aliasing_the_argument_share_it_and_arguments_are_not_written() {
    let m = module("tensors.mlir");
    let x = Array::from_vec(&[6], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
    let out = m.function("views").unwrap().call([Value::from(x.clone())]).unwrap();
    let Value::Tuple(items) = &out else { panic!("{out:?}") };
    let ptr = |v: &Value<'_>| v.as_array().unwrap().as_ptr();
    assert_eq!(ptr(&items[0]), x.as_ptr(), "the argument itself comes back as a view of it");
    assert_eq!(ptr(&items[1]), x.as_ptr(), "its reshape too");
    assert_ne!(ptr(&items[2]), x.as_ptr(), "a computed result is fresh");
    // The views outlive the call and the caller's handle on the input.
    drop(x);
    assert_eq!(items[1].as_array().unwrap().to_vec::<i64>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    drop(out);

    // `linalg.fill` into the argument's tensor: the bufferized function
    // copies (its argument is read-only), the caller's array is unchanged.
    let x = Array::from_vec(&[4], vec![1f32, 2., 3., 4.]).unwrap();
    let r = m.function("fill").unwrap().call([Value::from(x.clone()), Value::from(9.0f32)]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![9.; 4]);
    assert_ne!(r.as_array().unwrap().as_ptr(), x.as_ptr());
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4.]);
}

/// Which functions may write into their array arguments (what a caller
/// with memory that must not be written asks before passing it): a
/// memref-level one that does (`in_place.mlir`), not a tensor-level one,
/// nor one whose only array is a vector (its wrapper reads it); a library
/// opened without its source says nothing, so it may.
#[test]
fn functions_say_whether_they_may_write_their_arguments() {
    let m = module("in_place.mlir");
    let (bump, same) = (m.function("bump_first").unwrap(), m.function("same").unwrap());
    assert!(bump.may_write_arguments() && !same.may_write_arguments());
    // It does write: [2, 5, 9] gives 2 and leaves 3 in the argument.
    let mut x = Array::from_vec(&[3], vec![2f32, 5., 9.]).unwrap();
    let f = m.library().function("bump_first").unwrap();
    let r = f.call(&mut [fnabi::mlir::Arg::Mut(&mut x)]).unwrap();
    assert_eq!((r[0].clone(), x.to_vec::<f32>().unwrap()), (Value::Float(2.0), vec![3., 5., 9.]));
    let v = module("vectors.mlir");
    assert!(!v.function("vadd").unwrap().may_write_arguments());
    assert!(!v.function("twice").unwrap().may_write_arguments());
    // Opened by its path alone, typed by a --signature: nothing is known.
    // SAFETY: nothing is called.
    let lib = unsafe { fnabi::mlir::MlirModule::load(m.library().path()) }.unwrap();
    let f = lib.function_with_signature("same", "(memref<?xf32>) -> memref<?xf32>").unwrap();
    assert!(f.may_write_arguments());
}

#[test]
fn a_transposed_view_is_converted_for_an_identity_tensor_argument() {
    let m = module("tensors.mlir");
    let a = Array::from_vec(&[2, 3], vec![1f32, 2., 3., 4., 5., 6.]).unwrap();
    let at = a.permuted(&[1, 0]).unwrap(); // 3x2, strided
    let ones = Array::from_vec(&[3, 2], vec![1f32; 6]).unwrap();
    let r = m.function("add").unwrap().call([Value::from(at), Value::from(ones)]).unwrap();
    assert_eq!(r.as_array().unwrap().shape(), &[3, 2]);
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![2., 5., 3., 6., 4., 7.]);
}

#[test]
fn wrong_shapes_and_types_are_errors() {
    let m = module("tensors.mlir");
    let f = m.function("corner").unwrap();
    let e = f.call([Value::from(Array::from_vec(&[3, 4], vec![0f32; 12]).unwrap())]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (memref<4x4xf32>): dim 0: expected 4, got 3");
    let e = f.call([Value::from(Array::from_vec(&[4, 4], vec![0i32; 16]).unwrap())]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (memref<4x4xf32>): element type: expected f32, got i32");
}

#[test]
fn functions_with_vector_signatures_take_and_return_arrays() {
    let m = module("vectors.mlir");
    let f32s = |v: &[f32]| Value::from(Array::from_vec(&[v.len()], v.to_vec()).unwrap());
    let call = |f: &str, args: Vec<Value<'static>>| m.function(f).unwrap().call(args).unwrap();
    // (1, 2, 3, 4) + (10, 20, 30, 40)
    let r = call("vadd", vec![f32s(&[1., 2., 3., 4.]), f32s(&[10., 20., 30., 40.])]);
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![11., 22., 33., 44.]);
    assert_eq!(r.as_array().unwrap().shape(), &[4]);
    // A 2x3 bool vector negated, beside a scalar and a tensor that pass through.
    let t = Array::from_vec(&[2], vec![5f32, 6.]).unwrap();
    let v = Array::from_vec(&[2, 3], vec![true, false, true, false, false, true]).unwrap();
    let r = call("mixed", vec![Value::from(t.clone()), Value::from(1.5f32), Value::from(v)]);
    let Value::Tuple(items) = &r else { panic!("{r:?}") };
    assert_eq!(items[0].as_array().unwrap().shape(), &[2, 3]);
    assert_eq!(items[0].as_array().unwrap().to_vec::<bool>().unwrap(), vec![false, true, false, true, true, false]);
    assert_eq!(items[1], Value::Float(1.5));
    assert_eq!(items[2].as_array().unwrap().as_ptr(), t.as_ptr(), "the tensor argument comes back as itself");
    // 0-d: 2 * 2.25
    let r = call("twice", vec![Value::from(Array::from_vec(&[], vec![2.25f64]).unwrap())]);
    assert_eq!((r.as_array().unwrap().shape(), r.as_array().unwrap().to_vec::<f64>().unwrap()), (&[][..], vec![4.5]));
    // index lanes summed by a function with a quoted name: 1 + 2 + 39.
    let r = call("sum.index", vec![Value::from(Array::from_vec(&[3], vec![1i64, 2, 39]).unwrap())]);
    assert_eq!(r, Value::Int(42));
    // 16 x i16 (wider than one SSE register) reversed, 2x4 f16 rows swapped.
    let w = Array::from_vec(&[16], (0..16i16).collect()).unwrap();
    let h = Array::from_vec(&[2, 4], (1..=8).map(|i| half::f16::from_f32(i as f32)).collect()).unwrap();
    let r = call("shuffle", vec![Value::from(w), Value::from(h)]);
    let Value::Tuple(items) = &r else { panic!("{r:?}") };
    assert_eq!(items[0].as_array().unwrap().to_vec::<i16>().unwrap(), (0..16i16).rev().collect::<Vec<_>>());
    let swapped: Vec<f32> =
        items[1].as_array().unwrap().to_vec::<half::f16>().unwrap().iter().map(|x| x.to_f32()).collect();
    assert_eq!(swapped, vec![5., 6., 7., 8., 1., 2., 3., 4.]);
    // Vectors only in the results.
    assert_eq!(call("iota", vec![]).as_array().unwrap().to_vec::<i32>().unwrap(), vec![0, 1, 2, 3, 4]);
    // Shapes and types are checked like any static memref's.
    let e = m.function("vadd").unwrap().call([f32s(&[1., 2., 3.]), f32s(&[1., 2., 3., 4.])]).unwrap_err();
    assert_eq!(e.to_string(), "argument [0] (memref<4xf32>): dim 0: expected 4, got 3");
    // A private function with vectors is no entry point (no wrapper), and
    // a helper called with vectors from inside the module still works.
    let e = m.function("helper").unwrap_err().to_string();
    assert!(
        e.contains("@helper cannot be called from the host") && e.contains("public functions with a body only"),
        "{e}"
    );
    let d = module("dialects.mlir");
    let r =
        d.function("double").unwrap().call([Value::from(Array::from_vec(&[3], vec![1i32, 2, 3]).unwrap())]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<i32>().unwrap(), vec![2, 4, 6]);
    assert!(d.function("vector_helper").is_ok());
}

fn compile_error(name: &str, src: &str) -> String {
    let dir = common::Scratch::new(&format!("mlir-front-{name}"));
    let path = dir.join(name);
    std::fs::write(&path, src).unwrap();
    // SAFETY: nothing is called; the compile fails.
    let e = unsafe { MlirModule::load_with(&path, &CompileOptions::default()) }.unwrap_err().to_string();
    e.replace(&dir.display().to_string(), "DIR")
}

#[test]
fn errors_name_the_op_the_file_the_line_and_the_pass() {
    // An op that no pass of the pipeline lowers.
    let e = compile_error("gpu_op.mlir", "func.func @f() -> index {\n  %t = gpu.thread_id x\n  return %t : index\n}\n");
    assert!(e.contains("DIR/gpu_op.mlir:2:8: error:"), "{e}");
    assert!(e.contains("gpu.thread_id") && e.contains("lowers no `gpu` ops"), "{e}");
    assert!(!e.contains("input.mlir"), "{e}");
    // A pass that refuses an op.
    let e = compile_error(
        "bitcast.mlir",
        "func.func @f(%x: tensor<4xui8>) -> tensor<4xi8> {\n  \
         %r = tensor.bitcast %x : tensor<4xui8> to tensor<4xi8>\n  return %r : tensor<4xi8>\n}\n",
    );
    assert!(e.contains("DIR/bitcast.mlir:2:8: error: op was not bufferized"), "{e}");
    assert!(
        e.contains("(pass --one-shot-bufferize)") && e.contains("the pass that failed: --one-shot-bufferize"),
        "{e}"
    );
    assert!(!e.contains("IR Dump"), "{e}");
}

/// A vector function whose types run over several lines (with a comment):
/// its wrapper still goes on the body's last line, so the function is
/// called and a later error names the line the user wrote (the wrapper
/// once copied the line break, found by the `mlir_signature` fuzz target).
#[test]
fn vector_types_written_over_lines_keep_line_numbers() {
    let vid = "func.func @vid(%a: vector<4x // four lanes\n    f32>) -> vector<4x\n    f32> {\n  return %a : vector<4xf32>\n}\n";
    let dir = common::Scratch::new("mlir-vector-lines");
    let path = dir.join("vid.mlir");
    std::fs::write(&path, vid).unwrap();
    // SAFETY: @vid only returns its argument.
    let m = unsafe { MlirModule::load(&path) }.unwrap();
    let x = Value::from(Array::from_vec(&[4], vec![1f32, 2., 3., 4.]).unwrap());
    let r = m.function("vid").unwrap().call([x]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![1., 2., 3., 4.]);
    let bad = format!("{vid}func.func @f() -> index {{\n  %t = gpu.thread_id x\n  return %t : index\n}}\n");
    let e = compile_error("vector_lines.mlir", &bad);
    assert!(e.contains("DIR/vector_lines.mlir:7:8: error:"), "{e}");
}

/// Space around a shape's `x` (`tensor<4 x f32>`), which MLIR takes: the
/// functions compile and are called with their types read as MLIR reads
/// them (2 * x for the tensor, the vector returned as it came).
#[test]
fn space_around_shape_x_compiles_and_calls() {
    let src = "func.func @twice(%t: tensor<4 x f32>) -> tensor<4 x f32> {\n  \
               %r = arith.addf %t, %t : tensor<4 x f32>\n  return %r : tensor<4 x f32>\n}\n\
               func.func @vid(%v: vector<2 x 2 x i32>) -> vector<2 x 2 x i32> {\n  return %v : vector<2 x 2 x i32>\n}\n";
    let dir = common::Scratch::new("mlir-space-x");
    let path = dir.join("space.mlir");
    std::fs::write(&path, src).unwrap();
    // SAFETY: the functions only read their arguments and return fresh memory.
    let m = unsafe { MlirModule::load(&path) }.unwrap();
    let x = Value::from(Array::from_vec(&[4], vec![1f32, -2., 0.5, 8.]).unwrap());
    let r = m.function("twice").unwrap().call([x]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![2., -4., 1., 16.]);
    let v = Value::from(Array::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap());
    let r = m.function("vid").unwrap().call([v]).unwrap();
    assert_eq!(
        (r.as_array().unwrap().shape(), r.as_array().unwrap().to_vec::<i32>().unwrap()),
        (&[2, 2][..], vec![1, 2, 3, 4])
    );
}
