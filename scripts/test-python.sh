#!/usr/bin/env bash
# Builds the Python package (crates/fnabi-py) as a wheel, installs it into a
# virtual environment with numpy, ml_dtypes and pytest from PyPI, and runs
# its pytest suite against the repository's real MLIR and IREE modules.
#
#   FNABI_PY_IREE=0     build without the IREE runtime (the IREE tests then
#                       report themselves skipped); default 1
#   FNABI_PY_VENV=DIR   the virtual environment (default target/python-venv;
#                       created when missing, its tools upgraded in place)
#   extra arguments go to pytest (e.g. -k dtype)
#
# Exits non-zero when anything fails; pytest's summary line is the last
# line of its output.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh

iree="${FNABI_PY_IREE:-1}"
venv="${FNABI_PY_VENV:-target/python-venv}"

apt_install python3 python3-venv
install_mlir_tools
features=()
if [ "$iree" != 0 ]; then
  install_iree_build_deps
  features=(--features iree)
fi

python=/usr/bin/python3
[ -x "$python" ] || python=python3
if [ ! -x "$venv/bin/python" ]; then
  echo "fnabi: creating the virtual environment $venv" >&2
  "$python" -m venv "$venv"
fi
py="$(realpath "$venv")/bin/python"
# mypy and pyflakes are pinned: each release adds checks, and CI must not
# fail on a new one unannounced.
"$py" -m pip install --quiet --disable-pip-version-check 'maturin>=1.7,<2' numpy pytest ml_dtypes 'mypy==2.4.1' 'pyflakes==3.4.0'
# The project's Python: no unused imports or names, no undefined ones.
"$py" -m pyflakes crates/fnabi-py/python crates/fnabi-py/tests crates/fnabi-py/bench scripts

# The wheel exactly as `pip install ./crates/fnabi-py` would build it (abi3,
# with the Python sources and the typing stub), in the dev profile: the
# tests need correct code, not fast code, and the dev build shares the
# workspace's compiled dependencies.
wheels=target/python-wheels
rm -rf "$wheels"
"$py" -m maturin build --quiet --locked --profile dev -i "$py" -m crates/fnabi-py/Cargo.toml -o "$wheels" "${features[@]}"
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/fnabi-*.whl

# `import fnabi` is the installed wheel: crates/fnabi-py/python is not on sys.path.
export FNABI_PY_IREE="$iree"
cd crates/fnabi-py/tests
# The typing stub against the module it describes: names, signatures,
# finality (a stub that drifts from the code fails here).
MYPY_CACHE_DIR="$(realpath ../../../target)/mypy-cache" \
  "$py" -m mypy.stubtest fnabi --allowlist ../stubtest-allowlist.txt
exec "$py" -m pytest -p no:cacheprovider -q "$@"
