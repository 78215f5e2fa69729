//! Saturation throughput per access category under EDCA: Bianchi's model extended with
//! differentiated AIFS, the oracle the [`super::medium`]'s EDCA is validated against.
//!
//! The extension is the *AIFS-zone* model of J. W. Robinson and T. S. Randhawa, "Saturation
//! throughput analysis of IEEE 802.11e enhanced distributed coordination function", IEEE JSAC
//! 22(5), 2004 (the same chain of idle slots after a busy period appears in Z. Kong, D. H. K.
//! Tsang, B. Bensaou and D. Gao, "Performance analysis of IEEE 802.11e contention-based channel
//! access", IEEE JSAC 22(10), 2004). Neither paper's text is among our seeds, so the equations
//! are written out in full below, in our notation, rather than cited by number.
//!
//! # Model
//!
//! Access categories `c` (any number of them) have `n_c` saturated backoff entities each, one
//! per station (so no station has two categories contending with each other: no internal
//! collisions), with their own windows ([`Backoff`]), `AIFSN_c` and frames per channel access.
//! Let `A = min AIFSN_c` and `d_c = AIFSN_c − A`.
//!
//! **Virtual slots and zones.** A busy period is charged up to the instant the medium has again
//! been idle for `AIFS_min = SIFS + A·σ`, as Bianchi charges DIFS. The idle slot boundaries that
//! follow are numbered `s = 0, 1, 2, …`; category `c` may count (and transmit) at boundary `s`
//! only when `s ≥ d_c`, so the boundaries form *zones* in which fewer or more categories
//! contend. Under 802.11e's countdown rule (the medium's [`super::medium::Countdown::Edca`]) an
//! eligible entity moves one step per virtual slot it is eligible in, idle or busy. With the
//! decoupling approximation (each entity transmits with a constant probability `τ_c` in every
//! slot it is eligible in, independently of the others), the slot index is a Markov chain on
//! `0 … D`, `D = max d_c` (a slot past `D` behaves as `D`):
//!
//! ```text
//! q_s  = Π_{c: d_c ≤ s} (1 − τ_c)^{n_c}           (slot s stays idle)
//! s → min(s + 1, D)  with probability q_s;   s → 0  otherwise
//! π_{s+1} = π_s · q_s  (s + 1 < D),   π_D = π_{D−1} · q_{D−1} / (1 − q_D),   Σ π_s = 1
//! ```
//!
//! **Collision probability per category.** Given that an entity of `c` transmits, the slot is
//! one of its eligible slots, distributed as `π` restricted to `s ≥ d_c`; the frame collides
//! unless every other eligible entity is silent:
//!
//! ```text
//! p_c = 1 − Σ_{s ≥ d_c} π_s · q_s / (1 − τ_c)  /  Σ_{s ≥ d_c} π_s
//! ```
//!
//! **Transmission probability.** Counting only eligible slots, an entity's attempts are
//! Bianchi's renewal cycle, so `τ_c = τ(p_c)` with [`Backoff::tau`] (Bianchi's eq. (7) with
//! Wu's retry limit). The fixed point `τ = τ(p(τ))` over all categories is found by damped
//! iteration ([`fixed_point`]); with one category, or several with the same AIFSN, the zone
//! chain has a single state and the model is Bianchi's with several classes of station.
//!
//! **Throughput.** In slot `s`, category `c` succeeds with probability
//! `S_c(s) = n_c · τ_c · q_s / (1 − τ_c)` (eligible `c` only); the slot lasts `σ` when idle,
//! `Ts_c` after a success of `c` and `Tc` after a collision. Each success of `c` carries
//! `k_c` frames (a TXOP burst, [`frames_per_txop`]):
//!
//! ```text
//! Ts_c = k_c · (data + SIFS + ACK) + (k_c − 1) · SIFS + AIFS_min
//! Tc   = data + ACK timeout + AIFS_min
//! E[L] = Σ_s π_s · (q_s·σ + Σ_c S_c(s)·Ts_c + (1 − q_s − Σ_c S_c(s))·Tc)
//! S_c  = Σ_s π_s · S_c(s) · k_c · E[P]  /  E[L]
//! ```
//!
//! `Ts` and `Tc` are the medium's (see [`super::bianchi`]: `Tc` holds the ACK timeout because
//! the medium makes everybody wait it out after a collision).
//!
//! Not modelled: internal collisions between categories of one station, frame errors, RTS/CTS,
//! propagation delay, the unsaturated regime.

use std::time::Duration;

use super::bianchi::Backoff;

