//! The aggregation reports of an 802.11ac A-MPDU downlink's stations (aggregation thesis §4.3,
//! Algorithm 1: "Station i measures the number of packets N_i,f aggregated in frame f and reports
//! the average μ_N_i(k) … back to the sender").
//!
//! Every station of an A-MPDU downlink that hosts an ACP monitor measures, per slot of
//! [`ReportSettings::slot`], the A-MPDUs it received: how many, the mean packets per frame μ_N,
//! the mean PHY rate μ_R = 1/E[1/R] and the mean delay of its packets at the AP (from reaching
//! the AP to the end of their frame). At the end of each slot its monitor puts that slot's
//! report on every ACK from then on (`FEEDBACK_AGGREGATION`, `docs/PROTOCOL.md`), where the
//! aggregation controllers (`agg`, `agg-io`) read it; a slot without a frame received is not
//! reported (the wire format has no such report), so the previous one stays.
//!
//! With [`ReportSettings::feedback`] the station's monitor answers at most one update per
//! interval per flow: the thesis's receivers send a feedback packet per interval ("10 feedback
//! packets per second per receiver", Fig. 4.8) rather than an ACK per packet, and the A-MPDU
//! model sends every uplink packet as a frame of its own, so an ACK per update would take the
//! air from the downlink at the rates these controllers reach.

use std::time::Duration;

use acp_core::wire::AggregationReport;
use acp_core::Time;
use acp_netmodel::wifi::downlink::FrameRecord;
use acp_netmodel::wifi::phy::PhyConfig;
use serde::{Deserialize, Serialize};

/// How the stations of an A-MPDU downlink report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportSettings {
    /// The slot each report covers (the thesis's Δ).
    pub slot: Duration,
    /// Answer at most one update per this interval per flow (`None`: every update).
    pub feedback: Option<Duration>,
}

impl Default for ReportSettings {
    /// Slots of 500 ms (Algorithm 1's default Δ), every update answered.
    fn default() -> ReportSettings {
        ReportSettings {
            slot: Duration::from_millis(500),
            feedback: None,
        }
    }
}

/// One reported slot, as the run's result keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReportedSlot {
    /// When the slot ended (s since the start).
    pub t_s: f64,
    /// Frames received in it.
    pub frames: u32,
    /// Mean packets per frame, μ_N.
    pub level: f64,
    /// Mean PHY rate 1/E[1/R] (Mbit/s).
    pub phy_mbps: f64,
    /// Mean delay at the AP (ms; 0 if no packet was delivered in the slot).
    pub delay_ms: f64,
}

/// What a station's reported slots say over a window: their number, the mean, deviation and
/// extremes of their levels, and the mean of their delays at the AP (each slot weighted alike).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotSummary {
    pub slots: usize,
    pub mean_level: f64,
    pub sd_level: f64,
    pub min_level: f64,
    pub max_level: f64,
    pub delay_ms: f64,
}

impl SlotSummary {
    /// The slots of `slots` that ended after `from_s` seconds; `None` if there are none.
    pub fn after(slots: &[ReportedSlot], from_s: f64) -> Option<Self> {
        let window: Vec<&ReportedSlot> = slots.iter().filter(|s| s.t_s > from_s).collect();
        let n = window.len() as f64;
        let mean = |f: fn(&ReportedSlot) -> f64| window.iter().map(|s| f(s)).sum::<f64>() / n;
        let mean_level = mean(|s| s.level);
        let var = window
            .iter()
            .map(|s| (s.level - mean_level).powi(2))
            .sum::<f64>()
            / n;
        let levels = window.iter().map(|s| s.level);
        Some(SlotSummary {
            slots: window.len(),
            mean_level,
            sd_level: var.sqrt(),
            min_level: levels.clone().reduce(f64::min)?,
            max_level: levels.reduce(f64::max)?,
            delay_ms: mean(|s| s.delay_ms),
        })
    }
}

/// One station's measurement of the current slot, and the slots it reported.
#[derive(Debug, Clone, Default)]
pub struct SlotMeter {
    frames: u32,
    packets: u64,
    inverse_rate_sum: f64,
    delay_sum_ns: u128,
    delays: u64,
    next_id: u32,
    /// The slots reported so far.
    pub reported: Vec<ReportedSlot>,
}

impl SlotMeter {
    /// An A-MPDU to this station went on the air; counted if the station received any of it.
    pub fn frame(&mut self, f: &FrameRecord) {
        if f.collided || f.received == 0 {
            return;
        }
        self.frames += 1;
        self.packets += f.packets as u64;
        self.inverse_rate_sum += 1.0 / PhyConfig::ac(f.mcs).data_rate_bps();
    }

