#!/usr/bin/env bash
# Builds fnabi-iree as a dependency of a throw-away project (a path
# dependency, outside this workspace: none of its .cargo/config.toml
# wrappers apply) in three settings, and checks what each prints:
#   1. Debian 12's CMake 3.25.1 first on PATH (the binary of Debian's
#      `cmake` package, fetched with `apt-get download` and unpacked with
#      dpkg -x into the scratch folder, not installed): the build must fail
#      saying CMake 3.26 is needed (CMake's own message: Cargo runs
#      eerie-sys's build script before fnabi-iree's check, see
#      crates/fnabi-iree/src/lib.rs, "Building");
#   2. CMake >= 3.26: it must build and run;
#   3. then LIBCLANG_PATH naming a folder without libclang: fnabi-iree's
#      build script must fail first, naming libclang1-14.
# Report-only (it builds the IREE runtime: about 5 minutes on two cores);
# not part of scripts/test.sh. Needs what install_iree_build_deps installs.
# Usage: scripts/check-iree-dependency.sh [SCRATCH_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/lib/deps.sh"
install_iree_build_deps
good_cmake_dir=$(dirname "$(command -v cmake)")
scratch=${1:-$(mktemp -d)}
mkdir -p "$scratch/project/src" "$scratch/debs" "$scratch/bin"
cat > "$scratch/project/Cargo.toml" <<EOF
[package]
name = "uses-fnabi-iree"
version = "0.1.0"
edition = "2021"

[dependencies]
fnabi-iree = { path = "$repo/crates/fnabi-iree" }

[workspace]
EOF
echo 'fn main() { println!("{}", fnabi_iree::IREE_COMPILER_PACKAGE); }' > "$scratch/project/src/main.rs"

# Debian 12's CMake 3.25.1 and the libraries it links that a machine
# without the package may lack, unpacked into the scratch folder.
if [ ! -x "$scratch/debs/root/usr/bin/cmake" ]; then
  fetch() { (cd "$scratch/debs" && apt-get download cmake cmake-data libjsoncpp25 librhash0 libarchive13 libuv1 >/dev/null 2>&1); }
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  fetch || { $sudo apt-get update -qq && fetch; }
  for deb in "$scratch"/debs/*.deb; do dpkg -x "$deb" "$scratch/debs/root"; done
fi
cat > "$scratch/bin/cmake" <<EOF
#!/bin/sh
LD_LIBRARY_PATH=$scratch/debs/root/usr/lib/x86_64-linux-gnu exec $scratch/debs/root/usr/bin/cmake "\$@"
EOF
chmod +x "$scratch/bin/cmake"
"$scratch/bin/cmake" --version | head -n 1

cargo_bin=$(dirname "$(command -v cargo)")
build() { # PATH_FIRST LOG [VAR=VALUE...]: cargo run in the project, a target folder of its own
  local first=$1 log=$2
  shift 2
  (cd "$scratch/project" && env CARGO_TARGET_DIR="$scratch/target" PATH="$first:$cargo_bin:/usr/bin:/bin" "$@" \
    cargo run 2>&1) >"$log" || return 1
}

failures=0
check() { # NAME LOG PATTERN
  if grep -qF -- "$3" "$2"; then echo "ok: $1"; else echo "FAILED: $1 (no \"$3\" in $2)"; failures=$((failures + 1)); fi
}

if build "$scratch/bin" "$scratch/old-cmake.log"; then
  echo "FAILED: CMake 3.25 built"; failures=$((failures + 1))
else
  check "CMake 3.25: says 3.26 is needed" "$scratch/old-cmake.log" "CMake 3.26 or higher is required.  You are running version 3.25"
fi
if build "$good_cmake_dir" "$scratch/good.log"; then
  check "CMake >= 3.26: builds and runs" "$scratch/good.log" "iree-base-compiler==3.13.0"
else
  echo "FAILED: the build with the tools failed (see $scratch/good.log)"; failures=$((failures + 1))
fi
if build "$good_cmake_dir" "$scratch/no-libclang.log" LIBCLANG_PATH=/nonexistent; then
  echo "FAILED: a missing libclang built"; failures=$((failures + 1))
else
  check "no libclang: fnabi-iree's message" "$scratch/no-libclang.log" \
    "bindgen needs libclang, but LIBCLANG_PATH = /nonexistent holds none: apt-get install libclang1-14"
fi
echo "logs in $scratch"
[ "$failures" -eq 0 ]
