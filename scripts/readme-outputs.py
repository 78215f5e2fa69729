#!/usr/bin/env python3
"""Regenerates (--write) or checks (--check) the command outputs pasted into README.md and docs/.

Every pasted output is a fenced code block right after a marker line naming the command that
prints it:

    <!-- output: acp reproduce dd1 ;; lines=1-8 more -->
    ```
    ...what the command prints...
    ```

`acp` is the release binary (target/release/acp, or $ACP). Commands run in a scratch directory
holding links to the repository's scenarios/, deploy/ and testdata/, so files they write
(acp-out/) land there. `A & B & C` starts A and B in the background (each once it has written its
first line to stderr, or after 2 s), runs C to its end, then stops A and B with SIGINT (Ctrl-C)
and waits for their summaries. The ports of 127.0.0.1:PORT addresses are swapped for free ones
while the commands run and swapped back in what they print, so the check cannot collide with a
monitor already on the README's ports. Each distinct command line runs once per invocation, so a
README excerpt and a docs/ table of the same command share one run.

Options after `;;` (applied in this order):
  show=N        the output of the Nth command of an `&` chain (default: the last)
  stderr        stderr instead of stdout; `both` for the two in the order they arrive (lines
                written within a millisecond of each other may swap)
  cut=A..B      drop the lines from the first one matching regex A up to the next matching B
  from=A[..B]   keep from the first line matching regex A to the next empty line (or the next
                line matching B, whichever comes first)
  lines=M-N     keep lines M to N; `more` then adds a line `   …`
  vary=REGEX    text that --check ignores: what depends on the machine's speed, such as the
                simulator's events per second, or on a check-with run, such as a scenario name
  clock         the output comes from real sockets and wall-clock time: --check compares its
                shape, not its numbers (see below)
  check-with=A  --check sets the options A on the chain's last command (a flag it has takes
                the new value), such as a shorter --duration, and compares the shape of what
                it prints (see below), which does not depend on them

--check regenerates every block into a temporary copy of the file and fails, naming each block
(file, line and command) with a diff, where the file differs from what the current code prints.
Simulator outputs are deterministic (a seed fixes a run byte for byte), so they must match
exactly, except `vary` text. `clock` outputs (the demo, a monitor, relay and source on loopback,
`acp bench monitor`) cannot: on this project's shared two-core machines the same command's
numbers move by tens of per cent between runs (`acp bench monitor`'s rounds span 290k-490k
datagrams/s, ages rise with load), so any tolerance wide enough never to fail spuriously would
also pass stale numbers. For them the check compares everything else exactly: the lines, their
words, column headers, units, field names and row labels, with every number, 16-digit hex session
id and timestamp replaced by a placeholder. So a renamed field or column, a changed unit or a new
line fails the check; their numbers are as fresh as the last --write.
A `clock` block's marker may shorten its run for the check (`check-with`).

The long reproductions the README quotes (`controllers`, `fig15`, `table1-per-hop`; `dd1`, a few
seconds, is checked exactly) are checked the same way, in a short form (`check-with`: one seed,
20-second runs, `controllers` on five of its scenarios, whose summary has the same rows and
columns whatever scenarios it covers): their full runs took about 15 of CI's 30 CPU-minutes at the
test profile's opt-level 1, and CI must stay under 20 minutes, with long reproductions run "only
in a short form that still asserts their findings" (issue 20). Their findings are asserted by
acp-sim's tests that run them short (controller_suite, whose scenarios include Table 1's networks,
and wifi_reproductions); the check holds what the README prints to what the code prints: every
line, row label, column and unit. Their numbers are those of the last --write, which runs them in
full (on a release build: `cargo build --release --bin acp`, a few minutes).
"""

import argparse
import difflib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^<!-- output: (.*?) -->$")
FENCE = "```"
ELLIPSIS = "   …"
LINKED = ("scenarios", "deploy", "testdata")
ADDRESS = re.compile(r"127\.0\.0\.1:(\d+)")


class Block:
    """A marked output block: its file, the marker's line (1-based), command and options."""

    def __init__(self, path, line, command, options, body_start, body_end):
        self.path, self.line = path, line
        self.command, self.options = command, options
        self.body_start, self.body_end = body_start, body_end

    def name(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line} `{self.command}`"


