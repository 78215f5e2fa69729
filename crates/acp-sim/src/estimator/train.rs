//! Training and evaluation of the estimators on simulator traces (`acp estimator train`).
//!
//! Every run draws two independent sets of traces from the seed, one to train on and one held
//! out to measure on, so every number printed is out of sample:
//!
//! - **frame boundaries** (§4.4.1): a trace per send rate ([`super::trace`]), kernel timestamps
//!   from [`NapiNoise`], labels from the MAC timestamps. Logistic regression (`linfa-logistic`)
//!   on m inter-arrival times with and without σ, and an RBF-kernel SVM (`linfa-svm`) with σ on
//!   a subsample (a kernel SVM's training cost grows with the square of its samples), for each m
//!   of the sweep (Fig. 4.12(a)); for the chosen m, F1 and the mean estimated aggregation level
//!   per send rate against the thesis's baseline, a threshold on the last inter-arrival time
//!   (logistic regression with m = 1 and no σ; Fig. 4.12(b)–(c)); and §4.4.2's SVM regression
//!   of 100 ms slot levels on that model's output ([`super::level_svm`]) on longer traces;
//! - **bottleneck location** (§4.5): traces whose bottleneck is the WLAN (gigabit backhaul) or
//!   the backhaul (100 Mbit/s Ethernet with a 100-packet queue, §4.5.1; or gigabit with
//!   600 Mbit/s of cross-traffic, §4.5.3, for send rates of 450 Mbit/s and more, where it
//!   binds), features from the MAC timestamps (as in Fig. 4.17), logistic regression; accuracy
//!   and F1 (class "backhaul") overall and per scenario, against always answering the larger
//!   class.
//!
//! Features are standardised (mean and scale of the training set, kept in the model) before
//! fitting: the thesis is silent on it; it lets one L2 penalty (linfa's default α = 1) and one
//! RBF width (the number of features) serve every m.

use linfa::prelude::*;
use linfa_logistic::LogisticRegression;
use linfa_svm::Svm;
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use acp_netmodel::Streams;

use super::features::{BottleneckWindow, BoundaryWindow, Frames};
use super::level_svm::{self, LevelRow};
use super::model::{BottleneckModel, BoundaryModel, Logistic, ModelFile, FORMAT, VERSION};
use super::napi::NapiNoise;
use super::trace::{self, Backhaul, Rx, TraceSpec};

/// What to train on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Send rates of the boundary traces (Mbit/s).
    pub rates_mbps: Vec<f64>,
    /// Packets per boundary trace (each split).
    pub packets: usize,
    /// The m of the model written.
    pub m: usize,
    /// The m values of the F1-against-m table.
    pub sweep: Vec<usize>,
    /// Training samples of each SVM (0: no SVM).
    pub svm_samples: usize,
    /// Held-out samples each SVM is measured on.
    pub svm_test_samples: usize,
    /// Whether the boundary estimator's features are standardised before fitting (the
    /// bottleneck classifier's and the SVMs' always are).
    pub standardise: bool,
    /// Seconds per send rate of the level SVM's traces (§4.4.2, each set; 0: no level SVM).
    pub level_secs: f64,
    /// Bottleneck classifier: frames per sample.
    pub n: usize,
    /// Bottleneck classifier: packets of the loss fraction.
    pub p: usize,
    /// The n values of Fig. 4.17's sweep (empty: no sweep).
    pub n_sweep: Vec<usize>,
    /// Its p values.
    pub p_sweep: Vec<usize>,
    /// Send rates of the bottleneck traces (Mbit/s).
    pub bottleneck_rates_mbps: Vec<f64>,
    /// Packets per bottleneck trace (each split).
    pub bottleneck_packets: usize,
    /// Receive-timestamp noise.
    pub noise: NapiNoise,
    /// Seed of everything.
    pub seed: u64,
}

