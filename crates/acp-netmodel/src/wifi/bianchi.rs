//! Bianchi's saturation model of 802.11 DCF: the oracle the [`super::medium`] is validated against.
//!
//! G. Bianchi, "Performance analysis of the IEEE 802.11 distributed coordination function", IEEE
//! JSAC 18(3), 2000, with the finite retry limit of H. Wu et al., "Performance of reliable
//! transport protocol over IEEE 802.11 wireless LAN: analysis and enhancement", INFOCOM 2002.
//!
//! # Model
//!
//! `n` stations always have a frame to send (saturation). Time is cut into *virtual slots*: an
//! idle slot of length `σ`, or a busy one (a success `Ts`, or a collision `Tc`) that lasts from
//! the start of a transmission until the medium has again been idle for DIFS. Each station
//! transmits in a virtual slot with probability `τ`, independently of the others (the decoupling
//! approximation), so a transmitted frame collides with probability
//!
//! ```text
//! p = 1 − (1 − τ)^(n−1).
//! ```
//!
//! A station's backoff counter is drawn uniformly in `[0, W_i − 1]` at stage `i`, with
//! `W_i = min(2^i · W, CWmax + 1)` and `W = CWmin + 1`; the counter moves down one per virtual
//! slot (idle or busy) and the station transmits when it is zero. A failure moves the frame to the
//! next stage; success, or the last of `K` attempts failing (the frame is dropped), starts the next
//! frame at stage 0. One frame's attempts form a renewal cycle, which gives `τ` directly:
//!
//! ```text
//!        Σ_{i<K} p^i                            (expected attempts per frame)
//! τ = ───────────────────────────────
//!      Σ_{i<K} p^i · (W_i + 1) / 2                (expected virtual slots per frame)
//! ```
//!
//! (stage `i` costs its transmission slot plus `(W_i − 1)/2` countdown slots on average). With
//! `K = ∞` this is Bianchi's eq. (7), `τ = 2(1−2p) / ((1−2p)(W+1) + pW(1 − (2p)^m))` when
//! `CWmax + 1 = 2^m · W`; [`bianchi_tau`] gives that closed form and the tests check they agree.
//! `τ(p)` falls as `p` rises, so `p = 1 − (1 − τ(p))^(n−1)` has exactly one root in `[0, 1)`,
//! found by bisection ([`fixed_point`]).
//!
//! The saturation throughput ([`saturation`]) is the payload carried per virtual slot over the
//! mean virtual-slot length:
//!
//! ```text
//! Ptr = 1 − (1 − τ)^n            (some station transmits)
//! Ps  = n·τ·(1 − τ)^(n−1) / Ptr  (exactly one does)
//! S   = Ps·Ptr·E[P] / ((1 − Ptr)·σ + Ptr·Ps·Ts + Ptr·(1 − Ps)·Tc)
//! ```
//!
//! # Matching the medium
//!
//! [`Exchange::basic_access`] builds `Ts` and `Tc` the way the medium spends them (no propagation
//! delay, no RTS/CTS):
//!
//! ```text
//! Ts = data airtime + SIFS + ACK airtime + DIFS
//! Tc = data airtime + ACK timeout + DIFS
//! ```
//!
//! Bianchi's `Tc` ends the collision after DIFS; the medium makes everybody wait out the senders'
//! ACK timeout first (its stand-in for EIFS), hence the ACK timeout in `Tc`. The medium's
//! countdown follows the 802.11e slot-boundary rule (a counter also moves at the boundary where
//! another station starts sending), which is exactly the "one step per virtual slot" of the chain
//! above. The medium's `retry_limit` counts transmission attempts, as [`Backoff::attempts`] does.
//!
//! Not modelled here: frame errors (`Ps` counts collisions only), RTS/CTS, propagation delay,
//! EDCA's differentiated AIFS and CW (the model is DCF's).

use std::time::Duration;

