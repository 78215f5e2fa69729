//! BLEST, blocking-estimation scheduling (Ferlin, Alay, Mehani and Boreli, IFIP Networking
//! 2016, §III): when the fastest subflow f has no window space and the best subflow with space
//! is s, BLEST estimates the bytes f could send during one RTT of s, growing its window by one
//! segment per round trip: with `rtts = rtt_s / rtt_f`,
//! `X = MSS_f · (cwnd_f/MSS_f + (rtts − 1)/2) · rtts`. If `X·λ` exceeds what the
//! connection-level send window |M| leaves once s's segment is in flight
//! (`|M| − MSS_s·(inflight_s + 1)`), sending on s would block f behind it in the receive
//! buffer: BLEST waits for f. λ is the paper's correction factor; we keep its starting value 1
//! (the paper adapts it by ±0.1 on observed blocking; that feedback loop is not modelled).

use acp_core::Time;

use super::{fast_or_slow, ConnectionView, FastOrSlow, Scheduler, SubflowView};

/// BLEST with a fixed λ.
#[derive(Debug, Clone, Copy)]
pub struct Blest {
    lambda: f64,
}

impl Default for Blest {
    /// λ = 1.
    fn default() -> Self {
        Blest { lambda: 1.0 }
    }
}

impl Scheduler for Blest {
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
        let rtts = slow.srtt_secs() / fast.srtt_secs().max(f64::MIN_POSITIVE);
        let mss_f = fast.mss.max(1) as f64;
        let x = mss_f * (fast.cwnd as f64 / mss_f + (rtts - 1.0) / 2.0) * rtts;
        let left = conn.send_window as f64 - (slow.in_flight + slow.mss) as f64;
        (x * self.lambda <= left).then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{flow, MSS};
    use super::*;

    /// Fast 10 ms path (window of 10 segments, full), slow 100 ms path: during one slow RTT the
    /// fast path could send X = 1000·(10 + 4.5)·10 = 145 kB. A 64 kB connection window cannot
    /// hold that beside the slow segment, so BLEST waits; a 1 MB window can, so it sends.
    #[test]
    fn waits_when_the_window_cannot_cover_the_fast_path_during_a_slow_rtt() {
        let flows = [flow(10, 10, 10), flow(100, 10, 0)];
        let small = ConnectionView::new(100 * MSS, 64_000);
        assert_eq!(Blest::default().pick(Time::ZERO, &flows, &small), None);
        let large = ConnectionView::new(100 * MSS, 1_000_000);
        assert_eq!(Blest::default().pick(Time::ZERO, &flows, &large), Some(1));
    }

    /// Equal RTTs: rtts = 1, X = cwnd_f, so with a window above two windows' worth BLEST uses
    /// the second path like minSRTT would.
    #[test]
    fn equal_paths_are_both_used() {
        let flows = [flow(20, 10, 10), flow(20, 10, 0)];
        let conn = ConnectionView::new(100 * MSS, 64_000);
        assert_eq!(Blest::default().pick(Time::ZERO, &flows, &conn), Some(1));
    }
}