impl Default for TrainConfig {
    /// The thesis's settings where it gives them (rates 100–600 Mbit/s, m = 20 with σ, n = 5,
    /// p = 100); sizes ours, a few seconds of CPU in a release build.
    fn default() -> Self {
        TrainConfig {
            rates_mbps: vec![100.0, 200.0, 300.0, 400.0, 500.0, 600.0],
            packets: 20_000,
            m: 20,
            sweep: vec![1, 2, 5, 10, 20, 40],
            svm_samples: 2_000,
            svm_test_samples: 20_000,
            standardise: true,
            level_secs: 3.0,
            n: 5,
            p: 100,
            n_sweep: vec![1, 2, 5, 10, 20],
            p_sweep: vec![10, 50, 100, 200, 500],
            bottleneck_rates_mbps: vec![100.0, 200.0, 300.0, 400.0, 500.0, 600.0],
            bottleneck_packets: 20_000,
            noise: NapiNoise::default(),
            seed: 1,
        }
    }
}

impl TrainConfig {
    /// Checks the sizes; the message names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        if self.rates_mbps.is_empty() || self.bottleneck_rates_mbps.is_empty() {
            return Err("at least one send rate for each estimator".into());
        }
        let rates = self.rates_mbps.iter().chain(&self.bottleneck_rates_mbps);
        if let Some(r) = rates.clone().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(format!("send rate {r} Mbit/s must be positive"));
        }
        if !(self.level_secs.is_finite() && self.level_secs >= 0.0) {
            return Err(format!(
                "level SVM seconds {} must be 0 or more",
                self.level_secs
            ));
        }
        let mut np = self.n_sweep.iter().chain(&self.p_sweep);
        if self.m == 0
            || self.sweep.contains(&0)
            || self.n == 0
            || self.p == 0
            || np.any(|v| *v == 0)
        {
            return Err("m, every m of the sweep, n, p and every n and p of their sweeps must be at least 1".into());
        }
        let longest = self
            .sweep
            .iter()
            .copied()
            .chain([self.m])
            .max()
            .unwrap_or(1);
        if self.packets < 10 * (longest + 1) {
            return Err(format!(
                "{} packets per trace are too few for m = {longest}: at least {}",
                self.packets,
                10 * (longest + 1)
            ));
        }
        let most_p = self
            .p_sweep
            .iter()
            .copied()
            .chain([self.p])
            .max()
            .unwrap_or(1);
        let most_n = self
            .n_sweep
            .iter()
            .copied()
            .chain([self.n])
            .max()
            .unwrap_or(1);
        if self.bottleneck_packets < 10 * (most_p + most_n) {
            return Err(format!(
                "{} packets per bottleneck trace are too few for p = {most_p}: at least {}",
                self.bottleneck_packets,
                10 * (most_p + most_n)
            ));
        }
        self.noise.validate()
    }
}

/// One send rate's boundary trace: kernel timestamps and which packets start a frame.
#[derive(Debug, Clone)]
pub struct BoundaryTrace {
    /// Send rate (Mbit/s).
    pub rate_mbps: f64,
    /// Kernel timestamps (ns).
    pub stamps_ns: Vec<u64>,
    /// Whether each packet is the first of its frame (its MAC timestamp differs from the
    /// previous packet's).
    pub first: Vec<bool>,
    /// The most packets a frame carries.
    pub max_level: usize,
}

/// The run seed of trace `k` of `split` (`"train"` or `"test"`).
fn run_seed(seed: u64, split: &str, what: &str, k: usize) -> u64 {
    Streams::new(seed)
        .stream(&format!("estimator {what} {split} {k}"))
        .next_u64()
}

/// The boundary traces of `split`.
pub fn boundary_traces(config: &TrainConfig, split: &str) -> Result<Vec<BoundaryTrace>, String> {
    traces_of(config, split, "boundary", |_| config.packets)
}

/// A trace per send rate of `split`, `packets(rate)` packets each, seeded by `what`.
pub(super) fn traces_of(
    config: &TrainConfig,
    split: &str,
    what: &str,
    packets: impl Fn(f64) -> usize,
) -> Result<Vec<BoundaryTrace>, String> {
    config
        .rates_mbps
        .iter()
        .enumerate()
        .map(|(k, rate)| {
            let spec = TraceSpec::new(rate * 1e6, packets(*rate));
            let seed = run_seed(config.seed, split, what, k);
            let rx = trace::run(&spec, seed)?;
            let mac: Vec<u64> = rx.iter().map(|r| r.mac_ns).collect();
            let mut rng = Streams::new(seed).stream("estimator napi");
            let first = std::iter::once(true)
                .chain(mac.windows(2).map(|w| w[0] != w[1]))
                .collect();
            Ok(BoundaryTrace {
                rate_mbps: *rate,
                stamps_ns: config.noise.stamp(&mac, &mut rng),
                first,
                max_level: spec.max_level(),
            })
        })
        .collect()
}

