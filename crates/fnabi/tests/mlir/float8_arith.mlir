// Arithmetic on 8-bit floats at tensor level: widen with arith.extf,
// compute in f32, narrow with arith.truncf (round to nearest even).
// IREE 3.13 (llvm-cpu) compiles it; MLIR 22's CPU pipeline has no lowering
// for f8E4M3FN/f8E5M2 extf/truncf (see iree_backend_cli.rs).
func.func @scale_e4m3fn(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %s = arith.constant dense<2.0> : tensor<4xf32>
  %b = arith.constant dense<0.25> : tensor<4xf32>
  %e = arith.extf %x : tensor<4xf8E4M3FN> to tensor<4xf32>
  %m = arith.mulf %e, %s : tensor<4xf32>
  %a = arith.addf %m, %b : tensor<4xf32>
  %t = arith.truncf %a : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %t : tensor<4xf8E4M3FN>
}

func.func @add_e5m2(%x: tensor<4xf8E5M2>, %y: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
  %a = arith.extf %x : tensor<4xf8E5M2> to tensor<4xf32>
  %b = arith.extf %y : tensor<4xf8E5M2> to tensor<4xf32>
  %s = arith.addf %a, %b : tensor<4xf32>
  %t = arith.truncf %s : tensor<4xf32> to tensor<4xf8E5M2>
  return %t : tensor<4xf8E5M2>
}
