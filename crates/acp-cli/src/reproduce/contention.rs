//! `acp reproduce contention-tcp`: TCP clients against ACP+ sources sharing one WiFi access (the
//! ACP+ paper's §XI-B, thesis §4.6). A table per metric and part (low contention: a column per
//! client kind; high contention: a column per kind and access rate), ours as mean ± 95 % CI over
//! the seeds beside the papers' numbers where they give one, then the papers' claims beside
//! ours; a CSV row per point and a chart per metric (high contention: one per client kind, as
//! the thesis draws them); `--json` prints the rows instead. Interrupted, the results cover the
//! seeds run: a cell over fewer seeds than asked is starred, one over none says "not run".

use std::path::Path;

use acp_sim::report::to_csv;
use acp_sim::reproduce::contention::{self, paper, Contention, Row};
use acp_sim::reproduce::wifi::Stat;
use acp_sim::sweep::Cancel;
use serde_json::json;

use super::wifi::seed_range;
use super::{print_interrupted, print_json, NOT_RUN};
use crate::charts::{self, Measured, Published};
use crate::output::outln;
use crate::sim::{progress_bar, threads};

/// Simulated seconds per run unless `--secs` says otherwise.
pub const DEFAULT_SECS: u64 = 300;

/// What is measured per point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Metric {
    Age,
    TrueAge,
    Rtt,
    Throughput,
    Retries,
    Starved,
}

const METRICS: [Metric; 6] = [
    Metric::Age,
    Metric::TrueAge,
    Metric::Rtt,
    Metric::Throughput,
    Metric::Retries,
    Metric::Starved,
];

/// The metrics drawn (the true age, ACP+'s only, and the starved clients: table and CSV).
const CHARTED: [Metric; 4] = [
    Metric::Age,
    Metric::Rtt,
    Metric::Throughput,
    Metric::Retries,
];

impl Metric {
    /// File stem and CSV column.
    fn key(self) -> &'static str {
        match self {
            Metric::Age => "age_ms",
            Metric::TrueAge => "true_age_ms",
            Metric::Rtt => "rtt_ms",
            Metric::Throughput => "sum_throughput_mbps",
            Metric::Retries => "retries_pct",
            Metric::Starved => "starved",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::Age => "average age per client, the paper's estimate from RTT and ACKs (ms)",
            Metric::TrueAge => "average true age per client at the monitor (ms; ACP+ only)",
            Metric::Rtt => "average RTT per client (ms)",
            Metric::Throughput => "sum throughput of the clients (Mbit/s)",
            Metric::Retries => "WiFi transmissions retried (%)",
            Metric::Starved => {
                "clients starved: no ACK in the measurement window (left out of age and RTT)"
            }
        }
    }

    /// The charts' axis label (short enough for a title too).
    fn axis(self) -> &'static str {
        match self {
            Metric::Age => "age per client (ms)",
            Metric::TrueAge => "true age per client (ms)",
            Metric::Rtt => "RTT per client (ms)",
            Metric::Throughput => "sum throughput (Mbit/s)",
            Metric::Retries => "WiFi retries (%)",
            Metric::Starved => "clients starved",
        }
    }

    /// The row's value in display units (`None`: not measured for this kind).
    fn of(self, r: &Row) -> Option<Stat> {
        let (s, scale) = match self {
            Metric::Age => (r.age, 1e3),
            Metric::TrueAge => (r.true_age?, 1e3),
            Metric::Rtt => (r.rtt, 1e3),
            Metric::Throughput => (r.throughput, 1e-6),
            Metric::Retries => (r.retries, 1.0),
            Metric::Starved => (r.starved, 1.0),
        };
        Some(Stat {
            mean: s.mean * scale,
            ci95: s.ci95 * scale,
        })
    }

    fn decimals(self) -> usize {
        match self {
            Metric::Throughput => 2,
            _ => 1,
        }
    }
}

/// One curve: the points of one client kind on one access rate.
#[derive(Clone, Debug, PartialEq)]
struct Series {
    contention: Contention,
    client: String,
    wifi_mbit: f64,
}

