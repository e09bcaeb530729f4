// 8-bit float memrefs through the MLIR calling convention: the bytes go
// in and come back untouched (reversed), whatever they mean. (Arithmetic on
// f8 types needs arith lowerings the default pipeline does not run.)
func.func @reverse(%x: memref<4xf8E4M3FN>) -> memref<4xf8E4M3FN> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %y = memref.alloc() : memref<4xf8E4M3FN>
  scf.for %i = %c0 to %c4 step %c1 {
    %j = arith.subi %c3, %i : index
    %v = memref.load %x[%i] : memref<4xf8E4M3FN>
    memref.store %v, %y[%j] : memref<4xf8E4M3FN>
  }
  return %y : memref<4xf8E4M3FN>
}
