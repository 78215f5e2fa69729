//! `acp reproduce fig2|fig4|fig7|table1|dd1|fig15|fig3-16|fig3-15|contention-tcp|controllers|core-tcp`:
//! the papers' results (and our D/D/1 finding), a table on stdout beside the papers' numbers,
//! plots and CSV on disk. The TCP results of §III are in [`tcp`], the multi-source WiFi results
//! in [`wifi`], TCP against ACP+ over a shared WiFi access (§XI-B) in [`contention`], our
//! controllers' evaluation suite in [`controllers`], §XI-A's core network (lab or simulator) in
//! [`core_tcp`].
//!
//! On SIGINT or SIGTERM the runs not yet started are skipped and the runs under way finish
//! (one [`Cancel`] handle for all the runs of a reproduction); the tables, CSV and charts then
//! cover the runs done, a first line says "interrupted: N of M runs done" (`--json`:
//! `interrupted`, `runs_done`, `runs`), and the command succeeds, as `demo` and `bench` do.

mod contention;
mod controllers;
mod core_tcp;
mod tcp;
mod wifi;

use std::path::Path;

use acp_sim::report::to_csv;
use acp_sim::reproduce::{self, ControllerRun};
use acp_sim::sweep::{Cancel, Tally};
use serde_json::json;

use crate::output::{out, outln};
use crate::signals;
use crate::sim::{progress_bar, threads};
use crate::{ReproduceArgs, Reproduction, UsageError};
use acp_sim::reproduce::harness::{Options, Reproduction as Declared};
use acp_sim::reproduce::write;

/// A table cell whose run was skipped.
const NOT_RUN: &str = "not run";

/// Runs one reproduction.
pub fn run(a: ReproduceArgs) -> anyhow::Result<()> {
    let dir = a.out.join(match a.which {
        Reproduction::Fig2 => "fig2",
        Reproduction::Fig4 => "fig4",
        Reproduction::Fig7 => "fig7",
        Reproduction::Table1 => "table1",
        Reproduction::Dd1 => "dd1",
        Reproduction::Fig15 => "fig15",
        Reproduction::Fig3_16 => "fig3-16",
        Reproduction::Fig3_15 => "fig3-15",
        Reproduction::ContentionTcp => "contention-tcp",
        Reproduction::Controllers => "controllers",
        Reproduction::CoreTcp => "core-tcp",
    });
    let count = a.seeds.unwrap_or(match a.which {
        Reproduction::Controllers => acp_sim::reproduce::controllers::DEFAULT_SEEDS,
        Reproduction::CoreTcp => 1,
        _ => 5,
    });
    let seeds: Vec<u64> = (0..count).map(|k| a.seed.saturating_add(k)).collect();
    if let Reproduction::Controllers = a.which {
        // An unknown scenario is refused before anything is written.
        controllers::check(&a)?;
    }
    crate::out_dir(&dir)?;
    let stop = signals::shutdown_flag()?;
    let cancel = Cancel::on(stop.clone());
    let c = &cancel;
    match a.which {
        Reproduction::Fig2 => tcp::fig2(&dir, a.secs.unwrap_or(300), &seeds, a.json, c),
        Reproduction::Fig4 => tcp::fig4(&dir, a.secs.unwrap_or(300), &seeds, a.json, c),
        Reproduction::Fig7 => fig7(&dir, a.updates, a.seed, a.json, c),
        Reproduction::Table1 => table1(&dir, a.secs.unwrap_or(300), a.seed, a.json, c),
        Reproduction::Dd1 => declared(&dir, &a, &acp_sim::reproduce::dd1::Dd1, c),
        Reproduction::Fig15 => {
            wifi::fig15(&dir, a.secs.unwrap_or(300), &seeds, a.payload, a.json, c)
        }
        Reproduction::Fig3_16 => {
            wifi::fig3_16(&dir, a.secs.unwrap_or(300), &seeds, a.payload, a.json, c)
        }
        Reproduction::Fig3_15 => wifi::fig3_15(&dir, &seeds, a.json, c),
        Reproduction::ContentionTcp => {
            let mut clients: Vec<usize> = a.clients.iter().map(|&n| n as usize).collect();
            clients.sort_unstable();
            clients.dedup();
            let secs = a.secs.unwrap_or(contention::DEFAULT_SECS);
            contention::run(&dir, secs, &seeds, &clients, a.json, c)
        }
        Reproduction::Controllers => controllers::run(&dir, &a, &seeds, c),
        Reproduction::CoreTcp => {
            let secs = a.secs.unwrap_or(30);
            core_tcp::run(&dir, secs, &seeds, a.sim, a.json, &stop, c)
        }
    }
}

