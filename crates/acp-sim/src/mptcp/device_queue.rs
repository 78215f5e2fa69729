//! A subflow's device (NIC) transmit queue as Linux's byte queue limits (BQL, `struct dql`) see
//! it: counters of what was queued and what the device completed, so that a scheduler can read
//! the occupancy (`num_queued − num_completed`) without touching the queue itself, and the
//! dequeue rate QAware's Algorithm 1 (thesis ch. 2, lines 5–12) samples over a fixed interval.
//!
//! Contract: `complete` never counts more than was queued (extra completions are ignored, so a
//! caller's bookkeeping error cannot make the occupancy negative).

use std::time::Duration;

use acp_core::Time;

/// Counters of one device queue, in packets and bytes, with the dequeue-rate sampler.
#[derive(Debug, Clone)]
pub struct DeviceQueue {
    queued_packets: u64,
    queued_bytes: u64,
    completed_packets: u64,
    completed_bytes: u64,
    sampling: Duration,
    sample_start: Option<Time>,
    sample_start_completed: u64,
    dequeue_rate: Option<f64>,
}

impl DeviceQueue {
    /// An empty queue whose dequeue rate is measured over windows of `sampling` (Algorithm 1's
    /// Δt). A zero interval is raised to one nanosecond.
    pub fn new(sampling: Duration) -> Self {
        DeviceQueue {
            queued_packets: 0,
            queued_bytes: 0,
            completed_packets: 0,
            completed_bytes: 0,
            sampling: sampling.max(Duration::from_nanos(1)),
            sample_start: None,
            sample_start_completed: 0,
            dequeue_rate: None,
        }
    }

    /// A packet of `bytes` entered the queue.
    pub fn enqueue(&mut self, bytes: u64) {
        self.queued_packets += 1;
        self.queued_bytes += bytes;
    }

    /// The device finished transmitting the oldest packet, of `bytes`, at `now`.
    pub fn complete(&mut self, now: Time, bytes: u64) {
        if self.completed_packets == self.queued_packets {
            return;
        }
        self.completed_packets += 1;
        self.completed_bytes = (self.completed_bytes + bytes).min(self.queued_bytes);
        self.roll_sample(now);
    }

    /// Packets waiting or in transmission (`n_k` of eq. 2.1).
    pub fn occupancy_packets(&self) -> u64 {
        self.queued_packets - self.completed_packets
    }

    /// Bytes waiting or in transmission (BQL's `num_queued − num_completed`).
    pub fn occupancy_bytes(&self) -> u64 {
        self.queued_bytes - self.completed_bytes
    }

    /// Packets dequeued per second over the last complete sampling window that saw any
    /// (Δpackets/Δt), or `None` before the first window closes.
    pub fn dequeue_rate(&self) -> Option<f64> {
        self.dequeue_rate
    }

    /// Algorithm 1, lines 5–12: the expected wait of a packet joining now, `n_k` divided by the
    /// dequeue rate; zero when the queue is empty or no rate is known yet.
    pub fn wait_estimate(&self) -> Duration {
        let n = self.occupancy_packets();
        match self.dequeue_rate {
            Some(rate) if n > 0 && rate > 0.0 => Duration::from_secs_f64(n as f64 / rate),
            _ => Duration::ZERO,
        }
    }

    fn roll_sample(&mut self, now: Time) {
        let Some(start) = self.sample_start else {
            self.sample_start = Some(now);
            self.sample_start_completed = self.completed_packets;
            return;
        };
        let elapsed = now.saturating_since(start);
        if elapsed >= self.sampling {
            let dequeued = self.completed_packets - self.sample_start_completed;
            self.dequeue_rate = Some(dequeued as f64 / elapsed.as_secs_f64());
            self.sample_start = Some(now);
            self.sample_start_completed = self.completed_packets;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten packets queued, drained one per millisecond: after a 5 ms sampling window the rate
    /// is 1000 packets/s (the first completion opens the window at 0 ms, the sixth closes it at
    /// 5 ms: five dequeued in 5 ms), and the four left wait 4 ms (Algorithm 1, line 9).
    #[test]
    fn occupancy_and_wait_follow_the_dequeue_rate() {
        let mut q = DeviceQueue::new(Duration::from_millis(5));
        for _ in 0..10 {
            q.enqueue(1_500);
        }
        assert_eq!(q.occupancy_bytes(), 15_000);
        assert_eq!(q.wait_estimate(), Duration::ZERO, "no rate measured yet");
        for ms in 0..=5 {
            q.complete(Time::from_millis(ms), 1_500);
        }
        assert_eq!(q.occupancy_packets(), 4);
        assert!((q.dequeue_rate().unwrap() - 1_000.0).abs() < 1e-9);
        assert_eq!(q.wait_estimate(), Duration::from_millis(4));
    }

    #[test]
    fn extra_completions_are_ignored() {
        let mut q = DeviceQueue::new(Duration::from_millis(1));
        q.enqueue(100);
        q.complete(Time::ZERO, 100);
        q.complete(Time::from_millis(1), 100);
        assert_eq!(q.occupancy_packets(), 0);
        assert_eq!(q.occupancy_bytes(), 0);
    }
}
