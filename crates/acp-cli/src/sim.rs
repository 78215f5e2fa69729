//! `acp sim` and `acp sweep`: run a scenario file, or sweep its fixed rates for the oracle.

use std::path::{Path, PathBuf};

use acp_sim::report::{self, Column, SimResult};
use acp_sim::runs::{Local, Runner};
use acp_sim::scenario::Scenario;
use acp_sim::store::{Store, Stored};
use acp_sim::sweep::{self, Edge, SweepPoint, SweepRow};
use anyhow::Context;
use indicatif::ProgressBar;
use serde::Serialize;
use serde_json::json;

use crate::output::{out, outln};
use crate::{SimArgs, SweepArgs, UsageError};

fn load(file: &Path, seed: Option<u64>) -> anyhow::Result<Scenario> {
    let mut s = Scenario::load(file).with_context(|| format!("{}", file.display()))?;
    if let Some(seed) = seed {
        s.config.seed = seed;
    }
    Ok(s)
}

fn out_dir(dir: &Option<PathBuf>) -> Result<Option<&PathBuf>, UsageError> {
    if let Some(d) = dir {
        crate::out_dir(d)?;
    }
    Ok(dir.as_ref())
}

fn write(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes result.json, flows.csv, backlog.csv and the age-over-time plot into `dir`.
fn save_run(dir: &Path, r: &SimResult) -> anyhow::Result<()> {
    write(dir, "result.json", &r.to_json())?;
    write(dir, "flows.csv", &r.flows_csv())?;
    write(dir, "backlog.csv", &r.backlog_csv())?;
    write(dir, "links.csv", &r.links_csv())?;
    let traces: Vec<(String, Vec<(f64, f64)>)> = r
        .flows
        .iter()
        .filter(|f| !f.mean_age_trace.is_empty())
        .map(|f| {
            let ms = f
                .mean_age_trace
                .iter()
                .map(|&(t, a)| (t, a * 1e3))
                .collect();
            (f.name.clone(), ms)
        })
        .collect();
    crate::charts::age_over_time(
        "Age at the receiver",
        "age (ms)",
        &traces,
        r.warmup,
        &[],
        &dir.join("age"),
    )?;
    Ok(())
}

/// `acp sim`.
pub fn run(a: SimArgs) -> anyhow::Result<()> {
    let mut scenario = load(&a.file, a.seed)?;
    let c = &mut scenario.config;
    c.duration = crate::run_length(a.duration, c.duration, c.warmup)?;
    let dir = out_dir(&a.out)?;
    if dir.is_some() && scenario.config.trace_points == 0 {
        scenario.config.trace_points = 4000;
    }
    let started = std::time::Instant::now();
    let result = scenario.build()?.run();
    let wall = started.elapsed().as_secs_f64();
    // Files first: they are written even if stdout is closed.
    if let Some(d) = dir {
        save_run(d, &result)?;
        tracing::info!("wrote {}", d.display());
    }
    if a.json {
        outln!("{}", serde_json::to_string(&result)?)?;
    } else {
        outln!(
            "{}: seed {}, {} s simulated ({} s warm-up), {} events in {:.2} s ({:.1} M events/s)",
            scenario.name,
            result.seed,
            result.duration,
            result.warmup,
            result.events,
            wall,
            result.events as f64 / wall / 1e6
        )?;
        for (i, l) in scenario.topology.links.iter().enumerate() {
            let (from, to) = scenario.topology.ends(i);
            let server = match &l.config.trace {
                Some(t) => format!("trace, mean {}", crate::relay::rate_text(t.mean_rate_bps())),
                None => crate::relay::rate_text(l.config.rate_bps),
            };
            outln!(
                "  link {from}→{to}: {server}, delay {:?}, utilisation {:.3}",
                l.config.delay,
                result.links[i].utilisation
            )?;
        }
        out!("{}", result.table())?;
        for line in result.backlog_lines() {
            outln!("backlog {line}")?;
        }
        for line in result.subflow_lines() {
            outln!("mptcp {line}")?;
        }
        for line in result.multipath_lines() {
            outln!("multipath {line}")?;
        }
    }
    Ok(())
}

/// Writes sweep.csv (the rows' fields that hold one value) and the age-against-rate plot into
/// `dir`.
fn save_sweep(
    dir: &Path,
    name: &str,
    rows: &[SweepRow],
    best: Option<&SweepRow>,
) -> anyhow::Result<()> {
    let fields: Vec<_> = rows.iter().map(report::fields).collect();
    write(dir, "sweep.csv", &report::rows_csv(&fields))?;
    let pts: Vec<(f64, f64, f64)> = rows
        .iter()
        .map(|r| (r.rate_hz, r.age_ms, r.age_ms_ci95.unwrap_or(0.0)))
        .collect();
    crate::charts::age_vs_rate(
        &format!("{name}: age against fixed update rate"),
        &pts,
        best.map(|b| (b.rate_hz, b.age_ms)),
        &dir.join("age_vs_rate"),
    )?;
    Ok(())
}

/// The columns of `acp sweep`'s table.
const SWEEP_COLUMNS: [Column; 4] = [
    Column::num("rate_hz", 12, 3),
    Column::num("seeds", 5, 0),
    Column::num("age_ms", 12, 4),
    Column::num("age_ms_ci95", 11, 4),
];

/// The best rate of a sweep, as `--json` gives it: its row, where it sits on the grid (`null`
/// inside it), and the backlog of each update flow at the first seed.
#[derive(Serialize)]
struct Best {
    #[serde(flatten)]
    row: SweepRow,
    at_edge: Option<Edge>,
    flows: Vec<serde_json::Value>,
}

/// Threads to run simulations on: one per core.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Calls `f` with what runs simulations: this machine's cores, through the result store in
/// `store` if one is given (the runs it holds are taken from it, the others kept in it).
pub(crate) fn with_runner<T>(
    store: Option<&Path>,
    f: impl FnOnce(&dyn Runner) -> T,
) -> anyhow::Result<T> {
    let local = Local { threads: threads() };
    let Some(dir) = store else {
        return Ok(f(&local));
    };
    let store = Store::open(dir)?;
    tracing::info!(
        "result store {}: {} runs held",
        store.path().display(),
        store.len()?
    );
    Ok(f(&Stored {
        store: &store,
        inner: &local,
    }))
}

/// A progress bar over `runs` simulation runs on stderr ([`crate::progress`]): drawn on a
/// terminal, logged as lines elsewhere, hidden when `quiet` (JSON output).
pub(crate) fn progress_bar(runs: u64, quiet: bool) -> ProgressBar {
    crate::progress::bar(runs, quiet)
}

/// `acp sweep`.
pub fn sweep(a: SweepArgs) -> anyhow::Result<()> {
    let scenario = load(&a.file, a.seed)?;
    let rates = sweep::parse_rates(&a.rates).map_err(|e| UsageError(format!("--rates: {e}")))?;
    let dir = out_dir(&a.out)?;
    let first = scenario.config.seed;
    let seeds: Vec<u64> = (0..a.seeds).map(|k| first.wrapping_add(k)).collect();
    let bar = progress_bar((rates.len() * seeds.len()) as u64, a.json);
    // Not cancellable: Ctrl-C ends `acp sweep` at once, as the default SIGINT handling does.
    let never = sweep::Cancel::new();
    let points: Vec<SweepPoint> = with_runner(a.store.as_deref(), |runner| {
        sweep::sweep(&scenario, &rates, &seeds, runner, &never, &|done, _| {
            bar.set_position(done as u64)
        })
    })?
    .map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    let best = sweep::best(&points);
    let rows: Vec<SweepRow> = points.iter().map(SweepRow::from).collect();
    let best_row = best.map(SweepRow::from);
    let at_edge = best.and_then(|b| sweep::edge(&points, b));
    if let (Some(b), Some(edge)) = (&best_row, at_edge) {
        let side = match edge {
            Edge::Lowest => "lowest",
            Edge::Highest => "highest",
        };
        tracing::warn!(
            "the best rate, {} updates/s, is the {side} rate swept: the least age may lie beyond \
             it; widen --rates",
            b.rate_hz
        );
    }
    // Files first: they are written even if stdout is closed.
    if let Some(d) = dir {
        save_sweep(d, &scenario.name, &rows, best_row.as_ref())?;
        tracing::info!("wrote {}", d.display());
    }
    if a.json {
        let oracle = best.zip(best_row).map(|(b, row)| {
            let flows: Vec<_> = b
                .result
                .flows
                .iter()
                .filter(|f| f.age.is_some())
                .map(|f| json!({"flow": f.name, "backlog": f.backlog, "source_backlog": f.source_backlog}))
                .collect();
            Best { row, at_edge, flows }
        });
        outln!(
            "{}",
            json!({"scenario": scenario.name, "seeds": seeds, "points": rows, "best": oracle})
        )?;
    } else {
        outln!(
            "{}: {} rates × {} seed(s) from {first}; age is the mean over seeds ± 95 % CI \
             (none from one seed)",
            scenario.name,
            rates.len(),
            seeds.len()
        )?;
        let fields: Vec<_> = rows.iter().map(report::fields).collect();
        let mut lines = report::text_table(&SWEEP_COLUMNS, &fields);
        if let Some(b) = &best_row {
            let at = rows.iter().position(|r| r.rate_hz == b.rate_hz);
            lines = lines
                .lines()
                .enumerate()
                .map(|(i, l)| match at == i.checked_sub(1) {
                    true => format!("{l}  ← best\n"),
                    false => format!("{l}\n"),
                })
                .collect();
        }
        out!("{lines}")?;
        if let (Some(b), Some(p)) = (&best_row, best) {
            let ci = b
                .age_ms_ci95
                .map_or_else(String::new, |c| format!(" ± {c:.4}"));
            outln!(
                "oracle: {:.3} updates/s gives age {:.4}{ci} ms",
                b.rate_hz,
                b.age_ms
            )?;
            for line in p.result.backlog_lines() {
                outln!("  backlog at seed {first}, {line}")?;
            }
        }
    }
    Ok(())
}
