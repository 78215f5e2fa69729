#!/usr/bin/env bash
# The whole test suite, as the README's Quick start names it and as CI runs it (`.ci/run`).
#
# First installs what the tests need beyond the Rust toolchain (scripts/test-deps.sh), so a fresh
# machine needs nothing else; then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage prints the seconds since the suite started (CI's budget is the sum: see .ci/run).
export ACP_SUITE_START="${ACP_SUITE_START:-$(date +%s)}"
stage() { echo "== +$(($(date +%s) - ACP_SUITE_START)) s: $*"; }
export -f stage  # for the parallel lanes below, each a `bash -c`

stage "installing the test dependencies"
bash scripts/test-deps.sh
python3 scripts/test_readme_outputs.py
# The Python package's tools are downloaded while Rust builds (network, not CPU).
venv="$PWD/target/py-venv"
wheels="$PWD/target/py-wheels"
pip_log="$(mktemp)"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "maturin>=1.9.4,<2" pytest pandas pandas-stubs "mypy>=1.18" \
  "dask[distributed]" >"$pip_log" 2>&1 &
pip=$!
stage "building the tests"
cargo test --workspace --no-run
# `--test NAME` per integration test of lane $1 (see "Four jobs" below); with `--members` as $2,
# what the lane takes, for its messages ("acp-runtime, acp-lab, core_tcp and sim_vs_lab").
tests_of() {
  cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
# A lane takes the integration tests it names and those of its packages, in this order; a name
# two packages share (`--workspace --test NAME` runs both) stays with the first lane that takes
# it; "rest" takes the others. The two longest lab comparisons of acp-cli (core_tcp and
# sim_vs_lab: 146 s of wall clock for 46 s of CPU) wait beside the tests of acp-runtime and acp-lab.
lanes = {
    "realtime": (("acp-runtime", "acp-lab"), ("core_tcp", "sim_vs_lab")),
    "cli": (("acp-cli",), ()),
    "rest": (None, ()),
}
packages = json.load(sys.stdin)["packages"]  # read whole: cargo must not write into a closed pipe
if sys.argv[1] not in lanes:
    sys.exit(f"no test lane {sys.argv[1]!r}: {sorted(lanes)}")
if sys.argv[2:] not in ([], ["--members"]):
    sys.exit(f"tests_of: unknown option {sys.argv[2:]}")
if sys.argv[2:] == ["--members"]:
    members = [*(lanes[sys.argv[1]][0] or ["the workspace"]), *lanes[sys.argv[1]][1]]
    print(" and ".join(filter(None, [", ".join(members[:-1]), members[-1]])))
    sys.exit()
tests = [(p["name"], t["name"]) for p in packages for t in p["targets"] if "test" in t["kind"]]
lane_of = {}
for lane, (pkgs, names) in lanes.items():
    for pkg, name in tests:
        if pkgs is None or pkg in pkgs or name in names:
            lane_of.setdefault(name, lane)
missing = set().union(*(names for _, names in lanes.values())) - {name for _, name in tests}
if missing:
    sys.exit(f"no integration test named {sorted(missing)}")
print(" ".join("--test " + t for t, lane in lane_of.items() if lane == sys.argv[1]))
' "$@"
}

# The Python package (crates/acp-py), tested as people install it: maturin builds its abi3 wheel
# (one wheel for CPython 3.9 and later) in the dev profile, which is the test profile's settings,
# so it reuses the crates the test build compiled and compiles only acp-py itself (a few
# seconds; it compiled acp-sim's whole tree again, ~5 CPU-minutes, while acp-py was outside the
# workspace); pip installs that wheel into a venv under target/, then its pytest suite runs
# (below, after the README check, beside the Rust tests): behaviour, examples/python/,
# `mypy.stubtest` on the native module's stub and `mypy --strict` on the package and the
# examples (tests/test_package.py). pandas and pandas-stubs are installed so that
# `Table.to_pandas()` is tested and typed too; dask[distributed] so that the cluster path
# (acp.cluster, `python -m acp`) runs on real LocalClusters and `dask scheduler`/`dask worker`
# processes on loopback (tests/test_cluster.py).
wait "$pip" || { cat "$pip_log"; echo "pip could not install the Python test tools" >&2; exit 1; }
rm -f "$pip_log"
# A venv from before the package was renamed has `maturin develop`'s install of it as `acp`.
"$venv/bin/pip" uninstall --quiet --yes acp 2>/dev/null
rm -rf "$wheels"
stage "building the Python wheel"
wheel_log="$(mktemp)"
"$venv/bin/maturin" build --manifest-path crates/acp-py/Cargo.toml --out "$wheels" >"$wheel_log" 2>&1 ||
  { cat "$wheel_log"; echo "maturin could not build the Python wheel" >&2; exit 1; }