/// One station's binary exponential backoff, as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first contention window, `W − 1` (DCF: 15 for OFDM PHYs, 31 for DSSS).
    pub cw_min: u32,
    /// The largest contention window, `2^m · W − 1` for `m` doublings.
    pub cw_max: u32,
    /// Most transmission attempts per frame before it is dropped; `None`: never dropped, as in
    /// Bianchi's original model.
    pub attempts: Option<u32>,
}

impl Backoff {
    /// DCF's 802.11a/g windows (15, 1023) with the standard's 7 attempts.
    pub const OFDM: Backoff = Backoff {
        cw_min: 15,
        cw_max: 1023,
        attempts: Some(7),
    };

    /// `W_i = min(2^i · (CWmin + 1), CWmax + 1)`: the number of counter values at stage `i`.
    pub fn window(&self, stage: u32) -> f64 {
        let w = f64::from(self.cw_min) + 1.0;
        let top = f64::from(self.cw_max.max(self.cw_min)) + 1.0;
        (w * 2f64.powi(stage.min(1024) as i32)).min(top)
    }

    /// The first stage whose window is the largest.
    fn last_stage(&self) -> u32 {
        let top = self.window(u32::MAX);
        (0..=64).find(|&i| self.window(i) >= top).unwrap_or(64)
    }

    /// `τ`: the probability that a saturated station transmits in a virtual slot when each of its
    /// transmissions fails with probability `p` (in `[0, 1]`).
    pub fn tau(&self, p: f64) -> f64 {
        let p = p.clamp(0.0, 1.0);
        let slots = |i: u32| (self.window(i) + 1.0) / 2.0;
        let (mut attempts, mut mean_slots, mut weight) = (0.0, 0.0, 1.0);
        match self.attempts {
            Some(k) => {
                for i in 0..k {
                    attempts += weight;
                    mean_slots += weight * slots(i);
                    weight *= p;
                }
            }
            None => {
                let m = self.last_stage();
                for i in 0..m {
                    attempts += weight;
                    mean_slots += weight * slots(i);
                    weight *= p;
                }
                if p >= 1.0 {
                    // Every frame ends up at the last stage for ever.
                    return 1.0 / slots(m);
                }
                // Stages m, m+1, … all have the largest window: a geometric tail.
                attempts += weight / (1.0 - p);
                mean_slots += weight / (1.0 - p) * slots(m);
            }
        }
        if mean_slots > 0.0 {
            attempts / mean_slots
        } else {
            0.0
        }
    }
}

/// Bianchi's closed form (eq. 7) of `τ(p)` for `W = CWmin + 1`, `m` doublings and no retry
/// limit. Undefined at `p = 1/2` (a removable singularity); use [`Backoff::tau`] there.
pub fn bianchi_tau(p: f64, w: f64, m: u32) -> f64 {
    let q = 1.0 - 2.0 * p;
    2.0 * q / (q * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m as i32)))
}

/// The solution of the two equations: `τ = τ(p)` and `p = 1 − (1 − τ)^(n−1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedPoint {
    /// Probability that a station transmits in a virtual slot.
    pub tau: f64,
    /// Probability that a transmitted frame collides.
    pub p: f64,
}

