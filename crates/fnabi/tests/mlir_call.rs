//! Calls real MLIR-compiled code: the fixtures in `tests/mlir/` are compiled
//! by Debian's MLIR/LLVM tools through fnabi's own pipeline (cached), loaded,
//! and every function is called with values checked. `scripts/test.sh` also
//! runs this binary under valgrind (no errors, nothing definitely lost).
//!
//! Without the tools these tests fail with a message naming the packages;
//! they never skip.

mod common;

use fnabi::mlir::{Arg, FunctionType, MlirFunction, MlirLibrary, Scalar};
use fnabi::{Array, DType, Value};
use half::{bf16, f16};
use std::sync::{Arc, OnceLock};

fn load(name: &str) -> &'static MlirLibrary {
    static LIBS: OnceLock<Vec<(&'static str, MlirLibrary)>> = OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        ["memref_abi", "scalars", "sip_dict8"]
            .into_iter()
            .map(|n| {
                let path = format!("{}/tests/mlir/{n}.mlir", env!("CARGO_MANIFEST_DIR"));
                let src = std::fs::read_to_string(&path).unwrap();
                // SAFETY: the fixtures write only into arguments passed as Arg::Mut.
                let lib = unsafe { MlirLibrary::compile(&src) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"));
                (n, lib)
            })
            .collect()
    });
    &libs.iter().find(|(n, _)| *n == name).unwrap().1
}

fn func(lib: &str, name: &str) -> MlirFunction {
    load(lib).function(name).unwrap()
}

fn arr<T: fnabi::Element>(shape: &[usize], v: Vec<T>) -> Array<'static> {
    Array::from_vec(shape, v).unwrap()
}

