//! Host functions that MLIR code calls: the modules in `tests/mlir/`
//! (`host_fns.mlir`, `host_op.mlir`) are compiled through fnabi's pipeline
//! with their external functions bound to the Rust closures below, and
//! values are checked in both directions. `scripts/test.sh` also runs this
//! binary under valgrind (no errors, nothing definitely lost): memrefs that
//! host functions return are freed by the MLIR code or by fnabi.
//!
//! Without the MLIR tools these tests fail with a message naming the
//! packages; they never skip.

use fnabi::mlir::{Arg, HostFunctions, HostPanic, MlirError, MlirLibrary, Provider, Scalar};
use fnabi::{Array, Error, Value};
use half::{bf16, f16};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn source(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/mlir/{name}.mlir", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn compile(name: &str, host: &HostFunctions) -> Result<MlirLibrary, Error> {
    // SAFETY: the fixtures write only into memrefs they allocate, or that
    // their host functions write (through checked views).
    unsafe { MlirLibrary::compile_with_host(&source(name), host) }
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

/// The host functions of `host_fns.mlir`; `host_op` adds `op_add`.
fn host_fns(op_add: i64) -> HostFunctions {
    let mut h = host_fns_without_op();
    h.register("host_op", move |args| Ok(vec![Value::Int(args.int(0)? + op_add)]));
    h
}

fn host_fns_without_op() -> HostFunctions {
    let mut h = HostFunctions::new();
    h.register("host_scale", |args| {
        let s = args.float(1)? as f32;
        let x = args.array(0)?;
        let v = x.to_vec::<f32>()?;
        let sum: f64 = v.iter().map(|&a| f64::from(a)).sum();
        let y: Vec<f32> = v.iter().map(|a| a * s).collect();
        Ok(vec![Value::from(Array::from_vec(x.shape(), y)?), Value::Float(sum)])
    });
    h.register("host_fill", |args| {
        let base = args.int(1)? as i32;
        let mut m = args.array_mut(0)?;
        let (r, c) = (m.shape()[0], m.shape()[1]);
        for i in 0..r {
            for j in 0..c {
                fnabi::tensor::store(&mut m, &[i, j], base + 10 * i as i32 + j as i32)?;
            }
        }
        Ok(vec![])
    });
    h.register("host_sum_strided", |args| {
        let col = args.array(0)?;
        if col.len() > 1 && col.is_c_contiguous() {
            return Err("expected a strided column view".into());
        }
        Ok(vec![Value::Float(col.to_vec::<f64>()?.iter().sum())])
    });
    h.register("host_unranked", |args| {
        let x = args.array(0)?;
        let (r, c) = (x.shape()[0], x.shape()[1]);
        let v = x.to_vec::<f32>()?;
        let sums: Vec<f32> = (0..r).map(|i| v[i * c..(i + 1) * c].iter().sum()).collect();
        Ok(vec![Value::from(Array::from_vec(&[r], sums)?)])
    });
    h.register("host_mix", |args| {
        let mut ints = 0i64;
        let mut floats = 0.0f64;
        for i in 0..args.len() {
            match args.value(i)? {
                Value::Int(v) => ints = ints * 3 + v,
                Value::Bool(b) => ints = ints * 3 + i64::from(b),
                Value::Float(f) => floats = floats * 2.0 + f,
                other => return Err(format!("argument {i}: {other:?}").into()),
            }
        }
        let flag = matches!(args.scalar(0)?, Scalar::Bool(false));
        Ok(vec![Value::Float(floats), Value::Int(ints), Value::Bool(flag)])
    });
    h.register("host_fail", |args| {
        let n = args.int(0)?;
        if n < 0 {
            panic!("negative n {n}");
        }
        if n == 0 {
            return Err("n is zero".into());
        }
        let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
        Ok(vec![Value::from(Array::from_vec(&[n as usize], v)?), Value::Int(2 * n)])
    });
    h
}

fn lib() -> &'static MlirLibrary {
    static LIB: std::sync::OnceLock<MlirLibrary> = std::sync::OnceLock::new();
    LIB.get_or_init(|| compile("host_fns", &host_fns(1)).unwrap_or_else(|e| panic!("compiling host_fns: {e}")))
}

