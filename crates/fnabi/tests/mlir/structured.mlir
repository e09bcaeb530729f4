// Functions called through fnabi's Function API: structured inputs and
// results (`sip`), destination-passing style (`fv`/`f` with trailing output
// memrefs), and a result allocator (`fbr`). No `llvm.emit_c_interface`:
// fnabi's pipeline requests C wrappers for every function.
module {
  // x @ w + b, with the parameters as a dict: affine(x, {"w": w, "b": b}).
  func.func @affine(%x: memref<?x4xf32>, %w: memref<4x3xf32>, %b: memref<3xf32>) -> memref<?x3xf32> attributes {
    sipv = "1", sip = "I27!S23!k0_0k1D13!K2!b_2K2!w_1R3!_0"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %n = memref.dim %x, %c0 : memref<?x4xf32>
    %y = memref.alloc(%n) : memref<?x3xf32>
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %c3 step %c1 {
        %bj = memref.load %b[%j] : memref<3xf32>
        %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %bj) -> (f32) {
          %xv = memref.load %x[%i, %k] : memref<?x4xf32>
          %wv = memref.load %w[%k, %j] : memref<4x3xf32>
          %p = arith.mulf %xv, %wv : f32
          %s = arith.addf %a, %p : f32
          scf.yield %s : f32
        }
        memref.store %acc, %y[%i, %j] : memref<?x3xf32>
      }
    }
    return %y : memref<?x3xf32>
  }

  // Keyword arguments: a dict root binds them by name.
  func.func @scale_kw(%x: memref<?xf32>, %scale: f32) -> memref<?xf32> attributes {
    sipv = "1", sip = "I21!D17!K6!scale_1K2!x_0R3!_0"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %y = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<?xf32>
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %y[%i] : memref<?xf32>
    }
    return %y : memref<?xf32>
  }

  // A dict of results: {"sum": sum(x), "max": max(x)}.
  func.func @stats(%x: memref<?xf32>) -> (f32, f32) attributes {
    sipv = "1", sip = "I8!S5!k0_0R21!D17!K4!max_1K4!sum_0"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = memref.dim %x, %c0 : memref<?xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero, %m = %ninf) -> (f32, f32) {
      %v = memref.load %x[%i] : memref<?xf32>
      %s2 = arith.addf %s, %v : f32
      %m2 = arith.maximumf %m, %v : f32
      scf.yield %s2, %m2 : f32, f32
    }
    return %r#0, %r#1 : f32, f32
  }

  // Destination-passing style with a static result: (a, b) -> (a + b),
  // the result written into a trailing argument that fnabi allocates.
  func.func @add_into(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) attributes {
    fv = "1", f = "I11!B3!d4B3!d4R6!B3!d4"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      %y = memref.load %b[%i] : memref<4xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %out[%i] : memref<4xf32>
    }
    return
  }

  // Destination-passing style with a dynamic result: its buffer comes from
  // the result allocator that `fbr` names, given the dynamic input dims.
  func.func @scale_into(%x: memref<?xf32>, %s: f32, %out: memref<?xf32>) attributes {
    fv = "1", f = "I10!B4!d-1S1!R7!B4!d-1", fbr = "alloc_like"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<?xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %out[%i] : memref<?xf32>
    }
    return
  }

  // The result allocator of @scale_into: every dynamic input dim in, one
  // buffer per dynamic destination out.
  func.func @alloc_like(%n: index) -> memref<?xf32> {
    %m = memref.alloc(%n) {alignment = 64} : memref<?xf32>
    return %m : memref<?xf32>
  }

  // Mixed: result 0 is written into a destination argument, result 1 (whose
  // size the caller cannot know) is allocated and returned by the callee.
  func.func @split_into(%x: memref<4xf32>, %out: memref<4xf32>) -> memref<?xf32> attributes {
    fv = "1", f = "I6!B3!d4R12!B3!d4B4!d-1"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %tail = memref.alloc(%c2) : memref<?xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i] : memref<4xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %out[%i] : memref<4xf32>
    }
    scf.for %i = %c0 to %c2 step %c1 {
      %k = arith.addi %i, %c2 : index
      %v = memref.load %x[%k] : memref<4xf32>
      memref.store %v, %tail[%i] : memref<?xf32>
    }
    return %tail : memref<?xf32>
  }
}
