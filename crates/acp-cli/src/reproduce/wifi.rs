//! `acp reproduce fig15|fig3-16|fig3-15`: the multi-source results behind a shared 802.11g
//! access point. Each metric gets a table (ours, mean ± 95 % CI over the seeds, beside the
//! papers' numbers), a chart and a CSV column; `--json` prints the rows instead (SI units).
//! Interrupted, they cover the seeds run: a cell over fewer seeds than asked is starred, one over
//! none says "not run", and Fig. 15's one-source oracle is left out once its sweep is cut short.

use std::path::Path;

use acp_sim::report::to_csv;
use acp_sim::reproduce::wifi::{self, paper, SourcesRow, Stat};
use acp_sim::sweep::Cancel;
use serde_json::json;

use super::{print_interrupted, print_json, NOT_RUN};
use crate::charts::{self, Band, Measured, Published};
use crate::output::outln;
use crate::sim::{progress_bar, threads};

/// What is measured per source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Metric {
    Age,
    Backlog,
    Rtt,
    Rate,
    Throughput,
    Jain,
}

const METRICS: [Metric; 6] = [
    Metric::Age,
    Metric::Backlog,
    Metric::Rtt,
    Metric::Rate,
    Metric::Throughput,
    Metric::Jain,
];

impl Metric {
    /// File stem and CSV column.
    fn key(self) -> &'static str {
        match self {
            Metric::Age => "age_ms",
            Metric::Backlog => "backlog",
            Metric::Rtt => "rtt_ms",
            Metric::Rate => "rate_hz",
            Metric::Throughput => "throughput_mbps",
            Metric::Jain => "jain",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::Age => "average age per source (ms)",
            Metric::Backlog => "average backlog per source (updates)",
            Metric::Rtt => "average RTT (ms)",
            Metric::Rate => "update rate λ per source (updates/s)",
            Metric::Throughput => "throughput per source (Mbit/s)",
            Metric::Jain => "Jain's fairness index of age",
        }
    }

    /// The row's value in display units.
    fn of(self, r: &SourcesRow) -> Stat {
        let (s, scale) = match self {
            Metric::Age => (r.age, 1e3),
            Metric::Backlog => (r.backlog, 1.0),
            Metric::Rtt => (r.rtt, 1e3),
            Metric::Rate => (r.rate, 1.0),
            Metric::Throughput => (r.throughput, 1e-6),
            Metric::Jain => (r.jain, 1.0),
        };
        Stat {
            mean: s.mean * scale,
            ci95: s.ci95 * scale,
        }
    }

    fn decimals(self) -> usize {
        match self {
            Metric::Rate => 1,
            Metric::Throughput | Metric::Jain => 3,
            _ => 2,
        }
    }
}

/// The published numbers of one figure: (metric, controller index) → (sources, value) in
/// display units.
type Paper = dyn Fn(Metric, usize) -> Vec<(usize, f64)>;

fn fig15_paper(m: Metric, controller: usize) -> Vec<(usize, f64)> {
    let counts = wifi::FIG15_SOURCES;
    let zip = |v: &[f64]| counts.iter().copied().zip(v.iter().copied()).collect();
    match (m, controller) {
        (Metric::Age, 0) => vec![(1, paper::FIG15_ONE_SOURCE_AGE_MS.0)],
        (Metric::Backlog, 0) => zip(&paper::FIG15_ACP_PLUS_BACKLOG),
        (Metric::Backlog, _) => counts.iter().map(|&n| (n, 1.0)).collect(),
        (Metric::Rtt, 0) => zip(&paper::FIG15_ACP_PLUS_RTT_MS),
        (Metric::Rtt, _) => zip(&paper::FIG15_LAZY_RTT_MS),
        (Metric::Throughput, 0) => vec![(1, paper::FIG15_ONE_SOURCE_MBIT)],
        (Metric::Jain, 0) => paper::FIG15_JAIN.to_vec(),
        _ => Vec::new(),
    }
}