impl Series {
    fn label(&self) -> String {
        match self.contention {
            Contention::Low => self.client.clone(),
            Contention::High => format!("{} {} Mbit/s", self.client, self.wifi_mbit),
        }
    }

    fn holds(&self, r: &Row) -> bool {
        r.contention == self.contention && r.client == self.client && r.wifi_mbit == self.wifi_mbit
    }

    /// The papers' numbers for `m` on this curve: (clients, value in display units).
    fn published(&self, m: Metric) -> Vec<(usize, f64)> {
        match (m, self.contention, self.client.as_str(), self.wifi_mbit) {
            (Metric::Age, Contention::High, "bbr", 24.0) => paper::BBR_AGE_24_MS.to_vec(),
            (Metric::Age, Contention::High, "acp+", 24.0) => paper::ACP_PLUS_AGE_24_MS.to_vec(),
            (Metric::Throughput, Contention::Low, "acp+", _) => {
                vec![(1, paper::ACP_PLUS_ONE_SOURCE_MBIT)]
            }
            _ => Vec::new(),
        }
    }
}

/// The curves of `part`, in the order their rows come.
fn series(rows: &[Row], part: Contention) -> Vec<Series> {
    let mut all: Vec<Series> = Vec::new();
    for r in rows.iter().filter(|r| r.contention == part) {
        let s = Series {
            contention: part,
            client: r.client.clone(),
            wifi_mbit: r.wifi_mbit,
        };
        if !all.contains(&s) {
            all.push(s);
        }
    }
    all
}

/// The numbers of clients of `part`'s rows, in order.
fn counts(rows: &[Row], part: Contention) -> Vec<usize> {
    let mut n: Vec<usize> = rows
        .iter()
        .filter(|r| r.contention == part)
        .map(|r| r.clients)
        .collect();
    n.sort_unstable();
    n.dedup();
    n
}

/// `acp reproduce contention-tcp`: the points with the numbers of clients in `only` (all of
/// the papers' if empty).
pub fn run(
    dir: &Path,
    secs: u64,
    seeds: &[u64],
    only: &[usize],
    json_out: bool,
    cancel: &Cancel,
) -> anyhow::Result<()> {
    let points = contention::points((!only.is_empty()).then_some(only));
    let bar = progress_bar((points.len() * seeds.len()) as u64, json_out);
    let rows = contention::run(&points, secs, seeds, threads(), cancel, &|done, _| {
        bar.set_position(done as u64)
    });
    bar.finish_and_clear();
    write_outputs(dir, &rows)?;
    let tally = cancel.tally();
    if json_out {
        print_json(
            json!({"contention-tcp": {"rows": rows, "setup": setup_json(secs, seeds),
                   "paper": paper_json()}}),
            tally,
        )?;
        return Ok(());
    }
    print_interrupted(tally)?;
    outln!(
        "§XI-B (thesis §4.6): TCP clients against ACP+ sources behind one 802.11g AP ({0} × {0} m², σ = {1} dB), \
         then five {2} Mbit/s hops of {3} ms each way (base RTT ≈ {4} ms); bulk TCP as iPerf3, {5}-byte ACP+ updates; \
         {secs} s per run ({6} s warm-up), seeds {7}; mean ± 95 % CI over the seeds",
        contention::NET.side_m,
        contention::NET.shadowing_db,
        contention::NET.p2p_mbit,
        contention::NET.hop_delay_ms,
        // Five hops, there and back.
        2.0 * 5.0 * contention::NET.hop_delay_ms,
        contention::NET.payload,
        secs / 10,
        seed_range(seeds)
    )?;
    for (part, title) in [
        (
            Contention::Low,
            format!("low contention: {} Mbit/s", contention::LOW_RATE_MBIT),
        ),
        (
            Contention::High,
            "high contention: BBR and ACP+ on 6, 12 and 24 Mbit/s".to_string(),
        ),
    ] {
        if rows.iter().any(|r| r.contention == part) {
            outln!("\n== {title} ==")?;
            print_tables(&rows, part, seeds.len())?;
        }
    }
    print_claims(&rows)?;
    outln!("differences from the papers are explained in docs/SIMULATOR.md (\"TCP against ACP+ over a shared WiFi access\")")?;
    let charts: Vec<String> = chart_stems(&rows);
    outln!(
        "wrote {0}/contention-tcp.csv and {0}/{{{1}}}.png/.svg",
        dir.display(),
        charts.join(",")
    )?;
    Ok(())
}