fn call(name: &str, args: &mut [Arg<'_, '_>]) -> Result<Vec<Value<'static>>, Error> {
    lib().function(name).unwrap().call(args)
}

#[test]
fn memrefs_and_scalars_both_ways() {
    let x = arr(&[4], vec![1.0f32, 2.0, 3.0, 4.0]);
    // The host sees x (its sum comes back) and MLIR sees the host's x * s
    // (summed in MLIR, then freed there with memref.dealloc).
    let out = call("scale_and_sum", &mut [Arg::Array(&x), Arg::Float(2.5)]).unwrap();
    assert_eq!(out, [Value::Float(25.0), Value::Float(10.0)]);
    // The host's memref returned to fnabi: adopted, owned, freed on drop.
    let y = array(call("scale", &mut [Arg::Array(&x), Arg::Float(-1.0)]).unwrap().remove(0));
    assert_eq!(y.to_vec::<f32>().unwrap(), [-1.0, -2.0, -3.0, -4.0]);
    assert!(y.is_writable(), "malloc'ed by fnabi for MLIR, now owned by the result");
    let big = arr(&[1000], (0..1000).map(|v| v as f32).collect());
    let out = call("scale_and_sum", &mut [Arg::Array(&big), Arg::Float(2.0)]).unwrap();
    assert_eq!(out, [Value::Float(999_000.0), Value::Float(499_500.0)]);
    let empty = arr::<f32>(&[0], vec![]);
    let y = array(call("scale", &mut [Arg::Array(&empty), Arg::Float(1.0)]).unwrap().remove(0));
    assert_eq!(y.shape(), &[0]);
}

