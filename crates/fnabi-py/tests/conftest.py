"""Shared fixtures of the fnabi Python tests: the repository's real MLIR
modules (compiled by Debian's MLIR tools through fnabi's pipeline and
cache) and IREE modules. Expected values always come from numpy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import fnabi

REPO = Path(__file__).resolve().parents[3]
MLIR = REPO / "crates" / "fnabi" / "tests" / "mlir"
IREE = REPO / "crates" / "fnabi" / "tests" / "fixtures" / "iree"
HERE = Path(__file__).resolve().parent
PY_FIXTURES = HERE / "mlir" / "py_fixtures.mlir"
MLP = REPO / "examples" / "mlp.mlir"


def run_child(script: str, *args: object) -> subprocess.CompletedProcess:
    """Runs ``script`` in a child interpreter with ``args`` as its
    ``sys.argv[1:]``: for checks whose failure would be a crash or a hang
    (a segfault, a deadlock holding the GIL), which then fail the test
    instead of ending the run. Output as text; at most 120 s."""
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="session")
def memref_abi() -> fnabi.Module:
    return fnabi.load(MLIR / "memref_abi.mlir")


@pytest.fixture(scope="session")
def structured() -> fnabi.Module:
    return fnabi.load(MLIR / "structured.mlir")


@pytest.fixture(scope="session")
def scalars() -> fnabi.Module:
    return fnabi.load(MLIR / "scalars.mlir")


@pytest.fixture(scope="session")
def dict8() -> fnabi.Module:
    return fnabi.load(MLIR / "sip_dict8.mlir")


@pytest.fixture(scope="session")
def pyfix() -> fnabi.Module:
    return fnabi.load(PY_FIXTURES)


@pytest.fixture(scope="session")
def mlp() -> fnabi.Module:
    return fnabi.load(MLP)


def iree_required() -> bool:
    """The test command builds the package with IREE unless told not to
    (FNABI_PY_IREE=0); then the IREE tests must run, not skip."""
    return os.environ.get("FNABI_PY_IREE", "1") != "0"


@pytest.fixture(scope="session")
def iree_dir() -> Path:
    if not fnabi.has_iree():
        if iree_required():
            pytest.fail("this fnabi build has no IREE runtime: build it with `maturin develop --features iree`")
        pytest.skip("built without IREE (FNABI_PY_IREE=0)")
    return IREE