fn fig3_16_paper(m: Metric, controller: usize) -> Vec<(usize, f64)> {
    match (m, controller) {
        (Metric::Rate, 0) => paper::FIG3_16_ACP_RATE.to_vec(),
        (Metric::Rtt, _) => vec![(1, paper::FIG3_16_LIGHT_RTT_MS)],
        _ => Vec::new(),
    }
}

/// Runs `figure` with a progress bar: its rows and its network.
fn run_figure(
    figure: wifi::SourcesFigure,
    secs: u64,
    seeds: &[u64],
    payload: u32,
    json_out: bool,
    cancel: &Cancel,
) -> (Vec<SourcesRow>, wifi::AccessNet) {
    let figure = figure.with_payload(payload);
    let bar = progress_bar(figure.runs(seeds.len()) as u64, json_out);
    let rows = figure.run(secs, seeds, threads(), cancel, &|done, _| {
        bar.set_position(done as u64)
    });
    bar.finish_and_clear();
    (rows, figure.net)
}

/// `acp reproduce fig15`.
pub fn fig15(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    payload: u32,
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let (rows, net) = run_figure(wifi::FIG15, secs, seeds, payload, json_out, cancel);
    if !cancel.is_cancelled() {
        tracing::info!("finding the best fixed rate for one source");
    }
    let oracle = wifi::one_source_oracle(&net, secs, seeds, threads(), cancel);
    let acp_one = rows
        .iter()
        .find(|r| r.sources == 1)
        .map_or(f64::NAN, |r| r.age.mean);
    let (best_rate, best_age) = oracle
        .as_ref()
        .map_or((f64::NAN, f64::NAN), |o| (o.rate, o.age));
    write_outputs(dir, "fig15", &rows, &fig15_paper)?;
    let tally = cancel.tally();
    if json_out {
        print_json(
            json!({"fig15": {"rows": rows, "one_source_oracle": {"rate_hz": best_rate, "age_ms": best_age * 1e3},
                   "setup": setup_json(&net, secs, seeds)}}),
            tally,
        )?;
        return Ok(());
    }
    print_interrupted(tally)?;
    outln!(
        "Fig. 15 (thesis Figs. 3.20–3.21): ACP+ and Lazy, {}",
        describe(&net, secs, seeds)
    )?;
    print_tables(&rows, &fig15_paper, seeds.len())?;
    let (paper_acp, paper_best) = paper::FIG15_ONE_SOURCE_AGE_MS;
    if tally.interrupted() && oracle.is_none() {
        outln!(
            "\none source: ACP+ {:.2} ms; best fixed rate not found (interrupted before its sweep was done)",
            acp_one * 1e3
        )?;
    } else {
        outln!(
            "\none source: ACP+ {:.2} ms; best fixed rate {:.0}/s gives {:.2} ms; ratio {:.3} (paper: {paper_acp} ms against {paper_best} ms, {:.3})",
            acp_one * 1e3,
            best_rate,
            best_age * 1e3,
            acp_one / best_age,
            paper_acp / paper_best
        )?;
    }
    outln!("paper: Lazy's backlog ≈ 1 per source throughout; Jain's index 0.99 at 6 sources, 0.89 at 48 (simulation)")?;
    outln!("differences from the paper are explained in docs/SIMULATOR.md (\"Multi-source reproductions\")")?;
    print_written(dir, "fig15")?;
    Ok(())
}

