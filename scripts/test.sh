#!/usr/bin/env bash
# The whole test suite, as the README's Quick start names it and as CI runs it (`.ci/run`).
#
# First installs what the tests need beyond the Rust toolchain (scripts/test-deps.sh), so a fresh
# machine needs nothing else; then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-deps.sh
cargo test --workspace
