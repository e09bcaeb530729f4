// Tensor-level functions (linalg on tensors, math through libm, f64,
// several results) that both fnabi's native pipeline and IREE's
// `iree-compile` 3.13 accept: `fnabi run … --backend mlir|iree` runs them on
// either, and the tests check both against numpy (entry_cli.rs,
// iree_backend_cli.rs).

#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>

// relu(x @ w + b)
func.func @dense_relu(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<?x3xf32>, tensor<3xf32>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%a: f32, %bb: f32, %out: f32):
    %s = arith.addf %a, %bb : f32
    %y = arith.maximumf %s, %zero : f32
    linalg.yield %y : f32
  } -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// exp(x) * s, elementwise in f32
func.func @scaled_exp(%x: tensor<2x3xf32>, %s: f32) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %ex = math.exp %a : f32
    %y = arith.mulf %ex, %s : f32
    linalg.yield %y : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// (sum of x, 2 * x) for integers
func.func @sum_and_double(%x: tensor<?xi32>) -> (tensor<i32>, tensor<?xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %n = tensor.dim %x, %c0 : tensor<?xi32>
  %e0 = tensor.empty() : tensor<i32>
  %acc = linalg.fill ins(%zero : i32) outs(%e0 : tensor<i32>) -> tensor<i32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<?xi32>) outs(%acc : tensor<i32>) {
  ^bb0(%a: i32, %o: i32):
    %t = arith.addi %a, %o : i32
    linalg.yield %t : i32
  } -> tensor<i32>
  %e1 = tensor.empty(%n) : tensor<?xi32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xi32>) outs(%e1 : tensor<?xi32>) {
  ^bb0(%a: i32, %o: i32):
    %t = arith.addi %a, %a : i32
    linalg.yield %t : i32
  } -> tensor<?xi32>
  return %s, %d : tensor<i32>, tensor<?xi32>
}

// exp(x * s) in f64 (IREE keeps f64 only without its default f64 -> f32
// demotion, which fnabi turns off)
func.func @scale_exp_f64(%x: tensor<3xf64>, %s: f64) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<3xf64>) outs(%e : tensor<3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.mulf %a, %s : f64
    %y = math.exp %m : f64
    linalg.yield %y : f64
  } -> tensor<3xf64>
  return %r : tensor<3xf64>
}
