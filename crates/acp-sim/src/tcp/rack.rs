//! RACK, the time-based loss detection of RFC 8985 §6, as Linux's `tcp_recovery.c` runs it:
//! a segment is lost once a segment sent after it has been delivered and a reordering window
//! has passed since that delivery would have been due.
//!
//! The sender tells [`Rack`] of every segment newly delivered (SACKed, or cumulatively
//! acknowledged without having been SACKed) with its latest send time; RACK remembers the most
//! recently sent of them (`RACK.xmit_ts`, `RACK.end_seq`) and the RTT it measured
//! (`RACK.rtt`). A segment not yet delivered and sent before that one is lost when
//! `xmit_ts + RACK.rtt + reo_wnd ≤ now` ([`Rack::verdict`]); otherwise the sender arms the
//! reordering timer for the time left. Retransmissions are judged by their latest send time, so
//! a lost retransmission is found as a lost original is, without waiting for the RTO.
//!
//! The reordering window (`RACK_update_reo_wnd`, Linux's `tcp_rack_reo_wnd`) is a quarter of
//! the minimum RTT, at most SRTT, and zero before any reordering has been seen while the sender
//! is recovering or at least DupThresh segments are SACKed (then RACK marks as fast as the
//! DupThresh rule of RFC 6675 would). Reordering is seen when a segment never retransmitted is
//! delivered below the highest sequence SACKed by an earlier ACK. Without D-SACK in the model the window
//! never widens (its multiplier stays 1). An ACK of a retransmitted segment that comes back
//! sooner than the minimum RTT is taken to acknowledge the original and is ignored (RFC 8985
//! §6.2 step 2).

use std::time::Duration;

use acp_core::Time;

/// SACKed segments after which, with no reordering seen, the window closes (RFC 6675's
/// DupThresh).
pub const DUP_THRESH: u64 = 3;

/// What RACK says of a segment not yet delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It was sent no earlier than the most recently sent delivered segment: RACK has no
    /// opinion.
    SentLater,
    /// It is lost.
    Lost,
    /// It is lost unless delivered within this time.
    Wait(Duration),
}

/// RACK's state.
#[derive(Debug, Clone, Default)]
pub struct Rack {
    /// Send time and end of the most recently sent segment delivered (`RACK.xmit_ts`,
    /// `RACK.end_seq`).
    latest: Option<(Time, u64)>,
    /// The RTT that segment measured (`RACK.rtt`).
    rtt: Duration,
    /// The highest end SACKed or acknowledged (`RACK.fack`).
    fack: u64,
    /// `fack` before the ACK being processed.
    prior_fack: u64,
    /// Whether a segment never retransmitted was delivered below `fack`.
    reordering_seen: bool,
}

/// Whether `(t1, end1)` was sent after `(t2, end2)`: later, or at the same instant further on
/// in the stream (RFC 8985's `RACK_sent_after`).
fn sent_after(t1: Time, end1: u64, t2: Time, end2: u64) -> bool {
    t1 > t2 || (t1 == t2 && end1 > end2)
}

impl Rack {
    /// An ACK is about to report deliveries: reordering is judged against what was delivered
    /// before it (Linux's `prior_fack`), so the blocks of one ACK may come in any order.
    pub fn new_ack(&mut self) {
        self.prior_fack = self.fack;
    }

