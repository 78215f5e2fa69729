//! Random paths for the controllers' held-out evaluation (`acp reproduce controllers --random N
//! --seed S`): scenario `k` of seed `S` is drawn from its own stream (`random path k` of `S`),
//! so the first scenarios of a draw are the same whatever N.
//!
//! Every scenario draws a base path and then one [`Class`] (each with probability 1/10) that
//! adds what the class is about. The distributions are written out in `docs/SIMULATOR.md`
//! ("Random paths"); in short:
//!
//! - 1–8 hops; the bottleneck log-uniform in 0.1 Mbit/s–1 Gbit/s on a random hop, the other
//!   hops 1.5–100 times faster (log-uniform); one-way propagation 0 (one draw in ten) or
//!   log-uniform in 0.5–150 ms, split over the hops in uniform random shares; drop-tail queues
//!   of 20, 50, 100, 300 or 1000 packets; payloads log-uniform in 32–1400 bytes;
//!   deterministic service, one source;
//! - the classes: [`Class::Plain`] (the base), [`Class::Exponential`] (every hop, and Poisson
//!   cross traffic of 10–50 % on every hop in half the draws), [`Class::MixedService`],
//!   [`Class::Cross`] (CBR, Poisson or on-off at 10–80 % of the bottleneck), [`Class::Shared`]
//!   (2–32 sources, a third of them joining and leaving in a third of the draws),
//!   [`Class::Wifi`] (1–48 stations behind an 802.11g access point), [`Class::Loss`]
//!   (Bernoulli or Gilbert–Elliott), [`Class::Trace`] (a synthetic Mahimahi trace at the
//!   bottleneck), [`Class::Schedule`] (the bottleneck drops and is restored),
//!   [`Class::Jitter`] (with or without reordering, added to one hop's propagation).
//!
//! A run lasts 150 base round trips, 4–40 simulated seconds (the first third not measured). A
//! draw whose bottleneck would carry more than [`UPDATE_BUDGET`] updates in that time is drawn
//! again from the same stream: the distributions are conditioned on that budget, which keeps
//! N = 200 scenarios within minutes on two cores.

use acp_core::controller::ControllerKind;
use acp_netmodel::rng::Rng;
use acp_netmodel::schedule::Trace;
use acp_netmodel::Streams;

use super::access::{access_scenario, AccessNet, Backhaul, UPDATE_OVERHEAD};
use super::controllers::{chain_nodes, draft, hop, Hop, Length, SuiteScenario, Traffic};

/// What a drawn scenario is about (its class; the per-class summary groups by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The base path alone: deterministic service, one source, nothing else.
    Plain,
    /// Exponential service on every hop, Poisson cross traffic on every hop in half the draws.
    Exponential,
    /// Each hop's service deterministic or exponential (at least one of each over two hops).
    MixedService,
    /// CBR, Poisson or on-off cross traffic over the bottleneck.
    Cross,
    /// Several sources sharing the path, some joining and leaving.
    Shared,
    /// The sources are stations behind one 802.11g access point.
    Wifi,
    /// Bernoulli or Gilbert–Elliott loss on one hop.
    Loss,
    /// The bottleneck delivers along a synthetic Mahimahi trace.
    Trace,
    /// The bottleneck's capacity drops and is restored.
    Schedule,
    /// Delay jitter on one hop, with or without reordering.
    Jitter,
}

/// Every class, in the order of the per-class summary.
pub const CLASSES: [Class; 10] = [
    Class::Plain,
    Class::Exponential,
    Class::MixedService,
    Class::Cross,
    Class::Shared,
    Class::Wifi,
    Class::Loss,
    Class::Trace,
    Class::Schedule,
    Class::Jitter,
];

impl Class {
    /// Its name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Class::Plain => "plain",
            Class::Exponential => "exponential",
            Class::MixedService => "mixed-service",
            Class::Cross => "cross",
            Class::Shared => "shared",
            Class::Wifi => "wifi",
            Class::Loss => "loss",
            Class::Trace => "trace",
            Class::Schedule => "schedule",
            Class::Jitter => "jitter",
        }
    }
}

/// The most updates the bottleneck may carry at its capacity over a run (summed over the
/// sources); a draw beyond it is redrawn.
pub const UPDATE_BUDGET: f64 = 250_000.0;

/// Base round trips a run lasts …
pub const RUN_RTTS: f64 = 150.0;
/// … but at least this many simulated seconds …
pub const MIN_SECS: f64 = 4.0;
/// … and at most this many.
pub const MAX_SECS: f64 = 40.0;

