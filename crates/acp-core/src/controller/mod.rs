//! Rate controllers: one trait, eight controllers.
//!
//! A [`Controller`] chooses the source's update rate λ (updates/s). The source consults it
//! - once when initialisation ends ([`Controller::initial_rate`]),
//! - on every in-sequence ACK ([`Controller::on_ack`]; Lazy reacts here),
//! - at the end of each control epoch with the epoch's time averages ([`Controller::on_epoch`]),
//! - for every receiver-feedback element an ACK carries ([`Controller::on_feedback`]), so a
//!   controller can regulate a quantity the receiver reports (e.g. a WiFi aggregation level)
//!   rather than only ACK timing.
//!
//! The source applies the configured bounds `[λ_min, λ_max]` to whatever a controller returns.
//!
//! [`Acp`] implements both ACP+ (paper Algorithm 1) and the original ACP (thesis Algorithm 2) with
//! one decision procedure; they differ only in the parameters recorded in [`AcpVariant`].
//! [`Seek`] (module [`seek`]) is ours: it measures the slope of the age-versus-rate curve.
//! [`PiAggregation`] (module [`aggregation`]) and [`InnerOuterControl`] (module [`inner_outer`])
//! regulate the WiFi aggregation level the receiver reports (aggregation thesis Algorithms 1 and
//! 2; `docs/AGGREGATION.md`); [`airtime`] and [`pf_allocation`] hold their multi-station
//! allocations and [`aggregation_model`] the §5.2 model they rest on.
//! `docs/ALGORITHMS.md` gives the equations and the decisions the papers leave open.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::wire::FeedbackItem;

pub mod aggregation;
pub mod aggregation_model;
pub mod airtime;
pub mod inner_outer;
pub mod pf_allocation;
pub mod seek;
pub use aggregation::{PiAggregation, PiParams};
pub use inner_outer::{InnerOuterControl, InnerOuterParams};
pub use seek::Seek;

/// The source's estimates when a controller is consulted (seconds and updates/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimates {
    /// RTT̄: EWMA of round-trip times of in-sequence ACKs.
    pub rtt: f64,
    /// Z̄: EWMA of the times between in-sequence ACKs.
    pub z: f64,
    /// The rate λ currently in force.
    pub rate: f64,
}

/// Time averages over one control epoch, measured at the source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochSummary {
    /// Δ̄_k: time-average estimated age over the epoch (s).
    pub avg_age: f64,
    /// B̄_k: time-average estimated backlog over the epoch (updates).
    pub avg_backlog: f64,
}

/// The action a backlog/age controller took at an epoch boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// First epoch: no previous epoch to compare with, rate unchanged.
    Hold,
    /// Additive increase of the target backlog.
    Inc,
    /// Additive decrease of the target backlog.
    Dec,
    /// Multiplicative decrease MDEC(γ): target change `−(1 − 2^−γ)·B̄_k`.
    Mdec(u32),
}

/// Internal state of a controller, for statistics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ControllerState {
    /// The algorithms' `flag`: the previous action was taken because backlog and age both rose.
    pub flag: bool,
    /// The algorithms' γ: how many consecutive multiplicative decreases deep the controller is.
    pub gamma: u32,
    /// The last action, if any epoch has ended.
    pub last_action: Option<Action>,
    /// The target backlog change b* of the last action.
    pub target: f64,
}

/// A rate controller. Implementations must be deterministic functions of the calls they receive.
pub trait Controller: Send + fmt::Debug {
    /// Short name with the parameters that matter, e.g. `acp+`, `acp(κ=0.25)`, `lazy`,
    /// `fixed:50`; [`ControllerKind`] parses it back.
    fn name(&self) -> String;

    /// The rate for the first epoch, from the initialisation probes. Default: one update per RTT̄.
    fn initial_rate(&mut self, est: &Estimates) -> f64 {
        1.0 / est.rtt
    }

    /// Called on every in-sequence ACK after initialisation, with RTT̄/Z̄ already updated.
    /// Returning `Some(λ)` changes the rate immediately.
    fn on_ack(&mut self, _est: &Estimates) -> Option<f64> {
        None
    }

    /// Called at the end of each control epoch; returns the rate for the next epoch.
    fn on_epoch(&mut self, summary: &EpochSummary, est: &Estimates) -> f64;

    /// Length (s) of the epoch that starts now, given the rate just chosen (`est.rate`).
    fn epoch_length(&self, est: &Estimates) -> f64;