/// `acp reproduce fig3-16`.
pub fn fig3_16(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    payload: u32,
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let (rows, net) = run_figure(wifi::FIG3_16, secs, seeds, payload, json_out, cancel);
    write_outputs(dir, "fig3-16", &rows, &fig3_16_paper)?;
    let ratios = age_ratios(&rows);
    if json_out {
        let ratios: Vec<_> = ratios
            .iter()
            .map(|(n, r)| json!({"sources": n, "acp_over_lazy": r}))
            .collect();
        print_json(
            json!({"fig3-16": {"rows": rows, "age_ratio": ratios, "setup": setup_json(&net, secs, seeds)}}),
            cancel.tally(),
        )?;
        return Ok(());
    }
    print_interrupted(cancel.tally())?;
    outln!(
        "Fig. 3.16: ACP (κ = 0.25) and Lazy, {}",
        describe(&net, secs, seeds)
    )?;
    print_tables(&rows, &fig3_16_paper, seeds.len())?;
    outln!("\nACP's age ÷ Lazy's (mean over seeds of each):")?;
    outln!("{:>7} {:>8} {:>8}", "sources", "ours", "paper")?;
    for (n, r) in &ratios {
        let p = paper::FIG3_16_ACP_GAIN
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, g)| format!("{:.2}", 1.0 - g))
            .unwrap_or_else(|| if *n >= 5 { "≈ 1".into() } else { "-".into() });
        outln!("{n:>7} {r:>8.3} {p:>8}")?;
    }
    outln!("paper: ACP's rate ≈ 800/s with one source, ≈ 70/s with 20; Lazy as good as ACP from about 5 sources")?;
    outln!("differences from the paper are explained in docs/SIMULATOR.md (\"Multi-source reproductions\")")?;
    print_written(dir, "fig3-16")?;
    Ok(())
}

/// (sources, first controller's age ÷ second's) for every number of sources.
fn age_ratios(rows: &[SourcesRow]) -> Vec<(usize, f64)> {
    let Some(first) = rows.first().map(|r| r.controller.clone()) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| r.controller == first)
        .filter_map(|a| {
            let b = rows
                .iter()
                .find(|b| b.controller != first && b.sources == a.sources)?;
            Some((a.sources, a.age.mean / b.age.mean))
        })
        .collect()
}

fn describe(net: &wifi::AccessNet, secs: u64, seeds: &[u64]) -> String {
    format!(
        "sources behind one 802.11g AP at {} Mbit/s ({} × {} m², σ = {} dB, exponent 3), then five {} Mbit/s hops; {}-byte updates; {secs} s per run ({} s warm-up), seeds {}; mean ± 95 % CI over the seeds",
        net.wifi_mbit,
        net.side_m,
        net.side_m,
        net.shadowing_db,
        net.p2p_mbit,
        net.payload,
        secs / 10,
        seed_range(seeds)
    )
}

fn setup_json(net: &wifi::AccessNet, secs: u64, seeds: &[u64]) -> serde_json::Value {
    json!({"wifi_mbit": net.wifi_mbit, "side_m": net.side_m, "shadowing_db": net.shadowing_db,
           "p2p_mbit": net.p2p_mbit, "payload": net.payload, "secs": secs, "seeds": seeds})
}

/// `seeds` one by one, "none" if empty.
fn seed_list(seeds: &[u64]) -> String {
    if seeds.is_empty() {
        return "none".into();
    }
    let each: Vec<String> = seeds.iter().map(u64::to_string).collect();
    each.join(", ")
}

/// `seeds` as a range ("1–5"), "none" if empty.
pub(super) fn seed_range(seeds: &[u64]) -> String {
    match seeds {
        [one] => one.to_string(),
        [first, .., last] => format!("{first}–{last}"),
        [] => "none".into(),
    }
}

/// The controllers of `rows`, in order of first appearance.
fn controllers(rows: &[SourcesRow]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        if !names.contains(&r.controller) {
            names.push(r.controller.clone());
        }
    }
    names
}