def parse_marker(text):
    command, _, opts = text.partition(";;")
    options = {}
    for word in shlex.split(opts):
        key, _, value = word.partition("=")
        options[key] = value
    known = {"show", "stderr", "both", "cut", "from", "lines", "more", "vary", "clock", "check-with"}
    unknown = set(options) - known
    if unknown:
        raise SystemExit(f"unknown option(s) {sorted(unknown)} in marker: {text}")
    return command.strip(), options


def find_blocks(path, lines):
    blocks = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith(FENCE):
            raise SystemExit(f"{path}:{i + 1}: an output marker must precede a ``` block")
        end = next((j for j in range(i + 2, len(lines)) if lines[j] == FENCE), None)
        if end is None:
            raise SystemExit(f"{path}:{i + 2}: unclosed ``` block")
        command, options = parse_marker(m.group(1))
        blocks.append(Block(path, i + 1, command, options, i + 2, end))
    return blocks


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scratch_dir():
    d = tempfile.mkdtemp(prefix="readme-outputs-")
    for name in LINKED:
        os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
    return d


class Runner:
    """Runs each command line once, in its own scratch directory, with free ports."""

    def __init__(self, acp):
        self.acp = acp
        self.cache = {}

    def outputs(self, command):
        """[(stdout, stderr, both)] of each command of the `&` chain."""
        if command not in self.cache:
            self.cache[command] = self.run_chain(command)
        return self.cache[command]

    def argv(self, part, ports):
        words = shlex.split(part)
        if words[0] != "acp":
            raise SystemExit(f"not an acp command: {part}")
        swap = lambda m: f"127.0.0.1:{ports.setdefault(m.group(1), str(free_port()))}"
        return [self.acp] + [ADDRESS.sub(swap, w) for w in words[1:]]

    def run_chain(self, command):
        print(f"running: {command}", file=sys.stderr, flush=True)
        cwd, ports = scratch_dir(), {}
        parts = [p.strip() for p in command.split(" & ")]
        procs = []
        for i, part in enumerate(parts):
            p = subprocess.Popen(
                self.argv(part, ports), cwd=cwd, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env={k: v for k, v in os.environ.items() if k != "RUST_LOG"},
            )
            procs.append(Collected(p))
            if i < len(parts) - 1:
                procs[-1].first_stderr_line.wait(2.0)
        last = procs[-1]
        last.proc.wait()
        time.sleep(0.2)  # the last ACKs and reports reach the processes still running
        for c in procs[:-1]:
            c.proc.send_signal(signal.SIGINT)
        results = []
        for c, part in zip(procs, parts):
            if c.proc.wait(timeout=60) != 0:
                raise SystemExit(f"`{part}` (of `{command}`) exited with status "
                                 f"{c.proc.returncode}:\n{c.text('stderr')}")
            back = {v: k for k, v in ports.items()}
            restore = lambda t: ADDRESS.sub(lambda m: f"127.0.0.1:{back.get(m.group(1), m.group(1))}", t)
            results.append({k: restore(c.text(k)) for k in ("stdout", "stderr", "both")})
        subprocess.run(["rm", "-rf", cwd], check=True)
        return results


class Collected:
    """A child's stdout and stderr, read as they come, also in the order they came."""

    def __init__(self, proc):
        self.proc = proc
        self.lines = {"stdout": [], "stderr": [], "both": []}
        self.lock = threading.Lock()
        self.first_stderr_line = threading.Event()
        self.readers = [threading.Thread(target=self.read, args=(proc.stdout, "stdout")),
                        threading.Thread(target=self.read, args=(proc.stderr, "stderr"))]
        for r in self.readers:
            r.start()

    def read(self, pipe, kind):
        for raw in pipe:
            line = raw.decode("utf-8", "replace")
            with self.lock:
                self.lines[kind].append(line)
                self.lines["both"].append(line)
            if kind == "stderr":
                self.first_stderr_line.set()

    def text(self, kind):
        for r in self.readers:
            r.join()
        return "".join(self.lines[kind])


