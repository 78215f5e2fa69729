"""ACP (Age Control Protocol) from Python: the distribution ``age-control-protocol``, imported as
``acp``; typed (``mypy --strict`` checks code that uses it).

Research: run the simulator and get tables back.

    >>> import acp
    >>> result = acp.simulate("scenarios/bottleneck.toml", seed=3)
    >>> result.flows.columns()["age_ms"]        # dict of columns, or .rows: list of dicts
    >>> acp.sweep("scenarios/mm1.toml", "0.1:0.9:0.1", seeds=3).to_pandas()
    >>> acp.reproduce("fig7", updates=100_000)   # any of acp.reproductions()

Devices and the cloud: a push-mode ``Source`` and a ``Monitor`` over UDP.

    >>> with acp.Source("monitor.example:7200") as source:
    ...     source.push(b"temp=21.5")           # the freshest reading; never blocks
    >>> with acp.Monitor("0.0.0.0:7200") as monitor:
    ...     for update in monitor:               # fresh updates, as they come
    ...         print(update.session, update.payload)

Columns are named as the ``acp`` command's JSON names them, each with its unit (``age_ms``,
``rate_hz``, ``duration_s``; a reproduction's throughputs ``_mbit_s``). Simulations, sweeps and waits release the GIL.
pandas is optional: ``Table.to_pandas()`` needs it.
"""

import json
from collections.abc import Iterable, Iterator
from os import PathLike
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from . import _native
from ._native import Monitor, Source, Update

if TYPE_CHECKING:
    import pandas
    from distributed import Client

#: A row of a table: column name -> value (numbers, strings, booleans or None), as JSON has them.
Row = Dict[str, Any]
#: A scenario file's path.
ScenarioPath = Union[str, "PathLike[str]"]

__all__ = [
    "Monitor",
    "Source",
    "Update",
    "Table",
    "SimResult",
    "Reproduction",
    "simulate",
    "sweep",
    "reproduce",
    "reproductions",
]


def _flatten(row: Dict[str, Any], prefix: str = "") -> Row:
    """A row whose nested dicts become columns joined with "_" ({"age": {"mean": 1}} -> age_mean)."""
    flat: Row = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


