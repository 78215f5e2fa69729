//! `acp monitor`: a monitor server with periodic and final per-source reports.
//!
//! Periodic reports show the totals and at most `--report-sessions` sessions (those silent the
//! longest when there are more), so that they stay cheap with 100,000 sources; the final summary
//! lists every session. With `--print-updates` a printing thread writes the fresh updates, which
//! the server thread leaves in a latest-value [`Mailbox`], so a slow stdout never holds it up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use acp_core::monitor::Delivery;
use acp_core::MonitorConfig;
use acp_runtime::clock;
use acp_runtime::mailbox::{Mailbox, MailboxConfig, OwnedUpdate};
use acp_runtime::server::{MonitorServer, ServerConfig, SessionReport, Totals};
use anyhow::Context;
use serde_json::{json, Value};

use crate::output::Reports;
use crate::MonitorArgs;
use crate::{signals, timestamp};

/// One session as JSON.
pub fn session_json(s: &SessionReport) -> Value {
    json!({
        "peer": s.key.peer.to_string(),
        "session": format!("{:016x}", s.key.session),
        "delivered": s.stats.delivered,
        "stale": s.stats.stale,
        "duplicates": s.stats.duplicates,
        "lost": s.stats.lost,
        "bytes": s.stats.bytes,
        "rate_hz": s.stats.delivery_rate(),
        "source_backlog": s.stats.source_backlog,
        "avg_age_ms": s.avg_age.map(|a| a * 1e3),
    })
}

/// What became of the fresh updates with `--print-updates`.
#[derive(Debug, Clone, Copy)]
struct Printing {
    printed: u64,
    /// Replaced by a fresher update of their source before they could be printed.
    superseded: u64,
    /// Refused by the full mailbox.
    dropped: u64,
    /// Waiting, or being written, when the counts were taken.
    unprinted: u64,
}

impl Printing {
    fn of(mailbox: &Mailbox, printed: u64) -> Self {
        let st = mailbox.stats();
        Printing {
            printed,
            superseded: st.superseded,
            dropped: st.dropped,
            unprinted: st
                .offered
                .saturating_sub(st.superseded + st.dropped + printed),
        }
    }
}

/// A report: its wall-clock time, the totals, the sessions it lists, and the printing counts.
struct Report<'a> {
    time: String,
    totals: &'a Totals,
    sessions: &'a [SessionReport],
    printing: Option<Printing>,
}

/// The sessions a periodic report lists: all when at most `n`, by address; otherwise the `n`
/// silent the longest, longest first.
fn listed(mut sessions: Vec<SessionReport>, n: usize) -> Vec<SessionReport> {
    if sessions.len() <= n {
        return sessions;
    }
    let silent_longest = |a: &SessionReport, b: &SessionReport| {
        (a.stats.last_seen, a.key).cmp(&(b.stats.last_seen, b.key))
    };
    if n > 0 {
        sessions.select_nth_unstable_by(n - 1, silent_longest);
    }
    sessions.truncate(n);
    sessions.sort_unstable_by(silent_longest);
    sessions
}

fn report_json(kind: &str, r: &Report<'_>) -> Value {
    let (t, st) = (r.totals, &r.totals.stats);
    let mut v = json!({
        "type": kind,
        "time": r.time,
        "datagrams": st.datagrams,
        "malformed": st.malformed,
        "malformed_by": st.malformed_by,
        "not_updates": st.not_updates,
        "acks": t.acks_sent,
        "acks_unsent": st.acks - t.acks_sent,
        "seq_jumps": st.seq_jumps,
        "truncated": t.truncated,
        "delivered": st.delivered,
        "sessions_live": t.sessions,
        "sessions_created": st.sessions_created,
        "sessions_expired": st.sessions_expired,
        "sessions_refused": st.sessions_refused,
        "refused_by": st.refused_by,
        "cookies_sent": st.cookies_sent,
        "cookies_rejected": st.cookies_rejected,
        "auth_failed_by": st.auth_failed_by,
        "sessions": r.sessions.iter().map(session_json).collect::<Vec<_>>(),
    });
    if let Some(p) = r.printing {
        v["updates_printed"] = json!(p.printed);
        v["updates_superseded"] = json!(p.superseded);
        v["updates_dropped"] = json!(p.dropped);
        v["updates_unprinted"] = json!(p.unprinted);
    }
    v
}

