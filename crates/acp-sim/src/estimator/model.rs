//! The trained estimators and their file: a JSON document written by `acp estimator train` and
//! read by `acp monitor --aggregation-model`.
//!
//! ```json
//! { "format": "acp-aggregation-estimator", "version": 1,
//!   "boundary":   { "m": 20, "sigma": true, "max_level": 128, "gap_cap_us": 412.3,
//!                   "logistic": { "mean": [..], "scale": [..], "intercept": -1.2, "weights": [..] } },
//!   "bottleneck": { "n": 5, "p": 100, "logistic": { .. } },
//!   "noise": { NAPI noise model used for the training data }, "seed": 1 }
//! ```
//!
//! A logistic model gives P(y = 1 | x) = 1 / (1 + exp(−(intercept + Σ weights_k·z_k))) with
//! z_k = (x_k − mean_k) / scale_k; for `boundary` y = 1 means "the packet starts a frame"
//! (thesis (4.4)), for `bottleneck` "the backhaul is the bottleneck". Loading checks the format
//! name, the version, the widths (m + σ, n + 1) and that every number is finite, and names what
//! is wrong.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::features::{BoundaryWindow, Frames};
use super::napi::NapiNoise;

/// The file's `format` field.
pub const FORMAT: &str = "acp-aggregation-estimator";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;

/// A standardised logistic model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logistic {
    /// Per-feature mean subtracted before weighting.
    pub mean: Vec<f64>,
    /// Per-feature scale divided by (positive).
    pub scale: Vec<f64>,
    /// θ₀.
    pub intercept: f64,
    /// θ.
    pub weights: Vec<f64>,
}

impl Logistic {
    /// P(y = 1 | x).
    pub fn probability(&self, x: &[f64]) -> f64 {
        let z: f64 = x
            .iter()
            .zip(&self.mean)
            .zip(&self.scale)
            .zip(&self.weights)
            .map(|(((x, m), s), w)| w * (x - m) / s)
            .sum();
        1.0 / (1.0 + (-(self.intercept + z)).exp())
    }

    /// Whether `x` is classed 1 (probability at least ½).
    pub fn positive(&self, x: &[f64]) -> bool {
        self.probability(x) >= 0.5
    }

    fn check(&self, what: &str, width: usize) -> Result<(), String> {
        for (name, v) in [
            ("mean", &self.mean),
            ("scale", &self.scale),
            ("weights", &self.weights),
        ] {
            if v.len() != width {
                return Err(format!(
                    "{what}.logistic.{name} has {} numbers, the features need {width}",
                    v.len()
                ));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!(
                    "{what}.logistic.{name} holds a number that is not finite"
                ));
            }
        }
        if self.scale.iter().any(|s| *s <= 0.0) {
            return Err(format!("{what}.logistic.scale must be positive"));
        }
        if !self.intercept.is_finite() {
            return Err(format!("{what}.logistic.intercept is not finite"));
        }
        Ok(())
    }
}

/// The frame-boundary estimator (§4.4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundaryModel {
    /// Inter-arrival times per packet.
    pub m: usize,
    /// Whether their standard deviation is a feature.
    pub sigma: bool,
    /// Levels are capped here (N_max).
    pub max_level: usize,
    /// Inter-arrival times above this (µs) count as this: the top of the training set's gaps
    /// (absent in files written before it: no cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_cap_us: Option<f64>,
    /// The classifier.
    pub logistic: Logistic,
}

impl BoundaryModel {
    /// The feature window the model reads.
    pub fn window(&self) -> BoundaryWindow {
        BoundaryWindow::new(self.m, self.sigma, self.gap_cap_us.unwrap_or(f64::INFINITY))
    }
}

/// The bottleneck-location classifier (§4.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BottleneckModel {
    /// Frames' levels per sample.
    pub n: usize,
    /// Packets the loss fraction is taken over.
    pub p: usize,
    /// The classifier (1: backhaul).
    pub logistic: Logistic,
}

/// The model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// Frame boundaries from receive timestamps.
    pub boundary: BoundaryModel,
    /// WLAN or backhaul.
    pub bottleneck: BottleneckModel,
    /// The timestamp noise of the training data.
    pub noise: NapiNoise,
    /// The training seed.
    pub seed: u64,
}

impl ModelFile {
    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("format {:?}, expected {FORMAT:?}", self.format));
        }
        if self.version != VERSION {
            return Err(format!(
                "version {} (this acp reads version {VERSION})",
                self.version
            ));
        }
        let b = &self.boundary;
        if b.m == 0 || b.max_level == 0 {
            return Err("boundary.m and boundary.max_level must be at least 1".into());
        }
        if b.gap_cap_us.is_some_and(|c| !(c.is_finite() && c > 0.0)) {
            return Err("boundary.gap_cap_us must be a positive number".into());
        }
        b.logistic.check("boundary", b.m + usize::from(b.sigma))?;
        let c = &self.bottleneck;
        if c.n == 0 || c.p == 0 {
            return Err("bottleneck.n and bottleneck.p must be at least 1".into());
        }
        c.logistic.check("bottleneck", c.n + 1)?;
        self.noise.validate()
    }

    /// Reads and checks a model file; the error names the file and what is wrong.
    pub fn load(path: &Path) -> Result<ModelFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read model {}: {e}", path.display()))?;
        let model: ModelFile = serde_json::from_str(&text)
            .map_err(|e| format!("model {} is not an estimator file: {e}", path.display()))?;
        model
            .validate()
            .map_err(|e| format!("model {}: {e}", path.display()))?;
        Ok(model)
    }

    /// Writes the file (pretty JSON).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write model {}: {e}", path.display()))
    }
}

/// Aggregation levels estimated online from receive timestamps with a [`BoundaryModel`].
#[derive(Debug, Clone)]
pub struct LevelEstimator {
    model: BoundaryModel,
    window: BoundaryWindow,
    frames: Frames,
}

impl LevelEstimator {
    /// An estimator with `model`.
    pub fn new(model: BoundaryModel) -> Self {
        LevelEstimator {
            window: model.window(),
            frames: Frames::new(model.max_level),
            model,
        }
    }

    /// The next packet's receive timestamp (ns). Packets before the window is full are not
    /// classified.
    pub fn packet(&mut self, stamp_ns: u64) {
        if let Some(x) = self.window.push(stamp_ns) {
            self.frames.packet(self.model.logistic.positive(&x));
        }
    }

    /// The frames that ended since the last call and their mean level (`None`: no frame
    /// ended).
    pub fn take(&mut self) -> Option<(usize, f64)> {
        self.frames.take()
    }
}
