//! The SVM of §4.4.2: per 100 ms slot, an RBF-kernel support-vector *regression* from the
//! logistic estimator's output to the aggregation level, which corrects the logistic
//! estimator's consistent overestimate at high load (the thesis's Fig. 4.12(d), 4.13(d)).
//!
//! Features of slot i (thesis (4.5)): the mean level the logistic estimator predicted over the
//! last d slots, `μ̂_{i−d+1} … μ̂_i` (d = 5, the thesis's choice by cross-validation), the
//! variance σ_i of its predicted levels in slot i and the number A_i of frames it found there.
//! The target is slot i's mean level from the MAC timestamps. A frame belongs to the slot of
//! the kernel timestamp of the packet that closes it (the first of the next frame). Features
//! are standardised as for the classifiers; linfa-svm's ε-SVR with C = 100 (levels run to
//! 128 packets) and a loss ε of half a packet (our choices; the thesis gives neither).
//!
//! Measured as the thesis measures it: the RMSE of the slot levels per send rate, the SVM's
//! against the logistic estimator's own slot means. The SVM is evaluated, not written to the
//! model file: as the thesis does for the rest of its chapter, `acp monitor` runs the logistic
//! estimator alone.

use linfa::prelude::*;
use linfa_svm::Svm;
use ndarray::Array1;
use serde::{Deserialize, Serialize};

use super::features::{BoundaryWindow, Frames};
use super::model::Logistic;
use super::train::{standardisation, standardised, BoundaryTrace};

/// The slot the features average over (ns): the thesis's 100 ms.
pub const SLOT_NS: u64 = 100_000_000;
/// Slots of predicted means per sample: the thesis's d = 5.
pub const D: usize = 5;

/// One slot: what the logistic estimator saw and the truth.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    /// Mean predicted level (0 when it found no frame).
    mean: f64,
    /// Variance of the predicted levels.
    var: f64,
    /// Frames it found.
    frames: f64,
    /// Mean level from the MAC timestamps (`None`: no frame ended in the slot).
    truth: Option<f64>,
}

/// Per-slot sums of frame levels.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    n: f64,
    sum: f64,
    sq: f64,
}

impl Sums {
    fn add(&mut self, level: usize) {
        let l = level as f64;
        self.n += 1.0;
        self.sum += l;
        self.sq += l * l;
    }

    fn mean(&self) -> Option<f64> {
        (self.n > 0.0).then(|| self.sum / self.n)
    }

    fn var(&self) -> f64 {
        self.mean()
            .map_or(0.0, |m| (self.sq / self.n - m * m).max(0.0))
    }
}

/// The slots of trace `t` with the boundary `model` (m inter-arrival times capped at `cap_us`,
/// σ if `sigma`).
fn slots(t: &BoundaryTrace, model: &Logistic, m: usize, sigma: bool, cap_us: f64) -> Vec<Slot> {
    let mut window = BoundaryWindow::new(m, sigma, cap_us);
    let (mut predicted, mut truth) = (Frames::new(t.max_level), Frames::new(t.max_level));
    let start = t.stamps_ns.first().copied().unwrap_or(0);
    let mut sums: Vec<(Sums, Sums)> = Vec::new();
    for (stamp, first) in t.stamps_ns.iter().zip(&t.first) {
        let Some(x) = window.push(*stamp) else {
            continue;
        };
        let k = ((stamp.saturating_sub(start)) / SLOT_NS) as usize;
        if sums.len() <= k {
            sums.resize(k + 1, (Sums::default(), Sums::default()));
        }
        if let Some(level) = predicted.packet(model.positive(&x)) {
            sums[k].0.add(level);
        }
        if let Some(level) = truth.packet(*first) {
            sums[k].1.add(level);
        }
    }
    // The last slot is cut short by the trace's end.
    sums.pop();
    sums.iter()
        .map(|(p, t)| Slot {
            mean: p.mean().unwrap_or(0.0),
            var: p.var(),
            frames: p.n,
            truth: t.mean(),
        })
        .collect()
}

