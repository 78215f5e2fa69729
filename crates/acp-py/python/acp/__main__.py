"""``python -m acp``: a reproduction or a sweep with its runs on a Dask cluster.

    python -m acp reproduce dd1 --seeds 2 --scheduler tcp://HOST:8786 --store acp-store
    python -m acp sweep scenarios/mm1.toml --rates 0.1:0.9:0.1 --workers 4

``reproduce`` prints the tables ``acp reproduce NAME`` prints (``--json``: its JSON) and writes
``OUT/NAME/NAME.csv``, byte for byte the command's; ``sweep`` prints the rows of ``acp sweep
--json`` as JSON. The runs go to the scheduler at ``--scheduler``, or to a ``LocalCluster`` of
``--workers`` worker processes started for the study; ``--store DIR`` keeps every result (and
takes the ones it holds from it). Progress: Dask's bar on a terminal, log lines otherwise.
"""

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import acp

if TYPE_CHECKING:
    from distributed import Client


def _numbers(text: str) -> List[int]:
    return [int(n) for n in text.split(",") if n]


def _names(text: str) -> List[str]:
    return [n for n in text.split(",") if n]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m acp", description=__doc__.split("\n\n")[0])
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://HOST:8786)")
    where.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes of the LocalCluster started without --scheduler (default: one per core)",
    )
    where.add_argument("--store", metavar="DIR", help="the result store's directory")
    where.add_argument("--json", action="store_true", help="print JSON")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("reproduce", parents=[where], help="a reproduction (acp reproduce NAME)")
    r.add_argument("name", choices=list(acp.reproductions()))
    r.add_argument("--out", default="acp-out", help="directory for NAME/NAME.csv")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--seeds", type=int)
    r.add_argument("--secs", type=int)
    r.add_argument("--updates", type=int)
    r.add_argument("--payload", type=int)
    r.add_argument("--clients", type=_numbers, metavar="N,N")
    r.add_argument("--scenarios", type=_names, metavar="ID,ID")
    r.add_argument("--controllers", type=_names, metavar="NAME,NAME")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--whole-medium", action="store_true")
    s = sub.add_parser("sweep", parents=[where], help="a sweep over fixed rates (acp sweep)")
    s.add_argument("file", type=Path)
    s.add_argument("--rates", required=True)
    s.add_argument("--seed", type=int)
    s.add_argument("--seeds", type=int, default=1)
    return p


def _client(args: argparse.Namespace) -> "Client":
    from distributed import Client, LocalCluster

    # distributed's constructors are untyped.
    if args.scheduler:
        return Client(args.scheduler)  # type: ignore[no-untyped-call]
    if args.workers < 1:
        raise SystemExit("python -m acp: --workers must be at least 1")
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=args.workers, threads_per_worker=1, dashboard_address=None
    )
    return Client(cluster)  # type: ignore[no-untyped-call]


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with _client(args) as client:
        if args.command == "sweep":
            rows = acp.sweep(
                args.file, args.rates, seeds=args.seeds, seed=args.seed, client=client, store=args.store
            )
            print(json.dumps(rows.rows))
            return 0
        result = acp.reproduce(
            args.name,
            seed=args.seed,
            seeds=args.seeds,
            secs=args.secs,
            updates=args.updates,
            payload=args.payload,
            clients=args.clients,
            scenarios=args.scenarios,
            controllers=args.controllers,
            quick=args.quick,
            whole_medium=args.whole_medium,
            client=client,
            store=args.store,
        )
        out = Path(args.out) / result.name
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{result.name}.csv").write_text(result.csv)
        sys.stdout.write(result.json + "\n" if args.json else result.text)
        print(f"wrote {out / (result.name + '.csv')}", file=sys.stderr)
        return 0


if __name__ == "__main__":
    sys.exit(main())
