//! Exponentially weighted moving averages (the source's RTT̄ and Z̄ estimators, paper eq. 6).

/// `x̄ ← (1 − α)·x̄ + α·x`; the first sample initialises the average.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ewma {
    alpha: f64,
    value: Option<f64>,
}

impl Ewma {
    /// An empty average with weight `alpha` on each new sample (clamped to `[0, 1]`).
    pub fn new(alpha: f64) -> Self {
        Ewma {
            alpha: alpha.clamp(0.0, 1.0),
            value: None,
        }
    }

    /// Folds in `sample` and returns the new average.
    pub fn update(&mut self, sample: f64) -> f64 {
        let v = match self.value {
            None => sample,
            Some(v) => (1.0 - self.alpha) * v + self.alpha * sample,
        };
        self.value = Some(v);
        v
    }

    /// Replaces the average by `value` (used to seed it from the initialisation probes).
    pub fn set(&mut self, value: f64) {
        self.value = Some(value);
    }

    /// The current average, if any sample has been seen.
    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_initialises_then_weights_by_alpha() {
        let mut e = Ewma::new(0.2);
        assert_eq!(e.get(), None);
        assert_eq!(e.update(10.0), 10.0);
        // 0.8·10 + 0.2·20 = 12
        assert!((e.update(20.0) - 12.0).abs() < 1e-12);
        // 0.8·12 + 0.2·2 = 10
        assert!((e.update(2.0) - 10.0).abs() < 1e-12);
    }
}
