//! `acp reproduce controllers`: the controllers' evaluation suite
//! (`acp_sim::reproduce::controllers`). Per scenario the oracle's rate and age ± 95 % CI and
//! each controller's age as a ratio to the oracle's, then a summary per controller (median,
//! geometric mean, worst ratio and where, how often worse than ACP+); `--json` prints the same
//! as one object. `controllers.csv` has one row per scenario and controller (with the rate and
//! Jain's fairness of the sources' ages), `ratios.png`/`.svg` the ratios per scenario.
//! `--scenarios` and `--controllers` choose a subset; an unknown scenario id is a usage error.

use std::path::Path;

use acp_core::controller::ControllerKind;
use acp_sim::report::to_csv;
use acp_sim::reproduce::controllers::{
    self, evaluate, select, suite, summarise, Length, Outcome, ScenarioResult, SuiteScenario,
    Summary, DEFAULT_CONTROLLERS,
};
use acp_sim::sweep::Cancel;
use serde_json::{json, Value};

use super::{print_interrupted, print_json, NOT_RUN};
use crate::output::outln;
use crate::sim::threads;
use crate::{ReproduceArgs, UsageError};

/// The suite's scenarios that `--scenarios` names (all if none), or a usage error naming the
/// first unknown id.
fn scenarios<'a>(
    all: &'a [SuiteScenario],
    ids: &[String],
) -> anyhow::Result<Vec<&'a SuiteScenario>> {
    if ids.is_empty() {
        return Ok(all.iter().collect());
    }
    select(all, ids).map_err(|id| {
        let known: Vec<&str> = all.iter().map(|s| s.id).collect();
        UsageError(format!(
            "--scenarios: unknown scenario {id:?} (known: {})",
            known.join(", ")
        ))
        .into()
    })
}

/// Checks `--scenarios`: a usage error naming the first unknown id.
pub fn check(a: &ReproduceArgs) -> anyhow::Result<()> {
    scenarios(&suite(Length::Quick), &a.scenarios).map(drop)
}

/// Runs the suite and writes its table, CSV and chart.
pub fn run(dir: &Path, a: &ReproduceArgs, seeds: &[u64], cancel: &Cancel) -> anyhow::Result<()> {
    let length = if a.quick { Length::Quick } else { Length::Full };
    let all = suite(length);
    let picked = scenarios(&all, &a.scenarios)?;
    let kinds: Vec<ControllerKind> = if a.controllers.is_empty() {
        DEFAULT_CONTROLLERS.to_vec()
    } else {
        a.controllers.clone()
    };
    let results = evaluate(&picked, &kinds, seeds, threads(), cancel, &|done, total| {
        tracing::info!("controllers: {done}/{total} scenarios done");
    });
    let summary = summarise(&results, &kinds);
    let labels: Vec<String> = kinds.iter().map(ToString::to_string).collect();
    std::fs::write(dir.join("controllers.csv"), csv(&results))?;
    let series: Vec<(String, Vec<f64>)> = labels
        .iter()
        .enumerate()
        .map(|(k, label)| {
            let ratios = results.iter().map(|r| ratio(r, k).unwrap_or(f64::NAN));
            (label.clone(), ratios.collect())
        })
        .collect();
    crate::charts::ratios(
        "Age relative to the best fixed rate, per scenario",
        "scenario (# in the table)",
        &series,
        &dir.join("ratios"),
    )?;
    if a.json {
        let out = json!({"controllers": {
            "seeds": seeds,
            "quick": a.quick,
            "scenarios": results.iter().map(scenario_json).collect::<Vec<_>>(),
            "summary": summary.iter().map(summary_json).collect::<Vec<_>>(),
        }});
        return Ok(print_json(out, cancel.tally())?);
    }
    print_interrupted(cancel.tally())?;
    print_table(&results, &labels, seeds, length)?;
    print_summary(&summary, results.len())?;
    outln!(
        "wrote {0}/controllers.csv, {0}/ratios.png, {0}/ratios.svg",
        dir.display()
    )?;
    Ok(())
}

/// The `k`-th controller's ratio on a scenario, if it ran.
fn ratio(r: &ScenarioResult, k: usize) -> Option<f64> {
    r.controllers.get(k)?.as_ref().map(|o| o.ratio)
}

fn ms(s: f64) -> f64 {
    s * 1e3
}