/// One access category of the model: how many saturated entities, and how they contend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Category {
    /// Saturated backoff entities of this category (one per station).
    pub entities: usize,
    /// `AIFSN`: the category counts from `SIFS + AIFSN·σ` after the medium turns idle.
    pub aifsn: u32,
    /// Contention windows and attempts.
    pub backoff: Backoff,
    /// Frames sent per channel access (`k_c`; 1 without a TXOP, see [`frames_per_txop`]).
    pub frames_per_access: u32,
}

/// Airtimes of the exchange every category uses (the same frame size for all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Airtimes {
    /// `σ`, the slot.
    pub slot: Duration,
    /// SIFS.
    pub sifs: Duration,
    /// How long senders wait for an ACK that does not come.
    pub ack_timeout: Duration,
    /// A data frame.
    pub data: Duration,
    /// Its ACK.
    pub ack: Duration,
    /// `E[P]`: payload bytes per frame.
    pub payload_bytes: u32,
}

/// Frames a TXOP of `limit` holds when each exchange takes `data + SIFS + ACK` and the next one
/// follows a SIFS after the ACK, the medium's rule: exchange `j` (from 0) must end, at
/// `j·(exchange + SIFS) + exchange`, within the limit counted from the first frame's start; the
/// first is always sent.
pub fn frames_per_txop(limit: Duration, a: &Airtimes) -> u32 {
    let exchange = (a.data + a.sifs + a.ack).as_nanos();
    let step = exchange + a.sifs.as_nanos();
    match limit.as_nanos().checked_sub(exchange) {
        Some(room) if step > 0 => 1 + u32::try_from(room / step).unwrap_or(u32::MAX),
        _ => 1,
    }
}

/// The model's prediction for one category.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CategoryResult {
    /// `τ_c`: transmission probability per eligible slot.
    pub tau: f64,
    /// `p_c`: probability that a transmission collides.
    pub p: f64,
    /// Payload bit/s of all the category's entities together.
    pub throughput_bps: f64,
    /// Probability that a frame is dropped at the retry limit, `p_c^K` (0 without a limit).
    pub drop_probability: f64,
}

/// The model's prediction for a mix of categories.
#[derive(Debug, Clone, PartialEq)]
pub struct Saturation {
    /// Per category, in the order given.
    pub categories: Vec<CategoryResult>,
    /// `π_s`: stationary probability of zone slot `s` (`s = 0 … D`).
    pub zones: Vec<f64>,
    /// Mean virtual-slot length (s).
    pub mean_slot: f64,
    /// Iterations the fixed point took.
    pub iterations: usize,
}

impl Saturation {
    /// The throughput of all categories together (payload bit/s).
    pub fn total_bps(&self) -> f64 {
        self.categories.iter().map(|c| c.throughput_bps).sum()
    }
}

/// Why the model could not be solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// No category has an entity.
    #[error("the mix has no contending entity")]
    Empty,
    /// A category's AIFSN is zero.
    #[error("category {0} has AIFSN 0 (it must be at least 1)")]
    ZeroAifsn(usize),
    /// The damped iteration did not settle.
    #[error("the fixed point did not converge in {0} iterations")]
    NoConvergence(usize),
}

/// The zone chain for transmission probabilities `tau`: per slot `s`, `q_s`, and `π`.
struct Zones {
    /// `d_c`.
    offset: Vec<usize>,
    /// `q_s`.
    idle: Vec<f64>,
    /// `π_s`.
    pi: Vec<f64>,
}

impl Zones {
    fn new(mix: &[Category], tau: &[f64]) -> Self {
        let a_min = min_aifsn(mix);
        let offset: Vec<usize> = mix
            .iter()
            .map(|c| c.aifsn.saturating_sub(a_min) as usize)
            .collect();
        let depth = offset.iter().copied().max().unwrap_or(0);
        let idle: Vec<f64> = (0..=depth)
            .map(|s| {
                mix.iter()
                    .zip(tau)
                    .zip(&offset)
                    .filter(|(_, &d)| d <= s)
                    .map(|((c, &t), _)| (1.0 - t).powi(c.entities as i32))
                    .product()
            })
            .collect();
        let mut pi = vec![1.0; depth + 1];
        for s in 1..=depth {
            pi[s] = pi[s - 1] * idle[s - 1];
        }
        if depth > 0 {
            pi[depth] /= 1.0 - idle[depth];
        }
        let total: f64 = pi.iter().sum();
        pi.iter_mut().for_each(|x| *x /= total);
        Zones { offset, idle, pi }
    }

