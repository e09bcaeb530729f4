// A `sip`-structured function: its one input is a dict of 8 f32[4] arrays
// (keys k0..k7, raw inputs 0..7), its result one f32[4] array: the sum.
module {
  func.func @dict8(%k0: memref<4xf32>, %k1: memref<4xf32>, %k2: memref<4xf32>, %k3: memref<4xf32>,
                   %k4: memref<4xf32>, %k5: memref<4xf32>, %k6: memref<4xf32>, %k7: memref<4xf32>)
      -> memref<4xf32> attributes {
    llvm.emit_c_interface,
    fv = "1", f = "I41!B3!d4B3!d4B3!d4B3!d4B3!d4B3!d4B3!d4B3!d4R6!B3!d4",
    sipv = "1", sip = "I67!S63!k0D57!K3!k0_0K3!k1_1K3!k2_2K3!k3_3K3!k4_4K3!k5_5K3!k6_6K3!k7_7R3!_0"
  } {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() {alignment = 64} : memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v0 = memref.load %k0[%i] : memref<4xf32>
      %v1 = memref.load %k1[%i] : memref<4xf32>
      %v2 = memref.load %k2[%i] : memref<4xf32>
      %v3 = memref.load %k3[%i] : memref<4xf32>
      %v4 = memref.load %k4[%i] : memref<4xf32>
      %v5 = memref.load %k5[%i] : memref<4xf32>
      %v6 = memref.load %k6[%i] : memref<4xf32>
      %v7 = memref.load %k7[%i] : memref<4xf32>
      %s1 = arith.addf %v0, %v1 : f32
      %s2 = arith.addf %s1, %v2 : f32
      %s3 = arith.addf %s2, %v3 : f32
      %s4 = arith.addf %s3, %v4 : f32
      %s5 = arith.addf %s4, %v5 : f32
      %s6 = arith.addf %s5, %v6 : f32
      %s7 = arith.addf %s6, %v7 : f32
      memref.store %s7, %out[%i] : memref<4xf32>
    }
    return %out : memref<4xf32>
  }
}