/// Feature rows and labels.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// One row per sample.
    pub rows: Vec<Vec<f64>>,
    /// Its label.
    pub labels: Vec<bool>,
}

impl Samples {
    fn extend(&mut self, other: Samples) {
        self.rows.extend(other.rows);
        self.labels.extend(other.labels);
    }

    /// Every `k`-th sample, about `count` of them (all when there are fewer).
    fn thinned(&self, count: usize) -> Samples {
        let step = (self.rows.len() / count.max(1)).max(1);
        Samples {
            rows: self.rows.iter().step_by(step).cloned().collect(),
            labels: self.labels.iter().step_by(step).copied().collect(),
        }
    }
}

/// The quantile of the training set's inter-arrival times the boundary features are capped at.
const GAP_CAP_QUANTILE: f64 = 0.99;

/// The cap of the boundary features (µs): the 99th percentile (`GAP_CAP_QUANTILE`) of
/// `traces`' inter-arrival times. Features are then never larger than the gaps the fit saw in numbers, and a receiver
/// whose frames lie further apart reads as the widest frame gaps of training rather than as
/// an extrapolation of the fitted weights.
pub fn gap_cap_us(traces: &[BoundaryTrace]) -> f64 {
    let mut gaps: Vec<f64> = traces
        .iter()
        .flat_map(|t| {
            t.stamps_ns
                .windows(2)
                .map(|w| w[1].saturating_sub(w[0]) as f64 / 1e3)
        })
        .collect();
    if gaps.is_empty() {
        return f64::INFINITY;
    }
    let k = ((gaps.len() - 1) as f64 * GAP_CAP_QUANTILE).round() as usize;
    let (_, cap, _) = gaps.select_nth_unstable_by(k, f64::total_cmp);
    cap.max(f64::MIN_POSITIVE)
}

/// The boundary samples of one trace for (m, σ), gaps capped at `cap_us`.
pub fn boundary_samples(t: &BoundaryTrace, m: usize, sigma: bool, cap_us: f64) -> Samples {
    let mut window = BoundaryWindow::new(m, sigma, cap_us);
    let mut s = Samples::default();
    for (stamp, first) in t.stamps_ns.iter().zip(&t.first) {
        if let Some(x) = window.push(*stamp) {
            s.rows.push(x);
            s.labels.push(*first);
        }
    }
    s
}

fn all_boundary_samples(traces: &[BoundaryTrace], m: usize, sigma: bool, cap_us: f64) -> Samples {
    let mut s = Samples::default();
    for t in traces {
        s.extend(boundary_samples(t, m, sigma, cap_us));
    }
    s
}

fn matrix(rows: &[Vec<f64>]) -> Result<Array2<f64>, String> {
    let width = rows.first().map_or(0, Vec::len);
    Array2::from_shape_vec(
        (rows.len(), width),
        rows.iter().flatten().copied().collect(),
    )
    .map_err(|e| e.to_string())
}

/// Per-column mean and scale (standard deviation, 1 where it is 0).
pub(super) fn standardisation(rows: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
    let width = rows.first().map_or(0, Vec::len);
    let count = rows.len().max(1) as f64;
    let mean: Vec<f64> = (0..width)
        .map(|k| rows.iter().map(|r| r[k]).sum::<f64>() / count)
        .collect();
    let scale = (0..width)
        .map(|k| {
            let var = rows.iter().map(|r| (r[k] - mean[k]).powi(2)).sum::<f64>() / count;
            if var > 0.0 {
                var.sqrt()
            } else {
                1.0
            }
        })
        .collect();
    (mean, scale)
}

pub(super) fn standardised(
    rows: &[Vec<f64>],
    mean: &[f64],
    scale: &[f64],
) -> Result<Array2<f64>, String> {
    let mut x = matrix(rows)?;
    for mut row in x.rows_mut() {
        for (k, v) in row.iter_mut().enumerate() {
            *v = (*v - mean[k]) / scale[k];
        }
    }
    Ok(x)
}

