//! `acp sim` and `acp sweep`: run a scenario file, or sweep its fixed rates for the oracle.

use std::path::{Path, PathBuf};

use acp_sim::report::SimResult;
use acp_sim::scenario::Scenario;
use acp_sim::sweep::{self, SweepPoint};
use anyhow::Context;
use indicatif::ProgressBar;
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
    }
    Ok(())
}

/// Writes sweep.csv and the age-against-rate plot into `dir`.
fn save_sweep(
    dir: &Path,
    name: &str,
    points: &[SweepPoint],
    best: Option<&SweepPoint>,
) -> anyhow::Result<()> {
    let csv = acp_sim::report::to_csv(
        &["rate_hz", "age_ms", "ci95_ms", "seeds"],
        points.iter().map(|p| {
            vec![
                p.rate.to_string(),
                (p.age * 1e3).to_string(),
                (p.ci95 * 1e3).to_string(),
                p.ages.len().to_string(),
            ]
        }),
    );
    write(dir, "sweep.csv", &csv)?;
    let pts: Vec<(f64, f64, f64)> = points
        .iter()
        .map(|p| (p.rate, p.age * 1e3, p.ci95 * 1e3))
        .collect();
    crate::charts::age_vs_rate(
        &format!("{name}: age against fixed update rate"),
        &pts,
        best.map(|b| (b.rate, b.age * 1e3)),
        &dir.join("age_vs_rate"),
    )?;
    Ok(())
}

/// Threads to run simulations on: one per core.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
    let threads = threads();
    let first = scenario.config.seed;
    let seeds: Vec<u64> = (0..a.seeds).map(|k| first.wrapping_add(k)).collect();
    let bar = progress_bar((rates.len() * seeds.len()) as u64, a.json);
    // Not cancellable: Ctrl-C ends `acp sweep` at once, as the default SIGINT handling does.
    let never = sweep::Cancel::new();
    let points: Vec<SweepPoint> =
        sweep::sweep(&scenario, &rates, &seeds, threads, &never, &|done, _| {
            bar.set_position(done as u64)
        });
    bar.finish_and_clear();
    let best = sweep::best(&points);
    // Files first: they are written even if stdout is closed.
    if let Some(d) = dir {
        save_sweep(d, &scenario.name, &points, best)?;
        tracing::info!("wrote {}", d.display());
    }
    if a.json {
        let rows: Vec<_> = points
            .iter()
            .map(|p| {
                let ages_ms: Vec<f64> = p.ages.iter().map(|a| a * 1e3).collect();
                json!({"rate_hz": p.rate, "age_ms": p.age * 1e3, "ci95_ms": p.ci95 * 1e3,
                       "ages_ms": ages_ms})
            })
            .collect();
        let oracle = best.map(|b| {
            let flows: Vec<_> = b
                .result
                .flows
                .iter()
                .filter(|f| f.age.is_some())
                .map(|f| json!({"flow": f.name, "backlog": f.backlog, "source_backlog": f.source_backlog}))
                .collect();
            json!({"rate_hz": b.rate, "age_ms": b.age * 1e3, "ci95_ms": b.ci95 * 1e3, "flows": flows})
        });
        outln!(
            "{}",
            json!({"scenario": scenario.name, "seeds": seeds, "points": rows, "best": oracle})
        )?;
    } else {
        outln!(
            "{}: {} rates × {} seed(s) from {first}; age is the mean over seeds ± 95 % CI",
            scenario.name,
            rates.len(),
            seeds.len()
        )?;
        outln!("{:>12} {:>12} {:>10}", "rate_hz", "age_ms", "±ci95_ms")?;
        for p in &points {
            let mark = if best.is_some_and(|b| b.rate == p.rate) {
                "  ← best"
            } else {
                ""
            };
            outln!(
                "{:>12.3} {:>12.4} {:>10.4}{mark}",
                p.rate,
                p.age * 1e3,
                p.ci95 * 1e3
            )?;
        }
        if let Some(b) = best {
            outln!(
                "oracle: {:.3} updates/s gives age {:.4} ± {:.4} ms",
                b.rate,
                b.age * 1e3,
                b.ci95 * 1e3
            )?;
            for line in b.result.backlog_lines() {
                outln!("  backlog at seed {first}, {line}")?;
            }
        }
    }
    Ok(())
}