/// ` (reason n, …)` for a non-empty count by reason.
fn by_reason(counts: &std::collections::BTreeMap<&'static str, u64>) -> String {
    if counts.is_empty() {
        return String::new();
    }
    let reasons: Vec<String> = counts.iter().map(|(r, n)| format!("{r} {n}")).collect();
    format!(" ({})", reasons.join(", "))
}

fn report_text(title: &str, r: &Report<'_>) -> String {
    let (t, st) = (r.totals, &r.totals.stats);
    let mut out = format!(
        "{} {title}: {} sessions, {} datagrams, {} delivered, {} acks, {} malformed{}, {} refused{}, \
         {} sequence jumps, {} cookies sent ({} rejected), {} failed authentication{}\n",
        r.time,
        t.sessions,
        st.datagrams,
        st.delivered,
        t.acks_sent,
        st.malformed,
        by_reason(&st.malformed_by),
        st.sessions_refused,
        by_reason(&st.refused_by),
        st.seq_jumps,
        st.cookies_sent,
        st.cookies_rejected,
        st.auth_failed_by.values().sum::<u64>(),
        by_reason(&st.auth_failed_by),
    );
    if let Some(p) = r.printing {
        out += &format!(
            "updates: {} printed, {} superseded before printing, {} dropped (too many waiting), \
             {} not printed yet\n",
            p.printed, p.superseded, p.dropped, p.unprinted
        );
    }
    if r.sessions.is_empty() {
        return out;
    }
    out += &format!(
        "{:<24} {:<16} {:>9} {:>7} {:>7} {:>9} {:>10}\n",
        "peer", "session", "delivered", "stale", "lost", "rate_hz", "avg_age_ms"
    );
    for s in r.sessions {
        let age = s
            .avg_age
            .map_or_else(|| "-".to_string(), |a| format!("{:.2}", a * 1e3));
        out += &format!(
            "{:<24} {:016x} {:>9} {:>7} {:>7} {:>9.1} {:>10}\n",
            s.key.peer.to_string(),
            s.key.session,
            s.stats.delivered,
            s.stats.stale,
            s.stats.lost,
            s.stats.delivery_rate(),
            age
        );
    }
    if r.sessions.len() < t.sessions {
        out += &format!(
            "({} of {} sessions listed: those silent the longest)\n",
            r.sessions.len(),
            t.sessions
        );
    }
    out
}

/// One update as a JSON line for `--print-updates`; its age is the age on arrival.
fn update_json(u: &OwnedUpdate, synced: bool) -> Value {
    let mut line = json!({
        "peer": u.key.peer.to_string(),
        "session": format!("{:016x}", u.key.session),
        "time": timestamp::rfc3339(u.received),
        "seq": u.seq,
        "gen_ts_ns": u.gen_ts,
        "probe": u.probe,
    });
    if synced {
        let age = u.received.as_nanos() as f64 - u.gen_ts as f64;
        line["age_ms"] = json!(age / 1e6);
    }
    match std::str::from_utf8(&u.payload) {
        Ok(text) => line["payload"] = json!(text),
        Err(_) => {
            let hex: String = u.payload.iter().map(|b| format!("{b:02x}")).collect();
            line["payload_hex"] = json!(hex);
        }
    }
    line
}

/// Bytes of JSON lines gathered before a write.
const PRINT_CHUNK: usize = 64 << 10;

/// How long the summary waits for the printer to write what is left.
const PRINT_GRACE: Duration = Duration::from_secs(1);

/// The `--print-updates` thread: takes the pending updates from the mailbox and writes them to
/// stdout, until the mailbox is closed and empty or stdout is closed. The server thread only puts
/// updates in the mailbox, so a stdout that does not keep up never holds it up.
struct Printer {
    mailbox: Arc<Mailbox>,
    printed: Arc<AtomicU64>,
    done: mpsc::Receiver<()>,
}