/// Bytes a Mahimahi delivery opportunity carries.
const TRACE_MTU: f64 = 1500.0;
/// The period of a synthetic trace (ms) and the slots its rate varies over (ms).
const TRACE_PERIOD_MS: f64 = 10_000.0;
const TRACE_SLOT_MS: f64 = 50.0;

/// Log-uniform in `[lo, hi]`.
fn log_uniform(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    rng.uniform(lo.ln(), hi.ln()).exp()
}

/// One of `xs`, uniformly.
fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.up_to(xs.len() as u32 - 1) as usize]
}

/// Rounded to `digits` significant digits (short, readable scenario files).
fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// The base path of a draw.
#[derive(Debug, Clone)]
struct Base {
    /// Rate (Mbit/s) and one-way propagation (ms) per hop.
    hops: Vec<(f64, f64)>,
    /// The slowest hop.
    bottleneck: usize,
    queue: u32,
    payload: u32,
}

impl Base {
    fn draw(rng: &mut Rng, bottleneck_mbit: (f64, f64)) -> Base {
        let n = 1 + rng.up_to(7) as usize;
        let bottleneck = rng.up_to(n as u32 - 1) as usize;
        let b = round_sig(log_uniform(rng, bottleneck_mbit.0, bottleneck_mbit.1), 2);
        let total_ms = if rng.chance(0.1) {
            0.0
        } else {
            log_uniform(rng, 0.5, 150.0)
        };
        let shares: Vec<f64> = (0..n).map(|_| rng.unit()).collect();
        let sum: f64 = shares.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        let hops = (0..n)
            .map(|i| {
                let mbit = if i == bottleneck {
                    b
                } else {
                    round_sig((b * log_uniform(rng, 1.5, 100.0)).min(10_000.0), 2)
                };
                (mbit, round_sig(total_ms * shares[i] / sum, 2))
            })
            .collect();
        Base {
            hops,
            bottleneck,
            queue: pick(rng, &[20, 50, 100, 300, 1000]),
            payload: log_uniform(rng, 32.0, 1400.0).round() as u32,
        }
    }

    fn bottleneck_mbit(&self) -> f64 {
        self.hops[self.bottleneck].0
    }

    fn one_way_ms(&self) -> f64 {
        self.hops.iter().map(|h| h.1).sum()
    }

    /// Bits of one update on a link.
    fn update_bits(&self) -> f64 {
        8.0 * f64::from(self.payload + UPDATE_OVERHEAD)
    }

    /// The round trip of one update and its ACK through empty queues (s).
    fn rtt(&self) -> f64 {
        let service: f64 = self
            .hops
            .iter()
            .map(|h| (self.update_bits() + 8.0 * f64::from(UPDATE_OVERHEAD)) / (h.0 * 1e6))
            .sum();
        2.0 * self.one_way_ms() / 1e3 + service
    }

    /// The simulated seconds of a run.
    fn secs(&self) -> f64 {
        (RUN_RTTS * self.rtt()).clamp(MIN_SECS, MAX_SECS).round()
    }

    /// Whether a run of `sources` sharing a bottleneck of `capacity_mbit` stays within
    /// [`UPDATE_BUDGET`].
    fn affordable(&self, capacity_mbit: f64) -> bool {
        capacity_mbit * 1e6 / self.update_bits() * self.secs() <= UPDATE_BUDGET
    }

    fn hops(&self) -> Vec<Hop> {
        self.hops
            .iter()
            .map(|&(mbit, ms)| hop(mbit, ms).queue(self.queue))
            .collect()
    }

    /// A line on the path.
    fn about(&self) -> String {
        format!(
            "{} hop(s), {} Mbit/s bottleneck (hop {}), {} ms one way, {}-packet queues, {}-byte updates",
            self.hops.len(),
            self.bottleneck_mbit(),
            self.bottleneck + 1,
            round_sig(self.one_way_ms(), 3),
            self.queue,
            self.payload
        )
    }
}

/// The cross-traffic processes of [`Class::Cross`].
fn traffic(rng: &mut Rng) -> (Traffic, String) {
    match rng.up_to(2) {
        0 => (Traffic::Cbr, "CBR".into()),
        1 => (Traffic::Poisson, "Poisson".into()),
        _ => {
            let on = round_sig(log_uniform(rng, 0.05, 5.0), 2);
            let off = round_sig(log_uniform(rng, 0.05, 5.0), 2);
            (
                Traffic::OnOff(on, off),
                format!("on-off ({on} s on, {off} s off)"),
            )
        }
    }
}

