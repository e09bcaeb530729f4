// One external function, also declared by host_fns.mlir: each module binds
// @host_op to its own host function (tests/mlir_host.rs).
module {
  func.func private @host_op(i64) -> i64
  func.func @call_op(%n: i64) -> i64 {
    %r = func.call @host_op(%n) : (i64) -> i64
    return %r : i64
  }
}
