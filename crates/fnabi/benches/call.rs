//! Call overhead of MLIR-compiled code: a direct `extern "C"` call of
//! `_mlir_ciface_first_f32` through a typed function pointer with a
//! prebuilt descriptor (`direct/first_f32`), against fnabi's prepared call
//! of the same symbol with its argument bound once (`fnabi/first_f32`) and
//! bound on every call (`fnabi/first_f32_rebind`). Same run, same library.
//!
//! `fnabi/dict8`: a whole structured call through [`fnabi::Function`] — a
//! dict of 8 `f32[4]` arrays flattened by the function's `sip` signature
//! into 8 descriptors, the call, and the one callee-allocated result array
//! adopted (and freed when dropped) — with a prepared call;
//! `direct/dict8`, its anchor in the same run: `_mlir_ciface_dict8` of the
//! same source called through a typed function pointer with 8 prebuilt
//! descriptors, and its result freed (what the structured call adds is
//! the difference).
//!
//! `cargo bench -p fnabi --bench call -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use fnabi::Array;
use fnabi::memref::MemRefDescriptor;
use fnabi::mlir::{Arg, MlirLibrary};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/memref_abi.mlir")).unwrap();
    // SAFETY: first_f32 only reads its argument.
    let lib = unsafe { MlirLibrary::compile(&src) }.unwrap();
    let f = lib.function("first_f32").unwrap();
    let x = Array::from_vec(&[16], (0..16).map(|v| v as f32 + 7.0).collect()).unwrap();

    let desc = MemRefDescriptor::<f32, 1>::from_array(&x).unwrap();
    // SAFETY: the symbol is `float _mlir_ciface_first_f32(MemRef1Df32 *)`.
    let direct: unsafe extern "C" fn(*const MemRefDescriptor<f32, 1>) -> f32 =
        unsafe { std::mem::transmute(f.symbol_address()) };
    c.bench_function("direct/first_f32", |b| {
        // SAFETY: `desc` describes `x`, alive for the whole benchmark.
        b.iter(|| unsafe { direct(black_box(&desc)) })
    });

    // The arguments bound once, as the direct call's descriptor is built once.
    let mut p = f.prepare();
    let args = [Arg::Array(&x)];
    let mut bound = p.bind(&args).unwrap();
    c.bench_function("fnabi/first_f32", |b| b.iter(|| bound.invoke().scalar(0)));
    assert_eq!(bound.invoke().scalar(0), Some(fnabi::mlir::Scalar::F32(7.0)));

    // The array bound on every call (checked and described each time).
    let mut p = f.prepare();
    c.bench_function("fnabi/first_f32_rebind", |b| {
        b.iter(|| p.call(&mut [Arg::Array(black_box(&x))]).unwrap().scalar(0))
    });
    assert_eq!(p.call(&mut [Arg::Array(&x)]).unwrap().scalar(0), Some(fnabi::mlir::Scalar::F32(7.0)));
}

fn bench_dict8(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/sip_dict8.mlir");
    {
        // SAFETY: dict8 only reads its arguments and returns fresh memory.
        let lib = unsafe { MlirLibrary::compile(&std::fs::read_to_string(path).unwrap()) }.unwrap();
        let f = lib.function("dict8").unwrap();
        let ks: Vec<Array<'static>> = (0..8).map(|k| Array::from_vec(&[4], vec![k as f32; 4]).unwrap()).collect();
        let d: Vec<MemRefDescriptor<f32, 1>> = ks.iter().map(|a| MemRefDescriptor::from_array(a).unwrap()).collect();
        type Desc = *const MemRefDescriptor<f32, 1>;
        // SAFETY: the symbol is `void _mlir_ciface_dict8(MemRef1Df32 *out,
        // MemRef1Df32 *k0, …, MemRef1Df32 *k7)`.
        let direct: unsafe extern "C" fn(
            *mut MemRefDescriptor<f32, 1>,
            Desc,
            Desc,
            Desc,
            Desc,
            Desc,
            Desc,
            Desc,
            Desc,
        ) = unsafe { std::mem::transmute(f.symbol_address()) };
        let mut out = MemRefDescriptor::<f32, 1> {
            allocated: std::ptr::null_mut(),
            aligned: std::ptr::null_mut(),
            offset: 0,
            sizes: [0],
            strides: [0],
        };
        let mut call = || {
            // SAFETY: the descriptors describe `ks`, alive for the whole
            // benchmark; the result was allocated by the module's `malloc`
            // (the C library's), freed once here.
            unsafe {
                direct(&mut out, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7]);
                let sum = *out.aligned.add(3);
                libc::free(out.allocated.cast());
                sum
            }
        };
        assert_eq!(call(), 28.0);
        c.bench_function("direct/dict8", |b| b.iter(|| black_box(call())));
    }
    // SAFETY: dict8 only reads its arguments and returns fresh memory.
    let module = unsafe { fnabi::mlir::MlirModule::load(path) }.unwrap();
    let f = module.function("dict8").unwrap();
    let dict = fnabi::Value::dict(
        (0..8).map(|k| (format!("k{k}"), fnabi::Value::from(Array::from_vec(&[4], vec![k as f32; 4]).unwrap()))),
    );
    let bound = fnabi::Value::Tuple(vec![dict]);
    let mut p = f.prepare();
    let check = p.call_bound(&bound).unwrap();
    assert_eq!(check.as_array().unwrap().to_vec::<f32>().unwrap(), [28.0; 4]);
    c.bench_function("fnabi/dict8", |b| b.iter(|| black_box(p.call_bound(black_box(&bound)).unwrap())));
}

criterion_group!(benches, bench, bench_dict8);
criterion_main!(benches);
