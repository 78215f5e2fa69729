//! Random loss: none, Bernoulli, or the two-state Gilbert–Elliott channel.
//!
//! Gilbert–Elliott is a Markov chain over packets with a Good and a Bad state. Before each packet
//! the chain moves Good→Bad with probability `p` and Bad→Good with probability `r`; the packet is
//! then lost with probability `loss_good` or `loss_bad` of the state it is in. In the long run the
//! chain is Bad a fraction `p / (p + r)` of packets, so the loss rate is
//! `(r·loss_good + p·loss_bad) / (p + r)`; with `loss_good = 0` and `loss_bad = 1` (the plain
//! Gilbert model) losses come in bursts of mean length `1 / r`.

use crate::rng::Rng;

/// A loss model's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossModel {
    /// Nothing is lost.
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// The Gilbert–Elliott channel.
    GilbertElliott {
        /// Probability of moving Good→Bad before a packet.
        p: f64,
        /// Probability of moving Bad→Good before a packet.
        r: f64,
        /// Loss probability in the Good state.
        loss_good: f64,
        /// Loss probability in the Bad state.
        loss_bad: f64,
    },
}

impl LossModel {
    /// Checks every probability is in `[0, 1]` (and that Gilbert–Elliott can leave both states'
    /// union, i.e. `p + r > 0`).
    pub fn validate(&self) -> Result<(), String> {
        let prob = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} {v} must be a probability in [0, 1]"))
            }
        };
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => prob("loss", p),
            LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                prob("p (good→bad)", p)?;
                prob("r (bad→good)", r)?;
                prob("loss_good", loss_good)?;
                prob("loss_bad", loss_bad)?;
                if p + r <= 0.0 {
                    return Err("Gilbert–Elliott needs p + r > 0".into());
                }
                Ok(())
            }
        }
    }

    /// The long-run fraction of packets lost.
    pub fn stationary_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => (r * loss_good + p * loss_bad) / (p + r),
        }
    }

    /// Mean number of consecutive packets lost, for a model whose losses are runs of one state
    /// (Bernoulli: `1 / (1 − p)`; Gilbert: `1 / r` when `loss_good = 0`, `loss_bad = 1`).
    pub fn mean_burst(&self) -> Option<f64> {
        match *self {
            LossModel::None => None,
            LossModel::Bernoulli { p } => (p < 1.0).then(|| 1.0 / (1.0 - p)),
            LossModel::GilbertElliott {
                r,
                loss_good,
                loss_bad,
                ..
            } => (loss_good == 0.0 && loss_bad == 1.0 && r > 0.0).then(|| 1.0 / r),
        }
    }
}

/// A loss model with its state and its own random stream.
#[derive(Debug, Clone)]
pub struct Loss {
    model: LossModel,
    bad: bool,
    rng: Rng,
}

impl Loss {
    /// Starts in the Good state.
    pub fn new(model: LossModel, rng: Rng) -> Self {
        Loss {
            model,
            bad: false,
            rng,
        }
    }

    /// Replaces the model (a schedule step); a Gilbert–Elliott chain keeps its state.
    pub fn set_model(&mut self, model: LossModel) {
        if !matches!(model, LossModel::GilbertElliott { .. }) {
            self.bad = false;
        }
        self.model = model;
    }

    /// The model in force.
    pub fn model(&self) -> LossModel {
        self.model
    }

    /// Whether the next packet is lost. Draws nothing when the model is [`LossModel::None`].
    pub fn lose(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.rng.chance(p),
            LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad { r } else { p };
                if self.rng.chance(flip) {
                    self.bad = !self.bad;
                }
                self.rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loss rate and mean burst length of `n` packets.
    fn measure(model: LossModel, seed: u64, n: usize) -> (f64, f64) {
        let mut loss = Loss::new(model, Rng::new(seed));
        let (mut lost, mut bursts, mut run) = (0usize, 0usize, 0usize);
        for _ in 0..n {
            if loss.lose() {
                lost += 1;
                run += 1;
            } else if run > 0 {
                bursts += 1;
                run = 0;
            }
        }
        bursts += usize::from(run > 0);
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn bernoulli_matches_its_probability() {
        let (rate, burst) = measure(LossModel::Bernoulli { p: 0.1 }, 1, 1_000_000);
        // Binomial standard error sqrt(0.1·0.9/10⁶) = 3·10⁻⁴: ±0.0015 is 5 σ.
        assert!((rate - 0.1).abs() < 0.0015, "{rate}");
        // Runs of a Bernoulli(0.1) loss are geometric with mean 1/0.9.
        assert!((burst - 1.0 / 0.9).abs() < 0.01, "{burst}");
    }

    #[test]
    fn gilbert_elliott_matches_its_stationary_formulas() {
        // Plain Gilbert: p = 0.01, r = 0.25 → loss 0.01/0.26 = 3.85 %, bursts of mean 4.
        let model = LossModel::GilbertElliott {
            p: 0.01,
            r: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let (rate, burst) = measure(model, 2, 8_000_000);
        let (want_rate, want_burst) = (model.stationary_loss(), model.mean_burst().unwrap());
        assert!((want_rate - 0.01 / 0.26).abs() < 1e-12);
        // The chain's states are correlated from packet to packet (lag-one correlation
        // ρ = 1 − p − r = 0.74), which inflates the loss rate's binomial variance by
        // (1 + ρ)/(1 − ρ) ≈ 6.7: over 8·10⁶ packets its relative standard error is 0.45 %. The
        // ≈ 300,000 bursts are geometric (sd 3.5), so the mean burst's is 0.16 %. 2 % is over
        // four standard errors for both.
        assert!(
            (rate / want_rate - 1.0).abs() < 0.02,
            "{rate} vs {want_rate}"
        );
        assert!(
            (burst / want_burst - 1.0).abs() < 0.02,
            "{burst} vs {want_burst}"
        );

        // Elliott's general form: lossy Good state, partly lossy Bad state.
        let model = LossModel::GilbertElliott {
            p: 0.05,
            r: 0.2,
            loss_good: 0.01,
            loss_bad: 0.5,
        };
        // ρ = 0.75, so a factor 7 on the binomial variance: 0.27 % relative standard error.
        let (rate, _) = measure(model, 3, 8_000_000);
        let want = (0.2 * 0.01 + 0.05 * 0.5) / 0.25;
        assert!((model.stationary_loss() - want).abs() < 1e-12);
        assert!((rate / want - 1.0).abs() < 0.02, "{rate} vs {want}");
    }

    #[test]
    fn validation_and_no_draws_without_loss() {
        assert!(LossModel::Bernoulli { p: 1.5 }.validate().is_err());
        assert!(LossModel::GilbertElliott {
            p: 0.0,
            r: 0.0,
            loss_good: 0.0,
            loss_bad: 1.0
        }
        .validate()
        .is_err());
        let mut l = Loss::new(LossModel::None, Rng::new(1));
        assert!((0..100).all(|_| !l.lose()));
        assert_eq!(
            l.rng.next_u64(),
            Rng::new(1).next_u64(),
            "None draws nothing"
        );
    }
}