/// Samples (4.5) of one trace: features, the truth, and the logistic estimator's own slot mean.
fn samples(slots: &[Slot]) -> Vec<(Vec<f64>, f64, f64)> {
    slots
        .windows(D)
        .filter_map(|w| {
            let last = w[D - 1];
            let truth = last.truth?;
            let mut x: Vec<f64> = w.iter().map(|s| s.mean).collect();
            x.push(last.var);
            x.push(last.frames);
            Some((x, truth, last.mean))
        })
        .collect()
}

/// One send rate's held-out slot levels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelRow {
    /// Send rate (Mbit/s).
    pub rate_mbps: f64,
    /// Slots measured.
    pub slots: usize,
    /// Mean level from the MAC timestamps.
    pub level: f64,
    /// RMSE of the logistic estimator's slot means (packets).
    pub rmse_logistic: f64,
    /// RMSE of the SVM (packets).
    pub rmse_svm: f64,
}

fn rmse(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut n, mut sq) = (0.0, 0.0);
    for (a, b) in pairs {
        n += 1.0;
        sq += (a - b).powi(2);
    }
    if n > 0.0 {
        (sq / n).sqrt()
    } else {
        0.0
    }
}

/// Trains the SVM on `train`'s slots and measures it per send rate on `test`'s.
pub fn train_and_measure(
    train: &[BoundaryTrace],
    test: &[BoundaryTrace],
    model: &Logistic,
    m: usize,
    sigma: bool,
    cap_us: f64,
) -> Result<Vec<LevelRow>, String> {
    let rows: Vec<(Vec<f64>, f64, f64)> = train
        .iter()
        .flat_map(|t| samples(&slots(t, model, m, sigma, cap_us)))
        .collect();
    if rows.len() < 2 * D {
        return Err(format!(
            "{} training slots for the level SVM: give longer traces (at least {} slots)",
            rows.len(),
            2 * D
        ));
    }
    let x: Vec<Vec<f64>> = rows.iter().map(|r| r.0.clone()).collect();
    let (mean, scale) = standardisation(&x);
    let data = Dataset::new(
        standardised(&x, &mean, &scale)?,
        Array1::from_iter(rows.iter().map(|r| r.1)),
    );
    let svr = Svm::<f64, f64>::params()
        .c_svr(100.0, Some(0.5))
        .gaussian_kernel(mean.len() as f64)
        .fit(&data)
        .map_err(|e| format!("level SVM: {e}"))?;
    test.iter()
        .map(|t| {
            let s = samples(&slots(t, model, m, sigma, cap_us));
            let x: Vec<Vec<f64>> = s.iter().map(|r| r.0.clone()).collect();
            let predicted: Array1<f64> = if x.is_empty() {
                Array1::zeros(0)
            } else {
                svr.predict(&standardised(&x, &mean, &scale)?)
            };
            Ok(LevelRow {
                rate_mbps: t.rate_mbps,
                slots: s.len(),
                level: s.iter().map(|r| r.1).sum::<f64>() / s.len().max(1) as f64,
                rmse_logistic: rmse(s.iter().map(|r| (r.2, r.1))),
                rmse_svm: rmse(predicted.iter().zip(&s).map(|(p, r)| (*p, r.1))),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_d_slot_means_then_the_last_slots_spread_and_count() {
        let slot = |mean: f64, truth: Option<f64>| Slot {
            mean,
            var: mean / 10.0,
            frames: 2.0 * mean,
            truth,
        };
        let slots: Vec<Slot> = (1..=6)
            .map(|k| slot(k as f64, (k != 6).then_some(10.0 * k as f64)))
            .collect();
        // Windows end at slots 5 and 6; the sixth has no truth and gives no sample.
        let s = samples(&slots);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, vec![1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 10.0]);
        assert_eq!((s[0].1, s[0].2), (50.0, 5.0));
    }

    #[test]
    fn slot_sums_give_mean_and_population_variance() {
        let mut s = Sums::default();
        assert_eq!((s.mean(), s.var()), (None, 0.0));
        for l in [2, 4, 6] {
            s.add(l);
        }
        assert_eq!(s.mean(), Some(4.0));
        assert!((s.var() - 8.0 / 3.0).abs() < 1e-12);
    }
}
