//! Closed-form age-of-information results used as test oracles for the simulator.
//!
//! Everything here is pure arithmetic on `f64` and depends on nothing but `std`.
//! Rates (`lambda`, `mu`, …) are in updates per unit time, times (`period`,
//! service times, delays) in the same time unit, and every age / system time
//! returned is in that time unit.
//!
//! Contents
//!
//! * [`mm1_age`], [`mm1_system_time`], [`mm1_optimum`]: one M/M/1 FCFS queue
//!   (Kaul, Yates, Gruteser 2012):
//!   `Δ = 1/λ + 1/μ + λ²/(μ²(μ−λ))`.
//! * [`tandem_age`], [`tandem_system_time`], [`tandem_optimum`]: two M/M/1 FCFS
//!   queues in tandem (ACP+ paper, Appendix A).  Eq. (18) *as printed* in the
//!   paper has a typo: its fifth term reads `λ/(μ₂²(μ₂−λ))`, which has the
//!   dimension time² (not time), breaks the `μ₁ → ∞` limit and the `μ₁ ↔ μ₂`
//!   symmetry.  The corrected, Monte-Carlo-validated expression implemented here is
//!
//!   ```text
//!   Δ = 1/λ + 1/μ₁ + 1/μ₂ + λ²/(μ₁²(μ₁−λ)) + λ²/(μ₂²(μ₂−λ)) + λ²/(μ₁μ₂(μ₁+μ₂−λ))
//!   ```
//!
//!   (derivation in `docs/SIMULATOR.md`, Monte-Carlo check in
//!   `crates/acp-sim/analysis/check_tandem.py`).
//! * [`lcfs_preemptive_ages`]: several Poisson sources sharing one exponential
//!   server, each arrival pre-empting the update in service (Yates & Kaul 2019,
//!   M/M/1*): `Δᵢ = (1/μ)(1 + ρ)/ρᵢ`.
//! * [`mm1_2_star_age`]: one source, one update in service and a waiting room of
//!   one holding the newest (Costa, Codreanu & Ephremides 2016, M/M/1/2*).
//! * [`dd1_chain_age`], [`dd1_chain_age_with_delay`]: a chain of D/D/1 queues fed
//!   periodically (the idealised just-in-time picture of the ACP+ paper, Fig. 6).
//! * [`argmin`] (golden-section search) and [`updates_per_system_time`]
//!   (`λ·T`, which by Little's law is also the mean number of updates in transit).
//!
//! Conventions for out-of-range inputs: a rate `λ ≥ μ` (or `λ ≥ min(μ₁, μ₂)`),
//! and `λ = 0` for ages, give `f64::INFINITY` (the queue is unstable, or no
//! update ever arrives).  Negative or NaN rates, and non-positive service rates,
//! give `f64::NAN`.  A service rate of `f64::INFINITY` means "zero service time"
//! and is handled exactly, so e.g. `tandem_age(λ, μ, ∞) == mm1_age(λ, μ)`.

/// `true` when the arrival rate / service-rate pair is outside the domain
/// (NaN, negative arrival rate, non-positive service rate).
fn bad_rates(lambda: f64, mus: &[f64]) -> bool {
    lambda.is_nan() || lambda < 0.0 || mus.iter().any(|&m| m.is_nan() || m <= 0.0)
}

/// Average age of information of an M/M/1 FCFS queue with an infinite buffer
/// (Kaul, Yates, Gruteser, INFOCOM 2012):
///
/// ```text
/// Δ = 1/λ + 1/μ + λ²/(μ²(μ−λ))  =  (1/μ)·(1 + 1/ρ + ρ²/(1−ρ)),   ρ = λ/μ
/// ```
///
/// Returns `f64::INFINITY` for `λ = 0` or `λ ≥ μ` (unstable queue), `f64::NAN`
/// for negative/NaN `λ` or non-positive/NaN `μ`.
pub fn mm1_age(lambda: f64, mu: f64) -> f64 {
    if bad_rates(lambda, &[mu]) {
        return f64::NAN;
    }
    if lambda == 0.0 || lambda >= mu {
        return f64::INFINITY;
    }
    1.0 / lambda + 1.0 / mu + lambda * lambda / (mu * mu * (mu - lambda))
}

