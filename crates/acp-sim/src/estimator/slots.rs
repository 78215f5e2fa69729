//! The monitor's own aggregation reports: every fresh update's receive timestamp feeds a
//! [`LevelEstimator`], and each slot of `slot_ms` closes into one `FEEDBACK_AGGREGATION` report
//! with the frames that ended in it and their mean estimated level (`acp monitor
//! --aggregation-model`, and `acp lab --aggregation-model` at every metered station).
//!
//! Sans-IO: the caller passes the timestamps (ns on any clock that does not step backwards
//! during a run; the runtime passes the kernel's `SO_TIMESTAMPNS` stamps) and puts the reports
//! on its ACKs. A slot closes when the first update after its end arrives; a slot in which no
//! frame ended is not reported (the controller keeps its rate); slot ids count the reports from
//! 0. The estimator measures neither the PHY rate nor the delay at the AP: both fields are 0.

use acp_core::wire::AggregationReport;
use serde::{Deserialize, Serialize};

use super::model::{BoundaryModel, LevelEstimator};

/// The estimator and the slot it is filling.
#[derive(Debug, Clone)]
pub struct SlotEstimate {
    estimator: LevelEstimator,
    slot_ns: u64,
    slot_ms: u16,
    /// Start of the current slot (ns), from the first update.
    slot_start: Option<u64>,
    /// Id of the next report.
    next_id: u32,
}

/// A reported slot, for a run's results: when it ended (s since the run's start), the frames
/// that ended in it and their mean estimated level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EstimatedSlot {
    pub t_s: f64,
    pub frames: u32,
    pub level: f64,
}

/// A report and the end of the slot it covers (ns, on the caller's clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotReport {
    pub ended_ns: u64,
    pub report: AggregationReport,
}

impl SlotReport {
    /// The slot for a run's results, its end timed from `origin_ns` (on the same clock).
    pub fn slot(&self, origin_ns: u64) -> EstimatedSlot {
        EstimatedSlot {
            t_s: self.ended_ns.saturating_sub(origin_ns) as f64 / 1e9,
            frames: u32::from(self.report.frames),
            level: self.report.level(),
        }
    }
}

impl SlotEstimate {
    /// Slots of `slot_ms` with the frame-boundary estimator `model`.
    pub fn new(model: BoundaryModel, slot_ms: u16) -> Self {
        SlotEstimate {
            estimator: LevelEstimator::new(model),
            slot_ns: u64::from(slot_ms.max(1)) * 1_000_000,
            slot_ms: slot_ms.max(1),
            slot_start: None,
            next_id: 0,
        }
    }

    /// An update arrived at `stamp_ns`; returns the report of the slot it closed, if any.
    pub fn update(&mut self, stamp_ns: u64) -> Option<SlotReport> {
        let start = *self.slot_start.get_or_insert(stamp_ns);
        let mut report = None;
        if stamp_ns >= start + self.slot_ns {
            let elapsed = (stamp_ns - start) / self.slot_ns * self.slot_ns;
            self.slot_start = Some(start + elapsed);
            if let Some((frames, level)) = self.estimator.take() {
                report = Some(SlotReport {
                    ended_ns: start + self.slot_ns,
                    report: AggregationReport {
                        slot: self.next_id,
                        slot_ms: self.slot_ms,
                        frames: u16::try_from(frames).unwrap_or(u16::MAX),
                        level_256: AggregationReport::level_field(level),
                        phy_kbps: 0,
                        delay_us: 0,
                    },
                });
                self.next_id = self.next_id.wrapping_add(1);
            }
        }
        self.estimator.packet(stamp_ns);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimator::model::Logistic;

    /// A model that calls a packet the first of a frame when the gap before it exceeds 100 µs.
    fn gap_model() -> BoundaryModel {
        BoundaryModel {
            m: 1,
            sigma: false,
            max_level: 64,
            gap_cap_us: None,
            logistic: Logistic {
                mean: vec![100.0],
                scale: vec![1.0],
                intercept: 0.0,
                weights: vec![1.0],
            },
        }
    }

    #[test]
    fn a_slot_reports_the_frames_that_ended_in_it() {
        let mut e = SlotEstimate::new(gap_model(), 10);
        // Bursts of 4 packets 10 µs apart, every 1 ms, for 25 ms.
        let mut reports = Vec::new();
        for burst in 0..25u64 {
            for k in 0..4u64 {
                reports.extend(e.update(burst * 1_000_000 + k * 10_000));
            }
        }
        assert_eq!(reports.len(), 2, "{reports:?}");
        // Slot 0 (0–10 ms): burst 0 is not counted (its first packet only fills the window,
        // so its start is unseen), and burst 9 ends when burst 10 starts: bursts 1–8 end in
        // it. Slot 1 (10–20 ms): bursts 9–18.
        let r: Vec<_> = reports.iter().map(|r| r.report).collect();
        assert_eq!((r[0].slot, r[0].frames), (0, 8));
        assert_eq!(r[0].level(), 4.0);
        assert_eq!((r[1].slot, r[1].frames), (1, 10));
        assert_eq!(
            (reports[0].ended_ns, reports[1].ended_ns),
            (10_000_000, 20_000_000)
        );
    }
}
