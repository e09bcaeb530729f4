// Fixtures of the Python package's tests (crates/fnabi-py/tests): a
// reversal per element type (memrefs of every dtype in and out), the call
// benchmark's small function, and a long-running loop (the GIL is released
// while native code runs).
module {
  // A reversed copy of a 1-D memref of i1.
  func.func @reverse_i1(%m: memref<?xi1>) -> memref<?xi1> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xi1>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xi1>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi1>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xi1>
    }
    return %out : memref<?xi1>
  }

  // A reversed copy of a 1-D memref of i8.
  func.func @reverse_i8(%m: memref<?xi8>) -> memref<?xi8> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xi8>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xi8>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi8>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xi8>
    }
    return %out : memref<?xi8>
  }

  // A reversed copy of a 1-D memref of i16.
  func.func @reverse_i16(%m: memref<?xi16>) -> memref<?xi16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xi16>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xi16>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi16>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xi16>
    }
    return %out : memref<?xi16>
  }

  // A reversed copy of a 1-D memref of i32.
  func.func @reverse_i32(%m: memref<?xi32>) -> memref<?xi32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xi32>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi32>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xi32>
    }
    return %out : memref<?xi32>
  }

  // A reversed copy of a 1-D memref of i64.
  func.func @reverse_i64(%m: memref<?xi64>) -> memref<?xi64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xi64>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xi64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xi64>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xi64>
    }
    return %out : memref<?xi64>
  }

  // A reversed copy of a 1-D memref of ui8.
  func.func @reverse_ui8(%m: memref<?xui8>) -> memref<?xui8> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xui8>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xui8>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xui8>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xui8>
    }
    return %out : memref<?xui8>
  }

  // A reversed copy of a 1-D memref of ui16.
  func.func @reverse_ui16(%m: memref<?xui16>) -> memref<?xui16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xui16>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xui16>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xui16>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xui16>
    }
    return %out : memref<?xui16>
  }

  // A reversed copy of a 1-D memref of ui32.
  func.func @reverse_ui32(%m: memref<?xui32>) -> memref<?xui32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xui32>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xui32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xui32>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xui32>
    }
    return %out : memref<?xui32>
  }

  // A reversed copy of a 1-D memref of ui64.
  func.func @reverse_ui64(%m: memref<?xui64>) -> memref<?xui64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xui64>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xui64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xui64>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xui64>
    }
    return %out : memref<?xui64>
  }

  // A reversed copy of a 1-D memref of f16.
  func.func @reverse_f16(%m: memref<?xf16>) -> memref<?xf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xf16>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xf16>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xf16>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xf16>
    }
    return %out : memref<?xf16>
  }

  // A reversed copy of a 1-D memref of bf16.
  func.func @reverse_bf16(%m: memref<?xbf16>) -> memref<?xbf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xbf16>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xbf16>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xbf16>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xbf16>
    }
    return %out : memref<?xbf16>
  }

  // A reversed copy of a 1-D memref of f32.
  func.func @reverse_f32(%m: memref<?xf32>) -> memref<?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xf32>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xf32>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xf32>
    }
    return %out : memref<?xf32>
  }

  // A reversed copy of a 1-D memref of f64.
  func.func @reverse_f64(%m: memref<?xf64>) -> memref<?xf64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %m, %c0 : memref<?xf64>
    %last = arith.subi %n, %c1 : index
    %out = memref.alloc(%n) : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xf64>
      %j = arith.subi %last, %i : index
      memref.store %v, %out[%j] : memref<?xf64>
    }
    return %out : memref<?xf64>
  }

  // The call benchmark's function: how many elements of %x exceed %t.
  func.func @count_above(%x: memref<?xi32>, %t: i32) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %n = memref.dim %x, %c0 : memref<?xi32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
      %v = memref.load %x[%i] : memref<?xi32>
      %gt = arith.cmpi sgt, %v, %t : i32
      %inc = arith.select %gt, %one, %zero : i32
      %a = arith.addi %acc, %inc : i32
      scf.yield %a : i32
    }
    return %r : i32
  }

  // %n steps of x = x * 0.999999 + 1 from x = 0 (a float recurrence that
  // the compiler cannot shorten): runs for a while without touching Python.
  func.func @spin(%n: index) -> f64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f64
    %a = arith.constant 0.999999 : f64
    %b = arith.constant 1.0 : f64
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero) -> (f64) {
      %m = arith.mulf %x, %a : f64
      %y = arith.addf %m, %b : f64
      scf.yield %y : f64
    }
    return %r : f64
  }

  // A dict argument whose keys are longer than fnabi keeps in place (23
  // bytes) or not ASCII, and a dict result likewise: `a - k` and a copy of
  // `ключ`. The `sip` string was mangled by hand (crates/fnabi-py/tests/
  // test_call.py::test_long_and_non_ascii_keys shows how).
  func.func @long_keys(%a: memref<2xf32>, %k: memref<2xf32>, %u: memref<2xf32>)
      -> (memref<2xf32>, memref<2xf32>) attributes {
    llvm.emit_c_interface,
    fv = "1", f = "I16!B3!d2B3!d2B3!d2R11!B3!d2B3!d2",
    sipv = "1", sip = "I62!S58!k0D52!K27!a_key_longer_than_23_bytes_0K2!k_1K9!ключ_2R45!D41!K28!difference_of_the_first_two_0K3!é_1"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %d = memref.alloc() {alignment = 64} : memref<2xf32>
    %e = memref.alloc() {alignment = 64} : memref<2xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      %x = memref.load %a[%i] : memref<2xf32>
      %y = memref.load %k[%i] : memref<2xf32>
      %z = memref.load %u[%i] : memref<2xf32>
      %s = arith.subf %x, %y : f32
      memref.store %s, %d[%i] : memref<2xf32>
      memref.store %z, %e[%i] : memref<2xf32>
    }
    return %d, %e : memref<2xf32>, memref<2xf32>
  }
}
