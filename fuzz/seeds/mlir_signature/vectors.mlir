// Public functions with vector<…> arguments and results: fnabi calls each
// through a wrapper it adds after the function's body, which takes and
// returns the vectors as static memrefs of the same shape (row-major).
// Expected values (tests/mlir_tensor.rs) are computed by hand.

// 1-D f32: (1, 2, 3, 4) + (10, 20, 30, 40) = (11, 22, 33, 44).
func.func @vadd(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %r = arith.addf %a, %b : vector<4xf32>
  return %r : vector<4xf32>
}

// 2-D i1 negated, beside a tensor and a scalar that pass through: the
// results mix a vector, a scalar and the tensor argument itself.
func.func @mixed(%m: tensor<?xf32>, %s: f32, %v: vector<2x3xi1>) -> (vector<2x3xi1>, f32, tensor<?xf32>) {
  %t = arith.constant dense<true> : vector<2x3xi1>
  %n = arith.xori %v, %t : vector<2x3xi1>
  return %n, %s, %m : vector<2x3xi1>, f32, tensor<?xf32>
}

// 0-d: 2 * x.
func.func @twice(%v: vector<f64>) -> vector<f64> {
  %r = arith.addf %v, %v : vector<f64>
  return %r : vector<f64>
}

// index elements, a quoted name, a scalar result: 1 + 2 + 39 = 42.
func.func @"sum.index"(%v: vector<3xindex>) -> index {
  %r = vector.reduction <add>, %v : vector<3xindex> into index
  return %r : index
}

// A wide vector (16 x i16, more than one SSE register) and f16 in, two
// vectors out: the i16 lanes reversed, and the f16 halves swapped.
func.func @shuffle(%w: vector<16xi16>, %h: vector<2x4xf16>) -> (vector<16xi16>, vector<2x4xf16>) {
  %r = vector.shuffle %w, %w [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0] : vector<16xi16>, vector<16xi16>
  %a = vector.extract %h[0] : vector<4xf16> from vector<2x4xf16>
  %b = vector.extract %h[1] : vector<4xf16> from vector<2x4xf16>
  %s0 = vector.insert %b, %h [0] : vector<4xf16> into vector<2x4xf16>
  %s1 = vector.insert %a, %s0 [1] : vector<4xf16> into vector<2x4xf16>
  return %r, %s1 : vector<16xi16>, vector<2x4xf16>
}

// Vectors only in the results, none in.
func.func @iota() -> vector<5xi32> {
  %r = vector.step : vector<5xindex>
  %i = arith.index_cast %r : vector<5xindex> to vector<5xi32>
  return %i : vector<5xi32>
}

// A private helper with a vector argument is not an entry point.
func.func private @helper(%v: vector<2xi8>) -> vector<2xi8> {
  return %v : vector<2xi8>
}
