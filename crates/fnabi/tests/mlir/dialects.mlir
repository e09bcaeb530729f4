// What front ends emit besides linalg on tensors — affine loops, vector
// ops, math, async, 0-d and masked vector transfers — each function
// printing through MLIR's runtime utilities (`vector.print`, which the
// lowering turns into calls of printF32 & co.). The CHECK lines are derived
// by hand (the comment above each says how); the test runs each function
// with `fnabi run` and matches its stdout against them.

// affine.for over a memref: a[i] = i * i, printed as a vector.
// CHECK-LABEL: affine_squares
// CHECK-NEXT: ( 0, 1, 4, 9, 16 )
func.func @affine_squares() {
  %m = memref.alloca() : memref<5xi32>
  affine.for %i = 0 to 5 {
    %x = arith.index_cast %i : index to i32
    %sq = arith.muli %x, %x : i32
    affine.store %sq, %m[%i] : memref<5xi32>
  }
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0 : i32
  %v = vector.transfer_read %m[%c0], %pad : memref<5xi32>, vector<5xi32>
  vector.print str "affine_squares\n"
  vector.print %v : vector<5xi32>
  return
}

// A masked read past the end pads with -1; a reduction sums 1 + 2 + 3 = 6;
// an outer product of (1, 2) and (3, 4, 5) is ((3, 4, 5), (6, 8, 10)).
// CHECK-LABEL: vector_ops
// CHECK-NEXT: ( 1, 2, 3, -1 )
// CHECK-NEXT: 6
// CHECK-NEXT: ( ( 3, 4, 5 ), ( 6, 8, 10 ) )
func.func @vector_ops() {
  %m = memref.alloca() : memref<3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f1 = arith.constant 1.0 : f32
  %f2 = arith.constant 2.0 : f32
  %f3 = arith.constant 3.0 : f32
  memref.store %f1, %m[%c0] : memref<3xf32>
  memref.store %f2, %m[%c1] : memref<3xf32>
  memref.store %f3, %m[%c2] : memref<3xf32>
  %pad = arith.constant -1.0 : f32
  %v = vector.transfer_read %m[%c0], %pad : memref<3xf32>, vector<4xf32>
  vector.print str "vector_ops\n"
  vector.print %v : vector<4xf32>
  %s = vector.reduction <add>, %v : vector<4xf32> into f32
  %s1 = arith.addf %s, %f1 : f32
  vector.print %s1 : f32
  %a = arith.constant dense<[1.0, 2.0]> : vector<2xf32>
  %b = arith.constant dense<[3.0, 4.0, 5.0]> : vector<3xf32>
  %o = vector.outerproduct %a, %b : vector<2xf32>, vector<3xf32>
  vector.print %o : vector<2x3xf32>
  return
}

// math through LLVM intrinsics and libm: sqrt(16) = 4, exp(0) = 1,
// tanh(0) = 0, atan2(1, 1) * 4 = pi (printed to 6 significant digits),
// erf(0) = 0, and i32 powers: 3^4 = 81.
// CHECK-LABEL: math_ops
// CHECK-NEXT: ( 4, 1, 0, 3.14159, 0 )
// CHECK-NEXT: 81
func.func @math_ops() {
  %x = arith.constant 16.0 : f32
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %four = arith.constant 4.0 : f32
  %a = math.sqrt %x : f32
  %b = math.exp %z : f32
  %c = math.tanh %z : f32
  %d0 = math.atan2 %one, %one : f32
  %d = arith.mulf %d0, %four : f32
  %e = math.erf %z : f32
  %v0 = vector.broadcast %a : f32 to vector<5xf32>
  %v1 = vector.insert %b, %v0 [1] : f32 into vector<5xf32>
  %v2 = vector.insert %c, %v1 [2] : f32 into vector<5xf32>
  %v3 = vector.insert %d, %v2 [3] : f32 into vector<5xf32>
  %v4 = vector.insert %e, %v3 [4] : f32 into vector<5xf32>
  vector.print str "math_ops\n"
  vector.print %v4 : vector<5xf32>
  %three = arith.constant 3 : i32
  %p = arith.constant 4 : i32
  %pw = math.ipowi %three, %p : i32
  vector.print %pw : i32
  return
}

