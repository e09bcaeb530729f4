//! The default pipeline's loop tiling of matrix products: a transform-dialect
//! schedule that `mlir-opt` applies after bufferization.
//!
//! `--convert-linalg-to-loops` turns a `linalg.matmul` into an `i, j, k`
//! loop nest whose innermost loop walks a column of the right-hand matrix
//! and accumulates into one element: LLVM can neither vectorize it (a
//! floating-point reduction must keep its order) nor interchange the
//! loops, so a 512³ f32 product runs at about 1.5 GFLOP/s. Tiled into
//! 8 × 32 × 4 blocks, with each tiled loop *peeled* (its last, partial
//! block split off, so that the main blocks have static sizes whatever
//! the shapes), the inner loops run along contiguous rows of 32 elements
//! with a fixed trip count: LLVM's `-O2` unrolls and vectorizes them: 27×
//! the speed on static shapes, 23× on dynamic ones (see the `pipeline`
//! bench and `docs/DESIGN.md`). Tiling changes only the order of the
//! loops, never an element's sum order over `k` (each output element is
//! still accumulated in ascending `k`), so results are those of the
//! untiled loops.
//!
//! Every step is under `failures(suppress)`: an op the schedule cannot
//! tile (element types are no obstacle; tiling is type-agnostic) stays as
//! it is and becomes plain loops. Vectorizing in MLIR itself
//! (`transform.structured.vectorize`) was measured and left out: it adds
//! nothing over LLVM's vectorizer on these tiles, and its masked form for
//! dynamic shapes lowers through stack temporaries that overflow the
//! stack in long loops.
//!
//! ```
//! use fnabi_mlir::tiling::{TILING_SCHEDULE, TILING_SCHEDULE_FILE};
//! assert!(TILING_SCHEDULE.contains("@__transform_main"));
//! assert!(fnabi_mlir::compile::PIPELINE.iter().any(|p| p.ends_with(TILING_SCHEDULE_FILE)));
//! ```

/// The file name the schedule is written under in the compile's folder
/// (`--transform-preload-library=transform-library-paths=…` names it).
pub const TILING_SCHEDULE_FILE: &str = "tile-contractions.mlir";

/// The schedule: `linalg.matmul` tiled 8 × 32 × 4 and `linalg.batch_matmul`
/// 1 × 8 × 32 × 4, every tiled loop but the batch loop peeled.
pub const TILING_SCHEDULE: &str = r#"// fnabi's default tiling of matrix products (see fnabi-mlir's tiling module).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.foreach %matmuls : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.sequence %one : !transform.any_op failures(suppress) {
      ^bb1(%op: !transform.any_op):
        %tiled, %i, %j, %k = transform.structured.tile_using_for %op tile_sizes [8, 32, 4]
          : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">, !transform.op<"scf.for">)
        %k0, %k1 = transform.loop.peel %k : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
        %j0, %j1 = transform.loop.peel %j : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
        %i0, %i1 = transform.loop.peel %i : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    %batched = transform.structured.match ops{["linalg.batch_matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.foreach %batched : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.sequence %one : !transform.any_op failures(suppress) {
      ^bb1(%op: !transform.any_op):
        %tiled, %b, %i, %j, %k = transform.structured.tile_using_for %op tile_sizes [1, 8, 32, 4]
          : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">, !transform.op<"scf.for">, !transform.op<"scf.for">)
        %k0, %k1 = transform.loop.peel %k : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
        %j0, %j1 = transform.loop.peel %j : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
        %i0, %i1 = transform.loop.peel %i : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    %funcs = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
"#;
