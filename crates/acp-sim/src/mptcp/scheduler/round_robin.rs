//! Round-robin (Linux MPTCP v0.9x's `roundrobin` scheduler without its burst option): the
//! subflows in turn, starting after the one picked last, skipping those without window space.

use acp_core::Time;

use super::{ConnectionView, Scheduler, SubflowView};

/// Subflows in turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundRobin {
    last: Option<usize>,
}

impl Scheduler for RoundRobin {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        _conn: &ConnectionView,
    ) -> Option<usize> {
        let n = subflows.len();
        let first = self.last.map_or(0, |l| l + 1);
        let chosen = (0..n)
            .map(|k| (first + k) % n)
            .find(|&i| subflows[i].has_window_space())?;
        self.last = Some(chosen);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{backlog, flow};
    use super::*;

    #[test]
    fn takes_turns_and_skips_full_subflows() {
        let conn = backlog(100);
        let mut s = RoundRobin::default();
        let flows = [flow(10, 10, 0), flow(90, 10, 0), flow(30, 10, 0)];
        let order: Vec<_> = (0..6)
            .map(|_| s.pick(Time::ZERO, &flows, &conn).unwrap())
            .collect();
        assert_eq!(order, [0, 1, 2, 0, 1, 2]);
        let flows = [flow(10, 10, 0), flow(90, 10, 10), flow(30, 10, 0)];
        let order: Vec<_> = (0..4)
            .map(|_| s.pick(Time::ZERO, &flows, &conn).unwrap())
            .collect();
        assert_eq!(order, [0, 2, 0, 2]);
    }
}
