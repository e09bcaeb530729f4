// Scalar arguments and results of every type, and more arguments than the
// x86-64 System V registers hold (6 integer-class, 8 float-class), so the
// rest go on the stack.
module {
  func.func @neg_i1(%a: i1) -> i1 {
    %t = arith.constant true
    %r = arith.xori %a, %t : i1
    return %r : i1
  }
  func.func @inc_i8(%a: i8) -> i8 {
    %c = arith.constant 1 : i8
    %r = arith.addi %a, %c : i8
    return %r : i8
  }
  func.func @inc_i16(%a: i16) -> i16 {
    %c = arith.constant 1 : i16
    %r = arith.addi %a, %c : i16
    return %r : i16
  }
  func.func @inc_i32(%a: i32) -> i32 {
    %c = arith.constant 1 : i32
    %r = arith.addi %a, %c : i32
    return %r : i32
  }
  func.func @inc_i64(%a: i64) -> i64 {
    %c = arith.constant 1 : i64
    %r = arith.addi %a, %c : i64
    return %r : i64
  }
  func.func @inc_index(%a: index) -> index {
    %c = arith.constant 1 : index
    %r = arith.addi %a, %c : index
    return %r : index
  }
  func.func @neg_f16(%a: f16) -> f16 {
    %r = arith.negf %a : f16
    return %r : f16
  }
  func.func @neg_bf16(%a: bf16) -> bf16 {
    %r = arith.negf %a : bf16
    return %r : bf16
  }
  func.func @half_f32(%a: f32) -> f32 {
    %c = arith.constant 0.5 : f32
    %r = arith.mulf %a, %c : f32
    return %r : f32
  }
  func.func @half_f64(%a: f64) -> f64 {
    %c = arith.constant 0.5 : f64
    %r = arith.mulf %a, %c : f64
    return %r : f64
  }
  func.func @nothing() {
    return
  }

  // Every scalar type in, every type out (packed result struct with padding).
  func.func @all_types(%a: i1, %b: i8, %c: i16, %d: i32, %e: i64, %f: index, %g: f16, %h: bf16, %i: f32, %j: f64)
      -> (i1, i8, i16, i32, i64, index, f16, bf16, f32, f64) {
    %t = arith.constant true
    %one8 = arith.constant 1 : i8
    %one16 = arith.constant 1 : i16
    %one32 = arith.constant 1 : i32
    %one64 = arith.constant 1 : i64
    %onei = arith.constant 1 : index
    %half32 = arith.constant 0.5 : f32
    %half64 = arith.constant 0.5 : f64
    %ra = arith.xori %a, %t : i1
    %rb = arith.subi %b, %one8 : i8
    %rc = arith.subi %c, %one16 : i16
    %rd = arith.subi %d, %one32 : i32
    %re = arith.subi %e, %one64 : i64
    %rf = arith.subi %f, %onei : index
    %rg = arith.negf %g : f16
    %rh = arith.negf %h : bf16
    %ri = arith.mulf %i, %half32 : f32
    %rj = arith.mulf %j, %half64 : f64
    return %ra, %rb, %rc, %rd, %re, %rf, %rg, %rh, %ri, %rj : i1, i8, i16, i32, i64, index, f16, bf16, f32, f64
  }

  // 10 integers: 4 of them on the stack. Returns sum of (k+1) * a_k.
  func.func @many_ints(%a0: i64, %a1: i32, %a2: i64, %a3: i8, %a4: i64, %a5: i16, %a6: i64, %a7: i32, %a8: index, %a9: i64) -> i64 {
    %w1 = arith.constant 1 : i64
    %w2 = arith.constant 2 : i64
    %w3 = arith.constant 3 : i64
    %w4 = arith.constant 4 : i64
    %w5 = arith.constant 5 : i64
    %w6 = arith.constant 6 : i64
    %w7 = arith.constant 7 : i64
    %w8 = arith.constant 8 : i64
    %w9 = arith.constant 9 : i64
    %w10 = arith.constant 10 : i64
    %b1 = arith.extsi %a1 : i32 to i64
    %b3 = arith.extsi %a3 : i8 to i64
    %b5 = arith.extsi %a5 : i16 to i64
    %b7 = arith.extsi %a7 : i32 to i64
    %b8 = arith.index_cast %a8 : index to i64
    %p0 = arith.muli %a0, %w1 : i64
    %p1 = arith.muli %b1, %w2 : i64
    %p2 = arith.muli %a2, %w3 : i64
    %p3 = arith.muli %b3, %w4 : i64
    %p4 = arith.muli %a4, %w5 : i64
    %p5 = arith.muli %b5, %w6 : i64
    %p6 = arith.muli %a6, %w7 : i64
    %p7 = arith.muli %b7, %w8 : i64
    %p8 = arith.muli %b8, %w9 : i64
    %p9 = arith.muli %a9, %w10 : i64
    %s1 = arith.addi %p0, %p1 : i64
    %s2 = arith.addi %s1, %p2 : i64
    %s3 = arith.addi %s2, %p3 : i64
    %s4 = arith.addi %s3, %p4 : i64
    %s5 = arith.addi %s4, %p5 : i64
    %s6 = arith.addi %s5, %p6 : i64
    %s7 = arith.addi %s6, %p7 : i64
    %s8 = arith.addi %s7, %p8 : i64
    %s9 = arith.addi %s8, %p9 : i64
    return %s9 : i64
  }

  // Integers and floats interleaved, 7 ints + 2 memrefs + 11 floats: overflow
  // of both register classes goes to the stack in argument order. Returns
  // sum of (k+1) * x_k over all scalars, plus 1000 * m0[0] + 10000 * m1[0].
  func.func @mixed_many(%m0: memref<?xf64>, %f0: f32, %i0: i32, %f1: f64, %i1: i64, %f2: f16, %i2: i8,
                        %f3: f32, %i3: i64, %f4: f64, %i4: i16, %f5: bf16, %f6: f32, %i5: i64, %f7: f64,
                        %f8: f32, %i6: i32, %f9: f64, %m1: memref<?xf64>, %f10: f32) -> f64 {
    %c0 = arith.constant 0 : index
    %x0 = arith.extf %f0 : f32 to f64
    %x1 = arith.sitofp %i0 : i32 to f64
    %x3 = arith.sitofp %i1 : i64 to f64
    %x4 = arith.extf %f2 : f16 to f64
    %x5 = arith.sitofp %i2 : i8 to f64
    %x6 = arith.extf %f3 : f32 to f64
    %x7 = arith.sitofp %i3 : i64 to f64
    %x9 = arith.sitofp %i4 : i16 to f64
    %x10 = arith.extf %f5 : bf16 to f64
    %x11 = arith.extf %f6 : f32 to f64
    %x12 = arith.sitofp %i5 : i64 to f64
    %x14 = arith.extf %f8 : f32 to f64
    %x15 = arith.sitofp %i6 : i32 to f64
    %x17 = arith.extf %f10 : f32 to f64
    %v0 = memref.load %m0[%c0] : memref<?xf64>
    %v1 = memref.load %m1[%c0] : memref<?xf64>
    %w1 = arith.constant 1.0 : f64
    %w2 = arith.constant 2.0 : f64
    %w3 = arith.constant 3.0 : f64
    %w4 = arith.constant 4.0 : f64
    %w5 = arith.constant 5.0 : f64
    %w6 = arith.constant 6.0 : f64
    %w7 = arith.constant 7.0 : f64
    %w8 = arith.constant 8.0 : f64
    %w9 = arith.constant 9.0 : f64
    %w10 = arith.constant 10.0 : f64
    %w11 = arith.constant 11.0 : f64
    %w12 = arith.constant 12.0 : f64
    %w13 = arith.constant 13.0 : f64
    %w14 = arith.constant 14.0 : f64
    %w15 = arith.constant 15.0 : f64
    %w16 = arith.constant 16.0 : f64
    %w17 = arith.constant 17.0 : f64
    %w18 = arith.constant 18.0 : f64
    %wm0 = arith.constant 1000.0 : f64
    %wm1 = arith.constant 10000.0 : f64
    %p0 = arith.mulf %x0, %w1 : f64
    %p1 = arith.mulf %x1, %w2 : f64
    %p2 = arith.mulf %f1, %w3 : f64
    %p3 = arith.mulf %x3, %w4 : f64
    %p4 = arith.mulf %x4, %w5 : f64
    %p5 = arith.mulf %x5, %w6 : f64
    %p6 = arith.mulf %x6, %w7 : f64
    %p7 = arith.mulf %x7, %w8 : f64
    %p8 = arith.mulf %f4, %w9 : f64
    %p9 = arith.mulf %x9, %w10 : f64
    %p10 = arith.mulf %x10, %w11 : f64
    %p11 = arith.mulf %x11, %w12 : f64
    %p12 = arith.mulf %x12, %w13 : f64
    %p13 = arith.mulf %f7, %w14 : f64
    %p14 = arith.mulf %x14, %w15 : f64
    %p15 = arith.mulf %x15, %w16 : f64
    %p16 = arith.mulf %f9, %w17 : f64
    %p17 = arith.mulf %x17, %w18 : f64
    %q0 = arith.mulf %v0, %wm0 : f64
    %q1 = arith.mulf %v1, %wm1 : f64
    %s0 = arith.addf %p0, %p1 : f64
    %s1 = arith.addf %s0, %p2 : f64
    %s2 = arith.addf %s1, %p3 : f64
    %s3 = arith.addf %s2, %p4 : f64
    %s4 = arith.addf %s3, %p5 : f64
    %s5 = arith.addf %s4, %p6 : f64
    %s6 = arith.addf %s5, %p7 : f64
    %s7 = arith.addf %s6, %p8 : f64
    %s8 = arith.addf %s7, %p9 : f64
    %s9 = arith.addf %s8, %p10 : f64
    %s10 = arith.addf %s9, %p11 : f64
    %s11 = arith.addf %s10, %p12 : f64
    %s12 = arith.addf %s11, %p13 : f64
    %s13 = arith.addf %s12, %p14 : f64
    %s14 = arith.addf %s13, %p15 : f64
    %s15 = arith.addf %s14, %p16 : f64
    %s16 = arith.addf %s15, %p17 : f64
    %s17 = arith.addf %s16, %q0 : f64
    %s18 = arith.addf %s17, %q1 : f64
    return %s18 : f64
  }

  // External declaration (a later issue binds host functions to these).
  func.func private @host_log(memref<?xf32>, i32) -> f32
}
