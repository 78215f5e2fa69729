//! `acp reproduce fig2|fig4`: the ACP+ paper's §III, status updates over TCP. A table per
//! figure (ours, mean ± 95 % CI over the seeds, beside the paper's numbers where its text gives
//! them), `NAME.csv`, and charts drawn with [`charts::versus`]: age and delay against
//! utilisation (Fig. 2), age against utilisation and the congestion window over time (Fig. 4).
//! Ages above [`CHART_CAP_S`] (a saturated TCP connection's, up to minutes) stay in the table
//! and the CSV but are left out of the charts, whose axes would otherwise hide everything else.

use std::path::Path;

use acp_sim::report::to_csv;
use acp_sim::reproduce::tcp_updates::{self, paper, CwndTrace, Point};
use acp_sim::sweep::Cancel;
use serde_json::json;

use super::{print_interrupted, print_json};
use crate::charts::{self, Measured, Published};
use crate::output::outln;
use crate::sim::threads;

/// Ages and delays (s) above this are not drawn.
const CHART_CAP_S: f64 = 1.0;

/// Writes `points` as CSV.
fn write_csv(points: &[Point], path: &Path) -> anyhow::Result<()> {
    let csv = to_csv(
        &[
            "series",
            "utilisation",
            "age_ms",
            "age_ci95_ms",
            "delay_ms",
            "delay_ci95_ms",
            "delivered_utilisation",
            "timeouts",
        ],
        points.iter().map(|p| {
            vec![
                p.series.clone(),
                format!("{:.2}", p.utilisation),
                format!("{:.4}", p.age * 1e3),
                format!("{:.4}", p.age_ci * 1e3),
                format!("{:.4}", p.delay * 1e3),
                format!("{:.4}", p.delay_ci * 1e3),
                format!("{:.4}", p.delivered),
                format!("{:.1}", p.timeouts),
            ]
        }),
    );
    std::fs::write(path, csv)?;
    Ok(())
}

/// The series of `points`, in order of first appearance.
fn series_names(points: &[Point]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in points {
        if !names.contains(&p.series) {
            names.push(p.series.clone());
        }
    }
    names
}

/// One chart series per name: (utilisation, value in ms, CI in ms), values above the cap out.
fn measured(points: &[Point], value: fn(&Point) -> (f64, f64)) -> Vec<Measured> {
    series_names(points)
        .into_iter()
        .map(|name| Measured {
            points: points
                .iter()
                .filter(|p| p.series == name)
                .map(|p| (p.utilisation, value(p)))
                .filter(|(_, (v, _))| *v <= CHART_CAP_S)
                .map(|(u, (v, ci))| (u, v * 1e3, ci * 1e3))
                .collect(),
            name,
        })
        .collect()
}

/// The table: one row per utilisation, age and delay of every series.
fn print_table(points: &[Point]) -> std::io::Result<()> {
    let names = series_names(points);
    let heads: Vec<String> = names
        .iter()
        .map(|n| format!("{:>22} {:>12}", format!("{n} age (ms)"), "delay (ms)"))
        .collect();
    outln!("{:>5}  {}", "util", heads.join("  "))?;
    for u in tcp_updates::utilisations() {
        let cells: Vec<String> = names
            .iter()
            .map(|n| {
                match points
                    .iter()
                    .find(|p| &p.series == n && (p.utilisation - u).abs() < 1e-9)
                {
                    Some(p) => format!(
                        "{:>14.1} ± {:>5.1} {:>12.1}",
                        p.age * 1e3,
                        p.age_ci * 1e3,
                        p.delay * 1e3
                    ),
                    None => format!("{:>22} {:>12}", super::NOT_RUN, ""),
                }
            })
            .collect();
        outln!("{u:>5.2}  {}", cells.join("  "))?;
    }
    Ok(())
}

