#!/usr/bin/env bash
# fnabi's main job on a fresh machine: install Debian's MLIR tools if they
# are missing, build the CLI, then compile and run the two-layer MLP example,
# whose parameters arrive as a dict through its `sip` signature.
#
# The CLI is built with the IREE backend when its build tools (a C/C++
# toolchain, libclang, CMake >= 3.26) are there or can be installed, and
# without it otherwise (or with FNABI_NO_IREE=1), saying so: it then runs
# MLIR code and shared libraries but not .vmfb modules.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
install_mlir_tools
features=()
if [ -n "${FNABI_NO_IREE:-}" ]; then
  echo "fnabi: FNABI_NO_IREE is set: building the CLI without the IREE backend (no .vmfb modules)" >&2
  features=(--no-default-features)
elif ! install_iree_build_deps; then
  echo "fnabi: the IREE backend's build tools are missing: building the CLI without it (no .vmfb modules)" >&2
  features=(--no-default-features)
fi
cargo build --locked -q -p fnabi-cli "${features[@]}"
"${CARGO_TARGET_DIR:-target}/debug/fnabi" run examples/mlp.mlir --function mlp --inputs examples/mlp_inputs.json
