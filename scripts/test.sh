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

# The Python package (crates/acp-py, outside the Cargo workspace): maturin builds it into a venv
# under target/, then its pytest suite runs (examples/python/ included). pandas is installed so
# that `Table.to_pandas()` is tested too.
venv="$PWD/target/py-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "maturin>=1.9.4,<2" pytest pandas
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet --manifest-path crates/acp-py/Cargo.toml
"$venv/bin/python" -m pytest -q crates/acp-py/tests
