#!/usr/bin/env bash
# Runs every test of fnabi on a fresh Debian machine: installs what the tests
# need (Debian packages through apt-get, crates through cargo), then runs the
# whole test suite. CI (.ci/run) calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
install_test_deps
# Every test removes what it writes under the temporary folder (issue 18).
# The suite runs with a private TMPDIR, so that files of other processes on
# the machine do not count, and any fnabi-* entry left in it fails the run
# (fnabi_leftovers, at the end). The private folder itself goes on exit.
tmp_parent=${TMPDIR:-/tmp}
TMPDIR=$(mktemp -d "$tmp_parent/fnabi-test-sh.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
fnabi_leftovers() {
  # Excluded: fnabi-cache-UID, the compile cache's private fallback when its
  # folder cannot be written (fnabi_core::cache::private_temp_cache), which
  # tests trigger on purpose; a cache, it persists by design (as
  # ~/.cache/fnabi does).
  find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'fnabi-*' ! -name "fnabi-cache-$(id -u)" -printf '%f\n' | sort
}
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
# The test binaries the workspace run above built, one line each:
# "PACKAGE TARGET PATH" (TARGET `lib` for a library's unit tests). Asking for
# them with `-p PACKAGE` instead would build each package again with its own
# features, a second copy of four crates (time and several GB of disk), and
# run binaries other than those the suite just ran.
test_binaries=$(cargo test --workspace --all-targets --locked --no-run --message-format=json \
  | python3 scripts/lib/test_binaries.py)
# Runs test binary TEST of package PKG (`lib`: its unit tests, only those
# whose names match the FILTERs) under valgrind (after an optional wrapper
# command, WRAP): no memory errors and nothing definitely lost.
#   valgrind_test PKG TEST [WRAP...]    valgrind_test PKG lib FILTER...
valgrind_test() {
  local pkg=$1 t=$2
  shift 2
  local bin wrap=("$@") filters=()
  if [ "$t" = lib ]; then wrap=() filters=("$@"); fi
  bin=$(awk -v p="$pkg" -v t="$t" '$1 == p && $2 == t { print $3 }' <<<"$test_binaries")
  [ -n "$bin" ] || { echo "fnabi: the workspace build made no $pkg $t test binary" >&2; exit 1; }
  "${wrap[@]}" valgrind --suppressions=scripts/valgrind.supp --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-possibly-lost=no --quiet \
    "$bin" --test-threads=2 --quiet "${filters[@]}"
}
# fnabi-core's memory boundaries: buffers from malloc, mappings and vectors,
# arrays written in place, raw views, memory-mapped .npy (1-2 s).
valgrind_test fnabi-core lib array:: memory:: ndarray:: npy::
# fnabi-mlir's result adoption: callee blocks taken, shared, freed once (<1 s).
valgrind_test fnabi-mlir lib memref::
# The calls into compiled MLIR code (callee-allocated results must be freed once).
for t in mlir_call mlir_function mlir_host mlir_tensor mlir_dialects mlir_dialect_prints mlir_entry; do
  valgrind_test fnabi "$t"
done
# The IREE runtime's calls too. IREE's async proactor blocks in
# io_uring_enter, which valgrind runs without releasing its thread lock (a
# deadlock with no CPU use); scripts/no-io-uring.c makes io_uring_setup
# fail, and IREE falls back to its POSIX proactor.
cc -O2 -Wall -Werror -o target/no-io-uring scripts/no-io-uring.c
for t in fixtures errors compile; do
  valgrind_test fnabi-iree "$t" target/no-io-uring
done
# The Python package: built as a wheel into a fresh venv, then its pytest suite.
./scripts/test-python.sh
# The malformed-input probe: truncations, bit flips, huge sizes and deep
# nesting of every format through the CLI (~5 s).
scripts/probe.sh target/debug/fnabi
# Every fuzz target: its committed corpus replayed, then 8 s of fuzzing
# (cargo-fuzz on stable through RUSTC_BOOTSTRAP=1): ~2.5 min of runs after the
# sanitizer build (~3-4 min on 2 cores, ~1 more for the IREE runtime vmfb_run
# links) and, once, cargo-fuzz's install (~1.5 min).
scripts/fuzz-ci.sh
left=$(fnabi_leftovers)
if [ -n "$left" ]; then
  echo "fnabi: the tests left these in the temporary folder (a test must remove what it writes):" >&2
  echo "$left" >&2
  exit 1
fi
echo "fnabi: all tests passed"
