//! Multipath scheduling for ACP sources (sans-IO): which of K paths each update takes.
//!
//! A multipath source has one session, one sequence space and one controller (which sets the
//! total rate); a [`PathScheduler`] decides, for every update, the paths it is sent on. The
//! caller tells the scheduler what it sent where ([`PathScheduler::on_sent`]) and which path each
//! valid ACK came back on ([`PathScheduler::on_ack`]); the scheduler keeps per path the updates
//! in flight and the estimates its rule needs. It never reads a clock or touches a socket.
//!
//! Rules ([`PathRule`]):
//! - **QAware** (thesis §2.4, eq. 2.3 and Algorithm 1): the path `k` with the least
//!   `(n_k + 1)·Ŝ_k`, the expected system time of an update joining `n_k` others. For ACP the
//!   facility is the whole path: `n_k` is the number of updates in flight on it (sent, not yet
//!   acknowledged and not yet given up), the source's own view of the path's queue, which it
//!   knows at once while RTT reports a queue only a round trip late. `Ŝ_k` is the EWMA
//!   (`Ŝ ← α·Ŝ + (1 − α)·X`, α = 0.8, eq. 2.2) of the service time `X_i = RTT_i − W_i`, with
//!   `W_i` the part of update `i`'s round trip spent behind the update acknowledged before it on
//!   the same path: `W_i = max(0, t_prev_ack − t_sent)`, so `X_i = t_ack − max(t_sent,
//!   t_prev_ack)` (for a FIFO bottleneck, the spacing of back-to-back ACKs is the service time).
//! - **minSRTT** (the classic MPTCP default): the path with the least smoothed RTT (same α).
//! - **Round robin**: the usable paths in turn.
//! - **Duplicate**: every update on every path (the monitor keeps the first copy).
//!
//! Paths without an estimate yet are tried first, in index order (each needs one sample), and
//! ties go to the lowest index.
//!
//! **Failure and recovery.** A path is *overdue* when its oldest update in flight has waited
//! longer than `max(2·SRTT_k, 20 ms)` for an ACK. An overdue path gets no updates of its own:
//! the rule chooses among the others (among all, if every path is overdue). It is probed instead:
//! the update being sent also goes to every overdue path whose last probe is at least
//! `max(SRTT_k, 5 ms)` old, so that a path that comes back is seen within about two of its round
//! trips. The first ACK on a path clears its overdue state. Because paths are FIFO, an ACK also
//! gives up every update sent on that path before the acknowledged one (lost or overtaken).
//! Updates lost to a failure are thus those in flight on the failed path plus at most those sent
//! there before it was found overdue (for QAware fewer: each unanswered update raises `n_k`).
//!
//! State is bounded: at most [`MAX_IN_FLIGHT`] updates are remembered per path (the oldest are
//! given up first) and at most [`MAX_PATHS`] paths are scheduled.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::ewma::Ewma;
use crate::time::Time;

/// Most paths one scheduler handles (a [`PathSet`] is a 64-bit mask).
pub const MAX_PATHS: usize = 64;
/// Most updates remembered in flight per path.
pub const MAX_IN_FLIGHT: usize = 1024;
/// QAware's EWMA coefficient α on the previous estimate (thesis eq. 2.2); the scheduler's SRTT
/// uses it too.
pub const ALPHA: f64 = 0.8;
/// Shortest wait for an ACK before a path counts as overdue (timer granularity and scheduling
/// noise on a loaded host must not look like a failure).
pub const MIN_OVERDUE: Duration = Duration::from_millis(20);
/// Shortest interval between two probes of an overdue path.
pub const MIN_PROBE_INTERVAL: Duration = Duration::from_millis(5);

/// The rule that picks a path for each update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathRule {
    /// The least `(n_k + 1)·Ŝ_k` (thesis eq. 2.3).
    QAware,
    /// The least smoothed RTT.
    MinSrtt,
    /// The paths in turn.
    RoundRobin,
    /// Every update on every path.
    Duplicate,
}

