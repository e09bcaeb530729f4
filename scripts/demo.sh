#!/usr/bin/env bash
# fnabi's main job on a fresh machine: install Debian's MLIR tools if they
# are missing, build the CLI, then compile and run the two-layer MLP example,
# whose parameters arrive as a dict through its `sip` signature.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
install_mlir_tools
cargo build --release --locked -q -p fnabi-cli
./target/release/fnabi run examples/mlp.mlir --function mlp --inputs examples/mlp_inputs.json
