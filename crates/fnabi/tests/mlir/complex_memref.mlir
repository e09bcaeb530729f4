// A complex<f32> memref written in place (issue 14; tests/mlir_complex.rs).
module {
  // A memref argument written in place: each element times i.
  func.func @rotate(%m: memref<?xcomplex<f32>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xcomplex<f32>>
    %i = complex.constant [0.0 : f32, 1.0 : f32] : complex<f32>
    scf.for %k = %c0 to %n step %c1 {
      %v = memref.load %m[%k] : memref<?xcomplex<f32>>
      %p = complex.mul %v, %i : complex<f32>
      memref.store %p, %m[%k] : memref<?xcomplex<f32>>
    }
    return
  }
}
