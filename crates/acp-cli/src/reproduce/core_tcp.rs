//! `acp reproduce core-tcp`: the ACP+ paper's §XI-A, ACP+, Lazy and bulk TCP over a long core
//! path, one protocol at a time ([`acp_sim::reproduce::core_tcp`]). In the lab (`acp lab`, real
//! kernel TCP) when this process may create network namespaces, else — or with `--sim` — in the
//! simulator, saying why; Vegas and YeAH always from the simulator's models. A table beside the
//! paper's numbers, `core_tcp.csv` (every run), each run's scenario file under `scenarios/` and,
//! for the lab, its `acp lab --out` record under `lab/`, and two scatter charts: (delay, age)
//! and (throughput, age), the paper's Figs. 20 and 21.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use acp_sim::report::to_csv;
use acp_sim::reproduce::core_tcp::{self, paper, scenario_text, Claim, Protocol, Run, RATE_MBIT};
use acp_sim::sweep::{mean_ci95, parallel, Cancel};
use anyhow::Context;
use serde_json::json;

use super::{print_interrupted, print_json, NOT_RUN};
use crate::charts::{self, Measured, Published};
use crate::output::outln;
use crate::sim::threads;

/// Where a run ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bed {
    Lab,
    Sim,
}

impl Bed {
    fn label(self) -> &'static str {
        match self {
            Bed::Lab => "lab",
            Bed::Sim => "sim",
        }
    }
}

/// Runs `protocol` once in the lab: its scenario written under `dir/scenarios`, its record
/// under `dir/lab`.
fn lab_run(
    dir: &Path,
    protocol: Protocol,
    secs: u64,
    seed: u64,
    stop: &AtomicBool,
) -> anyhow::Result<Run> {
    let name = format!("{}-seed{seed}", protocol.label().to_lowercase());
    let file = dir.join("scenarios").join(format!("{name}.toml"));
    std::fs::write(&file, scenario_text(protocol, secs, seed))?;
    let plan = acp_lab::plan::load(&file).map_err(anyhow::Error::msg)?;
    let result = acp_lab::run::run(&plan, None, stop)
        .with_context(|| format!("lab run of {}", protocol.label()))?;
    crate::lab::write_record(&dir.join("lab").join(&name), &file, &result)?;
    let f = result.flows.first().context("the run has no flow")?;
    Ok(Run {
        protocol,
        seed,
        age: f.est_age,
        true_age: f.avg_age,
        delay: f.rtt,
        throughput_bps: f.throughput_bps,
    })
}

fn ms(v: Option<f64>) -> Option<f64> {
    v.map(|s| s * 1e3)
}

fn claim_ms(c: Option<Claim>) -> String {
    match c {
        None => "-".into(),
        Some(Claim::About(a)) => format!("{:.1}", a * 1e3),
        Some(Claim::Above(a)) => format!("> {:.0}", a * 1e3),
        Some(Claim::Between(a, b)) => format!("{:.0}–{:.0}", a * 1e3, b * 1e3),
    }
}

/// Mean ± 95 % CI of the known values, as a cell.
fn cell(values: &[Option<f64>], scale: f64) -> String {
    let xs: Vec<f64> = values.iter().flatten().map(|v| v * scale).collect();
    if xs.is_empty() {
        return "-".into();
    }
    let (m, ci) = mean_ci95(&xs);
    if xs.len() > 1 {
        format!("{m:.1} ± {ci:.1}")
    } else {
        format!("{m:.1}")
    }
}

