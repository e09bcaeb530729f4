// A two-layer MLP, y = relu(x @ w1 + b1) @ w2 + b2, written with linalg on
// memrefs. Its parameters arrive as one dict through the `sip` attribute:
//
//   mlp(x, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}) -> y
//
// x: [batch, 4], w1: [4, 8], b1: [8], w2: [8, 3], b2: [3], y: [batch, 3].
// Run it: fnabi run examples/mlp.mlir --function mlp --inputs examples/mlp_inputs.json
#bias = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
module {
  func.func @mlp(%x: memref<?x4xf32>, %w1: memref<4x8xf32>, %b1: memref<8xf32>,
                 %w2: memref<8x3xf32>, %b2: memref<3xf32>) -> memref<?x3xf32> attributes {
    sipv = "1", sip = "I43!S39!k0_0k1D29!K3!b1_2K3!b2_4K3!w1_1K3!w2_3R3!_0"
  } {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = memref.dim %x, %c0 : memref<?x4xf32>

    // Layer 1: h = relu(x @ w1 + b1)
    %h = memref.alloc(%n) {alignment = 64} : memref<?x8xf32>
    linalg.fill ins(%zero : f32) outs(%h : memref<?x8xf32>)
    linalg.matmul ins(%x, %w1 : memref<?x4xf32>, memref<4x8xf32>) outs(%h : memref<?x8xf32>)
    linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
        ins(%b1 : memref<8xf32>) outs(%h : memref<?x8xf32>) {
    ^bb0(%b: f32, %v: f32):
      %s = arith.addf %v, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }

    // Layer 2: y = h @ w2 + b2
    %y = memref.alloc(%n) {alignment = 64} : memref<?x3xf32>
    linalg.fill ins(%zero : f32) outs(%y : memref<?x3xf32>)
    linalg.matmul ins(%h, %w2 : memref<?x8xf32>, memref<8x3xf32>) outs(%y : memref<?x3xf32>)
    linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
        ins(%b2 : memref<3xf32>) outs(%y : memref<?x3xf32>) {
    ^bb0(%b: f32, %v: f32):
      %s = arith.addf %v, %b : f32
      linalg.yield %s : f32
    }
    memref.dealloc %h : memref<?x8xf32>
    return %y : memref<?x3xf32>
  }
}
