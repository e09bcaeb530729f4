// Out-of-bounds accesses that MLIR's runtime op verification catches when
// fnabi compiles with it (`CompileOptions::runtime_verification`, on by
// default in `fnabi run`). tests/mlir_dialects.rs checks the messages.
func.func @element(%t: tensor<?xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<?xf32>
  return %v : f32
}

func.func @load(%m: memref<?x?xi32>, %i: index, %j: index) -> i32 {
  %v = memref.load %m[%i, %j] : memref<?x?xi32>
  return %v : i32
}
