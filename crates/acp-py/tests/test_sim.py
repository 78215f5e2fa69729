"""The simulator from Python: results as tables, checked against the queueing formulas the
simulator is validated with, and bad input as ValueError."""

import inspect
import re
import sys

import pytest

import acp

from project import SCENARIOS, run_acp

# One M/M/1 queue with mu = 1 (scenarios/mm1.toml), shortened: 40,000 s is about 20,000 updates.
MM1 = (SCENARIOS / "mm1.toml").read_text().replace('"400000s"', '"40000s"')


def mm1_age(lam, mu=1.0):
    """Average age of an M/M/1 FCFS queue (Kaul, Yates, Gruteser 2012)."""
    rho = lam / mu
    return (1 + 1 / rho + rho**2 / (1 - rho)) / mu


def test_a_scenario_run_is_a_set_of_tables():
    result = acp.simulate(SCENARIOS / "bottleneck.toml")
    assert (result.seed, result.duration_s, result.warmup_s) == (1, 120.0, 20.0)
    assert [f["name"] for f in result.flows] == ["acp+", "lazy", "video"]
    # ACP+ keeps the age near the 20 ms one-way delay; Lazy (one update per round trip) does not.
    acp_plus, lazy = result.flow("acp+"), result.flow("lazy")
    assert 20 < acp_plus["age_ms"] < lazy["age_ms"]
    assert acp_plus["source_phase"] == "running"  # nested counters become columns
    columns = result.links.columns()
    assert len(columns["from"]) == len(result.links) == 4
    assert all(0.0 <= u <= 1.0 for u in columns["utilisation"])


def test_a_seed_determines_the_run():
    a = acp.simulate(text=MM1, seed=7)
    b = acp.simulate(text=MM1, seed=7)
    c = acp.simulate(text=MM1, seed=8)
    assert a.raw == b.raw
    assert a.seed == 7 and a.flows[0]["age_ms"] != c.flows[0]["age_ms"]


def test_a_sweep_finds_the_mm1_optimum():
    table = acp.sweep(text=MM1, rates="0.3:0.7:0.2", seeds=3)
    assert list(table.columns()) == ["rate_hz", "seeds", "age_ms", "age_ms_ci95", "ages_ms"]
    assert [round(r["rate_hz"], 6) for r in table] == [0.3, 0.5, 0.7]
    best = min(table, key=lambda r: r["age_ms"])
    assert best["rate_hz"] == pytest.approx(0.5)  # the optimum is 0.53
    for row in table:
        assert len(row["ages_ms"]) == row["seeds"] == 3 and row["age_ms_ci95"] > 0
        # Within 8 %: about 10,000-30,000 updates per seed; the standard error is ~2 %.
        assert row["age_ms"] / 1e3 == pytest.approx(mm1_age(row["rate_hz"]), rel=0.08)
    one = acp.sweep(text=MM1, rates=[0.5], seeds=1)[0]
    assert one["ages_ms"] == table[1]["ages_ms"][:1]
    assert one["age_ms_ci95"] is None  # one seed gives no interval


def test_fig7_is_reproduced_against_the_analytic_curves():
    table = acp.reproduce("fig7", updates=20_000)
    assert len(table) == 4 * 12
    assert set(table.columns()["system"]) == {
        "M/M/1 μ=1",
        "M/M/1 μ=2",
        "M/M/1 μ=4",
        "tandem μ1=μ2=1",
    }
    slowest = {"M/M/1 μ=1": 1, "M/M/1 μ=2": 2, "M/M/1 μ=4": 4, "tandem μ1=μ2=1": 1}
    # Rates from 5 % to 95 % of the slowest server. Near 95 % the age converges far too slowly
    # for 20,000 updates (`acp reproduce fig7` simulates 1,000,000); up to 50 % the mean of
    # 20,000 ages is within a few per cent.
    checked = [r for r in table if r["rate_hz"] <= 0.5 * slowest[r["system"]] + 1e-9]
    assert len(checked) == 4 * 6
    for row in checked:
        assert row["simulated_age_s"] == pytest.approx(row["analytic_age_s"], rel=0.1), row


