//! `Function` over real MLIR-compiled code (`tests/mlir/structured.mlir`,
//! compiled by Debian's tools through fnabi's pipeline): structured inputs
//! and results through `sip`, keyword binding, destination-passing style,
//! result allocators (`fbr`), serde types, prepared calls, threads, and
//! error messages that name the index path. Also run under valgrind by
//! `scripts/test.sh`.

use fnabi::mlir::MlirModule;
use fnabi::{Array, CallError, CallErrorKind, CallSide, DType, Dict, Error, ErrorKind, Function, PathKey, Value};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

fn module() -> &'static MlirModule {
    static M: OnceLock<MlirModule> = OnceLock::new();
    M.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/structured.mlir");
        // SAFETY: the fixture's functions write only into their destination
        // arguments and memory they allocate.
        unsafe { MlirModule::load(path) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"))
    })
}

fn function(name: &str) -> Function {
    module().function(name).unwrap()
}

fn arr(shape: &[usize], v: Vec<f32>) -> Value<'static> {
    Value::from(Array::from_vec(shape, v).unwrap())
}

fn floats(v: &Value<'_>) -> (Vec<usize>, Vec<f32>) {
    let a = v.as_array().unwrap_or_else(|| panic!("not an array: {v:?}"));
    (a.shape().to_vec(), a.to_vec::<f32>().unwrap())
}

fn params() -> Value<'static> {
    // w = [[1,0,0],[0,1,0],[0,0,1],[1,1,1]], b = [10, 20, 30]
    Value::dict([
        ("w", arr(&[4, 3], vec![1., 0., 0., 0., 1., 0., 0., 0., 1., 1., 1., 1.])),
        ("b", arr(&[3], vec![10., 20., 30.])),
    ])
}

#[test]
fn structured_inputs_through_sip() {
    let f = function("affine");
    assert_eq!(
        f.describe(),
        "@affine([$0, {\"b\": $2, \"w\": $1}]) -> $0  [(memref<?x4xf32>, memref<4x3xf32>, memref<3xf32>) -> (memref<?x3xf32>)]"
    );
    let x = arr(&[2, 4], vec![1., 2., 3., 4., 5., 6., 7., 8.]);
    let y = f.call([x, params()]).unwrap();
    assert_eq!(floats(&y), (vec![2, 3], vec![15., 26., 37., 23., 34., 45.]));
}

#[test]
fn strided_views_are_converted_and_results_stay_correct() {
    // w given as the transpose of a 3x4 array: a strided view, not dense.
    let wt = Array::from_vec(&[3, 4], vec![1f32, 0., 0., 1., 0., 1., 0., 1., 0., 0., 1., 1.]).unwrap();
    let w = wt.permuted(&[1, 0]).unwrap().into_owned().unwrap();
    assert!(!w.is_c_contiguous());
    let p = Value::dict([("w", Value::from(w)), ("b", arr(&[3], vec![10., 20., 30.]))]);
    let x = arr(&[1, 4], vec![1., 2., 3., 4.]);
    let y = function("affine").call([x, p]).unwrap();
    assert_eq!(floats(&y), (vec![1, 3], vec![15., 26., 37.]));
}

#[test]
fn errors_name_the_index_path() {
    let f = function("affine");
    let x = arr(&[2, 4], vec![0.; 8]);
    let missing = Value::dict([("w", arr(&[4, 3], vec![0.; 12]))]);
    let e = f.call([x.clone(), missing]).unwrap_err().to_string();
    assert_eq!(e, "argument [1]: missing key \"b\"");
    let bad_w = Value::dict([("w", arr(&[4, 4], vec![0.; 16])), ("b", arr(&[3], vec![0.; 3]))]);
    let e = f.call([x.clone(), bad_w]).unwrap_err().to_string();
    assert_eq!(e, "argument [1][\"w\"] (memref<4x3xf32>, raw argument 1): dim 1: expected 3, got 4");
    let ints = Value::dict([
        ("w", Value::from(Array::from_vec(&[4, 3], vec![0i32; 12]).unwrap())),
        ("b", arr(&[3], vec![0.; 3])),
    ]);
    let e = f.call([x.clone(), ints]).unwrap_err().to_string();
    assert_eq!(e, "argument [1][\"w\"] (memref<4x3xf32>, raw argument 1): element type: expected f32, got i32");
    let e = f.call([x.clone(), Value::from("w")]).unwrap_err().to_string();
    assert_eq!(e, "argument [1]: expected a dict, got a str");
    let e = f.call([x]).unwrap_err().to_string();
    assert_eq!(e, "missing positional argument 1");
}

