//! QAware (thesis ch. 2, eq. 2.1–2.3 and Algorithm 1): each subflow is a service facility; a
//! packet goes to the subflow that minimises its conditional expected system time
//! `(n_k + 1)·Ŝ_k`, with `n_k` the subflow's device-queue occupancy (read locally, as BQL's
//! counters give it) and `Ŝ_k = RTT_k − Ŵ_k` its service-time estimate: the RTT less the time a
//! packet waits in the device queue. Ŵ_k is an EWMA, coefficient α = 0.8, of the wait
//! `W_k = n_k / (dequeue rate)` (zero on an empty queue), updated for every available subflow on
//! every decision (Algorithm 1, lines 4–15). Available means the window admits a segment.
//!
//! A subflow without an RTT sample yet (the model has no handshake to give one) ranks after
//! every subflow with one, as in minSRTT, so that a new connection can start.
//!
//! Where RTT − Ŵ is not positive (the EWMAs can cross while the queue drains), Ŝ is floored at
//! one microsecond so that occupancy still ranks the subflows; the thesis does not say what its
//! kernel code does there.

use std::time::Duration;

use acp_core::Time;

use super::{ConnectionView, Scheduler, SubflowView};

/// The least Ŝ used, so that `(n_k + 1)·Ŝ_k` still orders by occupancy.
const SERVICE_FLOOR: f64 = 1e-6;

/// QAware with its per-subflow Ŵ estimates (seconds).
#[derive(Debug, Clone)]
pub struct QAware {
    alpha: f64,
    wait: Vec<f64>,
}

impl Default for QAware {
    /// α = 0.8, the thesis's value (§2.4.2).
    fn default() -> Self {
        QAware {
            alpha: 0.8,
            wait: Vec::new(),
        }
    }
}

impl QAware {
    /// The current Ŵ of subflow `k` (zero before its first decision).
    pub fn wait_estimate(&self, k: usize) -> Duration {
        Duration::from_secs_f64(self.wait.get(k).copied().unwrap_or(0.0))
    }
}

impl Scheduler for QAware {
    fn pick(
        &mut self,
        _now: Time,
        subflows: &[SubflowView],
        _conn: &ConnectionView,
    ) -> Option<usize> {
        self.wait.resize(subflows.len(), 0.0);
        let mut best: Option<(usize, f64)> = None;
        let mut unmeasured = None;
        for (k, s) in subflows
            .iter()
            .enumerate()
            .filter(|(_, s)| s.has_window_space())
        {
            let w_hat =
                self.alpha * self.wait[k] + (1.0 - self.alpha) * s.device_wait.as_secs_f64();
            self.wait[k] = w_hat;
            let Some(rtt) = s.srtt else {
                unmeasured.get_or_insert(k);
                continue;
            };
            let service = (rtt.as_secs_f64() - w_hat).max(SERVICE_FLOOR);
            let system = (s.device_queue_packets + 1) as f64 * service;
            if best.is_none_or(|(_, b)| system < b) {
                best = Some((k, system));
            }
        }
        best.map(|(k, _)| k).or(unmeasured)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{backlog, flow};
    use super::super::min_srtt::MinSrtt;
    use super::*;

    /// Eq. 2.1 with no wait estimate yet (Ŝ = RTT): a 10 ms path with three packets queued
    /// (4·10 = 40 ms) loses to an idle 30 ms path; with one queued (2·10 = 20 ms) it wins.
    #[test]
    fn minimises_expected_system_time() {
        let mut fast = flow(10, 100, 0);
        let slow = flow(30, 100, 0);
        fast.device_queue_packets = 3;
        assert_eq!(
            QAware::default().pick(Time::ZERO, &[fast, slow], &backlog(10)),
            Some(1)
        );
        fast.device_queue_packets = 1;
        assert_eq!(
            QAware::default().pick(Time::ZERO, &[fast, slow], &backlog(10)),
            Some(0)
        );
    }

    /// Cross traffic fills path 0's device queue (50 packets, 50 ms wait) before any RTT sample
    /// shows it: the SRTTs still read 19 and 20 ms. minSRTT keeps sending into the full queue;
    /// QAware reads the queue and moves to path 1.
    #[test]
    fn avoids_a_path_whose_device_queue_is_full() {
        let mut busy = flow(19, 100, 0);
        busy.device_queue_packets = 50;
        busy.device_wait = Duration::from_millis(50);
        let idle = flow(20, 100, 0);
        let flows = [busy, idle];
        assert_eq!(MinSrtt.pick(Time::ZERO, &flows, &backlog(10)), Some(0));
        let mut q = QAware::default();
        assert_eq!(q.pick(Time::ZERO, &flows, &backlog(10)), Some(1));
        // Ŵ after one decision: 0.2·50 ms (α = 0.8 from a zero start).
        assert!((q.wait_estimate(0).as_secs_f64() - 0.010).abs() < 1e-9);
    }

    #[test]
    fn skips_subflows_without_window_space() {
        let flows = [flow(10, 10, 10), flow(50, 10, 0)];
        assert_eq!(
            QAware::default().pick(Time::ZERO, &flows, &backlog(10)),
            Some(1)
        );
        let full = [flow(10, 10, 10), flow(50, 10, 10)];
        assert_eq!(
            QAware::default().pick(Time::ZERO, &full, &backlog(10)),
            None
        );
    }
}
