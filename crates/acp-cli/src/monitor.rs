//! `acp monitor`: a monitor server with periodic and final per-source reports.
//!
//! Periodic reports show the totals and at most `--report-sessions` sessions (those silent the
//! longest when there are more), so that they stay cheap with 100,000 sources; the final summary
//! lists every session. Fresh updates go to the sinks asked for (`--print-updates`, `--publish`,
//! see [`crate::publish`]): the server thread only leaves them in each sink's latest-value
//! mailbox, so no sink ever holds it up. With `--metrics` the same published state is served to
//! Prometheus ([`crate::metrics`]).

use std::sync::Arc;
use std::time::Duration;

use acp_core::monitor::Delivery;
use acp_core::wire::FEEDBACK_AGGREGATION;
use acp_core::MonitorConfig;
use acp_runtime::clock;
use acp_runtime::mailbox::Mailbox;
use acp_runtime::rows::SessionRow;
use acp_runtime::server::{
    FeedbackCell, MonitorServer, ServerConfig, SessionReport, TcpConfig, Totals,
};
use acp_sim::estimator::model::ModelFile;
use acp_sim::estimator::slots::SlotEstimate;
use acp_sim::report::{self, Column};
use anyhow::Context;
use serde_json::{json, Value};

use crate::metrics::{self, monitor::MonitorFamilies};
use crate::output::Reports;
use crate::publish::mqtt::{self, SessionTable, StatsFeed};
use crate::publish::mqtt_connect::Connect;
use crate::publish::{unix, Counts, Drain, Lines, Target, FINISH_GRACE};
use crate::{signals, timestamp};
use crate::{MonitorArgs, UsageError};

/// One session as JSON: its [`SessionRow`].
pub fn session_json(s: &SessionReport) -> Value {
    json!(SessionRow::from(s))
}

/// The columns of the text reports' session table, named as the JSON names the fields.
const SESSION_COLUMNS: [Column; 8] = [
    Column::text("peer", 24),
    Column::text("transport", 9),
    Column::text("session", 16),
    Column::num("delivered", 9, 0),
    Column::num("stale", 7, 0),
    Column::num("lost", 7, 0),
    Column::num("rate_hz", 9, 1),
    Column::num("avg_age_ms", 10, 2),
];

/// A `--publish` sink at report time: its name, counts, and its own status (text and JSON).
/// Reports call `counts.delivered` *taken*: what the sink took from its mailbox (MQTT: handed to
/// the client; Unix: offered to each connected client's own mailbox, whose counts are in the
/// status).
struct PublishCounts {
    name: String,
    counts: Counts,
    status: (String, Value),
}

/// A report: its wall-clock time, the totals, the sessions it lists, and the sinks' counts.
struct Report<'a> {
    time: String,
    totals: &'a Totals,
    sessions: &'a [SessionReport],
    printing: Option<Counts>,
    published: Vec<PublishCounts>,
}