class Table:
    """Rows of results: ``rows`` (a list of dicts), ``columns()`` (a dict of lists) and
    ``to_pandas()`` (a DataFrame, if pandas is installed)."""

    def __init__(self, rows: Iterable[Dict[str, Any]]) -> None:
        self.rows: List[Row] = [_flatten(r) for r in rows]

    def columns(self) -> Dict[str, List[Any]]:
        """The table as a dict of columns, in the order the columns first appear."""
        names: List[str] = []
        for row in self.rows:
            names.extend(k for k in row if k not in names)
        return {n: [row.get(n) for row in self.rows] for n in names}

    def to_pandas(self) -> "pandas.DataFrame":
        """The table as a pandas DataFrame (typed with pandas-stubs installed, else ``Any``)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Table.to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> Row:
        return self.rows[i]

    def __repr__(self) -> str:
        return f"<acp.Table {len(self.rows)} rows: {', '.join(self.columns())}>"


class SimResult:
    """One simulation run: ``flows`` and ``links`` tables, ``seed``, ``duration_s``, ``warmup_s``,
    ``events``, and ``raw`` (the simulator's JSON result as a dict)."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw
        self.seed: int = raw["seed"]
        self.duration_s: float = raw["duration_s"]
        self.warmup_s: float = raw["warmup_s"]
        self.events: int = raw["events"]
        self.flows = Table(raw["flows"])
        self.links = Table(raw["links"])
        self.wifi = Table(raw.get("wifi", []))

    def flow(self, name: str) -> Row:
        """The flow called ``name`` (a row of ``flows``)."""
        for row in self.flows:
            if row["name"] == name:
                return row
        raise KeyError(name)

    def __repr__(self) -> str:
        return f"<acp.SimResult seed {self.seed}, {self.duration_s} s, {len(self.flows)} flows>"


def _scenario_args(
    scenario: Optional[ScenarioPath], text: Optional[str]
) -> Dict[str, Optional[str]]:
    if (scenario is None) == (text is None):
        raise ValueError("give a scenario file or text=TOML, not both")
    return {"path": None if scenario is None else str(scenario), "text": text}


def simulate(
    scenario: Optional[ScenarioPath] = None, *, text: Optional[str] = None, seed: Optional[int] = None
) -> SimResult:
    """Runs the scenario in the file ``scenario`` (or in the TOML string ``text``), with its own
    seed or ``seed``; returns a ``SimResult``."""
    return SimResult(json.loads(_native.simulate(seed=seed, **_scenario_args(scenario, text))))


def sweep(
    scenario: Optional[ScenarioPath] = None,
    rates: Union[str, Iterable[float]] = "0.1:0.9:0.05",
    *,
    text: Optional[str] = None,
    seeds: int = 1,
    seed: Optional[int] = None,
    client: Optional["Client"] = None,
    store: Optional[ScenarioPath] = None,
) -> Table:
    """Runs the scenario with every update flow at each fixed rate in ``rates`` (a list, or
    "10,20,50", or "START:STOP:STEP") over ``seeds`` seeds from its seed (or ``seed``), on all
    cores, or on the Dask cluster of ``client`` (``acp.cluster``); with ``store`` (a directory),
    through the result store there: runs it holds are not run again. Returns a ``Table`` of the
    rows ``acp sweep --json`` prints: rate_hz, seeds, age_ms (mean over seeds), age_ms_ci95 (95 %
    half-width; None from one seed), ages_ms (per seed)."""
    values = _native.parse_rates(rates) if isinstance(rates, str) else [float(r) for r in rates]
    where: Dict[str, Any] = {**_scenario_args(scenario, text), **_where(client, store)}
    rows = _native.sweep_rates(values, seeds, seed=seed, **where)
    return Table(json.loads(rows))


def _where(client: Optional["Client"], store: Optional[ScenarioPath]) -> Dict[str, Any]:
    """The native keywords that send runs to ``client``'s cluster and through ``store``."""
    from . import cluster

    return {
        "store": None if store is None else str(store),
        "runner": None if client is None else cluster.runner(client),
    }


def reproductions() -> Dict[str, str]:
    """The reproductions ``reproduce`` runs: a dict of name -> one line on what it reproduces,
    in the order ``acp reproduce --help`` lists them."""
    return dict(_native.reproductions())


class Reproduction(Table):
    """A reproduction's result: its rows (a ``Table``, with the fields ``acp reproduce NAME
    --json`` and its CSV have), and ``name``, ``setup`` (what was run), ``sources`` (where each
    ``paper_*`` field's numbers come from: a dict of field -> locator), ``notes`` (the papers'
    claims beside ours), ``traces`` (curves beside the rows: a dict of name -> [(x, y)]), ``text``
    (the tables ``acp reproduce NAME`` prints), ``csv`` (its ``NAME.csv``) and ``json`` (what
    ``acp reproduce NAME --json`` prints)."""

    def __init__(self, raw: Dict[str, Any], text: str = "", csv: str = "", json: str = "") -> None:
        self.text = text
        self.csv = csv
        self.json = json
        super().__init__(raw["rows"])
        self.name: str = raw["reproduction"]
        self.setup: str = raw["setup"]
        self.sources: Dict[str, str] = {s["column"]: s["locator"] for s in raw["sources"]}
        self.notes: List[str] = raw["notes"]
        self.traces: Dict[str, List[Tuple[float, float]]] = {
            t["name"]: [(x, y) for x, y in t["points"]] for t in raw.get("traces", [])
        }

    def __repr__(self) -> str:
        return f"<acp.Reproduction {self.name}: {len(self.rows)} rows: {', '.join(self.columns())}>"


def reproduce(
    name: str,
    *,
    seed: int = 1,
    seeds: Optional[int] = None,
    secs: Optional[int] = None,
    updates: Optional[int] = None,
    payload: Optional[int] = None,
    clients: Optional[Iterable[int]] = None,
    scenarios: Optional[Iterable[Union[str, "PathLike[str]"]]] = None,
    controllers: Optional[Iterable[str]] = None,
    quick: bool = False,
    random: Optional[int] = None,
    whole_medium: bool = False,
    client: Optional["Client"] = None,
    store: Optional[ScenarioPath] = None,
) -> Reproduction:
    """Runs one of the ``reproductions()`` as ``acp reproduce NAME`` does (in the simulator) and
    returns a ``Reproduction``, whose rows have the fields of the command's JSON and CSV. Each
    reproduction reads the options it has (``acp reproduce --help`` says which): ``seed`` (the
    first), ``seeds`` (per point), ``secs`` (per run), ``updates`` (fig7), ``payload`` (bytes,
    fig15 and fig3-16), ``clients`` (contention-tcp), ``scenarios``, ``controllers`` (names as
    ``acp`` takes them), ``quick`` (controllers), ``random`` (controllers: that many random paths drawn with
    ``seed``, the held-out evaluation) and ``whole_medium`` (fig15, fig3-16,
    contention-tcp, thesis-3-10: the whole-medium WiFi model); ``None`` takes the reproduction's
    default. The runs go to the Dask cluster of ``client`` if given (``acp.cluster``), else to
    this machine's cores; with ``store`` (a directory), through the result store there: runs it
    holds are not run again, and each new one is kept as it finishes."""
    raw, text, csv = _native.reproduce(
        name,
        seed=seed,
        seeds=seeds,
        secs=secs,
        updates=updates,
        payload=payload,
        clients=None if clients is None else [int(n) for n in clients],
        scenarios=None if scenarios is None else [str(s) for s in scenarios],
        controllers=None if controllers is None else [str(c) for c in controllers],
        quick=quick,
        random=random,
        whole_medium=whole_medium,
        **_where(client, store),
    )
    return Reproduction(json.loads(raw), text, csv, raw)
