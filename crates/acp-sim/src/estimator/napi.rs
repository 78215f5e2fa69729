//! Kernel receive timestamps as a station's network stack would take them: the MAC hands every
//! packet of an A-MPDU to the driver when the frame ends, and the kernel stamps each one only
//! when its NAPI poll gets to it (`SO_TIMESTAMPNS` records the time the packet is processed, not
//! the time it reached the radio).
//!
//! # The model (ours; the thesis only describes the effect, §4.4)
//!
//! The thesis observes (Fig. 4.11) that packets of one frame get different kernel timestamps,
//! that at low load there is still a clear jump between frames, and that at high load jumps
//! appear inside frames and vanish between them, which it attributes to NAPI interrupt
//! mitigation. We model the mechanism the Linux documentation describes (`Documentation/
//! networking/napi.rst`: an interrupt schedules a NAPI instance, whose poll processes at most
//! its weight of packets — 64, `NAPI_POLL_WEIGHT` — before yielding; the instance re-arms the
//! interrupt only when the ring is empty; `Documentation/admin-guide/sysctl/net.rst`:
//! `netdev_budget`, `netdev_budget_usecs`):
//!
//! - a packet that reaches an empty ring (the previous poll completed) raises an interrupt; its
//!   poll starts after the interrupt latency `irq_fixed + Exp(irq_mean)`;
//! - a packet that finds the poll running is processed after the packets ahead of it, each
//!   costing a uniform draw in `[cost_min, cost_max]` of CPU time; its timestamp is the start of
//!   its processing;
//! - after `weight` packets the poll yields and resumes `Exp(yield_mean)` later (other softirqs
//!   and tasks run);
//! - each poll start (interrupt or resumption) is, with probability `preempt_probability`,
//!   delayed by a further `Exp(preempt_mean)` (the CPU busy with other work; the thesis's
//!   CPU-load experiment, §4.4.3).
//!
//! The default numbers are ours, not measured on a device: a handset-class CPU spending 18 µs
//! per packet on average (so 600 Mbit/s of 1500-byte packets keeps it 90 % busy, where the
//! thesis sees the estimator degrade), tens of µs of interrupt latency, and one poll in ten
//! delayed by 300 µs on average. Preemptions put jumps inside frames and the backlog they
//! leave removes the jump at the next boundary, the two effects of Fig. 4.11(b).

use serde::{Deserialize, Serialize};

use acp_netmodel::Rng;

/// The parameters of the model (µs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NapiNoise {
    /// Fixed part of the interrupt latency.
    pub irq_fixed_us: f64,
    /// Mean of its exponential part.
    pub irq_mean_us: f64,
    /// Least CPU time to process one packet.
    pub cost_min_us: f64,
    /// Most CPU time to process one packet.
    pub cost_max_us: f64,
    /// Packets per poll before it yields.
    pub weight: u32,
    /// Mean pause after a poll that used its whole weight.
    pub yield_mean_us: f64,
    /// Chance that a poll start is delayed further.
    pub preempt_probability: f64,
    /// Mean of that delay.
    pub preempt_mean_us: f64,
}

impl Default for NapiNoise {
    fn default() -> Self {
        NapiNoise {
            irq_fixed_us: 8.0,
            irq_mean_us: 25.0,
            cost_min_us: 8.0,
            cost_max_us: 28.0,
            weight: 64,
            yield_mean_us: 40.0,
            preempt_probability: 0.1,
            preempt_mean_us: 300.0,
        }
    }
}

impl NapiNoise {
    /// Every delay multiplied by `k` (the weight and the preemption chance kept): a slower or
    /// busier host (`k` > 1) or a quieter one.
    pub fn scaled(&self, k: f64) -> NapiNoise {
        NapiNoise {
            irq_fixed_us: k * self.irq_fixed_us,
            irq_mean_us: k * self.irq_mean_us,
            cost_min_us: k * self.cost_min_us,
            cost_max_us: k * self.cost_max_us,
            yield_mean_us: k * self.yield_mean_us,
            preempt_mean_us: k * self.preempt_mean_us,
            ..*self
        }
    }

