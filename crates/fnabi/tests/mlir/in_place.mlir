// Arguments written in place, and not. `@bump_first` is memref-level: it
// returns m[0] and stores m[0] + 1 into its argument, as memref code may. A
// caller whose memory must not be written (a read-only mapping, an
// immutable buffer) passes it a copy. `@same` is tensor-level: fnabi's
// pipeline bufferizes its argument read-only, so it gets the caller's
// memory as it is and returns it (the result aliases the argument).
// Expected values by hand: [2, 5, 9] -> 2, and m[0] becomes 3.

func.func @bump_first(%m: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %v = memref.load %m[%c0] : memref<?xf32>
  %w = arith.addf %v, %one : f32
  memref.store %w, %m[%c0] : memref<?xf32>
  return %v : f32
}

func.func @same(%t: tensor<?xf32>) -> tensor<?xf32> {
  return %t : tensor<?xf32>
}
