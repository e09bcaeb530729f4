// The two-layer MLP of mlp.mlir, y = relu(x @ w1 + b1) @ w2 + b2, written
// with linalg on tensors: the level both of fnabi's backends take, so it
// runs on either (its parameters are positional arguments here; the dict
// of mlp.mlir is a `sip` attribute of fnabi's MLIR backend).
//
// x: [batch, 4], w1: [4, 8], b1: [8], w2: [8, 3], b2: [3], y: [batch, 3].
// Run it: fnabi run examples/mlp_tensor.mlir --inputs examples/mlp_tensor_inputs.json [--backend iree]
#bias = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @mlp(%x: tensor<?x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>,
               %w2: tensor<8x3xf32>, %b2: tensor<3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>

  // Layer 1: h = relu(x @ w1 + b1)
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<?x4xf32>, tensor<4x8xf32>) outs(%z1 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : tensor<8xf32>) outs(%m1 : tensor<?x8xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>

  // Layer 2: y = h @ w2 + b2
  %e2 = tensor.empty(%n) : tensor<?x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x3xf32>) -> tensor<?x3xf32>
  %m2 = linalg.matmul ins(%h, %w2 : tensor<?x8xf32>, tensor<8x3xf32>) outs(%z2 : tensor<?x3xf32>) -> tensor<?x3xf32>
  %y = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<3xf32>) outs(%m2 : tensor<?x3xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