/// The sessions a periodic report (or a metrics scrape) lists: all when at most `n`, by address;
/// otherwise the `n` silent the longest, longest first.
pub(crate) fn listed(mut sessions: Vec<SessionReport>, n: usize) -> Vec<SessionReport> {
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
        "seq_jumps_held": st.seq_jumps_held,
        "joined_updates": st.joined_updates,
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
    if let Some(c) = t.streams {
        v["tcp_updates"] = json!(st.stream_updates);
        v["tcp_connections_open"] = json!(c.open);
        v["tcp_connections_accepted"] = json!(c.accepted);
        v["tcp_connections_refused"] = json!(c.refused);
        v["tcp_bad_framing"] = json!(c.bad_framing);
        v["tcp_connections_refused_prefix_share"] = json!(c.refused_prefix_share);
        v["tcp_idle_closed"] = json!(c.idle_closed);
        v["tcp_frame_timeouts"] = json!(c.frame_timeouts);
        v["tcp_fd_exhausted"] = json!(c.fd_exhausted);
    }
    if let Some(p) = r.printing {
        v["updates_printed"] = json!(p.delivered);
        v["updates_superseded"] = json!(p.superseded);
        v["updates_dropped"] = json!(p.dropped);
        v["updates_unprinted"] = json!(p.pending);
    }
    if !r.published.is_empty() {
        let sinks: Vec<Value> = r
            .published
            .iter()
            .map(|p| {
                let mut sink = json!({
                    "sink": p.name,
                    "taken": p.counts.delivered,
                    "superseded": p.counts.superseded,
                    "dropped": p.counts.dropped,
                    "pending": p.counts.pending,
                });
                if let (Some(sink), Value::Object(extra)) = (sink.as_object_mut(), &p.status.1) {
                    sink.extend(extra.clone());
                }
                sink
            })
            .collect();
        v["publish"] = json!(sinks);
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
    if let Some(c) = t.streams {
        out += &format!(
            "tcp: {} updates, {} connections open, {} accepted, {} refused ({} for their \
             network's share), closed: {} for bad framing, {} idle, {} with an unfinished frame; \
             {} accepts paused out of descriptors\n",
            st.stream_updates,
            c.open,
            c.accepted,
            c.refused + c.refused_prefix_share,
            c.refused_prefix_share,
            c.bad_framing,
            c.idle_closed,
            c.frame_timeouts,
            c.fd_exhausted
        );
    }
    if let Some(p) = r.printing {
        out += &format!(
            "updates: {} printed, {} superseded before printing, {} dropped (too many waiting), \
             {} not printed yet\n",
            p.delivered, p.superseded, p.dropped, p.pending
        );
    }
    for p in &r.published {
        out += &format!(
            "publish {}: {} taken, {} superseded, {} dropped, {} pending; {}\n",
            p.name,
            p.counts.delivered,
            p.counts.superseded,
            p.counts.dropped,
            p.counts.pending,
            p.status.0
        );
    }
    if r.sessions.is_empty() {
        return out;
    }
    let rows: Vec<_> = r
        .sessions
        .iter()
        .map(|s| report::fields(&SessionRow::from(s)))
        .collect();
    out += &report::text_table(&SESSION_COLUMNS, &rows);
    if r.sessions.len() < t.sessions {
        out += &format!(
            "({} of {} sessions listed: those silent the longest)\n",
            r.sessions.len(),
            t.sessions
        );
    }
    out
}

/// Reads a sink's own status, as a report fragment and JSON fields.
type StatusFn = Box<dyn Fn() -> (String, Value)>;

/// A running `--publish` sink.
struct Published {
    name: String,
    drain: Drain,
    status: StatusFn,
}

impl Published {
    fn counts(&self) -> PublishCounts {
        PublishCounts {
            name: self.name.clone(),
            counts: self.drain.counts(),
            status: (self.status)(),
        }
    }
}

/// What an MQTT sink shares with the monitor: where its session statistics go, and its status
/// (for the metrics).
type MqttLink = (StatsFeed, Arc<mqtt::Status>);

/// Starts the sink of `target` (MQTT ones with `connect`); MQTT sinks also return their
/// [`MqttLink`].
fn start_sink(
    target: &Target,
    a: &MonitorArgs,
    connect: Option<&Connect>,
    max_entries: usize,
) -> anyhow::Result<(Published, Option<MqttLink>)> {
    let name = target.to_string();
    let (drain, status, feed): (Drain, StatusFn, _) = match target {
        Target::Unix(path) => {
            let listener =
                unix::listen(path).map_err(|e| UsageError(format!("--publish {name}: {e}")))?;
            let fanout = unix::Fanout::new(listener, path.clone(), max_entries, a.clocks_synced);
            let status = fanout.status();
            let drain = Drain::start("acp-unix", max_entries, fanout)?;
            (drain, Box::new(move || status.describe()), None)
        }
        Target::Mqtt(broker) => {
            let connect = connect.context("no MQTT connection settings")?;
            let publisher = mqtt::Publisher::start(broker, connect, a.clocks_synced)?;
            let (status, feed) = (publisher.status(), publisher.stats_feed());
            let drain = Drain::start("acp-mqtt", max_entries, publisher)?;
            let link = (feed, status.clone());
            (drain, Box::new(move || status.describe()), Some(link))
        }
    };
    Ok((
        Published {
            name,
            drain,
            status,
        },
        feed,
    ))
}

/// Serves `--metrics` on `addr`: every scrape reads the server's published totals and, when
/// sessions are to be listed, asks for a copy of the `sessions` silent the longest (made by the
/// server thread at most once per snapshot period, however many scrapes and reports ask) and
/// lists them; `brokers` are the MQTT sinks' statuses.
fn serve_metrics(
    addr: std::net::SocketAddr,
    server: Arc<MonitorServer>,
    sessions: usize,
    brokers: Vec<Arc<mqtt::Status>>,
) -> anyhow::Result<metrics::Endpoint> {
    let scrape = move || -> Box<dyn prometheus_client::collector::Collector> {
        let (totals, listed) = if sessions == 0 {
            (server.totals(), Vec::new())
        } else {
            let snap = server.snapshot_silent_longest(sessions);
            (snap.totals, listed(snap.sessions, sessions))
        };
        Box::new(MonitorFamilies {
            totals,
            sessions: listed,
            publish_connection_failures: brokers.iter().map(|b| b.failures()).sum(),
        })
    };
    metrics::Endpoint::start(addr, metrics::monitor::PREFIX, Box::new(scrape))
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
    let max_entries = cfg.max_sessions;
    let printer = match a.print_updates {
        true => Some(Drain::start(
            "acp-print",
            max_entries,
            Lines::new(out.clone(), a.clocks_synced),
        )?),
        false => None,
    };
    let brokers: Vec<&mqtt::Broker> = a
        .publish
        .iter()
        .filter_map(|t| match t {
            Target::Mqtt(b) => Some(b),
            Target::Unix(_) => None,
        })
        .collect();
    let connect = match a.mqtt.connect(&brokers) {
        Ok(connect) => connect,
        Err(e) => {
            finish_sinks(printer, Vec::new());
            return Err(UsageError(e).into());
        }
    };
    let mut published = Vec::new();
    let mut stats_feeds = Vec::new();
    let mut broker_status = Vec::new();
    for target in &a.publish {
        match start_sink(target, &a, connect.as_ref(), max_entries) {
            Ok((sink, link)) => {
                published.push(sink);
                if let Some((feed, status)) = link {
                    stats_feeds.push(feed);
                    broker_status.push(status);
                }
            }
            Err(e) => {
                finish_sinks(printer, published);
                return Err(e);
            }
        }
    }
    let mailboxes: Vec<Arc<Mailbox>> = printer
        .iter()
        .chain(published.iter().map(|p| &p.drain))
        .map(|d| d.mailbox().clone())
        .collect();
    let mut server_cfg = ServerConfig::new(a.listen, cfg);
    server_cfg.reuse_port = a.reuse_port;
    let mut estimate = None;
    if a.aggregation_from.is_some() || a.aggregation_model.is_some() {
        let cell = Arc::new(FeedbackCell::default());
        let started = match (&a.aggregation_from, &a.aggregation_model) {
            (Some(from), _) => {
                crate::aggregation_feed::start(from, a.aggregation_slot, cell.clone())
                    .map_err(|e| format!("{e:#}"))
            }
            (None, Some(model)) => ModelFile::load(model).map(|m| {
                // The boundary estimator reads the kernel's receive times, as it was trained.
                server_cfg.kernel_timestamps = true;
                estimate = Some((
                    SlotEstimate::new(m.boundary, a.aggregation_slot),
                    cell.clone(),
                ));
            }),
            (None, None) => Ok(()),
        };
        if let Err(e) = started {
            finish_sinks(printer, published);
            return Err(UsageError(e).into());
        }
        server_cfg.feedback = Some(cell);
    }
    let on_update = (!mailboxes.is_empty() || estimate.is_some()).then(|| {
        Box::new(move |d: &Delivery<'_>, kernel_ns: Option<u64>| {
            let received = clock::now();
            for mailbox in &mailboxes {
                mailbox.offer_delivery(d, received);
            }
            if let Some((e, cell)) = estimate.as_mut() {
                // Over TCP (no kernel stamp): the process clock, which reads as Unix time.
                let stamp = kernel_ns.unwrap_or(received.as_nanos());
                if let Some(r) = e.update(stamp) {
                    cell.set(FEEDBACK_AGGREGATION, r.report.encode().to_vec());
                }
            }
        }) as acp_runtime::server::OnUpdate
    });
    // SO_REUSEPORT spreads UDP sources over processes; a TCP port cannot be shared the same way.
    server_cfg.tcp = (!a.no_tcp && !a.reuse_port).then(|| TcpConfig {
        recv_buffer: a.tcp_recv_buffer.map(|b| b as usize),
        max_connections: a.max_tcp_connections as usize,
        ..TcpConfig::default()
    });
    let server = match MonitorServer::start(server_cfg, on_update) {
        Ok(server) => Arc::new(server),
        Err(e) => {
            finish_sinks(printer, published);
            return Err(crate::listen_error(a.listen, e));
        }
    };
    let metrics = match a
        .metrics
        .map(|addr| serve_metrics(addr, server.clone(), a.metrics_sessions, broker_status))
        .transpose()
    {
        Ok(metrics) => metrics,
        Err(e) => {
            drop(server);
            finish_sinks(printer, published);
            return Err(e);
        }
    };
    let text = |kind: &str, r: &Report<'_>| {
        if a.json {
            report_json(kind, r).to_string() + "\n"
        } else {
            report_text(kind, r)
        }
    };
    eprintln!("acp monitor listening on {}", server.local_addr());
    if let Some(m) = &metrics {
        eprintln!("acp monitor metrics on http://{}/metrics", m.local_addr());
    }
    mqtt::listening_line_written();
    let mut next = std::time::Instant::now() + a.report_every;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        if std::time::Instant::now() >= next {
            // Only the totals unless sessions are listed or published: the server copies its
            // session table only when asked.
            let (totals, sessions) = if a.report_sessions == 0 && stats_feeds.is_empty() {
                (server.totals(), Vec::new())
            } else {
                // Every session only for the MQTT statistics.
                let snap = if stats_feeds.is_empty() {
                    server.snapshot_silent_longest(a.report_sessions)
                } else {
                    server.snapshot()
                };
                if !stats_feeds.is_empty() {
                    let stats = SessionTable {
                        taken: std::time::Instant::now(),
                        sessions: snap
                            .sessions
                            .iter()
                            .map(|s| (s.key.session, session_json(s).to_string()))
                            .collect(),
                    };
                    for feed in &stats_feeds {
                        feed.offer(stats.clone());
                    }
                }
                (snap.totals, listed(snap.sessions, a.report_sessions))
            };
            out.report(&text(
                "report",
                &Report {
                    time: timestamp::now(),
                    totals: &totals,
                    sessions: &sessions,
                    printing: printer.as_ref().map(Drain::counts),
                    published: published.iter().map(Published::counts).collect(),
                },
            ));
            next += a.report_every;
        }
    }
    // The endpoint's thread holds the server: stop it first.
    drop(metrics);
    let server = Arc::into_inner(server).context("the metrics endpoint still holds the server")?;
    let last = server.stop().context("monitor server failed")?;
    let (printing, published) = finish_sinks(printer, published);
    out.summary(&text(
        "summary",
        &Report {
            time: timestamp::now(),
            totals: &last.totals,
            sessions: &last.sessions,
            printing,
            published,
        },
    ));
    Ok(())
}

/// Lets every sink deliver what is pending, all within one [`FINISH_GRACE`] and a bit (a sink
/// whose reader does not read must not keep the monitor from exiting); returns the final counts.
fn finish_sinks(
    printer: Option<Drain>,
    published: Vec<Published>,
) -> (Option<Counts>, Vec<PublishCounts>) {
    for d in printer.iter().chain(published.iter().map(|p| &p.drain)) {
        d.close();
    }
    let deadline = std::time::Instant::now() + FINISH_GRACE + Duration::from_millis(200);
    let printing = printer.map(|d| d.finish_by(deadline).1);
    let published = published
        .into_iter()
        .map(|p| {
            let (_, counts) = p.drain.finish_by(deadline);
            PublishCounts {
                name: p.name,
                counts,
                status: (p.status)(),
            }
        })
        .collect();
    (printing, published)
}