/// The call error of `e`: its side, index path and kind.
fn call_error(e: Error) -> (CallSide, Vec<PathKey>, CallErrorKind) {
    match e.into_kind() {
        ErrorKind::Call(CallError { side, path, kind, .. }) => (side, path.0, kind),
        other => panic!("not a call error: {other}"),
    }
}

#[test]
fn errors_are_typed_at_their_index_path() {
    use CallErrorKind as K;
    let f = function("affine");
    let x = arr(&[2, 4], vec![0.; 8]);
    let w_path = vec![PathKey::Index(1), PathKey::Name("w".into())];
    let with_w = |w: Value<'static>| Value::dict([("w", w), ("b", arr(&[3], vec![0.; 3]))]);
    // Dtype: w of i32 for memref<4x3xf32>.
    let ints = with_w(Value::from(Array::from_vec(&[4, 3], vec![0i32; 12]).unwrap()));
    assert_eq!(
        call_error(f.call([x.clone(), ints]).unwrap_err()),
        (CallSide::Argument, w_path.clone(), K::Dtype { expected: DType::F32, got: DType::I32 })
    );
    // Rank: w of rank 1.
    let flat = with_w(arr(&[12], vec![0.; 12]));
    assert_eq!(
        call_error(f.call([x.clone(), flat]).unwrap_err()),
        (CallSide::Argument, w_path.clone(), K::Rank { expected: 2, got: 1 })
    );
    // Dim: w of 4x4, axis 1.
    let wide = with_w(arr(&[4, 4], vec![0.; 16]));
    assert_eq!(
        call_error(f.call([x.clone(), wide]).unwrap_err()),
        (CallSide::Argument, w_path, K::Dim { axis: 1, expected: 3, got: 4 })
    );
    // Dim of the first argument (memref<?x4xf32>): axis 1 is static.
    assert_eq!(
        call_error(f.call([arr(&[2, 3], vec![0.; 6]), params()]).unwrap_err()),
        (CallSide::Argument, vec![PathKey::Index(0)], K::Dim { axis: 1, expected: 4, got: 3 })
    );
    // A missing key of the dict argument, at the dict's path.
    let missing = Value::dict([("w", arr(&[4, 3], vec![0.; 12]))]);
    assert_eq!(
        call_error(f.call([x.clone(), missing]).unwrap_err()),
        (CallSide::Argument, vec![PathKey::Index(1)], K::MissingKey("b".into()))
    );
    // Arity: one argument missing, one too many.
    assert_eq!(
        call_error(f.call([x.clone()]).unwrap_err()),
        (CallSide::Argument, vec![PathKey::Index(1)], K::MissingArgument { index: 1, name: None })
    );
    assert_eq!(
        call_error(f.call([x.clone(), params(), x]).unwrap_err()),
        (CallSide::Argument, vec![], K::TooManyPositional { max: 2, got: 3 })
    );
    // The raw function under it counts its flat arguments.
    let raw = module().library().function("affine").unwrap();
    let e = raw.call(&mut []).unwrap_err();
    assert_eq!(call_error(e), (CallSide::Argument, vec![], K::Arity { expected: 3, at_least: false, got: 0 }));
}

