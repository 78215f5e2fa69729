//! The metric families of `acp source --metrics`, named `acp_source_…`.
//!
//! Everything comes from the latest report the source driver published (at most 200 ms old):
//! the controller's rate and the source's estimates (age, backlog, RTT, in seconds where they are
//! times) as gauges, its counts as counters. The session id, controller and target are labels of
//! one `acp_source_session_info` series, so that the other series need no labels. An estimate not known
//! yet (no ACK so far) has no sample.

use std::fmt;
use std::net::SocketAddr;

use acp_core::source::Phase;
use acp_runtime::driver::SourceReport;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

use super::Families;

/// The prefix of every name.
pub const PREFIX: &str = "acp_source";

/// One scrape of a source.
#[derive(Debug)]
pub struct SourceFamilies {
    /// Where the source sends (the monitor, or a relay).
    pub target: SocketAddr,
    /// Its latest report; none before the driver publishes its first (nothing is written then).
    pub report: Option<SourceReport>,
}

/// Every phase, with its label value.
const PHASES: [(Phase, &str); 3] = [
    (Phase::Probing, "probing"),
    (Phase::Running, "running"),
    (Phase::Outage, "outage"),
];

impl Collector for SourceFamilies {
    fn encode(&self, encoder: DescriptorEncoder) -> fmt::Result {
        let Some(r) = &self.report else {
            return Ok(());
        };
        let (mut f, s) = (Families::new(encoder), &r.stats);
        let info = vec![
            ("session", format!("{:016x}", r.session)),
            ("controller", r.controller.clone()),
            ("target", self.target.to_string()),
        ];
        f.info(
            "session",
            "The source's session id, controller and target, as labels.",
            info,
        )?;
        let phases = PHASES.iter().map(|(phase, name)| {
            let value = if *phase == s.phase { 1 } else { 0 };
            ([("phase", *name)], ConstGauge::new(value))
        });
        f.family(
            "phase",
            "1 for the phase the source is in (probing, running, outage), 0 for the others.",
            None,
            phases,
        )?;
        f.gauge(
            "update_rate",
            "Update rate the controller has set, in updates per second (0 while probing).",
            Some(Unit::Other("hertz".into())),
            Some(s.rate),
        )?;
        f.gauge(
            "estimated_age",
            "The source's estimate of the age of its freshest update at the monitor.",
            Some(Unit::Seconds),
            s.age,
        )?;
        f.gauge(
            "backlog",
            "Estimated updates in flight (sent minus known delivered).",
            None,
            Some(s.backlog as f64),
        )?;
        f.counter_of(
            "estimated_age_area",
            "Area under the estimated age curve since the first ACK, the integral of the \
             estimated age over time; its rate over an interval is the interval's time-average \
             estimated age in seconds.",
            Some(Unit::Other("square_seconds".into())),
            s.age_area,
        )?;
        f.counter_of(
            "backlog_area",
            "Integral of the estimated backlog over time since the session started (updates \
             times seconds); its rate over an interval is the interval's time-average backlog.",
            Some(Unit::Seconds),
            Some(s.backlog_area),
        )?;
        f.gauge(
            "rtt",
            "Smoothed round-trip time of updates and their ACKs.",
            Some(Unit::Seconds),
            s.rtt,
        )?;
        f.counter("updates_sent", "Updates sent, probes included.", s.sent)?;
        f.counter_of(
            "sent",
            "Bytes of the datagrams sent.",
            Some(Unit::Bytes),
            Some(s.bytes_sent),
        )?;
        f.counter("probes_sent", "Initialisation probes sent.", s.probes_sent)?;
        f.counter(
            "probes_lost",
            "Probes that were not answered in time.",
            s.probes_lost,
        )?;
        f.counter("acks", "ACKs received in sequence.", s.acks_in_sequence)?;
        f.counter(
            "acks_out_of_sequence",
            "ACKs received out of sequence (discarded).",
            s.acks_out_of_sequence,
        )?;
        f.counter(
            "acks_stale",
            "ACKs the monitor flagged stale (the update arrived after a fresher one).",
            s.acks_stale,
        )?;
        f.counter(
            "acks_mismatched",
            "ACKs whose echoed timestamps do not match the update sent.",
            s.acks_mismatched,
        )?;
        f.counter(
            "invalid",
            "Datagrams received that were not a valid ACK for this session.",
            s.invalid,
        )?;
        f.counter(
            "auth_failed",
            "Datagrams whose seal was missing, unexpected or wrong (also counted as invalid).",
            s.auth_failed,
        )?;
        f.counter(
            "cookies",
            "COOKIEs received from the monitor (address checks).",
            s.cookies,
        )?;
        f.counter(
            "updates_superseded",
            "Push mode: updates replaced by a fresher one before they could be sent.",
            s.dropped_stale,
        )?;
        f.counter(
            "updates_oversized",
            "Send slots skipped because the payload exceeded the wire limit.",
            s.oversized,
        )?;
        f.counter("epochs", "Control epochs completed.", s.epochs)?;
        f.counter(
            "outages",
            "Outages entered (no ACKs for too long).",
            s.outages,
        )
    }
}