impl PathRule {
    /// Every rule, in the order documentation lists them.
    pub const ALL: [PathRule; 4] = [
        PathRule::QAware,
        PathRule::MinSrtt,
        PathRule::RoundRobin,
        PathRule::Duplicate,
    ];

    /// Its name in every input and output: `qaware`, `minsrtt`, `roundrobin`, `duplicate`.
    pub const fn name(self) -> &'static str {
        match self {
            PathRule::QAware => "qaware",
            PathRule::MinSrtt => "minsrtt",
            PathRule::RoundRobin => "roundrobin",
            PathRule::Duplicate => "duplicate",
        }
    }
}

impl fmt::Display for PathRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PathRule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PathRule::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = PathRule::ALL.iter().map(|k| k.name()).collect();
                format!("unknown scheduler {s:?}; known: {}", names.join(", "))
            })
    }
}

/// A set of path indices (below [`MAX_PATHS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathSet(u64);

impl PathSet {
    /// No path.
    pub const EMPTY: PathSet = PathSet(0);

    /// Adds path `k`.
    fn insert(&mut self, k: usize) {
        self.0 |= 1 << k;
    }

    /// Whether path `k` is in the set.
    pub fn contains(self, k: usize) -> bool {
        k < MAX_PATHS && self.0 & (1 << k) != 0
    }

    /// The paths, lowest index first.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..MAX_PATHS).filter(move |&k| self.contains(k))
    }

    /// How many paths.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One path's state as reported.
#[derive(Debug, Clone, PartialEq)]
pub struct PathStats {
    /// Updates sent on the path (probes of an overdue path and duplicates included).
    pub sent: u64,
    /// Updates acknowledged over the path.
    pub acked: u64,
    /// Updates given up on the path: overtaken by a later ACK on it, or forgotten beyond
    /// [`MAX_IN_FLIGHT`].
    pub given_up: u64,
    /// Updates in flight now (`n_k`).
    pub in_flight: usize,
    /// Smoothed RTT (s), once known.
    pub srtt: Option<f64>,
    /// QAware's service estimate `Ŝ_k` (s), once known.
    pub service: Option<f64>,
    /// Whether the path is overdue now (no ACK for too long: probed, not scheduled).
    pub overdue: bool,
    /// Times the path became overdue.
    pub failures: u64,
    /// When the path last stopped being overdue (its first ACK after a failure).
    pub recovered_at: Option<Time>,
}

#[derive(Debug, Clone)]
struct PathState {
    /// (sequence, send time) of the updates in flight, oldest first.
    in_flight: VecDeque<(u64, Time)>,
    srtt: Ewma,
    service: Ewma,
    last_ack: Option<Time>,
    /// Set while the path is overdue; the last probe sent on it.
    overdue: Option<Option<Time>>,
    sent: u64,
    acked: u64,
    given_up: u64,
    failures: u64,
    recovered_at: Option<Time>,
}

impl PathState {
    fn new() -> Self {
        PathState {
            in_flight: VecDeque::new(),
            srtt: Ewma::new(1.0 - ALPHA),
            service: Ewma::new(1.0 - ALPHA),
            last_ack: None,
            overdue: None,
            sent: 0,
            acked: 0,
            given_up: 0,
            failures: 0,
            recovered_at: None,
        }
    }

    /// How long the oldest update in flight may wait for its ACK.
    fn overdue_after(&self) -> Duration {
        let srtt = self.srtt.get().map_or(Duration::ZERO, |s| {
            Duration::from_secs_f64((2.0 * s).min(3600.0))
        });
        srtt.max(MIN_OVERDUE)
    }

    fn probe_interval(&self) -> Duration {
        let srtt = self
            .srtt
            .get()
            .map_or(Duration::ZERO, |s| Duration::from_secs_f64(s.min(3600.0)));
        srtt.max(MIN_PROBE_INTERVAL)
    }

    /// Whether the oldest update in flight has waited too long for its ACK at `now`.
    fn waited_too_long(&self, now: Time) -> bool {
        self.in_flight
            .front()
            .is_some_and(|&(_, sent)| now >= sent + self.overdue_after())
    }

