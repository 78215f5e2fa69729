"""Studies on a Dask cluster: byte for byte the command's output, on a LocalCluster of worker
processes and on a scheduler and workers started as separate processes (the README's example);
a worker killed mid-study loses nothing stored; a study run again computes only what is missing.

The studies are short forms: dd1 with one seed of 10 s (40 simulation runs), and one scenario of
the controller suite (an oracle search, whose second stage depends on its first, and a run per
controller)."""

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

import acp
from acp import cluster

from project import ROOT, run_acp

DD1 = {"seeds": 1, "secs": 10}
DD1_FLAGS = ["--seeds", "1", "--secs", "10"]
SUITE = {"quick": True, "scenarios": ["dd1-s1-p5"], "seeds": 1}
SUITE_FLAGS = ["--quick", "--scenarios", "dd1-s1-p5", "--seeds", "1"]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as lc, Client(lc) as c:
        yield c


def command(name, flags, out):
    """`acp reproduce NAME FLAGS`: its tables (stdout without the closing "wrote" line) and CSV."""
    stdout = run_acp("reproduce", name, *flags, "--out", out, timeout=600)
    assert stdout.splitlines()[-1].startswith("wrote "), stdout
    return stdout[: stdout.rindex("wrote ")], (out / name / f"{name}.csv").read_text()


# Reads the keys of the store at argv[1], one per line; nothing before its database exists.
# Read only, so that reading never creates the database before the store does.
READ_KEYS = """
import sqlite3, sys
try:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    print("\\n".join(k for (k,) in db.execute("SELECT key FROM runs")))
except sqlite3.Error:
    pass
"""


def stored(store):
    """The keys in the result store in `store`, read in a process of its own. This process's
    native module links its own copy of SQLite, and two copies in one process do not see each
    other's POSIX locks: a reader here that closes while a study writes may take itself for the
    last connection and truncate the WAL index the writer has mapped (SQLite's "multiple copies
    of SQLite" hazard; a CI run died of SIGBUS in the store's writer during the test below)."""
    read = [sys.executable, "-c", READ_KEYS, str(store / "runs.sqlite")]
    return set(subprocess.run(read, capture_output=True, text=True, check=True).stdout.split())


def test_two_worker_processes_print_what_the_command_prints(client, tmp_path):
    assert len(client.scheduler_info()["workers"]) == 2
    for name, options, flags in [("dd1", DD1, DD1_FLAGS), ("controllers", SUITE, SUITE_FLAGS)]:
        there = acp.reproduce(name, client=client, **options)
        here = acp.reproduce(name, **options)
        assert (there.text, there.csv, there.json) == (here.text, here.csv, here.json)
        text, csv = command(name, flags, tmp_path)
        assert there.text == text
        assert there.csv == csv


