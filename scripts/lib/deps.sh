# Shared by scripts/*.sh: installs what fnabi's tests and examples need,
# only when it is missing. Debian packages come from apt-get (as root, or
# through sudo); everything else from crates.io through cargo.

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "fnabi: installing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Debian's MLIR/LLVM tools for compiling .mlir test fixtures: version 22
# (bookworm-security), else 19 (bookworm main). Pins the major version only.
install_mlir_tools() {
  local v
  for v in 22 19; do
    if command -v "mlir-opt-$v" >/dev/null && command -v "llc-$v" >/dev/null \
      && command -v "opt-$v" >/dev/null && command -v "mlir-translate-$v" >/dev/null; then
      return 0
    fi
  done
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  for v in 22 19; do
    if apt-cache show "mlir-$v-tools" >/dev/null 2>&1 && apt-cache show "llvm-$v" >/dev/null 2>&1; then
      echo "fnabi: installing Debian packages: mlir-$v-tools llvm-$v" >&2
      $sudo apt-get install -y -qq --no-install-recommends "mlir-$v-tools" "llvm-$v" >/dev/null
      return 0
    fi
  done
  echo "fnabi: neither mlir-22-tools/llvm-22 nor mlir-19-tools/llvm-19 is available from apt" >&2
  return 1
}

# MLIR's runtime utilities (libmlir_c_runner_utils, libmlir_runner_utils:
# printMemrefF32 & co.) of the installed tools' version: package libmlir-N
# (a dependency of mlir-22-tools, a separate package for 19).
install_mlir_runtime_libs() {
  local v
  for v in 22 19; do
    command -v "mlir-opt-$v" >/dev/null || continue
    local dir
    dir=$("llvm-config-$v" --libdir)
    if ls "$dir"/libmlir_c_runner_utils.so* >/dev/null 2>&1 && ls "$dir"/libmlir_runner_utils.so* >/dev/null 2>&1; then
      return 0
    fi
    apt_install "libmlir-$v"
    return 0
  done
}

install_test_deps() {
  apt_install build-essential valgrind
  install_mlir_tools
  install_mlir_runtime_libs
}
