//! `acp source`: one source under a chosen controller, with status lines and a final summary,
//! and with `--metrics` a Prometheus endpoint fed by the driver's reports ([`crate::metrics`]).

use std::io::BufRead;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::multipath::{PathRule, MAX_PATHS};
use acp_core::wire::{COOKIE_LEN, MAX_IPV4_PAYLOAD, TAG_LEN};
use acp_core::SourceConfig;
use acp_runtime::driver::{Payload, PushFeed, RunLimits, SourceReport, SourceSet, SourceSpec};
use acp_runtime::rows::SourceRow;
use anyhow::Context;
use serde_json::{json, Value};

use crate::metrics::{self, source::SourceFamilies, Latest};
use crate::output::{ReportLines, Reports};
use crate::signals;
use crate::{source_tcp, SourceArgs, Transport, UsageError, Via};

/// A source report as JSON, at wall-clock `time`, `elapsed` seconds after the start: `type`,
/// `time`, `elapsed_s` and its [`SourceRow`].
pub fn report_json(kind: &str, time: &str, elapsed: f64, r: &SourceReport) -> Value {
    let mut v = json!({"type": kind, "time": time, "elapsed_s": elapsed});
    if let (Value::Object(v), Value::Object(row)) = (&mut v, json!(SourceRow::from(r))) {
        v.extend(row);
    }
    v
}

/// The fields of a status line's text, after `TIME KIND`: those of the JSON but the name,
/// controller and session (printed once at the start), as `field=value`.
const TEXT_FIELDS: [&str; 19] = [
    "elapsed_s",
    "phase",
    "rate_hz",
    "est_age_ms",
    "avg_est_age_ms",
    "backlog",
    "avg_backlog",
    "rtt_ms",
    "sent",
    "acks",
    "acks_out_of_sequence",
    "acks_stale",
    "invalid",
    "acks_mismatched",
    "auth_failed",
    "cookies",
    "dropped_stale",
    "probes_lost",
    "outages",
];

/// A source report as a text line: `TIME KIND field=value…` under the JSON's names and units
/// (numbers with two decimals, null as `-`).
fn report_text(kind: &str, time: &str, elapsed: f64, r: &SourceReport) -> String {
    let v = report_json(kind, time, elapsed, r);
    let cell = |x: &Value| match x {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => format!("{:.2}", n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    };
    let pairs: Vec<String> = TEXT_FIELDS
        .iter()
        .map(|f| format!("{f}={}", cell(&v[*f])))
        .collect();
    let mut text = format!("{time} {kind} {}", pairs.join(" "));
    // A multipath source: one more line per path, `TIME KIND path field=value…`.
    for path in v["paths"].as_array().into_iter().flatten() {
        let pairs: Vec<String> = path
            .as_object()
            .into_iter()
            .flatten()
            .map(|(f, x)| format!("{f}={}", cell(x)))
            .collect();
        text.push_str(&format!("\n{time} {kind} path {}", pairs.join(" ")));
    }
    text
}

/// The longest line `--push` sends: the largest payload of an update over IPv4.
const MAX_LINE: usize = MAX_IPV4_PAYLOAD;

/// One line of push input, without its line ending.
#[derive(Debug, PartialEq)]
enum Line {
    /// At most [`MAX_LINE`] bytes.
    Update(Vec<u8>),
    /// Longer: its length in bytes (none of it is kept).
    TooLong(usize),
}

/// Reads the next line of `input`, holding at most [`MAX_LINE`] bytes of it in memory; `None` at
/// the end of input. Any bytes are accepted (the monitor prints non-UTF-8 payloads in hex).
fn next_line(input: &mut impl BufRead) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut len = 0usize;
    let mut ends_in_cr = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            // The end of input: after a last line without "\n", or at the start of a line.
            if len == 0 {
                return Ok(None);
            }
            break;
        }
        let end = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..end.unwrap_or(chunk.len())];
        // One byte over the limit is kept: the "\r" of a "\r\n".
        if len + part.len() <= MAX_LINE + 1 {
            line.extend_from_slice(part);
        }
        len += part.len();
        if let Some(&b) = part.last() {
            ends_in_cr = b == b'\r';
        }
        let taken = part.len();
        input.consume(taken + usize::from(end.is_some()));
        if end.is_some() {
            break;
        }
    }
    if ends_in_cr {
        len -= 1;
        line.truncate(len);
    }
    Ok(Some(if len <= MAX_LINE {
        Line::Update(line)
    } else {
        Line::TooLong(len)
    }))
}

