//! `acp lab SCENARIO.toml`: a scenario on real network stacks (see `docs/LAB.md`); a table per
//! flow, or `--json` (fields in `docs/OUTPUTS.md`). SIGINT/SIGTERM end the run early with the
//! results of the time run.

use std::path::PathBuf;
use std::time::Duration;

use acp_lab::run::{FlowResult, LabResult};
use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};

use crate::{output, parse_duration, signals, UsageError};

#[derive(Debug, Args)]
pub struct LabArgs {
    /// The scenario (TOML format 2, as for `acp sim`; plus `type = "tcp"` flows).
    file: PathBuf,
    /// Run this long instead of the scenario's duration (e.g. 20s).
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

fn ms(v: Option<f64>) -> Option<f64> {
    v.map(|s| s * 1e3)
}

fn flow_json(f: &FlowResult) -> Value {
    let tcp = f.tcp.as_ref().map(|t| {
        let i = &t.info;
        json!({
            "congestion": t.congestion,
            "rtt_ms": i.rtt * 1e3,
            "min_rtt_ms": i.min_rtt * 1e3,
            "cwnd": i.cwnd,
            "mss": i.mss,
            "total_retrans": i.total_retrans,
            "bytes_acked": i.bytes_acked,
            "delivery_rate_bps": i.delivery_rate * 8,
            "snd_wnd": i.snd_wnd,
            "rwnd_limited_s": i.rwnd_limited,
            "busy_s": i.busy_time,
        })
    });
    json!({
        "name": f.name,
        "type": f.kind,
        "from": f.from,
        "to": f.to,
        "sender": f.sender,
        "avg_age_ms": ms(f.avg_age),
        "est_age_ms": ms(f.est_age),
        "rtt_ms": ms(f.rtt),
        "delivered": f.delivered,
        "throughput_bps": f.throughput_bps,
        "tcp": tcp,
    })
}

fn result_json(r: &LabResult) -> Value {
    let e = &r.emulator;
    json!({
        "scenario": r.name,
        "complete": r.complete,
        "ran_s": r.ran.as_secs_f64(),
        "window_s": r.window.as_secs_f64(),
        "hosts": r.hosts.iter().map(|(n, a)| json!({"name": n, "addr": a.to_string()})).collect::<Vec<_>>(),
        "flows": r.flows.iter().map(flow_json).collect::<Vec<_>>(),
        "emulator": {
            "read": e.read,
            "forwarded": e.forwarded,
            "bytes_forwarded": e.bytes_forwarded,
            "not_ipv4": e.not_ipv4,
            "unrouted": e.unrouted,
            "write_errors": e.write_errors,
            "links": e.links.iter().filter(|l| l.offered > 0).map(|l| json!({
                "name": l.name,
                "offered": l.offered,
                "delivered": l.delivered,
                "dropped_loss": l.dropped_loss,
                "dropped_queue": l.dropped_queue,
                "dropped_outage": l.dropped_outage,
            })).collect::<Vec<_>>(),
        },
    })
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

fn result_text(r: &LabResult) -> String {
    let mut out = format!(
        "{}: {:.1} s run, {:.1} s measured{}\n{:<14} {:<4} {:<12} {:<14} {:>10} {:>9} {:>9} {:>10} {:>7} {:>7} {:>10}\n",
        r.name,
        r.ran.as_secs_f64(),
        r.window.as_secs_f64(),
        if r.complete { "" } else { " (stopped early)" },
        "flow", "type", "path", "sender", "age ms", "rtt ms", "delivered", "Mbit/s", "cwnd", "retrans", "est age ms"
    );
    for f in &r.flows {
        let t = f.tcp.as_ref();
        out += &format!(
            "{:<14} {:<4} {:<12} {:<14} {:>10} {:>9} {:>9} {:>10.3} {:>7} {:>7} {:>10}\n",
            f.name,
            f.kind,
            format!("{}→{}", f.from, f.to),
            t.map_or(f.sender.clone(), |t| format!(
                "{}/{}",
                f.sender, t.congestion
            )),
            cell(ms(f.avg_age)),
            cell(ms(f.rtt)),
            f.delivered,
            f.throughput_bps / 1e6,
            t.map_or_else(|| "-".into(), |t| t.info.cwnd.to_string()),
            t.map_or_else(|| "-".into(), |t| t.info.total_retrans.to_string()),
            cell(ms(f.est_age)),
        );
    }
    let e = &r.emulator;
    out += &format!(
        "emulator: {} packets forwarded, {} not IPv4, {} unrouted, {} write errors\n",
        e.forwarded, e.not_ipv4, e.unrouted, e.write_errors
    );
    for l in e.links.iter().filter(|l| l.offered > 0) {
        out += &format!(
            "  link {}: {} offered, {} delivered, lost {}, queue drops {}, outage drops {}\n",
            l.name, l.offered, l.delivered, l.dropped_loss, l.dropped_queue, l.dropped_outage
        );
    }
    out
}

/// Runs the scenario and prints its results.
pub fn run(a: LabArgs) -> anyhow::Result<()> {
    let plan = acp_lab::plan::load(&a.file)
        .map_err(|e| UsageError(format!("{}: {e}", a.file.display())))?;
    acp_lab::privilege::check()?;
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    let duration = a.duration.unwrap_or(plan.duration);
    eprintln!(
        "acp lab: {}: {} hosts, {} flows, {:.1} s",
        plan.name,
        plan.hosts.len(),
        plan.flows.len(),
        duration.as_secs_f64()
    );
    let result = acp_lab::run::run(&plan, Some(duration), &stop).context("lab failed")?;
    if a.json {
        output::outln!("{}", result_json(&result))?;
    } else {
        output::out!("{}", result_text(&result))?;
    }
    Ok(())
}