/// `acp reproduce fig2`.
pub fn fig2(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let points = tcp_updates::fig2(secs, seeds, threads(), cancel);
    write_csv(&points, &dir.join("fig2.csv"))?;
    let published = |of: usize, age: f64, at: f64| Published {
        of,
        name: "paper (§III text): minimum".into(),
        points: vec![(at, age * 1e3)],
    };
    charts::versus(
        "Age of 536-byte updates, 10 % loss, two 1 Mbit/s hops (Fig. 2)",
        "utilisation of the 1 Mbit/s links",
        "time-average age (ms; above 1 s not drawn)",
        &measured(&points, |p| (p.age, p.age_ci)),
        &[
            published(0, paper::FIG2_TCP_MIN_AGE_S, paper::FIG2_TCP_MIN_AT),
            published(1, paper::FIG2_UDP_MIN_AGE_S, paper::FIG2_UDP_MIN_AT),
        ],
        &dir.join("fig2_age"),
    )?;
    charts::versus(
        "Delay of 536-byte updates, 10 % loss, two 1 Mbit/s hops (Fig. 2)",
        "utilisation of the 1 Mbit/s links",
        "mean delay, generation to delivery (ms; above 1 s not drawn)",
        &measured(&points, |p| (p.delay, p.delay_ci)),
        &[],
        &dir.join("fig2_delay"),
    )?;
    let minima: Vec<_> = [
        ("TCP", paper::FIG2_TCP_MIN_AGE_S, paper::FIG2_TCP_MIN_AT),
        ("UDP", paper::FIG2_UDP_MIN_AGE_S, paper::FIG2_UDP_MIN_AT),
    ]
    .into_iter()
    .filter_map(|(s, age, at)| tcp_updates::minimum(&points, s).map(|p| (s, p, age, at)))
    .collect();
    if json_out {
        let min: Vec<_> = minima
            .iter()
            .map(|(s, p, age, at)| {
                json!({"series": s, "age_ms": p.age * 1e3, "utilisation": p.utilisation,
                       "paper_age_ms": age * 1e3, "paper_utilisation": at})
            })
            .collect();
        print_json(
            json!({"fig2": points_json(&points), "minima": min}),
            cancel.tally(),
        )?;
        return Ok(());
    }
    print_interrupted(cancel.tally())?;
    outln!(
        "Fig. 2: 536-byte updates over TCP (NewReno) and UDP, two 1 Mbit/s hops, 10 % loss; \
         {secs} s per run, {} seed(s); mean ± 95 % CI",
        seeds.len()
    )?;
    print_table(&points)?;
    outln!("\nminimum age: ours [paper]")?;
    for (s, p, age, at) in &minima {
        outln!(
            "{s}: {:.1} ms at utilisation {:.2} [{:.0} ms at ≈ {at}]",
            p.age * 1e3,
            p.utilisation,
            age * 1e3
        )?;
    }
    outln!(
        "wrote {0}/fig2.csv, {0}/fig2_age.png, {0}/fig2_age.svg, {0}/fig2_delay.png, {0}/fig2_delay.svg",
        dir.display()
    )?;
    Ok(())
}

fn points_json(points: &[Point]) -> Vec<serde_json::Value> {
    points
        .iter()
        .map(|p| {
            json!({"series": p.series, "utilisation": p.utilisation, "age_ms": p.age * 1e3,
                   "age_ci95_ms": p.age_ci * 1e3, "delay_ms": p.delay * 1e3,
                   "delay_ci95_ms": p.delay_ci * 1e3, "delivered_utilisation": p.delivered,
                   "timeouts": p.timeouts})
        })
        .collect()
}

/// `acp reproduce fig4`.
pub fn fig4(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let (points, traces) = tcp_updates::fig4(secs, seeds, threads(), cancel);
    write_csv(&points, &dir.join("fig4.csv"))?;
    charts::versus(
        "Age of 500- and 536-byte updates over TCP, no loss (Fig. 4)",
        "utilisation of the 1 Mbit/s links",
        "time-average age (ms; above 1 s not drawn)",
        &measured(&points, |p| (p.age, p.age_ci)),
        &[],
        &dir.join("fig4_age"),
    )?;
    let (u, trace_secs) = tcp_updates::FIG4_TRACE;
    let windows: Vec<Measured> = traces
        .iter()
        .map(|t: &CwndTrace| Measured {
            name: t.series.clone(),
            points: t.points.iter().map(|&(t, w)| (t, w, 0.0)).collect(),
        })
        .collect();
    charts::versus(
        &format!("Congestion window at utilisation {u} (Fig. 4)"),
        "time (s)",
        "congestion window (segments of 536 bytes)",
        &windows,
        &[],
        &dir.join("fig4_cwnd"),
    )?;
    if json_out {
        print_json(
            json!({"fig4": points_json(&points), "cwnd": traces}),
            cancel.tally(),
        )?;
        return Ok(());
    }
    print_interrupted(cancel.tally())?;
    outln!(
        "Fig. 4: 500- and 536-byte updates over TCP (NewReno, SMSS 536), two 1 Mbit/s hops, no \
         loss; {secs} s per run, {} seed(s); mean ± 95 % CI",
        seeds.len()
    )?;
    print_table(&points)?;
    outln!("\nage of 500-byte updates over 536-byte ones, at the same utilisation:")?;
    for how in ["Nagle", "nodelay"] {
        let ratios: Vec<f64> = points
            .iter()
            .filter(|p| p.series == format!("500 B, {how}"))
            .filter_map(|small| {
                points
                    .iter()
                    .find(|p| {
                        p.series == format!("536 B, {how}")
                            && (p.utilisation - small.utilisation).abs() < 1e-9
                    })
                    .map(|full| small.age / full.age)
            })
            .filter(|r| r.is_finite())
            .collect();
        let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
        outln!("{how:>8}: ×{lo:.2} to ×{hi:.2} (paper: 500-byte updates have the higher age)")?;
    }
    outln!(
        "congestion window after {trace_secs} s at utilisation {u} (segments): {}",
        traces
            .iter()
            .map(|t| format!(
                "{} {:.1}",
                t.series,
                t.points.last().map_or(f64::NAN, |p| p.1)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    outln!(
        "wrote {0}/fig4.csv, {0}/fig4_age.png, {0}/fig4_age.svg, {0}/fig4_cwnd.png, {0}/fig4_cwnd.svg",
        dir.display()
    )?;
    Ok(())
}