/// `acp reproduce core-tcp`.
pub fn run(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    force_sim: bool,
    json_out: bool,
    stop: &AtomicBool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let lab = if force_sim {
        eprintln!("core-tcp: --sim: every run in the simulator");
        false
    } else if let Err(e) = acp_lab::privilege::check() {
        eprintln!("core-tcp: running in the simulator, not the lab: {e}");
        false
    } else {
        true
    };
    std::fs::create_dir_all(dir.join("scenarios"))?;
    let (in_lab, in_sim): (Vec<Protocol>, Vec<Protocol>) = Protocol::ALL
        .into_iter()
        .partition(|p| lab && !p.model_only());
    let jobs: Vec<(Protocol, u64)> = in_sim
        .iter()
        .flat_map(|&p| seeds.iter().map(move |&s| (p, s)))
        .collect();
    let mut runs: Vec<(Bed, Run)> = parallel(jobs, threads(), cancel, |(p, s)| {
        core_tcp::simulate(p, secs, s)
    })
    .into_iter()
    .flatten()
    .flatten()
    .map(|r| (Bed::Sim, r))
    .collect();
    // In the lab one run at a time (one thread), in the paper's order, for each seed in turn.
    let jobs: Vec<(Protocol, u64)> = seeds
        .iter()
        .flat_map(|&s| in_lab.iter().map(move |&p| (p, s)))
        .collect();
    for r in parallel(jobs, 1, cancel, |(p, seed)| {
        eprintln!("core-tcp: lab run {} seed {seed} ({secs} s)", p.label());
        lab_run(dir, p, secs, seed, stop)
    })
    .into_iter()
    .flatten()
    {
        runs.push((Bed::Lab, r?));
    }
    runs.sort_by_key(|(_, r)| (Protocol::ALL.iter().position(|&p| p == r.protocol), r.seed));
    for (_, r) in runs.iter().filter(|(b, _)| *b == Bed::Sim) {
        let text = scenario_text(r.protocol, secs, r.seed);
        let name = format!("{}-seed{}.toml", r.protocol.label().to_lowercase(), r.seed);
        std::fs::write(dir.join("scenarios").join(name), text)?;
    }
    write_csv(&runs, &dir.join("core_tcp.csv"))?;
    charts(&runs, dir)?;
    if json_out {
        let rows: Vec<_> = runs
            .iter()
            .map(|(bed, r)| {
                json!({"protocol": r.protocol.label(), "bed": bed.label(), "seed": r.seed,
                       "age_ms": ms(r.age), "true_age_ms": ms(r.true_age),
                       "delay_ms": ms(r.delay), "throughput_bps": r.throughput_bps})
            })
            .collect();
        let papers: Vec<_> = Protocol::ALL
            .iter()
            .map(|&p| json!({"protocol": p.label(), "paper": paper(p)}))
            .collect();
        print_json(json!({"core_tcp": rows, "paper": papers}), cancel.tally())?;
        return Ok(());
    }
    print_interrupted(cancel.tally())?;
    outln!(
        "§XI-A core network: {RATE_MBIT} Mbit/s bottleneck (the paper's path scaled, docs/LAB.md), \
         RTT {} ms, {} packet queue; {secs} s per run (first third warm-up), {} seed(s)",
        2 * core_tcp::ONE_WAY_MS,
        core_tcp::QUEUE_PACKETS,
        seeds.len()
    )?;
    outln!("age: the sender's estimate (TCP: the paper's, every ACK a fresh update as old as its RTT; ACP: its own); mean ± 95 % CI over seeds")?;
    outln!(
        "{:<10} {:<5} {:>13} {:>9} {:>14} {:>9} {:>14} {:>9}",
        "protocol",
        "bed",
        "age ms",
        "paper",
        "delay ms",
        "paper",
        "Mbit/s",
        "paper"
    )?;
    for p in Protocol::ALL {
        let mine: Vec<&(Bed, Run)> = runs.iter().filter(|(_, r)| r.protocol == p).collect();
        let bed = match mine.first() {
            Some((Bed::Sim, _)) if p.model_only() => "model",
            Some((b, _)) => b.label(),
            None => NOT_RUN,
        };
        let of = |f: fn(&Run) -> Option<f64>| mine.iter().map(|(_, r)| f(r)).collect::<Vec<_>>();
        let pp = paper(p);
        outln!(
            "{:<10} {:<5} {:>13} {:>9} {:>14} {:>9} {:>14} {:>9}",
            p.label(),
            bed,
            cell(&of(|r| r.age), 1e3),
            claim_ms(pp.age),
            cell(&of(|r| r.delay), 1e3),
            pp.delay
                .map_or_else(|| "-".into(), |d| format!("{:.1}", d * 1e3)),
            cell(&of(|r| Some(r.throughput_bps)), 1e-6),
            pp.throughput_bps
                .map_or_else(|| "-".into(), |b| format!("{}", b * 1e-6)),
        )?;
    }
    outln!(
        "the paper's throughput is of a path of 200+ Mbit/s; ours is scaled to {RATE_MBIT} Mbit/s"
    )?;
    outln!(
        "wrote {0}/core_tcp.csv, {0}/core_tcp_delay_age.png/.svg, \
         {0}/core_tcp_throughput_age.png/.svg, {0}/scenarios/{1}",
        dir.display(),
        if in_lab.is_empty() {
            ""
        } else {
            ", lab/ (each lab run's record)"
        }
    )?;
    Ok(())
}

