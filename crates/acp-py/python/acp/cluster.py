"""Sweeps and reproductions on a Dask cluster (``dask.distributed``).

A study is planned and reported in this process, exactly as ``acp`` does it on the command line;
only its simulation runs go to the cluster, one Dask task per run. A task carries the run's
origin (a few dozen bytes: the job of the study's plan, and a fixed rate and seed) and a
reference to the study's text, which is scattered to the workers once; the worker rebuilds the
run's scenario from them and runs it in the native extension with the GIL released, and sends
back the result, encoded so that every number arrives bit for bit. The tables and CSV are
therefore byte for byte those of a local run, whatever the cluster and whatever order the runs
finished in.

Every worker needs this package, of the same build (a worker of another simulator version is
refused). Dask reruns the tasks of a worker that dies on the others; with a result store
(``store=DIR``) every result is kept in this process as it arrives, so an interrupted study run
again computes only what is missing.

    >>> from distributed import Client, LocalCluster           # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    >>> acp.reproduce("dd1", seeds=2, client=client, store="acp-store")
"""

import logging
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Tuple

from . import _native

if TYPE_CHECKING:
    from distributed import Client, Future

log = logging.getLogger("acp.cluster")

#: What the native side calls with a batch: the study's text and the runs' origins; it yields
#: ``(index, simulator version, encoded result or None)`` for each run as it finishes.
Runner = Callable[[str, List[str]], Iterator[Tuple[int, str, Optional[bytes]]]]


def _show_progress(futures: "List[Future[Any]]") -> None:
    """Dask's own progress bar on a terminal (in a thread: the results are taken meanwhile)."""
    from distributed import progress

    threading.Thread(target=progress, args=(futures,), kwargs={"multi": False}, daemon=True).start()


def runner(client: "Client", progress: Optional[bool] = None) -> Runner:
    """A runner that sends each run to ``client``'s cluster as a task. ``progress``: Dask's
    progress bar (the default on a terminal) or, if false, a log line (logger ``acp.cluster``)
    at each tenth of a batch."""
    bar = sys.stdout.isatty() if progress is None else progress

    def run(study: str, origins: List[str]) -> Iterator[Tuple[int, str, Optional[bytes]]]:
        from distributed import as_completed

        # distributed's functions are untyped: its calls are checked by the tests, not mypy.
        shared = client.scatter(study, broadcast=True, hash=False)  # type: ignore[no-untyped-call]
        # Keys of their own (not pure): a released or cancelled key of an earlier batch is
        # never one of these, even for an equal run.
        futures = client.map(_native.run_task, [shared] * len(origins), origins, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        if bar:
            _show_progress(futures)
        done = 0
        try:
            completed = as_completed(futures, with_results=True)  # type: ignore[no-untyped-call]
            for future, (version, result) in completed:
                yield index[future.key], version, result
                future.release()
                done += 1
                if not bar and done * 10 // len(futures) > (done - 1) * 10 // len(futures):
                    log.info("%d/%d runs done", done, len(futures))
        except BaseException:
            # Given up (an error, Ctrl-C, the caller stopped taking results): the rest is not
            # wanted. Not on success: a later batch may ask for an equal run (the same key).
            client.cancel(futures)  # type: ignore[no-untyped-call]
            raise

    return run
