//! `acp source`: one source under a chosen controller, with status lines and a final summary.

use std::io::BufRead;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use acp_core::SourceConfig;
use acp_runtime::driver::{Payload, RunLimits, SourceReport, SourceSet, SourceSpec};
use anyhow::Context;
use serde_json::{json, Value};

use crate::signals;
use crate::SourceArgs;

/// A source report as JSON.
pub fn report_json(kind: &str, elapsed: f64, r: &SourceReport) -> Value {
    let s = &r.stats;
    json!({
        "type": kind,
        "t": elapsed,
        "name": r.name,
        "controller": r.controller,
        "session": format!("{:016x}", r.session),
        "phase": format!("{:?}", s.phase),
        "rate_hz": s.rate,
        "est_age_ms": s.age.map(|a| a * 1e3),
        "avg_est_age_ms": s.avg_age.map(|a| a * 1e3),
        "backlog": s.backlog,
        "avg_backlog": s.avg_backlog,
        "rtt_ms": s.rtt.map(|r| r * 1e3),
        "sent": s.sent,
        "acks": s.acks_in_sequence,
        "acks_out_of_sequence": s.acks_out_of_sequence,
        "invalid": s.invalid,
        "dropped_stale": s.dropped_stale,
        "probes_lost": s.probes_lost,
        "epochs": s.epochs,
        "outages": s.outages,
    })
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.2}", x * 1e3))
}

fn report_text(kind: &str, elapsed: f64, r: &SourceReport) -> String {
    let s = &r.stats;
    format!(
        "{kind} t={elapsed:.1}s {:?} rate={:.1}/s est_age={}ms backlog={} avg_backlog={:.2} \
         rtt={}ms sent={} acked={} out_of_seq={} outages={}",
        s.phase,
        s.rate,
        ms(s.age),
        s.backlog,
        s.avg_backlog,
        ms(s.rtt),
        s.sent,
        s.acks_in_sequence,
        s.acks_out_of_sequence,
        s.outages
    )
}

/// Runs until `--duration`, `--count`, end of stdin in push mode, or SIGINT/SIGTERM.
pub fn run(a: SourceArgs) -> anyhow::Result<()> {
    if !(a.max_rate.is_finite() && a.max_rate > 0.0) {
        anyhow::bail!("--max-rate must be a positive number");
    }
    let mut set = SourceSet::new(a.to).with_context(|| format!("cannot reach {}", a.to))?;
    set.set_dscp(a.dscp)
        .with_context(|| format!("cannot mark datagrams with DSCP {}", a.dscp))?;
    let config = SourceConfig {
        max_rate: a.max_rate,
        min_rate: SourceConfig::default().min_rate.min(a.max_rate),
        ..SourceConfig::default()
    };
    let session = set.add(SourceSpec {
        name: "source".into(),
        controller: a.controller.build(),
        config,
        payload: if a.push {
            Payload::Push
        } else {
            Payload::Synthetic(a.payload_size as usize)
        },
    });
    let stop = signals::shutdown_flag();
    if a.push {
        let feed = set.push_feed(session)?;
        let stop = stop.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if feed.offer(line.as_bytes()).is_err() {
                    break;
                }
            }
            // End of input: give the last update time to leave, then stop.
            std::thread::sleep(Duration::from_millis(500));
            stop.store(true, Ordering::Relaxed);
        });
    }
    let limits = RunLimits {
        duration: a.duration,
        count: a.count,
        stop: Some(stop),
    };
    let start = Instant::now();
    let print = |kind: &str, reports: &[SourceReport]| {
        let t = start.elapsed().as_secs_f64();
        for r in reports {
            if a.json {
                println!("{}", report_json(kind, t, r));
            } else {
                println!("{}", report_text(kind, t, r));
            }
        }
    };
    eprintln!(
        "acp source → {} controller {} session {session:016x} dscp {}",
        a.to, a.controller, a.dscp
    );
    let last = set
        .run(&limits, a.report_every, |r| print("status", r))
        .context("source failed")?;
    print("summary", &last);
    Ok(())
}