/// Per-source average age when Poisson sources of rates `lambdas` share one
/// exponential server of rate `μ` and every arrival, whatever its source,
/// pre-empts the update in service, which is discarded (R. D. Yates and S. K.
/// Kaul, "The age of information: real-time status updating by multiple
/// sources", IEEE Trans. IT 65(3), 2019, the LCFS M/M/1* with pre-emption):
///
/// ```text
/// Δᵢ = (1/μ)·(1 + ρ)/ρᵢ,   ρᵢ = λᵢ/μ,   ρ = Σ ρᵢ
/// ```
///
/// (one source: `1/λ + 1/μ`). Stable at any load. A source with `λᵢ = 0` gets
/// `f64::INFINITY`; invalid rates give `f64::NAN` for every source.
pub fn lcfs_preemptive_ages(lambdas: &[f64], mu: f64) -> Vec<f64> {
    if lambdas.iter().any(|&l| bad_rates(l, &[mu])) {
        return vec![f64::NAN; lambdas.len()];
    }
    let rho: f64 = lambdas.iter().map(|l| l / mu).sum();
    lambdas
        .iter()
        .map(|&l| {
            if l == 0.0 {
                f64::INFINITY
            } else {
                (1.0 + rho) / (l / mu) / mu
            }
        })
        .collect()
}

/// Average age of one Poisson source of rate `λ` through an exponential server
/// of rate `μ` with a waiting room of one that always holds the newest update
/// (an arrival replaces the one waiting; service is not pre-empted): the
/// M/M/1/2* system of M. Costa, M. Codreanu and A. Ephremides, "On the age of
/// information in status update systems with packet management", IEEE Trans.
/// IT 62(4), 2016. Derived here with the stochastic-hybrid-system method of
/// Yates & Kaul 2019 (§III): queue states 0, 1, 2 (empty, one in service, one
/// waiting too) with stationary probabilities `∝ 1, ρ, ρ²`, ages
/// `x = (monitor, in service, waiting)`, and the linear equations
///
/// ```text
/// (λ+μ)·v₂₂ = π₂                (λ+μ)·v₁₁ = π₁ + μ·v₂₂       μ·v₂₁ = π₂ + λ·v₁₁
/// λ·v₀₀ = π₀ + μ·v₁₁            (λ+μ)·v₁₀ = π₁ + λ·v₀₀ + μ·v₂₁
/// μ·v₂₀ = π₂ + λ·v₁₀            Δ = v₀₀ + v₁₀ + v₂₀
/// ```
///
/// which simplify to
///
/// ```text
/// μ·Δ = 1/ρ + 2 + 2/(1+ρ) − 1/(1+ρ)² − 2(1+ρ)/(1+ρ+ρ²)
/// ```
///
/// (`ρ = 1`: `Δ = 29/12 · 1/μ`; `ρ → ∞`: `2/μ`, a fresh update always waits for an
/// exponential service; `ρ → 0`: `1/λ`). Stable at any load; `f64::INFINITY`
/// for `λ = 0`, `f64::NAN` for invalid rates.
pub fn mm1_2_star_age(lambda: f64, mu: f64) -> f64 {
    if bad_rates(lambda, &[mu]) {
        return f64::NAN;
    }
    if lambda == 0.0 {
        return f64::INFINITY;
    }
    let r = lambda / mu;
    let (a, b) = (1.0 + r, 1.0 + r + r * r);
    (1.0 / r + 2.0 + 2.0 / a - 1.0 / (a * a) - 2.0 * a / b) / mu
}

/// Mean system time (waiting + service) of an M/M/1 FCFS queue: `T = 1/(μ−λ)`.
///
/// Returns `f64::INFINITY` for `λ ≥ μ`, `f64::NAN` for invalid rates.
pub fn mm1_system_time(lambda: f64, mu: f64) -> f64 {
    if bad_rates(lambda, &[mu]) {
        return f64::NAN;
    }
    if lambda >= mu {
        return f64::INFINITY;
    }
    1.0 / (mu - lambda)
}

/// Average age of information at the monitor for updates that traverse two
/// M/M/1 FCFS queues in tandem: Poisson arrivals of rate `λ`, exponential
/// service of rate `μ₁` at the first queue and `μ₂` at the second, all
/// independent (by Burke's theorem queue 2 also sees Poisson arrivals).
///
/// ```text
/// Δ = 1/λ + 1/μ₁ + 1/μ₂
///   + λ²/(μ₁²(μ₁−λ)) + λ²/(μ₂²(μ₂−λ)) + λ²/(μ₁μ₂(μ₁+μ₂−λ))
/// ```
///
/// This is the *corrected* form of eq. (18) of the ACP+ paper: the paper prints
/// the fifth term as `λ/(μ₂²(μ₂−λ))`, which is dimensionally a time² and does not
/// reduce to [`mm1_age`]`(λ, μ₂)` when `μ₁ → ∞`.  The expression above is
/// symmetric in `μ₁ ↔ μ₂` (as it must be: exponential servers in tandem are
/// interchangeable), reduces to the single-queue age in both limits, and agrees
/// with a Monte-Carlo simulation to within its confidence interval.
///
/// Returns `f64::INFINITY` for `λ = 0` or `λ ≥ min(μ₁, μ₂)`, `f64::NAN` for
/// invalid rates.  `μₖ = f64::INFINITY` (zero service time) is exact.
pub fn tandem_age(lambda: f64, mu1: f64, mu2: f64) -> f64 {
    if bad_rates(lambda, &[mu1, mu2]) {
        return f64::NAN;
    }
    if lambda == 0.0 || lambda >= mu1 || lambda >= mu2 {
        return f64::INFINITY;
    }
    let l2 = lambda * lambda;
    1.0 / lambda
        + 1.0 / mu1
        + 1.0 / mu2
        + l2 / (mu1 * mu1 * (mu1 - lambda))
        + l2 / (mu2 * mu2 * (mu2 - lambda))
        + l2 / (mu1 * mu2 * (mu1 + mu2 - lambda))
}