/// One table per metric: a row per number of sources, per controller ours (mean ± CI) and the
/// paper's where it gives one. Our cells over fewer than `seeds` seeds (an interrupted run) are
/// starred, with a note after the tables.
fn print_tables(rows: &[SourcesRow], published: &Paper, seeds: usize) -> std::io::Result<()> {
    let names = controllers(rows);
    let mut counts: Vec<usize> = rows.iter().map(|r| r.sources).collect();
    counts.sort_unstable();
    counts.dedup();
    for m in METRICS {
        outln!("\n{}", m.label())?;
        let with_paper: Vec<bool> = (0..names.len())
            .map(|c| !published(m, c).is_empty())
            .collect();
        let mut head = format!("{:>7}", "sources");
        for (c, name) in names.iter().enumerate() {
            head += &format!(" {name:>18}");
            if with_paper[c] {
                head += &format!(" {:>7}", "paper");
            }
        }
        outln!("{head}")?;
        for &n in &counts {
            let mut line = format!("{n:>7}");
            for (c, name) in names.iter().enumerate() {
                let cell = rows
                    .iter()
                    .find(|r| &r.controller == name && r.sources == n)
                    .map_or_else(
                        || NOT_RUN.into(),
                        |r| {
                            let s = m.of(r);
                            let star = if r.seeds < seeds { "*" } else { "" };
                            format!("{:.d$} ± {:.d$}{star}", s.mean, s.ci95, d = m.decimals())
                        },
                    );
                line += &format!(" {cell:>18}");
                if with_paper[c] {
                    let p = published(m, c)
                        .into_iter()
                        .find(|(k, _)| *k == n)
                        .map_or_else(|| "-".into(), |(_, v)| format!("{v}"));
                    line += &format!(" {p:>7}");
                }
            }
            outln!("{line}")?;
        }
    }
    if rows.iter().any(|r| r.seeds < seeds) {
        outln!("* over fewer than {seeds} seeds: the runs of the others were skipped")?;
    }
    Ok(())
}

/// `NAME.csv` (a row per controller and number of sources, every metric with its CI and the
/// paper's value) and a chart per metric, `NAME_METRIC.png`/`.svg`.
fn write_outputs(
    dir: &Path,
    name: &str,
    rows: &[SourcesRow],
    published: &Paper,
) -> anyhow::Result<()> {
    let names = controllers(rows);
    let header = super::metric_header(
        &["controller", "sources", "seeds"],
        METRICS.map(Metric::key),
    );
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    std::fs::write(
        dir.join(format!("{name}.csv")),
        to_csv(
            &header,
            rows.iter().map(|r| {
                let c = names.iter().position(|n| n == &r.controller).unwrap_or(0);
                let mut row = vec![
                    r.controller.clone(),
                    r.sources.to_string(),
                    r.seeds.to_string(),
                ];
                for m in METRICS {
                    let s = m.of(r);
                    row.push(s.mean.to_string());
                    row.push(s.ci95.to_string());
                    row.push(
                        published(m, c)
                            .into_iter()
                            .find(|(k, _)| *k == r.sources)
                            .map_or_else(String::new, |(_, v)| v.to_string()),
                    );
                }
                row
            }),
        ),
    )?;
    for m in METRICS {
        let measured: Vec<Measured> = names
            .iter()
            .map(|c| Measured {
                name: c.clone(),
                points: rows
                    .iter()
                    .filter(|r| &r.controller == c)
                    .map(|r| {
                        let s = m.of(r);
                        (r.sources as f64, s.mean, s.ci95)
                    })
                    .collect(),
            })
            .collect();
        let paper: Vec<Published> = (0..names.len())
            .filter_map(|c| {
                let points: Vec<(f64, f64)> = published(m, c)
                    .into_iter()
                    .map(|(n, v)| (n as f64, v))
                    .collect();
                (!points.is_empty()).then(|| Published {
                    of: c,
                    name: format!("{} (paper)", names[c]),
                    points,
                })
            })
            .collect();
        let title = format!("{} ({name})", m.label());
        charts::versus(
            &title,
            "sources sharing the access point",
            m.label(),
            &measured,
            &paper,
            &dir.join(format!("{name}_{}", m.key())),
        )?;
    }
    Ok(())
}

fn print_written(dir: &Path, name: &str) -> std::io::Result<()> {
    let charts: Vec<String> = METRICS
        .iter()
        .map(|m| format!("{name}_{}", m.key()))
        .collect();
    outln!(
        "wrote {0}/{name}.csv and {0}/{{{1}}}.png/.svg",
        dir.display(),
        charts.join(",")
    )
}

