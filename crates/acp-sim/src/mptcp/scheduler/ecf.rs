//! ECF, Earliest Completion First (Lim, Nahum, Towsley and Gibbens, CoNEXT 2017, Algorithm 1):
//! when the fastest subflow f has no window space, ECF asks whether waiting for f would finish
//! the k unassigned bytes sooner than sending on the best subflow s that has space. With
//! `n = 1 + k/cwnd_f` round trips of f needed and `δ = max(rttvar_f, rttvar_s)`:
//!
//! - if `n·rtt_f < (1 + waiting·β)(rtt_s + δ)` and `(k/cwnd_s)·rtt_s ≥ 2·rtt_f + δ`: wait for f
//!   (and remember `waiting = 1`, the hysteresis of β = 0.25);
//! - otherwise send on s (and clear `waiting` when the first test failed).

use acp_core::Time;

use super::{fast_or_slow, ConnectionView, FastOrSlow, Scheduler, SubflowView};

/// ECF with its hysteresis state.
#[derive(Debug, Clone, Copy)]
pub struct Ecf {
    beta: f64,
    waiting: bool,
}

impl Default for Ecf {
    /// β = 0.25, the paper's value.
    fn default() -> Self {
        Ecf {
            beta: 0.25,
            waiting: false,
        }
    }
}

impl Scheduler for Ecf {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        conn: &ConnectionView,
    ) -> Option<usize> {
        let (fast, slow, s) = match fast_or_slow(subflows) {
            FastOrSlow::Decided(pick) => return pick,
            FastOrSlow::Weigh { fast, slow } => (&subflows[fast], &subflows[slow], slow),
        };
        let (rtt_f, rtt_s) = (fast.srtt_secs(), slow.srtt_secs());
        let delta = fast.rttvar.max(slow.rttvar).as_secs_f64();
        let k = conn.unassigned as f64;
        let n = 1.0 + k / fast.cwnd.max(1) as f64;
        let hysteresis = if self.waiting { 1.0 + self.beta } else { 1.0 };
        if n * rtt_f < hysteresis * (rtt_s + delta) {
            if k / slow.cwnd.max(1) as f64 * rtt_s >= 2.0 * rtt_f + delta {
                self.waiting = true;
                return None;
            }
            return Some(s);
        }
        self.waiting = false;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::fixtures::{backlog, flow};
    use super::*;

    fn paths() -> [SubflowView; 2] {
        let mut fast = flow(10, 10, 10);
        let mut slow = flow(100, 10, 0);
        fast.rttvar = Duration::from_millis(1);
        slow.rttvar = Duration::from_millis(1);
        [fast, slow]
    }

    /// Five segments left: the full fast path (10 ms) finishes them in 1.5 of its RTTs, far
    /// sooner than one 100 ms round trip of the slow path, so ECF waits rather than sending
    /// them to arrive late and block the receiver.
    #[test]
    fn waits_for_the_fast_path_when_the_slow_one_is_much_slower() {
        assert_eq!(Ecf::default().pick(Time::ZERO, &paths(), &backlog(5)), None);
    }

    /// A thousand segments left: the fast path alone needs 101 RTTs (1.01 s), so the slow
    /// path's capacity is worth using.
    #[test]
    fn uses_the_slow_path_for_a_long_backlog() {
        assert_eq!(
            Ecf::default().pick(Time::ZERO, &paths(), &backlog(1_000)),
            Some(1)
        );
    }

    #[test]
    fn sends_on_the_fast_path_whenever_it_has_space() {
        let mut p = paths();
        p[0].in_flight = 0;
        assert_eq!(Ecf::default().pick(Time::ZERO, &p, &backlog(5)), Some(0));
    }
}