    /// Marks the path overdue if its oldest update in flight has waited too long at `now`.
    fn check_overdue(&mut self, now: Time) {
        if self.overdue.is_none() && self.waited_too_long(now) {
            self.overdue = Some(None);
            self.failures += 1;
        }
    }

    /// `(n_k + 1)·Ŝ_k`, or `None` without an estimate.
    fn expected_system_time(&self) -> Option<f64> {
        Some((self.in_flight.len() as f64 + 1.0) * self.service.get()?)
    }
}

/// Chooses the paths of each update (see the module documentation).
#[derive(Debug, Clone)]
pub struct PathScheduler {
    rule: PathRule,
    paths: Vec<PathState>,
    /// Round robin: the path after the last one chosen.
    next: usize,
}

impl PathScheduler {
    /// A scheduler under `rule` over `paths` paths (1 to [`MAX_PATHS`]).
    pub fn new(rule: PathRule, paths: usize) -> Result<Self, String> {
        if paths == 0 || paths > MAX_PATHS {
            return Err(format!(
                "a multipath source needs 1 to {MAX_PATHS} paths, got {paths}"
            ));
        }
        Ok(PathScheduler {
            rule,
            paths: vec![PathState::new(); paths],
            next: 0,
        })
    }

    /// The rule in force.
    pub fn rule(&self) -> PathRule {
        self.rule
    }

    /// Number of paths.
    pub fn paths(&self) -> usize {
        self.paths.len()
    }

    /// The paths the update about to be sent at `now` should take: the rule's choice (every
    /// path for [`PathRule::Duplicate`]) plus every overdue path due for a probe. Call
    /// [`PathScheduler::on_sent`] for each path it is then sent on.
    #[must_use]
    pub fn route(&mut self, now: Time) -> PathSet {
        for p in &mut self.paths {
            p.check_overdue(now);
        }
        let mut set = PathSet::EMPTY;
        let all_overdue = self.paths.iter().all(|p| p.overdue.is_some());
        let usable = |p: &PathState| all_overdue || p.overdue.is_none();
        match self.rule {
            PathRule::Duplicate => (0..self.paths.len()).for_each(|k| set.insert(k)),
            PathRule::RoundRobin => {
                let n = self.paths.len();
                if let Some(k) = (0..n)
                    .map(|i| (self.next + i) % n)
                    .find(|&k| usable(&self.paths[k]))
                {
                    set.insert(k);
                    self.next = (k + 1) % n;
                }
            }
            PathRule::QAware => set.insert(self.least(usable, PathState::expected_system_time)),
            PathRule::MinSrtt => set.insert(self.least(usable, |p| p.srtt.get())),
        }
        for (k, p) in self.paths.iter().enumerate() {
            if let Some(last_probe) = p.overdue {
                if last_probe.is_none_or(|t| now >= t + p.probe_interval()) {
                    set.insert(k);
                }
            }
        }
        set
    }

    /// The usable path with the least `cost`; paths without one come first (index order).
    fn least(
        &self,
        usable: impl Fn(&PathState) -> bool,
        cost: impl Fn(&PathState) -> Option<f64>,
    ) -> usize {
        let mut best: Option<(usize, f64)> = None;
        for (k, p) in self.paths.iter().enumerate().filter(|(_, p)| usable(p)) {
            let Some(c) = cost(p) else { return k };
            if best.is_none_or(|(_, b)| c < b) {
                best = Some((k, c));
            }
        }
        best.map_or(0, |(k, _)| k)
    }

    /// Update `seq` was sent on path `k` at `now`.
    pub fn on_sent(&mut self, k: usize, seq: u64, now: Time) {
        let Some(p) = self.paths.get_mut(k) else {
            return;
        };
        if p.in_flight.len() == MAX_IN_FLIGHT {
            p.in_flight.pop_front();
            p.given_up += 1;
        }
        p.in_flight.push_back((seq, now));
        p.sent += 1;
        if let Some(probe) = &mut p.overdue {
            *probe = Some(now);
        }
    }