/// `acp reproduce fig3-15`.
pub fn fig3_15(dir: &Path, seeds: &[u64], json_out: bool, cancel: &Cancel) -> anyhow::Result<()> {
    let result = wifi::fig3_15(seeds, threads(), cancel);
    let phases = &result.phases;
    let udp = |p: &wifi::Phase| {
        if p.udp.is_empty() {
            "-".to_string()
        } else {
            p.udp.join(" + ")
        }
    };
    std::fs::write(
        dir.join("fig3-15.csv"),
        to_csv(
            &[
                "from_s",
                "to_s",
                "udp_on",
                "udp_mbps",
                "age_ms",
                "age_ci95_ms",
                "fresh_hz",
                "fresh_ci95_hz",
            ],
            phases.iter().map(|p| {
                vec![
                    p.from.to_string(),
                    p.to.to_string(),
                    udp(p),
                    (p.load_bps / 1e6).to_string(),
                    (p.age.mean * 1e3).to_string(),
                    (p.age.ci95 * 1e3).to_string(),
                    p.rate.mean.to_string(),
                    p.rate.ci95.to_string(),
                ]
            }),
        ),
    )?;
    // The loaded intervals shaded, darker for more load, as in the thesis.
    let peak = phases.iter().map(|p| p.load_bps).fold(0.0, f64::max);
    let bands: Vec<Band> = phases
        .iter()
        .filter(|p| p.load_bps > 0.0)
        .map(|p| Band {
            from: p.from as f64,
            to: p.to as f64,
            label: format!("UDP {} Mbit/s", p.load_bps / 1e6),
            shade: p.load_bps / peak,
        })
        .collect();
    let series: Vec<(String, Vec<(f64, f64)>)> = result
        .traces
        .iter()
        .zip(&result.seeds)
        .take(3)
        .map(|(t, seed)| {
            let ms = t.iter().map(|&(x, a)| (x, a * 1e3)).collect();
            (format!("ACP(κ=0.25), seed {seed}"), ms)
        })
        .collect();
    charts::age_over_time(
        "ACP adapting to UDP flows switching on and off (thesis Fig. 3.15)",
        &series,
        0.0,
        &bands,
        &dir.join("fig3-15_age"),
    )?;
    let tally = cancel.tally();
    if json_out {
        let mut out = json!({"phases": phases, "seeds": seeds});
        if tally.interrupted() {
            out["seeds_run"] = json!(result.seeds);
        }
        print_json(json!({ "fig3-15": out }), tally)?;
        return Ok(());
    }
    print_interrupted(tally)?;
    if tally.interrupted() {
        outln!("seeds run: {}", seed_list(&result.seeds))?;
    }
    outln!(
        "Fig. 3.15: one ACP (κ = 0.25) source, 1024-byte updates over six 1 Mbit/s hops; Poisson UDP flows of 1024-byte packets, 0.2 Mbit/s from AP-1 and 0.3 Mbit/s from AP-2 to the monitor, on at the thesis's times; seeds {}; mean ± 95 % CI over the seeds",
        seed_range(seeds)
    )?;
    outln!(
        "{:>11}  {:<17} {:>8} {:>17} {:>20}",
        "interval s",
        "UDP on",
        "Mbit/s",
        "age (ms)",
        "fresh updates/s"
    )?;
    for p in phases {
        outln!(
            "{:>11}  {:<17} {:>8.1} {:>17} {:>20}",
            format!("{}–{}", p.from, p.to),
            udp(p),
            p.load_bps / 1e6,
            format!("{:.1} ± {:.1}", p.age.mean * 1e3, p.age.ci95 * 1e3),
            format!("{:.1} ± {:.1}", p.rate.mean, p.rate.ci95)
        )?;
    }
    outln!("paper: a plot only (ACP lowers λ while the flows are on and recovers when they stop)")?;
    outln!(
        "wrote {0}/fig3-15.csv, {0}/fig3-15_age.png, {0}/fig3-15_age.svg",
        dir.display()
    )?;
    Ok(())
}
