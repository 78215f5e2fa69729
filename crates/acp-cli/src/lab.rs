//! `acp lab SCENARIO.toml`: a scenario on real network stacks (see `docs/LAB.md`); a table per
//! flow, or `--json` (fields in `docs/OUTPUTS.md`). SIGINT/SIGTERM end the run early with the
//! results of the time run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_lab::run::{FlowResult, LabResult, TcpSample};
use acp_sim::slot_reports::{ReportedSlot, SlotSummary};
use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};

use crate::source_tcp::tcp_info_json;
use crate::{output, parse_input_file, parse_run_time, run_length, signals, UsageError};

#[derive(Debug, Args)]
pub struct LabArgs {
    /// The scenario (TOML format 2, as for `acp sim`; plus `type = "tcp"` flows).
    #[arg(value_parser = parse_input_file)]
    file: PathBuf,
    /// Run this long instead of the scenario's duration (e.g. 20s).
    #[arg(long, value_parser = parse_run_time)]
    duration: Option<Duration>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Write the record of the run here: the scenario, `flows.csv`, `result.json` and a README
    /// (kernel, command, date, emulator counters); per station of an A-MPDU downlink that
    /// reported, `aggregation_STATION.txt` in `acp monitor --aggregation-from`'s format.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The monitors at an A-MPDU downlink's stations estimate their aggregation levels from
    /// their kernel receive timestamps with this model (`acp estimator train`) instead of being
    /// handed the emulator's measurement; the results keep both (docs/AGGREGATION.md).
    #[arg(long, value_name = "FILE")]
    aggregation_model: Option<PathBuf>,
}

fn ms(v: Option<f64>) -> Option<f64> {
    v.map(|s| s * 1e3)
}

