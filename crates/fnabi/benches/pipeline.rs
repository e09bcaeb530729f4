//! The default MLIR pipeline (tensor-level code bufferized and lowered):
//! how long compiling takes and how fast its code runs.
//!
//! - `compile/mlp_cold`: `examples/mlp.mlir` compiled into an empty cache
//!   (every tool of the pipeline runs); `compile/mlp_warm`: the same source
//!   found in the cache (hash, key comparison, no tool).
//! - `compile/funcs1500_cold` and `_warm`: the same for a generated module of
//!   1,500 small tensor-level functions (a large module's compile time).
//! - `matmul512/default`: a tensor-level 512×512×512 f32 `linalg.matmul`
//!   compiled by the default pipeline (linalg → loops; LLVM `-O2` does the
//!   rest), called through [`fnabi::Function`]; criterion's throughput is in
//!   floating-point operations (2·512³ per call), so `elem/s` reads as FLOP/s.
//! - `matmul512/runtime_verification`: the same with MLIR's runtime op
//!   verification compiled in (what `fnabi run` does by default).
//!
//! `cargo bench -p fnabi --bench pipeline -- --warm-up-time 1 --measurement-time 5`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fnabi::mlir::{CompileOptions, Compiler, LinkInputs, MlirModule};
use fnabi::{Array, Value};
use std::hint::black_box;

const MATMUL: &str = "func.func @matmul(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>)
                     outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
";

/// A module of `n` tensor-level functions, each `x * k + y` over `tensor<?xf32>`.
fn many_functions(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "func.func @f{i}(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {{
  %c0 = arith.constant 0 : index
  %k = arith.constant {i}.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = [\"parallel\"]}} ins(%x, %y : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  }} -> tensor<?xf32>
  return %r : tensor<?xf32>
}}
"
        ));
    }
    s
}

fn bench(c: &mut Criterion) {
    let mlp = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mlp.mlir")).unwrap();
    let compiler = Compiler::new().unwrap();
    let root = std::env::temp_dir().join(format!("fnabi-bench-pipeline-{}", std::process::id()));
    let mut g = c.benchmark_group("compile");
    g.sample_size(10);
    let mut n = 0u32;
    g.bench_function("mlp_cold", |b| {
        b.iter(|| {
            n += 1;
            let cold = Compiler::with(compiler.toolchain().clone(), root.join(format!("cold{n}")));
            black_box(cold.compile(&mlp).unwrap())
        })
    });
    let warm = Compiler::with(compiler.toolchain().clone(), root.join("warm"));
    warm.compile(&mlp).unwrap();
    g.bench_function("mlp_warm", |b| b.iter(|| black_box(warm.compile_with(&mlp, &LinkInputs::default()).unwrap())));
    // `cargo test --all-targets` runs each benchmark once (criterion's test
    // mode, without `--bench`): the large module is left to `cargo bench`.
    let benching = std::env::args().any(|a| a == "--bench");
    let many = many_functions(if benching { 1500 } else { 10 });
    g.bench_function("funcs1500_cold", |b| {
        b.iter(|| {
            n += 1;
            let cold = Compiler::with(compiler.toolchain().clone(), root.join(format!("cold{n}")));
            black_box(cold.compile(&many).unwrap())
        })
    });
    warm.compile(&many).unwrap();
    g.bench_function("funcs1500_warm", |b| b.iter(|| black_box(warm.compile(&many).unwrap())));
    g.finish();
    let _ = std::fs::remove_dir_all(&root);

    let a = Array::from_vec(&[512, 512], (0..512 * 512).map(|i| (i % 7) as f32 - 3.0).collect()).unwrap();
    let b = Array::from_vec(&[512, 512], (0..512 * 512).map(|i| (i % 5) as f32 * 0.5).collect()).unwrap();
    let mut g = c.benchmark_group("matmul512");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * 512 * 512 * 512));
    for (name, verify) in [("default", false), ("runtime_verification", true)] {
        let options = CompileOptions::default().with_runtime_verification(verify);
        // SAFETY: the matmul writes only into the result it allocates.
        let m = unsafe { MlirModule::compile_with_options(MATMUL, &options) }.unwrap();
        let f = m.function("matmul").unwrap();
        g.bench_function(name, |bch| {
            bch.iter(|| black_box(f.call([Value::from(a.clone()), Value::from(b.clone())]).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
