//! Multipath schedulers behind one trait: given what the connection knows of each subflow at
//! `now` ([`SubflowView`]) and of its own send buffer and window ([`ConnectionView`]), pick the
//! subflow for the next segment, or none (wait: every subflow is full, or the rule prefers to
//! wait for a faster subflow).
//!
//! Rules and sources (`docs/MULTIPATH.md` has them in full): [`min_srtt::MinSrtt`] (MPTCP's
//! classic default), [`round_robin::RoundRobin`], [`ecf::Ecf`] (Lim et al., CoNEXT 2017),
//! [`blest::Blest`] (Ferlin et al., IFIP Networking 2016), [`daps::Daps`] (Kuhn et al., ICC
//! 2014), [`qaware::QAware`] (thesis ch. 2, eq. 2.1–2.3, Algorithm 1) and
//! [`linux_default::LinuxDefault`] (upstream `net/mptcp/protocol.c`, `mptcp_subflow_get_send`).

pub mod blest;
pub mod daps;
pub mod ecf;
#[cfg(test)]
mod fixtures;
pub mod linux_default;
pub mod min_srtt;
pub mod qaware;
pub mod round_robin;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use acp_core::Time;

/// What a scheduler may read of one subflow.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SubflowView {
    /// Smoothed RTT, none before the first sample.
    pub srtt: Option<Duration>,
    /// RTT variation (RFC 6298's RTTVAR).
    pub rttvar: Duration,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Bytes sent and not yet acknowledged.
    pub in_flight: u64,
    /// Segment size, bytes.
    pub mss: u64,
    /// Packets in the subflow's device queue (BQL's occupancy, `n_k`).
    pub device_queue_packets: u64,
    /// The device queue's expected wait for a packet joining now (Algorithm 1, lines 5–12).
    pub device_wait: Duration,
    /// Bytes assigned to the subflow and not yet acknowledged, sent or not (Linux's
    /// `sk_wmem_queued`).
    pub queued: u64,
    /// The subflow's own send buffer, bytes (Linux's `sk_sndbuf`).
    pub send_buffer: u64,
    /// The subflow's pacing rate, bytes per second (Linux's `sk_pacing_rate`).
    pub pacing_rate: f64,
    /// A backup subflow, used only when no other is active (RFC 8684 §3.3.8).
    pub backup: bool,
}

impl SubflowView {
    /// A subflow with window `cwnd`, `in_flight` bytes out and RTT `srtt`; everything else
    /// neutral (empty device queue, ample send buffer, pacing at cwnd/srtt, not a backup). The
    /// fields are public to set the rest.
    pub fn new(srtt: Duration, cwnd: u64, in_flight: u64, mss: u64) -> Self {
        let rate = if srtt.is_zero() {
            0.0
        } else {
            cwnd as f64 / srtt.as_secs_f64()
        };
        SubflowView {
            srtt: Some(srtt),
            rttvar: srtt / 2,
            cwnd,
            in_flight,
            mss,
            device_queue_packets: 0,
            device_wait: Duration::ZERO,
            queued: in_flight,
            send_buffer: u64::MAX,
            pacing_rate: rate,
            backup: false,
        }
    }

    /// Whether the window admits one more segment.
    pub fn has_window_space(&self) -> bool {
        self.in_flight + self.mss <= self.cwnd
    }

    /// SRTT in seconds (zero before the first sample).
    fn srtt_secs(&self) -> f64 {
        self.srtt.map_or(0.0, |r| r.as_secs_f64())
    }

    /// The SRTT used for comparisons: a subflow without a sample ranks last.
    fn srtt_or_max(&self) -> Duration {
        self.srtt.unwrap_or(Duration::MAX)
    }
}

/// What a scheduler may read of the connection.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ConnectionView {
    /// Bytes in the shared send buffer not yet assigned to any subflow.
    pub unassigned: u64,
    /// The connection-level send window (the peer's receive window), bytes.
    pub send_window: u64,
}

impl ConnectionView {
    /// `unassigned` bytes waiting under a connection window of `send_window` bytes.
    pub fn new(unassigned: u64, send_window: u64) -> Self {
        ConnectionView {
            unassigned,
            send_window,
        }
    }
}

/// A multipath scheduler. `pick` is called once per segment to place; a scheduler may keep state
/// between calls (estimates, a position in a cycle).
pub trait Scheduler: fmt::Debug + Send {
    /// The subflow (index into `subflows`) for the next segment, or `None` to wait.
    fn pick(&mut self, now: Time, subflows: &[SubflowView], conn: &ConnectionView)
        -> Option<usize>;