#[test]
fn destination_passing_strided_and_unranked_memrefs() {
    let m = array(call("filled", &mut [Arg::Int(2), Arg::Int(3), Arg::Int(100)]).unwrap().remove(0));
    assert_eq!(m.shape(), &[2, 3]);
    assert_eq!(m.to_vec::<i32>().unwrap(), [100, 101, 102, 110, 111, 112]);

    let m = arr(&[3, 4], (0..12).map(f64::from).collect());
    assert_eq!(call("column_sum", &mut [Arg::Array(&m), Arg::Int(2)]).unwrap(), [Value::Float(2.0 + 6.0 + 10.0)]);
    assert_eq!(call("column_sum", &mut [Arg::Array(&m), Arg::Int(0)]).unwrap(), [Value::Float(0.0 + 4.0 + 8.0)]);

    let x = arr(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = call("unranked_roundtrip", &mut [Arg::Array(&x)]).unwrap();
    assert_eq!(out, [Value::Float(15.0), Value::Int(1)]);
}

#[test]
fn every_scalar_type_including_stack_arguments() {
    let f = lib().function("mix").unwrap();
    let mut args = vec![
        Arg::Bool(false),
        Arg::Int(-3),
        Arg::Int(-300),
        Arg::Int(70_000),
        Arg::Int(-5_000_000_000),
        Arg::Int(7),
        Arg::Int(65_535),
        Arg::Scalar(Scalar::F16(f16::from_f32(1.5))),
        Arg::Scalar(Scalar::BF16(bf16::from_f32(-2.0))),
    ];
    let floats = [0.25, 8.0, 0.5, 16.0, 0.125, 32.0, 1.0, 64.0, 2.0];
    args.extend(floats.iter().map(|&v| Arg::Float(v)));
    args.push(Arg::Int(9));
    args.extend([Arg::Float(3.0), Arg::Float(0.75)]);
    let out = f.call(&mut args).unwrap();
    let ints = [0i64, -3, -300, 70_000, -5_000_000_000, 7, 65_535, 9].iter().fold(0i64, |acc, v| acc * 3 + v);
    let fl = [1.5, -2.0].iter().chain(&floats).chain(&[3.0, 0.75]).fold(0.0f64, |acc, v| acc * 2.0 + v);
    assert_eq!(out, [Value::Float(fl), Value::Int(ints), Value::Bool(true)]);
    args[0] = Arg::Bool(true);
    let out = f.call(&mut args).unwrap();
    assert_eq!(out[2], Value::Bool(false));
}

fn host_error(e: Error) -> (String, String, bool) {
    let text = e.to_string();
    match e.backend_error::<MlirError>() {
        Some(MlirError::HostFunction { name, source }) => {
            (name.clone(), text, source.downcast_ref::<HostPanic>().is_some())
        }
        _ => panic!("not a host function error: {e}"),
    }
}

#[test]
fn panics_and_errors_are_reported_and_later_calls_work() {
    for round in 0..3 {
        let (name, msg, panicked) = host_error(call("call_fail", &mut [Arg::Int(-1)]).unwrap_err());
        assert_eq!(
            (name.as_str(), msg.as_str(), panicked),
            ("host_fail", "host function @host_fail: panicked: negative n -1", true)
        );
        let (_, msg, panicked) = host_error(call("call_fail", &mut [Arg::Int(0)]).unwrap_err());
        assert_eq!((msg.as_str(), panicked), ("host function @host_fail: n is zero", false));
        let mut ok = call("call_fail", &mut [Arg::Int(3 + round)]).unwrap();
        assert_eq!(ok.pop(), Some(Value::Int(2 * (3 + round))));
        assert_eq!(array(ok.remove(0)).to_vec::<f32>().unwrap().len(), 3 + round as usize);
    }
    // Two failures in one module call: the first is reported.
    let mut h = host_fns_without_op();
    h.register("host_op", |args| {
        let n = args.int(0)?;
        if n % 2 == 1 { Err(format!("odd {n}").into()) } else { Ok(vec![Value::Int(n)]) }
    });
    let only_op = compile("host_fns", &h).unwrap();
    let twice = only_op.function("call_op_twice").unwrap();
    let (_, msg, _) = host_error(twice.call(&mut [Arg::Int(3), Arg::Int(5)]).unwrap_err());
    assert_eq!(msg, "host function @host_op: odd 3");
    let (_, msg, _) = host_error(twice.call(&mut [Arg::Int(2), Arg::Int(5)]).unwrap_err());
    assert_eq!(msg, "host function @host_op: odd 5");
    assert_eq!(twice.call(&mut [Arg::Int(2), Arg::Int(4)]).unwrap(), [Value::Int(6)]);
    // Prepared calls report them too; bound calls (which cannot fail) are refused.
    let f = only_op.function("call_op").unwrap();
    let mut p = f.prepare();
    assert!(p.call(&mut [Arg::Int(1)]).is_err());
    assert_eq!(p.call(&mut [Arg::Int(8)]).unwrap().scalar(0), Some(Scalar::I64(8)));
    let args = [Arg::Int(2)];
    assert!(p.bind(&args).err().unwrap().to_string().contains("calls external functions"));
}

#[test]
fn results_of_the_wrong_kind_are_errors() {
    let cases: [(&str, fnabi::mlir::HostResult); 5] = [
        ("wrong number of results: expected 1, got 0", Ok(vec![])),
        ("result [0] (i64): expected an integer, got float 1.5", Ok(vec![Value::Float(1.5)])),
        ("result [0] (i64): expected a scalar, got str", Ok(vec![Value::Str("x".into())])),
        ("result [0] (i64): element type: expected i64, got f32", Ok(vec![Value::from(Array::scalar(1.0f32))])),
        ("custom failure", Err("custom failure".into())),
    ];
    for (want, result) in cases {
        let result = Arc::new(std::sync::Mutex::new(Some(result)));
        let mut h = HostFunctions::new();
        h.register("host_op", move |_| result.lock().unwrap().take().unwrap());
        let lib = compile("host_op", &h).unwrap();
        let (name, msg, _) = host_error(lib.function("call_op").unwrap().call(&mut [Arg::Int(1)]).unwrap_err());
        assert_eq!(name, "host_op");
        assert_eq!(msg, format!("host function @host_op: {want}"));
    }
    // Misusing the arguments inside a host function: typed errors naming them.
    let mut h = HostFunctions::new();
    h.register("host_op", |args| {
        let e1 = args.array(0).unwrap_err().to_string();
        let e2 = args.float(0).unwrap_err().to_string();
        let e3 = args.scalar(1).unwrap_err().to_string();
        assert_eq!(e1, "invalid argument: argument 0 (i64) of @host_op: it is a scalar, not a memref");
        assert_eq!(e2, "invalid argument: argument 0 (i64) of @host_op: it is an integer, not a float");
        assert_eq!(e3, "invalid argument: @host_op has no argument 1: it has 1 arguments");
        assert_eq!((args.name(), args.len(), args.ty().to_string().as_str()), ("host_op", 1, "(i64) -> (i64)"));
        Ok(vec![Value::Int(args.int(0)? * 2)])
    });
    let lib = compile("host_op", &h).unwrap();
    assert_eq!(lib.function("call_op").unwrap().call(&mut [Arg::Int(21)]).unwrap(), [Value::Int(42)]);
    // A memref argument misused as a scalar.
    let mut h = host_fns(0);
    h.register("host_scale", |args| {
        let e = args.int(0).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: argument 0 (memref<?xf32>) of @host_scale: it is a memref, not a scalar");
        let mut w = args.array(0)?.to_contiguous()?;
        assert!(args.write(0, &Array::zeros(fnabi::DType::F32, &[1])?).is_err(), "shape mismatch");
        fnabi::tensor::store(&mut w, &[0], 9.0f32)?;
        args.write(0, &w)?;
        Ok(vec![Value::from(w), Value::Float(0.0)])
    });
    let lib = compile("host_fns", &h).unwrap();
    let mut data = [1.0f32, 2.0];
    let mut x = Array::from_mut_slice(&[2], &mut data).unwrap();
    let out = lib.function("scale_and_sum").unwrap().call(&mut [Arg::Mut(&mut x), Arg::Float(1.0)]).unwrap();
    assert_eq!(out, [Value::Float(11.0), Value::Float(0.0)]);
    drop(x);
    assert_eq!(data, [9.0, 2.0], "the host wrote into the caller's memory");
}

#[test]
fn threads_see_only_their_own_failures() {
    let mut h = host_fns_without_op();
    h.register("host_op", |args| {
        let n = args.int(0)?;
        if n % 5 == 0 { Err(format!("multiple of five: {n}").into()) } else { Ok(vec![Value::Int(n + 1)]) }
    });
    let lib = compile("host_fns", &h).unwrap();
    let f = lib.function("call_op").unwrap();
    let failures = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let (f, failures) = (&f, &failures);
            s.spawn(move || {
                for i in 0..200i64 {
                    let n = t * 1000 + i;
                    match f.call(&mut [Arg::Int(n)]) {
                        Ok(v) => assert_eq!(v, [Value::Int(n + 1)]),
                        Err(e) => {
                            assert_eq!(e.to_string(), format!("host function @host_op: multiple of five: {n}"));
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    assert_eq!(failures.load(Ordering::Relaxed), 4 * 40);
}

#[test]
fn modules_bind_the_same_name_to_different_host_functions() {
    let op = |add: i64| {
        let mut h = HostFunctions::new();
        h.register("host_op", move |args| Ok(vec![Value::Int(args.int(0)? + add)]));
        h
    };
    // The same source twice (one cached library, loaded as two instances)
    // and another module declaring the same name.
    let a = compile("host_op", &op(10)).unwrap();
    let b = compile("host_op", &op(20)).unwrap();
    let (fa, fb, fc) =
        (a.function("call_op").unwrap(), b.function("call_op").unwrap(), lib().function("call_op").unwrap());
    for n in 0..3 {
        assert_eq!(fa.call(&mut [Arg::Int(n)]).unwrap(), [Value::Int(n + 10)]);
        assert_eq!(fb.call(&mut [Arg::Int(n)]).unwrap(), [Value::Int(n + 20)]);
        assert_eq!(fc.call(&mut [Arg::Int(n)]).unwrap(), [Value::Int(n + 1)]);
    }
    drop((a, fa));
    let c = compile("host_op", &op(30)).unwrap();
    assert_eq!(c.function("call_op").unwrap().call(&mut [Arg::Int(1)]).unwrap(), [Value::Int(31)]);
    assert_eq!(fb.call(&mut [Arg::Int(1)]).unwrap(), [Value::Int(21)]);
    // The private copies that the second instances load from are removed.
    // Another test of this process may be between making and removing its
    // own copy (a moment, under the loader's lock): a leak is a copy that
    // stays, so look again for up to five seconds before failing.
    let dir = b.path().parent().unwrap();
    let tag = format!(".fnabi-load-{}-", std::process::id());
    let copies = || -> Vec<_> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(&tag))
            .map(|e| e.file_name())
            .collect()
    };
    let mut left = copies();
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = copies();
    }
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn prebuilt_libraries_without_the_glue_fail_to_load_naming_the_function() {
    // Compiled without fnabi's glue: the external function is an undefined symbol.
    let so = fnabi::mlir::Compiler::new().unwrap().compile(&source("host_op")).unwrap();
    // SAFETY: loading fails before any of its code runs.
    let e = unsafe { MlirLibrary::open_with_host(&so, None, &host_fns(0)) }.unwrap_err().to_string();
    assert!(e.contains("undefined symbol: _mlir_ciface_host_op"), "{e}");
    assert!(e.ends_with("see MlirLibrary::compile_with_host)"), "{e}");
}

#[test]
fn a_host_function_may_call_modules_whose_host_functions_fail() {
    let mut inner = HostFunctions::new();
    inner.register("host_op", |args| Err(format!("inner {}", args.int(0)?).into()));
    let inner = Arc::new(compile("host_op", &inner).unwrap());
    let mut outer = HostFunctions::new();
    let lib2 = inner.clone();
    outer.register("host_op", move |args| {
        let n = args.int(0)?;
        let e = lib2.function("call_op")?.call(&mut [Arg::Int(n)]).unwrap_err();
        assert_eq!(e.to_string(), format!("host function @host_op: inner {n}"));
        Ok(vec![Value::Int(n + 100)])
    });
    let lib = compile("host_op", &outer).unwrap();
    assert_eq!(lib.function("call_op").unwrap().call(&mut [Arg::Int(5)]).unwrap(), [Value::Int(105)]);
}

#[test]
fn missing_host_functions_are_named_before_anything_runs() {
    let e = compile("host_fns", &HostFunctions::new()).unwrap_err().to_string();
    assert!(e.starts_with("the module needs @host_scale: (memref<?xf32>, f32) -> (memref<?xf32>, f64), @host_fill:"));
    assert!(e.ends_with("@host_op: (i64) -> (i64), which no host function or runtime library provides"), "{e}");
    let mut h = host_fns(0);
    h.register_typed("host_op", "(i32) -> i32".parse().unwrap(), |_| Ok(vec![]));
    let e = compile("host_fns", &h).unwrap_err().to_string();
    assert_eq!(e, "type of host function @host_op: expected (i64) -> (i64), got (i32) -> (i32)");

    // The compiled library, opened without its host functions: refused, naming them.
    let path = lib().path().to_path_buf();
    // SAFETY: loading fails before any of its code runs.
    let e = unsafe { MlirLibrary::open(&path) }.unwrap_err().to_string();
    assert!(e.contains("needs the host functions @host_scale: (memref<?xf32>, f32) -> (memref<?xf32>, f64)"), "{e}");
    assert!(e.ends_with("register them (HostFunctions::register)"), "{e}");
    // Opened without its source: the types come from the library itself.
    let mut typed = HostFunctions::new();
    typed.register_typed("host_op", "(i64) -> (i64)".parse().unwrap(), |args| Ok(vec![Value::Int(-args.int(0)?)]));
    let op_lib = compile("host_op", &typed).unwrap();
    let op_path = op_lib.path().to_path_buf();
    // SAFETY: the module only calls host_op.
    let again = unsafe { MlirLibrary::open_with_host(&op_path, None, &typed) }.unwrap();
    let f = again.function_with_type("call_op", "(i64) -> i64".parse().unwrap()).unwrap();
    assert_eq!(f.call(&mut [Arg::Int(4)]).unwrap(), [Value::Int(-4)]);
    let mut wrong = HostFunctions::new();
    wrong.register_typed("host_op", "(f64) -> (f64)".parse().unwrap(), |_| Ok(vec![]));
    // SAFETY: loading fails before any of its code runs.
    let e = unsafe { MlirLibrary::open_with_host(&op_path, None, &wrong) }.unwrap_err().to_string();
    assert_eq!(e, "type of host function @host_op: expected (i64) -> (i64), got (f64) -> (f64)");
}

#[test]
fn externals_report_who_provides_what() {
    let ext = lib().externals();
    assert_eq!(ext.all().len(), 7);
    assert!(ext.all().iter().all(|e| e.provider == Provider::Host));
    assert_eq!(ext.missing().count(), 0);
    assert!(ext.to_string().starts_with("provided: @host_scale (host function), @host_fill (host function)"));
    let plain = compile("host_op", &host_fns(0)).unwrap();
    assert_eq!(plain.externals().to_string(), "provided: @host_op (host function)");
    // A library without external functions.
    let src = "func.func @k() -> i32 {\n  %c = arith.constant 7 : i32\n  return %c : i32\n}\n";
    // SAFETY: @k returns a constant.
    let k = unsafe { MlirLibrary::compile(src) }.unwrap();
    assert!(k.externals().is_empty());
    assert_eq!(k.function("k").unwrap().call(&mut []).unwrap(), [Value::Int(7)]);
}

#[test]
fn declarations_nothing_calls_need_no_provider() {
    let src = source("host_op").replace("module {", "module {\n  func.func private @never_called(f32) -> f32");
    let mut h = HostFunctions::new();
    h.register("host_op", |args| Ok(vec![Value::Int(args.int(0)? * 3)]));
    // SAFETY: the module only calls host_op.
    let lib = unsafe { MlirLibrary::compile_with_host(&src, &h) }.unwrap();
    assert_eq!(lib.externals().to_string(), "provided: @host_op (host function); unused: @never_called");
    assert_eq!(lib.externals().unused().count(), 1);
    assert_eq!(lib.function("call_op").unwrap().call(&mut [Arg::Int(3)]).unwrap(), [Value::Int(9)]);
    // Before compiling, an unprovided declaration counts as needed.
    let decls = fnabi::mlir::parse_functions(&src).unwrap();
    let ext = fnabi::mlir::Externals::resolve(&decls, &h, &fnabi::mlir::RuntimeUtils::none()).unwrap();
    assert_eq!(ext.to_string(), "provided: @host_op (host function); needs: @never_called");
    let mut marked = ext.clone();
    marked.mark_references(lib.path()).unwrap();
    assert!(marked.check().is_ok());
    assert!(ext.check().is_err());
    let e = marked.mark_references(std::path::Path::new("/nonexistent.so")).unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent.so: "), "{e}");
}