/// Solves Bianchi's fixed point for `n` saturated stations (`n = 0` is treated as 1). Bisection
/// on `p` to machine precision: the root is unique because `τ(p)` decreases.
pub fn fixed_point(n: usize, backoff: &Backoff) -> FixedPoint {
    let others = n.max(1) as f64 - 1.0;
    let excess = |p: f64| 1.0 - (1.0 - backoff.tau(p)).powf(others) - p;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    if excess(0.0) <= 0.0 {
        hi = 0.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if excess(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = 0.5 * (lo + hi);
    FixedPoint {
        tau: backoff.tau(p),
        p,
    }
}

/// How long the virtual slots last, and what a success carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exchange {
    /// `σ`, the idle slot.
    pub slot: Duration,
    /// `Ts`, a busy slot with one transmission.
    pub success: Duration,
    /// `Tc`, a busy slot with a collision.
    pub collision: Duration,
    /// `E[P]`, payload bits carried by a success.
    pub payload_bits: f64,
}

impl Exchange {
    /// Basic access (no RTS/CTS), spent as the medium spends it: `Ts = data + SIFS + ACK + DIFS`,
    /// `Tc = data + ACK timeout + DIFS`, with `DIFS = SIFS + 2·slot`.
    pub fn basic_access(
        slot: Duration,
        sifs: Duration,
        ack_timeout: Duration,
        data: Duration,
        ack: Duration,
        payload_bytes: u32,
    ) -> Self {
        let difs = sifs + 2 * slot;
        Exchange {
            slot,
            success: data + sifs + ack + difs,
            collision: data + ack_timeout + difs,
            payload_bits: 8.0 * f64::from(payload_bytes),
        }
    }
}

/// Bianchi's prediction for `n` saturated stations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saturation {
    /// The fixed point.
    pub fixed_point: FixedPoint,
    /// `Ptr`: probability that a virtual slot is busy.
    pub p_tr: f64,
    /// `Ps`: probability that a busy slot is a success.
    pub p_s: f64,
    /// Mean virtual-slot length (s).
    pub mean_slot: f64,
    /// Saturation throughput of all stations together (payload bit/s).
    pub throughput_bps: f64,
    /// Probability that a frame is dropped at the retry limit, `p^K` (0 without a limit).
    pub drop_probability: f64,
}

