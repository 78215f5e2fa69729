"""examples/python/sensor_to_cloud.py runs and reports what it should."""

import re
import subprocess
import sys

from project import ROOT


def test_the_example_runs():
    script = ROOT / "examples" / "python" / "sensor_to_cloud.py"
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "simulated 120 s, seed 1" in out
    assert re.search(r"acp\+ +age +2\d\.\d ms", out), out
    received = int(re.search(r"received (\d+) fresh readings", out).group(1))
    delivered = int(re.search(r"monitor: (\d+) delivered", out).group(1))
    # Two seconds of readings every 5 ms: a few hundred, all taken by the script's loop.
    assert 100 <= received <= delivered, out
