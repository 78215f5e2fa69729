//! `acp source --transport tcp`: fresh updates over a kernel TCP connection, written whenever the
//! socket takes one, with status lines and a summary of what the kernel reports (`TCP_INFO`) and
//! the ACP+ paper's sender-side estimate of the age. The monitor (`acp monitor`, which accepts
//! TCP on its UDP port) measures the true age.

use std::time::Duration;

use acp_runtime::driver::RunLimits;
use acp_runtime::tcp_source::{TcpInfo, TcpOptions, TcpReport, TcpSource};
use anyhow::Context;
use serde_json::{json, Value};

use crate::output::{ReportLines, Reports};
use crate::signals;
use crate::{SourceArgs, UsageError};

/// How long the connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The fields of a `TCP_INFO` reading that both `acp source --transport tcp` and `acp lab`
/// report, with the object `extra`'s own fields added.
pub fn tcp_info_json(i: &TcpInfo, extra: Value) -> Value {
    let mut fields = json!({
        "rtt_ms": i.rtt * 1e3,
        "min_rtt_ms": i.min_rtt * 1e3,
        "cwnd": i.cwnd,
        "mss": i.mss,
        "total_retrans": i.total_retrans,
        "total_rto": i.total_rto,
        "bytes_acked": i.bytes_acked,
        "delivery_rate_mbit_s": i.delivery_rate as f64 * 8.0 / 1e6,
    });
    if let (Value::Object(fields), Value::Object(extra)) = (&mut fields, extra) {
        fields.extend(extra);
    }
    fields
}

fn report_json(kind: &str, time: &str, elapsed: f64, r: &TcpReport) -> Value {
    let i = &r.info;
    tcp_info_json(
        i,
        json!({
            "type": kind,
            "time": time,
            "elapsed_s": elapsed,
            "transport": "tcp",
            "congestion": r.congestion,
            "session": format!("{:016x}", r.session),
            "sent": r.sent,
            "bytes": r.bytes,
            "rate_hz": r.rate,
            "est_avg_age_ms": r.est_avg_age.map(|a| a * 1e3),
            "rtt_var_ms": i.rtt_var * 1e3,
            "pacing_rate_mbit_s": i.pacing_rate as f64 * 8.0 / 1e6,
            "notsent_bytes": i.notsent_bytes,
            "unacked": i.unacked,
        }),
    )
}

fn report_text(kind: &str, time: &str, elapsed: f64, r: &TcpReport) -> String {
    let i = &r.info;
    let est = r
        .est_avg_age
        .map_or_else(|| "-".into(), |a| format!("{:.2}", a * 1e3));
    format!(
        "{time} {kind} t={elapsed:.1}s tcp {} sent={} rate={:.1}/s est_avg_age={est}ms \
         rtt={:.2}ms min_rtt={:.2}ms cwnd={} retrans={} delivery={:.3}Mbit/s notsent={}B",
        r.congestion,
        r.sent,
        r.rate,
        i.rtt * 1e3,
        i.min_rtt * 1e3,
        i.cwnd,
        i.total_retrans,
        i.delivery_rate as f64 * 8e-6,
        i.notsent_bytes,
    )
}

/// Options of `acp source` that mean nothing over TCP.
fn check_args(a: &SourceArgs) -> Result<(), UsageError> {
    let udp_only = [
        ("--controller", a.controller.is_some()),
        ("--push", a.push),
        ("--psk-file", a.psk_file.is_some()),
        ("--metrics", a.metrics.is_some()),
        ("--dscp", a.dscp != 0),
        ("--via", !a.via.is_empty()),
        ("--scheduler", a.scheduler.is_some()),
    ];
    match udp_only.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(UsageError(format!(
            "{flag} does not apply to --transport tcp (TCP's own congestion control sets the rate)"
        ))),
        None => Ok(()),
    }
}

/// Runs until `--duration`, `--count`, SIGINT/SIGTERM, or until stdout is closed; a connection
/// the monitor resets ends the run with the summary and an error (exit status 1).
pub fn run(a: SourceArgs) -> anyhow::Result<()> {
    check_args(&a)?;
    let options = TcpOptions {
        congestion: a.cc.clone(),
        nodelay: a.nodelay,
        notsent_lowat: a.notsent_lowat,
        send_buffer: a.send_buffer.map(|b| b as usize),
    };
    let mut source = TcpSource::connect(a.to, &options, a.payload_size as usize, CONNECT_TIMEOUT)
        .with_context(|| format!("cannot open a TCP connection to {}", a.to))?;
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    let out = Reports::new(stop.clone(), false);
    let limits = RunLimits {
        duration: a.duration,
        count: a.count,
        stop: Some(stop),
    };
    let lines = ReportLines::new(a.json, report_json, report_text);
    let text = |kind: &str, r: &TcpReport| lines.lines(kind, std::slice::from_ref(r));
    let first = source.report(Duration::ZERO);
    eprintln!(
        "acp source → {} tcp {} session {:016x}",
        a.to, first.congestion, first.session
    );
    let ended = source.run(&limits, a.report_every, |r| out.report(&text("status", r)));
    // The summary is printed however the run ended: what was sent before a reset counts too.
    let (last, failed) = match ended {
        Ok(last) => (last, None),
        Err(e) => (source.report(lines.elapsed()), Some(e)),
    };
    out.summary(&text("summary", &last));
    match failed {
        Some(e) => Err(connection_error(a.to, &e)),
        None => Ok(()),
    }
}

/// The error ending a run on a failed socket, as one line. It holds the socket's error as text
/// only: a broken pipe on the connection must not pass for a closed stdout, which `main` takes
/// for a normal end (status 0).
fn connection_error(to: std::net::SocketAddr, e: &std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    match e.kind() {
        BrokenPipe | ConnectionReset | ConnectionAborted => {
            anyhow::anyhow!("the monitor at {to} reset the connection ({e})")
        }
        _ => anyhow::anyhow!("source failed: {e}"),
    }
}
