"""What a Dask cluster costs a study (docs/SCALING.md, "Studies on a cluster").

    python crates/acp-py/benches/cluster.py [--runs 96] [--secs 60] [--workers 1,2,4]

A sweep of scenarios/mm1.toml shortened to `--secs` simulated seconds per run (60 s: about 0.1 s
of work per run in a release build), `--runs` runs (rates × 2 seeds), run three ways:

- locally on the native rayon path with 1 thread (the reference: runs/s of one core);
- on a LocalCluster of 1 worker process of 1 thread: its time over the reference's, less one,
  is the per-task overhead of the cluster path (Dask's scheduling, serialisation, the result
  coming back and being decoded);
- on LocalClusters of each `--workers` count (one thread each): runs/s.

Also: the bytes a task sends (its origin and the study's reference) and gets back (the encoded
result), and the scheduler's CPU time per task. Each timing is the median of `--rounds`.
"""

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Callable

from distributed import Client, LocalCluster

import acp
from acp import _native

ROOT = Path(__file__).resolve().parents[3]


def median_time(rounds: int, f: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=96)
    p.add_argument("--secs", type=int, default=60)
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    text = (ROOT / "scenarios" / "mm1.toml").read_text().replace('"400000s"', f'"{a.secs}s"')
    seeds = 2
    rates = [0.05 + 0.9 * k / (a.runs // seeds) for k in range(a.runs // seeds)]
    n = len(rates) * seeds
    print(f"sweep of mm1.toml, {a.secs} s per run: {len(rates)} rates x {seeds} seeds = {n} runs")

    # The reference: this machine, one run at a time (one call per run), no cluster.
    _native.sweep_rates(rates[:1], 1, text=text)  # warm up

    def each_run() -> None:
        for r in rates:
            for s in range(1, seeds + 1):
                _native.sweep_rates([r], 1, text=text, seed=s)

    local = median_time(a.rounds, each_run)
    print(f"local, one run at a time: {n / local:.1f} runs/s, {local / n * 1e3:.1f} ms/run")

    # Bytes per task.
    study = json.dumps({"sweep": {"text": text, "dir": None}})
    origin = '{"job":0,"fixed":[0.5,1]}'
    _, result = _native.run_task(study, origin)
    size = len(result or b"")
    print(f"per task: origin {len(origin)} B, study {len(study)} B (scattered once), result {size} B")

    for workers in [int(w) for w in a.workers.split(",")]:
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc, Client(lc) as client:
            acp.sweep(text=text, rates=rates[:workers], seeds=1, client=client)  # warm up
            cpu0 = client.run_on_scheduler(time.process_time)
            took = median_time(
                a.rounds, lambda: acp.sweep(text=text, rates=rates, seeds=seeds, client=client)
            )
            cpu = (client.run_on_scheduler(time.process_time) - cpu0) / (a.rounds * n)
            line = f"{workers} worker process(es): {n / took:.1f} runs/s"
            if workers == 1:
                line += f", overhead per task against local 1 thread: {(took / local - 1) * 100:+.1f} %"
            print(f"{line}; scheduler CPU {cpu * 1e3:.2f} ms/task")


if __name__ == "__main__":
    main()