/// Mean end-to-end system time of two M/M/1 FCFS queues in tandem:
/// `T = 1/(μ₁−λ) + 1/(μ₂−λ)`.
///
/// Returns `f64::INFINITY` for `λ ≥ min(μ₁, μ₂)`, `f64::NAN` for invalid rates.
pub fn tandem_system_time(lambda: f64, mu1: f64, mu2: f64) -> f64 {
    if bad_rates(lambda, &[mu1, mu2]) {
        return f64::NAN;
    }
    if lambda >= mu1 || lambda >= mu2 {
        return f64::INFINITY;
    }
    1.0 / (mu1 - lambda) + 1.0 / (mu2 - lambda)
}

/// Exact time-average age of a chain of D/D/1 FCFS queues (deterministic
/// service times `services[k]`) fed by strictly periodic updates of period
/// `period`, without propagation delay.  Same as
/// [`dd1_chain_age_with_delay`]`(period, services, 0.0)`.
pub fn dd1_chain_age(period: f64, services: &[f64]) -> f64 {
    dd1_chain_age_with_delay(period, services, 0.0)
}

/// Exact time-average age of a chain of D/D/1 FCFS queues with deterministic
/// service times `services[k]`, periodic arrivals every `period`, plus a total
/// (deterministic) propagation delay `total_propagation` anywhere along the path.
///
/// If `period ≥ max services[k]`, an update reaches queue k no earlier than the
/// instant its predecessor leaves it (by induction: it arrives at queue k exactly
/// `period` after its predecessor did, and the predecessor stayed `services[k] ≤
/// period`), so nobody ever waits.  Every update then has the same system time
/// `D = Σ s_k + total_propagation`, deliveries are periodic with period `T =
/// period`, and the age is a sawtooth rising from `D` to `D + T`:
///
/// ```text
/// Δ = Σ s_k + total_propagation + T/2        (T ≥ max s_k)
/// ```
///
/// If `period < max services[k]`, the bottleneck queue receives work faster than
/// it can serve it, its backlog (and every later update's age) grows without
/// bound, and the function returns `f64::INFINITY`.
///
/// An empty `services` slice means a pure delay line: `Δ = total_propagation + T/2`.
/// Returns `f64::NAN` if `period` is not a positive finite number, or if any
/// service time or the delay is negative or NaN.
pub fn dd1_chain_age_with_delay(period: f64, services: &[f64], total_propagation: f64) -> f64 {
    // `x >= 0.0` is false for NaN, so these also reject NaN inputs.
    let non_negative = |x: f64| x >= 0.0;
    let valid = period > 0.0
        && period.is_finite()
        && non_negative(total_propagation)
        && services.iter().all(|&s| non_negative(s));
    if !valid {
        return f64::NAN;
    }
    let max_s = services.iter().cloned().fold(0.0_f64, f64::max);
    if period < max_s {
        return f64::INFINITY;
    }
    services.iter().sum::<f64>() + total_propagation + period / 2.0
}