/// A synthetic Mahimahi trace whose rate averages `mbit`: over each 50-ms slot the rate is
/// `mbit` times a log-normal factor that follows an AR(1) process (coefficient 0.9, innovations
/// of σ = 0.3), normalised to mean 1 over the 10-s period; opportunities arrive as a Poisson
/// process at that rate, at whole milliseconds (as Mahimahi's traces have them).
pub fn synthetic_trace(rng: &mut Rng, mbit: f64) -> String {
    let slots = (TRACE_PERIOD_MS / TRACE_SLOT_MS) as usize;
    let mut x = 0.0;
    let factors: Vec<f64> = (0..slots)
        .map(|_| {
            x = 0.9 * x + 0.3 * rng.normal();
            x.exp()
        })
        .collect();
    let mean = factors.iter().sum::<f64>() / slots as f64;
    let per_ms = mbit * 1e6 / (8.0 * TRACE_MTU) / 1e3;
    let mut lines = String::new();
    let mut t: f64 = 0.0;
    for (k, f) in factors.iter().enumerate() {
        let rate = per_ms * f / mean;
        let end = (k + 1) as f64 * TRACE_SLOT_MS;
        t = t.max(k as f64 * TRACE_SLOT_MS);
        loop {
            t += rng.exp(1.0 / rate);
            if t >= end {
                break;
            }
            lines += &format!("{}\n", t.floor() as u64);
        }
    }
    // The period is the last timestamp: end it exactly at the period.
    lines + &format!("{}\n", TRACE_PERIOD_MS as u64)
}

/// Scenario `k` of the draw with seed `seed`, at `length`.
pub fn scenario(seed: u64, k: usize, length: Length) -> SuiteScenario {
    let mut rng = Streams::new(seed).stream(&format!("random path {k}"));
    let class = pick(&mut rng, &CLASSES);
    let id = format!("r{seed}-{k:03}-{}", class.name());
    loop {
        if let Some(s) = attempt(&mut rng, class, &id, length) {
            return s;
        }
    }
}

/// The first `n` scenarios of the draw with seed `seed`.
pub fn draw(seed: u64, n: usize, length: Length) -> Vec<SuiteScenario> {
    (0..n).map(|k| scenario(seed, k, length)).collect()
}