/// Bianchi's saturation throughput for `n` stations with `backoff`, slots timed by `exchange`.
pub fn saturation(n: usize, backoff: &Backoff, exchange: &Exchange) -> Saturation {
    let n = n.max(1);
    let fixed_point = fixed_point(n, backoff);
    let tau = fixed_point.tau;
    let p_tr = 1.0 - (1.0 - tau).powf(n as f64);
    let p_s = if p_tr > 0.0 {
        n as f64 * tau * (1.0 - tau).powf(n as f64 - 1.0) / p_tr
    } else {
        0.0
    };
    let mean_slot = (1.0 - p_tr) * exchange.slot.as_secs_f64()
        + p_tr * p_s * exchange.success.as_secs_f64()
        + p_tr * (1.0 - p_s) * exchange.collision.as_secs_f64();
    let throughput_bps = if mean_slot > 0.0 {
        p_s * p_tr * exchange.payload_bits / mean_slot
    } else {
        0.0
    };
    let drop_probability = backoff
        .attempts
        .map_or(0.0, |k| fixed_point.p.powf(f64::from(k)));
    Saturation {
        fixed_point,
        p_tr,
        p_s,
        mean_slot,
        throughput_bps,
        drop_probability,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOREVER: Backoff = Backoff {
        cw_min: 15,
        cw_max: 1023,
        attempts: None,
    };

    #[test]
    fn one_station_never_collides() {
        for b in [FOREVER, Backoff::OFDM] {
            let fp = fixed_point(1, &b);
            assert_eq!(fp.p, 0.0);
            // τ = 2 / (W + 1): one transmission per 1 + (W − 1)/2 slots.
            assert!((fp.tau - 2.0 / 17.0).abs() < 1e-15, "{fp:?}");
        }
    }

    #[test]
    fn renewal_form_is_bianchis_equation_7() {
        // W = 16, m = 6 (CWmax 1023); W = 32, m = 5 (CWmax 1023); W = 32, m = 3 (CWmax 255).
        for (cw_min, cw_max, m) in [(15, 1023, 6), (31, 1023, 5), (31, 255, 3)] {
            let b = Backoff {
                cw_min,
                cw_max,
                attempts: None,
            };
            for p in [0.0, 0.01, 0.1, 0.3, 0.45, 0.55, 0.7, 0.9] {
                let closed = bianchi_tau(p, f64::from(cw_min) + 1.0, m);
                let ours = b.tau(p);
                assert!(
                    (closed - ours).abs() < 1e-12 * closed,
                    "W={} m={m} p={p}: {closed} vs {ours}",
                    cw_min + 1
                );
            }
        }
    }

    #[test]
    fn a_large_retry_limit_is_the_infinite_model() {
        let long = Backoff {
            attempts: Some(400),
            ..FOREVER
        };
        for p in [0.05, 0.3, 0.6] {
            assert!((long.tau(p) - FOREVER.tau(p)).abs() < 1e-12);
        }
        for n in [2, 10, 50] {
            let (a, b) = (fixed_point(n, &long), fixed_point(n, &FOREVER));
            assert!((a.p - b.p).abs() < 1e-9, "{n}: {a:?} {b:?}");
        }
        // The standard's seven attempts restart the frame at stage 0 instead of staying at stage
        // 6: more aggressive, so τ is higher for the same p.
        assert!(Backoff::OFDM.tau(0.5) > FOREVER.tau(0.5));
    }

    #[test]
    fn fixed_point_solves_both_equations_and_grows_with_n() {
        let mut last = 0.0;
        for n in [2, 3, 5, 10, 20, 50, 100] {
            let fp = fixed_point(n, &Backoff::OFDM);
            assert!((fp.tau - Backoff::OFDM.tau(fp.p)).abs() < 1e-15);
            let p = 1.0 - (1.0 - fp.tau).powi(n as i32 - 1);
            assert!((p - fp.p).abs() < 1e-12, "{n}: {fp:?}");
            assert!(fp.p > last);
            last = fp.p;
        }
    }

    #[test]
    fn two_stations_by_hand() {
        // n = 2, W = 2, one stage, unlimited retries: τ = 2/(W+1) = 2/3 whatever p, so
        // p = τ = 2/3.
        let b = Backoff {
            cw_min: 1,
            cw_max: 1,
            attempts: None,
        };
        let fp = fixed_point(2, &b);
        assert!((fp.p - 2.0 / 3.0).abs() < 1e-12 && (fp.tau - 2.0 / 3.0).abs() < 1e-12);
        // With two attempts and W = 2 at both stages τ is the same; p^K frames are dropped.
        let s = saturation(
            2,
            &Backoff {
                attempts: Some(2),
                ..b
            },
            &Exchange {
                slot: Duration::from_micros(1),
                success: Duration::from_micros(10),
                collision: Duration::from_micros(10),
                payload_bits: 10.0,
            },
        );
        assert!((s.drop_probability - 4.0 / 9.0).abs() < 1e-12);
        // Ptr = 1 − 1/9 = 8/9, Ps·Ptr = 2·(2/3)(1/3) = 4/9; mean slot = (1/9)·1 + (8/9)·10 µs.
        let want = (4.0 / 9.0) * 10.0 / ((1.0 / 9.0 + 80.0 / 9.0) * 1e-6);
        assert!((s.throughput_bps - want).abs() < 1e-6 * want, "{s:?}");
    }

    #[test]
    fn one_station_throughput_is_payload_over_the_mean_cycle() {
        // 802.11a/g at 54 Mbit/s, 1500 B: data 248 µs, ACK 28 µs, SIFS 16, slot 9, timeout 50.
        let us = Duration::from_micros;
        let ex = Exchange::basic_access(us(9), us(16), us(50), us(248), us(28), 1500);
        assert_eq!(ex.success, us(248 + 16 + 28 + 34));
        assert_eq!(ex.collision, us(248 + 50 + 34));
        let s = saturation(1, &Backoff::OFDM, &ex);
        // Mean cycle: Ts + 7.5 idle slots.
        let want = 12_000.0 / ((326.0 + 7.5 * 9.0) * 1e-6);
        assert!((s.throughput_bps - want).abs() < 1e-6 * want, "{s:?}");
        assert_eq!(s.drop_probability, 0.0);
    }

    #[test]
    fn throughput_falls_with_crowding_under_basic_access() {
        // With W = 16 and long frames, collisions dominate as n grows: the throughput falls.
        let us = Duration::from_micros;
        let ex = Exchange::basic_access(us(9), us(16), us(50), us(248), us(28), 1500);
        let s: Vec<f64> = [5, 10, 20, 50]
            .iter()
            .map(|&n| saturation(n, &Backoff::OFDM, &ex).throughput_bps)
            .collect();
        assert!(s.windows(2).all(|w| w[0] > w[1]), "{s:?}");
    }
}