fn setup_json(secs: u64, seeds: &[u64]) -> serde_json::Value {
    let n = contention::NET;
    json!({"side_m": n.side_m, "shadowing_db": n.shadowing_db, "p2p_mbit": n.p2p_mbit,
           "hop_delay_ms": n.hop_delay_ms, "payload": n.payload, "secs": secs, "seeds": seeds})
}

fn paper_json() -> serde_json::Value {
    let pairs = |v: &[(usize, f64)]| -> Vec<serde_json::Value> {
        v.iter()
            .map(|(n, ms)| json!({"clients": n, "age_ms": ms}))
            .collect()
    };
    json!({"bbr_24mbit": pairs(&paper::BBR_AGE_24_MS), "acp+_24mbit": pairs(&paper::ACP_PLUS_AGE_24_MS),
           "tcp_sum_throughput_mbps": [paper::TCP_SUM_MBIT.0, paper::TCP_SUM_MBIT.1],
           "acp+_one_source_mbps": paper::ACP_PLUS_ONE_SOURCE_MBIT,
           "base_rtt_ms": [paper::BASE_RTT_MS.0, paper::BASE_RTT_MS.1]})
}

/// One table per metric of `part`: a row per number of clients, a column per curve (and its
/// paper column where the papers give numbers). Cells over fewer than `seeds` seeds are starred.
fn print_tables(rows: &[Row], part: Contention, seeds: usize) -> std::io::Result<()> {
    let curves = series(rows, part);
    for m in METRICS {
        // Curves that measure `m` at all (the true age: ACP+ only).
        let shown: Vec<&Series> = curves
            .iter()
            .filter(|s| rows.iter().any(|r| s.holds(r) && m.of(r).is_some()))
            .collect();
        if shown.is_empty() {
            continue;
        }
        outln!("\n{}", m.label())?;
        let mut head = format!("{:>7}", "clients");
        for s in &shown {
            head += &format!(" {:>19}", s.label());
            if !s.published(m).is_empty() {
                head += &format!(" {:>8}", "paper");
            }
        }
        outln!("{head}")?;
        for n in counts(rows, part) {
            let mut line = format!("{n:>7}");
            for s in &shown {
                let cell = rows
                    .iter()
                    .find(|r| s.holds(r) && r.clients == n)
                    .and_then(|r| Some((m.of(r)?, r.seeds)))
                    .map_or_else(
                        || NOT_RUN.into(),
                        |(v, k)| {
                            let star = if k < seeds { "*" } else { "" };
                            format!("{:.d$} ± {:.d$}{star}", v.mean, v.ci95, d = m.decimals())
                        },
                    );
                line += &format!(" {cell:>19}");
                let published = s.published(m);
                if !published.is_empty() {
                    let p = published
                        .iter()
                        .find(|(k, _)| *k == n)
                        .map_or_else(|| "-".into(), |(_, v)| format!("{v}"));
                    line += &format!(" {p:>8}");
                }
            }
            outln!("{line}")?;
        }
    }
    if rows.iter().any(|r| r.contention == part && r.seeds < seeds) {
        outln!("* over fewer than {seeds} seeds: the runs of the others were skipped")?;
    }
    Ok(())
}

/// The mean of `m` at one point, if it ran.
fn at(rows: &[Row], part: Contention, client: &str, wifi: f64, n: usize, m: Metric) -> Option<f64> {
    rows.iter()
        .find(|r| {
            r.contention == part && r.client == client && r.wifi_mbit == wifi && r.clients == n
        })
        .and_then(|r| m.of(r))
        .map(|s| s.mean)
}

