//! A model of upstream Linux's `default` MPTCP scheduler (`net/mptcp/protocol.c`,
//! `mptcp_subflow_get_send`, read in the kernel source; the same rule as the kernel's BPF
//! `burst` example scheduler). Per decision:
//!
//! - every subflow has a smoothed pacing rate `avg_pacing_rate`, initialised from its socket's
//!   pacing rate (a subflow whose rate is still zero is skipped);
//! - its linger time is `sk_wmem_queued / avg_pacing_rate`, the time to drain what is already
//!   queued on it; the subflow with the least linger time wins, separately among non-backup and
//!   backup subflows (ties: the first); backups are used only when no non-backup subflow exists;
//! - the winner must have send-buffer space (`sk_stream_memory_free`: `sk_wmem_queued <
//!   sk_sndbuf`), else nothing is sent;
//! - it is given a burst of `min(MPTCP_SEND_BURST_SIZE, connection window left)` bytes
//!   (65 428 = 2¹⁶ minus TCP, option, IPv6 and fragment headers), and its `avg_pacing_rate`
//!   becomes `(avg·wmem + pacing·burst) / (burst + wmem)`.
//!
//! The kernel does not look at the congestion window here: data joins the subflow's write
//! queue and TCP sends it as the window allows. In our views `queued` plays `sk_wmem_queued`.

use acp_core::Time;

use super::{ConnectionView, Scheduler, SubflowView};

/// `MPTCP_SEND_BURST_SIZE` for IPv6-sized headers, bytes.
pub const SEND_BURST_BYTES: u64 = (1 << 16) - 20 - 40 - 40 - 8;

/// The default scheduler with each subflow's smoothed pacing rate (bytes per second).
#[derive(Debug, Clone, Default)]
pub struct LinuxDefault {
    avg_pacing_rate: Vec<f64>,
}

impl Scheduler for LinuxDefault {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        conn: &ConnectionView,
    ) -> Option<usize> {
        self.avg_pacing_rate.resize(subflows.len(), 0.0);
        let mut best: [Option<(usize, f64)>; 2] = [None, None];
        for (k, s) in subflows.iter().enumerate() {
            if self.avg_pacing_rate[k] <= 0.0 {
                self.avg_pacing_rate[k] = s.pacing_rate;
            }
            let pace = self.avg_pacing_rate[k];
            if pace <= 0.0 {
                continue;
            }
            let linger = s.queued as f64 / pace;
            let slot = &mut best[usize::from(s.backup)];
            if slot.is_none_or(|(_, b)| linger < b) {
                *slot = Some((k, linger));
            }
        }
        let any_active = subflows.iter().any(|s| !s.backup);
        let (chosen, _) = if any_active { best[0] } else { best[1] }?;
        let s = &subflows[chosen];
        if s.queued >= s.send_buffer {
            return None;
        }
        let burst = SEND_BURST_BYTES.min(conn.send_window) as f64;
        if burst > 0.0 {
            let wmem = s.queued as f64;
            let avg = &mut self.avg_pacing_rate[chosen];
            *avg = (*avg * wmem + s.pacing_rate * burst) / (burst + wmem);
        }
        Some(chosen)
    }

    fn burst(&self, _mss: u64) -> u64 {
        SEND_BURST_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{backlog, flow, MSS};
    use super::*;

    /// Linger time, not RTT: a 10 ms path with 100 kB queued at 1 MB/s (100 ms to drain) loses
    /// to a 50 ms path with 20 kB queued at 1 MB/s (20 ms).
    #[test]
    fn picks_the_least_linger_time() {
        let mut fast = flow(10, 100, 0);
        let mut slow = flow(50, 100, 0);
        fast.queued = 100 * MSS;
        slow.queued = 20 * MSS;
        fast.pacing_rate = 1e6;
        slow.pacing_rate = 1e6;
        assert_eq!(
            LinuxDefault::default().pick(Time::ZERO, &[fast, slow], &backlog(10)),
            Some(1)
        );
    }

    /// The chosen subflow's send buffer is full: nothing is sent, even though another subflow
    /// has room (the kernel does not fall back within one decision).
    #[test]
    fn a_full_send_buffer_stops_sending() {
        let mut a = flow(10, 100, 0);
        let mut b = flow(10, 100, 0);
        a.queued = 10 * MSS;
        a.send_buffer = 10 * MSS;
        a.pacing_rate = 1e9;
        b.queued = 10 * MSS;
        b.pacing_rate = 1e6;
        assert_eq!(
            LinuxDefault::default().pick(Time::ZERO, &[a, b], &backlog(10)),
            None
        );
    }

    /// Only backups left: the best backup serves.
    #[test]
    fn backups_serve_only_when_no_active_subflow_exists() {
        let mut a = flow(10, 100, 0);
        let mut b = flow(10, 100, 0);
        a.backup = true;
        b.backup = true;
        b.queued = 0;
        a.queued = MSS;
        assert_eq!(
            LinuxDefault::default().pick(Time::ZERO, &[a, b], &backlog(10)),
            Some(1)
        );
        let mut active = flow(10, 100, 0);
        active.queued = 50 * MSS;
        assert_eq!(
            LinuxDefault::default().pick(Time::ZERO, &[a, b, active], &backlog(10)),
            Some(2)
        );
    }

    /// The smoothed pacing rate moves toward the socket's rate with weight burst/(burst+wmem).
    #[test]
    fn pacing_average_blends_by_burst() {
        let mut a = flow(10, 100, 0);
        a.queued = SEND_BURST_BYTES;
        a.pacing_rate = 1e6;
        let mut s = LinuxDefault::default();
        s.pick(Time::ZERO, &[a], &backlog(1_000));
        a.pacing_rate = 3e6;
        s.pick(Time::ZERO, &[a], &backlog(1_000));
        assert!((s.avg_pacing_rate[0] - 2e6).abs() < 1e-6);
    }
}
