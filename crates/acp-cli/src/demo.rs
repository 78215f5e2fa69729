//! `acp demo`: a monitor, a relay (2 Mbit/s, 20 ms, queue 50) and four sources (three ACP+, one
//! Lazy) on loopback, with a live table and a final comparison, also on SIGINT or SIGTERM (then
//! over the time run).

use std::io::IsTerminal;
use std::time::Duration;

use acp_core::monitor::SessionStats;
use acp_core::wire::HEADER_LEN;
use acp_core::{Acp, Lazy, SourceConfig};
use acp_runtime::driver::{Payload, SourceSpec};
use acp_runtime::experiment::{self, Experiment, Outcome, Tick};
use acp_runtime::relay::PathConfig;
use serde_json::json;

use crate::output::{out, outln};
use crate::signals;
use crate::{DemoArgs, UsageError};

/// Payload bytes per update (plus the ACP header).
const PAYLOAD: usize = 100;

struct Row {
    name: String,
    controller: String,
    age_ms: Option<f64>,
    rate_hz: f64,
    backlog: f64,
    rtt_ms: Option<f64>,
    throughput_kbps: f64,
}

fn header() -> String {
    format!(
        "{:<8} {:<10} {:>9} {:>9} {:>8} {:>8} {:>11}",
        "source", "controller", "age_ms", "rate_hz", "backlog", "rtt_ms", "thrpt_kbps"
    )
}

fn line(r: &Row) -> String {
    let opt = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{x:.2}"));
    format!(
        "{:<8} {:<10} {:>9} {:>9.1} {:>8.2} {:>8} {:>11.1}",
        r.name,
        r.controller,
        opt(r.age_ms),
        r.rate_hz,
        r.backlog,
        opt(r.rtt_ms),
        r.throughput_kbps
    )
}

/// Kbit/s of UDP payload (ACP header and payload) delivered over `secs`.
fn throughput_kbps(s: &SessionStats, secs: f64) -> f64 {
    (s.bytes + HEADER_LEN as u64 * s.delivered) as f64 * 8.0 / secs / 1e3
}

fn rows_live(t: &Tick<'_>) -> Vec<Row> {
    t.sources
        .iter()
        .map(|s| {
            let m = experiment::session_in(t.monitor, s.session);
            let span = t.elapsed.as_secs_f64().max(1e-9);
            Row {
                name: s.name.clone(),
                controller: s.controller.clone(),
                age_ms: m.and_then(|m| m.avg_age).map(|a| a * 1e3),
                rate_hz: s.stats.rate,
                backlog: s.stats.avg_backlog,
                rtt_ms: s.stats.rtt.map(|r| r * 1e3),
                throughput_kbps: m.map_or(0.0, |m| throughput_kbps(&m.stats, span)),
            }
        })
        .collect()
}

fn row_final(o: &Outcome, secs: f64) -> Row {
    let m = o.monitor.as_ref();
    let delivered = m.map_or(0, |m| m.stats.delivered);
    Row {
        name: o.name.clone(),
        controller: o.controller.clone(),
        age_ms: o.age().map(|a| a * 1e3),
        rate_hz: delivered as f64 / secs,
        backlog: o.source.avg_backlog,
        rtt_ms: o.source.rtt.map(|r| r * 1e3),
        throughput_kbps: m.map_or(0.0, |m| throughput_kbps(&m.stats, secs)),
    }
}

/// Prints the live table, over the previous one (`drawn` lines) on a terminal.
fn draw_live(t: &Tick<'_>, tty: bool, drawn: &mut usize) -> std::io::Result<()> {
    let rows = rows_live(t);
    let mut text = String::new();
    if tty && *drawn > 0 {
        // Redraw the live table in place.
        text += &format!("\x1b[{drawn}A\x1b[J");
    }
    text += &format!(
        "t = {:>4.1} s   (live: rate = current λ)\n{}\n",
        t.elapsed.as_secs_f64(),
        header()
    );
    for r in &rows {
        text += &line(r);
        text.push('\n');
    }
    *drawn = rows.len() + 2;
    out!("{text}")
}

/// Runs the demo.
pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    if a.duration.is_zero() {
        return Err(UsageError("--duration must be longer than zero".into()).into());
    }
    let source = |name: &str, controller: Box<dyn acp_core::Controller>| SourceSpec {
        name: name.into(),
        controller,
        config: SourceConfig::default(),
        payload: Payload::Synthetic(PAYLOAD),
    };
    let exp = Experiment {
        relays: vec![PathConfig::lossless(2e6, Duration::from_millis(20), 50)],
        sources: vec![
            source("s1", Box::new(Acp::plus())),
            source("s2", Box::new(Acp::plus())),
            source("s3", Box::new(Acp::plus())),
            source("s4", Box::new(Lazy)),
        ],
        duration: a.duration,
        tick: Duration::from_secs(1),
        seed: 1,
        ipv6: false,
        stop: Some(signals::shutdown_flag()?),
    };
    if !a.json {
        outln!(
            "acp demo: monitor ← relay (2 Mbit/s, 20 ms, queue 50) ← 3 × ACP+ and 1 × Lazy, \
             {} s on loopback",
            a.duration.as_secs_f64()
        )?;
    }
    let tty = std::io::stdout().is_terminal();
    let mut drawn = 0usize;
    // The first failed write (stdout closed): the live table stops, the error ends the command.
    let mut written = Ok(());
    let outcomes = experiment::run(exp, |t| {
        if !a.json && written.is_ok() {
            written = draw_live(t, tty, &mut drawn);
        }
    })?;
    written?;
    // Ctrl-C ends the run early: the results cover the time run.
    let ran_for = outcomes.first().map_or(a.duration, |o| o.ran_for);
    let secs = ran_for.as_secs_f64().max(1e-9);
    let rows: Vec<Row> = outcomes.iter().map(|o| row_final(o, secs)).collect();
    if a.json {
        let sources: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "controller": r.controller,
                    "age_ms": r.age_ms,
                    "rate_hz": r.rate_hz,
                    "backlog": r.backlog,
                    "rtt_ms": r.rtt_ms,
                    "throughput_kbps": r.throughput_kbps,
                })
            })
            .collect();
        outln!(
            "{}",
            json!({ "duration_s": ran_for.as_secs_f64(), "sources": sources })
        )?;
    } else {
        if ran_for < a.duration {
            outln!("\ninterrupted after {:.1} s", ran_for.as_secs_f64())?;
        }
        outln!("\nfinal (age: true time-average age at the monitor; rate: updates delivered/s; backlog: source's average estimate)")?;
        outln!("{}", header())?;
        for r in &rows {
            outln!("{}", line(r))?;
        }
    }
    Ok(())
}