    /// Receiver feedback carried by an in-sequence ACK. Default: ignored.
    fn on_feedback(&mut self, _item: &FeedbackItem<'_>) {}

    /// Forget epoch history (after a path outage): the next epoch is compared with nothing.
    fn restart(&mut self) {}

    /// The capacity under the source changed by `factor` (a multipath source lost a path or got
    /// one back, [`crate::multipath`]): scale every rate the controller remembers (a centre, a
    /// ceiling) by it, and answer whether the source is to scale its rate in force too.
    ///
    /// Default: nothing remembered, and yes: a rate found from the network (ACP, ACP+) was found
    /// for the paths then working, and the controller goes on from the scaled rate (ACP+ clamps
    /// its next rate to the rate in force; ACP's `1/Z̄` follows the ACKs of the paths left).
    /// Fixed and Lazy answer no: their rate is not a share of the capacity (a constant, and one
    /// update per RTT̄ at every ACK), so a scaled rate would hold only until their next epoch or
    /// ACK restored it.
    fn scale_rates(&mut self, _factor: f64) -> bool {
        true
    }

    /// Internal state for statistics.
    fn state(&self) -> ControllerState {
        ControllerState::default()
    }
}

/// The two published variants of the backlog/age controller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AcpVariant {
    /// ACP+ (ACP+ paper Algorithm 1): step 1, λ = 1/Z̄ + b*/RTT̄ clamped to [0.75, 1.25]·λ_{k−1},
    /// epoch 10/λ.
    Plus,
    /// Original ACP (thesis Algorithm 2): step κ, 𝒯 = min(RTT̄, Z̄), λ = 1/Z̄ + b*/𝒯 but at least
    /// one update per RTT̄, epoch 10·𝒯, and an MDEC on a weak backlog increase.
    Original {
        /// Step size κ > 0.
        kappa: f64,
    },
}

/// Epoch length in send periods (ACP+) or in units of 𝒯 (ACP).
const EPOCH_PERIODS: f64 = 10.0;
/// ACP+ bounds on the change of λ from one epoch to the next.
const PLUS_MIN_FACTOR: f64 = 0.75;
const PLUS_MAX_FACTOR: f64 = 1.25;

/// ACP+ or ACP: reacts to the signs of the changes in average backlog (b) and age (δ).
#[derive(Debug, Clone)]
pub struct Acp {
    variant: AcpVariant,
    prev: Option<EpochSummary>,
    state: ControllerState,
}

impl Acp {
    /// ACP+.
    pub fn plus() -> Self {
        Self::new(AcpVariant::Plus)
    }

    /// Original ACP with step `kappa` (0.25 in the thesis' simulations, 1–2 over the Internet).
    pub fn original(kappa: f64) -> Self {
        Self::new(AcpVariant::Original { kappa })
    }

    fn new(variant: AcpVariant) -> Self {
        Acp {
            variant,
            prev: None,
            state: ControllerState::default(),
        }
    }

    fn kappa(&self) -> f64 {
        match self.variant {
            AcpVariant::Plus => 1.0,
            AcpVariant::Original { kappa } => kappa,
        }
    }

    /// Algorithm 1 / Algorithm 2: picks the action from the signs of `b` and `delta`, updating
    /// flag and γ. Ties: `b > 0` means backlog rose, `b ≤ 0` that it did not; `δ ≥ 0` means age
    /// rose, `δ < 0` that it fell (see docs/ALGORITHMS.md).
    fn choose(&mut self, b: f64, delta: f64) -> Action {
        let s = &mut self.state;
        let backlog_rose = b > 0.0;
        let age_rose = delta >= 0.0;
        let original = matches!(self.variant, AcpVariant::Original { .. });
        match (backlog_rose, age_rose) {
            (true, true) => {
                let action = if s.flag {
                    s.gamma = s.gamma.saturating_add(1);
                    Action::Mdec(s.gamma)
                } else {
                    Action::Dec
                };
                s.flag = true;
                action
            }
            (true, false) if original && s.flag && b.abs() < 0.5 * s.target.abs() => {
                s.gamma = s.gamma.saturating_add(1);
                Action::Mdec(s.gamma)
            }
            (true, false) | (false, true) => {
                s.flag = false;
                s.gamma = 0;
                Action::Inc
            }
            (false, false) => {
                if s.flag && s.gamma > 0 {
                    Action::Mdec(s.gamma)
                } else {
                    s.flag = false;
                    s.gamma = 0;
                    Action::Dec
                }
            }
        }
    }

    fn target(&self, action: Action, avg_backlog: f64) -> f64 {
        match action {
            Action::Hold => 0.0,
            Action::Inc => self.kappa(),
            Action::Dec => -self.kappa(),
            Action::Mdec(gamma) => -(1.0 - 0.5f64.powi(gamma.min(1024) as i32)) * avg_backlog,
        }
    }