/// The papers' claims that are not a table cell, each beside ours (those whose points ran).
fn print_claims(rows: &[Row]) -> std::io::Result<()> {
    outln!("\nthe papers' claims beside ours:")?;
    let low = contention::LOW_RATE_MBIT;
    let low_counts = counts(rows, Contention::Low);
    // ACP+'s age lowest at every low-contention count.
    let lowest = low_counts
        .iter()
        .filter(|&&n| {
            let acp = at(rows, Contention::Low, "acp+", low, n, Metric::Age);
            let best_tcp = ["cubic", "vegas", "bbr"]
                .iter()
                .filter_map(|c| at(rows, Contention::Low, c, low, n, Metric::Age))
                .fold(f64::INFINITY, f64::min);
            acp.is_some_and(|a| a < best_tcp)
        })
        .count();
    if !low_counts.is_empty() {
        outln!(
            "  low contention, ACP+ the lowest age: paper at every count (1–5); ours at {lowest} of {} counts",
            low_counts.len()
        )?;
        let sums: Vec<f64> = ["cubic", "vegas", "bbr"]
            .iter()
            .flat_map(|c| {
                low_counts
                    .iter()
                    .filter_map(move |&n| at(rows, Contention::Low, c, low, n, Metric::Throughput))
            })
            .collect();
        if !sums.is_empty() {
            let (lo, hi) = paper::TCP_SUM_MBIT;
            outln!(
                "  low contention, TCP's sum throughput: paper about {lo}–{hi} Mbit/s; ours {:.2}–{:.2} Mbit/s",
                sums.iter().copied().fold(f64::INFINITY, f64::min),
                sums.iter().copied().fold(0.0, f64::max)
            )?;
        }
        if let Some(t) = at(rows, Contention::Low, "acp+", low, 1, Metric::Throughput) {
            outln!(
                "  one ACP+ source's throughput: paper about {} Mbit/s; ours {t:.2} Mbit/s",
                paper::ACP_PLUS_ONE_SOURCE_MBIT
            )?;
        }
        if let Some(rtt) = at(rows, Contention::Low, "acp+", low, 1, Metric::Rtt) {
            let (lo, hi) = paper::BASE_RTT_MS;
            outln!("  one ACP+ source's RTT: paper's base RTT {lo}–{hi} ms; ours {rtt:.1} ms")?;
        }
    }
    for (client, published) in [
        ("bbr", paper::BBR_AGE_24_MS),
        ("acp+", paper::ACP_PLUS_AGE_24_MS),
    ] {
        let [(n1, p1), (n2, p2)] = published;
        let ours = |n| {
            at(rows, Contention::High, client, 24.0, n, Metric::Age)
                .map_or_else(|| NOT_RUN.to_string(), |v| format!("{v:.1}"))
        };
        if rows.iter().any(|r| r.contention == Contention::High) {
            outln!(
                "  24 Mbit/s, {client} age from {n1} to {n2} clients: paper {p1} → {p2} ms; ours {} → {} ms",
                ours(n1),
                ours(n2)
            )?;
        }
    }
    if let Some(most) = counts(rows, Contention::High).last() {
        let cells: Vec<String> = paper::RETRIES_PCT
            .iter()
            .map(|(client, p)| {
                let ours: Vec<String> = contention::HIGH_RATES_MBIT
                    .iter()
                    .map(|&w| {
                        at(rows, Contention::High, client, w, *most, Metric::Retries)
                            .map_or_else(|| NOT_RUN.to_string(), |v| format!("{v:.0}"))
                    })
                    .collect();
                format!("{client} paper ≈ {p} %, ours {} %", ours.join("/"))
            })
            .collect();
        outln!(
            "  WiFi retries with {most} clients (ours at 6/12/24 Mbit/s): {}",
            cells.join("; ")
        )?;
    }
    Ok(())
}

/// A file-name form of a client kind ("acp+" → "acp-plus").
fn file_name(client: &str) -> String {
    client.replace('+', "-plus")
}

