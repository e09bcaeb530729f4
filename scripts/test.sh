#!/usr/bin/env bash
# Runs every test of fnabi on a fresh Debian machine: installs what the tests
# need (Debian packages through apt-get, crates through cargo), then runs the
# whole test suite. CI (.ci/run) calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
install_test_deps
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
# The calls into compiled MLIR code, under valgrind: no memory errors and
# nothing definitely lost (callee-allocated results must be freed once).
ffi_test=$(cargo test -p fnabi --test mlir_call --locked --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -n "$ffi_test" ] || { echo "fnabi: could not locate the mlir_call test binary" >&2; exit 1; }
valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --quiet \
  "$ffi_test" --test-threads=2 --quiet
# Host functions that MLIR code calls: their memref results are malloc'ed
# for MLIR and freed by it or by fnabi; failures leak nothing either.
host_test=$(cargo test -p fnabi --test mlir_host --locked --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -n "$host_test" ] || { echo "fnabi: could not locate the mlir_host test binary" >&2; exit 1; }
valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --quiet \
  "$host_test" --test-threads=2 --quiet
# The fuzz targets are a separate crate (cargo-fuzz layout): make sure they build.
cargo check --manifest-path fuzz/Cargo.toml --bins --quiet
echo "fnabi: all tests passed"
