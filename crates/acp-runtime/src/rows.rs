//! The runtime's results as rows, one serde type each, that every writer shows under the same
//! names and units: `acp monitor`'s and `acp source`'s JSON and text lines and the Python
//! package's dicts (`docs/OUTPUTS.md`). A writer adds only what is its own (`type`, `time`).
//!
//! Session ids are 16 hex digits everywhere; phases are [`Phase::name`]. An update's payload is
//! always in `payload_hex`, and also in `payload` as text when it is UTF-8 (else `payload` is
//! null): the same fields for every update, so a consumer of one session never sees the
//! encoding switch.

use acp_core::source::Phase;
use serde::{Serialize, Serializer};

use crate::driver::SourceReport;
use crate::mailbox::OwnedUpdate;
use crate::server::SessionReport;

/// A session id as every output writes it: 16 hex digits.
pub fn session_hex(session: u64) -> String {
    format!("{session:016x}")
}

/// `bytes` in lowercase hex, two digits a byte.
pub fn hex_of(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

fn hex<S: Serializer>(session: &u64, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&session_hex(*session))
}

fn phase<S: Serializer>(p: &Phase, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(p.name())
}

fn opt_ms(v: Option<f64>) -> Option<f64> {
    v.map(|s| s * 1e3)
}

/// A source's state and counters (`acp source` status and summary; Python `Source.stats()`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceRow {
    /// Its label.
    pub name: String,
    /// The controller.
    pub controller: String,
    /// The session id.
    #[serde(serialize_with = "hex")]
    pub session: u64,
    /// `probing`, `running` or `outage`.
    #[serde(serialize_with = "phase")]
    pub phase: Phase,
    /// The current update rate (updates/s).
    pub rate_hz: f64,
    /// The estimated age now (ms).
    pub est_age_ms: Option<f64>,
    /// The time-average estimated age (ms).
    pub avg_est_age_ms: Option<f64>,
    /// Updates in flight now.
    pub backlog: u64,
    /// Time-average updates in flight.
    pub avg_backlog: f64,
    /// The smoothed RTT̄ (ms).
    pub rtt_ms: Option<f64>,
    /// Updates sent, probes included.
    pub sent: u64,
    /// In-sequence ACKs.
    pub acks: u64,
    // From here on, the source's counters of the same names
    // ([`acp_core::SourceStats`]).
    pub acks_out_of_sequence: u64,
    pub acks_stale: u64,
    pub invalid: u64,
    pub acks_mismatched: u64,
    pub auth_failed: u64,
    pub cookies: u64,
    pub dropped_stale: u64,
    pub probes_lost: u64,
    pub epochs: u64,
    pub outages: u64,
    /// A multipath source's paths, in `--via` order (absent for a single path).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathRow>,
}

/// One path of a multipath source ([`acp_core::multipath::PathStats`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathRow {
    /// The path's first hop, `ip:port`.
    pub via: String,
    /// Updates sent on it (probes of an overdue path and duplicates included).
    pub sent: u64,
    /// Updates acknowledged over it.
    pub acked: u64,
    /// Updates given up on it (overtaken by a later ACK on the path, or beyond its memory).
    pub given_up: u64,
    /// Updates in flight on it now.
    pub in_flight: usize,
    /// QAware's `n_k`: updates ahead at its bottleneck now (fractional).
    pub queued: f64,
    /// Its smoothed RTT (ms).
    pub srtt_ms: Option<f64>,
    /// QAware's `Ŝ_k`, the round trip without waiting (ms).
    pub service_ms: Option<f64>,
    /// QAware's `b̂_k`, the bottleneck's service time per update (ms).
    pub bottleneck_ms: Option<f64>,
    /// No ACK for too long: probed, not scheduled.
    pub overdue: bool,
    /// Times it became overdue.
    pub failures: u64,
}

impl From<&SourceReport> for SourceRow {
    fn from(r: &SourceReport) -> SourceRow {
        let s = &r.stats;
        SourceRow {
            name: r.name.clone(),
            controller: r.controller.clone(),
            session: r.session,
            phase: s.phase,
            rate_hz: s.rate,
            est_age_ms: opt_ms(s.age),
            avg_est_age_ms: opt_ms(s.avg_age),
            backlog: s.backlog,
            avg_backlog: s.avg_backlog,
            rtt_ms: opt_ms(s.rtt),
            sent: s.sent,
            acks: s.acks_in_sequence,
            acks_out_of_sequence: s.acks_out_of_sequence,
            acks_stale: s.acks_stale,
            invalid: s.invalid,
            acks_mismatched: s.acks_mismatched,
            auth_failed: s.auth_failed,
            cookies: s.cookies,
            dropped_stale: s.dropped_stale,
            probes_lost: s.probes_lost,
            epochs: s.epochs,
            outages: s.outages,
            paths: r
                .paths
                .iter()
                .map(|(via, p)| PathRow {
                    via: via.to_string(),
                    sent: p.sent,
                    acked: p.acked,
                    given_up: p.given_up,
                    in_flight: p.in_flight,
                    queued: p.queued,
                    srtt_ms: opt_ms(p.srtt),
                    service_ms: opt_ms(p.service),
                    bottleneck_ms: opt_ms(p.bottleneck),
                    overdue: p.overdue,
                    failures: p.failures,
                })
                .collect(),
        }
    }
}

