//! `acp demo`: the controllers one after another (Seek, ACP+ and Lazy unless told otherwise),
//! each alone for `--duration` on the same loopback path — a monitor behind a relay emulating a
//! 2 Mbit/s, 20 ms bottleneck with a 50-packet queue, 100-byte updates — with a live table and a
//! final comparison, also on SIGINT or SIGTERM (then over the rounds run).
//!
//! On a terminal the live table is redrawn in place each second; when stdout is not a terminal
//! (a file, a pipe) only the final table is written there, and the start of each round is a log
//! line on stderr instead.
//!
//! Each controller gets a fresh monitor and relay, so no round inherits another's queue. With
//! `--warmup` the final age leaves out each round's start (the probes and the controller's
//! search), as the simulator's evaluation suite does, so the rounds compare steady states.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::monitor::SessionStats;
use acp_core::wire::HEADER_LEN;
use acp_core::SourceConfig;
use acp_runtime::driver::{Payload, SourceSpec};
use acp_runtime::experiment::{self, Experiment, Outcome, Tick};
use acp_runtime::relay::PathConfig;
use acp_sim::report::{self, Column};
use serde::Serialize;
use serde_json::json;

use crate::output::{out, outln};
use crate::signals;
use crate::{DemoArgs, UsageError};

/// Payload bytes per update (plus the ACP header).
const PAYLOAD: usize = 100;
/// The emulated bottleneck: bit/s, one-way propagation delay, queue in packets.
const LINK_BPS: f64 = 2e6;
const LINK_DELAY: Duration = Duration::from_millis(20);
const LINK_QUEUE: usize = 50;

/// One controller's round, live or final: the fields of the text table and of `--json` alike.
#[derive(Serialize)]
struct Row {
    controller: String,
    /// Seconds it ran.
    duration_s: f64,
    /// True time-average age at the monitor (ms).
    age_ms: Option<f64>,
    /// Its age over the lowest age of the final rounds ([`rank`]; none while live).
    age_vs_best: Option<f64>,
    rate_hz: f64,
    backlog: f64,
    rtt_ms: Option<f64>,
    /// UDP payload (ACP header and payload) delivered, Mbit/s.
    throughput_mbit_s: f64,
}

/// The table's columns, named as the JSON names the fields.
const COLUMNS: [Column; 8] = [
    Column::text("controller", 12),
    Column::num("duration_s", 10, 1),
    Column::num("age_ms", 9, 2),
    Column::num("age_vs_best", 11, 3),
    Column::num("rate_hz", 9, 1),
    Column::num("backlog", 8, 2),
    Column::num("rtt_ms", 8, 2),
    Column::num("throughput_mbit_s", 17, 4),
];

/// The rounds as a table, each line ending in a newline.
fn table(rows: &[Row]) -> String {
    report::text_table(
        &COLUMNS,
        &rows.iter().map(report::fields).collect::<Vec<_>>(),
    )
}

/// Sets each round's `age_vs_best` against the lowest age among `rows`.
fn rank(rows: &mut [Row]) {
    let best = rows.iter().filter_map(|r| r.age_ms).reduce(f64::min);
    for r in rows {
        r.age_vs_best = r.age_ms.zip(best).map(|(a, b)| a / b);
    }
}

/// Mbit/s of UDP payload (ACP header and payload) delivered over `secs`.
fn throughput_mbit_s(s: &SessionStats, secs: f64) -> f64 {
    (s.bytes + HEADER_LEN as u64 * s.delivered) as f64 * 8.0 / secs / 1e6
}

/// The round under way, as of tick `t` (rate = the controller's current λ).
fn row_live(t: &Tick<'_>) -> Option<Row> {
    let s = t.sources.first()?;
    let m = experiment::session_in(t.monitor, s.session);
    let secs = t.elapsed.as_secs_f64().max(1e-9);
    Some(Row {
        controller: s.controller.clone(),
        duration_s: secs,
        age_ms: m.and_then(|m| m.avg_age).map(|a| a * 1e3),
        age_vs_best: None,
        rate_hz: s.stats.rate,
        backlog: s.stats.avg_backlog,
        rtt_ms: s.stats.rtt.map(|r| r * 1e3),
        throughput_mbit_s: m.map_or(0.0, |m| throughput_mbit_s(&m.stats, secs)),
    })
}

/// A finished round (rate = updates delivered per second). With a warm-up, `mark` is the age
/// area and time at its end ([`experiment::session_age_area`]), and the age is the average
/// since then (none if the round ended before the warm-up did).
fn row_final(o: &Outcome, warmup: bool, mark: Option<(f64, f64)>) -> Row {
    let secs = o.ran_for.as_secs_f64().max(1e-9);
    let m = o.monitor.as_ref();
    let delivered = m.map_or(0, |m| m.stats.delivered);
    let age = if warmup {
        let end = m.and_then(experiment::session_age_area);
        mark.zip(end)
            .and_then(|(mark, end)| experiment::age_between(mark, end))
    } else {
        o.age()
    };
    Row {
        controller: o.controller.clone(),
        duration_s: secs,
        age_ms: age.map(|a| a * 1e3),
        age_vs_best: None,
        rate_hz: delivered as f64 / secs,
        backlog: o.source.avg_backlog,
        rtt_ms: o.source.rtt.map(|r| r * 1e3),
        throughput_mbit_s: m.map_or(0.0, |m| throughput_mbit_s(&m.stats, secs)),
    }
}