    /// `λ_k = 1/Z̄ + b*/X` with the variant's X and its guard.
    fn rate_for(&self, target: f64, est: &Estimates) -> f64 {
        match self.variant {
            AcpVariant::Plus => (1.0 / est.z + target / est.rtt)
                .clamp(PLUS_MIN_FACTOR * est.rate, PLUS_MAX_FACTOR * est.rate),
            // Thesis §3.10: "we reset λ_k to be at least one packet per round-trip time", the
            // floor that keeps "a minimum backlog of 1 per source" (§3.13).
            AcpVariant::Original { .. } => {
                (1.0 / est.z + target / est.rtt.min(est.z)).max(1.0 / est.rtt)
            }
        }
    }
}

impl Controller for Acp {
    fn name(&self) -> String {
        match self.variant {
            AcpVariant::Plus => "acp+".into(),
            AcpVariant::Original { kappa } => format!("acp(κ={kappa})"),
        }
    }

    fn on_epoch(&mut self, summary: &EpochSummary, est: &Estimates) -> f64 {
        let Some(prev) = self.prev.replace(*summary) else {
            self.state.last_action = Some(Action::Hold);
            self.state.target = 0.0;
            return est.rate;
        };
        let b = summary.avg_backlog - prev.avg_backlog;
        let delta = summary.avg_age - prev.avg_age;
        let action = self.choose(b, delta);
        let target = self.target(action, summary.avg_backlog);
        self.state.last_action = Some(action);
        self.state.target = target;
        self.rate_for(target, est)
    }

    fn epoch_length(&self, est: &Estimates) -> f64 {
        match self.variant {
            AcpVariant::Plus => EPOCH_PERIODS / est.rate,
            AcpVariant::Original { .. } => EPOCH_PERIODS * est.rtt.min(est.z),
        }
    }

    fn restart(&mut self) {
        self.prev = None;
        self.state = ControllerState::default();
    }

    fn state(&self) -> ControllerState {
        self.state
    }
}

/// Lazy: λ = 1/RTT̄ on every ACK, keeping about one update in flight.
#[derive(Debug, Clone, Default)]
pub struct Lazy;

impl Controller for Lazy {
    fn name(&self) -> String {
        "lazy".into()
    }

    fn on_ack(&mut self, est: &Estimates) -> Option<f64> {
        Some(1.0 / est.rtt)
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        1.0 / est.rtt
    }

    fn scale_rates(&mut self, _factor: f64) -> bool {
        false
    }

    fn epoch_length(&self, est: &Estimates) -> f64 {
        EPOCH_PERIODS / est.rate
    }
}

/// Fixed(λ): a constant rate, whatever the network does. A sweep over Fixed rates is the oracle.
#[derive(Debug, Clone)]
pub struct Fixed {
    rate: f64,
}

impl Fixed {
    /// A controller that always answers `rate` updates/s.
    pub fn new(rate: f64) -> Self {
        Fixed { rate }
    }
}

impl Controller for Fixed {
    fn name(&self) -> String {
        format!("fixed:{}", self.rate)
    }

    fn initial_rate(&mut self, _est: &Estimates) -> f64 {
        self.rate
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, _est: &Estimates) -> f64 {
        self.rate
    }

    fn scale_rates(&mut self, _factor: f64) -> bool {
        false
    }

    fn epoch_length(&self, _est: &Estimates) -> f64 {
        EPOCH_PERIODS / self.rate
    }
}

/// A controller chosen by name, e.g. on the command line or in a scenario file:
/// `seek`, `acp+`, `acp`, `acp:KAPPA`, `lazy`, `fixed:RATE`, `agg[:NEPS[,K0[,DELTA]]]`,
/// `agg-io[:TBAR_MS[,NBAR[,K1[,K2]]]]`, `agg-air:LEAD_MBPS[,NEPS[,K0[,DELTA]]]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ControllerKind {
    /// Seek (ours): measures the slope of age against rate.
    Seek,
    /// ACP+.
    AcpPlus,
    /// Original ACP with step κ (default 1, the thesis' Internet setting).
    Acp(f64),
    /// Lazy.
    Lazy,
    /// Fixed rate (updates/s).
    Fixed(f64),
    /// PI aggregation control (aggregation thesis Algorithm 1).
    AggPi(PiParams),
    /// Inner–outer aggregation control (aggregation thesis Algorithm 2) with delay target T̄ (s),
    /// level cap N̄ and gains K₁, K₂; the other parameters are the thesis' defaults.
    AggInnerOuter {
        /// T̄ (s).
        t_bar: f64,
        /// N̄.
        n_bar: f64,
        /// Inner-loop gain K₁.
        k1: f64,
        /// Outer-loop gain K₂.
        k2: f64,
    },
    /// A source's share of equal airtime (aggregation thesis §4.3.2, [`PiAggregation::equal_airtime`]):
    /// Algorithm 1 towards N_ε·μ_R/`lead_mbps`.
    AggAirtime {
        /// Algorithm 1's parameters; N_ε is the lead station's level.
        pi: PiParams,
        /// The lead (fastest) station's PHY rate (Mbit/s).
        lead_mbps: f64,
    },
}

