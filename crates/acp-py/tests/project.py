"""Where the tests find the repository and the `acp` command line (one definition for every test
module; pytest puts this directory on the import path)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"
# The command line, as `cargo test --workspace` (run first by scripts/test.sh) builds it.
ACP = Path(os.environ.get("ACP_BIN", ROOT / "target" / "debug" / "acp"))


def run_acp(*args, timeout):
    """`acp ARGS`: its standard output (fails the test if it exits non-zero)."""
    assert ACP.exists(), f"{ACP} is built by `cargo test --workspace`; or set ACP_BIN"
    return subprocess.run(
        [str(ACP), *map(str, args)], capture_output=True, text=True, timeout=timeout, check=True,
    ).stdout
