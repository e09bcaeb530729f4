// Calls MLIR's runtime utilities (libmlir_runner_utils, libmlir_c_runner_utils):
// printMemref* in C-interface form, printF32/printI64/printNewline through
// fnabi's shims (tests/mlir_runtime_utils.rs).
module {
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printF32(f32)
  func.func private @printI64(i64)
  func.func private @printNewline()

  func.func @print2d(%m: memref<?x?xf32>) {
    %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }

  func.func @print1d_i32(%m: memref<?xi32>) {
    %u = memref.cast %m : memref<?xi32> to memref<*xi32>
    func.call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }

  func.func @print_scalars(%x: f32, %n: i64) {
    func.call @printF32(%x) : (f32) -> ()
    func.call @printNewline() : () -> ()
    func.call @printI64(%n) : (i64) -> ()
    func.call @printNewline() : () -> ()
    return
  }
}