    /// Checks the parameters; the message names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("irq_fixed_us", self.irq_fixed_us),
            ("irq_mean_us", self.irq_mean_us),
            ("cost_min_us", self.cost_min_us),
            ("cost_max_us", self.cost_max_us),
            ("yield_mean_us", self.yield_mean_us),
            ("preempt_mean_us", self.preempt_mean_us),
        ];
        if let Some((name, v)) = fields.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Err(format!(
                "NAPI noise {name} = {v}: must be a finite number ≥ 0"
            ));
        }
        if self.cost_max_us < self.cost_min_us {
            return Err("NAPI noise cost_max_us must be at least cost_min_us".into());
        }
        if self.weight == 0 {
            return Err("NAPI noise weight must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.preempt_probability) {
            return Err("NAPI noise preempt_probability must be within 0–1".into());
        }
        Ok(())
    }

    /// Kernel timestamps (ns) of packets that reached the driver at `ring_ns` (non-decreasing:
    /// every packet of a frame at the frame's end), drawing from `rng`.
    pub fn stamp(&self, ring_ns: &[u64], rng: &mut Rng) -> Vec<u64> {
        let mut stamps = Vec::with_capacity(ring_ns.len());
        // When the CPU finishes the packet it is processing, and packets done in this poll.
        let mut free_us = f64::NEG_INFINITY;
        let mut in_poll = 0u32;
        for &ns in ring_ns {
            let arrival_us = ns as f64 / 1e3;
            let mut start = if arrival_us > free_us {
                in_poll = 0;
                arrival_us + self.irq_fixed_us + rng.exp(self.irq_mean_us) + self.preemption(rng)
            } else if in_poll >= self.weight {
                in_poll = 0;
                free_us + rng.exp(self.yield_mean_us) + self.preemption(rng)
            } else {
                free_us
            };
            start = start.max(arrival_us);
            stamps.push((start * 1e3).round() as u64);
            free_us = start + rng.uniform(self.cost_min_us, self.cost_max_us);
            in_poll += 1;
        }
        stamps
    }

    fn preemption(&self, rng: &mut Rng) -> f64 {
        if rng.chance(self.preempt_probability) {
            rng.exp(self.preempt_mean_us)
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_frame_is_stamped_after_the_interrupt_one_packet_cost_apart() {
        let noise = NapiNoise {
            irq_fixed_us: 10.0,
            irq_mean_us: 0.0,
            cost_min_us: 5.0,
            cost_max_us: 5.0,
            preempt_probability: 0.0,
            ..NapiNoise::default()
        };
        let stamps = noise.stamp(&[1_000_000; 3], &mut Rng::new(1));
        assert_eq!(stamps, vec![1_010_000, 1_015_000, 1_020_000]);
    }

    #[test]
    fn a_poll_yields_after_its_weight() {
        let noise = NapiNoise {
            irq_fixed_us: 0.0,
            irq_mean_us: 0.0,
            cost_min_us: 1.0,
            cost_max_us: 1.0,
            weight: 2,
            yield_mean_us: 1e-9,
            preempt_probability: 1.0,
            preempt_mean_us: 1e-9,
        };
        // With a (practically) zero pause the yield is invisible; what matters is that the
        // stamps stay one cost apart and never precede the ring.
        let stamps = noise.stamp(&[0, 0, 0, 10_000], &mut Rng::new(2));
        assert_eq!(stamps, vec![0, 1_000, 2_000, 10_000]);
        let slow = NapiNoise {
            yield_mean_us: 100.0,
            preempt_probability: 0.0,
            ..noise
        };
        let s = slow.stamp(&[0, 0, 0], &mut Rng::new(3));
        assert_eq!(&s[..2], &[0, 1_000]);
        assert!(
            s[2] > 2_000,
            "the third packet waits for the next poll: {s:?}"
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let bad = NapiNoise {
            cost_min_us: f64::NAN,
            ..NapiNoise::default()
        };
        assert!(bad.validate().unwrap_err().contains("cost_min_us"));
        assert!(NapiNoise::default().validate().is_ok());
    }
}
