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

// Two dynamic dims that must be equal, which no signature states: called
// with 2 and 3 rows it reads out of bounds, unless runtime verification
// (linalg's checks of operand shapes) stops it. The README shows the message.
func.func @dyn_add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.add ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// The check's op on the header's line, after the tensor argument that
// fnabi marks read-only by inserting an attribute: the report still names
// the user's column (tests/mlir_dialects.rs computes it from this text).
func.func @element_on_one_line(%t: tensor<?xf32>, %i: index) -> f32 { %v = tensor.extract %t[%i] : tensor<?xf32>
  return %v : f32 }

// The same relation on an elementwise op: arith's verification has no
// check of operand shapes, so fnabi turns elementwise ops on tensors into
// linalg before instrumenting (with 3 and 2 rows it read out of bounds).
func.func @dyn_add_arith(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = arith.addf %a, %b : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
