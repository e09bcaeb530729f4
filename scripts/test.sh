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
# The fuzz targets are a separate crate (cargo-fuzz layout): make sure they build.
cargo check --manifest-path fuzz/Cargo.toml --bins --quiet
echo "fnabi: all tests passed"
