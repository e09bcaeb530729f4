// Functions a user lowers with their own pipeline (the test runs
// mlir-opt on this file, translates the result to LLVM IR and bitcode,
// and runs each level through fnabi).

// Dot product of two vectors (memref arguments: typed by --signature).
func.func @dot(%a: memref<?xf32>, %b: memref<?xf32>) -> f32 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// x * s + 1, into a new vector (a memref result).
func.func @scale(%x: memref<?xf32>, %s: f32) -> memref<?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %m = arith.mulf %v, %s : f32
    %w = arith.addf %m, %one : f32
    memref.store %w, %out[%i] : memref<?xf32>
  }
  return %out : memref<?xf32>
}

// a * x + y on scalars, no C interface: called by its own symbol.
func.func @axpy(%a: f64, %x: f64, %y: i32) -> f64 {
  %yf = arith.sitofp %y : i32 to f64
  %p = arith.mulf %a, %x : f64
  %r = arith.addf %p, %yf : f64
  return %r : f64
}

// What mlir-runner -e main -entry-point-result=i32 runs: the sum of the
// squares of 1..10.
func.func @main() -> i32 {
  %c1 = arith.constant 1 : index
  %c11 = arith.constant 11 : index
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %c1 to %c11 step %c1 iter_args(%acc = %zero) -> (i32) {
    %k = arith.index_cast %i : index to i32
    %sq = arith.muli %k, %k : i32
    %s = arith.addi %acc, %sq : i32
    scf.yield %s : i32
  }
  return %r : i32
}