    /// Bytes a decision hands the chosen subflow at most: one segment unless the rule gives
    /// bursts (the connection also caps it by what is unassigned, its window and the subflow's
    /// send buffer).
    fn burst(&self, mss: u64) -> u64 {
        mss
    }
}

/// The subflow with window space and the least SRTT among non-backup subflows, or among backup
/// ones if no non-backup subflow has space: minSRTT's rule, and the fallback of ECF and BLEST.
pub fn fastest_with_space(subflows: &[SubflowView]) -> Option<usize> {
    [false, true].into_iter().find_map(|backup| {
        subflows
            .iter()
            .enumerate()
            .filter(|(_, s)| s.backup == backup && s.has_window_space())
            .min_by_key(|(_, s)| s.srtt_or_max())
            .map(|(i, _)| i)
    })
}

/// The non-backup subflow with the least SRTT, space or not (ECF's and BLEST's "fast subflow").
pub fn fastest(subflows: &[SubflowView]) -> Option<usize> {
    subflows
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.backup)
        .min_by_key(|(_, s)| s.srtt_or_max())
        .map(|(i, _)| i)
}

/// The first step ECF and BLEST share: send on the fastest subflow if it has space, on the best
/// subflow with space if either RTT is unknown, nothing if no subflow has space; otherwise the
/// rule must weigh the full fast subflow against the slower one with space.
pub enum FastOrSlow {
    /// The pick (or wait) is already decided.
    Decided(Option<usize>),
    /// Fast subflow full, `slow` has space, both RTTs known.
    Weigh {
        /// The non-backup subflow with the least SRTT.
        fast: usize,
        /// The subflow with space and the least SRTT.
        slow: usize,
    },
}

/// See [`FastOrSlow`].
pub fn fast_or_slow(subflows: &[SubflowView]) -> FastOrSlow {
    let Some(fast) = fastest(subflows) else {
        return FastOrSlow::Decided(None);
    };
    if subflows[fast].has_window_space() {
        return FastOrSlow::Decided(Some(fast));
    }
    let Some(slow) = fastest_with_space(subflows) else {
        return FastOrSlow::Decided(None);
    };
    if subflows[fast].srtt.is_none() || subflows[slow].srtt.is_none() {
        return FastOrSlow::Decided(Some(slow));
    }
    FastOrSlow::Weigh { fast, slow }
}

/// The schedulers by name, as scenario files and the CLI spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    /// `minsrtt`
    MinSrtt,
    /// `round-robin`
    RoundRobin,
    /// `ecf`
    Ecf,
    /// `blest`
    Blest,
    /// `daps`
    Daps,
    /// `qaware`
    QAware,
    /// `linux-default`
    LinuxDefault,
}

impl SchedulerKind {
    /// Every scheduler, in the order above.
    pub const ALL: [SchedulerKind; 7] = [
        SchedulerKind::MinSrtt,
        SchedulerKind::RoundRobin,
        SchedulerKind::Ecf,
        SchedulerKind::Blest,
        SchedulerKind::Daps,
        SchedulerKind::QAware,
        SchedulerKind::LinuxDefault,
    ];

    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::MinSrtt => "minsrtt",
            SchedulerKind::RoundRobin => "round-robin",
            SchedulerKind::Ecf => "ecf",
            SchedulerKind::Blest => "blest",
            SchedulerKind::Daps => "daps",
            SchedulerKind::QAware => "qaware",
            SchedulerKind::LinuxDefault => "linux-default",
        }
    }

    /// A fresh scheduler of this kind with its published parameters.
    pub fn build(self) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::MinSrtt => Box::new(min_srtt::MinSrtt),
            SchedulerKind::RoundRobin => Box::<round_robin::RoundRobin>::default(),
            SchedulerKind::Ecf => Box::<ecf::Ecf>::default(),
            SchedulerKind::Blest => Box::<blest::Blest>::default(),
            SchedulerKind::Daps => Box::<daps::Daps>::default(),
            SchedulerKind::QAware => Box::<qaware::QAware>::default(),
            SchedulerKind::LinuxDefault => Box::<linux_default::LinuxDefault>::default(),
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown scheduler name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown multipath scheduler {0:?} (expected one of minsrtt, round-robin, ecf, blest, daps, qaware, linux-default)")]
pub struct UnknownScheduler(pub String);

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchedulerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownScheduler(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for k in SchedulerKind::ALL {
            assert_eq!(k.name().parse::<SchedulerKind>(), Ok(k));
        }
        assert!("fastest".parse::<SchedulerKind>().is_err());
    }
}