/// A CSV header: the `first` columns, then for each metric its column (`key`), its 95 % CI
/// (`key_ci95`) and the papers' value (`paper_key`).
fn metric_header(first: &[&str], keys: impl IntoIterator<Item = &'static str>) -> Vec<String> {
    let mut header: Vec<String> = first.iter().map(|h| h.to_string()).collect();
    for key in keys {
        header.extend([key.into(), format!("{key}_ci95"), format!("paper_{key}")]);
    }
    header
}

/// Prints `result`, the `--json` output of a reproduction (an object), with `interrupted: true`,
/// `runs_done` and `runs` added if `tally` says runs were skipped.
fn print_json(mut result: serde_json::Value, tally: Tally) -> std::io::Result<()> {
    if let (true, Some(fields)) = (tally.interrupted(), result.as_object_mut()) {
        fields.insert("interrupted".into(), true.into());
        fields.insert("runs_done".into(), tally.done.into());
        fields.insert("runs".into(), tally.total().into());
    }
    outln!("{result}")
}

/// Prints the line that says an interrupted reproduction's results are partial (nothing if all
/// its runs were done).
fn print_interrupted(tally: Tally) -> std::io::Result<()> {
    if tally.interrupted() {
        outln!(
            "interrupted: {} of {} runs done; the results below cover those runs",
            tally.done,
            tally.total()
        )?;
    }
    Ok(())
}

fn fig7(
    dir: &Path,
    updates: u64,
    seed: u64,
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let points = reproduce::fig7(12, updates, seed, threads(), cancel);
    let csv = to_csv(
        &["system", "lambda", "analytic", "simulated", "error_pct"],
        points.iter().map(|p| {
            vec![
                p.system.clone(),
                p.lambda.to_string(),
                p.analytic.to_string(),
                p.simulated.to_string(),
                ((p.simulated / p.analytic - 1.0) * 100.0).to_string(),
            ]
        }),
    );
    std::fs::write(dir.join("fig7.csv"), csv)?;
    let systems: Vec<_> = reproduce::fig7_systems()
        .into_iter()
        .map(|(name, mus)| {
            // The analytic curve on a fine grid up to the slowest server's rate.
            let slowest = mus.iter().copied().fold(f64::INFINITY, f64::min);
            let analysis = (1..400)
                .map(|k| slowest * k as f64 / 400.0)
                .map(|l| (l, reproduce::chain_age(l, &mus)))
                .collect();
            let simulation = points.iter().filter(|p| p.system == name);
            let simulation = simulation.map(|p| (p.lambda, p.simulated)).collect();
            crate::charts::Fig7Series {
                name,
                analysis,
                simulation,
            }
        })
        .collect();
    crate::charts::fig7(&systems, &dir.join("fig7"))?;
    if json_out {
        let rows: Vec<_> = points
            .iter()
            .map(|p| {
                json!({"system": p.system, "rate_hz": p.lambda, "analytic_age_ms": p.analytic * 1e3,
                          "simulated_age_ms": p.simulated * 1e3})
            })
            .collect();
        print_json(json!({ "fig7": rows }), cancel.tally())?;
    } else {
        print_interrupted(cancel.tally())?;
        outln!(
            "Fig. 7a: average age against λ ({updates} simulated updates per point, seed {seed})"
        )?;
        outln!(
            "{:<16} {:>8} {:>10} {:>10} {:>8}",
            "system",
            "lambda",
            "analytic",
            "simulated",
            "error%"
        )?;
        for p in &points {
            outln!(
                "{:<16} {:>8.4} {:>10.4} {:>10.4} {:>+8.2}",
                p.system,
                p.lambda,
                p.analytic,
                p.simulated,
                (p.simulated / p.analytic - 1.0) * 100.0
            )?;
        }
        outln!(
            "wrote {0}/fig7.png, {0}/fig7.svg, {0}/fig7.csv",
            dir.display()
        )?;
    }
    Ok(())
}

