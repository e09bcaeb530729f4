// Tensor-level functions, as front ends emit them: fnabi bufferizes them
// (function boundaries with identity layouts) and calls the memref
// functions that result. Expected values: tensors_expected.py (numpy).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0) -> (d0)>
#map_red = affine_map<(d0) -> ()>
module {
  // Dynamic shapes, tensor.empty, linalg on tensors.
  func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
    %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
    %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
    %r = linalg.add ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }

  func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %a, %c0 : tensor<?x?xf32>
    %n = tensor.dim %b, %c1 : tensor<?x?xf32>
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%z : tensor<?x?xf32>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }

  // A scalar mixed with tensors; f64; static shape; math.exp.
  func.func @scale_exp(%x: tensor<2x3xf64>, %s: f64) -> tensor<2x3xf64> {
    %e = tensor.empty() : tensor<2x3xf64>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
    ^bb0(%in: f64, %out: f64):
      %m = arith.mulf %in, %s : f64
      %v = math.exp %m : f64
      linalg.yield %v : f64
    } -> tensor<2x3xf64>
    return %r : tensor<2x3xf64>
  }

  // A 0-d result.
  func.func @sum(%x: tensor<?xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.reduce ins(%x : tensor<?xf32>) outs(%z : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    return %r : tensor<f32>
  }

  // f16 in, i1 out.
  func.func @above(%x: tensor<?xf16>, %t: f16) -> tensor<?xi1> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?xf16>
    %e = tensor.empty(%n) : tensor<?xi1>
    %r = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]}
        ins(%x : tensor<?xf16>) outs(%e : tensor<?xi1>) {
    ^bb0(%in: f16, %out: i1):
      %c = arith.cmpf ogt, %in, %t : f16
      linalg.yield %c : i1
    } -> tensor<?xi1>
    return %r : tensor<?xi1>
  }

  // i1 in: counts the true elements (an index result).
  func.func @count(%m: tensor<?xi1>) -> index {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %m, %c0 : tensor<?xi1>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
      %b = tensor.extract %m[%i] : tensor<?xi1>
      %inc = arith.select %b, %c1, %c0 : index
      %next = arith.addi %acc, %inc : index
      scf.yield %next : index
    }
    return %r : index
  }

  // tensor.pad with a constant border.
  func.func @pad(%x: tensor<2x2xi32>) -> tensor<4x5xi32> {
    %c = arith.constant -1 : i32
    %r = tensor.pad %x low[1, 2] high[1, 1] {
    ^bb0(%i: index, %j: index):
      tensor.yield %c : i32
    } : tensor<2x2xi32> to tensor<4x5xi32>
    return %r : tensor<4x5xi32>
  }

  // A strided slice of the argument: copied at the boundary (identity layout).
  func.func @corner(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {
    %r = tensor.extract_slice %x[1, 2] [2, 2] [1, 1] : tensor<4x4xf32> to tensor<2x2xf32>
    return %r : tensor<2x2xf32>
  }

  // Results that alias the argument: the argument itself, and a reshaped
  // view of it, with a fresh tensor (twice the argument) and a scalar between them.
  func.func @views(%x: tensor<6xi64>) -> (tensor<6xi64>, tensor<2x3xi64>, tensor<6xi64>, index) {
    %c0 = arith.constant 0 : index
    %v = tensor.expand_shape %x [[0, 1]] output_shape [2, 3] : tensor<6xi64> into tensor<2x3xi64>
    %e = tensor.empty() : tensor<6xi64>
    %neg = linalg.add ins(%x, %x : tensor<6xi64>, tensor<6xi64>) outs(%e : tensor<6xi64>) -> tensor<6xi64>
    %n = tensor.dim %x, %c0 : tensor<6xi64>
    return %x, %v, %neg, %n : tensor<6xi64>, tensor<2x3xi64>, tensor<6xi64>, index
  }

  // Writes into its argument's tensor: the caller's array must not change.
  func.func @fill(%x: tensor<4xf32>, %v: f32) -> tensor<4xf32> {
    %r = linalg.fill ins(%v : f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }

  // Bytes read as unsigned, to bf16 (halved).
  func.func @bytes_to_bf16(%x: tensor<?xi8>) -> tensor<?xbf16> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?xi8>
    %e = tensor.empty(%n) : tensor<?xbf16>
    %half = arith.constant 0.5 : bf16
    %r = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]}
        ins(%x : tensor<?xi8>) outs(%e : tensor<?xbf16>) {
    ^bb0(%in: i8, %out: bf16):
      %f = arith.uitofp %in : i8 to bf16
      %h = arith.mulf %f, %half : bf16
      linalg.yield %h : bf16
    } -> tensor<?xbf16>
    return %r : tensor<?xbf16>
  }

  // Unsigned elements pass through (the result is the argument).
  func.func @same_u16(%x: tensor<?xui16>) -> tensor<?xui16> {
    return %x : tensor<?xui16>
  }

  // The other element types pass through, in reverse order (each result is
  // its argument): i16, ui8 (dynamic), ui32, ui64 (0-d).
  func.func @reverse(%a: tensor<2xi16>, %b: tensor<?xui8>, %c: tensor<3xui32>, %d: tensor<ui64>)
      -> (tensor<ui64>, tensor<3xui32>, tensor<?xui8>, tensor<2xi16>) {
    return %d, %c, %b, %a : tensor<ui64>, tensor<3xui32>, tensor<?xui8>, tensor<2xi16>
  }

  // Matrix products that fnabi's default pipeline tiles (8 x 32 x 4 blocks,
  // the partial ones peeled off): static shapes that divide into blocks,
  // and a batched product of dynamic shapes that do not.
  func.func @matmul_static(%a: tensor<16x8xf32>, %b: tensor<8x64xf32>) -> tensor<16x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
    %r = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
    return %r : tensor<16x64xf32>
  }

  func.func @batch_matmul(%a: tensor<?x?x?xi32>, %b: tensor<?x?x?xi32>) -> tensor<?x?x?xi32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0 : i32
    %n = tensor.dim %a, %c0 : tensor<?x?x?xi32>
    %m = tensor.dim %a, %c1 : tensor<?x?x?xi32>
    %p = tensor.dim %b, %c2 : tensor<?x?x?xi32>
    %e = tensor.empty(%n, %m, %p) : tensor<?x?x?xi32>
    %z = linalg.fill ins(%zero : i32) outs(%e : tensor<?x?x?xi32>) -> tensor<?x?x?xi32>
    %r = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xi32>, tensor<?x?x?xi32>) outs(%z : tensor<?x?x?xi32>) -> tensor<?x?x?xi32>
    return %r : tensor<?x?x?xi32>
  }
}
