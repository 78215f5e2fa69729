#!/usr/bin/env bash
# The whole test suite, as the README's Quick start names it and as CI runs it (`.ci/run`).
#
# First installs what the tests need beyond the Rust toolchain (scripts/test-deps.sh), so a fresh
# machine needs nothing else; then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-deps.sh
cargo test --workspace
# The API documentation builds without a warning (broken intra-doc links included).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
# The outputs pasted into README.md (and docs/) are what the current code prints: simulator
# outputs exactly, those timed by the wall clock in their shape (scripts/readme-outputs.py says
# why). A stale block fails, named, with a diff. It runs the `acp` that `cargo test` just built
# (the test profile, optimised: a seed fixes a simulation's output whatever the optimisation
# level), saving a release build of its own.
python3 scripts/test_readme_outputs.py
ACP="$PWD/target/debug/acp" python3 scripts/readme-outputs.py --check

# The Python package (crates/acp-py, outside the Cargo workspace), tested as people install it:
# maturin builds its abi3 wheel (one wheel for CPython 3.9 and later; the dev profile, since the
# tests are about behaviour, sharing the workspace's target/ so the crates it binds are not built
# twice), pip installs that wheel into a venv under target/, then its pytest suite runs:
# behaviour, examples/python/, `mypy.stubtest` on the native module's stub and `mypy --strict` on
# the package and the examples (tests/test_package.py). pandas and pandas-stubs are installed so
# that `Table.to_pandas()` is tested and typed too; dask[distributed] so that the cluster path
# (acp.cluster, `python -m acp`) runs on real LocalClusters and `dask scheduler`/`dask worker`
# processes on loopback (tests/test_cluster.py).
venv="$PWD/target/py-venv"
wheels="$PWD/target/py-wheels"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "maturin>=1.9.4,<2" pytest pandas pandas-stubs "mypy>=1.18" "dask[distributed]"
# A venv from before the package was renamed has `maturin develop`'s install of it as `acp`.
"$venv/bin/pip" uninstall --quiet --yes acp 2>/dev/null
rm -rf "$wheels"
"$venv/bin/maturin" build --quiet --manifest-path crates/acp-py/Cargo.toml --target-dir target --out "$wheels"
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheels"/age_control_protocol-*-abi3-*.whl
"$venv/bin/python" -m pytest -q crates/acp-py/tests
