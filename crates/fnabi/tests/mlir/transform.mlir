// A tensor-level matmul whose schedule is given in the transform dialect
// (as front ends and tuning scripts emit it): fnabi applies
// `@__transform_main` with the transform interpreter, erases it, and
// lowers the tiled code. Expected values: tensors_expected.py (numpy).
module attributes {transform.with_named_sequence} {
  func.func @tiled_matmul(%a: tensor<6x5xf32>, %b: tensor<5x4xf32>, %c: tensor<6x4xf32>) -> tensor<6x4xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x4xf32>) outs(%c : tensor<6x4xf32>) -> tensor<6x4xf32>
    return %r : tensor<6x4xf32>
  }

  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %module : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:2 = transform.structured.tile_using_for %mm tile_sizes [4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