impl ControllerKind {
    /// A fresh controller of this kind.
    pub fn build(&self) -> Box<dyn Controller> {
        match *self {
            ControllerKind::Seek => Box::new(Seek::new()),
            ControllerKind::AcpPlus => Box::new(Acp::plus()),
            ControllerKind::Acp(kappa) => Box::new(Acp::original(kappa)),
            ControllerKind::Lazy => Box::new(Lazy),
            ControllerKind::Fixed(rate) => Box::new(Fixed::new(rate)),
            ControllerKind::AggPi(p) => Box::new(PiAggregation::new(p)),
            ControllerKind::AggInnerOuter { .. } => Box::new(InnerOuterControl::new(
                self.inner_outer().unwrap_or_default(),
            )),
            ControllerKind::AggAirtime { pi, lead_mbps } => {
                Box::new(PiAggregation::equal_airtime(pi, lead_mbps))
            }
        }
    }

    /// Fresh controllers for one sender that feeds `flows` flows (at least one), one per flow in
    /// order, sharing one state: Algorithm 2 (`agg-io`) sets every station's rate from all their
    /// reports ([`InnerOuterControl::group`]). One flow: [`Self::build`]'s controller. Every
    /// other kind regulates one flow on its own, so several flows are refused.
    pub fn build_sender(&self, flows: usize) -> Result<Vec<Box<dyn Controller>>, String> {
        if flows <= 1 {
            return Ok(vec![self.build()]);
        }
        match self.inner_outer() {
            Some(p) => Ok(InnerOuterControl::group(p, flows)
                .into_iter()
                .map(|c| Box::new(c) as Box<dyn Controller>)
                .collect()),
            None => Err(format!(
                "{self} regulates each flow on its own; only agg-io drives several flows from one controller"
            )),
        }
    }

    /// Algorithm 2's parameters, if this is `agg-io`.
    fn inner_outer(&self) -> Option<InnerOuterParams> {
        match *self {
            ControllerKind::AggInnerOuter {
                t_bar,
                n_bar,
                k1,
                k2,
            } => Some(InnerOuterParams {
                t_bar,
                n_bar,
                k1,
                k2,
                ..InnerOuterParams::default()
            }),
            _ => None,
        }
    }
}

/// The rates (updates/s) a source supports by default: [`SourceConfig`]'s `min_rate..=max_rate`.
/// A source clamps any rate to its range, so `fixed:RATE` must lie within it.
///
/// [`SourceConfig`]: crate::SourceConfig
pub fn supported_rates() -> RangeInclusive<f64> {
    let c = crate::SourceConfig::default();
    c.min_rate..=c.max_rate
}

fn fixed_rate(s: &str) -> Result<f64, String> {
    let rate = positive("RATE", s)?;
    let range = supported_rates();
    if !range.contains(&rate) {
        return Err(format!(
            "RATE must be within {}–{} updates/s, got {s:?}",
            range.start(),
            range.end()
        ));
    }
    Ok(rate)
}

/// `NEPS[,K0[,DELTA]]` of `agg:`; omitted fields keep the thesis' defaults.
fn pi_params(s: &str) -> Result<PiParams, String> {
    let mut p = PiParams::default();
    let mut fields = s.split(',');
    let slots = [
        ("NEPS", &mut p.n_eps),
        ("K0", &mut p.k0),
        ("DELTA", &mut p.delta),
    ];
    for (name, slot) in slots {
        if let Some(v) = fields.next() {
            *slot = positive(name, v)?;
        }
    }
    if fields.next().is_some() {
        return Err(format!("agg takes at most NEPS,K0,DELTA, got {s:?}"));
    }
    Ok(p)
}

/// `TBAR_MS[,NBAR[,K1[,K2]]]` of `agg-io:` (`None`: plain `agg-io`); omitted fields keep the
/// thesis' defaults.
fn inner_outer_params(s: Option<&str>) -> Result<ControllerKind, String> {
    let d = InnerOuterParams::default();
    let (mut t_ms, mut n_bar, mut k1, mut k2) = (d.t_bar * 1e3, d.n_bar, d.k1, d.k2);
    let mut fields = s.into_iter().flat_map(|s| s.split(','));
    let slots = [
        ("TBAR_MS", &mut t_ms),
        ("NBAR", &mut n_bar),
        ("K1", &mut k1),
        ("K2", &mut k2),
    ];
    for (name, slot) in slots {
        if let Some(v) = fields.next() {
            *slot = positive(name, v)?;
        }
    }
    if fields.next().is_some() {
        return Err(format!(
            "agg-io takes at most TBAR_MS,NBAR,K1,K2, got {s:?}"
        ));
    }
    Ok(ControllerKind::AggInnerOuter {
        t_bar: t_ms * 1e-3,
        n_bar,
        k1,
        k2,
    })
}

