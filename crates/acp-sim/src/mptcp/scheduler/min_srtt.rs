//! minSRTT, the classic MPTCP default (out-of-tree Linux MPTCP v0.8x–0.9x `mptcp_sched.c`,
//! Raiciu et al., NSDI 2012): the subflow with window space and the least smoothed RTT;
//! backup subflows only when no other has space.

use acp_core::Time;

use super::{fastest_with_space, ConnectionView, Scheduler, SubflowView};

/// Least SRTT among subflows with window space.
#[derive(Debug, Clone, Copy, Default)]
pub struct MinSrtt;

impl Scheduler for MinSrtt {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        _conn: &ConnectionView,
    ) -> Option<usize> {
        fastest_with_space(subflows)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{backlog, flow, MSS};
    use super::*;

    /// The fast path is filled first; the slow one gets data only once the fast window is full.
    #[test]
    fn fills_the_fast_path_first() {
        let conn = backlog(100);
        let mut s = MinSrtt;
        let mut flows = [flow(80, 10, 0), flow(20, 10, 0)];
        for _ in 0..10 {
            assert_eq!(s.pick(Time::ZERO, &flows, &conn), Some(1));
            flows[1].in_flight += MSS;
        }
        assert_eq!(s.pick(Time::ZERO, &flows, &conn), Some(0));
        flows[0].in_flight = flows[0].cwnd;
        assert_eq!(s.pick(Time::ZERO, &flows, &conn), None);
    }

    #[test]
    fn a_backup_subflow_serves_only_when_the_others_are_full() {
        let conn = backlog(100);
        let mut backup = flow(10, 10, 0);
        backup.backup = true;
        let flows = [backup, flow(50, 10, 0)];
        assert_eq!(MinSrtt.pick(Time::ZERO, &flows, &conn), Some(1));
        let flows = [backup, flow(50, 10, 10)];
        assert_eq!(MinSrtt.pick(Time::ZERO, &flows, &conn), Some(0));
    }
}