/// Offers every line of stdin to `feed`, reporting (and skipping) lines too long for an update,
/// until the end of input or until the source has stopped.
fn feed_stdin(feed: &PushFeed) {
    let mut input = std::io::stdin().lock();
    let mut number = 0u64;
    loop {
        number += 1;
        match next_line(&mut input) {
            Ok(Some(Line::Update(update))) => {
                if feed.offer(&update).is_err() {
                    return;
                }
            }
            Ok(Some(Line::TooLong(len))) => tracing::warn!(
                "stdin line {number} has {len} bytes, more than an update carries ({MAX_LINE}); \
                 skipped"
            ),
            Ok(None) => return,
            Err(e) => {
                tracing::error!("cannot read stdin: {e}");
                return;
            }
        }
    }
}

/// The first hop of each `--via` path, in order.
fn paths(a: &SourceArgs) -> Vec<SocketAddr> {
    a.via
        .iter()
        .map(|v| match v {
            Via::Direct => a.to,
            Via::Hop(hop) => *hop,
        })
        .collect()
}

/// The multipath scheduler asked for, or the default.
fn scheduler(a: &SourceArgs) -> PathRule {
    a.scheduler.unwrap_or(PathRule::QAware)
}

/// The controller asked for, or the default.
fn controller(a: &SourceArgs) -> ControllerKind {
    a.controller.unwrap_or(ControllerKind::Seek)
}

/// Refuses a fixed rate above `--max-rate`, which the source would clamp silently, and the
/// options of TCP without `--transport tcp`.
fn check_args(a: &SourceArgs) -> Result<(), UsageError> {
    let tcp_only = [
        ("--cc", a.cc.is_some()),
        ("--nodelay", a.nodelay),
        ("--notsent-lowat", a.notsent_lowat.is_some()),
        ("--send-buffer", a.send_buffer.is_some()),
    ];
    if let Some((flag, _)) = tcp_only.iter().find(|(_, given)| *given) {
        return Err(UsageError(format!("{flag} needs --transport tcp")));
    }
    if a.via.len() > MAX_PATHS {
        return Err(UsageError(format!(
            "--via names {} paths, at most {MAX_PATHS} are supported",
            a.via.len()
        )));
    }
    let sealed_max = MAX_IPV4_PAYLOAD - TAG_LEN - COOKIE_LEN;
    if a.psk_file.is_some() && a.payload_size > sealed_max as u64 {
        return Err(UsageError(format!(
            "--payload-size {} does not fit a sealed update over IPv4 (at most {sealed_max} with --psk-file)",
            a.payload_size
        )));
    }
    match controller(a) {
        ControllerKind::Fixed(rate) if rate > a.max_rate => Err(UsageError(format!(
            "--controller fixed:{rate} is above --max-rate {}",
            a.max_rate
        ))),
        _ => Ok(()),
    }
}

/// How often the driver publishes its report for `--metrics` (and how old a scrape may be).
const METRICS_REFRESH: Duration = Duration::from_millis(200);

/// Serves `--metrics` on `addr`: every scrape reads the report the driver last published.
fn serve_metrics(
    addr: SocketAddr,
    target: SocketAddr,
    published: Arc<Latest<SourceReport>>,
) -> anyhow::Result<metrics::Endpoint> {
    let scrape = move || -> Box<dyn prometheus_client::collector::Collector> {
        Box::new(SourceFamilies {
            target,
            report: published.get(),
        })
    };
    metrics::Endpoint::start(addr, metrics::source::PREFIX, Box::new(scrape))
}