def with_args(command, extra):
    """`command` with the options `extra` (`--flag [value]` words) set on its chain's last
    command: a flag it already has takes the new value, others are appended."""
    head, sep, last = command.rpartition(" & ")
    words, new = shlex.split(last), shlex.split(extra)
    i = 0
    while i < len(new):
        flag = new[i]
        value = new[i + 1:i + 2] if i + 1 < len(new) and not new[i + 1].startswith("--") else []
        if flag in words:
            at = words.index(flag)
            has_value = at + 1 < len(words) and not words[at + 1].startswith("--")
            words[at:at + 1 + has_value] = [flag] + value
        else:
            words += [flag] + value
        i += 1 + len(value)
    return head + sep + shlex.join(words)


def select(block, runner, check):
    o = block.options
    command = block.command
    if check and "check-with" in o:
        command = with_args(command, o["check-with"])
    outputs = runner.outputs(command)
    chosen = outputs[int(o.get("show", len(outputs))) - 1]
    kind = "both" if "both" in o else "stderr" if "stderr" in o else "stdout"
    lines = chosen[kind].rstrip("\n").split("\n")
    if "cut" in o:
        a, b = (re.compile(x) for x in o["cut"].split(".."))
        start = next((i for i, l in enumerate(lines) if a.search(l)), None)
        if start is not None:
            end = next((i for i in range(start + 1, len(lines)) if b.search(lines[i])), len(lines))
            lines = lines[:start] + lines[end:]
    if "from" in o:
        a, _, b = o["from"].partition("..")
        a, b = re.compile(a), re.compile(b) if b else None
        start = next((i for i, l in enumerate(lines) if a.search(l)), None)
        if start is None:
            raise SystemExit(f"{block.name()}: no line matches from={o['from']!r}")
        ends = lambda l: not l.strip() or (b is not None and b.search(l))
        end = next((i for i in range(start + 1, len(lines)) if ends(lines[i])), len(lines))
        lines = lines[start:end]
    if "lines" in o:
        m, _, n = o["lines"].partition("-")
        lines = lines[int(m) - 1:int(n)]
    if "more" in o:
        lines.append(ELLIPSIS)
    return [l.rstrip() for l in lines]


NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?")
HEX_ID = re.compile(r"\b[0-9a-f]{16}\b")


def shape(line):
    """A wall-clock line without its numbers, ids and column padding."""
    line = HEX_ID.sub("<id>", line)
    line = NUMBER.sub("#", line)
    return " ".join(line.split())


def comparable(block, lines):
    if "vary" in block.options:
        vary = re.compile(block.options["vary"])
        lines = [vary.sub("<varies>", l) for l in lines]
    if "clock" in block.options or "check-with" in block.options:
        lines = [shape(l) for l in lines]
    return lines


def main():
    # The chains stop their background commands with SIGINT. A script started as an `&` job of a
    # non-interactive shell inherits SIGINT ignored, and so would every command it starts (a shell
    # cannot trap a signal ignored on entry): catching it here gives the children its default.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the blocks in place")
    mode.add_argument("--check", action="store_true", help="fail where a block is stale")
    ap.add_argument("files", nargs="*", help="default: README.md and docs/*.md")
    ap.add_argument("--only", help="only blocks whose command contains this text")
    args = ap.parse_args()

    acp = os.environ.get("ACP", os.path.join(ROOT, "target", "release", "acp"))
    if not os.access(acp, os.X_OK):
        raise SystemExit(f"{acp}: not found; build it with `cargo build --release --bin acp`")
    files = args.files or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    runner, stale = Runner(acp), []
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        blocks = [b for b in find_blocks(path, lines) if not args.only or args.only in b.command]
        fresh = list(lines)
        for b in reversed(blocks):  # from the end, so earlier line numbers stay valid
            new = select(b, runner, args.check)
            old = lines[b.body_start:b.body_end]
            if comparable(b, old) != comparable(b, new):
                stale.append((b, old, new))
            fresh[b.body_start:b.body_end] = new
        if args.write and fresh != lines:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(fresh))
            print(f"rewrote {os.path.relpath(path, ROOT)}", file=sys.stderr)
    if args.check and stale:
        for b, old, new in reversed(stale):
            print(f"stale output block {b.name()}:", file=sys.stderr)
            diff = difflib.unified_diff(comparable(b, old), comparable(b, new), "pasted", "printed now", lineterm="")
            print("\n".join(diff), file=sys.stderr)
        print(f"{len(stale)} stale block(s); `python3 scripts/readme-outputs.py --write` regenerates them",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
