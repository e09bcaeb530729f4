#!/usr/bin/env bash
# fnabi's main job on a fresh machine: build the CLI and demangle a real
# raw signature.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p fnabi-cli
./target/release/fnabi demangle 'I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64'
