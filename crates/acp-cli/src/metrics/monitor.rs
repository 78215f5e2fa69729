//! The metric families of `acp monitor --metrics`, named `acp_monitor_…`.
//!
//! Monitor-wide counters come from the server's published [`Totals`]; per-session series from a
//! copy of its session table, only for the sessions the command chose to list (at most
//! `--metrics-sessions`, those silent the longest, so that the number of series stays bounded
//! whatever the number of sources). Ages are in seconds; an age exists only when the sources'
//! clocks are declared synchronised (`--clocks-synced`), otherwise those families have no samples.

use std::fmt;

use acp_runtime::server::{SessionReport, Totals};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::TypedMetric;
use prometheus_client::registry::Unit;

use super::Families;

/// The prefix of every name.
pub const PREFIX: &str = "acp_monitor";

/// One scrape of a monitor: its totals and the sessions given their own series.
#[derive(Debug)]
pub struct MonitorFamilies {
    /// Monitor-wide counters.
    pub totals: Totals,
    /// The sessions listed, taken at `totals.at`.
    pub sessions: Vec<SessionReport>,
    /// Failed connection attempts to the `--publish` MQTT brokers, all together.
    pub publish_connection_failures: u64,
}

/// The labels of a session's series: its peer address and its session id in hex (as in the
/// reports).
fn labels(s: &SessionReport) -> [(&'static str, String); 2] {
    [
        ("peer", s.key.peer.to_string()),
        ("session", format!("{:016x}", s.key.session)),
    ]
}

impl MonitorFamilies {
    /// A family with a sample per listed session, for the sessions `value` knows a value of.
    fn session_family<M: EncodeMetric + TypedMetric>(
        &self,
        f: &mut Families<'_>,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        value: impl Fn(&SessionReport) -> Option<M>,
    ) -> fmt::Result {
        let samples = self
            .sessions
            .iter()
            .filter_map(|s| Some((labels(s), value(s)?)));
        f.family(name, help, unit, samples)
    }

    /// A gauge per listed session, for the sessions `value` knows a value of.
    fn session_gauge(
        &self,
        f: &mut Families<'_>,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        value: impl Fn(&SessionReport) -> Option<f64>,
    ) -> fmt::Result {
        self.session_family(f, name, help, unit, |s| value(s).map(ConstGauge::new))
    }

    /// A counter per listed session.
    fn session_counter(
        &self,
        f: &mut Families<'_>,
        name: &str,
        help: &str,
        value: impl Fn(&SessionReport) -> u64,
    ) -> fmt::Result {
        self.session_family(f, name, help, None, |s| Some(ConstCounter::new(value(s))))
    }
}

impl Collector for MonitorFamilies {
    fn encode(&self, encoder: DescriptorEncoder) -> fmt::Result {
        let mut f = Families::new(encoder);
        let (t, st) = (&self.totals, &self.totals.stats);
        f.counter(
            "datagrams_received",
            "Datagrams received and handed to the monitor.",
            st.datagrams,
        )?;
        f.counter(
            "datagrams_truncated",
            "Datagrams longer than a receive slot, dropped unread.",
            t.truncated,
        )?;
        f.counter_by_reason(
            "malformed",
            "Datagrams that failed to decode, by the decoding rule they broke.",
            &st.malformed_by,
        )?;
        f.counter(
            "not_updates",
            "Valid ACP packets that are not updates, dropped.",
            st.not_updates,
        )?;
        f.counter(
            "acks_sent",
            "ACKs (and COOKIEs) handed to the kernel.",
            t.acks_sent,
        )?;
        f.counter(
            "acks_unsent",
            "ACKs written by the monitor that the kernel did not take.",
            st.acks.saturating_sub(t.acks_sent),
        )?;
        f.counter(
            "updates_delivered",
            "Fresh updates delivered to the application.",
            st.delivered,
        )?;
        f.counter(
            "seq_jumps",
            "Updates dropped for running implausibly far ahead of their session.",
            st.seq_jumps,
        )?;
        f.gauge(
            "sessions_live",
            "Sessions tracked now.",
            None,
            Some(t.sessions as f64),
        )?;
        f.counter("sessions_created", "Sessions created.", st.sessions_created)?;
        f.counter(
            "sessions_expired",
            "Sessions forgotten after a silence.",
            st.sessions_expired,
        )?;
        f.counter_by_reason(
            "sessions_refused",
            "New sessions refused, by reason (table_full, prefix_share).",
            &st.refused_by,
        )?;
        f.counter(
            "cookies_sent",
            "COOKIEs sent to new sources to check their address.",
            st.cookies_sent,
        )?;
        f.counter(
            "cookies_rejected",
            "Updates that echoed a wrong or expired cookie.",
            st.cookies_rejected,
        )?;
        f.counter_by_reason(
            "auth_failed",
            "Updates dropped by authentication, by reason.",
            &st.auth_failed_by,
        )?;
        f.counter(
            "publish_connection_failures",
            "Failed connection attempts to the --publish MQTT brokers (unreachable, refused, TLS), \
             all brokers together.",
            self.publish_connection_failures,
        )?;
        f.gauge(
            "sessions_listed",
            "Sessions given their own acp_monitor_session_* series in this scrape.",
            None,
            Some(self.sessions.len() as f64),
        )?;
        let at = t.at;
        self.session_gauge(
            &mut f,
            "session_age",
            "Age of the freshest update of the session when the session table was copied for this \
             scrape, within about 0.3 s of the request (clocks synchronised only).",
            Some(Unit::Seconds),
            |s| s.stats.age(at),
        )?;
        self.session_family(
            &mut f,
            "session_age_area",
            "Area under the age curve of the session from its first update to its latest, the \
             integral of age over time (clocks synchronised only); its rate over an interval is \
             the interval's time-average age in seconds.",
            Some(Unit::Other("square_seconds".into())),
            |s| s.stats.age_area(s.stats.last_seen).map(ConstCounter::new),
        )?;
        self.session_counter(
            &mut f,
            "session_delivered",
            "Updates of the session delivered (fresh, in sequence).",
            |s| s.stats.delivered,
        )?;
        self.session_counter(
            &mut f,
            "session_stale",
            "Updates of the session that arrived after a fresher one (ACKed, not delivered).",
            |s| s.stats.stale,
        )?;
        self.session_counter(
            &mut f,
            "session_duplicates",
            "Duplicates of updates of the session already received.",
            |s| s.stats.duplicates,
        )?;
        self.session_counter(
            &mut f,
            "session_lost",
            "Sequence numbers of the session never received.",
            |s| s.stats.lost,
        )?;
        self.session_gauge(
            &mut f,
            "session_last_seen_timestamp",
            "When the latest update of the session arrived (Unix time).",
            Some(Unit::Seconds),
            |s| Some(s.stats.last_seen.as_secs_f64()),
        )?;
        self.session_gauge(
            &mut f,
            "session_source_backlog",
            "The source's backlog estimate carried by the freshest update of the session.",
            None,
            |s| Some(s.stats.source_backlog as f64),
        )
    }
}
