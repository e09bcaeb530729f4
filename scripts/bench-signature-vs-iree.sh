#!/usr/bin/env bash
# fnabi's signature parsers against IREE's C++ reference parser (issue 19,
# P6), in one run: builds bench/iree-signature/driver.cc with g++ -O2 and
# the `signature_timing` example of fnabi-abi in release, runs them one
# after the other ROUNDS times (default 3) on the same ten signatures, and
# prints per operation and signature the median ns of each and the ratio
# C++ / fnabi, then the same as JSON (with the CPU model) on the last line.
#
# Usage: scripts/bench-signature-vs-iree.sh [ROUNDS] [FILTER]
#
# The rows without an operation of their own in the reference compare with
# the nearest one: `raw_parse` (owned) with the C++ zero-copy read,
# `raw_human_zero_copy` with the C++ human form, `sip_parse` and
# `sip_clone` with the C++ visitor. Installs g++ and libabsl-dev (Debian)
# when missing. Timings on a busy machine are noise: run it on a quiet one.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/deps.sh
rounds=${1:-3}
filter=${2:-/}
apt_install g++ libabsl-dev

out=target/iree-signature
mkdir -p "$out"
g++ -O2 -std=c++17 -Wall -o "$out/driver" bench/iree-signature/driver.cc bench/iree-signature/signature_parser.cc \
  -labsl_strings -labsl_int128 -labsl_throw_delegate -labsl_raw_logging_internal
cargo build --quiet --release -p fnabi-abi --example signature_timing
rust=target/release/examples/signature_timing
"$rust" --list > "$out/signatures.txt"

for i in $(seq "$rounds"); do
  "$out/driver" "$out/signatures.txt" "$filter" | awk '{print $1, $2}' > "$out/cpp_$i.txt"
  "$rust" "$filter" > "$out/rust_$i.txt"
done

python3 scripts/lib/signature_ratios.py "$out" "$rounds"