/// One draw of a scenario of `class`, or `None` if it is beyond the budget.
fn attempt(rng: &mut Rng, class: Class, id: &str, length: Length) -> Option<SuiteScenario> {
    let base = match class {
        // Cellular-like rates for a trace.
        Class::Trace => Base::draw(rng, (0.5, 50.0)),
        _ => Base::draw(rng, (0.1, 1000.0)),
    };
    // Drafts scale their durations by the length; a quick run lasts 3 s at least.
    let secs = (base.secs() * length.scale()).max(3.0) / length.scale();
    let about = base.about();
    let plain = |about: String| draft(id, &about, secs, base.hops()).payload(base.payload);
    let built = match class {
        Class::Plain => plain(about),
        Class::Exponential => {
            let hops: Vec<Hop> = base.hops().into_iter().map(Hop::exponential).collect();
            if rng.chance(0.5) {
                let share = round_sig(rng.uniform(0.1, 0.5), 2);
                let size = pick(rng, &[64, 576, 1000, 1500]);
                let about = format!(
                    "{about}, exponential service, Poisson cross traffic at {share} of every hop, {size} B"
                );
                (0..base.hops.len()).fold(
                    draft(id, &about, secs, hops).payload(base.payload),
                    |d, h| d.cross_at(Some(h), Traffic::Poisson, share, size),
                )
            } else {
                draft(id, &format!("{about}, exponential service"), secs, hops)
                    .payload(base.payload)
            }
        }
        Class::MixedService => {
            let n = base.hops.len();
            let mut exp: Vec<bool> = (0..n).map(|_| rng.chance(0.5)).collect();
            if n >= 2 && exp.iter().all(|&e| e == exp[0]) {
                let i = rng.up_to(n as u32 - 1) as usize;
                exp[i] = !exp[i];
            }
            let hops = base
                .hops()
                .into_iter()
                .zip(&exp)
                .map(|(h, &e)| if e { h.exponential() } else { h })
                .collect();
            let which: Vec<String> = exp
                .iter()
                .enumerate()
                .filter(|(_, &e)| e)
                .map(|(i, _)| (i + 1).to_string())
                .collect();
            draft(
                id,
                &format!(
                    "{about}, exponential service on hop(s) {}",
                    which.join(", ")
                ),
                secs,
                hops,
            )
            .payload(base.payload)
        }
        Class::Cross => {
            let (t, name) = traffic(rng);
            let share = round_sig(rng.uniform(0.1, 0.8), 2);
            let size = pick(rng, &[64, 576, 1000, 1500]);
            plain(format!(
                "{about}, {name} cross traffic at {share} of the bottleneck, {size} B"
            ))
            .cross(t, share, size)
        }
        Class::Shared => {
            let n = log_uniform(rng, 2.0, 32.0).round() as u32;
            if rng.chance(1.0 / 3.0) && n >= 3 {
                let guests = n / 3;
                let join = round_sig(rng.uniform(0.35, 0.5), 2);
                let leave = round_sig(rng.uniform(0.7, 0.9), 2);
                plain(format!(
                    "{about}, {} sources, {guests} more from {join} to {leave} of the run",
                    n - guests
                ))
                .sources(n - guests)
                .guests(guests, join, leave)
            } else {
                plain(format!("{about}, {n} sources")).sources(n)
            }
        }
        Class::Wifi => return wifi(rng, &base, id, length),
        Class::Loss => {
            let h = rng.up_to(base.hops.len() as u32 - 1) as usize;
            let (line, what) = if rng.chance(0.5) {
                let p = round_sig(log_uniform(rng, 0.001, 0.05), 2);
                (format!("loss = {p}"), format!("Bernoulli loss {p}"))
            } else {
                let p = round_sig(log_uniform(rng, 0.002, 0.03), 2);
                let r = round_sig(rng.uniform(0.2, 0.7), 2);
                (
                    format!("loss = {{ model = \"gilbert-elliott\", p = {p}, r = {r} }}"),
                    format!("Gilbert–Elliott loss p = {p}, r = {r}"),
                )
            };
            let mut hops = base.hops();
            hops[h] = hops[h].clone().with(line);
            draft(id, &format!("{about}, {what} on hop {}", h + 1), secs, hops)
                .payload(base.payload)
        }
        Class::Trace => plain(format!(
            "{about}, the bottleneck a synthetic Mahimahi trace averaging its rate"
        )),
        Class::Schedule => {
            let f1 = round_sig(rng.uniform(0.35, 0.6), 2);
            let f2 = round_sig(f1 + rng.uniform(0.1, 0.3), 2);
            let drop = round_sig(log_uniform(rng, 0.1, 0.7), 2);
            let b = base.bottleneck_mbit();
            let mut hops = base.hops();
            let low = round_sig(b * drop, 2);
            hops[base.bottleneck] = hops[base.bottleneck].clone().steps(&[(f1, low), (f2, b)]);
            draft(
                id,
                &format!("{about}, the bottleneck at {low} Mbit/s from {f1} to {f2} of the run"),
                secs,
                hops,
            )
            .payload(base.payload)
        }
        Class::Jitter => {
            let h = rng.up_to(base.hops.len() as u32 - 1) as usize;
            let max = round_sig(log_uniform(rng, 0.5, 30.0), 2);
            let reorder = rng.chance(0.5);
            // The link's jitter moves a delay by ±max (never below zero): the hop's delay is
            // raised by max, so the jitter only adds to its propagation, as queues elsewhere
            // would (a draw of ±30 ms on a 0.5-ms hop would otherwise deliver half the updates
            // in no time at all).
            let (mbit, ms) = base.hops[h];
            let mut hops = base.hops();
            hops[h] = hop(mbit, round_sig(ms + max, 3))
                .queue(base.queue)
                .with(format!(
                    "jitter = {{ max = \"{max}ms\", reorder = {reorder} }}"
                ));
            let what = if reorder { "with" } else { "without" };
            draft(
                id,
                &format!(
                    "{about}, jitter of ±{max} ms on hop {}, {what} reordering",
                    h + 1
                ),
                secs,
                hops,
            )
            .payload(base.payload)
        }
    };
    if !base.affordable(base.bottleneck_mbit()) {
        return None;
    }
    let mut s = built.class(class.name()).build(length);
    if class == Class::Trace {
        let text = synthetic_trace(rng, base.bottleneck_mbit());
        let trace = Trace::parse(&text).ok()?;
        let nodes = chain_nodes(base.hops.len());
        let (from, to) = (&nodes[base.bottleneck], &nodes[base.bottleneck + 1]);
        // The trace carries the updates; the ACKs come back at the mean rate.
        let topo = &mut s.scenario.topology;
        let forward = topo
            .links
            .iter()
            .position(|l| topo.name(l.from) == from.as_str() && topo.name(l.to) == to.as_str())?;
        topo.links[forward].config.trace = Some(trace);
    }
    Some(s)
}

