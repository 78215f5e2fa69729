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

mod controllers;
mod core_tcp;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use acp_sim::sweep::{Cancel, Tally};

use crate::output::{out, outln};
use crate::signals;
use crate::sim::{progress_bar, threads};
use crate::{ReproduceArgs, Reproduction, UsageError};
use acp_sim::reproduce::harness::{Options, Reproduction as Declared};
use acp_sim::reproduce::{self, write};

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
        Reproduction::Fig2 => declared(&dir, &a, &reproduce::fig2::Fig2, c),
        Reproduction::Fig4 => declared(&dir, &a, &reproduce::fig4::Fig4, c),
        Reproduction::Fig7 => declared(&dir, &a, &reproduce::fig7::Fig7, c),
        Reproduction::Table1 => declared(&dir, &a, &reproduce::table1::Table1, c),
        Reproduction::Dd1 => declared(&dir, &a, &reproduce::dd1::Dd1, c),
        Reproduction::Fig15 => declared(&dir, &a, &reproduce::fig15::FIG15, c),
        Reproduction::Fig3_16 => declared(&dir, &a, &reproduce::fig3_16::FIG3_16, c),
        Reproduction::Fig3_15 => declared(&dir, &a, &reproduce::fig3_15::Fig3_15, c),
        Reproduction::ContentionTcp => declared(&dir, &a, &reproduce::contention::ContentionTcp, c),
        Reproduction::Controllers => controllers::run(&dir, &a, &seeds, c),
        Reproduction::CoreTcp => {
            let secs = a.secs.unwrap_or(30);
            core_tcp::run(&dir, secs, &seeds, a.sim, a.json, &stop, c)
        }
    }
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
    // The log says each tenth of the runs done (the bar shows only on a terminal).
    let tenths = AtomicUsize::new(0);
    let report = r
        .run(
            &o,
            cancel,
            &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                let tenth = done * 10 / total.max(1);
                if tenths.fetch_max(tenth, Ordering::Relaxed) < tenth {
                    tracing::info!("{}: {done}/{total} runs done", r.name());
                }
            },
            None,
        )
        .map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    let name = report.name;
    std::fs::write(dir.join(format!("{name}.csv")), write::csv(&report))?;
    let mut written = vec![format!("{name}.csv")];
    for chart in &report.charts {
        if crate::charts::draw(chart, &report.rows, dir)? {
            written.push(format!("{}.png/.svg", chart.stem));
        }
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