fn csv(results: &[ScenarioResult]) -> String {
    let header = [
        "id",
        "sources",
        "oracle_rate_hz",
        "oracle_age_ms",
        "oracle_ci95_ms",
        "controller",
        "age_ms",
        "ci95_ms",
        "ratio",
        "rate_hz",
        "jain",
        "seeds",
    ];
    let rows = results.iter().flat_map(|r| {
        let scenario = vec![
            r.id.clone(),
            r.sources.to_string(),
            format!("{:.3}", r.oracle.rate),
            format!("{:.4}", ms(r.oracle.age)),
            format!("{:.4}", ms(r.oracle.ci95)),
        ];
        r.controllers.iter().map(move |o| {
            let mut row = scenario.clone();
            // A controller whose runs were all skipped has empty cells.
            row.extend(
                o.as_ref()
                    .map_or_else(|| vec![String::new(); 7], outcome_cells),
            );
            row
        })
    });
    to_csv(&header, rows)
}

fn outcome_cells(o: &Outcome) -> Vec<String> {
    vec![
        o.controller.clone(),
        format!("{:.4}", ms(o.age)),
        format!("{:.4}", ms(o.ci95)),
        format!("{:.4}", o.ratio),
        format!("{:.3}", o.rate),
        o.jain.map(|j| format!("{j:.4}")).unwrap_or_default(),
        o.seeds.to_string(),
    ]
}

fn scenario_json(r: &ScenarioResult) -> Value {
    let outcomes: Vec<Value> = r
        .controllers
        .iter()
        .flatten()
        .map(|o| {
            json!({"controller": o.controller, "age_ms": ms(o.age), "ci95_ms": ms(o.ci95),
                   "ratio": o.ratio, "rate_hz": o.rate, "jain": o.jain, "seeds": o.seeds})
        })
        .collect();
    json!({"id": r.id, "about": r.about, "sources": r.sources,
           "oracle": {"rate_hz": r.oracle.rate, "age_ms": ms(r.oracle.age),
                      "ci95_ms": ms(r.oracle.ci95)},
           "controllers": outcomes})
}

fn summary_json(s: &Summary) -> Value {
    json!({"controller": s.controller, "scenarios": s.scenarios, "median": s.median,
           "geomean": s.geomean, "worst": s.worst, "worst_scenario": s.worst_id,
           "worse_than_acp_plus": s.worse_than_acp_plus})
}

/// A ratio column's width for `label`.
fn width(label: &str) -> usize {
    label.chars().count().max(7)
}

fn print_table(
    results: &[ScenarioResult],
    labels: &[String],
    seeds: &[u64],
    length: Length,
) -> std::io::Result<()> {
    outln!(
        "Controllers against the fixed-rate oracle: {} scenarios, {} seed(s) from {}{}",
        results.len(),
        seeds.len(),
        seeds.first().copied().unwrap_or_default(),
        if length == Length::Quick {
            ", quarter-length runs"
        } else {
            ""
        }
    )?;
    outln!("ratio = mean age / the oracle's (the best rate common to every source) over the same seeds")?;
    let heads: Vec<String> = labels
        .iter()
        .map(|l| format!("{l:>w$}", w = width(l)))
        .collect();
    outln!(
        "\n{:>3} {:<20} {:>3} {:>10} {:>18}  {}",
        "#",
        "scenario",
        "src",
        "λ* (/s)",
        "oracle age (ms)",
        heads.join(" ")
    )?;
    for (n, r) in results.iter().enumerate() {
        let cells: Vec<String> = labels
            .iter()
            .enumerate()
            .map(|(k, l)| match ratio(r, k) {
                Some(x) => format!("{x:>w$.3}", w = width(l)),
                None => format!("{NOT_RUN:>w$}", w = width(l)),
            })
            .collect();
        outln!(
            "{:>3} {:<20} {:>3} {:>10.1} {:>18}  {}",
            n + 1,
            r.id,
            r.sources,
            r.oracle.rate,
            format!("{:.2} ± {:.2}", ms(r.oracle.age), ms(r.oracle.ci95)),
            cells.join(" ")
        )?;
    }
    Ok(())
}

fn print_summary(summary: &[Summary], scenarios: usize) -> std::io::Result<()> {
    outln!("\nsummary over {scenarios} scenarios (age / oracle's):")?;
    outln!(
        "{:<14} {:>7} {:>8} {:>7}  {:<20} {:>12}",
        "controller",
        "median",
        "geomean",
        "worst",
        "(at)",
        "worse than acp+ by >2 %"
    )?;
    for s in summary {
        let worse = s
            .worse_than_acp_plus
            .map_or_else(|| "-".to_string(), |n| n.to_string());
        outln!(
            "{:<14} {:>7.3} {:>8.3} {:>7.3}  {:<20} {:>12}",
            s.controller,
            s.median,
            s.geomean,
            s.worst,
            s.worst_id,
            worse
        )?;
    }
    outln!(
        "(the oracle: {} rates in equal ratios up to the bottleneck's rate in updates shared by \
         the sources, then ±6 % in 1 % steps)",
        controllers::ORACLE_RATES
    )?;
    Ok(())
}
