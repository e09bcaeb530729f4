//! Cost of host functions that MLIR code calls (`tests/mlir/host_fns.mlir`):
//! `host/op_x1000` runs a compiled loop making 1000 calls of a scalar host
//! function (`(i64) -> i64`; criterion reports the time per call as the
//! per-element time); `host/scale_16` and `host/scale_4096` make one call of
//! a host function that gets a memref view and returns a fresh memref
//! (copied into malloc memory, summed and freed by MLIR), through a module
//! call made with fnabi.
//!
//! `cargo bench -p fnabi --bench host -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fnabi::mlir::{Arg, HostFunctions, MlirLibrary};
use fnabi::{Array, Value};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/host_fns.mlir")).unwrap();
    let mut host = HostFunctions::new();
    host.register("host_op", |args| Ok(vec![Value::Int(args.int(0)? + 1)]));
    host.register("host_scale", |args| {
        let s = args.float(1)? as f32;
        let x = args.array(0)?;
        let v = x.as_slice::<f32>().ok_or("not contiguous")?;
        let y: Vec<f32> = v.iter().map(|a| a * s).collect();
        Ok(vec![Value::from(Array::from_vec(x.shape(), y)?), Value::Float(0.0)])
    });
    for name in ["host_fill", "host_sum_strided", "host_unranked", "host_mix", "host_fail"] {
        host.register(name, |_| Err("not used here".into()));
    }
    // SAFETY: the benchmarked functions only call host_op and host_scale.
    let lib = unsafe { MlirLibrary::compile_with_host(&src, &host) }.unwrap();

    let op_loop = lib.function("op_loop").unwrap();
    assert_eq!(op_loop.call(&mut [Arg::Int(1000)]).unwrap(), [Value::Int(1000)]);
    let mut g = c.benchmark_group("host");
    g.throughput(Throughput::Elements(1000));
    let mut p = op_loop.prepare();
    g.bench_function("op_x1000", |b| b.iter(|| p.call(&mut [Arg::Int(black_box(1000))]).unwrap().scalar(0)));

    g.throughput(Throughput::Elements(1));
    let scale = lib.function("scale_and_sum").unwrap();
    for n in [16usize, 4096] {
        let x = Array::from_vec(&[n], (0..n).map(|v| v as f32).collect()).unwrap();
        let mut p = scale.prepare();
        g.bench_function(format!("scale_{n}"), |b| {
            b.iter(|| p.call(&mut [Arg::Array(&x), Arg::Float(2.0)]).unwrap().scalar(0))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