def test_the_dd1_table_compares_controllers_with_the_exact_optimum():
    table = acp.reproduce("dd1", secs=10)
    # Long form: one row per path and controller.
    assert len(table) == 10 * 4
    assert list(table.columns()) == [
        "service_ms",
        "delay_ms",
        "optimal_age_ms",
        "controller",
        "age_ms",
        "age_ratio",
        "server_backlog",
    ]
    for row in table:
        assert row["optimal_age_ms"] == pytest.approx(1.5 * row["service_ms"] + row["delay_ms"])
        assert row["age_ms"] == pytest.approx(row["age_ratio"] * row["optimal_age_ms"])
        # Nothing beats the optimum S + P + S/2 (0.5 % of slack for the finite window).
        assert row["age_ratio"] > 0.995, row


def test_the_wifi_figure_has_seek_beside_acp_plus_and_the_papers_numbers():
    table = acp.reproduce("fig15", secs=10, seeds=1)
    columns = table.columns()
    assert columns["sources"] == [1, 6, 12, 24, 48] * 3 + [1]
    assert columns["controller"] == ["acp+"] * 5 + ["seek"] * 5 + ["lazy"] * 5 + ["oracle"]
    assert "age_ms" in columns and "age_ms_ci95" in columns
    assert all(0 < j <= 1 + 1e-9 for j in columns["jain"] if j is not None)  # Jain's index
    # Lazy keeps about one update in flight per source: 1.00–1.04 up to 24 sources, 1.11 at 48
    # (seed 1), where contention delays its ACKs (the Rust test of fig15 allows the same 0.15).
    lazy = [r for r in table if r["controller"] == "lazy"]
    assert all(r["backlog"] == pytest.approx(1, abs=0.15) for r in lazy)
    # ACP+'s backlog with 6 sources, beside ours, and where the paper says it.
    assert table[1]["paper_backlog"] == 1.39
    assert "Fig. 15b" in table.sources["paper_backlog"]


# Short forms of every reproduction (a few seconds each in a debug build).
SHORT = {
    "fig2": dict(secs=10, seeds=1),
    "fig4": dict(secs=10, seeds=1),
    "fig7": dict(updates=1000),
    "table1": dict(secs=10),
    "table1-per-hop": dict(secs=10),
    "dd1": dict(secs=10),
    "fig15": dict(secs=10, seeds=1),
    "fig3-16": dict(secs=10, seeds=1),
    "fig3-15": dict(seeds=1),
    "fig3-15-poisson": dict(seeds=1),
    "contention-tcp": dict(secs=10, seeds=1, clients=[1]),
    "controllers": dict(seeds=1, scenarios=["dd1-s2-p5"], quick=True),
    "core-tcp": dict(secs=10),
    "orbit": dict(secs=10, seeds=1, clients=[1], controllers=["acp+"]),
    "thesis-3-9": dict(secs=10, seeds=1, clients=[1], controllers=["lazy"]),
    "thesis-3-10": dict(secs=10, seeds=1),
    "fairness": dict(secs=10, seeds=1, scenarios=["equal-2"], controllers=["lazy"]),
    "coexistence": dict(secs=10, seeds=1, clients=[1], controllers=["acp+"]),
    "no-tcp": dict(secs=10, seeds=1, clients=[5], controllers=["acp+"]),
    "thesis-4-8": dict(secs=10, seeds=1, clients=[1]),
    "thesis-4-9": dict(secs=10, seeds=1),
    "thesis-4-10": dict(secs=10, seeds=1, clients=[10]),
    "thesis-4-15": dict(secs=10, seeds=1),
    "agg-age": dict(secs=10, seeds=1, clients=[1], controllers=["seek"]),
    "thesis-4-5": dict(secs=10, seeds=1, scenarios=["K0=1"]),
    "thesis-4-7": dict(secs=10, seeds=1),
    "thesis-5-7": dict(secs=10, seeds=1, scenarios=["mcs=2"]),
    "qaware-cbr": dict(seeds=1, scenarios=["6+6 cross on F1"]),
    "qaware-loss": dict(seeds=1, scenarios=["12+6 F2 lossy"]),
    "qaware-apps": dict(seeds=1, scenarios=["udp 4-8 s on F1 at 9+6"]),
    "qaware-testbed": dict(seeds=1, scenarios=["40/80 ms"]),
}


