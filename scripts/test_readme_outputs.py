#!/usr/bin/env python3
"""Tests of scripts/readme-outputs.py against a stand-in `acp` (a shell script given as $ACP).

The stand-in prints what its arguments ask for, so each case knows the true output without
running the real binary: a stale block must fail --check with its file, line and command named;
--write must make it pass; a `clock` block must pass with other numbers, ids and padding and fail
on a renamed field; excerpts (`lines`, `more`, `from`, `cut`) and `&` chains with SIGINT must
select what they say. Run: python3 scripts/test_readme_outputs.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "readme-outputs.py")

# `acp print LINE...` prints each argument as a line; `acp serve` writes a first line on stderr,
# then a report, and a summary when it gets SIGINT; `acp args` prints its arguments.
FAKE_ACP = r"""#!/bin/sh
case "$1" in
print) shift; for l in "$@"; do printf '%s\n' "$l"; done ;;
args) shift; printf '%s\n' "$*" ;;
serve) trap 'echo "summary: done on $2"; exit 0' INT
       echo "listening on $2" >&2; sleep 0.2; echo "report: 1"; while :; do sleep 0.05; done ;;
esac
"""


class ReadmeOutputs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.acp = os.path.join(self.dir.name, "acp")
        with open(self.acp, "w") as f:
            f.write(FAKE_ACP)
        os.chmod(self.acp, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def doc(self, text):
        path = os.path.join(self.dir.name, "doc.md")
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_script(self, mode, path):
        env = dict(os.environ, ACP=self.acp)
        return subprocess.run([sys.executable, SCRIPT, mode, path], env=env,
                              capture_output=True, text=True, timeout=60)

    def read(self, path):
        with open(path) as f:
            return f.read()

    def test_a_stale_block_fails_named_and_write_freshens_it(self):
        path = self.doc("intro\n\n<!-- output: acp print a b -->\n```\na\nold\n```\n")
        r = self.run_script("--check", path)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("doc.md:3 `acp print a b`", r.stderr)
        self.assertIn("-old", r.stderr)
        self.assertIn("+b", r.stderr)
        self.assertEqual(self.run_script("--write", path).returncode, 0)
        self.assertEqual(self.read(path), "intro\n\n<!-- output: acp print a b -->\n```\na\nb\n```\n")
        self.assertEqual(self.run_script("--check", path).returncode, 0)

    def test_clock_blocks_compare_shape_not_numbers(self):
        printed = "<!-- output: acp print 'rate_hz=12.5 id 0123456789abcdef' ;; clock -->\n```\n{}\n```\n"
        ok = self.doc(printed.format("rate_hz=7  id fedcba9876543210"))
        self.assertEqual(self.run_script("--check", ok).returncode, 0)
        renamed = self.doc(printed.format("rate=12.5 id 0123456789abcdef"))
        r = self.run_script("--check", renamed)
        self.assertEqual(r.returncode, 1)
        self.assertIn("+rate_hz=# id <id>", r.stderr)

    def test_vary_ignores_only_what_it_matches(self):
        marker = "<!-- output: acp print 'run in 0.03 s, 5 rows' ;; vary=\"in [0-9.]+ s\" -->\n```\n{}\n```\n"
        self.assertEqual(self.run_script("--check", self.doc(marker.format("run in 9.9 s, 5 rows"))).returncode, 0)
        self.assertEqual(self.run_script("--check", self.doc(marker.format("run in 9.9 s, 6 rows"))).returncode, 1)

    def test_excerpts(self):
        path = self.doc(
            "<!-- output: acp print t '' h 1 2 3 ;; lines=3-4 more -->\n```\n```\n"
            "<!-- output: acp print x 'sec A' r1 r2 '' 'sec B' ;; from=\"^sec A..r2\" -->\n```\n```\n"
            "<!-- output: acp print a report 1 2 summary 3 ;; cut=\"^report..^summary\" -->\n```\n```\n")
        self.assertEqual(self.run_script("--write", path).returncode, 0)
        self.assertEqual(self.read(path),
                         "<!-- output: acp print t '' h 1 2 3 ;; lines=3-4 more -->\n```\nh\n1\n   …\n```\n"
                         "<!-- output: acp print x 'sec A' r1 r2 '' 'sec B' ;; from=\"^sec A..r2\" -->\n```\nsec A\nr1\n```\n"
                         "<!-- output: acp print a report 1 2 summary 3 ;; cut=\"^report..^summary\" -->\n```\na\nsummary\n3\n```\n")

    def test_chains_stop_the_background_commands_and_keep_the_pasted_ports(self):
        marker = ("<!-- output: acp serve 127.0.0.1:7200 & acp args --to 127.0.0.1:7200 ;; {} -->\n"
                  "```\n```\n")
        path = self.doc(marker.format("show=1 both cut=\"^report..^summary\"") + marker.format(""))
        r = self.run_script("--write", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = self.read(path)
        self.assertIn("```\nlistening on 127.0.0.1:7200\nsummary: done on 127.0.0.1:7200\n```", text)
        self.assertIn("```\n--to 127.0.0.1:7200\n```", text)

    def test_a_marker_without_a_block_is_an_error(self):
        r = self.run_script("--check", self.doc("<!-- output: acp print a -->\ntext\n"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("doc.md:1: an output marker must precede a ``` block", r.stderr)


if __name__ == "__main__":
    unittest.main()
