"""The package as people install it: the wheel scripts/test.sh built and installed, its types
(the stub of the native module against the module itself, and `mypy --strict` on the package and
the examples), and the distribution's name."""

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import acp
import pytest

from project import ROOT
DISTRIBUTION = "age-control-protocol"


def run(args, cwd):
    """Runs `python ARGS` in `cwd`; returns (exit code, what it printed)."""
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout + done.stderr


def test_acp_is_imported_from_the_installed_wheel():
    dist = metadata.distribution(DISTRIBUTION)
    files = {str(f) for f in dist.files or []}
    # The native module for every CPython from 3.9 on (abi3), its stub and the typed marker.
    assert {"acp/__init__.py", "acp/_native.pyi", "acp/py.typed", "acp/_native.abi3.so"} <= files
    assert Path(acp.__file__).resolve() == Path(dist.locate_file("acp/__init__.py")).resolve()
    assert dist.metadata["Requires-Python"] == ">=3.9"


def test_the_stub_matches_the_native_module(tmp_path):
    # Run outside the source tree, so the installed module and stub are the ones compared.
    code, out = run(["-m", "mypy.stubtest", "acp._native"], tmp_path)
    assert code == 0, out


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    """One cache for the two `mypy --strict` runs below (same options): the second reads the
    standard library's and pandas' stubs, most of mypy's time, from what the first wrote."""
    return str(tmp_path_factory.mktemp("mypy-cache"))


def test_the_package_passes_mypy_strict(tmp_path, mypy_cache):
    # `-p acp` finds the installed package (py.typed): what users' type checkers read.
    code, out = run(["-m", "mypy", "--strict", "--cache-dir", mypy_cache, "-p", "acp"], tmp_path)
    assert code == 0, out


def test_the_examples_pass_mypy_strict(tmp_path, mypy_cache):
    examples = sorted(str(p) for p in (ROOT / "examples" / "python").glob("*.py"))
    assert examples
    code, out = run(["-m", "mypy", "--strict", "--cache-dir", mypy_cache, *examples], tmp_path)
    assert code == 0, out
