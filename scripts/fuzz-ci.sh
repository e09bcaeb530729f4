#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a short budget: first it replays
# the committed corpus (fuzz/corpus/TARGET) and the seeds (fuzz/seeds/TARGET),
# then mutates for FNABI_FUZZ_SECONDS (default 8) seconds. A crash, leak or
# timeout fails the script, naming the target and printing the reproducer
# (its path and its bytes in hex). New inputs go to a scratch folder, so the
# committed corpus is not changed. Uses the stable toolchain with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz needs nightly flags) and installs cargo-fuzz
# (`cargo install cargo-fuzz --locked`, ~1.5 min, cached in ~/.cargo/bin).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
export RUSTC_BOOTSTRAP=1
seconds=${FNABI_FUZZ_SECONDS:-8}
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fnabi: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked --quiet
fi
targets=$(cargo fuzz list)
cargo fuzz build -O >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for t in $targets; do
  # The README's command names these folders: each target has both.
  for d in "corpus/$t" "seeds/$t"; do
    [ -n "$(ls -A "$d" 2>/dev/null)" ] || { echo "fnabi: fuzz/$d is missing or empty (commit it)" >&2; exit 1; }
  done
  mkdir -p "$scratch/$t"
  log="$scratch/$t.log"
  start=$(date +%s)
  if cargo fuzz run -O "$t" "$scratch/$t" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "fnabi: fuzz $t: ok, ${execs:-?} executions, ${cov:-cov: ?} in $(( $(date +%s) - start )) s"
  else
    failed=1
    echo "fnabi: fuzz $t FAILED; its log ends:" >&2
    tail -n 40 "$log" >&2
    for a in $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log"); do
      echo "fnabi: reproducer $a (hex): $(od -An -tx1 -v "$a" | tr -d ' \n' | head -c 4096)" >&2
      echo "fnabi: replay it with: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run $t $a" >&2
    done
  fi
done
exit "$failed"