fn positive(what: &str, s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("{what} must be a positive number, got {s:?}"))
}

impl FromStr for ControllerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        // `acp(κ=0.25)` and `acp(kappa=0.25)` are the names results print; read them back too.
        let labelled = s
            .strip_suffix(')')
            .and_then(|r| r.split_once('('))
            .and_then(|(n, a)| {
                let k = a.strip_prefix("κ=").or_else(|| a.strip_prefix("kappa="))?;
                Some((n, Some(k)))
            });
        let (name, arg) = match (labelled, s.split_once(':')) {
            (Some(l), _) => l,
            (None, Some((n, a))) => (n, Some(a)),
            (None, None) => (s, None),
        };
        match (name.to_ascii_lowercase().as_str(), arg) {
            ("seek", None) => Ok(ControllerKind::Seek),
            ("acp+", None) => Ok(ControllerKind::AcpPlus),
            ("acp", None) => Ok(ControllerKind::Acp(1.0)),
            ("acp", Some(k)) => positive("KAPPA", k).map(ControllerKind::Acp),
            ("lazy", None) => Ok(ControllerKind::Lazy),
            ("fixed", Some(r)) => fixed_rate(r).map(ControllerKind::Fixed),
            ("fixed", None) => Err("fixed needs a rate: fixed:RATE (updates/s)".into()),
            ("agg", None) => Ok(ControllerKind::AggPi(PiParams::default())),
            ("agg", Some(a)) => pi_params(a).map(ControllerKind::AggPi),
            ("agg-io", a) => inner_outer_params(a),
            ("agg-air", Some(a)) => {
                let (lead, rest) = a.split_once(',').map_or((a, None), |(l, r)| (l, Some(r)));
                Ok(ControllerKind::AggAirtime {
                    lead_mbps: positive("LEAD_MBPS", lead)?,
                    pi: rest.map_or(Ok(PiParams::default()), pi_params)?,
                })
            }
            ("agg-air", None) => Err(
                "agg-air needs the lead station's PHY rate: agg-air:LEAD_MBPS[,NEPS[,K0[,DELTA]]]"
                    .into(),
            ),
            _ => Err(format!(
                "unknown controller {s:?} (expected seek, acp+, acp[:KAPPA], lazy, fixed:RATE, \
                 agg[:NEPS[,K0[,DELTA]]], agg-io[:TBAR_MS[,NBAR[,K1[,K2]]]] or \
                 agg-air:LEAD_MBPS[,NEPS[,K0[,DELTA]]])"
            )),
        }
    }
}