/// The live table: the finished rounds and the one under way, over the previous table (`drawn`
/// lines) on a terminal.
fn draw_live(done: &[Row], now: &Row, drawn: &mut usize) -> std::io::Result<()> {
    let mut text = String::new();
    if *drawn > 0 {
        text += &format!("\x1b[{drawn}A\x1b[J");
    }
    text += "(live: rate = current λ)\n";
    let shown: Vec<_> = done.iter().chain([now]).map(report::fields).collect();
    text += &report::text_table(&COLUMNS, &shown);
    *drawn = done.len() + 3;
    out!("{text}")
}

/// Runs the demo.
pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    if a.warmup >= a.duration {
        return Err(UsageError("--warmup must be shorter than --duration".into()).into());
    }
    let warmup = !a.warmup.is_zero();
    let controllers = if a.controllers.is_empty() {
        vec![
            ControllerKind::Seek,
            ControllerKind::AcpPlus,
            ControllerKind::Lazy,
        ]
    } else {
        a.controllers.clone()
    };
    let stop = signals::shutdown_flag()?;
    // The live table only on a terminal: a file or a pipe gets the final table alone.
    let live = !a.json && std::io::stdout().is_terminal();
    let names: Vec<String> = controllers.iter().map(|c| c.build().name()).collect();
    let intro = format!(
        "acp demo: monitor ← relay ({} Mbit/s, {} ms, queue {LINK_QUEUE}) ← one source of \
         {PAYLOAD}-byte updates, {} s with each of {} in turn, on loopback",
        LINK_BPS / 1e6,
        LINK_DELAY.as_millis(),
        a.duration.as_secs_f64(),
        names.join(", ")
    );
    if live {
        outln!("{intro}")?;
    } else {
        tracing::info!("{intro}");
    }
    let mut drawn = 0usize;
    let mut rows: Vec<Row> = Vec::new();
    for (round, (kind, name)) in controllers.iter().zip(&names).enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !live {
            tracing::info!(
                "demo: round {} of {}: {name} for {} s",
                round + 1,
                controllers.len(),
                a.duration.as_secs_f64()
            );
        }
        let exp = Experiment {
            relays: vec![PathConfig::lossless(LINK_BPS, LINK_DELAY, LINK_QUEUE)],
            sources: vec![SourceSpec {
                name: "s1".into(),
                controller: kind.build(),
                config: SourceConfig::default(),
                payload: Payload::Synthetic(PAYLOAD),
            }],
            duration: a.duration,
            tick: Duration::from_secs(1),
            seed: 1,
            ipv6: false,
            stop: Some(stop.clone()),
        };
        // The first failed write (stdout closed): the live table stops, the error ends the
        // command.
        let mut written = Ok(());
        let mut mark = None;
        let outcomes = experiment::run(exp, |t| {
            if warmup && mark.is_none() && t.elapsed >= a.warmup {
                mark = t.sources.first().and_then(|s| {
                    experiment::session_in(t.monitor, s.session)
                        .and_then(experiment::session_age_area)
                });
            }
            if let (true, Ok(()), Some(now)) = (live, &written, row_live(t)) {
                written = draw_live(&rows, &now, &mut drawn);
            }
        })?;
        written?;
        rows.extend(outcomes.iter().map(|o| row_final(o, warmup, mark)));
    }
    rank(&mut rows);
    if a.json {
        let path = json!({
            "warmup_s": a.warmup.as_secs_f64(),
            "rate_mbit_s": LINK_BPS / 1e6,
            "delay_ms": LINK_DELAY.as_secs_f64() * 1e3,
            "queue_packets": LINK_QUEUE,
            "payload_bytes": PAYLOAD,
        });
        outln!("{}", json!({ "path": path, "controllers": rows }))?;
    } else {
        if stop.load(Ordering::Relaxed) {
            let ran_for: f64 = rows.iter().map(|r| r.duration_s).sum();
            outln!("\ninterrupted after {ran_for:.1} s")?;
        }
        outln!(
            "\nfinal (age: true time-average age at the monitor{}; age_vs_best: age over the lowest \
             age here; rate: updates delivered/s; backlog: source's average estimate)",
            if warmup {
                format!(" after the first {} s", a.warmup.as_secs_f64())
            } else {
                String::new()
            }
        )?;
        out!("{}", table(&rows))?;
    }
    Ok(())
}
