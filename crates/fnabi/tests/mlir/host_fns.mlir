// External functions that Rust host functions provide (tests/mlir_host.rs):
// memrefs and scalars both ways, destination passing, strided and unranked
// memrefs, every scalar type (more than the registers hold), and failures.
module {
  // (x * s as a fresh memref, the sum of x).
  func.func private @host_scale(memref<?xf32>, f32) -> (memref<?xf32>, f64)
  // Writes base + 10 * i + j into its argument.
  func.func private @host_fill(memref<?x?xi32>, i32)
  // The sum of a strided view.
  func.func private @host_sum_strided(memref<?xf64, strided<[?], offset: ?>>) -> f64
  // Row sums of any-rank input, as an unranked result.
  func.func private @host_unranked(memref<*xf32>) -> memref<*xf32>
  // A weighted sum of every scalar type; 8 integer-class and 11 float-class
  // arguments: the last ones go on the stack.
  func.func private @host_mix(i1, i8, i16, i32, i64, index, ui16, f16, bf16, f32, f64, f32, f64, f32, f64, f32, f64, f32, i64, f64, f32) -> (f64, i64, i1)
  // Fails (n == 0), panics (n < 0), or returns (arange(n), 2 n).
  func.func private @host_fail(i64) -> (memref<?xf32>, i64)
  func.func private @host_op(i64) -> i64

  // Sums the host's result in MLIR and frees it there (memref.dealloc).
  func.func @scale_and_sum(%x: memref<?xf32>, %s: f32) -> (f32, f64) {
    %y, %t = func.call @host_scale(%x, %s) : (memref<?xf32>, f32) -> (memref<?xf32>, f64)
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %n = memref.dim %y, %c0 : memref<?xf32>
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %y[%i] : memref<?xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.dealloc %y : memref<?xf32>
    return %sum, %t : f32, f64
  }

  // Returns the host's memref to the caller (fnabi adopts and frees it).
  func.func @scale(%x: memref<?xf32>, %s: f32) -> memref<?xf32> {
    %y, %t = func.call @host_scale(%x, %s) : (memref<?xf32>, f32) -> (memref<?xf32>, f64)
    return %y : memref<?xf32>
  }

  // An r x c matrix that the host fills.
  func.func @filled(%r: index, %c: index, %base: i32) -> memref<?x?xi32> {
    %m = memref.alloc(%r, %c) : memref<?x?xi32>
    func.call @host_fill(%m, %base) : (memref<?x?xi32>, i32) -> ()
    return %m : memref<?x?xi32>
  }

  // Column j of m, summed by the host through a strided view.
  func.func @column_sum(%m: memref<?x?xf64>, %j: index) -> f64 {
    %c0 = arith.constant 0 : index
    %r = memref.dim %m, %c0 : memref<?x?xf64>
    %col = memref.subview %m[0, %j] [%r, 1] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
    %s = func.call @host_sum_strided(%col) : (memref<?xf64, strided<[?], offset: ?>>) -> f64
    return %s : f64
  }

  // The host's unranked result: its rank, element 1, and freed here.
  func.func @unranked_roundtrip(%x: memref<?x?xf32>) -> (f32, index) {
    %u = memref.cast %x : memref<?x?xf32> to memref<*xf32>
    %r = func.call @host_unranked(%u) : (memref<*xf32>) -> memref<*xf32>
    %rank = memref.rank %r : memref<*xf32>
    %m = memref.cast %r : memref<*xf32> to memref<?xf32>
    %c1 = arith.constant 1 : index
    %v = memref.load %m[%c1] : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
    return %v, %rank : f32, index
  }

  func.func @mix(%a: i1, %b: i8, %c: i16, %d: i32, %e: i64, %f: index, %g: ui16, %h: f16, %i: bf16, %j: f32, %k: f64, %l: f32, %m: f64, %n: f32, %o: f64, %p: f32, %q: f64, %r: f32, %s: i64, %t: f64, %u: f32) -> (f64, i64, i1) {
    %x, %y, %z = func.call @host_mix(%a, %b, %c, %d, %e, %f, %g, %h, %i, %j, %k, %l, %m, %n, %o, %p, %q, %r, %s, %t, %u) : (i1, i8, i16, i32, i64, index, ui16, f16, bf16, f32, f64, f32, f64, f32, f64, f32, f64, f32, i64, f64, f32) -> (f64, i64, i1)
    return %x, %y, %z : f64, i64, i1
  }

  func.func @call_fail(%n: i64) -> (memref<?xf32>, i64) {
    %m, %k = func.call @host_fail(%n) : (i64) -> (memref<?xf32>, i64)
    return %m, %k : memref<?xf32>, i64
  }

  func.func @call_op(%n: i64) -> i64 {
    %r = func.call @host_op(%n) : (i64) -> i64
    return %r : i64
  }

  // host_op(a) + host_op(b): two host calls in one module call.
  func.func @call_op_twice(%a: i64, %b: i64) -> i64 {
    %x = func.call @host_op(%a) : (i64) -> i64
    %y = func.call @host_op(%b) : (i64) -> i64
    %s = arith.addi %x, %y : i64
    return %s : i64
  }

  // Calls host_op n times: the cost of one host call (benches/host.rs).
  func.func @op_loop(%n: index) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0 : i64
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {
      %r = func.call @host_op(%acc) : (i64) -> i64
      scf.yield %r : i64
    }
    return %s : i64
  }
}