fn table1(dir: &Path, secs: u64, seed: u64, json_out: bool, cancel: &Cancel) -> anyhow::Result<()> {
    let rows = reproduce::table1(secs, seed, threads(), cancel, &|done, total| {
        tracing::info!("table1: {done}/{total} networks done");
    });
    let names = controller_names(rows.first().map(|r| &r.controllers[..]));
    let mut header: Vec<String> = ["network", "oracle_rate", "oracle_age_ms"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    header.extend((1..=6).map(|h| format!("backlog_hop{h}")));
    header.extend(names.iter().map(|c| format!("{c} ratio")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let csv = to_csv(
        &header,
        rows.iter().map(|r| {
            let mut row = vec![
                r.network.clone(),
                format!("{:.3}", r.oracle_rate),
                format!("{:.4}", r.oracle_age * 1e3),
            ];
            row.extend(r.backlog.iter().map(|x| format!("{x:.4}")));
            // A skipped run's cell is empty.
            let ratio = |(_, run): &ControllerRun| run.map(|(ratio, _)| format!("{ratio:.4}"));
            row.extend(r.controllers.iter().map(|c| ratio(c).unwrap_or_default()));
            row
        }),
    );
    std::fs::write(dir.join("table1.csv"), csv)?;
    let backlog: Vec<_> = rows
        .iter()
        .map(|r| (r.network.clone(), r.backlog.clone()))
        .collect();
    crate::charts::backlog_per_hop(
        "Backlog of updates per hop at the age-optimal rate (Fig. 8)",
        &backlog,
        &dir.join("fig8_backlog"),
    )?;
    if json_out {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"network": r.network, "oracle_rate_hz": r.oracle_rate, "oracle_age_ms": r.oracle_age * 1e3,
                       "backlog": r.backlog,
                       "controllers": r.controllers.iter().filter_map(|(c, run)| run.map(|(ratio, age)| json!({"controller": c, "age_ms": age * 1e3, "ratio": ratio}))).collect::<Vec<_>>()})
            })
            .collect();
        print_json(json!({ "table1": out }), cancel.tally())?;
        return Ok(());
    }
    print_interrupted(cancel.tally())?;
    outln!("Table I networks, {secs} s per run (10 % warm-up), 0.2 Mbit/s Poisson other traffic per hop, seed {seed}")?;
    outln!("\nbacklog of updates per hop at the oracle's rate (Fig. 8):")?;
    outln!(
        "{:<6} {:>9} {:>9}  {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "net",
        "λ* (/s)",
        "age (ms)",
        "hop1",
        "hop2",
        "hop3",
        "hop4",
        "hop5",
        "hop6"
    )?;
    for r in &rows {
        let b: Vec<String> = r.backlog.iter().map(|x| format!("{x:>6.3}")).collect();
        outln!(
            "{:<6} {:>9.2} {:>9.2}  {}",
            r.network,
            r.oracle_rate,
            r.oracle_age * 1e3,
            b.join(" ")
        )?;
    }
    outln!("paper (Fig. 8): the bottleneck nodes hold ≈ 0.8–1 update at the optimal λ")?;
    outln!("\nage as a ratio to the oracle's:")?;
    let heads: Vec<String> = names.iter().map(|c| format!("{c:>12}")).collect();
    outln!("{:<6} {}", "net", heads.join(" "))?;
    for r in &rows {
        let c: Vec<String> = r
            .controllers
            .iter()
            .map(|(_, run)| match run {
                Some((ratio, _)) => format!("{ratio:>12.3}"),
                None => format!("{NOT_RUN:>12}"),
            })
            .collect();
        outln!("{:<6} {}", r.network, c.join(" "))?;
    }
    outln!(
        "wrote {0}/table1.csv, {0}/fig8_backlog.png, {0}/fig8_backlog.svg",
        dir.display()
    )?;
    Ok(())
}

/// The controllers' labels of a row of results.
fn controller_names(row: Option<&[ControllerRun]>) -> Vec<String> {
    row.map(|c| c.iter().map(|(name, _)| name.clone()).collect())
        .unwrap_or_default()
}

/// The options of `a` for the reproductions.
fn options(a: &ReproduceArgs) -> Options {
    Options {
        seed: a.seed,
        seeds: a.seeds,
        secs: a.secs,
        updates: Some(a.updates),
        payload: Some(a.payload),
        clients: a.clients.iter().map(|&n| n as usize).collect(),
        scenarios: a.scenarios.clone(),
        controllers: a.controllers.clone(),
        quick: a.quick,
        threads: threads(),
    }
}

/// Runs the reproduction `r` as its declaration says, with a progress bar, and writes its
/// CSV and charts under `dir` and its tables (or `--json`, or `--markdown`) to stdout.
fn declared(
    dir: &Path,
    a: &ReproduceArgs,
    r: &dyn Declared,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let o = options(a);
    r.check(&o).map_err(UsageError)?;
    let bar = progress_bar(0, a.json);
    let report = r
        .run(
            &o,
            cancel,
            &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            },
            None,
        )
        .map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    let name = report.name;
    std::fs::write(dir.join(format!("{name}.csv")), write::csv(&report))?;
    let mut written = vec![format!("{name}.csv")];
    for chart in &report.charts {
        crate::charts::draw(chart, &report.rows, dir)?;
        written.push(format!("{}.png/.svg", chart.stem));
    }
    if a.json {
        return Ok(outln!("{}", report.to_json())?);
    }
    if a.markdown {
        return Ok(out!("{}", write::markdown(&report))?);
    }
    out!("{}", write::text(&report))?;
    outln!("wrote {}/{{{}}}", dir.display(), written.join(", "))?;
    Ok(())
}