    /// `p_c` for category `c` transmitting with `tau_c`.
    fn collision(&self, c: usize, tau_c: f64) -> f64 {
        let eligible = self.offset[c]..self.pi.len();
        let weight: f64 = self.pi[eligible.clone()].iter().sum();
        let alone: f64 = eligible.map(|s| self.pi[s] * self.idle[s]).sum::<f64>() / (1.0 - tau_c);
        (1.0 - alone / weight).clamp(0.0, 1.0)
    }
}

/// `A`: the smallest AIFSN among the categories that have entities.
fn min_aifsn(mix: &[Category]) -> u32 {
    mix.iter()
        .filter(|c| c.entities > 0)
        .map(|c| c.aifsn)
        .min()
        .unwrap_or(1)
}

/// Iterations allowed to the damped fixed point.
const MAX_ITERATIONS: usize = 100_000;

/// Solves `τ_c = τ_c(p_c(τ))` for every category by damped iteration, to a change below 1e-14.
pub fn fixed_point(mix: &[Category]) -> Result<(Vec<f64>, usize), ModelError> {
    if mix.iter().all(|c| c.entities == 0) {
        return Err(ModelError::Empty);
    }
    if let Some(i) = mix.iter().position(|c| c.aifsn == 0) {
        return Err(ModelError::ZeroAifsn(i));
    }
    let mut tau: Vec<f64> = mix.iter().map(|c| c.backoff.tau(0.0)).collect();
    for iteration in 1..=MAX_ITERATIONS {
        let zones = Zones::new(mix, &tau);
        let mut change = 0.0f64;
        for (c, t) in tau.iter_mut().enumerate() {
            let next = mix[c].backoff.tau(zones.collision(c, *t));
            let moved = 0.5 * (next - *t);
            change = change.max(moved.abs());
            *t += moved;
        }
        if change < 1e-14 {
            return Ok((tau, iteration));
        }
    }
    Err(ModelError::NoConvergence(MAX_ITERATIONS))
}