impl fmt::Display for ControllerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.build().name())
    }
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    #[test]
    fn only_agg_io_drives_several_flows_from_one_controller() {
        let io: ControllerKind = "agg-io:3,48".parse().unwrap_or(ControllerKind::Seek);
        let flows = io.build_sender(3).unwrap_or_default();
        assert_eq!(flows.len(), 3);
        assert!(flows.iter().all(|c| c.name() == "agg-io:3,48"));
        assert_eq!(ControllerKind::Seek.build_sender(1).map(|v| v.len()), Ok(1));
        let refused = ControllerKind::AggPi(PiParams::default()).build_sender(2);
        assert!(refused.is_err_and(|e| e.contains("only agg-io")));
    }

    #[test]
    fn parses_every_form() {
        assert_eq!("acp+".parse(), Ok(ControllerKind::AcpPlus));
        assert_eq!("ACP".parse(), Ok(ControllerKind::Acp(1.0)));
        assert_eq!("acp:0.25".parse(), Ok(ControllerKind::Acp(0.25)));
        assert_eq!("acp(κ=0.25)".parse(), Ok(ControllerKind::Acp(0.25)));
        assert_eq!("acp(kappa=2)".parse(), Ok(ControllerKind::Acp(2.0)));
        assert_eq!(ControllerKind::Acp(0.25).to_string(), "acp(κ=0.25)");
        assert_eq!(ControllerKind::Acp(1.0).to_string(), "acp(κ=1)");
        assert_eq!("lazy".parse(), Ok(ControllerKind::Lazy));
        assert_eq!("fixed:50".parse(), Ok(ControllerKind::Fixed(50.0)));
        for bad in [
            "fixed", "fixed:-1", "acp:x", "tcp", "lazy:3", "acp(κ=)", "acp(x=1)",
        ] {
            assert!(bad.parse::<ControllerKind>().is_err(), "{bad}");
        }
        // A source would clamp these silently.
        assert_eq!("fixed:0.1".parse(), Ok(ControllerKind::Fixed(0.1)));
        assert_eq!("fixed:1e6".parse(), Ok(ControllerKind::Fixed(1e6)));
        for outside in ["fixed:1e-300", "fixed:0.09", "fixed:1000001"] {
            assert_eq!(
                outside.parse::<ControllerKind>(),
                Err(format!(
                    "RATE must be within 0.1–1000000 updates/s, got {:?}",
                    &outside[6..]
                )),
            );
        }
        assert_eq!(ControllerKind::Fixed(50.0).to_string(), "fixed:50");
        let pi = |n_eps, k0, delta| ControllerKind::AggPi(PiParams { n_eps, k0, delta });
        assert_eq!("agg:32".parse(), Ok(pi(32.0, 1.0, 0.5)));
        assert_eq!("agg".parse(), Ok(pi(32.0, 1.0, 0.5)));
        assert_eq!("agg:20,10,1.25".parse(), Ok(pi(20.0, 10.0, 1.25)));
        assert_eq!(pi(20.0, 10.0, 1.25).to_string(), "agg:20,10,1.25");
        assert_eq!(
            "agg:20,10,1.25"
                .parse::<ControllerKind>()
                .unwrap()
                .to_string(),
            "agg:20,10,1.25"
        );
        let io = |t_bar, n_bar, k1, k2| ControllerKind::AggInnerOuter {
            t_bar,
            n_bar,
            k1,
            k2,
        };
        assert_eq!("agg-io".parse(), Ok(io(5e-3, 32.0, 0.5, 0.2)));
        assert_eq!("agg-io:2.5,48".parse(), Ok(io(2.5e-3, 48.0, 0.5, 0.2)));
        assert_eq!(io(2.5e-3, 48.0, 0.5, 0.2).to_string(), "agg-io:2.5,48");
        assert_eq!("agg-io:2.5,48,1.5".parse(), Ok(io(2.5e-3, 48.0, 1.5, 0.2)));
        assert_eq!(
            io(2.5e-3, 48.0, 1.5, 0.9).to_string(),
            "agg-io:2.5,48,1.5,0.9"
        );
        assert_eq!(
            "agg-io:2.5,48,1.5,0.9".parse(),
            Ok(io(2.5e-3, 48.0, 1.5, 0.9))
        );
        let air = ControllerKind::AggAirtime {
            pi: PiParams::default(),
            lead_mbps: 866.7,
        };
        assert_eq!("agg-air:866.7".parse(), Ok(air));
        assert_eq!(air.to_string(), "agg-air:866.7,32,1,0.5");
        assert_eq!(air.to_string().parse(), Ok(air));
        for bad in [
            "agg:0",
            "agg:32,-1",
            "agg:32,1,0.5,9",
            "agg:x",
            "agg-io:0",
            "agg-io:5,x",
            "agg-io:5,32,0",
            "agg-io:5,32,0.5,0.2,1",
            "agg-air",
            "agg-air:0",
            "agg-air:866.7,32,1,0.5,9",
        ] {
            assert!(bad.parse::<ControllerKind>().is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row of a controller table: state before, observed changes, expected outcome.
    struct Row {
        name: &'static str,
        flag: bool,
        gamma: u32,
        target: f64,
        b: f64,
        delta: f64,
        backlog: f64,
        est: Estimates,
        action: Action,
        rate: f64,
        flag_after: bool,
        gamma_after: u32,
    }

    /// RTT̄ = 100 ms, Z̄ = 20 ms (1/Z̄ = 50/s), λ_{k−1} = 50/s.
    const EST: Estimates = Estimates {
        rtt: 0.1,
        z: 0.02,
        rate: 50.0,
    };

    #[allow(clippy::too_many_arguments)]
    const fn row(
        name: &'static str,
        (flag, gamma, target): (bool, u32, f64),
        (b, delta, backlog): (f64, f64, f64),
        est: Estimates,
        action: Action,
        rate: f64,
        (flag_after, gamma_after): (bool, u32),
    ) -> Row {
        Row {
            name,
            flag,
            gamma,
            target,
            b,
            delta,
            backlog,
            est,
            action,
            rate,
            flag_after,
            gamma_after,
        }
    }

    fn run(mut make: impl FnMut() -> Acp, rows: &[Row]) {
        for r in rows {
            let mut c = make();
            c.state = ControllerState {
                flag: r.flag,
                gamma: r.gamma,
                last_action: None,
                target: r.target,
            };
            // Previous epoch chosen so that the differences are b and δ.
            c.prev = Some(EpochSummary {
                avg_age: 1.0,
                avg_backlog: r.backlog - r.b,
            });
            let rate = c.on_epoch(
                &EpochSummary {
                    avg_age: 1.0 + r.delta,
                    avg_backlog: r.backlog,
                },
                &r.est,
            );
            let s = c.state();
            assert_eq!(s.last_action, Some(r.action), "{}: action", r.name);
            assert!(
                (rate - r.rate).abs() < 1e-9,
                "{}: rate {rate} != {}",
                r.name,
                r.rate
            );
            assert_eq!(
                (s.flag, s.gamma),
                (r.flag_after, r.gamma_after),
                "{}: flag/γ",
                r.name
            );
        }
    }

    #[test]
    fn acp_plus_table() {
        let fast_acks = Estimates { z: 0.01, ..EST };
        use Action::*;
        #[rustfmt::skip]
        let rows = [
            // b>0, δ>0, flag 0 → DEC: 50 − 1/0.1 = 40.
            row("up-up first", (false, 0, 0.0), (0.5, 0.1, 4.0), EST, Dec, 40.0, (true, 0)),
            // b>0, δ>0, flag 1 → γ=1, MDEC(1): b* = −0.5·4 = −2 → 50 − 20 = 30, clamped to 37.5.
            row("up-up again", (true, 0, -1.0), (0.5, 0.1, 4.0), EST, Mdec(1), 37.5, (true, 1)),
            // γ=2, MDEC(2) with B̄ = 0.4: b* = −0.3 → 50 − 3 = 47.
            row("up-up third", (true, 1, -2.0), (0.2, 0.1, 0.4), EST, Mdec(2), 47.0, (true, 2)),
            // b>0, δ<0 → INC: 50 + 10 = 60; resets flag and γ.
            row("up-down", (true, 2, -0.3), (0.2, -0.1, 0.4), EST, Inc, 60.0, (false, 0)),
            // b<0, δ>0 → INC.
            row("down-up", (true, 2, -0.3), (-0.2, 0.1, 0.4), EST, Inc, 60.0, (false, 0)),
            // b<0, δ<0 after MDEC → MDEC(γ) again, state kept: 47.
            row("down-down after mdec", (true, 2, -0.3), (-0.2, -0.1, 0.4), EST, Mdec(2), 47.0, (true, 2)),
            // b<0, δ<0 with flag but γ = 0 → DEC, reset.
            row("down-down after dec", (true, 0, -1.0), (-0.2, -0.1, 0.4), EST, Dec, 40.0, (false, 0)),
            row("down-down", (false, 0, 1.0), (-0.2, -0.1, 0.4), EST, Dec, 40.0, (false, 0)),
            // INC with 1/Z̄ = 100: 110, clamped to 1.25·50 = 62.5.
            row("clamp up", (false, 0, 0.0), (-0.2, 0.1, 0.4), fast_acks, Inc, 62.5, (false, 0)),
            // Ties. b = 0 counts as "backlog did not rise", δ = 0 as "age rose".
            row("tie b=0 δ=0", (false, 0, 0.0), (0.0, 0.0, 1.0), EST, Inc, 60.0, (false, 0)),
            row("tie b=0 δ<0", (false, 0, 0.0), (0.0, -0.1, 1.0), EST, Dec, 40.0, (false, 0)),
            row("tie b>0 δ=0", (false, 0, 0.0), (0.1, 0.0, 1.0), EST, Dec, 40.0, (true, 0)),
            row("tie b<0 δ=0", (false, 0, 0.0), (-0.1, 0.0, 1.0), EST, Inc, 60.0, (false, 0)),
        ];
        run(Acp::plus, &rows);
    }

    #[test]
    fn acp_original_table() {
        use Action::*;
        // κ = 0.25, 𝒯 = min(0.1, 0.02) = 0.02: INC → 50 + 12.5, DEC → 50 − 12.5; no clamp.
        #[rustfmt::skip]
        let rows = [
            row("up-up first", (false, 0, 0.0), (0.5, 0.1, 4.0), EST, Dec, 37.5, (true, 0)),
            // MDEC(1) with B̄ = 4: 50 − 2/0.02 = −50 ≤ 0 → floor 1/RTT̄ = 10.
            row("mdec floor", (true, 0, -0.25), (0.5, 0.1, 4.0), EST, Mdec(1), 10.0, (true, 1)),
            // b>0, δ<0, flag, |b| = 0.5 < 0.5·|−2| → γ=2, MDEC(2), B̄ = 0.4: 50 − 0.3/0.02 = 35.
            row("weak rise", (true, 1, -2.0), (0.5, -0.1, 0.4), EST, Mdec(2), 35.0, (true, 2)),
            // Same but |b| = 1.5 ≥ 1 → INC, reset.
            row("strong rise", (true, 1, -2.0), (1.5, -0.1, 0.4), EST, Inc, 62.5, (false, 0)),
            // Without flag the extra branch does not apply.
            row("rise no flag", (false, 0, -2.0), (0.5, -0.1, 0.4), EST, Inc, 62.5, (false, 0)),
            row("down-up", (true, 3, -1.0), (-0.5, 0.1, 0.4), EST, Inc, 62.5, (false, 0)),
            row("down-down mdec", (true, 3, -1.0), (-0.5, -0.1, 0.8), EST, Mdec(3), 15.0, (true, 3)),
            // The floor binds on a positive rate too: MDEC(3) with B̄ = 1: 50 − 0.875/0.02 = 6.25,
            // below one update per RTT̄ → 10.
            row("below floor", (true, 3, -1.0), (-0.5, -0.1, 1.0), EST, Mdec(3), 10.0, (true, 3)),
            // DEC near the floor: 1/Z̄ = 12.5 (Z̄ = 80 ms = 𝒯), 12.5 − 0.25/0.08 = 9.375 → 10.
            row("dec to floor", (false, 0, 0.25), (-0.5, -0.1, 0.8), Estimates { z: 0.08, rate: 12.5, ..EST }, Dec, 10.0, (false, 0)),
            row("down-down", (false, 0, 0.25), (-0.5, -0.1, 0.8), EST, Dec, 37.5, (false, 0)),
            row("tie b=0 δ=0", (false, 0, 0.0), (0.0, 0.0, 1.0), EST, Inc, 62.5, (false, 0)),
        ];
        run(|| Acp::original(0.25), &rows);
    }

    #[test]
    fn first_epoch_holds_and_restart_forgets_history() {
        let mut c = Acp::plus();
        let s = EpochSummary {
            avg_age: 0.2,
            avg_backlog: 2.0,
        };
        assert_eq!(c.on_epoch(&s, &EST), 50.0);
        assert_eq!(c.state().last_action, Some(Action::Hold));
        let worse = EpochSummary {
            avg_age: 0.3,
            avg_backlog: 3.0,
        };
        assert_eq!(c.on_epoch(&worse, &EST), 40.0);
        c.restart();
        assert_eq!(c.on_epoch(&worse, &EST), 50.0);
        assert_eq!(c.state().last_action, Some(Action::Hold));
    }

    #[test]
    fn epoch_lengths() {
        assert!((Acp::plus().epoch_length(&EST) - 0.2).abs() < 1e-12);
        assert!((Acp::original(1.0).epoch_length(&EST) - 0.2).abs() < 1e-12);
        let slow = Estimates { rate: 5.0, ..EST };
        assert!((Acp::plus().epoch_length(&slow) - 2.0).abs() < 1e-12);
        assert!((Fixed::new(4.0).epoch_length(&slow) - 2.5).abs() < 1e-12);
    }

    /// A multipath source lost half its capacity: ACP, ACP+ and Seek have the source scale its
    /// rate (Seek its centre and ceiling too); Fixed and Lazy keep theirs.
    #[test]
    fn which_rates_follow_a_change_of_capacity() {
        for (kind, scales) in [
            (ControllerKind::AcpPlus, true),
            (ControllerKind::Acp(1.0), true),
            (ControllerKind::Seek, true),
            (ControllerKind::Lazy, false),
            (ControllerKind::Fixed(33.0), false),
        ] {
            assert_eq!(kind.build().scale_rates(0.5), scales, "{kind:?}");
        }
        let mut fixed = Fixed::new(33.0);
        fixed.scale_rates(0.5);
        let s = EpochSummary {
            avg_age: 1.0,
            avg_backlog: 1.0,
        };
        assert_eq!(fixed.on_epoch(&s, &EST), 33.0);
    }

    #[test]
    fn lazy_and_fixed() {
        let mut lazy = Lazy;
        assert_eq!(lazy.initial_rate(&EST), 10.0);
        assert_eq!(lazy.on_ack(&EST), Some(10.0));
        let mut fixed = Fixed::new(33.0);
        assert_eq!(fixed.initial_rate(&EST), 33.0);
        assert_eq!(fixed.on_ack(&EST), None);
        let s = EpochSummary {
            avg_age: 1.0,
            avg_backlog: 1.0,
        };
        assert_eq!(fixed.on_epoch(&s, &EST), 33.0);
        assert_eq!(fixed.name(), "fixed:33");
        assert_eq!(Acp::original(0.25).name(), "acp(κ=0.25)");
    }
}