# acp-py's Cargo.toml aligns its dependencies' features with the rest of the workspace's; where
# they drift apart, the wheel compiles shared crates again: slower, still correct. Say so. (PyO3
# is compiled again anyway: its build script reads the interpreter maturin chose.)
again="$(grep -o 'Compiling [^ ]*' "$wheel_log" | grep -Ev 'Compiling (acp-py|pyo3(-ffi)?)$' | cut -d' ' -f2 | tr '\n' ' ')" ||
  true  # grep finds nothing: nothing compiled again
[ -z "$again" ] || echo "note: the wheel compiled crates the test build had (features differ; see crates/acp-py/Cargo.toml): $again"
rm -f "$wheel_log"
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheels"/age_control_protocol-*-abi3-*.whl

# Four jobs run side by side: (1) the README outputs check, then pytest, (2) the CLI's integration
# tests, then the API documentation's build, (3) acp-runtime's and acp-lab's and the CLI's two
# longest lab comparisons (real sockets, relays and the lab's emulator: they spend most of their
# time waiting on the wall clock), (4) the rest of the workspace's tests, then the doc tests. The
# README check and pytest run reproductions with the `acp` and the wheel just built
# (`ACP`/`ACP_BIN`: the test profile, its simulator optimised; a seed fixes a simulation's output
# whatever the optimisation level): outputs pasted into README.md (and docs/) are what the current
# code prints, simulator outputs exactly, those timed by the wall clock (and the long reproductions,
# run short) in their shape (scripts/readme-outputs.py says why); a stale block fails, named, with a
# diff. They keep both cores busy for minutes, a load every timing test is built to bear (tests that
# measure time pass beside two busy loops). The jobs that mostly wait (2, 3) run apart from those
# that compute (1, 4), so the waits of one overlap the computation of the others: in one job,
# acp-runtime's and acp-lab's tests took 245 s of wall clock for 50 s of CPU. The API documentation
# builds without a warning (broken intra-doc links included). All select the whole workspace and
# pick test targets by name, so all build with the features `--no-run` resolved (selecting packages
# with `-p` would resolve features anew and rebuild). Each job runs in its own process group,
# stopped whole if the suite is interrupted; their outputs are printed after the fourth's; any
# failing fails the suite, after all have finished (`--no-fail-fast`: every failing binary is named,
# not only the first).
# The lanes' test lists, computed here so that a mistake in them stops the suite.
cli_tests="$(tests_of cli)"
realtime_tests="$(tests_of realtime)"
realtime_members="$(tests_of realtime --members)"
rest_tests="$(tests_of rest)"
readme_log="$(mktemp)"
py_log="$(mktemp)"
cli_log="$(mktemp)"
rt_log="$(mktemp)"
export ACP="$PWD/target/debug/acp" ACP_BIN="$PWD/target/debug/acp"
stage "running the tests"
setsid bash -c '
  python3 scripts/readme-outputs.py --check >"$1" 2>&1; readme=$?
  stage "README check done" >>"$1"
  "$3/bin/python" -m pytest -q crates/acp-py/tests >"$2" 2>&1; py=$?
  stage "pytest done" >>"$2"
  [ "$py" = 0 ] && exit "$readme"; exit 1' checks "$readme_log" "$py_log" "$venv" &
checks=$!
# shellcheck disable=SC2086  # one word per option
setsid bash -c '"$@"; s=$?; stage "CLI tests done"
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps || s=1
  stage "API documentation built"; exit "$s"' \
  cli cargo test --workspace --no-fail-fast $cli_tests >"$cli_log" 2>&1 &
cli=$!
# shellcheck disable=SC2086
setsid bash -c '"$@"; s=$?; stage "$0 tests done"; exit "$s"' \
  "$realtime_members" cargo test --workspace --no-fail-fast $realtime_tests >"$rt_log" 2>&1 &
rt=$!
trap 'kill -- -"$checks" -"$cli" -"$rt" 2>/dev/null || true; rm -f "$readme_log" "$py_log" "$cli_log" "$rt_log"' EXIT
status=0
# shellcheck disable=SC2086
cargo test --workspace --no-fail-fast --lib --bins $rest_tests || status=1
cargo test --workspace --no-fail-fast --doc || status=1
stage "the workspace's tests done"
echo "The CLI's integration tests and the API documentation (run beside the rest):"
wait "$cli" || status=1
cat "$cli_log"
echo "The integration tests of $realtime_members (run beside the rest):"
wait "$rt" || status=1
cat "$rt_log"
wait "$checks" || status=1
echo "README outputs (checked while the tests ran):"
cat "$readme_log"
echo "The Python package's tests (run after the README check, beside the Rust tests):"
cat "$py_log"
[ "$status" = 0 ] || { echo "test suite failed (see above)"; exit 1; }
trap - EXIT
rm -f "$readme_log" "$py_log" "$cli_log" "$rt_log"
stage "test suite passed"