#[test]
fn keyword_arguments_bind_a_dict_root() {
    let f = function("scale_kw");
    let x = arr(&[3], vec![1., 2., 3.]);
    let kw: Dict<'_> = [("x", x.clone()), ("scale", Value::Float(2.0))].into_iter().collect();
    assert_eq!(floats(&f.call_kw(vec![], kw).unwrap()).1, [2., 4., 6.]);
    // Positional arguments take the keys in byte order: scale, x.
    assert_eq!(floats(&f.call([Value::Float(3.0), x.clone()]).unwrap()).1, [3., 6., 9.]);
    let kw: Dict<'_> = [("x", x.clone()), ("factor", Value::Float(2.0))].into_iter().collect();
    assert_eq!(f.call_kw(vec![], kw).unwrap_err().to_string(), "unexpected keyword argument \"factor\"");
    let kw: Dict<'_> = [("scale", Value::Float(2.0))].into_iter().collect();
    assert_eq!(
        f.call_kw(vec![Value::Float(1.0)], kw).unwrap_err().to_string(),
        "got multiple values for argument \"scale\""
    );
    // A JSON-like value: a dict is the keyword arguments.
    let v = Value::dict([("x", x), ("scale", Value::Int(-1))]);
    assert_eq!(floats(&f.call_value(v).unwrap()).1, [-1., -2., -3.]);
}

#[test]
fn structured_results() {
    let r = function("stats").call([arr(&[4], vec![1., 5., -2., 3.])]).unwrap();
    assert_eq!(r, Value::dict([("max", Value::Float(5.0)), ("sum", Value::Float(7.0))]));
}

#[test]
fn destination_passing_with_a_static_result() {
    let f = function("add_into");
    let r = f.call([arr(&[4], vec![1., 2., 3., 4.]), arr(&[4], vec![10., 20., 30., 40.])]).unwrap();
    assert_eq!(floats(&r), (vec![4], vec![11., 22., 33., 44.]));
    assert!(r.as_array().unwrap().buffer().is_some(), "the destination is fnabi-owned memory");
}

#[test]
fn destination_passing_with_a_result_allocator() {
    let f = function("scale_into");
    let r = f.call([arr(&[5], vec![1., 2., 3., 4., 5.]), Value::Float(0.5)]).unwrap();
    assert_eq!(floats(&r), (vec![5], vec![0.5, 1., 1.5, 2., 2.5]));
    let a = r.as_array().unwrap();
    assert_eq!(a.as_ptr() as usize % 64, 0, "allocated by @alloc_like with alignment 64");
    let e = f.call([arr(&[0], vec![]), Value::Float(1.0)]).unwrap();
    assert_eq!(floats(&e), (vec![0], vec![]));
}

#[test]
fn destinations_and_callee_allocated_results_mix() {
    let r = function("split_into").call([arr(&[4], vec![1., 2., 3., 4.])]).unwrap();
    let Value::Tuple(items) = r else { panic!("{r:?}") };
    assert_eq!(floats(&items[0]), (vec![4], vec![2., 4., 6., 8.]));
    assert_eq!(floats(&items[1]), (vec![2], vec![3., 4.]));
}

#[derive(Serialize)]
struct Params {
    w: Array<'static>,
    b: Array<'static>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Stats {
    sum: f32,
    max: f32,
}

#[test]
fn serde_types_in_and_out() {
    let x = Array::from_vec(&[1, 4], vec![1f32, 2., 3., 4.]).unwrap();
    let w = Array::from_vec(&[4, 3], vec![1f32, 0., 0., 0., 1., 0., 0., 0., 1., 1., 1., 1.]).unwrap();
    let b = Array::from_vec(&[3], vec![10f32, 20., 30.]).unwrap();
    let y: Array<'static> = function("affine").call_serde(&(x.clone(), Params { w, b })).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [15., 26., 37.]);
    let v = Array::from_vec(&[4], vec![1f32, 2., 3., 4.]).unwrap();
    let s: Stats = function("stats").call_serde(&(v,)).unwrap();
    assert_eq!(s, Stats { sum: 10.0, max: 4.0 });
}

