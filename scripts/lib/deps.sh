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
  $sudo apt-get update -qq || return 1
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    echo "fnabi: could not install ${missing[*]} with apt-get" >&2
    return 1
  }
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
# printMemrefF32 & co.) and async runtime (libmlir_async_runtime, for modules
# with async ops) of the installed tools' version: package libmlir-N (a
# dependency of mlir-22-tools, a separate package for 19).
install_mlir_runtime_libs() {
  local v
  for v in 22 19; do
    command -v "mlir-opt-$v" >/dev/null || continue
    local dir
    dir=$("llvm-config-$v" --libdir)
    if ls "$dir"/libmlir_c_runner_utils.so* >/dev/null 2>&1 && ls "$dir"/libmlir_runner_utils.so* >/dev/null 2>&1 \
      && ls "$dir"/libmlir_async_runtime.so* >/dev/null 2>&1; then
      return 0
    fi
    apt_install "libmlir-$v"
    return 0
  done
}

# What the IREE runtime build (crate eerie-sys, used by fnabi-iree) needs: a
# C/C++ toolchain and make, libclang with its resource headers for bindgen
# (without libclang-common-14-dev bindgen fails on stdbool.h), and CMake >=
# 3.26 (Debian 12 has 3.25: a newer one comes from PyPI into a cached venv,
# put first on PATH). The venv is made by Debian's own python3 (a python3
# earlier on PATH, such as pyenv's shims, may depend on the home folder).
# LIBCLANG_PATH is set only where llvm-config, which clang-sys asks
# otherwise, is absent. Returns non-zero, saying what failed, when a tool
# cannot be installed (demo.sh then builds without the IREE backend).
install_iree_build_deps() {
  apt_install build-essential libclang1-14 libclang-common-14-dev || return 1
  if ! cmake_at_least 3 26; then
    local venv="${FNABI_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fnabi}/cmake-venv"
    if ! PATH="$venv/bin:$PATH" cmake_at_least 3 26; then
      apt_install python3 python3-venv || return 1
      echo "fnabi: installing CMake from PyPI into $venv" >&2
      rm -rf "$venv"
      /usr/bin/python3 -m venv "$venv" || return 1
      "$venv/bin/pip" install --quiet --disable-pip-version-check 'cmake>=3.26' || {
        echo "fnabi: could not install CMake >= 3.26 from PyPI" >&2
        return 1
      }
    fi
    export PATH="$venv/bin:$PATH"
  fi
  if ! command -v llvm-config >/dev/null && [ -z "${LIBCLANG_PATH:-}" ] && [ -e /usr/lib/llvm-14/lib/libclang.so.1 ]; then
    export LIBCLANG_PATH=/usr/lib/llvm-14/lib
  fi
  cmake_at_least 3 26
}

# IREE's compiler, for `fnabi run model.mlir --backend iree` and its tests:
# PyPI's iree-base-compiler of the runtime's version (3.13.0, the IREE of
# crate eerie-sys 0.5.0), in a venv of its own under the tools folder, where
# fnabi looks for it when FNABI_IREE_COMPILE is unset and no iree-compile is
# on PATH (crates/fnabi-iree/src/compile.rs). Nothing is done when that
# venv already has that version installed.
IREE_COMPILER_VERSION=3.13.0
install_iree_compiler() {
  local venv="${FNABI_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fnabi}/iree-venv"
  if [ -x "$venv/bin/iree-compile" ] \
    && compgen -G "$venv/lib/python3*/site-packages/iree_base_compiler-$IREE_COMPILER_VERSION.dist-info" >/dev/null; then
    return 0
  fi
  apt_install python3 python3-venv || return 1
  echo "fnabi: installing iree-base-compiler==$IREE_COMPILER_VERSION from PyPI into $venv" >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" || return 1
  "$venv/bin/pip" install --quiet --disable-pip-version-check "iree-base-compiler==$IREE_COMPILER_VERSION" || {
    echo "fnabi: could not install iree-base-compiler==$IREE_COMPILER_VERSION from PyPI" >&2
    return 1
  }
}

# True when `cmake` on PATH is at least version $1.$2.
cmake_at_least() {
  local v major minor
  v=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$v" ] || return 1
  read -r major minor <<<"$v"
  [ "$major" -gt "$1" ] || { [ "$major" -eq "$1" ] && [ "$minor" -ge "$2" ]; }
}

install_test_deps() {
  # python3-numpy: the CLI tests check the .npy files fnabi writes with numpy.
  apt_install build-essential valgrind python3 python3-numpy
  install_mlir_tools
  install_mlir_runtime_libs
  install_iree_build_deps
  install_iree_compiler
}
