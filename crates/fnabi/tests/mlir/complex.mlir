// complex<f32>/complex<f64> tensors (issue 14): fnabi passes them as
// memrefs of two-float structs, real part first (numpy's complex64 and
// complex128). Expected values: complex_expected.py (numpy).
#map = affine_map<(d0) -> (d0)>
#map0 = affine_map<() -> ()>
module {
  // Elementwise complex product.
  func.func @cmul(%a: tensor<?xcomplex<f32>>, %b: tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?xcomplex<f32>>
    %e = tensor.empty(%n) : tensor<?xcomplex<f32>>
    %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<?xcomplex<f32>>, tensor<?xcomplex<f32>>) outs(%e : tensor<?xcomplex<f32>>) {
    ^bb0(%x: complex<f32>, %y: complex<f32>, %out: complex<f32>):
      %p = complex.mul %x, %y : complex<f32>
      linalg.yield %p : complex<f32>
    } -> tensor<?xcomplex<f32>>
    return %r : tensor<?xcomplex<f32>>
  }

  // |z| as f32, and the conjugate built from re/im.
  func.func @abs_conj(%a: tensor<?xcomplex<f32>>) -> (tensor<?xf32>, tensor<?xcomplex<f32>>) {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?xcomplex<f32>>
    %e = tensor.empty(%n) : tensor<?xf32>
    %ec = tensor.empty(%n) : tensor<?xcomplex<f32>>
    %r:2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%a : tensor<?xcomplex<f32>>) outs(%e, %ec : tensor<?xf32>, tensor<?xcomplex<f32>>) {
    ^bb0(%x: complex<f32>, %o: f32, %oc: complex<f32>):
      %m = complex.abs %x : complex<f32>
      %re = complex.re %x : complex<f32>
      %im = complex.im %x : complex<f32>
      %nim = arith.negf %im : f32
      %cj = complex.create %re, %nim : complex<f32>
      linalg.yield %m, %cj : f32, complex<f32>
    } -> (tensor<?xf32>, tensor<?xcomplex<f32>>)
    return %r#0, %r#1 : tensor<?xf32>, tensor<?xcomplex<f32>>
  }

  // complex<f64> through a copy (bit-exact: NaN, infinities, signed zeros).
  func.func @pass128(%a: tensor<?x?xcomplex<f64>>) -> tensor<?x?xcomplex<f64>> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d0 = tensor.dim %a, %c0 : tensor<?x?xcomplex<f64>>
    %d1 = tensor.dim %a, %c1 : tensor<?x?xcomplex<f64>>
    %e = tensor.empty(%d0, %d1) : tensor<?x?xcomplex<f64>>
    %r = linalg.copy ins(%a : tensor<?x?xcomplex<f64>>) outs(%e : tensor<?x?xcomplex<f64>>) -> tensor<?x?xcomplex<f64>>
    return %r : tensor<?x?xcomplex<f64>>
  }

  // 0-d: z * w + 1 in complex<f64> (a generic over 0-d tensors: IREE
  // cannot splat a 16-byte element, which tensor.from_elements needs).
  func.func @fma0(%z: tensor<complex<f64>>, %w: tensor<complex<f64>>) -> tensor<complex<f64>> {
    %e = tensor.empty() : tensor<complex<f64>>
    %r = linalg.generic {indexing_maps = [#map0, #map0, #map0], iterator_types = []}
        ins(%z, %w : tensor<complex<f64>>, tensor<complex<f64>>) outs(%e : tensor<complex<f64>>) {
    ^bb0(%x: complex<f64>, %y: complex<f64>, %out: complex<f64>):
      %p = complex.mul %x, %y : complex<f64>
      %one = complex.constant [1.0, 0.0] : complex<f64>
      %s = complex.add %p, %one : complex<f64>
      linalg.yield %s : complex<f64>
    } -> tensor<complex<f64>>
    return %r : tensor<complex<f64>>
  }
}
