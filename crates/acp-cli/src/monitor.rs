//! `acp monitor`: a monitor server with periodic and final per-source reports.

use std::time::Duration;

use acp_core::monitor::Delivery;
use acp_core::MonitorConfig;
use acp_runtime::clock;
use acp_runtime::server::{MonitorServer, ServerConfig, SessionReport, Snapshot};
use anyhow::Context;
use serde_json::{json, Value};

use crate::output::Reports;
use crate::signals;
use crate::MonitorArgs;

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

fn snapshot_json(kind: &str, snap: &Snapshot) -> Value {
    let st = &snap.stats;
    json!({
        "type": kind,
        "datagrams": st.datagrams,
        "malformed": st.malformed,
        "malformed_by": st.malformed_by,
        "not_updates": st.not_updates,
        "acks": snap.acks_sent,
        "acks_unsent": st.acks - snap.acks_sent,
        "seq_jumps": st.seq_jumps,
        "truncated": snap.truncated,
        "delivered": st.delivered,
        "sessions_created": st.sessions_created,
        "sessions_expired": st.sessions_expired,
        "sessions_refused": st.sessions_refused,
        "refused_by": st.refused_by,
        "cookies_sent": st.cookies_sent,
        "cookies_rejected": st.cookies_rejected,
        "auth_failed_by": st.auth_failed_by,
        "sessions": snap.sessions.iter().map(session_json).collect::<Vec<_>>(),
    })
}

/// ` (reason n, …)` for a non-empty count by reason.
fn by_reason(counts: &std::collections::BTreeMap<&'static str, u64>) -> String {
    if counts.is_empty() {
        return String::new();
    }
    let reasons: Vec<String> = counts.iter().map(|(r, n)| format!("{r} {n}")).collect();
    format!(" ({})", reasons.join(", "))
}

fn snapshot_text(title: &str, snap: &Snapshot) -> String {
    let st = &snap.stats;
    let mut out = format!(
        "{title}: {} sessions, {} datagrams, {} delivered, {} acks, {} malformed{}, {} refused{}, \
         {} sequence jumps, {} cookies sent ({} rejected), {} failed authentication{}\n",
        snap.sessions.len(),
        st.datagrams,
        st.delivered,
        snap.acks_sent,
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
    out += &format!(
        "{:<24} {:<16} {:>9} {:>7} {:>7} {:>9} {:>10}\n",
        "peer", "session", "delivered", "stale", "lost", "rate_hz", "avg_age_ms"
    );
    for s in &snap.sessions {
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
    out
}

/// One update as a JSON line for `--print-updates`.
fn update_json(d: &Delivery<'_>, synced: bool) -> Value {
    let mut line = json!({
        "peer": d.key.peer.to_string(),
        "session": format!("{:016x}", d.key.session),
        "seq": d.seq,
        "gen_ts_ns": d.gen_ts,
        "probe": d.probe,
    });
    if synced {
        let age = clock::now().as_nanos() as f64 - d.gen_ts as f64;
        line["age_ms"] = json!(age / 1e6);
    }
    match std::str::from_utf8(d.payload) {
        Ok(text) => line["payload"] = json!(text),
        Err(_) => {
            let hex: String = d.payload.iter().map(|b| format!("{b:02x}")).collect();
            line["payload_hex"] = json!(hex);
        }
    }
    line
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
    let stop = signals::shutdown_flag();
    // With --print-updates stdout carries the updates, and the reports go to stderr.
    let out = Reports::new(stop.clone(), a.print_updates);
    let synced = a.clocks_synced;
    let on_update = a.print_updates.then(|| {
        let out = out.clone();
        Box::new(move |d: &Delivery<'_>| out.stdout(&format!("{}\n", update_json(d, synced))))
            as acp_runtime::server::OnUpdate
    });
    let server = MonitorServer::start(ServerConfig::new(a.listen, cfg), on_update)
        .map_err(|e| crate::listen_error(a.listen, e))?;
    let text = |kind: &str, snap: &Snapshot| {
        if a.json {
            snapshot_json(kind, snap).to_string() + "\n"
        } else {
            snapshot_text(kind, snap)
        }
    };
    eprintln!("acp monitor listening on {}", server.local_addr());
    let mut next = std::time::Instant::now() + a.report_every;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        if std::time::Instant::now() >= next {
            out.report(&text("report", &server.snapshot()));
            next += a.report_every;
        }
    }
    let last = server.stop().context("monitor server failed")?;
    out.summary(&text("summary", &last));
    Ok(())
}
