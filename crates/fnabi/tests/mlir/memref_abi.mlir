// fnabi's MLIR calling-convention fixtures: compiled by the real Debian tools
// through fnabi's own pipeline during `cargo test` (tests/mlir_call.rs).
// Functions without `llvm.emit_c_interface` get their `_mlir_ciface_` wrapper
// from the pipeline's `--llvm-request-c-wrappers`.
module {
  // 1-D dynamic memref argument, scalar result.
  func.func @sum_f32(%m: memref<?xf32>) -> f32 attributes { llvm.emit_c_interface } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %n = memref.dim %m, %c0 : memref<?xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %m[%i] : memref<?xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    return %r : f32
  }

  // The call-overhead function: one 1-D memref in, its first element out.
  func.func @first_f32(%m: memref<?xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %m[%c0] : memref<?xf32>
    return %v : f32
  }

  // In-place update through a memref plus a float scalar argument.
  func.func @scale_f32(%m: memref<?xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %m[%i] : memref<?xf32>
    }
    return
  }

  // 2-D dynamic memref argument: sum of i*100 + j weighted elements.
  func.func @weighted_sum2d(%m: memref<?x?xf64>) -> f64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f64
    %r = memref.dim %m, %c0 : memref<?x?xf64>
    %c = memref.dim %m, %c1 : memref<?x?xf64>
    %s = scf.for %i = %c0 to %r step %c1 iter_args(%acc = %zero) -> (f64) {
      %s2 = scf.for %j = %c0 to %c step %c1 iter_args(%acc2 = %acc) -> (f64) {
        %v = memref.load %m[%i, %j] : memref<?x?xf64>
        %w0 = arith.muli %i, %c : index
        %w1 = arith.addi %w0, %j : index
        %w2 = arith.addi %w1, %c1 : index
        %wi = arith.index_cast %w2 : index to i64
        %wf = arith.sitofp %wi : i64 to f64
        %p = arith.mulf %v, %wf : f64
        %a = arith.addf %acc2, %p : f64
        scf.yield %a : f64
      }
      scf.yield %s2 : f64
    }
    return %s : f64
  }

  // 2-D dynamic memref in, freshly allocated 2-D memref out.
  func.func @transpose(%in: memref<?x?xf32>) -> memref<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = memref.dim %in, %c0 : memref<?x?xf32>
    %c = memref.dim %in, %c1 : memref<?x?xf32>
    %out = memref.alloc(%c, %r) : memref<?x?xf32>
    scf.for %i = %c0 to %r step %c1 {
      scf.for %j = %c0 to %c step %c1 {
        %v = memref.load %in[%i, %j] : memref<?x?xf32>
        memref.store %v, %out[%j, %i] : memref<?x?xf32>
      }
    }
    return %out : memref<?x?xf32>
  }

  // Callee-allocated result with {alignment = 64}: allocated != aligned.
  func.func @alloc_aligned(%n: index) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = memref.alloc(%n) {alignment = 64} : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %m[%i] : memref<?xf32>
    }
    return %m : memref<?xf32>
  }

  // Static shapes: a static argument filled in place, a static result.
  func.func @fill_4x8(%m: memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c10 = arith.constant 10 : index
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %t = arith.muli %i, %c10 : index
        %k = arith.addi %t, %j : index
        %ki = arith.index_cast %k : index to i32
        %f = arith.sitofp %ki : i32 to f32
        memref.store %f, %m[%i, %j] : memref<4x8xf32>
      }
    }
    return
  }

  func.func @iota_2x3() -> memref<2x3xi32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %m = memref.alloc() : memref<2x3xi32>
    scf.for %i = %c0 to %c2 step %c1 {
      scf.for %j = %c0 to %c3 step %c1 {
        %t = arith.muli %i, %c3 : index
        %k = arith.addi %t, %j : index
        %ki = arith.index_cast %k : index to i32
        memref.store %ki, %m[%i, %j] : memref<2x3xi32>
      }
    }
    return %m : memref<2x3xi32>
  }

  // Two scalar results: packed {i32, i64} (with padding) through a pointer.
  func.func @two_results(%a: i32, %b: i64) -> (i32, i64) {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i64
    %x = arith.addi %a, %c1 : i32
    %y = arith.muli %b, %c2 : i64
    return %x, %y : i32, i64
  }

  // (memref, index): the descriptor nested by value; the memref aliases the input.
  func.func @memref_and_len(%m: memref<?xf32>) -> (memref<?xf32>, index) {
    %c0 = arith.constant 0 : index
    %n = memref.dim %m, %c0 : memref<?xf32>
    return %m, %n : memref<?xf32>, index
  }

  // A result that is the input itself.
  func.func @identity(%m: memref<?x?xf32>) -> memref<?x?xf32> {
    return %m : memref<?x?xf32>
  }

  // A strided view of the input (aliases it): column %j of a 4x8.
  func.func @column_view(%m: memref<4x8xf32>, %j: index) -> memref<4xf32, strided<[8], offset: ?>> {
    %v = memref.subview %m[0, %j] [4, 1] [1, 1] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
    return %v : memref<4xf32, strided<[8], offset: ?>>
  }

  // The same allocation returned twice: must be freed exactly once.
  func.func @twice(%n: index) -> (memref<?xi64>, memref<?xi64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = memref.alloc(%n) : memref<?xi64>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i64
      memref.store %ii, %m[%i] : memref<?xi64>
    }
    return %m, %m : memref<?xi64>, memref<?xi64>
  }

  // A result that points at a module global (allocated = 0xdeadbeef).
  memref.global "private" constant @table : memref<4xf32> = dense<[1.5, 2.5, 3.5, 4.5]>
  func.func @global_table() -> memref<4xf32> {
    %g = memref.get_global @table : memref<4xf32>
    return %g : memref<4xf32>
  }

  // Unranked arguments and results.
  func.func @unranked_rank(%u: memref<*xf32>) -> index {
    %r = memref.rank %u : memref<*xf32>
    return %r : index
  }

  func.func @unranked_sum1d(%u: memref<*xf32>) -> f32 {
    %m = memref.cast %u : memref<*xf32> to memref<?xf32>
    %s = func.call @sum_f32(%m) : (memref<?xf32>) -> f32
    return %s : f32
  }

  func.func @to_unranked(%m: memref<?x?xf32>) -> memref<*xf32> {
    %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
    return %u : memref<*xf32>
  }

  func.func @unranked_copy(%u: memref<*xf32>) -> memref<*xf32> {
    %m = memref.cast %u : memref<*xf32> to memref<?xf32>
    %c0 = arith.constant 0 : index
    %n = memref.dim %m, %c0 : memref<?xf32>
    %out = memref.alloc(%n) : memref<?xf32>
    memref.copy %m, %out : memref<?xf32> to memref<?xf32>
    %r = memref.cast %out : memref<?xf32> to memref<*xf32>
    return %r : memref<*xf32>
  }

  func.func @unranked_id(%u: memref<*xf32>) -> memref<*xf32> {
    return %u : memref<*xf32>
  }

  // A strided layout: honours offset and strides (fed a transposed view).
  func.func @sum_strided(%m: memref<?x?xf32, strided<[?, ?], offset: ?>>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %r = memref.dim %m, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.dim %m, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
    %s = scf.for %i = %c0 to %r step %c1 iter_args(%acc = %zero) -> (f32) {
      %s2 = scf.for %j = %c0 to %c step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %v = memref.load %m[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
        %w0 = arith.muli %i, %c : index
        %w1 = arith.addi %w0, %j : index
        %w2 = arith.addi %w1, %c1 : index
        %wi = arith.index_cast %w2 : index to i32
        %wf = arith.sitofp %wi : i32 to f32
        %p = arith.mulf %v, %wf : f32
        %a = arith.addf %acc2, %p : f32
        scf.yield %a : f32
      }
      scf.yield %s2 : f32
    }
    return %s : f32
  }

  // Static strides: a column-major 2x3 layout.
  func.func @sum_colmajor(%m: memref<2x3xf32, strided<[1, 2]>>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %zero = arith.constant 0.0 : f32
    %s = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (f32) {
      %s2 = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %v = memref.load %m[%i, %j] : memref<2x3xf32, strided<[1, 2]>>
        %w0 = arith.muli %i, %c3 : index
        %w1 = arith.addi %w0, %j : index
        %w2 = arith.addi %w1, %c1 : index
        %wi = arith.index_cast %w2 : index to i32
        %wf = arith.sitofp %wi : i32 to f32
        %p = arith.mulf %v, %wf : f32
        %a = arith.addf %acc2, %p : f32
        scf.yield %a : f32
      }
      scf.yield %s2 : f32
    }
    return %s : f32
  }

  // Destination-passing style: writes a + b into the trailing argument.
  func.func @add_into(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %out, %c0 : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %out[%i] : memref<?xf32>
    }
    return
  }

  // A boolean memref: elementwise not, into a fresh result.
  func.func @not_mask(%m: memref<?xi1>) -> memref<?xi1> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %true = arith.constant true
    %n = memref.dim %m, %c0 : memref<?xi1>
    %out = memref.alloc(%n) : memref<?xi1>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi1>
      %w = arith.xori %v, %true : i1
      memref.store %w, %out[%i] : memref<?xi1>
    }
    return %out : memref<?xi1>
  }

  // A rank-0 memref argument and result.
  func.func @rank0_double(%m: memref<f64>) -> memref<f64> {
    %v = memref.load %m[] : memref<f64>
    %w = arith.addf %v, %v : f64
    %out = memref.alloc() : memref<f64>
    memref.store %w, %out[] : memref<f64>
    return %out : memref<f64>
  }
}