/// Runs until `--duration`, `--count`, end of stdin in push mode, SIGINT/SIGTERM, or until stdout
/// is closed.
pub fn run(a: SourceArgs) -> anyhow::Result<()> {
    if a.transport == Transport::Tcp {
        return source_tcp::run(a);
    }
    check_args(&a)?;
    // Bound first, so that a bad address is refused before the source starts.
    let published = a.metrics.map(|_| Arc::new(Latest::default()));
    let metrics = a
        .metrics
        .zip(published.clone())
        .map(|(addr, published)| serve_metrics(addr, a.to, published))
        .transpose()?;
    let paths = paths(&a);
    let mut set = if a.via.is_empty() {
        SourceSet::new(a.to)
    } else {
        SourceSet::multipath(&paths, scheduler(&a))
    }
    .with_context(|| format!("cannot reach {}", a.to))?;
    set.set_dscp(a.dscp)
        .with_context(|| format!("cannot mark datagrams with DSCP {}", a.dscp))?;
    let config = SourceConfig {
        max_rate: a.max_rate,
        psk: a.psk_file.as_ref().map(|ring| ring.first().clone()),
        ..SourceConfig::default()
    };
    let session = set.add(SourceSpec {
        name: "source".into(),
        controller: controller(&a).build(),
        config,
        payload: if a.push {
            Payload::Push
        } else {
            Payload::Synthetic(a.payload_size as usize)
        },
    });
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    if a.push {
        let feed = set.push_feed(session)?;
        let stop = stop.clone();
        std::thread::spawn(move || {
            feed_stdin(&feed);
            // End of input: give the last update time to leave, then stop.
            std::thread::sleep(Duration::from_millis(500));
            stop.store(true, Ordering::Relaxed);
        });
    }
    let out = Reports::new(stop.clone(), false);
    let limits = RunLimits {
        duration: a.duration,
        count: a.count,
        stop: Some(stop),
    };
    let lines = ReportLines::new(a.json, report_json, report_text);
    let text = |kind: &str, reports: &[SourceReport]| lines.lines(kind, reports);
    eprintln!(
        "acp source → {} controller {} session {session:016x} dscp {}",
        a.to,
        controller(&a),
        a.dscp
    );
    if !a.via.is_empty() {
        let hops: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        eprintln!(
            "acp source multipath: scheduler {} via {}",
            scheduler(&a),
            hops.join(", ")
        );
    }
    // With --metrics the driver reports at least every METRICS_REFRESH, for the endpoint; status
    // lines still follow --report-every.
    let publish = |reports: &[SourceReport]| {
        if let (Some(published), Some(report)) = (&published, reports.first()) {
            published.publish(report.clone());
        }
    };
    // Something to scrape before the endpoint is announced.
    publish(&set.reports());
    if let Some(m) = &metrics {
        eprintln!("acp source metrics on http://{}/metrics", m.local_addr());
    }
    let tick_every = match metrics {
        Some(_) => a.report_every.min(METRICS_REFRESH),
        None => a.report_every,
    };
    let mut next_status = a.report_every;
    let last = set
        .run(&limits, tick_every, |r| {
            publish(r);
            if lines.elapsed() >= next_status {
                out.report(&text("status", r));
                next_status += a.report_every;
            }
        })
        .context("source failed")?;
    out.summary(&text("summary", &last));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Line> {
        let mut input = input;
        std::iter::from_fn(|| next_line(&mut input).unwrap()).collect()
    }

    #[test]
    fn push_lines_are_split_and_bounded() {
        let update = |s: &[u8]| Line::Update(s.to_vec());
        assert_eq!(
            lines(b"a\r\nb\n\nc"),
            [update(b"a"), update(b"b"), update(b""), update(b"c")]
        );
        assert_eq!(lines(b"\xff\xfe\n"), [update(b"\xff\xfe")]);
        let mut input = vec![b'x'; MAX_LINE];
        input.extend_from_slice(b"\r\n");
        input.extend(vec![b'y'; MAX_LINE + 1]);
        input.extend_from_slice(b"\r\nz");
        let got = lines(&input);
        assert_eq!(got[0], update(&vec![b'x'; MAX_LINE]));
        assert_eq!(got[1], Line::TooLong(MAX_LINE + 1));
        assert_eq!(got[2], update(b"z"));
        // A line far over the limit, read through a small buffer.
        let mut long = std::io::BufReader::with_capacity(4096, &[b'q'; 1 << 20][..]);
        assert_eq!(next_line(&mut long).unwrap(), Some(Line::TooLong(1 << 20)));
        assert_eq!(next_line(&mut long).unwrap(), None);
    }
}
