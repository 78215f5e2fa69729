//! `acp reproduce NAME`: a reproduction of the papers' results (or one of our own findings), as
//! its declaration in `acp_sim::reproduce` says: its runs, a table on stdout beside the papers'
//! numbers (or `--json`, or `--markdown` for the docs), `NAME.csv` and its charts on disk. The
//! names come from the registry ([`reproduce::registry`]); this module is the same for all of
//! them. The jobs a lab may run ([`lab`]) run in `acp lab` where this process may create network
//! namespaces, unless `--sim`.
//!
//! With `--store DIR` the runs go through the result store there (`acp_sim::store`): the runs
//! it holds are not run again, and each new one is kept as it finishes.
//!
//! On SIGINT or SIGTERM the runs not yet started are skipped and the runs under way finish
//! (one [`Cancel`] handle for all the runs of a reproduction); the tables, CSV and charts then
//! cover the runs done, a first line says "interrupted: N of M runs done" (`--json`:
//! `interrupted`, `runs_done`, `runs`), and the command succeeds, as `demo` and `bench` do.

mod lab;

use std::sync::atomic::{AtomicUsize, Ordering};

use acp_sim::reproduce::harness::{Lab, Options};
use acp_sim::reproduce::{self, write};
use acp_sim::sweep::Cancel;
use clap::builder::{PossibleValue, PossibleValuesParser};

use crate::output::{out, outln};
use crate::signals;
use crate::sim::{progress_bar, threads};
use crate::{ReproduceArgs, UsageError};

/// The names `acp reproduce` accepts, each with its one line of help.
pub fn names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        reproduce::registry()
            .into_iter()
            .map(|r| PossibleValue::new(r.name()).help(r.about())),
    )
}

/// The options of `a` for the reproductions.
fn options(a: &ReproduceArgs) -> Options {
    Options {
        seed: a.seed,
        seeds: a.seeds,
        secs: a.secs,
        updates: a.updates,
        payload: a.payload,
        clients: a.clients.iter().map(|&n| n as usize).collect(),
        scenarios: a.scenarios.clone(),
        controllers: a.controllers.clone(),
        quick: a.quick,
        random: a.random.map(|n| n as usize),
        whole_medium: a.whole_medium,
        threads: threads(),
    }
}

/// Runs one reproduction, and writes its CSV, charts and other files under `--out/NAME` and its
/// tables (or JSON, or markdown) to stdout.
pub fn run(a: ReproduceArgs) -> anyhow::Result<()> {
    let r = reproduce::find(&a.which)
        .ok_or_else(|| UsageError(format!("unknown reproduction {:?}", a.which)))?;
    let o = options(&a);
    // Options it cannot run (an unknown scenario, say) are refused before anything is written.
    r.check(&o).map_err(UsageError)?;
    let dir = a.out.join(r.name());
    crate::out_dir(&dir)?;
    let stop = signals::shutdown_flag()?;
    let cancel = Cancel::on(stop.clone());
    let bed = if !r.uses_lab(&o) {
        None
    } else if a.sim {
        eprintln!("{}: --sim: every run in the simulator", r.name());
        None
    } else if let Err(e) = acp_lab::privilege::check() {
        eprintln!("{}: running in the simulator, not the lab: {e}", r.name());
        None
    } else {
        Some(lab::LabBed::new(&dir, &stop)?)
    };
    let bar = progress_bar(0, a.json);
    // The log says each tenth of the runs done (the bar shows only on a terminal).
    let tenths = AtomicUsize::new(0);
    let report = crate::sim::with_runner(a.store.as_deref(), |runner| {
        r.run_on(
            &o,
            runner,
            &cancel,
            &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                let tenth = done * 10 / total.max(1);
                if tenths.fetch_max(tenth, Ordering::Relaxed) < tenth {
                    tracing::info!("{}: {done}/{total} runs done", r.name());
                }
            },
            bed.as_ref().map(|b| b as &dyn Lab),
        )
    })?
    .map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    let name = report.name;
    std::fs::write(dir.join(format!("{name}.csv")), write::csv(&report))?;
    let mut written = vec![format!("{name}.csv")];
    for chart in &report.charts {
        if crate::charts::draw(chart, &report.rows, &dir)? {
            written.push(format!("{}.png/.svg", chart.stem));
        }
    }
    for (path, contents) in &report.files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, contents)?;
    }
    if !report.files.is_empty() {
        written.push(format!("{} more files", report.files.len()));
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