/// A [`Class::Wifi`] scenario: 1–48 stations (log-uniform) behind an 802.11g access point at 6,
/// 12, 24 or 54 Mbit/s, 20 × 20 m², shadowing σ uniform in 0–12 dB, then the base path's hops
/// (all at its bottleneck's rate, its propagation shared equally) to the monitor.
fn wifi(rng: &mut Rng, base: &Base, id: &str, length: Length) -> Option<SuiteScenario> {
    let stations = log_uniform(rng, 1.0, 48.0).round() as usize;
    let phy = pick(rng, &[6.0, 12.0, 24.0, 54.0]);
    let shadowing = round_sig(rng.uniform(0.0, 12.0), 2);
    let hops = base.hops.len();
    // What the medium carries at best: about 60 % of the PHY rate in large frames.
    let medium_mbit: f64 = 0.6 * phy;
    let capacity = medium_mbit.min(base.bottleneck_mbit());
    if !base.affordable(capacity) {
        return None;
    }
    let net = AccessNet {
        backhaul: Backhaul::Internet {
            hops,
            monitor: "monitor",
        },
        hop_delay_ms: round_sig(base.one_way_ms() / hops as f64, 2),
        side_m: 20.0,
        shadowing_db: shadowing,
        wifi_mbit: phy,
        p2p_mbit: base.bottleneck_mbit(),
        payload: base.payload,
        ap_per_station: false,
        whole_medium: false,
    };
    let secs = (base.secs() * length.scale()).round().max(3.0);
    let first_seed = 1;
    let mut scenario = access_scenario(
        &net,
        stations,
        ControllerKind::AcpPlus,
        secs as u64,
        first_seed,
    );
    scenario.config.warmup = std::time::Duration::from_secs_f64(secs / 3.0);
    Some(SuiteScenario {
        id: id.into(),
        about: format!(
            "{stations} station(s) behind 802.11g at {phy} Mbit/s (σ = {shadowing} dB), then {hops} hop(s) of {} Mbit/s, {} ms each, {}-byte updates",
            net.p2p_mbit, net.hop_delay_ms, base.payload
        ),
        class: Class::Wifi.name(),
        scenario,
        capacity_bps: Some(medium_mbit * 1e6),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_is_the_same_whatever_its_size_and_differs_between_seeds() {
        let small = draw(7, 3, Length::Quick);
        let large = draw(7, 6, Length::Quick);
        for (a, b) in small.iter().zip(&large) {
            assert_eq!((&a.id, &a.about), (&b.id, &b.about));
        }
        let other = draw(8, 3, Length::Quick);
        assert!(small.iter().zip(&other).any(|(a, b)| a.about != b.about));
    }

    #[test]
    fn draws_stay_within_the_documented_ranges() {
        for s in draw(3, 120, Length::Quick) {
            assert!((1..=8).contains(&s.hops()), "{}", s.id);
            let b = s.bottleneck_bps();
            assert!((0.1e6..=1e9).contains(&b), "{}: {b}", s.id);
            // Each hop's share is rounded to two digits (1 % over at most); a jitter path adds
            // up to 30 ms of jitter to one hop's propagation.
            let jitter = if s.class == "jitter" { 0.0303 } else { 0.0 };
            assert!(s.delay().as_secs_f64() <= 0.1515 + jitter, "{}", s.id);
            assert!((32..=1400).contains(&s.payload()), "{}", s.id);
            assert!((1..=48).contains(&s.sources()), "{}", s.id);
            let secs = s.scenario.config.duration.as_secs_f64();
            assert!((3.0..=MAX_SECS * Length::Quick.scale() + 3.0).contains(&secs));
            assert!(s.cap() * s.residents() as f64 * secs <= UPDATE_BUDGET * 1.01);
        }
    }

    #[test]
    fn every_class_is_drawn() {
        let drawn = draw(1, 100, Length::Quick);
        for c in CLASSES {
            assert!(drawn.iter().any(|s| s.class == c.name()), "{}", c.name());
        }
    }

    #[test]
    fn a_synthetic_trace_averages_its_rate() {
        let mut rng = Streams::new(5).stream("trace");
        let text = synthetic_trace(&mut rng, 12.0);
        let opportunities = text.lines().count() - 1;
        // 12 Mbit/s in 1500-byte opportunities over 10 s is 10 000; the Poisson count's standard
        // deviation is 100, the normalisation holds the slot factors to mean 1 exactly.
        let expected = 12e6 / (8.0 * 1500.0) * 10.0;
        assert!(
            (opportunities as f64 - expected).abs() < 400.0,
            "{opportunities}"
        );
        assert!(Trace::parse(&text).is_ok());
    }
}