// async.execute tasks awaited in order: 10 + 20 = 30, and a value
// computed in a task: 6 * 7 = 42.
// CHECK-LABEL: async_tasks
// CHECK-NEXT: 30
// CHECK-NEXT: 42
func.func @async_tasks() {
  %m = memref.alloc() : memref<2xi64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ten = arith.constant 10 : i64
  %twenty = arith.constant 20 : i64
  %t0 = async.execute {
    memref.store %ten, %m[%c0] : memref<2xi64>
    async.yield
  }
  %t1 = async.execute {
    memref.store %twenty, %m[%c1] : memref<2xi64>
    async.yield
  }
  async.await %t0 : !async.token
  async.await %t1 : !async.token
  %a = memref.load %m[%c0] : memref<2xi64>
  %b = memref.load %m[%c1] : memref<2xi64>
  %s = arith.addi %a, %b : i64
  vector.print str "async_tasks\n"
  vector.print %s : i64
  %six = arith.constant 6 : i64
  %seven = arith.constant 7 : i64
  %tok, %val = async.execute -> !async.value<i64> {
    %p = arith.muli %six, %seven : i64
    async.yield %p : i64
  }
  %r = async.await %val : !async.value<i64>
  vector.print %r : i64
  memref.dealloc %m : memref<2xi64>
  return
}

// scf.parallel and scf.while: the sum of 0..9 = 45 (while), and a
// parallel loop writing i + 1 (printed).
// CHECK-LABEL: scf_loops
// CHECK-NEXT: 45
// CHECK-NEXT: ( 1, 2, 3, 4 )
func.func @scf_loops() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %r:2 = scf.while (%i = %c0, %acc = %c0) : (index, index) -> (index, index) {
    %cond = arith.cmpi slt, %i, %c10 : index
    scf.condition(%cond) %i, %acc : index, index
  } do {
  ^bb0(%i: index, %acc: index):
    %n = arith.addi %acc, %i : index
    %j = arith.addi %i, %c1 : index
    scf.yield %j, %n : index, index
  }
  %s = arith.index_cast %r#1 : index to i64
  vector.print str "scf_loops\n"
  vector.print %s : i64
  %m = memref.alloca() : memref<4xi32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %j = arith.addi %i, %c1 : index
    %x = arith.index_cast %j : index to i32
    memref.store %x, %m[%i] : memref<4xi32>
  }
  %pad = arith.constant 0 : i32
  %v = vector.transfer_read %m[%c0], %pad : memref<4xi32>, vector<4xi32>
  vector.print %v : vector<4xi32>
  return
}

// A helper that takes a vector (callable from the host too, through fnabi's
// vector wrapper), called here: 2 * (1, 2, 3) = (2, 4, 6).
// CHECK-LABEL: vector_helper
// CHECK-NEXT: ( 2, 4, 6 )
func.func @double(%v: vector<3xi32>) -> vector<3xi32> {
  %r = arith.addi %v, %v : vector<3xi32>
  return %r : vector<3xi32>
}

func.func @vector_helper() {
  %v = arith.constant dense<[1, 2, 3]> : vector<3xi32>
  %r = call @double(%v) : (vector<3xi32>) -> vector<3xi32>
  vector.print str "vector_helper\n"
  vector.print %r : vector<3xi32>
  return
}

// Lowerings that need more than the LLVM conversions (tests/mlir_dialects.rs
// checks the values, derived by hand):
// math.ipowi on values only known at run time (convert-math-to-funcs):
// 2^10 = 1024, (-3)^3 = -27, 7^-1 = 0 (integer division), (-1)^-3 = -1.
func.func @ipow(%b: i32, %e: i32) -> i32 {
  %r = math.ipowi %b, %e : i32
  return %r : i32
}

// A masked read (vector.mask, lowered by lower-vector-mask): the first %n
// of 8 lanes, the others padded with 0; (1, 2, 3) summed = 6.
func.func @masked_sum(%m: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %mask = vector.create_mask %n : vector<8xi1>
  %v = vector.mask %mask { vector.transfer_read %m[%c0], %pad : memref<?xf32>, vector<8xf32> } : vector<8xi1> -> vector<8xf32>
  %s = vector.reduction <add>, %v : vector<8xf32> into f32
  return %s : f32
}

// LLVM's matrix intrinsics (llvm.intr.matrix.transpose, lowered by opt's
// -enable-matrix): a 2x3 column-major matrix (0..5) transposed is the 3x2
// column-major (0, 2, 4, 1, 3, 5).
func.func @flat_transpose(%a: vector<6xf32>) -> vector<6xf32> {
  %t = llvm.intr.matrix.transpose %a {rows = 2 : i32, columns = 3 : i32} : vector<6xf32> into vector<6xf32>
  return %t : vector<6xf32>
}