fn write_csv(runs: &[(Bed, Run)], path: &Path) -> anyhow::Result<()> {
    let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{:.4}", v * 1e3));
    let csv = to_csv(
        &[
            "protocol",
            "bed",
            "seed",
            "age_ms",
            "true_age_ms",
            "delay_ms",
            "throughput_bps",
        ],
        runs.iter().map(|(bed, r)| {
            vec![
                r.protocol.label().to_string(),
                bed.label().to_string(),
                r.seed.to_string(),
                opt(r.age),
                opt(r.true_age),
                opt(r.delay),
                format!("{:.0}", r.throughput_bps),
            ]
        }),
    );
    std::fs::write(path, csv)?;
    Ok(())
}

/// The (delay, age) and (throughput, age) scatters: a series per protocol, a point per run;
/// the paper's (delay, age) pairs beside (its throughputs are of a faster path).
fn charts(runs: &[(Bed, Run)], dir: &Path) -> anyhow::Result<()> {
    let protocols: Vec<Protocol> = Protocol::ALL
        .into_iter()
        .filter(|p| runs.iter().any(|(_, r)| r.protocol == *p))
        .collect();
    let series = |x: fn(&Run) -> Option<f64>| -> Vec<Measured> {
        protocols
            .iter()
            .map(|&p| Measured {
                name: p.label().into(),
                points: runs
                    .iter()
                    .filter(|(_, r)| r.protocol == p)
                    .filter_map(|(_, r)| Some((x(r)?, r.age? * 1e3, 0.0)))
                    .collect(),
            })
            .collect()
    };
    let published: Vec<Published> = protocols
        .iter()
        .enumerate()
        .filter_map(|(of, &p)| {
            let pp = paper(p);
            match (pp.delay, pp.age) {
                (Some(d), Some(Claim::About(a))) => Some(Published {
                    of,
                    name: format!("paper: {}", p.label()),
                    points: vec![(d * 1e3, a * 1e3)],
                }),
                _ => None,
            }
        })
        .collect();
    charts::scatter(
        "Delay against age, one point per run (§XI-A, Fig. 20)",
        "mean RTT (ms)",
        "time-average age, the sender's estimate (ms)",
        &series(|r| r.delay.map(|d| d * 1e3)),
        &published,
        &dir.join("core_tcp_delay_age"),
    )?;
    charts::scatter(
        &format!("Throughput against age, {RATE_MBIT} Mbit/s path (§XI-A, Fig. 21)"),
        "throughput (Mbit/s)",
        "time-average age, the sender's estimate (ms)",
        &series(|r| Some(r.throughput_bps * 1e-6)),
        &[],
        &dir.join("core_tcp_throughput_age"),
    )
}