fn both_classes(s: &Samples) -> Result<(), String> {
    if s.labels.iter().all(|l| *l) || s.labels.iter().all(|l| !*l) {
        return Err("the training samples hold one class only: add send rates".into());
    }
    Ok(())
}

/// Fits a logistic regression (linfa-logistic, L2 α = 1) on `s`, standardised if `standardise`
/// (otherwise on the raw features, as scikit-learn's `LogisticRegression` fits by default).
pub fn fit_logistic(s: &Samples, standardise: bool) -> Result<Logistic, String> {
    both_classes(s)?;
    let (mean, scale) = if standardise {
        standardisation(&s.rows)
    } else {
        let width = s.rows.first().map_or(0, Vec::len);
        (vec![0.0; width], vec![1.0; width])
    };
    let x = standardised(&s.rows, &mean, &scale)?;
    let data = Dataset::new(x, Array1::from(s.labels.clone()));
    let fitted = LogisticRegression::default()
        .max_iterations(200)
        .fit(&data)
        .map_err(|e| format!("logistic regression: {e}"))?;
    // linfa's probability is that of its "positive" class, the larger one; ours is `true`.
    let sign = if fitted.labels().pos.class { 1.0 } else { -1.0 };
    Ok(Logistic {
        mean,
        scale,
        intercept: sign * fitted.intercept(),
        weights: fitted.params().iter().map(|w| sign * w).collect(),
    })
}

/// Counts of a binary classifier's outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Predicted and true 1.
    pub tp: u64,
    /// Predicted 1, true 0.
    pub fp: u64,
    /// Predicted 0, true 1.
    pub fn_: u64,
    /// Predicted and true 0.
    pub tn: u64,
}

impl Confusion {
    /// Tallies predictions against labels.
    pub fn of(predicted: impl IntoIterator<Item = bool>, truth: &[bool]) -> Confusion {
        let mut c = Confusion::default();
        for (p, t) in predicted.into_iter().zip(truth) {
            match (p, *t) {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, true) => c.fn_ += 1,
                (false, false) => c.tn += 1,
            }
        }
        c
    }

    /// F1 of class 1 (0 when it never occurs nor is predicted).
    pub fn f1(&self) -> f64 {
        let d = 2 * self.tp + self.fp + self.fn_;
        if d == 0 {
            0.0
        } else {
            (2 * self.tp) as f64 / d as f64
        }
    }

    /// Share of correct answers.
    pub fn accuracy(&self) -> f64 {
        let all = self.tp + self.fp + self.fn_ + self.tn;
        if all == 0 {
            0.0
        } else {
            (self.tp + self.tn) as f64 / all as f64
        }
    }
}

fn logistic_confusion(model: &Logistic, s: &Samples) -> Confusion {
    Confusion::of(s.rows.iter().map(|x| model.positive(x)), &s.labels)
}

/// Trains an RBF SVM on `train` (thinned to `count`) and measures it on `test` (thinned).
fn svm_confusion(
    train: &Samples,
    test: &Samples,
    count: usize,
    test_count: usize,
) -> Result<Confusion, String> {
    let train = train.thinned(count);
    both_classes(&train)?;
    let test = test.thinned(test_count);
    let (mean, scale) = standardisation(&train.rows);
    let width = mean.len() as f64;
    let data = Dataset::new(
        standardised(&train.rows, &mean, &scale)?,
        Array1::from(train.labels.clone()),
    );
    let svm = Svm::<f64, bool>::params()
        .pos_neg_weights(1.0, 1.0)
        .gaussian_kernel(width)
        .fit(&data)
        .map_err(|e| format!("SVM: {e}"))?;
    let predicted: Array1<bool> = svm.predict(&standardised(&test.rows, &mean, &scale)?);
    Ok(Confusion::of(predicted.iter().copied(), &test.labels))
}

/// One row of the F1-against-m table (held-out F1 of the boundary label).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct F1Row {
    /// Inter-arrival times.
    pub m: usize,
    /// Logistic regression with σ.
    pub logistic_sigma: f64,
    /// Logistic regression without σ.
    pub logistic: f64,
    /// RBF SVM with σ (`None`: not trained).
    pub svm_sigma: Option<f64>,
}