fn flow_json(f: &FlowResult) -> Value {
    let tcp = f.tcp.as_ref().map(|t| {
        let i = &t.info;
        tcp_info_json(
            i,
            json!({
                "congestion": t.congestion,
                "snd_wnd": i.snd_wnd,
                "rwnd_limited_s": i.rwnd_limited,
                "busy_s": i.busy_time,
            }),
        )
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
        "inter_ack_ms": ms(f.inter_ack),
        "segment_bytes": f.segment_bytes,
        "delivered": f.delivered,
        "throughput_mbit_s": f.throughput_bps / 1e6,
        "undecodable": f.undecodable,
        "tcp": tcp,
        "mptcp": f.mptcp.as_ref().map(|m| json!({
            "scheduler": m.scheduler,
            "coupling": "none",
            "subflows": m.subflows,
        })),
        "multipath": f.multipath,
        "estimated_aggregation": f.estimated_aggregation,
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
        "wifi": e.media.iter().map(|m| json!({
            "offered": m.offered,
            "delivered": m.delivered,
            "dropped_queue": m.dropped_queue,
            "dropped_retry": m.dropped_retry,
            "frame_timing": m.timing.map(|t| json!({
                "frames": t.frames, "late_p50_us": t.p50_us, "late_p99_us": t.p99_us,
                "late_max_us": t.max_us,
            })),
            "medium": m.counters,
        })).collect::<Vec<_>>(),
    })
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

fn result_text(r: &LabResult) -> String {
    let mut out = format!(
        "{}: {:.1} s run, {:.1} s measured{}\n{:<14} {:<7} {:<12} {:<14} {:>10} {:>9} {:>9} {:>10} {:>7} {:>7} {:>10}\n",
        r.name,
        r.ran.as_secs_f64(),
        r.window.as_secs_f64(),
        if r.complete { "" } else { " (stopped early)" },
        "flow", "type", "path", "sender", "age ms", "rtt ms", "delivered", "Mbit/s", "cwnd", "retrans", "est age ms"
    );
    for f in &r.flows {
        let t = f.tcp.as_ref();
        out += &format!(
            "{:<14} {:<7} {:<12} {:<14} {:>10} {:>9} {:>9} {:>10.3} {:>7} {:>7} {:>10}\n",
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
        if let Some(m) = &f.mptcp {
            out += &format!("mptcp {}: kernel scheduler {}\n", f.name, m.scheduler);
            for (k, s) in m.subflows.iter().enumerate() {
                out += &format!("mptcp {}\n", s.line(&f.name, k));
            }
        }
        if let Some(m) = &f.multipath {
            for line in m.lines(&f.name) {
                out += &format!("multipath {line}\n");
            }
        }
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
    for m in &e.media {
        out += &format!(
            "  wifi {}: {} frames offered, {} delivered, queue drops {}, retry-limit drops {}\n",
            m.name, m.offered, m.delivered, m.dropped_queue, m.dropped_retry
        );
        if let Some(t) = m.timing {
            out += &format!(
                "    frames handed on late by p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs\n",
                t.p50_us, t.p99_us, t.max_us
            );
        }
        for s in m.counters.iter().flat_map(|c| &c.per_station) {
            let c = &s.counts;
            out += &format!(
                "    {}: {} attempts, {} received, {} retries, {} collisions, {} errors\n",
                s.name, c.attempts, c.successes, c.retries, c.collisions, c.errors
            );
        }
        let warmup = r.ran.saturating_sub(r.window).as_secs_f64();
        for a in m.counters.iter().flat_map(|c| &c.aggregation) {
            out += &format!(
                "    {}: {} A-MPDUs of {:.1} packets on average, {:.2} Mbit/s received, MCS {} × {}\n",
                a.name, a.frames, a.mean_aggregation, a.throughput_mbit_s, a.mcs, a.spatial_streams
            );
            if let Some(s) = SlotSummary::after(&a.reports, warmup) {
                out += &format!(
                    "      {} slots reported after the warm-up: level {:.2} (SD {:.2}, {:.1}–{:.1}), delay at the AP {:.3} ms\n",
                    s.slots, s.mean_level, s.sd_level, s.min_level, s.max_level, s.delay_ms
                );
            }
        }
    }
    out
}

/// Writes the record of `result`, a run of `scenario`, into `dir`: `scenario.toml` (a copy),
/// `flows.csv` (one row per flow, ACP and TCP alike; the TCP columns empty for ACP),
/// `tcp_info_FLOW.csv` per TCP flow (its `TCP_INFO` every 10 ms),
/// `result.json` (as `--json` prints it) and `README.md` (what ran where, and the emulator's
/// counters).
pub fn write_record(dir: &Path, scenario: &Path, result: &LabResult) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::copy(scenario, dir.join("scenario.toml"))?;
    let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{:.4}", v * 1e3));
    let csv = acp_sim::report::to_csv(
        &[
            "name",
            "type",
            "from",
            "to",
            "sender",
            "avg_age_ms",
            "est_age_ms",
            "rtt_ms",
            "delivered",
            "throughput_mbit_s",
            "congestion",
            "cwnd",
            "snd_wnd",
            "total_retrans",
            "min_rtt_ms",
        ],
        result.flows.iter().map(|f| {
            let t = f.tcp.as_ref();
            let tcp =
                |v: &dyn Fn(&acp_lab::run::TcpResult) -> String| t.map_or_else(String::new, v);
            vec![
                f.name.clone(),
                f.kind.to_string(),
                f.from.clone(),
                f.to.clone(),
                f.sender.clone(),
                opt(f.avg_age),
                opt(f.est_age),
                opt(f.rtt),
                f.delivered.to_string(),
                (f.throughput_bps / 1e6).to_string(),
                tcp(&|t| t.congestion.clone()),
                tcp(&|t| t.info.cwnd.to_string()),
                tcp(&|t| t.info.snd_wnd.to_string()),
                tcp(&|t| t.info.total_retrans.to_string()),
                tcp(&|t| format!("{:.4}", t.info.min_rtt * 1e3)),
            ]
        }),
    );
    std::fs::write(dir.join("flows.csv"), csv)?;
    for f in &result.flows {
        if let Some(t) = &f.tcp {
            let file = format!("tcp_info_{}.csv", file_name(&f.name));
            std::fs::write(dir.join(file), tcp_info_csv(&t.samples))?;
        }
    }
    for a in result
        .emulator
        .media
        .iter()
        .flat_map(|m| m.counters.iter().flat_map(|c| &c.aggregation))
        .filter(|a| !a.reports.is_empty())
    {
        let file = format!("aggregation_{}.txt", file_name(&a.name));
        std::fs::write(dir.join(file), aggregation_capture(&a.name, &a.reports))?;
    }
    std::fs::write(dir.join("result.json"), result_json(result).to_string())?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let command: Vec<String> = std::env::args().collect();
    let readme = format!(
        "# acp lab record: {}\n\n- command: `{}`\n- date: {}\n- kernel: Linux {}\n- acp: {}\n\n\
         Rerun with the command above (or `acp lab scenario.toml`). `flows.csv` has a row per \
         flow, `tcp_info_FLOW.csv` a TCP flow's `TCP_INFO` every 10 ms, `result.json` the \
         whole result (docs/OUTPUTS.md, `acp lab`).\n\n```\n{}```\n",
        result.name,
        command.join(" "),
        crate::timestamp::now(),
        kernel.trim(),
        env!("CARGO_PKG_VERSION"),
        result_text(result),
    );
    std::fs::write(dir.join("README.md"), readme)?;
    Ok(())
}

/// Station `name`'s reported slots as `acp monitor --aggregation-from` reads them: one
/// `LEVEL PHY_MBPS DELAY_MS` line per slot, after a comment naming the station and slot ends.
fn aggregation_capture(name: &str, slots: &[ReportedSlot]) -> String {
    let mut out = format!(
        "# station {name}: per slot, mean packets per A-MPDU, mean PHY rate (Mbit/s), mean delay at the AP (ms)\n"
    );
    for s in slots {
        out += &format!("{:.4} {:.1} {:.4}\n", s.level, s.phy_mbps, s.delay_ms);
    }
    out
}

/// `name` with every character but letters, digits, `-` and `_` made `_`.
fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A TCP flow's `TCP_INFO` samples, one row each (columns in docs/OUTPUTS.md).
fn tcp_info_csv(samples: &[TcpSample]) -> String {
    acp_sim::report::to_csv(
        &[
            "t_s",
            "cwnd",
            "ssthresh",
            "rtt_ms",
            "rttvar_ms",
            "min_rtt_ms",
            "delivery_rate_mbit_s",
            "pacing_rate_mbit_s",
            "bytes_acked",
            "bytes_sent",
            "bytes_retrans",
            "total_retrans",
            "total_rto",
            "lost",
            "retrans",
            "notsent_bytes",
            "unacked",
            "snd_wnd",
            "mss",
            "busy_s",
            "rwnd_limited_s",
            "sndbuf_limited_s",
            "bbr_bw_mbit_s",
            "bbr_min_rtt_ms",
            "bbr_pacing_gain",
            "bbr_cwnd_gain",
        ],
        samples.iter().map(|s| {
            let i = &s.info;
            let row = vec![
                format!("{:.3}", s.at.as_secs_f64()),
                i.cwnd.to_string(),
                i.ssthresh.to_string(),
                format!("{:.3}", i.rtt * 1e3),
                format!("{:.3}", i.rtt_var * 1e3),
                format!("{:.3}", i.min_rtt * 1e3),
                (i.delivery_rate as f64 * 8.0 / 1e6).to_string(),
                (i.pacing_rate as f64 * 8.0 / 1e6).to_string(),
                i.bytes_acked.to_string(),
                i.bytes_sent.to_string(),
                i.bytes_retrans.to_string(),
                i.total_retrans.to_string(),
                i.total_rto.to_string(),
                i.lost.to_string(),
                i.retrans.to_string(),
                i.notsent_bytes.to_string(),
                i.unacked.to_string(),
                i.snd_wnd.to_string(),
                i.mss.to_string(),
                format!("{:.3}", i.busy_time),
                format!("{:.3}", i.rwnd_limited),
                format!("{:.3}", i.sndbuf_limited),
            ];
            let bbr = i.bbr.map_or_else(
                || vec![String::new(); 4],
                |b| {
                    vec![
                        (b.bw as f64 * 8.0 / 1e6).to_string(),
                        format!("{:.3}", b.min_rtt * 1e3),
                        b.pacing_gain.to_string(),
                        b.cwnd_gain.to_string(),
                    ]
                },
            );
            row.into_iter().chain(bbr).collect()
        }),
    )
}

/// Runs the scenario and prints its results.
pub fn run(a: LabArgs) -> anyhow::Result<()> {
    let mut plan = acp_lab::plan::load(&a.file)
        .map_err(|e| UsageError(format!("{}: {e}", a.file.display())))?;
    if let Some(model) = &a.aggregation_model {
        let model = acp_sim::estimator::model::ModelFile::load(model).map_err(UsageError)?;
        plan.aggregation_estimator = Some(model.boundary);
    }
    let duration = run_length(a.duration, plan.duration, plan.warmup)?;
    acp_lab::privilege::check()?;
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    eprintln!(
        "acp lab: {}: {} hosts, {} flows, {:.1} s",
        plan.name,
        plan.hosts.len(),
        plan.flows.len(),
        duration.as_secs_f64()
    );
    let result = acp_lab::run::run(&plan, Some(duration), &stop).context("lab failed")?;
    if let Some(dir) = &a.out {
        write_record(dir, &a.file, &result)?;
    }
    if a.json {
        output::outln!("{}", result_json(&result))?;
    } else {
        output::out!("{}", result_text(&result))?;
    }
    Ok(())
}