#[test]
fn prepared_calls_and_threads() {
    let f = function("affine");
    let x = arr(&[2, 4], vec![1., 2., 3., 4., 5., 6., 7., 8.]);
    let bound = Value::Tuple(vec![x, params()]);
    let mut p = f.prepare();
    for _ in 0..100 {
        assert_eq!(floats(&p.call_bound(&bound).unwrap()).1, [15., 26., 37., 23., 34., 45.]);
    }
    std::thread::scope(|s| {
        for t in 0..4 {
            let f = f.clone();
            s.spawn(move || {
                let x = arr(&[1, 4], vec![t as f32, 0., 0., 0.]);
                let mut p = f.prepare();
                for _ in 0..200 {
                    let y = p.call([x.clone(), params()]).unwrap();
                    assert_eq!(floats(&y).1, [10. + t as f32, 20., 30.]);
                }
            });
        }
    });
}

#[test]
fn a_library_without_its_source_takes_a_signature() {
    let path = module().library().path().to_path_buf();
    // SAFETY: the same library, typed as its source declares.
    let lib = unsafe { MlirModule::load(&path) }.unwrap();
    let names = lib.function_names().unwrap();
    for n in ["affine", "scale_kw", "stats", "add_into", "scale_into", "alloc_like", "split_into"] {
        assert!(names.iter().any(|m| m == n), "{n} in {names:?}");
    }
    assert!(lib.function("scale_kw").is_err(), "no source: the type must be given");
    let f = lib.function_with_signature("scale_kw", "(memref<?xf32>, f32) -> memref<?xf32>").unwrap();
    assert_eq!(floats(&f.call([arr(&[2], vec![1., 2.]), Value::Float(4.0)]).unwrap()).1, [4., 8.]);
    // The raw mangled form works too: (Buffer<float32[?]>, float32) -> (Buffer<float32[?]>).
    let f = lib.function_with_signature("scale_kw", "I10!B4!d-1S1!R7!B4!d-1").unwrap();
    assert_eq!(floats(&f.call([arr(&[1], vec![3.]), Value::Float(2.0)]).unwrap()).1, [6.]);
    let e = lib.function_with_signature("scale_kw", "(memref<?xf32> f32)").unwrap_err().to_string();
    assert!(e.contains("line 1:"), "{e}");
}

#[test]
fn arity_errors() {
    let f = function("add_into");
    let e = f.call([arr(&[4], vec![0.; 4])]).unwrap_err().to_string();
    assert_eq!(e, "missing positional argument 1");
    let e = f.call([arr(&[4], vec![0.; 4]), arr(&[4], vec![0.; 4]), arr(&[4], vec![0.; 4])]).unwrap_err().to_string();
    assert_eq!(e, "takes 2 positional arguments but 3 were given");
}

/// A result the callee allocated is heap memory of its own: it stays
/// readable after the module, the function and the prepared call that made
/// it are dropped (and the library unloaded), on the prepared fast path and
/// through `Function::call` (valgrind reruns this test).
#[test]
fn fresh_results_outlive_their_module() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/sip_dict8.mlir");
    // SAFETY: dict8 only reads its arguments and returns fresh memory.
    let module = unsafe { MlirModule::load(path) }.unwrap();
    let f = module.function("dict8").unwrap();
    let dict = Value::dict((0..8).map(|k| (format!("k{k}"), arr(&[4], vec![k as f32; 4]))));
    let mut p = f.prepare();
    let prepared = p.call_bound(&Value::Tuple(vec![dict.clone()])).unwrap();
    let called = f.call([dict]).unwrap();
    drop(p);
    drop(f);
    drop(module);
    assert_eq!(floats(&prepared), (vec![4], vec![28.0; 4]));
    assert_eq!(floats(&called), (vec![4], vec![28.0; 4]));
}