    /// The segment ending at `end`, last sent at `sent_at` (`retransmitted` if ever resent),
    /// was delivered at `now`; `min_rtt` is the connection's minimum RTT.
    pub fn delivered(
        &mut self,
        now: Time,
        end: u64,
        sent_at: Time,
        retransmitted: bool,
        min_rtt: Option<Duration>,
    ) {
        if !retransmitted && end <= self.prior_fack {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(end);
        let rtt = now.saturating_since(sent_at);
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        if self
            .latest
            .is_none_or(|(t, e)| sent_after(sent_at, end, t, e))
        {
            self.latest = Some((sent_at, end));
            self.rtt = rtt;
        }
    }

    /// The reordering window: `recovering` if the sender is in fast or RTO recovery, with
    /// `sacked` segments SACKed.
    pub fn reo_wnd(
        &self,
        recovering: bool,
        sacked: u64,
        min_rtt: Option<Duration>,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (recovering || sacked >= DUP_THRESH) {
            return Duration::ZERO;
        }
        match (min_rtt, srtt) {
            (Some(m), Some(s)) => (m / 4).min(s),
            _ => Duration::ZERO,
        }
    }

    /// Its verdict at `now` on a segment ending at `end`, last sent at `sent_at`, with the
    /// reordering window `reo_wnd`.
    pub fn verdict(&self, now: Time, end: u64, sent_at: Time, reo_wnd: Duration) -> Verdict {
        match self.latest {
            Some((t, e)) if sent_after(t, e, sent_at, end) => {
                let due = sent_at + self.rtt + reo_wnd;
                if due <= now {
                    Verdict::Lost
                } else {
                    Verdict::Wait(due.saturating_since(now))
                }
            }
            _ => Verdict::SentLater,
        }
    }

    /// Whether reordering has been seen.
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn a_segment_is_lost_once_a_later_one_is_delivered_and_the_window_has_passed() {
        let mut r = Rack::default();
        // Segments end at 1000, 2000, 3000, sent at 0, 1, 2 ms; the third is SACKed at 52 ms.
        r.delivered(ms(52), 3000, ms(2), false, None);
        let d = |v| Duration::from_millis(v);
        // RACK.rtt = 50 ms: the first is due at 0 + 50 + window.
        assert_eq!(r.verdict(ms(52), 1000, ms(0), d(0)), Verdict::Lost);
        assert_eq!(r.verdict(ms(52), 1000, ms(0), d(12)), Verdict::Wait(d(10)));
        assert_eq!(r.verdict(ms(52), 4000, ms(3), d(0)), Verdict::SentLater);
        // Same instant, further on in the stream: sent later.
        assert_eq!(r.verdict(ms(52), 3500, ms(2), d(0)), Verdict::SentLater);
    }

    #[test]
    fn the_window_is_a_quarter_of_the_minimum_rtt_until_dup_thresh_sacks() {
        let mut r = Rack::default();
        let (min, srtt) = (
            Some(Duration::from_millis(40)),
            Some(Duration::from_millis(60)),
        );
        assert_eq!(r.reo_wnd(false, 2, min, srtt), Duration::from_millis(10));
        assert_eq!(r.reo_wnd(false, 3, min, srtt), Duration::ZERO);
        assert_eq!(r.reo_wnd(true, 0, min, srtt), Duration::ZERO);
        // A segment never resent delivered below the highest SACKed: reordering.
        r.new_ack();
        r.delivered(ms(50), 5000, ms(1), false, min);
        r.delivered(ms(50), 1000, ms(0), false, min);
        assert!(!r.reordering_seen(), "one ACK's blocks in any order");
        r.new_ack();
        r.delivered(ms(51), 2000, ms(0), false, min);
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(true, 9, min, srtt), Duration::from_millis(10));
        assert_eq!(
            r.reo_wnd(true, 9, min, Some(Duration::from_millis(8))),
            Duration::from_millis(8)
        );
    }

    #[test]
    fn an_ack_sooner_than_the_minimum_rtt_for_a_retransmission_is_the_originals() {
        let mut r = Rack::default();
        let min = Some(Duration::from_millis(40));
        r.delivered(ms(100), 1000, ms(90), true, min);
        assert_eq!(
            r.verdict(ms(100), 500, ms(0), Duration::ZERO),
            Verdict::SentLater
        );
        r.delivered(ms(140), 1000, ms(90), true, min);
        assert_eq!(
            r.verdict(ms(140), 500, ms(0), Duration::ZERO),
            Verdict::Lost
        );
    }
}