/// One send rate, held out, with the chosen m (σ included) and the threshold baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateRow {
    /// Send rate (Mbit/s).
    pub rate_mbps: f64,
    /// F1 of the model.
    pub f1: f64,
    /// F1 of the threshold on the last inter-arrival time.
    pub f1_threshold: f64,
    /// Mean aggregation level from the MAC timestamps (packets per frame).
    pub level: f64,
    /// Estimated by the model.
    pub level_model: f64,
    /// Estimated by the threshold.
    pub level_threshold: f64,
}

/// One bottleneck scenario, held out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRow {
    /// `"WLAN"`, `"backhaul 100M"` or `"backhaul cross"`.
    pub scenario: String,
    /// Send rate (Mbit/s).
    pub rate_mbps: f64,
    /// Mean aggregation level of its frames.
    pub level: f64,
    /// Fraction of packets lost.
    pub loss: f64,
    /// Share of its samples classed correctly.
    pub accuracy: f64,
}

/// Everything `acp estimator train` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    /// Fig. 4.12(a).
    pub f1_vs_m: Vec<F1Row>,
    /// Fig. 4.12(b)–(c).
    pub per_rate: Vec<RateRow>,
    /// Held-out F1 of the model written, all rates together.
    pub f1: f64,
    /// Held-out F1 of the threshold baseline, all rates together.
    pub f1_threshold: f64,
    /// §4.4.2: slot levels of the logistic estimator and of the SVM on it, per send rate
    /// (empty without level traces).
    pub level_svm: Vec<LevelRow>,
    /// Bottleneck classifier, per scenario.
    pub scenarios: Vec<ScenarioRow>,
    /// Its held-out confusion, all scenarios together.
    pub bottleneck: Confusion,
    /// Accuracy of always answering the larger class of the training samples.
    pub bottleneck_baseline_accuracy: f64,
    /// Fig. 4.17: the classifier's held-out F1 and accuracy against n and p.
    pub np_sweep: Vec<NpRow>,
}

/// Mean level from per-packet "first" marks, capped at `max_level`.
fn mean_level(marks: impl IntoIterator<Item = bool>, max_level: usize) -> f64 {
    let mut frames = Frames::new(max_level);
    for m in marks {
        frames.packet(m);
    }
    frames.take().map_or(0.0, |(_, level)| level)
}

/// The boundary model (chosen m, σ) and what was measured on it.
struct BoundaryOutcome {
    model: BoundaryModel,
    f1_vs_m: Vec<F1Row>,
    per_rate: Vec<RateRow>,
    f1: f64,
    f1_threshold: f64,
    level_svm: Vec<LevelRow>,
}

