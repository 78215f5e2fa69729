//! DAPS, delay-aware packet scheduling (Kuhn, Lochin, Mifdaoui, Sarwar, Mehani and Boreli, ICC
//! 2014): a schedule computed once per cycle from the subflows' RTT ratios and windows, so that
//! segments sent on paths of different delay arrive in sequence order. Our model of it:
//!
//! - at the start of a cycle each subflow k gets a quota of `w_k · ⌈rtt_max / rtt_k⌉` segments
//!   (`w_k` its window in segments): the fast path sends a window per round trip of its own for
//!   as many round trips as fit in the slowest path's one;
//! - within the cycle each segment goes to the subflow with quota left whose next segment is
//!   expected to arrive first, `rtt_k · (1 + used_k / w_k)` (a window per round trip), ties to
//!   the lower index;
//! - the schedule is fixed for the cycle: if that subflow has no window space DAPS waits rather
//!   than re-plan (the inertia the thesis (§2.2) holds against it); a new cycle starts when every
//!   quota is used.

use acp_core::Time;

use super::{ConnectionView, Scheduler, SubflowView};

/// DAPS with the current cycle's plan.
#[derive(Debug, Clone, Default)]
pub struct Daps {
    quota: Vec<u64>,
    used: Vec<u64>,
    window: Vec<f64>,
    rtt: Vec<f64>,
}

impl Daps {
    fn plan(&mut self, subflows: &[SubflowView]) {
        let rtt: Vec<f64> = subflows.iter().map(SubflowView::srtt_secs).collect();
        let slowest = rtt.iter().copied().fold(0.0, f64::max);
        self.window = subflows
            .iter()
            .map(|s| (s.cwnd / s.mss.max(1)).max(1) as f64)
            .collect();
        self.quota = rtt
            .iter()
            .zip(&self.window)
            .map(|(&r, &w)| {
                if r > 0.0 {
                    w as u64 * (slowest / r).ceil() as u64
                } else {
                    w as u64
                }
            })
            .collect();
        self.used = vec![0; subflows.len()];
        self.rtt = rtt;
    }

    fn cycle_over(&self, n: usize) -> bool {
        self.quota.len() != n || self.used.iter().zip(&self.quota).all(|(u, q)| u >= q)
    }
}

impl Scheduler for Daps {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        _conn: &ConnectionView,
    ) -> Option<usize> {
        if self.cycle_over(subflows.len()) {
            self.plan(subflows);
        }
        let arrival = |k: usize| self.rtt[k] * (1.0 + self.used[k] as f64 / self.window[k]);
        let next = (0..subflows.len())
            .filter(|&k| self.used[k] < self.quota[k])
            .min_by(|&a, &b| arrival(a).total_cmp(&arrival(b)))?;
        if !subflows[next].has_window_space() {
            return None;
        }
        self.used[next] += 1;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{backlog, flow};
    use super::*;

    /// RTTs 10 ms and 40 ms, windows of two segments: per cycle the fast path gets 2·4 = 8
    /// segments and the slow one 2, in arrival order: the fast path's segments arrive at 10, 15,
    /// …, 45 ms, the slow path's first at 40 ms, so it follows the fast path's seven that
    /// arrive by 40 ms (the tie at 40 ms goes to the lower index).
    #[test]
    fn splits_by_rtt_ratio_in_arrival_order() {
        let flows = [flow(10, 2, 0), flow(40, 2, 0)];
        let mut s = Daps::default();
        let picks: Vec<_> = (0..10)
            .map(|_| s.pick(Time::ZERO, &flows, &backlog(100)).unwrap())
            .collect();
        assert_eq!(picks.iter().filter(|&&k| k == 0).count(), 8);
        assert_eq!(picks.iter().position(|&k| k == 1), Some(7));
    }

    /// The plan stands: when the planned subflow is full DAPS waits even if the other has space.
    #[test]
    fn waits_for_the_planned_subflow() {
        let flows = [flow(10, 2, 2), flow(40, 2, 0)];
        assert_eq!(
            Daps::default().pick(Time::ZERO, &flows, &backlog(100)),
            None
        );
    }
}
