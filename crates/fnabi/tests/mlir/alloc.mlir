// A function whose result size comes from its inputs: the outer product of
// an m- and an n-vector allocates m*n floats (plus MLIR's 64-byte
// alignment pad), so small inputs can ask for any amount of memory.
// fnabi's allocation glue checks each such allocation against the
// per-array byte limit and the allocator's answer (crates/fnabi-cli/tests/
// hardening_cli.rs, crates/fnabi-py/tests/test_errors.py).
func.func @outer(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?xf32>
  %n = tensor.dim %b, %c0 : tensor<?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