impl Printer {
    fn start(mailbox: Arc<Mailbox>, out: Reports, synced: bool) -> anyhow::Result<Self> {
        let printed = Arc::new(AtomicU64::new(0));
        let (done_tx, done) = mpsc::channel();
        let (mailbox_t, printed_t) = (mailbox.clone(), printed.clone());
        std::thread::Builder::new()
            .name("acp-print".into())
            .spawn(move || {
                let mut batch = Vec::new();
                let mut text = String::new();
                'print: loop {
                    if !mailbox_t.wait(Duration::from_millis(100)) {
                        if mailbox_t.is_closed() {
                            break;
                        }
                        continue;
                    }
                    mailbox_t.take_into(&mut batch);
                    let mut lines = 0;
                    for (i, u) in batch.iter().enumerate() {
                        text += &update_json(u, synced).to_string();
                        text.push('\n');
                        lines += 1;
                        if text.len() >= PRINT_CHUNK || i + 1 == batch.len() {
                            if !out.stdout(&text) {
                                break 'print;
                            }
                            printed_t.fetch_add(lines, Ordering::Relaxed);
                            text.clear();
                            lines = 0;
                        }
                    }
                }
                let _ = done_tx.send(());
            })
            .context("cannot start the printing thread")?;
        Ok(Printer {
            mailbox,
            printed,
            done,
        })
    }

    fn counts(&self) -> Printing {
        Printing::of(&self.mailbox, self.printed.load(Ordering::Relaxed))
    }

    /// Lets the printer write what is pending, for at most [`PRINT_GRACE`]: a stdout that is not
    /// read must not keep the monitor from exiting. Returns the final counts.
    fn finish(self) -> Printing {
        self.mailbox.close();
        let _ = self.done.recv_timeout(PRINT_GRACE);
        self.counts()
    }
}

/// Runs until SIGINT/SIGTERM, or until stdout is closed.
pub fn run(a: MonitorArgs) -> anyhow::Result<()> {
    let cfg = MonitorConfig {
        max_sessions: usize::try_from(a.max_sessions).unwrap_or(usize::MAX),
        clocks_synchronised: a.clocks_synced,
        max_prefix_share: a.max_prefix_share,
        cookie_threshold: a.cookie_threshold,
        keys: a.psk_file.clone(),
        ..MonitorConfig::default()
    };
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    // With --print-updates stdout carries the updates, and the reports go to stderr.
    let out = Reports::new(stop.clone(), a.print_updates);
    let mailbox = a
        .print_updates
        .then(|| Arc::new(Mailbox::new(MailboxConfig::new(cfg.max_sessions))));
    let on_update = mailbox.clone().map(|mailbox| {
        Box::new(move |d: &Delivery<'_>| {
            mailbox.offer_delivery(d, clock::now());
        }) as acp_runtime::server::OnUpdate
    });
    let server = MonitorServer::start(ServerConfig::new(a.listen, cfg), on_update)
        .map_err(|e| crate::listen_error(a.listen, e))?;
    let printer = match mailbox {
        Some(mailbox) => Some(Printer::start(mailbox, out.clone(), a.clocks_synced)?),
        None => None,
    };
    let text = |kind: &str, r: &Report<'_>| {
        if a.json {
            report_json(kind, r).to_string() + "\n"
        } else {
            report_text(kind, r)
        }
    };
    eprintln!("acp monitor listening on {}", server.local_addr());
    let mut next = std::time::Instant::now() + a.report_every;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        if std::time::Instant::now() >= next {
            // Only the totals unless sessions are listed: the server copies its session table
            // only when asked.
            let (totals, sessions) = if a.report_sessions == 0 {
                (server.totals(), Vec::new())
            } else {
                let snap = server.snapshot();
                (snap.totals, listed(snap.sessions, a.report_sessions))
            };
            let printing = printer.as_ref().map(Printer::counts);
            out.report(&text(
                "report",
                &Report {
                    time: timestamp::now(),
                    totals: &totals,
                    sessions: &sessions,
                    printing,
                },
            ));
            next += a.report_every;
        }
    }
    let last = server.stop().context("monitor server failed")?;
    let printing = printer.map(Printer::finish);
    out.summary(&text(
        "summary",
        &Report {
            time: timestamp::now(),
            totals: &last.totals,
            sessions: &last.sessions,
            printing,
        },
    ));
    Ok(())
}