def test_every_reproduction_runs_from_python_with_one_name_per_field():
    assert list(acp.reproductions()) == list(SHORT)
    for name, options in SHORT.items():
        table = acp.reproduce(name, **options)
        assert table.name == name and len(table) > 0, name
        fields = list(table[0])
        # Every row has the same fields, each a unit in its name where it has one; the papers'
        # numbers and the confidence intervals sit beside the quantity they belong to.
        assert all(list(row) == fields for row in table), name
        # One age scheme: `age_ms` is the age at the monitor, `est_age_ms` the source's estimate.
        assert not any(f.startswith("true_") for f in fields), name
        if any(f.startswith("est_age_ms") for f in fields):
            assert "age_ms" in fields, name
        for field in fields:
            assert "kbps" not in field and "mbps" not in field, (name, field)
            if field.startswith("paper_"):
                assert field[len("paper_"):].removesuffix("_bound") in fields, (name, field)
            if field.endswith("_ci95"):
                assert field[: -len("_ci95")] in fields, (name, field)
        assert set(table.sources) <= set(fields), name


def acp_reproduce_help():
    """`acp reproduce --help` (the command line built from the workspace)."""
    return run_acp("reproduce", "--help", timeout=60)


def test_python_reproduces_what_the_command_line_does_with_its_options():
    help_text = acp_reproduce_help()
    listed = help_text[help_text.index("Possible values:") : help_text.index("Options:")]
    names = re.findall(r"^ +- ([\w-]+):", listed, re.MULTILINE)
    assert names and list(acp.reproductions()) == names
    # Every option that chooses what a reproduction runs is a keyword of acp.reproduce; the rest
    # are about the command's output (--out, --json, --markdown, logging) or the lab (--sim:
    # Python always runs the simulator). `client` is Python's alone: the Dask cluster to run on
    # (the command line's is `python -m acp … --scheduler`).
    options = set(re.findall(r"^ +(?:-\w, )?--([\w-]+)", help_text, re.MULTILINE))
    output_only = {"out", "sim", "json", "markdown", "verbose", "quiet", "log-format", "help"}
    keywords = set(inspect.signature(acp.reproduce).parameters) - {"name", "client"}
    assert {o.replace("-", "_") for o in options - output_only} == keywords


def test_tables_convert_to_pandas():
    import pandas  # scripts/test.sh installs it: the conversion is tested, never skipped

    frame = acp.sweep(text=MM1, rates=[0.4, 0.6]).to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == ["rate_hz", "seeds", "age_ms", "age_ms_ci95", "ages_ms"]
    assert frame["rate_hz"].tolist() == [0.4, 0.6]


def test_to_pandas_without_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        acp.Table([{"a": 1}]).to_pandas()


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="not both"):
        acp.simulate(SCENARIOS / "mm1.toml", text=MM1)
    with pytest.raises(ValueError, match="line"):
        acp.simulate(text=MM1 + "\n[[flow]]\ntype = 3\n")
    with pytest.raises(ValueError, match="cannot read"):
        acp.simulate(SCENARIOS / "missing.toml")
    with pytest.raises(ValueError, match="positive rate"):
        acp.sweep(text=MM1, rates="0.1:x:0.1")
    with pytest.raises(ValueError, match="positive"):
        acp.sweep(text=MM1, rates=[0.5, -1])
    with pytest.raises(ValueError, match="unknown reproduction"):
        acp.reproduce("fig99")
    with pytest.raises(ValueError, match="atlantis"):
        acp.reproduce("controllers", scenarios=["atlantis"])
    with pytest.raises(ValueError, match="controller"):
        acp.reproduce("controllers", controllers=["warp"])
    with pytest.raises(ValueError, match="secs must be at least 10"):
        acp.reproduce("dd1", secs=1)
    # The same checks as the CLI's: what a reproduction does not run is refused, not ignored.
    with pytest.raises(ValueError, match="does not take --controllers"):
        acp.reproduce("thesis-4-9", controllers=["seek"])
    with pytest.raises(ValueError, match="at least 1"):
        acp.reproduce("thesis-4-8", clients=[0])