/// The boundary model, its per-rate metrics and the F1-against-m table.
fn train_boundary(config: &TrainConfig) -> Result<BoundaryOutcome, String> {
    let train = boundary_traces(config, "train")?;
    let test = boundary_traces(config, "test")?;
    let max_level = train.iter().map(|t| t.max_level).max().unwrap_or(1);
    let cap = gap_cap_us(&train);
    let mut f1_vs_m = Vec::new();
    for &m in &config.sweep {
        let held_out = |sigma: bool| -> Result<f64, String> {
            let model = fit_logistic(
                &all_boundary_samples(&train, m, sigma, cap),
                config.standardise,
            )?;
            Ok(logistic_confusion(&model, &all_boundary_samples(&test, m, sigma, cap)).f1())
        };
        let svm_sigma = (config.svm_samples > 0)
            .then(|| {
                svm_confusion(
                    &all_boundary_samples(&train, m, true, cap),
                    &all_boundary_samples(&test, m, true, cap),
                    config.svm_samples,
                    config.svm_test_samples,
                )
                .map(|c| c.f1())
            })
            .transpose()?;
        f1_vs_m.push(F1Row {
            m,
            logistic_sigma: held_out(true)?,
            logistic: held_out(false)?,
            svm_sigma,
        });
    }
    let model = fit_logistic(
        &all_boundary_samples(&train, config.m, true, cap),
        config.standardise,
    )?;
    let threshold = fit_logistic(
        &all_boundary_samples(&train, 1, false, cap),
        config.standardise,
    )?;
    let (mut all, mut all_threshold) = (Confusion::default(), Confusion::default());
    let mut per_rate = Vec::new();
    for t in &test {
        // Both on the same packets: those the longer window classifies.
        let s = boundary_samples(t, config.m, true, cap);
        let mut b = boundary_samples(t, 1, false, cap);
        let skip = b.rows.len() - s.rows.len();
        b.rows.drain(..skip);
        b.labels.drain(..skip);
        let predicted: Vec<bool> = s.rows.iter().map(|x| model.positive(x)).collect();
        let predicted_threshold: Vec<bool> = b.rows.iter().map(|x| threshold.positive(x)).collect();
        let c = Confusion::of(predicted.iter().copied(), &s.labels);
        let ct = Confusion::of(predicted_threshold.iter().copied(), &s.labels);
        for (sum, one) in [(&mut all, c), (&mut all_threshold, ct)] {
            sum.tp += one.tp;
            sum.fp += one.fp;
            sum.fn_ += one.fn_;
            sum.tn += one.tn;
        }
        per_rate.push(RateRow {
            rate_mbps: t.rate_mbps,
            f1: c.f1(),
            f1_threshold: ct.f1(),
            level: mean_level(s.labels.iter().copied(), t.max_level),
            level_model: mean_level(predicted, t.max_level),
            level_threshold: mean_level(predicted_threshold, t.max_level),
        });
    }
    let level_svm = if config.level_secs > 0.0 {
        // Packets of 1500 bytes: 12 kbit each.
        let packets = |rate: f64| (rate * 1e6 * config.level_secs / 12e3) as usize;
        level_svm::train_and_measure(
            &traces_of(config, "train", "level", packets)?,
            &traces_of(config, "test", "level", packets)?,
            &model,
            config.m,
            true,
            cap,
        )?
    } else {
        Vec::new()
    };
    let boundary = BoundaryModel {
        m: config.m,
        sigma: true,
        max_level,
        gap_cap_us: cap.is_finite().then_some(cap),
        logistic: model,
    };
    Ok(BoundaryOutcome {
        model: boundary,
        f1_vs_m,
        per_rate,
        f1: all.f1(),
        f1_threshold: all_threshold.f1(),
        level_svm,
    })
}

/// The bottleneck scenarios at `rate` (Mbit/s): (name, backhaul, label: backhaul-bound).
fn scenarios(rate: f64) -> Vec<(&'static str, Backhaul, bool)> {
    let mut s = vec![
        ("WLAN", Backhaul::gigabit(), false),
        (
            "backhaul 100M",
            Backhaul {
                rate_bps: 100e6,
                queue: 100,
                cross_bps: 0.0,
            },
            true,
        ),
    ];
    if rate >= 450.0 {
        s.push((
            "backhaul cross",
            Backhaul {
                cross_bps: 600e6,
                ..Backhaul::gigabit()
            },
            true,
        ));
    }
    s
}

/// Samples of one bottleneck trace (features from MAC timestamps), its mean level and loss.
/// Only frames in the second half of the trace give samples: the first half lets the queues
/// fill (a gigabit backhaul's 1000 packets take a tenth of a second to fill at 125 Mbit/s of
/// excess), so samples show the steady state the label describes.
pub fn bottleneck_samples(
    rx: &[Rx],
    sent: usize,
    n: usize,
    p: usize,
    label: bool,
) -> (Samples, f64, f64) {
    let mut window = BottleneckWindow::new(n, p);
    let mut s = Samples::default();
    let mut level = 0usize;
    let mut frames = 0usize;
    for (k, r) in rx.iter().enumerate() {
        if k > 0 && rx[k - 1].mac_ns != r.mac_ns {
            frames += 1;
            if let Some(x) = window.frame(level).filter(|_| 2 * k >= rx.len()) {
                s.rows.push(x);
                s.labels.push(label);
            }
            level = 0;
        }
        window.packet(r.seq);
        level += 1;
    }
    let mean = rx.len() as f64 / (frames + 1) as f64;
    let loss = 1.0 - rx.len() as f64 / sent.max(1) as f64;
    (s, mean, loss)
}

/// One bottleneck run: scenario name, send rate, what the station received, packets sent, label.
type Run = (String, f64, Vec<Rx>, usize, bool);