    /// A packet to this station left the AP `delay` after it reached it.
    pub fn delivered(&mut self, delay: Duration) {
        self.delay_sum_ns += delay.as_nanos();
        self.delays += 1;
    }

    /// Ends the slot at `now`: its report (`None` if no frame was received in it), and a new
    /// slot begins.
    pub fn close(&mut self, now: Time, slot: Duration) -> Option<AggregationReport> {
        let frames = std::mem::take(&mut self.frames);
        let packets = std::mem::take(&mut self.packets);
        let inverse = std::mem::take(&mut self.inverse_rate_sum);
        let (delay_ns, delays) = (
            std::mem::take(&mut self.delay_sum_ns),
            std::mem::take(&mut self.delays),
        );
        if frames == 0 {
            return None;
        }
        let level = packets as f64 / f64::from(frames);
        let phy_bps = f64::from(frames) / inverse;
        let delay_s = if delays == 0 {
            0.0
        } else {
            delay_ns as f64 / delays as f64 * 1e-9
        };
        self.reported.push(ReportedSlot {
            t_s: now.as_secs_f64(),
            frames,
            level,
            phy_mbps: phy_bps * 1e-6,
            delay_ms: delay_s * 1e3,
        });
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        Some(AggregationReport {
            slot: id,
            slot_ms: slot.as_millis().clamp(1, u128::from(u16::MAX)) as u16,
            frames: frames.min(u32::from(u16::MAX)) as u16,
            level_256: AggregationReport::level_field(level),
            phy_kbps: (phy_bps * 1e-3).round().min(f64::from(u32::MAX)) as u32,
            delay_us: (delay_s * 1e6).round().min(f64::from(u32::MAX)) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use acp_netmodel::wifi::phy::Mcs;

    use super::*;

    fn frame(mcs: Mcs, packets: usize, received: usize, collided: bool) -> FrameRecord {
        FrameRecord {
            start: Time::ZERO,
            end: Time::ZERO,
            station: 1,
            mcs,
            mpdus: packets,
            packets,
            received,
            retransmission: false,
            collided,
        }
    }

    #[test]
    fn a_summary_covers_the_slots_after_its_start() {
        let slot = |t_s: f64, level: f64, delay_ms: f64| ReportedSlot {
            t_s,
            frames: 10,
            level,
            phy_mbps: 100.0,
            delay_ms,
        };
        let slots = [
            slot(0.5, 1.0, 9.0),
            slot(1.0, 30.0, 1.0),
            slot(1.5, 34.0, 3.0),
        ];
        let s = SlotSummary::after(&slots, 0.5).expect("two slots");
        assert_eq!(s.slots, 2);
        assert_eq!((s.mean_level, s.sd_level), (32.0, 2.0));
        assert_eq!((s.min_level, s.max_level, s.delay_ms), (30.0, 34.0, 2.0));
        assert!(SlotSummary::after(&slots, 1.5).is_none());
    }

    #[test]
    fn a_slot_reports_its_frames_mean_level_harmonic_rate_and_delay() {
        let (fast, slow) = (Mcs::new(9, 2, 80), Mcs::new(2, 1, 80));
        let (rf, rs) = (
            PhyConfig::ac(fast).data_rate_bps(),
            PhyConfig::ac(slow).data_rate_bps(),
        );
        let mut m = SlotMeter::default();
        m.frame(&frame(fast, 40, 40, false));
        m.frame(&frame(slow, 20, 19, false));
        // Neither counts: collided, or nothing received.
        m.frame(&frame(fast, 64, 64, true));
        m.frame(&frame(fast, 64, 0, false));
        m.delivered(Duration::from_micros(1000));
        m.delivered(Duration::from_micros(3000));
        let r = m
            .close(Time::from_nanos(500_000_000), Duration::from_millis(500))
            .expect("two frames");
        assert_eq!((r.slot, r.slot_ms, r.frames), (0, 500, 2));
        assert_eq!(r.level_256, 30 * 256);
        let harmonic = 2.0 / (1.0 / rf + 1.0 / rs);
        assert_eq!(r.phy_kbps, (harmonic / 1e3).round() as u32);
        assert_eq!(r.delay_us, 2000);
        assert_eq!(m.reported[0].t_s, 0.5);
        // The next slot starts empty: no frame, no report, and the id is not used up.
        assert!(m
            .close(Time::from_nanos(1_000_000_000), Duration::from_millis(500))
            .is_none());
        m.frame(&frame(fast, 10, 10, false));
        let r = m
            .close(Time::from_nanos(1_500_000_000), Duration::from_millis(500))
            .expect("one frame");
        assert_eq!((r.slot, r.frames, r.level_256, r.delay_us), (1, 1, 2560, 0));
        assert_eq!(m.reported.len(), 2);
    }
}
