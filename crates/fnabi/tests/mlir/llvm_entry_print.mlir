// An entry point as MLIR's integration tests write them: `@main()` that
// prints through MLIR's runtime utilities. The test lowers it to the LLVM
// dialect with a user's pipeline and runs it with `fnabi run` and with
// `mlir-runner -e main -entry-point-result=void`; both must print the
// CHECK lines (derived by hand from vector.print's format).

func.func @main() {
  %v = arith.constant dense<[1.5, 2.0, -3.0]> : vector<3xf32>
  // CHECK: ( 1.5, 2, -3 )
  vector.print %v : vector<3xf32>
  %c = arith.constant 42 : i64
  // CHECK: 42
  vector.print %c : i64
  %m = arith.constant dense<[[1, 2], [3, 4]]> : vector<2x2xi32>
  // CHECK: ( ( 1, 2 ), ( 3, 4 ) )
  vector.print %m : vector<2x2xi32>
  return
}
