//! `acp monitor --aggregation-model FILE`: the monitor estimates the WiFi aggregation level of
//! its own traffic from the times it receives updates, with the frame-boundary estimator
//! `acp estimator train` wrote, and puts one FEEDBACK_AGGREGATION report per slot into its ACKs
//! (for `acp source --controller agg:…`).
//!
//! Every fresh update's receive time (taken when the server hands it over, so after the
//! socket read: a user-space timestamp, noisier than the kernel's the model was trained on)
//! feeds the estimator; a slot of `--aggregation-slot` ms is reported when the first update
//! after its end arrives, with the frames that ended in it and their mean estimated level. A
//! slot in which no frame ended is not reported (the controller keeps its rate); slot ids count
//! the reports from 0.

use std::path::Path;
use std::sync::Arc;

use acp_core::wire::{AggregationReport, FEEDBACK_AGGREGATION};
use acp_runtime::server::FeedbackCell;
use acp_sim::estimator::model::{LevelEstimator, ModelFile};

/// The estimator and the slot it is filling.
#[derive(Debug)]
pub struct SlotEstimate {
    estimator: LevelEstimator,
    cell: Arc<FeedbackCell>,
    slot_ms: u16,
    /// Start of the current slot (ns), from the first update.
    slot_start: Option<u64>,
    /// Id of the next report.
    next_id: u32,
}

impl SlotEstimate {
    /// Loads the model at `path`; the error names the file and what is wrong with it.
    pub fn load(path: &Path, slot_ms: u16, cell: Arc<FeedbackCell>) -> Result<Self, String> {
        let model = ModelFile::load(path)?;
        Ok(SlotEstimate {
            estimator: LevelEstimator::new(model.boundary),
            cell,
            slot_ms,
            slot_start: None,
            next_id: 0,
        })
    }

    /// An update arrived at `now_ns`; returns the report of the slot it closed, if any (it is
    /// also put on the ACKs).
    pub fn update(&mut self, now_ns: u64) -> Option<AggregationReport> {
        let slot_ns = u64::from(self.slot_ms) * 1_000_000;
        let start = *self.slot_start.get_or_insert(now_ns);
        let mut report = None;
        if now_ns >= start + slot_ns {
            self.slot_start = Some(start + (now_ns - start) / slot_ns * slot_ns);
            if let Some((frames, level)) = self.estimator.take() {
                let r = AggregationReport {
                    slot: self.next_id,
                    slot_ms: self.slot_ms,
                    frames: u16::try_from(frames).unwrap_or(u16::MAX),
                    level_256: AggregationReport::level_field(level),
                    phy_kbps: 0,
                    delay_us: 0,
                };
                self.cell.set(FEEDBACK_AGGREGATION, r.encode().to_vec());
                self.next_id = self.next_id.wrapping_add(1);
                report = Some(r);
            }
        }
        self.estimator.packet(now_ns);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_sim::estimator::model::{BoundaryModel, Logistic};

    /// A model that calls a packet the first of a frame when the gap before it exceeds 100 µs.
    fn gap_model() -> BoundaryModel {
        BoundaryModel {
            m: 1,
            sigma: false,
            max_level: 64,
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
        let mut e = SlotEstimate {
            estimator: LevelEstimator::new(gap_model()),
            cell: Arc::new(FeedbackCell::default()),
            slot_ms: 10,
            slot_start: None,
            next_id: 0,
        };
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
        assert_eq!((reports[0].slot, reports[0].frames), (0, 8));
        assert_eq!(reports[0].level(), 4.0);
        assert_eq!((reports[1].slot, reports[1].frames), (1, 10));
    }
}