/// One session as the monitor sees it (`acp monitor` reports; Python `Monitor.sessions()`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    /// The source's address, `ip:port`.
    pub peer: String,
    /// `udp` or `tcp`.
    pub transport: &'static str,
    /// The session id.
    #[serde(serialize_with = "hex")]
    pub session: u64,
    /// Fresh updates.
    pub delivered: u64,
    /// Updates older than one already delivered.
    pub stale: u64,
    /// Updates received twice.
    pub duplicates: u64,
    /// Sequence numbers never seen.
    pub lost: u64,
    /// Initialisation probes received.
    pub probes: u64,
    /// The highest sequence number received.
    pub highest_seq: u64,
    /// Payload bytes of the fresh updates.
    pub bytes: u64,
    /// Fresh updates per second.
    pub rate_hz: f64,
    /// The source's backlog estimate carried by its freshest update.
    pub source_backlog: u64,
    /// Time-average age (ms): with synchronised clocks the true age.
    pub avg_age_ms: Option<f64>,
}

impl From<&SessionReport> for SessionRow {
    fn from(s: &SessionReport) -> SessionRow {
        SessionRow {
            peer: s.key.peer.to_string(),
            transport: if s.stats.stream { "tcp" } else { "udp" },
            session: s.key.session,
            delivered: s.stats.delivered,
            stale: s.stats.stale,
            duplicates: s.stats.duplicates,
            lost: s.stats.lost,
            probes: s.stats.probes,
            highest_seq: s.stats.highest_seq,
            bytes: s.stats.bytes,
            rate_hz: s.stats.delivery_rate(),
            source_backlog: s.stats.source_backlog,
            avg_age_ms: opt_ms(s.avg_age),
        }
    }
}

/// A fresh update (`acp monitor --print-updates` and `--publish` lines; Python
/// `Update.to_dict()`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpdateRow {
    /// The source's address, `ip:port`.
    pub peer: String,
    /// The session id.
    #[serde(serialize_with = "hex")]
    pub session: u64,
    /// Sequence number within the session.
    pub seq: u64,
    /// Generation time on the source's clock (ns since the Unix epoch).
    pub gen_ts_ns: u64,
    /// Arrival time on the monitor's clock (ns since the Unix epoch).
    pub received_ns: u64,
    /// Whether it was an initialisation probe.
    pub probe: bool,
    /// Age on arrival (ms), with synchronised clocks only (else null).
    pub age_ms: Option<f64>,
    /// The payload as text, if it is UTF-8.
    pub payload: Option<String>,
    /// The payload in hex, always.
    pub payload_hex: String,
}

impl UpdateRow {
    /// The row of `u`; its age only if the clocks are `synced`.
    pub fn new(u: &OwnedUpdate, synced: bool) -> UpdateRow {
        let received_ns = u.received.as_nanos();
        UpdateRow {
            peer: u.key.peer.to_string(),
            session: u.key.session,
            seq: u.seq,
            gen_ts_ns: u.gen_ts,
            received_ns,
            probe: u.probe,
            age_ms: synced.then(|| (received_ns as f64 - u.gen_ts as f64) / 1e6),
            payload: std::str::from_utf8(&u.payload).ok().map(str::to_owned),
            payload_hex: hex_of(&u.payload),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_core::{SessionKey, Time};

    fn update(payload: &[u8]) -> OwnedUpdate {
        OwnedUpdate {
            key: SessionKey {
                peer: "127.0.0.1:9".parse().unwrap(),
                session: 0xab,
            },
            seq: 4,
            gen_ts: 1_000_000,
            probe: false,
            payload: payload.to_vec(),
            received: Time::from_nanos(3_500_000),
        }
    }

    #[test]
    fn every_update_has_its_payload_in_hex_and_as_text_when_it_is_utf8() {
        let text = UpdateRow::new(&update(b"t=21.5"), true);
        assert_eq!(text.payload.as_deref(), Some("t=21.5"));
        assert_eq!(text.payload_hex, "743d32312e35");
        assert_eq!(text.age_ms, Some(2.5));
        let bytes = UpdateRow::new(&update(&[0xff, 0x00, 0x7f]), false);
        assert_eq!(
            (bytes.payload.as_deref(), bytes.payload_hex.as_str()),
            (None, "ff007f")
        );
        assert_eq!(bytes.age_ms, None);
        let json = serde_json::to_value(&bytes).unwrap();
        assert_eq!(json["session"], "00000000000000ab");
        assert!(json["payload"].is_null() && json["age_ms"].is_null());
    }
}