fn bottleneck_runs(config: &TrainConfig, split: &str) -> Result<Vec<Run>, String> {
    let mut out = Vec::new();
    for &rate in &config.bottleneck_rates_mbps {
        for (name, backhaul, label) in scenarios(rate) {
            let spec = TraceSpec {
                backhaul,
                ..TraceSpec::new(rate * 1e6, config.bottleneck_packets)
            };
            let rx = trace::run(&spec, run_seed(config.seed, split, "bottleneck", out.len()))?;
            out.push((name.to_string(), rate, rx, spec.packets, label));
        }
    }
    Ok(out)
}

/// A bottleneck classifier fitted on `train` with (n, p), measured on `test`: the model, the
/// per-scenario rows, the held-out confusion and the larger class's share of the training set.
fn fit_bottleneck(
    train: &[Run],
    test: &[Run],
    n: usize,
    p: usize,
) -> Result<(Logistic, Vec<ScenarioRow>, Confusion, f64), String> {
    let mut all = Samples::default();
    for (_, _, rx, sent, label) in train {
        all.extend(bottleneck_samples(rx, *sent, n, p, *label).0);
    }
    let model = fit_logistic(&all, true)?;
    let positive = all.labels.iter().filter(|l| **l).count() as f64 / all.labels.len() as f64;
    let baseline = positive.max(1.0 - positive);
    let mut total = Confusion::default();
    let mut rows = Vec::new();
    for (scenario, rate_mbps, rx, sent, label) in test {
        let (s, level, loss) = bottleneck_samples(rx, *sent, n, p, *label);
        let c = logistic_confusion(&model, &s);
        total.tp += c.tp;
        total.fp += c.fp;
        total.fn_ += c.fn_;
        total.tn += c.tn;
        rows.push(ScenarioRow {
            scenario: scenario.clone(),
            rate_mbps: *rate_mbps,
            level,
            loss,
            accuracy: c.accuracy(),
        });
    }
    Ok((model, rows, total, baseline))
}

/// One (n, p) of Fig. 4.17's sweep, held out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NpRow {
    /// Frames' levels per sample.
    pub n: usize,
    /// Packets of the loss fraction.
    pub p: usize,
    /// F1 of class "backhaul".
    pub f1: f64,
    /// Share classed correctly.
    pub accuracy: f64,
}

/// The bottleneck classifier and what was measured on it.
struct BottleneckOutcome {
    model: BottleneckModel,
    scenarios: Vec<ScenarioRow>,
    confusion: Confusion,
    baseline: f64,
    np_sweep: Vec<NpRow>,
}

/// The classifier with the configured (n, p), and Fig. 4.17's sweep over `n_sweep` × `p_sweep`.
fn train_bottleneck(config: &TrainConfig) -> Result<BottleneckOutcome, String> {
    let train = bottleneck_runs(config, "train")?;
    let test = bottleneck_runs(config, "test")?;
    let (model, rows, total, baseline) = fit_bottleneck(&train, &test, config.n, config.p)?;
    let mut sweep = Vec::new();
    for &n in &config.n_sweep {
        for &p in &config.p_sweep {
            let c = fit_bottleneck(&train, &test, n, p)?.2;
            sweep.push(NpRow {
                n,
                p,
                f1: c.f1(),
                accuracy: c.accuracy(),
            });
        }
    }
    Ok(BottleneckOutcome {
        model: BottleneckModel {
            n: config.n,
            p: config.p,
            logistic: model,
        },
        scenarios: rows,
        confusion: total,
        baseline,
        np_sweep: sweep,
    })
}

/// Generates the data, trains both estimators and measures them on held-out traces.
pub fn train(config: &TrainConfig) -> Result<(ModelFile, TrainReport), String> {
    config.validate()?;
    let BoundaryOutcome {
        model: boundary,
        f1_vs_m,
        per_rate,
        f1,
        f1_threshold,
        level_svm,
    } = train_boundary(config)?;
    let BottleneckOutcome {
        model: bottleneck,
        scenarios,
        confusion,
        baseline,
        np_sweep,
    } = train_bottleneck(config)?;
    let file = ModelFile {
        format: FORMAT.into(),
        version: VERSION,
        boundary,
        bottleneck,
        noise: config.noise,
        seed: config.seed,
    };
    let report = TrainReport {
        f1_vs_m,
        per_rate,
        f1,
        f1_threshold,
        level_svm,
        scenarios,
        bottleneck: confusion,
        bottleneck_baseline_accuracy: baseline,
        np_sweep,
    };
    Ok((file, report))
}
