//! The default MLIR pipeline (tensor-level code bufferized and lowered):
//! how long compiling takes and how fast its code runs.
//!
//! - `compile/mlp_cold`: `examples/mlp.mlir` compiled into an empty cache
//!   (every tool of the pipeline runs); `compile/mlp_warm`: the same source
//!   found in the cache (hash, key comparison, no tool).
//! - `compile/funcs1500_cold` and `_warm`: the same for a generated module of
//!   1,500 small tensor-level functions (a large module's compile time).
//! - `matmul512/default`: a tensor-level 512×512×512 f32 `linalg.matmul`
//!   compiled by the default pipeline (tiled 8×32×4 and peeled by
//!   [`fnabi::mlir::tiling`], linalg → loops; LLVM `-O2` vectorizes the
//!   rest), called through [`fnabi::Function`]; criterion's throughput is in
//!   floating-point operations (2·512³ per call), so `elem/s` reads as FLOP/s.
//! - `matmul512/dynamic`: the same product of `tensor<?x?xf32>` arguments.
//! - `matmul512/runtime_verification`: the default with MLIR's runtime op
//!   verification compiled in (what `fnabi run` does by default).
//! - Anchors, each a custom pipeline (`CompileOptions::with_pipeline`) in
//!   place of fnabi's high-level passes: `matmul512/untiled`, linalg straight
//!   to loops (fnabi's default before the tiling); `matmul512/vectorized`,
//!   MLIR's own vectorizer (`transform.structured.vectorize` of 8×32×1
//!   tiles, contractions lowered to outer products), the route of
//!   upstream's vectorizing integration tests.
//!
//! `cargo bench -p fnabi --bench pipeline -- --warm-up-time 1 --measurement-time 5`

#[path = "../tests/common/mod.rs"]
mod common;

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
    let root = common::Scratch::new("bench-pipeline");
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
    // The compile caches' disk freed now (the folder is made again below).
    let _ = std::fs::remove_dir_all(&root);

    let a = Array::from_vec(&[512, 512], (0..512 * 512).map(|i| (i % 7) as f32 - 3.0).collect()).unwrap();
    let b = Array::from_vec(&[512, 512], (0..512 * 512).map(|i| (i % 5) as f32 * 0.5).collect()).unwrap();
    let mut g = c.benchmark_group("matmul512");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * 512 * 512 * 512));
    let schedule = root.join("vectorize.mlir");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(&schedule, VECTORIZE).unwrap();
    let bufferize = "convert-elementwise-to-linalg, one-shot-bufferize{bufferize-function-boundaries \
                     function-boundary-type-conversion=identity-layout-map}, convert-bufferization-to-memref";
    let untiled = format!("builtin.module({bufferize}, func.func(convert-linalg-to-loops))");
    let vectorized = format!(
        "builtin.module({bufferize}, transform-preload-library{{transform-library-paths={}}}, transform-interpreter, \
         convert-linalg-to-loops, convert-vector-to-scf, lower-affine)",
        schedule.display()
    );
    let dynamic = MATMUL.replace("tensor<512x512xf32>", "tensor<?x?xf32>").replace(
        "%e = tensor.empty() : tensor<?x?xf32>",
        "%c512 = arith.constant 512 : index\n  %e = tensor.empty(%c512, %c512) : tensor<?x?xf32>",
    );
    let variants = [
        ("default", MATMUL, CompileOptions::default()),
        ("dynamic", &dynamic, CompileOptions::default()),
        ("runtime_verification", MATMUL, CompileOptions::default().with_runtime_verification(true)),
        ("untiled", MATMUL, CompileOptions::default().with_pipeline(untiled)),
        ("vectorized", MATMUL, CompileOptions::default().with_pipeline(vectorized)),
    ];
    for (name, source, options) in variants {
        // SAFETY: the matmul writes only into the result it allocates.
        let m = unsafe { MlirModule::compile_with_options(source, &options) }.unwrap();
        let f = m.function("matmul").unwrap();
        g.bench_function(name, |bch| {
            bch.iter(|| black_box(f.call([Value::from(a.clone()), Value::from(b.clone())]).unwrap()))
        });
    }
    g.finish();
}

/// The `matmul512/vectorized` anchor's schedule: MLIR's linalg vectorizer
/// on 8×32×1 tiles, contractions lowered to outer products.
const VECTORIZE: &str = r#"module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %mm tile_sizes [8, 32, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %t : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
"#;

criterion_group!(benches, bench);
criterion_main!(benches);