/// The saturation throughput of each category of `mix` with the exchange `airtimes`.
pub fn saturation(mix: &[Category], airtimes: &Airtimes) -> Result<Saturation, ModelError> {
    let (tau, iterations) = fixed_point(mix)?;
    let zones = Zones::new(mix, &tau);
    let aifs_min = (airtimes.sifs + airtimes.slot * min_aifsn(mix)).as_secs_f64();
    let (data, sifs, ack) = (
        airtimes.data.as_secs_f64(),
        airtimes.sifs.as_secs_f64(),
        airtimes.ack.as_secs_f64(),
    );
    let success_len = |c: &Category| {
        let k = f64::from(c.frames_per_access.max(1));
        k * (data + sifs + ack) + (k - 1.0) * sifs + aifs_min
    };
    let collision_len = data + airtimes.ack_timeout.as_secs_f64() + aifs_min;
    let mut mean_slot = 0.0;
    let mut carried = vec![0.0; mix.len()];
    for (s, (&pi, &q)) in zones.pi.iter().zip(&zones.idle).enumerate() {
        let mut busy = 1.0 - q;
        let mut len = q * airtimes.slot.as_secs_f64();
        for (c, cat) in mix.iter().enumerate() {
            if zones.offset[c] > s {
                continue;
            }
            let success = cat.entities as f64 * tau[c] * q / (1.0 - tau[c]);
            busy -= success;
            len += success * success_len(cat);
            carried[c] += pi * success * f64::from(cat.frames_per_access.max(1));
        }
        mean_slot += pi * (len + busy.max(0.0) * collision_len);
    }
    let bits = 8.0 * f64::from(airtimes.payload_bytes);
    let categories = mix
        .iter()
        .enumerate()
        .map(|(c, cat)| {
            let p = zones.collision(c, tau[c]);
            CategoryResult {
                tau: tau[c],
                p,
                throughput_bps: carried[c] * bits / mean_slot,
                drop_probability: cat.backoff.attempts.map_or(0.0, |k| p.powf(f64::from(k))),
            }
        })
        .collect();
    Ok(Saturation {
        categories,
        zones: zones.pi,
        mean_slot,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::bianchi::{self, Exchange};

    const US: fn(u64) -> Duration = Duration::from_micros;

    fn airtimes() -> Airtimes {
        // 802.11a at 54 Mbit/s, 1500 B (see tests/wifi_bianchi.rs for the arithmetic).
        Airtimes {
            slot: US(9),
            sifs: US(16),
            ack_timeout: US(50),
            data: US(248),
            ack: US(28),
            payload_bytes: 1500,
        }
    }

    fn dcf(entities: usize) -> Category {
        Category {
            entities,
            aifsn: 2,
            backoff: Backoff::OFDM,
            frames_per_access: 1,
        }
    }

    fn bianchi_exchange() -> Exchange {
        let a = airtimes();
        Exchange::basic_access(a.slot, a.sifs, a.ack_timeout, a.data, a.ack, 1500)
    }

    #[test]
    fn one_category_is_bianchis_model() {
        for n in [1, 2, 5, 20, 50] {
            let ours = saturation(&[dcf(n)], &airtimes()).expect("solves");
            let theirs = bianchi::saturation(n, &Backoff::OFDM, &bianchi_exchange());
            let c = ours.categories[0];
            assert!((c.p - theirs.fixed_point.p).abs() < 1e-9, "{n}: {c:?}");
            let rel = c.throughput_bps / theirs.throughput_bps - 1.0;
            assert!(rel.abs() < 1e-9, "{n}: {rel}");
            assert_eq!(ours.zones, [1.0]);
        }
    }

    #[test]
    fn identical_categories_split_bianchis_throughput() {
        // Two categories with DCF's parameters are one population of n₁ + n₂ stations.
        let ours = saturation(&[dcf(3), dcf(7)], &airtimes()).expect("solves");
        let theirs = bianchi::saturation(10, &Backoff::OFDM, &bianchi_exchange());
        let [a, b] = [ours.categories[0], ours.categories[1]];
        assert!((a.p - b.p).abs() < 1e-9 && (a.p - theirs.fixed_point.p).abs() < 1e-9);
        assert!((b.throughput_bps / a.throughput_bps - 7.0 / 3.0).abs() < 1e-9);
        assert!((ours.total_bps() / theirs.throughput_bps - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_longer_aifs_costs_throughput_and_the_zones_form_a_distribution() {
        let mut late = dcf(5);
        late.aifsn = 7;
        let ours = saturation(&[dcf(5), late], &airtimes()).expect("solves");
        assert_eq!(ours.zones.len(), 6);
        assert!((ours.zones.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // The first zone slot follows every busy period: it is the most likely.
        assert!(ours.zones.windows(2).take(4).all(|w| w[0] > w[1]));
        let [early, late] = [ours.categories[0], ours.categories[1]];
        assert!(early.throughput_bps > 3.0 * late.throughput_bps, "{ours:?}");
        // The late category transmits only in the last zone, where everybody contends; the
        // early one also in the zones it has to itself: the late one collides more often.
        assert!(late.p > early.p, "{ours:?}");
    }

    #[test]
    fn the_fixed_point_solves_every_equation() {
        let mut vi = dcf(4);
        vi.backoff = Backoff {
            cw_min: 7,
            cw_max: 15,
            attempts: Some(7),
        };
        let mut be = dcf(6);
        be.aifsn = 3;
        let mix = [vi, be];
        let (tau, _) = fixed_point(&mix).expect("solves");
        let zones = Zones::new(&mix, &tau);
        for (c, cat) in mix.iter().enumerate() {
            let again = cat.backoff.tau(zones.collision(c, tau[c]));
            assert!((again - tau[c]).abs() < 1e-12, "{c}: {again} vs {}", tau[c]);
        }
    }

    #[test]
    fn txop_bursts_by_hand() {
        let a = airtimes();
        // Exchange 248 + 16 + 28 = 292 µs, then one every 308 µs: 292, 600, 908, 1216, 1524.
        assert_eq!(frames_per_txop(Duration::ZERO, &a), 1);
        assert_eq!(frames_per_txop(US(291), &a), 1);
        assert_eq!(frames_per_txop(US(600), &a), 2);
        assert_eq!(frames_per_txop(US(1504), &a), 4);
        assert_eq!(frames_per_txop(US(3008), &a), 9);
        // One station alone with bursts of 4: each access costs 4·292 + 3·16 + 34 µs plus 7.5
        // idle slots on average.
        let mut vo = dcf(1);
        vo.frames_per_access = 4;
        let s = saturation(&[vo], &a).expect("solves");
        let want = 4.0 * 12_000.0 / ((4.0 * 292.0 + 48.0 + 34.0 + 7.5 * 9.0) * 1e-6);
        assert!((s.total_bps() / want - 1.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn bad_mixes_are_errors() {
        assert_eq!(saturation(&[], &airtimes()), Err(ModelError::Empty));
        assert_eq!(saturation(&[dcf(0)], &airtimes()), Err(ModelError::Empty));
        let mut zero = dcf(2);
        zero.aifsn = 0;
        assert_eq!(
            saturation(&[dcf(1), zero], &airtimes()),
            Err(ModelError::ZeroAifsn(1))
        );
    }
}