/// Golden-section search for the minimiser of a unimodal `f` on `[lo, hi]`.
///
/// Stops when the bracket is narrower than `1e-9` relative to its largest
/// end-point magnitude (with an absolute floor of `1e-300` and a 400-iteration
/// cap, so a minimum at 0 also terminates).  `f` is never evaluated at `lo` or
/// `hi` themselves, so it may be infinite there (e.g. age at `λ = 0` or `λ = μ`);
/// NaN values are treated as `+∞`.
///
/// Note: near a smooth minimum `f` is flat to second order, so floating-point
/// rounding of `f` limits the *achievable* accuracy of the minimiser to about
/// `√ε ≈ 1.5e-8` relative; the bracket tolerance is tighter than that.
///
/// The endpoints may be given in either order.
pub fn argmin(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let (mut a, mut b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let eval = |x: f64| {
        let y = f(x);
        if y.is_nan() {
            f64::INFINITY
        } else {
            y
        }
    };
    // 1/φ = (√5 − 1)/2
    let g = (5.0_f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let mut fc = eval(c);
    let mut fd = eval(d);
    for _ in 0..400 {
        let scale = a.abs().max(b.abs()).max(1e-300);
        if b - a <= 1e-9 * scale {
            break;
        }
        if fc <= fd {
            // minimum in [a, d]
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = eval(c);
        } else {
            // minimum in [c, b]
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = eval(d);
        }
    }
    0.5 * (a + b)
}

/// Age-optimal update rate of an M/M/1 FCFS queue and the minimal age:
/// returns `(λ*, Δ*)`.
///
/// Setting `dΔ/dρ = 0` for `μΔ = 1 + 1/ρ + ρ²/(1−ρ)` gives
/// `ρ⁴ − 2ρ³ + ρ² − 2ρ + 1 = 0`, a palindromic quartic; with `u = ρ + 1/ρ`
/// it becomes `u² − 2u − 1 = 0`, so `ρ + 1/ρ = 1 + √2` and
///
/// ```text
/// ρ* = (1 + √2 − √(2√2 − 1)) / 2 ≈ 0.531010,   λ* = ρ*·μ,   Δ* ≈ 3.484435/μ
/// ```
///
/// At the optimum `λ*·T = ρ*/(1−ρ*) ≈ 1.1322` updates per system time (the
/// paper's text says ≈ 1.12, the spec ≈ 1.13).  Computed in closed form.
/// Returns `(NaN, NaN)` for non-positive/NaN `μ`.
pub fn mm1_optimum(mu: f64) -> (f64, f64) {
    if mu.is_nan() || mu <= 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let s2 = 2.0_f64.sqrt();
    let rho = (1.0 + s2 - (2.0 * s2 - 1.0).sqrt()) / 2.0;
    let lambda = rho * mu;
    (lambda, mm1_age(lambda, mu))
}

/// Age-optimal update rate of two M/M/1 queues in tandem and the minimal age:
/// returns `(λ*, Δ*)` using [`tandem_age`] and [`argmin`] on `(0, min(μ₁, μ₂))`.
///
/// Every term of [`tandem_age`] is strictly convex in `λ` on that interval
/// (`1/λ`, and `λ²/(c(m−λ)) = −λ − m + m²/(m−λ)` up to the factor `1/c`), so the
/// minimiser is unique and golden-section search finds it.
///
/// Figures (corrected formula): `μ₁ = μ₂ = 1`: `λ* ≈ 0.4430`, `Δ* ≈ 5.0880`,
/// `λ*·T ≈ 1.5905` (paper: ≈ 1.6); `μ₁ = 1, μ₂ = 2` (or swapped): `λ* ≈ 0.5176`,
/// `Δ* ≈ 4.0865`, `λ*·T ≈ 1.4221` (paper: ≈ 1.43).
///
/// If one rate is infinite this is the M/M/1 optimum of the other.
/// Returns `(NaN, NaN)` for invalid rates.
pub fn tandem_optimum(mu1: f64, mu2: f64) -> (f64, f64) {
    if bad_rates(0.0, &[mu1, mu2]) {
        return (f64::NAN, f64::NAN);
    }
    let hi = mu1.min(mu2);
    if hi.is_infinite() {
        // both servers take zero time: age 1/λ decreases without bound
        return (f64::INFINITY, 0.0);
    }
    let lambda = argmin(|l| tandem_age(l, mu1, mu2), 0.0, hi);
    (lambda, tandem_age(lambda, mu1, mu2))
}

/// Updates per system time, `λ·T`: how many updates are sent during one mean
/// system time.  By Little's law this is also the mean number of updates in
/// transit (the "backlog" of the ACP papers).
pub fn updates_per_system_time(lambda: f64, system_time: f64) -> f64 {
    lambda * system_time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcfs_preemptive_one_source_is_one_over_lambda_plus_one_over_mu() {
        let one = lcfs_preemptive_ages(&[0.7], 2.0);
        assert!((one[0] - (1.0 / 0.7 + 0.5)).abs() < 1e-12);
        // Two equal sources at ρ = 1: each (1/μ)·2/0.5 = 4/μ.
        let two = lcfs_preemptive_ages(&[1.0, 1.0], 2.0);
        assert!(two.iter().all(|a| (a - 2.0).abs() < 1e-12), "{two:?}");
        assert_eq!(lcfs_preemptive_ages(&[0.0, 1.0], 1.0)[0], f64::INFINITY);
        assert!(lcfs_preemptive_ages(&[1.0], 0.0)[0].is_nan());
    }

    /// The SHS equations of [`mm1_2_star_age`], solved step by step.
    fn mm1_2_star_by_shs(l: f64, m: f64) -> f64 {
        let r = l / m;
        let z = 1.0 + r + r * r;
        let (p0, p1, p2) = (1.0 / z, r / z, r * r / z);
        let v22 = p2 / (l + m);
        let v11 = (p1 + m * v22) / (l + m);
        let v21 = (p2 + l * v11) / m;
        let v00 = (p0 + m * v11) / l;
        let v10 = (p1 + l * v00 + m * v21) / (l + m);
        let v20 = (p2 + l * v10) / m;
        v00 + v10 + v20
    }

    #[test]
    fn mm1_2_star_is_its_shs_solution_and_its_limits() {
        for (l, m) in [(0.1, 1.0), (1.0, 1.0), (3.0, 2.0), (50.0, 1.0)] {
            let (closed, shs) = (mm1_2_star_age(l, m), mm1_2_star_by_shs(l, m));
            assert!(
                (closed - shs).abs() < 1e-12 * shs,
                "{l} {m}: {closed} {shs}"
            );
        }
        assert!((mm1_2_star_age(1.0, 1.0) - 29.0 / 12.0).abs() < 1e-12);
        assert!((mm1_2_star_age(1e6, 1.0) - 2.0).abs() < 1e-5);
        assert!((mm1_2_star_age(1e-6, 1.0) * 1e-6 - 1.0).abs() < 1e-5);
        // Between the pre-emptive LCFS (1/λ + 1/μ) and FCFS M/M/1 at the same load.
        for rho in [0.2, 0.5, 0.9] {
            let a = mm1_2_star_age(rho, 1.0);
            assert!(a > 1.0 / rho + 1.0 && a < mm1_age(rho, 1.0), "{rho}: {a}");
        }
        assert_eq!(mm1_2_star_age(0.0, 1.0), f64::INFINITY);
        assert!(mm1_2_star_age(-1.0, 1.0).is_nan());
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    /// ACP+ paper eq. (18) exactly as printed (fifth term `λ/(μ₂²(μ₂−λ))`).
    /// Kept only to demonstrate in tests that it fails the checks.
    fn eq18_as_printed(l: f64, m1: f64, m2: f64) -> f64 {
        1.0 / l
            + 1.0 / m1
            + 1.0 / m2
            + l * l / (m1 * m1 * (m1 - l))
            + l / (m2 * m2 * (m2 - l))
            + l * l / (m1 * m2 * (m1 + m2 - l))
    }

    /// xorshift64* generator for the small in-test Monte Carlo (std only).
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn exp(&mut self, rate: f64) -> f64 {
            // uniform in (0, 1)
            let u = ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            -u.ln() / rate
        }
    }

    /// Time-average age of a tandem of FCFS queues by direct simulation
    /// (Lindley recursions, exact sawtooth area).  Independent of the formulas.
    fn simulate_tandem_age(lambda: f64, mu1: f64, mu2: f64, n: usize, seed: u64) -> f64 {
        let mut rng = Rng(seed);
        let (mut a, mut d1, mut d2) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..10_000 {
            a += rng.exp(lambda);
            d1 = a.max(d1) + rng.exp(mu1);
            d2 = d1.max(d2) + rng.exp(mu2);
        }
        let (mut ap, mut dp) = (a, d2);
        let start = dp;
        let mut area = 0.0;
        for _ in 0..n {
            a += rng.exp(lambda);
            d1 = a.max(d1) + rng.exp(mu1);
            d2 = d1.max(d2) + rng.exp(mu2);
            area += (d2 - dp) * ((d2 - ap) + (dp - ap)) * 0.5;
            ap = a;
            dp = d2;
        }
        area / (dp - start)
    }

    // ---------- M/M/1 ----------

    #[test]
    fn mm1_hand_values() {
        // λ = 1/2, μ = 1: 2 + 1 + (1/4)/(1/2) = 3.5
        assert!(close(mm1_age(0.5, 1.0), 3.5, 1e-15));
        // λ = 1, μ = 2: 1 + 1/2 + 1/(4·1) = 1.75
        assert!(close(mm1_age(1.0, 2.0), 1.75, 1e-15));
        assert!(close(mm1_system_time(0.5, 1.0), 2.0, 1e-15));
        assert!(close(mm1_system_time(0.0, 4.0), 0.25, 1e-15));
    }

    #[test]
    fn mm1_time_scaling() {
        // Δ(cλ, cμ) = Δ(λ, μ)/c: every term is a time
        for &c in &[0.01, 3.0, 1000.0] {
            assert!(close(
                mm1_age(0.3 * c, 1.0 * c),
                mm1_age(0.3, 1.0) / c,
                1e-13
            ));
        }
    }

    #[test]
    fn mm1_out_of_range() {
        assert_eq!(mm1_age(1.0, 1.0), f64::INFINITY);
        assert_eq!(mm1_age(2.0, 1.0), f64::INFINITY);
        assert_eq!(mm1_age(0.0, 1.0), f64::INFINITY);
        assert_eq!(mm1_system_time(1.0, 1.0), f64::INFINITY);
        assert!(mm1_age(-1.0, 1.0).is_nan());
        assert!(mm1_age(0.5, 0.0).is_nan());
        assert!(mm1_age(f64::NAN, 1.0).is_nan());
        // zero service time: age of a Poisson stream with no delay is 1/λ
        assert_eq!(mm1_age(0.5, f64::INFINITY), 2.0);
    }

    #[test]
    fn mm1_optimum_closed_form() {
        let (l, a) = mm1_optimum(1.0);
        // ρ* satisfies ρ + 1/ρ = 1 + √2 and the quartic ρ⁴ − 2ρ³ + ρ² − 2ρ + 1 = 0
        assert!(close(l + 1.0 / l, 1.0 + 2.0_f64.sqrt(), 1e-14));
        assert!((l.powi(4) - 2.0 * l.powi(3) + l * l - 2.0 * l + 1.0).abs() < 1e-14);
        // derivative of 1/λ + 1 + λ²/(1−λ) vanishes: −1/λ² + (2λ − λ²)/(1−λ)²
        assert!((-1.0 / (l * l) + (2.0 * l - l * l) / ((1.0 - l) * (1.0 - l))).abs() < 1e-12);
        // the figures quoted in the spec
        assert!((l - 0.531).abs() < 5e-4);
        assert!((a - 3.48).abs() < 5e-3);
        let t = mm1_system_time(l, 1.0);
        assert!((updates_per_system_time(l, t) - 1.13).abs() < 5e-3);
        // λ*T = ρ/(1−ρ)
        assert!(close(updates_per_system_time(l, t), l / (1.0 - l), 1e-14));
        // scales with μ
        let (l5, a5) = mm1_optimum(5.0);
        assert!(close(l5, 5.0 * l, 1e-15));
        assert!(close(a5, a / 5.0, 1e-14));
    }

    #[test]
    fn mm1_optimum_matches_golden_section() {
        for &mu in &[0.2, 1.0, 7.0] {
            let (l, a) = mm1_optimum(mu);
            let g = argmin(|x| mm1_age(x, mu), 0.0, mu);
            assert!(close(g, l, 1e-7), "mu={mu}: golden {g} vs closed {l}");
            assert!(close(mm1_age(g, mu), a, 1e-13));
        }
    }

    // ---------- tandem ----------

    #[test]
    fn tandem_hand_value() {
        // λ = 1/2, μ₁ = μ₂ = 1: 2 + 1 + 1 + 1/2 + 1/2 + (1/4)/(3/2) = 31/6
        assert!(close(tandem_age(0.5, 1.0, 1.0), 31.0 / 6.0, 1e-15));
        // λ = 1, μ₁ = 2, μ₂ = 3: 1 + 1/2 + 1/3 + 1/4 + 1/18 + 1/24 = 157/72
        assert!(close(tandem_age(1.0, 2.0, 3.0), 157.0 / 72.0, 1e-15));
        assert!(close(
            tandem_system_time(0.5, 1.0, 2.0),
            2.0 + 2.0 / 3.0,
            1e-15
        ));
    }

    #[test]
    fn tandem_limits_reduce_to_mm1() {
        for &(l, m) in &[(0.3, 1.0), (0.5, 1.0), (0.9, 1.0), (2.0, 5.0)] {
            // exact with an infinitely fast (zero-time) server
            assert!(close(tandem_age(l, m, f64::INFINITY), mm1_age(l, m), 1e-15));
            assert!(close(tandem_age(l, f64::INFINITY, m), mm1_age(l, m), 1e-15));
            assert!(close(
                tandem_system_time(l, m, f64::INFINITY),
                mm1_system_time(l, m),
                1e-15
            ));
            // and approached continuously (error O(1/μ_fast))
            let big = 1e9;
            assert!(close(tandem_age(l, m, big), mm1_age(l, m), 1e-8));
            assert!(close(tandem_age(l, big, m), mm1_age(l, m), 1e-8));
        }
    }

    #[test]
    fn tandem_symmetric_and_scales() {
        for &(l, a, b) in &[(0.3, 1.0, 2.0), (0.7, 1.0, 5.0), (2.0, 4.0, 3.0)] {
            assert!(close(tandem_age(l, a, b), tandem_age(l, b, a), 1e-15));
            for &c in &[0.001, 10.0] {
                assert!(close(
                    tandem_age(c * l, c * a, c * b),
                    tandem_age(l, a, b) / c,
                    1e-13
                ));
            }
        }
    }

    #[test]
    fn tandem_small_lambda() {
        // λ → 0: Δ − 1/λ → 1/μ₁ + 1/μ₂ (no queueing)
        let l = 1e-7;
        assert!(((tandem_age(l, 1.0, 2.0) - 1.0 / l) - 1.5).abs() < 1e-6);
    }

    #[test]
    fn tandem_out_of_range() {
        assert_eq!(tandem_age(1.0, 1.0, 2.0), f64::INFINITY);
        assert_eq!(tandem_age(1.5, 2.0, 1.0), f64::INFINITY);
        assert_eq!(tandem_age(0.0, 2.0, 1.0), f64::INFINITY);
        assert_eq!(tandem_system_time(1.0, 2.0, 1.0), f64::INFINITY);
        assert!(tandem_age(0.5, -1.0, 1.0).is_nan());
        assert!(tandem_system_time(0.5, 1.0, f64::NAN).is_nan());
    }

    #[test]
    fn eq18_as_printed_fails_the_checks() {
        // not a time: does not scale as 1/c
        let (l, a, b) = (0.5, 1.0, 2.0);
        let c = 10.0;
        assert!(!close(
            eq18_as_printed(c * l, c * a, c * b),
            eq18_as_printed(l, a, b) / c,
            1e-3
        ));
        // μ₁ → ∞ does not give the M/M/1 age of queue 2 (unless λ = 1)
        assert!(!close(
            eq18_as_printed(0.5, f64::INFINITY, 1.0),
            mm1_age(0.5, 1.0),
            1e-3
        ));
        // not symmetric
        assert!(!close(
            eq18_as_printed(0.5, 1.0, 2.0),
            eq18_as_printed(0.5, 2.0, 1.0),
            1e-3
        ));
        // μ₂ → ∞ is fine, which is why the typo is easy to miss
        assert!(close(
            eq18_as_printed(0.5, 1.0, f64::INFINITY),
            mm1_age(0.5, 1.0),
            1e-15
        ));
    }

    #[test]
    fn tandem_matches_monte_carlo() {
        // 400k updates: standard error well below 1 %; eq. (18) as printed is
        // 8.7 % / 11 % off at these points, so the check discriminates.
        for (k, &(l, a, b)) in [(0.5, 1.0, 1.0), (0.5, 2.0, 1.0)].iter().enumerate() {
            let sim = simulate_tandem_age(l, a, b, 400_000, 0x9E37_79B9_7F4A_7C15 ^ k as u64);
            let f = tandem_age(l, a, b);
            assert!(
                close(sim, f, 0.015),
                "({l},{a},{b}): sim {sim} vs formula {f}"
            );
            assert!(!close(sim, eq18_as_printed(l, a, b), 0.05));
        }
    }

    #[test]
    fn tandem_optimum_is_stationary_point() {
        // hand-derived dΔ/dλ = −1/λ² + Σₖ (2λμₖ − λ²)/(μₖ²(μₖ−λ)²)
        //                     + (2λs − λ²)/(μ₁μ₂(s−λ)²),  s = μ₁ + μ₂
        let deriv = |l: f64, m1: f64, m2: f64| {
            let s = m1 + m2;
            -1.0 / (l * l)
                + (2.0 * l * m1 - l * l) / (m1 * m1 * (m1 - l) * (m1 - l))
                + (2.0 * l * m2 - l * l) / (m2 * m2 * (m2 - l) * (m2 - l))
                + (2.0 * l * s - l * l) / (m1 * m2 * (s - l) * (s - l))
        };
        for &(m1, m2) in &[(1.0, 1.0), (1.0, 2.0), (3.0, 0.5)] {
            let (l, a) = tandem_optimum(m1, m2);
            assert!(l > 0.0 && l < m1.min(m2));
            // |Δ'| small relative to the curvature scale 1/λ³
            assert!(deriv(l, m1, m2).abs() * l * l < 1e-6, "({m1},{m2}) λ*={l}");
            assert!(close(a, tandem_age(l, m1, m2), 1e-15));
            // swapping the servers changes nothing
            let (ls, as_) = tandem_optimum(m2, m1);
            assert!(close(l, ls, 1e-7) && close(a, as_, 1e-13));
        }
    }

    #[test]
    fn tandem_optimum_figures() {
        // μ₁ = μ₂ = 1: paper reports ≈ 1.6 updates per system time
        let (l, _) = tandem_optimum(1.0, 1.0);
        let n = updates_per_system_time(l, tandem_system_time(l, 1.0, 1.0));
        assert!((n - 1.6).abs() < 0.015, "λ*T = {n}");
        // μ₂ = 2μ₁: paper reports ≈ 1.43 (the exact optimum of the formula is
        // 1.422; the age is flat there, so the paper's figure is a rounded read-off)
        for &(m1, m2) in &[(1.0, 2.0), (2.0, 1.0), (5.0, 10.0)] {
            let (l, _) = tandem_optimum(m1, m2);
            let n = updates_per_system_time(l, tandem_system_time(l, m1, m2));
            assert!((n - 1.43).abs() < 0.01, "({m1},{m2}) λ*T = {n}");
        }
        // the optimum backlog in tandem is larger than the single-queue optimum
        let (l1, _) = mm1_optimum(1.0);
        assert!(n > updates_per_system_time(l1, mm1_system_time(l1, 1.0)));
    }

    #[test]
    fn tandem_optimum_tends_to_mm1_optimum() {
        let (lm, am) = mm1_optimum(1.0);
        let (l, a) = tandem_optimum(1.0, 1e9);
        assert!(close(l, lm, 1e-6) && close(a, am, 1e-8));
        let (l, a) = tandem_optimum(f64::INFINITY, 1.0);
        assert!(close(l, lm, 1e-7) && close(a, am, 1e-13));
    }

    // ---------- D/D/1 chain ----------

    /// Direct event computation of the D/D/1 chain: Lindley recursions with the
    /// propagation delay added after the last queue; age from the exact sawtooth
    /// area over many periods.
    fn simulate_dd1(period: f64, services: &[f64], prop: f64, n: usize) -> (f64, f64) {
        let mut dep = vec![f64::NEG_INFINITY; services.len()];
        let (mut ap, mut dp) = (0.0f64, f64::NAN);
        let mut area = 0.0;
        let mut start = f64::NAN;
        let mut last_wait = 0.0;
        for i in 0..n {
            let a = i as f64 * period;
            let mut t = a;
            last_wait = 0.0;
            for (k, &s) in services.iter().enumerate() {
                last_wait += (dep[k] - t).max(0.0);
                t = t.max(dep[k]) + s;
                dep[k] = t;
            }
            let d = t + prop;
            if i >= 1 {
                if start.is_nan() {
                    start = dp;
                }
                area += (d - dp) * ((d - ap) + (dp - ap)) * 0.5;
            }
            ap = a;
            dp = d;
        }
        (area / (dp - start), last_wait)
    }

    #[test]
    fn dd1_chain_hand_values() {
        // T = 1, services 0.2 + 0.3: 0.5 + 0.5 = 1.0
        assert!(close(dd1_chain_age(1.0, &[0.2, 0.3]), 1.0, 1e-15));
        // just-in-time (Fig. 6): Q queues of service s, T = s → Q·s + s/2
        assert!(close(dd1_chain_age(2.0, &[2.0, 2.0, 2.0]), 7.0, 1e-15));
        assert!(close(
            dd1_chain_age_with_delay(1.0, &[0.5], 0.25),
            1.25,
            1e-15
        ));
        assert!(close(dd1_chain_age_with_delay(4.0, &[], 1.0), 3.0, 1e-15));
        assert_eq!(dd1_chain_age(1.0, &[0.5, 1.5]), f64::INFINITY);
        assert!(dd1_chain_age(0.0, &[0.5]).is_nan());
        assert!(dd1_chain_age(1.0, &[-0.5]).is_nan());
        assert!(dd1_chain_age_with_delay(1.0, &[0.5], -1.0).is_nan());
    }

    #[test]
    fn dd1_chain_matches_event_computation() {
        for &(p, ref s, d) in &[
            (1.0, vec![0.2, 0.3, 0.9], 0.0),
            (1.0, vec![1.0, 0.25, 1.0], 0.7),
            (0.5, vec![0.125, 0.5], 0.03125),
        ] {
            let (sim, w) = simulate_dd1(p, s, d, 2000);
            assert_eq!(w, 0.0);
            assert!(
                close(sim, dd1_chain_age_with_delay(p, s, d), 1e-9),
                "sim {sim}"
            );
        }
        // T < max s: waiting of the n-th update grows linearly, ≈ n·(s_max − T)
        let (_, w1) = simulate_dd1(1.0, &[0.5, 1.25], 0.0, 1000);
        let (_, w2) = simulate_dd1(1.0, &[0.5, 1.25], 0.0, 2000);
        assert!(close(w1, 999.0 * 0.25, 1e-9) && close(w2, 1999.0 * 0.25, 1e-9));
    }

    // ---------- argmin ----------

    #[test]
    fn argmin_simple_functions() {
        assert!(close(
            argmin(|x| (x - 2.0) * (x - 2.0), 0.0, 5.0),
            2.0,
            1e-8
        ));
        // x − ln x has its minimum at x = 1
        assert!(close(argmin(|x| x - x.ln(), 0.0, 10.0), 1.0, 1e-7));
        // reversed bounds, infinite at an end point
        assert!(close(argmin(|x| 1.0 / x + x, 3.0, 0.0), 1.0, 1e-7));
        // monotone: converges to the end point
        assert!((argmin(|x| x, 1.0, 2.0) - 1.0).abs() < 1e-8);
        // minimum at zero terminates
        assert!(argmin(|x| x * x, -1.0, 1.0).abs() < 1e-8);
    }

    #[test]
    fn updates_per_system_time_is_product() {
        assert_eq!(updates_per_system_time(0.5, 4.0), 2.0);
    }
}