fn array(v: Value<'static>) -> Array<'static> {
    match v {
        Value::Array(a) => *a,
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn one_and_two_d_dynamic_memrefs() {
    let x = arr(&[6], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(func("memref_abi", "sum_f32").call(&mut [Arg::Array(&x)]).unwrap(), [Value::Float(21.0)]);
    assert_eq!(func("memref_abi", "first_f32").call(&mut [(&x).into()]).unwrap(), [Value::Float(1.0)]);
    // A row of a bigger array: passed without copying (aligned = its start).
    let row = x.restrided(&[3], &[1], 12).unwrap();
    assert_eq!(func("memref_abi", "sum_f32").call(&mut [Arg::Array(&row)]).unwrap(), [Value::Float(15.0)]);
    // Every other element: converted first (identity layout ignores strides).
    let odd = x.restrided(&[3], &[2], 4).unwrap();
    assert_eq!(func("memref_abi", "sum_f32").call(&mut [Arg::Array(&odd)]).unwrap(), [Value::Float(12.0)]);

    let m = arr(&[2, 3], (1..=6).map(f64::from).collect());
    let f = func("memref_abi", "weighted_sum2d");
    // sum over (i*3 + j + 1) * m[i][j] = 1*1 + 2*2 + ... + 6*6
    assert_eq!(f.call(&mut [Arg::Array(&m)]).unwrap(), [Value::Float(91.0)]);
    let t = m.permuted(&[1, 0]).unwrap(); // [[1,4],[2,5],[3,6]]: weights 1..6 in C order
    assert_eq!(f.call(&mut [Arg::Array(&t)]).unwrap(), [Value::Float(1.0 + 8.0 + 6.0 + 20.0 + 15.0 + 36.0)]);
}

#[test]
fn callee_allocated_results() {
    let m = arr(&[2, 3], (1..=6).map(|v| v as f32).collect());
    let out = func("memref_abi", "transpose").call(&mut [Arg::Array(&m)]).unwrap();
    let t = array(out.into_iter().next().unwrap());
    assert_eq!((t.shape(), t.strides()), (&[3usize, 2][..], &[2isize, 1][..]));
    assert_eq!(t.to_vec::<f32>().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert!(t.is_writable(), "callee memory is owned by the result");

    let a = array(func("memref_abi", "alloc_aligned").call(&mut [Arg::Int(10)]).unwrap().remove(0));
    assert_eq!(a.to_vec::<f32>().unwrap(), (0..10).map(|v| v as f32).collect::<Vec<_>>());
    assert_eq!(a.as_ptr() as usize % 64, 0, "the {{alignment = 64}} data pointer");
    let empty = array(func("memref_abi", "alloc_aligned").call(&mut [Arg::Int(0)]).unwrap().remove(0));
    assert_eq!(empty.shape(), &[0]);

    let i = array(func("memref_abi", "iota_2x3").call(&mut []).unwrap().remove(0));
    assert_eq!((i.dtype(), i.shape()), (DType::I32, &[2usize, 3][..]));
    assert_eq!(i.to_vec::<i32>().unwrap(), [0, 1, 2, 3, 4, 5]);

    let r =
        array(func("memref_abi", "rank0_double").call(&mut [Arg::Array(&Array::scalar(2.25f64))]).unwrap().remove(0));
    assert_eq!((r.shape(), r.get::<f64>(&[]).unwrap()), (&[][..], 4.5));

    let mask = arr(&[4], vec![true, false, false, true]);
    let n = array(func("memref_abi", "not_mask").call(&mut [Arg::Array(&mask)]).unwrap().remove(0));
    assert_eq!(n.to_vec::<bool>().unwrap(), [false, true, true, false]);
}

#[test]
fn the_same_allocation_twice_is_freed_once() {
    let out = func("memref_abi", "twice").call(&mut [Arg::Int(5)]).unwrap();
    let (a, b) = (array(out[0].clone()), array(out[1].clone()));
    assert!(Arc::ptr_eq(a.buffer().unwrap(), b.buffer().unwrap()));
    assert_eq!(a.to_vec::<i64>().unwrap(), [0, 1, 2, 3, 4]);
    drop(out);
    assert_eq!(b.to_vec::<i64>().unwrap(), [0, 1, 2, 3, 4]);
}

#[test]
fn results_aliasing_inputs_share_them() {
    let x = arr(&[4], vec![1.0f32, 2.0, 3.0, 4.0]);
    let out = func("memref_abi", "memref_and_len").call(&mut [Arg::Array(&x)]).unwrap();
    assert_eq!(out[1], Value::Int(4));
    let y = array(out[0].clone());
    assert!(Arc::ptr_eq(y.buffer().unwrap(), x.buffer().unwrap()), "not freed, not copied: shared");
    assert_eq!(y, x);

    // A borrowed input: the result is a copy (results own their data).
    let data = [5.0f32, 6.0];
    let b = Array::from_slice(&[2], &data).unwrap();
    let out = func("memref_abi", "memref_and_len").call(&mut [Arg::Array(&b)]).unwrap();
    let y = array(out[0].clone());
    assert_eq!(y.to_vec::<f32>().unwrap(), [5.0, 6.0]);
    assert_ne!(y.as_ptr(), b.as_ptr());

    let m = arr(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
    let same = array(func("memref_abi", "identity").call(&mut [Arg::Array(&m)]).unwrap().remove(0));
    assert!(Arc::ptr_eq(same.buffer().unwrap(), m.buffer().unwrap()));

    // A strided view into the input (memref.subview).
    let g = arr(&[4, 8], (0..32).map(|v| v as f32).collect());
    let col = array(func("memref_abi", "column_view").call(&mut [Arg::Array(&g), Arg::Int(5)]).unwrap().remove(0));
    assert_eq!((col.shape(), col.strides()), (&[4usize][..], &[8isize][..]));
    assert_eq!(col.to_vec::<f32>().unwrap(), [5.0, 13.0, 21.0, 29.0]);
    assert!(Arc::ptr_eq(col.buffer().unwrap(), g.buffer().unwrap()));
    drop(g);
    assert_eq!(col.to_vec::<f32>().unwrap(), [5.0, 13.0, 21.0, 29.0], "the view keeps the memory alive");
}

#[test]
fn module_globals_are_copied_not_freed() {
    let t = array(func("memref_abi", "global_table").call(&mut []).unwrap().remove(0));
    assert_eq!(t.to_vec::<f32>().unwrap(), [1.5, 2.5, 3.5, 4.5]);
    assert!(t.is_writable(), "a private copy");
}

#[test]
fn unranked_arguments_and_results() {
    let f = func("memref_abi", "unranked_rank");
    for shape in [&[][..], &[3], &[2, 3], &[1, 2, 1, 2]] {
        let a = Array::zeros(DType::F32, shape).unwrap();
        assert_eq!(f.call(&mut [Arg::Array(&a)]).unwrap(), [Value::Int(shape.len() as i64)]);
    }
    let x = arr(&[4], vec![1.0f32, 2.0, 3.0, 4.5]);
    assert_eq!(func("memref_abi", "unranked_sum1d").call(&mut [Arg::Array(&x)]).unwrap(), [Value::Float(10.5)]);
    // A strided view is passed dense (the callee may assume an identity layout).
    let y = arr(&[6], vec![1.0f32, 0.0, 2.0, 0.0, 3.0, 0.0]);
    let odd = y.restrided(&[3], &[2], 0).unwrap();
    assert_eq!(func("memref_abi", "unranked_sum1d").call(&mut [Arg::Array(&odd)]).unwrap(), [Value::Float(6.0)]);
    let e = func("memref_abi", "unranked_sum1d").call(&mut [Arg::Array(&Array::zeros(DType::I32, &[2]).unwrap())]);
    assert_eq!(e.unwrap_err().to_string(), "argument [0] (memref<*xf32>): element type: expected f32, got i32");

    let m = arr(&[2, 3], (1..=6).map(|v| v as f32).collect());
    let u = array(func("memref_abi", "to_unranked").call(&mut [Arg::Array(&m)]).unwrap().remove(0));
    assert_eq!(u.shape(), &[2, 3]);
    assert!(Arc::ptr_eq(u.buffer().unwrap(), m.buffer().unwrap()));
    let c = array(func("memref_abi", "unranked_copy").call(&mut [Arg::Array(&x)]).unwrap().remove(0));
    assert_eq!(c.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.5]);
    assert!(!Arc::ptr_eq(c.buffer().unwrap(), x.buffer().unwrap()));
    let same = array(func("memref_abi", "unranked_id").call(&mut [Arg::Array(&m)]).unwrap().remove(0));
    assert_eq!(same, m);
}

#[test]
fn static_shapes_and_strided_layouts() {
    let mut g = Array::zeros(DType::F32, &[4, 8]).unwrap();
    let f = func("memref_abi", "fill_4x8");
    assert!(f.call(&mut [Arg::Mut(&mut g)]).unwrap().is_empty());
    assert_eq!(g.get::<f32>(&[3, 7]).unwrap(), 37.0);
    assert_eq!(g.get::<f32>(&[1, 2]).unwrap(), 12.0);
    let mut wrong = Array::zeros(DType::F32, &[4, 7]).unwrap();
    let e = f.call(&mut [Arg::Mut(&mut wrong)]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (memref<4x8xf32>): dim 1: expected 8, got 7");
    // A read-only or shared array cannot be a destination.
    let shared = g.clone();
    let e = f.call(&mut [Arg::Mut(&mut g)]).unwrap_err().to_string();
    assert!(e.contains("not writable"), "{e}");
    drop(shared);

    // strided<[?, ?], offset: ?> takes a transposed view as-is.
    let m = arr(&[3, 4], (0..12).map(|v| v as f32).collect());
    let t = m.permuted(&[1, 0]).unwrap(); // 4x3, strides [1, 4]
    let expect: f32 = t.to_vec::<f32>().unwrap().iter().enumerate().map(|(k, v)| (k + 1) as f32 * v).sum();
    let s = func("memref_abi", "sum_strided");
    assert_eq!(s.call(&mut [Arg::Array(&t)]).unwrap(), [Value::Float(expect.into())]);
    // An offset view of a bigger array.
    let block = m.restrided(&[2, 2], &[4, 1], 4 * 5).unwrap(); // rows 1-2, cols 1-2: [[5,6],[9,10]]
    assert_eq!(s.call(&mut [Arg::Array(&block)]).unwrap(), [Value::Float((5 + 12 + 27 + 40) as f64)]);

    // Static column-major strides: an F-order view goes as-is, a C-order array is converted.
    let c = func("memref_abi", "sum_colmajor");
    let rows = arr(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let want = Value::Float((1 + 4 + 9 + 16 + 25 + 36) as f64);
    assert_eq!(c.call(&mut [Arg::Array(&rows)]).unwrap(), std::slice::from_ref(&want));
    let fm = arr(&[3, 2], vec![1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let fview = fm.permuted(&[1, 0]).unwrap();
    assert_eq!(fview.strides(), &[1, 2]);
    assert_eq!(c.call(&mut [Arg::Array(&fview)]).unwrap(), [want]);
}

#[test]
fn destination_passing() {
    let a = arr(&[3], vec![1.0f32, 2.0, 3.0]);
    let b = arr(&[3], vec![10.0f32, 20.0, 30.0]);
    let mut out = Array::zeros(DType::F32, &[3]).unwrap();
    let f = func("memref_abi", "add_into");
    assert!(f.call(&mut [Arg::Array(&a), Arg::Array(&b), Arg::Mut(&mut out)]).unwrap().is_empty());
    assert_eq!(out.to_vec::<f32>().unwrap(), [11.0, 22.0, 33.0]);
    // Into caller memory.
    let mut buf = [0.0f32; 3];
    {
        let mut dst = Array::from_mut_slice(&[3], &mut buf).unwrap();
        f.call(&mut [Arg::Array(&b), Arg::Array(&b), Arg::Mut(&mut dst)]).unwrap();
    }
    assert_eq!(buf, [20.0, 40.0, 60.0]);
    // In place, with a float scalar after the memref.
    let mut x = arr(&[2], vec![1.5f32, -2.0]);
    func("memref_abi", "scale_f32").call(&mut [Arg::Mut(&mut x), Arg::Float(4.0)]).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), [6.0, -8.0]);
}

#[test]
fn packed_scalar_results() {
    let f = func("memref_abi", "two_results");
    assert_eq!(f.call(&mut [Arg::Int(41), Arg::Int(21)]).unwrap(), [Value::Int(42), Value::Int(42)]);
    assert_eq!(f.call(&mut [Arg::Int(-5), Arg::Int(-1 << 40)]).unwrap(), [Value::Int(-4), Value::Int(-1 << 41)]);
    let e = f.call(&mut [Arg::Int(1 << 31), Arg::Int(0)]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (i32): 2147483648 is out of range for i32");
}

#[test]
fn scalars_of_every_type() {
    let one = |name: &str, a: Arg<'_, '_>| func("scalars", name).prepare().call(&mut [a]).unwrap().scalar(0).unwrap();
    assert_eq!(one("neg_i1", Arg::Bool(true)), Scalar::Bool(false));
    assert_eq!(one("neg_i1", Arg::Bool(false)), Scalar::Bool(true));
    assert_eq!(one("inc_i8", Arg::Int(127)), Scalar::I8(-128));
    assert_eq!(one("inc_i8", Arg::Int(-2)), Scalar::I8(-1));
    assert_eq!(one("inc_i16", Arg::Int(-300)), Scalar::I16(-299));
    assert_eq!(one("inc_i32", Arg::Int(-1)), Scalar::I32(0));
    assert_eq!(one("inc_i64", Arg::Int(1 << 40)), Scalar::I64((1 << 40) + 1));
    assert_eq!(one("inc_index", Arg::Int(-7)), Scalar::Index(-6));
    assert_eq!(one("neg_f16", Arg::Float(1.5)), Scalar::F16(f16::from_f32(-1.5)));
    assert_eq!(one("neg_bf16", Arg::Scalar(Scalar::BF16(bf16::from_f32(-3.0)))), Scalar::BF16(bf16::from_f32(3.0)));
    assert_eq!(one("half_f32", Arg::Float(3.0)), Scalar::F32(1.5));
    assert_eq!(one("half_f64", Arg::Float(-1e300)), Scalar::F64(-5e299));
    assert!(func("scalars", "nothing").call(&mut []).unwrap().is_empty());

    let f = func("scalars", "all_types");
    let out = f
        .call(&mut [
            Arg::Bool(false),
            Arg::Int(-100),
            Arg::Int(30000),
            Arg::Int(-2_000_000_000),
            Arg::Int(1 << 50),
            Arg::Int(12345),
            Arg::Float(0.25),
            Arg::Float(-8.0),
            Arg::Float(6.5),
            Arg::Float(1e100),
        ])
        .unwrap();
    assert_eq!(
        out,
        [
            Value::Bool(true),
            Value::Int(-101),
            Value::Int(29999),
            Value::Int(-2_000_000_001),
            Value::Int((1 << 50) - 1),
            Value::Int(12344),
            Value::Float(-0.25),
            Value::Float(8.0),
            Value::Float(3.25),
            Value::Float(5e99),
        ]
    );
}

#[test]
fn arguments_overflowing_registers_go_on_the_stack() {
    let f = func("scalars", "many_ints");
    let v = [3i64, -5, 7, -9, 11, -13, 17, -19, 23, -29];
    let want: i64 = v.iter().enumerate().map(|(k, x)| (k as i64 + 1) * x).sum();
    let mut args: Vec<Arg<'_, '_>> = v.iter().map(|&x| Arg::Int(x)).collect();
    assert_eq!(f.call(&mut args).unwrap(), [Value::Int(want)]);

    let f = func("scalars", "mixed_many");
    let m0 = arr(&[1], vec![2.0f64]);
    let m1 = arr(&[1], vec![3.0f64]);
    // Scalars x0..x17 in order (floats and ints interleaved), weights 1..18.
    let xs = [0.5, -1.0, 2.25, 3.0, -0.75, 4.0, 1.25, -6.0, 7.5, 8.0, -2.5, 0.125, 9.0, -10.5, 3.5, 11.0, 12.25, -0.5];
    let want: f64 =
        xs.iter().enumerate().map(|(k, x)| (k as f64 + 1.0) * x).sum::<f64>() + 1000.0 * 2.0 + 10000.0 * 3.0;
    let ints = [1usize, 3, 5, 7, 9, 12, 15]; // positions of the integer scalars
    let mut args: Vec<Arg<'_, '_>> = vec![Arg::Array(&m0)];
    for (k, &x) in xs.iter().enumerate() {
        args.push(if ints.contains(&k) { Arg::Int(x as i64) } else { Arg::Float(x) });
    }
    args.insert(18, Arg::Array(&m1));
    assert_eq!(f.call(&mut args).unwrap(), [Value::Float(want)]);
}

#[test]
fn sip_structured_dict8() {
    let lib = load("sip_dict8");
    let f = lib.function("dict8").unwrap();
    let attrs = f.decl().unwrap().abi_attributes().unwrap();
    assert_eq!(
        attrs.sip_signature_str(),
        Some("I67!S63!k0D57!K3!k0_0K3!k1_1K3!k2_2K3!k3_3K3!k4_4K3!k5_5K3!k6_6K3!k7_7R3!_0")
    );
    assert_eq!(attrs.raw_signature().unwrap().unwrap(), f.ty().to_raw());
    let xs: Vec<Array<'static>> = (0..8).map(|k| arr(&[4], vec![k as f32; 4])).collect();
    let mut args: Vec<Arg<'_, '_>> = xs.iter().map(Arg::Array).collect();
    let r = array(f.call(&mut args).unwrap().remove(0));
    assert_eq!(r.to_vec::<f32>().unwrap(), [28.0; 4]);
}

#[test]
fn prepared_calls_reuse_their_scratch() {
    let f = func("memref_abi", "transpose");
    let mut p = f.prepare();
    for n in 1..20usize {
        let m = arr(&[n, 2], (0..2 * n).map(|v| v as f32).collect());
        let mut r = p.call(&mut [Arg::Array(&m)]).unwrap();
        assert_eq!(r.len(), 1);
        assert!(r.scalar(0).is_none());
        let t = r.take_array(0).unwrap();
        assert!(r.take_array(0).is_none());
        assert_eq!(t.shape(), &[2, n]);
        assert_eq!(t.get::<f32>(&[1, n - 1]).unwrap(), (2 * n - 1) as f32);
    }
    // Results not taken are released with the Results.
    let m = arr(&[2, 2], vec![0.0f32; 4]);
    let r = p.call(&mut [Arg::Array(&m)]).unwrap();
    drop(r);
    let mut q = func("scalars", "mixed_many").prepare();
    let a = arr(&[1], vec![1.0f64]);
    for k in 0..5 {
        let mut args: Vec<Arg<'_, '_>> = vec![Arg::Array(&a)];
        args.extend((0..18).map(|i| if [1, 3, 5, 7, 9, 12, 15].contains(&i) { Arg::Int(0) } else { Arg::Float(0.0) }));
        args.insert(18, Arg::Array(&a));
        args[1] = Arg::Float(k as f64);
        assert_eq!(q.call(&mut args).unwrap().scalar(0), Some(Scalar::F64(k as f64 + 11000.0)));
    }
}

#[test]
fn calls_from_several_threads() {
    let sum = func("memref_abi", "sum_f32");
    let tr = func("memref_abi", "transpose");
    std::thread::scope(|s| {
        for t in 0..4 {
            let (sum, tr) = (sum.clone(), tr.clone());
            s.spawn(move || {
                let mut p = sum.prepare();
                for k in 0..300 {
                    let n = 1 + (k + t) % 17;
                    let x = arr(&[n], vec![t as f32 + 1.0; n]);
                    let got = p.call(&mut [Arg::Array(&x)]).unwrap().scalar(0);
                    assert_eq!(got, Some(Scalar::F32(n as f32 * (t as f32 + 1.0))));
                    let m = arr(&[1, n], (0..n).map(|v| v as f32).collect());
                    let r = array(tr.call(&mut [Arg::Array(&m)]).unwrap().remove(0));
                    assert_eq!(r.shape(), &[n, 1]);
                    assert_eq!(r.get::<f32>(&[n - 1, 0]).unwrap(), (n - 1) as f32);
                }
            });
        }
    });
}

#[test]
fn call_errors() {
    let sum = func("memref_abi", "sum_f32");
    let e = sum.call(&mut []).unwrap_err().to_string();
    assert_eq!(e, "wrong number of arguments: expected 1, got 0");
    let e = sum.call(&mut [Arg::Int(1)]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (memref<?xf32>): expected an array, got int");
    let i = arr(&[2], vec![1i32, 2]);
    let e = sum.call(&mut [Arg::Array(&i)]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (memref<?xf32>): element type: expected f32, got i32");
    let e = func("scalars", "inc_i32").call(&mut [Arg::Array(&i)]).unwrap_err().to_string();
    assert_eq!(e, "argument [0] (i32): expected a scalar, got array");
    let lib = load("scalars");
    let e = lib.function("host_log").unwrap_err().to_string();
    assert_eq!(e, "@host_log is an external declaration: the library does not define it");
    let e = lib.function("nope").unwrap_err().to_string();
    assert!(e.starts_with("no function @nope in the MLIR source (it has: neg_i1, inc_i8,"), "{e}");
    let e = lib.function_with_type("nope", FunctionType::default()).unwrap_err().to_string();
    assert!(e.contains("no symbol _mlir_ciface_nope"), "{e}");
    // A library loaded without source needs explicit types.
    // SAFETY: the same library as above.
    let bare = unsafe { MlirLibrary::open(lib.path()) }.unwrap();
    assert!(bare.function("inc_i32").unwrap_err().to_string().contains("give @inc_i32's type"));
    let f = bare.function_with_type("inc_i32", "(i32) -> i32".parse().unwrap()).unwrap();
    assert_eq!(f.call(&mut [Arg::Int(1)]).unwrap(), [Value::Int(2)]);
    // SAFETY: loading fails before any code runs.
    let e = unsafe { MlirLibrary::open("/nonexistent/libx.so") }.unwrap_err().to_string();
    assert!(e.starts_with("cannot load /nonexistent/libx.so"), "{e}");
    // A file that is no ELF object (a .npy, text, nothing) is named as such
    // before dlopen sees it.
    let dir = common::Scratch::new("not-elf");
    for (name, bytes) in [("w.npy", &b"\x93NUMPY\x01\x00"[..]), ("t.so", b"text\n"), ("empty.so", b"")] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        // SAFETY: loading fails before any code runs.
        let e = unsafe { MlirLibrary::open(&p) }.unwrap_err().to_string();
        assert!(e.contains(": it is not a shared library (no ELF header); fnabi loads MLIR source (.mlir)"), "{e}");
    }
}

#[test]
fn compile_errors_show_the_tools_stderr() {
    // SAFETY: nothing is loaded: compilation fails.
    let e = unsafe { MlirLibrary::compile("func.func @f() -> i32 {\n  return\n}\n") }.unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e.backend_error::<fnabi::mlir::MlirError>(), Some(fnabi::mlir::MlirError::ToolFailed { .. })),
        "{msg}"
    );
    assert!(msg.starts_with("mlir-opt-") && msg.contains("input.mlir:2:3: error:"), "{msg}");
}

#[test]
fn bound_calls() {
    let f = func("memref_abi", "first_f32");
    let x = arr(&[3], vec![4.5f32, 1.0, 2.0]);
    let mut p = f.prepare();
    let args = [Arg::Array(&x)];
    let mut b = p.bind(&args).unwrap();
    for _ in 0..3 {
        let r = b.invoke();
        assert_eq!((r.len(), r.scalar(0), r.scalar(1)), (1, Some(Scalar::F32(4.5)), None));
    }
    let odd = x.restrided(&[2], &[2], 0).unwrap();
    let args = [Arg::Array(&odd)];
    let e = p.bind(&args).err().unwrap().to_string();
    assert!(e.contains("needs a layout conversion"), "{e}");
    let i = arr(&[3], vec![1i32, 2, 3]);
    let args = [Arg::Array(&i)];
    let e = p.bind(&args).err().unwrap().to_string();
    assert_eq!(e, "argument [0] (memref<?xf32>): element type: expected f32, got i32");
    let mut q = func("memref_abi", "transpose").prepare();
    let args = [Arg::Array(&x)];
    assert!(q.bind(&args).err().unwrap().to_string().contains("cannot be bound"));
    let mut s = func("scalars", "half_f64").prepare();
    let args = [Arg::Float(3.0)];
    assert_eq!(s.bind(&args).unwrap().invoke().scalar(0), Some(Scalar::F64(1.5)));
}

#[test]
fn elf_lists_the_compiled_functions() {
    let so = std::fs::read(load("memref_abi").path()).unwrap();
    let elf = fnabi::elf::ElfFile::parse(&so).unwrap();
    let fns = elf.mlir_functions().unwrap();
    let decls: Vec<&str> = load("memref_abi").declarations().iter().map(|d| d.name.as_str()).collect();
    let mut want = decls.clone();
    want.sort_unstable();
    assert_eq!(fns, want, "every function got a _mlir_ciface_ wrapper");
    let needs = elf.undefined_functions().unwrap();
    // The module's calls of `malloc` reach fnabi's glue (`--wrap`), which
    // calls the process's `malloc`.
    assert!(needs.contains(&"malloc") && needs.contains(&"memcpy") && !needs.contains(&"dlsym"), "{needs:?}");
}

#[test]
fn compile_cache_hits_misses_and_verifies_its_key() {
    use fnabi::mlir::Compiler;
    let tools = Compiler::new().unwrap().toolchain().clone();
    let dir = common::Scratch::new("cache-test");
    let c = Compiler::with(tools, &*dir);
    let a = "func.func @k() -> i32 {\n  %c = arith.constant 7 : i32\n  return %c : i32\n}\n";
    let b = a.replace("7 : i32", "8 : i32");
    let pa = c.compile(a).unwrap();
    assert!(pa.starts_with(&dir) && pa.ends_with(format!("lib{}.so", c.cache_key(a))));
    let t0 = std::fs::metadata(&pa).unwrap().modified().unwrap();
    assert_eq!(c.compile(a).unwrap(), pa, "a hit");
    assert_eq!(std::fs::metadata(&pa).unwrap().modified().unwrap(), t0, "not rebuilt");
    let pb = c.compile(&b).unwrap();
    assert_ne!(pa, pb);
    // A key file that does not match (a collision, or damage): rebuilt, not trusted.
    let key = pa.with_extension("key");
    std::fs::write(&key, "something else").unwrap();
    assert_eq!(c.compile(a).unwrap(), pa);
    assert!(std::fs::read_to_string(&key).unwrap().ends_with(a));
    // SAFETY: @k only returns a constant.
    let lib = unsafe { MlirLibrary::open_with_source(&pb, &b) }.unwrap();
    assert_eq!(lib.function("k").unwrap().call(&mut []).unwrap(), [Value::Int(8)]);
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("mlir"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary directories are removed");
}