/// The charts written for `rows`, as stems: low contention one per metric, high contention one
/// per client kind and metric.
fn chart_stems(rows: &[Row]) -> Vec<String> {
    let mut stems = Vec::new();
    if rows.iter().any(|r| r.contention == Contention::Low) {
        stems.extend(CHARTED.iter().map(|m| format!("low_{}", m.key())));
    }
    let mut kinds: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.contention == Contention::High) {
        if !kinds.contains(&r.client.as_str()) {
            kinds.push(&r.client);
        }
    }
    for k in kinds {
        stems.extend(
            CHARTED
                .iter()
                .map(|m| format!("high_{}_{}", file_name(k), m.key())),
        );
    }
    stems
}

/// `contention-tcp.csv` (a row per point, every metric with its CI and the papers' value) and
/// the charts of [`chart_stems`].
fn write_outputs(dir: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let header = super::metric_header(
        &["contention", "client", "wifi_mbit", "clients", "seeds"],
        METRICS.map(Metric::key),
    );
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    std::fs::write(
        dir.join("contention-tcp.csv"),
        to_csv(
            &header,
            rows.iter().map(|r| {
                let s = Series {
                    contention: r.contention,
                    client: r.client.clone(),
                    wifi_mbit: r.wifi_mbit,
                };
                let part = match r.contention {
                    Contention::Low => "low",
                    Contention::High => "high",
                };
                let mut row = vec![
                    part.to_string(),
                    r.client.clone(),
                    r.wifi_mbit.to_string(),
                    r.clients.to_string(),
                    r.seeds.to_string(),
                ];
                for m in METRICS {
                    let v = m.of(r);
                    row.push(v.map_or_else(String::new, |v| v.mean.to_string()));
                    row.push(v.map_or_else(String::new, |v| v.ci95.to_string()));
                    row.push(
                        s.published(m)
                            .into_iter()
                            .find(|(k, _)| *k == r.clients)
                            .map_or_else(String::new, |(_, v)| v.to_string()),
                    );
                }
                row
            }),
        ),
    )?;
    // Low contention: a curve per client kind. High contention: a chart per kind, a curve per
    // access rate (the thesis's Figs. 4.9–4.11 have BBR and ACP+ on separate scales).
    let mut groups: Vec<(String, String, Vec<Series>)> = Vec::new();
    let low = series(rows, Contention::Low);
    if !low.is_empty() {
        let title = format!(
            "low contention, {} Mbit/s access",
            contention::LOW_RATE_MBIT
        );
        groups.push(("low".into(), title, low));
    }
    let high = series(rows, Contention::High);
    let mut kinds: Vec<String> = Vec::new();
    for s in &high {
        if !kinds.contains(&s.client) {
            kinds.push(s.client.clone());
        }
    }
    for k in kinds {
        let of_kind: Vec<Series> = high.iter().filter(|s| s.client == k).cloned().collect();
        groups.push((
            format!("high_{}", file_name(&k)),
            format!("high contention, {k}"),
            of_kind,
        ));
    }
    for (stem, title, curves) in groups {
        for m in CHARTED {
            let measured: Vec<Measured> = curves
                .iter()
                .map(|s| Measured {
                    name: s.label(),
                    points: rows
                        .iter()
                        .filter(|r| s.holds(r))
                        .filter_map(|r| {
                            let v = m.of(r)?;
                            Some((r.clients as f64, v.mean, v.ci95))
                        })
                        .collect(),
                })
                .collect();
            let published: Vec<Published> = curves
                .iter()
                .enumerate()
                .filter_map(|(of, s)| {
                    let points: Vec<(f64, f64)> = s
                        .published(m)
                        .into_iter()
                        .map(|(n, v)| (n as f64, v))
                        .collect();
                    (!points.is_empty()).then(|| Published {
                        of,
                        name: format!("{} (paper)", s.label()),
                        points,
                    })
                })
                .collect();
            charts::versus(
                &format!("{} ({title})", m.axis()),
                "clients sharing the access point",
                m.axis(),
                &measured,
                &published,
                &dir.join(format!("{stem}_{}", m.key())),
            )?;
        }
    }
    Ok(())
}