    /// A valid ACK for update `seq` came back over path `k` at `now`. ACKs for updates the path
    /// does not hold in flight (already given up, or sent elsewhere) only clear its overdue
    /// state: the path works.
    pub fn on_ack(&mut self, k: usize, seq: u64, now: Time) {
        let Some(p) = self.paths.get_mut(k) else {
            return;
        };
        if p.overdue.take().is_some() {
            p.recovered_at = Some(now);
        }
        let Some(i) = p.in_flight.iter().position(|&(s, _)| s == seq) else {
            return;
        };
        let sent = p.in_flight[i].1;
        p.given_up += i as u64;
        p.in_flight.drain(..=i);
        p.acked += 1;
        let rtt = now.nanos_since(sent) as f64 * 1e-9;
        let began = p.last_ack.map_or(sent, |prev| prev.max(sent));
        let service = now.nanos_since(began) as f64 * 1e-9;
        p.srtt.update(rtt);
        p.service.update(service);
        p.last_ack = Some(p.last_ack.map_or(now, |prev| prev.max(now)));
    }

    /// Path `k`'s state at `now`.
    pub fn path_stats(&self, k: usize, now: Time) -> Option<PathStats> {
        let p = self.paths.get(k)?;
        let newly = p.overdue.is_none() && p.waited_too_long(now);
        Some(PathStats {
            sent: p.sent,
            acked: p.acked,
            given_up: p.given_up,
            in_flight: p.in_flight.len(),
            srtt: p.srtt.get(),
            service: p.service.get(),
            overdue: p.overdue.is_some() || newly,
            failures: p.failures + u64::from(newly),
            recovered_at: p.recovered_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Time {
        Time::from_nanos(ms * MS)
    }

    /// A path with `n` updates in flight sent at `sent_ms`, and the given estimates (ms).
    fn path(n: u64, service_ms: Option<f64>, srtt_ms: Option<f64>, sent_ms: u64) -> PathState {
        let mut p = PathState::new();
        p.in_flight = (0..n).map(|i| (i + 1, at(sent_ms))).collect();
        if let Some(s) = service_ms {
            p.service.set(s * 1e-3);
        }
        if let Some(r) = srtt_ms {
            p.srtt.set(r * 1e-3);
        }
        p
    }

    fn set(paths: &[usize]) -> PathSet {
        let mut s = PathSet::EMPTY;
        paths.iter().for_each(|&k| s.insert(k));
        s
    }

    /// One decision per row: the rule, each path's (n_k, Ŝ_k ms, SRTT ms), and the paths the
    /// update must take at t = 1000 ms with every update in flight sent at 995 ms (nothing
    /// overdue).
    #[test]
    fn each_rule_decides_as_written_on_hand_built_states() {
        type Row = (
            PathRule,
            &'static [(u64, Option<f64>, Option<f64>)],
            &'static [usize],
        );
        let rows: &[Row] = &[
            // (0+1)·10 = 10 < (2+1)·4 = 12: the idle slow path.
            (
                PathRule::QAware,
                &[(0, Some(10.0), Some(10.0)), (2, Some(4.0), Some(4.0))],
                &[0],
            ),
            // (0+1)·10 = 10 > (1+1)·4 = 8: the busy fast path.
            (
                PathRule::QAware,
                &[(0, Some(10.0), Some(10.0)), (1, Some(4.0), Some(4.0))],
                &[1],
            ),
            // A tie, (1+1)·5 = (0+1)·10: the lowest index.
            (
                PathRule::QAware,
                &[(1, Some(5.0), Some(5.0)), (0, Some(10.0), Some(10.0))],
                &[0],
            ),
            // A path without an estimate is tried first.
            (
                PathRule::QAware,
                &[(0, Some(5.0), Some(5.0)), (0, None, None)],
                &[1],
            ),
            // QAware sees the queue minSRTT ignores: (9+1)·1 = 10 > 5, but SRTT 2 < 10.
            (
                PathRule::QAware,
                &[(9, Some(1.0), Some(2.0)), (0, Some(5.0), Some(10.0))],
                &[1],
            ),
            (
                PathRule::MinSrtt,
                &[(9, Some(1.0), Some(2.0)), (0, Some(5.0), Some(10.0))],
                &[0],
            ),
            // Ŝ, not SRTT: the path with the longer RTT serves faster.
            (
                PathRule::QAware,
                &[(0, Some(3.0), Some(8.0)), (0, Some(4.0), Some(6.0))],
                &[0],
            ),
            (
                PathRule::MinSrtt,
                &[(0, Some(3.0), Some(8.0)), (0, Some(4.0), Some(6.0))],
                &[1],
            ),
            (
                PathRule::MinSrtt,
                &[(0, Some(3.0), Some(8.0)), (0, None, None)],
                &[1],
            ),
            (
                PathRule::Duplicate,
                &[(0, Some(3.0), Some(8.0)), (4, Some(4.0), Some(6.0))],
                &[0, 1],
            ),
            (
                PathRule::RoundRobin,
                &[(5, Some(3.0), Some(8.0)), (0, Some(4.0), Some(6.0))],
                &[0],
            ),
            (
                PathRule::QAware,
                &[
                    (3, Some(2.0), Some(4.0)),
                    (1, Some(3.0), Some(5.0)),
                    (0, Some(7.0), Some(9.0)),
                ],
                // 8, 6, 7.
                &[1],
            ),
        ];
        for (i, (rule, states, expected)) in rows.iter().enumerate() {
            let mut s = PathScheduler::new(*rule, states.len()).unwrap();
            s.paths = states
                .iter()
                .map(|&(n, service, srtt)| path(n, service, srtt, 995))
                .collect();
            assert_eq!(s.route(at(1000)), set(expected), "row {i}: {rule}");
        }
    }

    #[test]
    fn round_robin_takes_the_paths_in_turn_and_skips_an_overdue_one() {
        let mut s = PathScheduler::new(PathRule::RoundRobin, 3).unwrap();
        let picks: Vec<PathSet> = (0..4).map(|_| s.route(at(0))).collect();
        assert_eq!(picks, [set(&[0]), set(&[1]), set(&[2]), set(&[0])]);
        // Path 1 has waited 100 ms > max(2·10 ms, 20 ms) for its ACK: overdue, so it is
        // skipped by the rule and probed.
        s.paths[1] = path(1, Some(10.0), Some(10.0), 0);
        assert_eq!(s.route(at(100)), set(&[1, 2]));
        assert_eq!(s.route(at(100)), set(&[0, 1]));
    }

    #[test]
    fn an_overdue_path_is_probed_once_per_srtt_and_returns_on_its_first_ack() {
        let mut s = PathScheduler::new(PathRule::QAware, 2).unwrap();
        // Path 0 is the better one ((0+1)·2 < (0+1)·10) until its update of t = 0 waits
        // 2·SRTT = 20 ms: at 19 ms it is still chosen, at 20 ms it is overdue.
        s.paths = vec![
            path(1, Some(1.0), Some(10.0), 0),
            path(0, Some(10.0), Some(10.0), 0),
        ];
        assert_eq!(s.route(at(19)), set(&[0]));
        assert_eq!(
            s.route(at(20)),
            set(&[0, 1]),
            "the rule's choice and a probe"
        );
        s.on_sent(1, 7, at(20));
        s.on_sent(0, 7, at(20));
        // The next probe waits max(SRTT, 5 ms) = 10 ms.
        assert_eq!(s.route(at(29)), set(&[1]));
        assert_eq!(s.route(at(30)), set(&[0, 1]));
        s.on_sent(0, 8, at(30));
        let stats = s.path_stats(0, at(30)).unwrap();
        assert!(stats.overdue);
        assert_eq!((stats.failures, stats.in_flight), (1, 3));
        // The probe of 30 ms comes back: path 0 is usable again, and the ACK gives up the
        // two updates sent on it before.
        s.on_ack(0, 8, at(35));
        let stats = s.path_stats(0, at(35)).unwrap();
        assert!(!stats.overdue);
        assert_eq!(stats.recovered_at, Some(at(35)));
        assert_eq!((stats.acked, stats.given_up, stats.in_flight), (1, 2, 0));
    }

    #[test]
    fn when_every_path_is_overdue_the_rule_still_chooses_and_all_are_probed() {
        let mut s = PathScheduler::new(PathRule::MinSrtt, 2).unwrap();
        s.paths = vec![
            path(1, Some(1.0), Some(9.0), 0),
            path(1, Some(1.0), Some(4.0), 0),
        ];
        assert_eq!(s.route(at(500)), set(&[0, 1]));
        s.on_sent(0, 3, at(500));
        s.on_sent(1, 3, at(500));
        // Probes wait their interval; the rule's choice (least SRTT) goes on.
        assert_eq!(s.route(at(501)), set(&[1]));
    }

    #[test]
    fn service_is_rtt_minus_the_wait_behind_the_previous_ack() {
        let mut s = PathScheduler::new(PathRule::QAware, 1).unwrap();
        s.on_sent(0, 1, at(0));
        s.on_sent(0, 2, at(0));
        // Update 1: RTT 10 ms, no wait: X = 10 ms.
        s.on_ack(0, 1, at(10));
        // Update 2: RTT 12 ms, of which 10 ms behind update 1: X = 2 ms.
        s.on_ack(0, 2, at(12));
        let stats = s.path_stats(0, at(12)).unwrap();
        // Ŝ = 0.8·10 + 0.2·2 = 8.4 ms; SRTT = 0.8·10 + 0.2·12 = 10.4 ms.
        assert!((stats.service.unwrap() - 8.4e-3).abs() < 1e-12);
        assert!((stats.srtt.unwrap() - 10.4e-3).abs() < 1e-12);
        // Sent after the last ACK: no wait, X = RTT = 6 ms; Ŝ = 0.8·8.4 + 0.2·6 = 7.92 ms.
        s.on_sent(0, 3, at(20));
        s.on_ack(0, 3, at(26));
        let stats = s.path_stats(0, at(26)).unwrap();
        assert!((stats.service.unwrap() - 7.92e-3).abs() < 1e-12);
        assert_eq!((stats.sent, stats.acked, stats.in_flight), (3, 3, 0));
    }

    #[test]
    fn acks_of_updates_not_in_flight_change_no_estimate() {
        let mut s = PathScheduler::new(PathRule::QAware, 2).unwrap();
        s.on_sent(0, 1, at(0));
        s.on_ack(1, 1, at(5));
        s.on_ack(9, 1, at(5));
        let stats = s.path_stats(1, at(5)).unwrap();
        assert_eq!((stats.acked, stats.srtt), (0, None));
        assert_eq!(s.path_stats(0, at(5)).unwrap().in_flight, 1);
        assert!(s.path_stats(2, at(5)).is_none());
    }

    #[test]
    fn in_flight_memory_is_bounded() {
        let mut s = PathScheduler::new(PathRule::RoundRobin, 1).unwrap();
        for seq in 0..(MAX_IN_FLIGHT as u64 + 10) {
            s.on_sent(0, seq, at(0));
        }
        let stats = s.path_stats(0, at(0)).unwrap();
        assert_eq!((stats.in_flight, stats.given_up), (MAX_IN_FLIGHT, 10));
    }

    #[test]
    fn names_round_trip_and_bad_ones_list_the_known() {
        for rule in PathRule::ALL {
            assert_eq!(rule.name().parse::<PathRule>(), Ok(rule));
        }
        let err = "fastest".parse::<PathRule>().unwrap_err();
        assert!(
            err.contains("qaware, minsrtt, roundrobin, duplicate"),
            "{err}"
        );
        assert!(PathScheduler::new(PathRule::QAware, 0).is_err());
        assert!(PathScheduler::new(PathRule::QAware, MAX_PATHS + 1).is_err());
    }
}