def test_a_sweep_on_the_cluster_is_the_local_sweep(client, tmp_path):
    mm1 = (ROOT / "scenarios" / "mm1.toml").read_text().replace('"400000s"', '"2000s"')
    args = {"text": mm1, "rates": "0.2,0.5,0.8", "seeds": 2}
    there = acp.sweep(client=client, store=tmp_path / "store", **args)
    assert there.rows == acp.sweep(**args).rows
    assert len(stored(tmp_path / "store")) == 6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def readme_example():
    """The README's cluster example: its shell lines."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- cluster example -->\s*```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has the cluster example"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_the_readmes_scheduler_and_workers_print_what_the_command_prints(tmp_path):
    port = str(free_port())
    lines = [l.replace("8786", port).replace("acp-store", str(tmp_path / "store"))
             for l in readme_example()]
    daemons = [l[: -len("&")].split() for l in lines if l.endswith("&")]
    study = [l.split() for l in lines if not l.endswith("&")]
    assert [d[:2] for d in daemons] == [["dask", "scheduler"], ["dask", "worker"]], lines
    assert len(study) == 1 and study[0][:3] == ["python", "-m", "acp"], lines
    bin_dir = Path(sys.executable).parent
    started = []
    try:
        for d in daemons:
            started.append(subprocess.Popen(
                [str(bin_dir / d[0]), *d[1:]], cwd=tmp_path, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        out = tmp_path / "out"
        run = subprocess.run(
            [sys.executable, *study[0][1:], "--out", str(out)],
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )
        assert run.returncode == 0, run.stderr
    finally:
        for p in started:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    name = study[0][4]
    flags = study[0][5 : study[0].index("--scheduler")]
    text, csv = command(name, flags, tmp_path / "local")
    assert run.stdout == text
    assert (out / name / f"{name}.csv").read_text() == csv
    assert len(stored(tmp_path / "store")) > 0


def test_a_worker_killed_mid_study_loses_nothing_stored_and_the_study_completes(tmp_path):
    # A sweep of 40 rates × 2 seeds of an M/M/1 queue, 0.1 s a run or more: several seconds on
    # two workers, long enough to kill one in the middle.
    mm1 = (ROOT / "scenarios" / "mm1.toml").read_text().replace('"400000s"', '"20000s"')
    options = {"text": mm1, "rates": [0.02 * k for k in range(5, 45)], "seeds": 2}
    store = tmp_path / "store"
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as lc, Client(lc) as c:
        pids = list(c.run(os.getpid).values())
        outcome = {}

        def study():
            try:
                outcome["result"] = acp.sweep(client=c, store=store, **options)
            except Exception as e:  # shown by the assertion below
                outcome["error"] = e

        t = threading.Thread(target=study)
        t.start()
        deadline = time.monotonic() + 300
        while len(stored(store)) < 3 and t.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        before = stored(store)
        os.kill(pids[0], signal.SIGKILL)
        t.join(600)
    assert "error" not in outcome, outcome
    after = stored(store)
    local = acp.sweep(store=tmp_path / "local", **options)
    # Killed mid-study: some results were stored and some were not yet; none was lost, and
    # every run of the study was stored in the end, as a local run stores them.
    assert 3 <= len(before) < len(after), len(before)
    assert before <= after == stored(tmp_path / "local")
    assert len(after) == 80
    assert outcome["result"].rows == local.rows


def test_a_study_run_again_computes_only_what_is_missing(client, tmp_path, monkeypatch):
    store = tmp_path / "store"
    computed = []
    stop_after = [10]
    real = cluster.runner

    def counting(c, progress=None):
        run = real(c, progress)

        def counted(study, origins):
            for item in run(study, origins):
                if len(computed) == stop_after[0]:
                    raise RuntimeError("interrupted")
                computed.append(item[0])
                yield item

        return counted

    monkeypatch.setattr(cluster, "runner", counting)
    with pytest.raises(ValueError, match="interrupted"):
        acp.reproduce("dd1", client=client, store=store, **DD1)
    assert len(stored(store)) == 10
    computed.clear()
    stop_after[0] = -1
    again = acp.reproduce("dd1", client=client, store=store, **DD1)
    assert len(computed) == 40 - 10
    assert again.csv == acp.reproduce("dd1", **DD1).csv
    # A third time: nothing left to compute, nothing sent to the cluster.
    computed.clear()
    assert acp.reproduce("dd1", client=client, store=store, **DD1).text == again.text
    assert computed == []


def test_the_store_reads_from_pandas_and_refuses_another_version(client, tmp_path):
    import pandas as pd

    store = tmp_path / "store"
    acp.reproduce("dd1", store=store, **DD1)
    # Closed before the store is opened again (see `stored`); `with db` commits the update.
    with closing(sqlite3.connect(store / "runs.sqlite")) as db, db:
        runs = pd.read_sql_query(
            "SELECT scenario, seed, controllers, rate_hz, "
            "json_extract(result_json, '$.flows[0].age_ms') AS age_ms FROM runs",
            db,
        )
        assert len(runs) == 40 and runs["age_ms"].gt(0).all()
        (version,) = db.execute("SELECT value FROM meta WHERE name = 'version'").fetchone()
        assert version == acp._native.version()
        db.execute("UPDATE meta SET value = '0.0.0+other' WHERE name = 'version'")
    with pytest.raises(ValueError, match="version 0.0.0"):
        acp.reproduce("dd1", store=store, **DD1)
