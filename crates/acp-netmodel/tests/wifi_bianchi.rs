//! The DCF medium against Bianchi's saturation model, and its EDCA against the AIFS-zone
//! extension of that model ([`edca_saturation`]).
//!
//! `n` stations always have a 1500-byte frame for the access point; nothing else is sent. The
//! frame model is a double with fixed airtimes (every frame received unless it collides), worked
//! out by hand for 802.11a OFDM in 20 MHz (802.11g's ERP-OFDM is the same without its 6 µs signal
//! extension):
//!
//! - data at 54 Mbit/s: 16 SERVICE bits + 8·(1500 + 28 bytes of MAC header and FCS) + 6 tail bits
//!   = 12 246 bits, at 216 bits per 4 µs symbol ⌈56.7⌉ = 57 symbols = 228 µs, plus 16 µs of
//!   preamble and 4 µs of SIGNAL: **248 µs**;
//! - its ACK (14 bytes) at 24 Mbit/s: 16 + 112 + 6 = 134 bits, 96 bits per symbol, 2 symbols =
//!   8 µs + 20 µs: **28 µs**;
//! - data at 12 Mbit/s: 12 246 bits at 48 per symbol, 256 symbols = 1024 µs + 20 µs: **1044 µs**;
//!   its ACK at 12 Mbit/s: 3 symbols, **32 µs**;
//! - slot 9 µs, SIFS 16 µs, DIFS 34 µs, ACK timeout SIFS + slot + 25 µs (aRxPHYStartDelay) =
//!   **50 µs**; CW 15–1023; 7 attempts.
//!
//! Bianchi's model here is the finite-retry one (Wu et al.), with the same 7 attempts as the
//! medium, and `Tc = data + ACK timeout + DIFS` as the medium charges a collision.

use std::time::Duration;

use acp_netmodel::wifi::bianchi::{self, Backoff, Exchange};
use acp_netmodel::wifi::edca_saturation::{self, frames_per_txop, Airtimes, Category};
use acp_netmodel::wifi::medium::{MacTiming, Medium, MediumConfig, Reception, StationCounters};
use acp_netmodel::wifi::phy::{edca_defaults, AcParams, AccessCategory, Standard};
use acp_netmodel::wifi::radio::Radio;
use acp_netmodel::wifi::FrameModel;
use acp_netmodel::{Parcel, QueueLimit, Streams, Time};

/// Every frame takes the same airtime and is received unless it collides.
#[derive(Debug, Clone, Copy)]
struct FixedAirtime {
    data: Duration,
    ack: Duration,
}

impl FrameModel for FixedAirtime {
    fn data_airtime(&self, _from: usize, _to: usize, _bytes: u32) -> Duration {
        self.data
    }
    fn ack_airtime(&self, _from: usize, _to: usize) -> Duration {
        self.ack
    }
    fn success_probability(&self, _from: usize, _to: usize, _bytes: u32) -> f64 {
        1.0
    }
}

const PAYLOAD: u32 = 1500;

/// [`FixedAirtime`] with every station receiving every other at the same −50 dBm over −94 dBm of
/// noise: a frame alone is always decoded (44 dB SNR), two overlapping frames never are (0 dB SINR,
/// under the 4 dB preamble detection threshold).
#[derive(Debug)]
struct EqualPowers {
    frames: FixedAirtime,
    radio: Radio,
}

impl FrameModel for EqualPowers {
    fn data_airtime(&self, from: usize, to: usize, bytes: u32) -> Duration {
        self.frames.data_airtime(from, to, bytes)
    }
    fn ack_airtime(&self, from: usize, to: usize) -> Duration {
        self.frames.ack_airtime(from, to)
    }
    fn success_probability(&self, _from: usize, _to: usize, _bytes: u32) -> f64 {
        1.0
    }
    fn radio(&self) -> Option<&Radio> {
        Some(&self.radio)
    }
}

const TIMING: MacTiming = MacTiming {
    slot: Duration::from_micros(9),
    sifs: Duration::from_micros(16),
    ack_timeout: Duration::from_micros(50),
    // Unused by the whole-medium reception these checks run.
    eifs_beyond_difs: Duration::from_micros(60),
};

const RATE_54: FixedAirtime = FixedAirtime {
    data: Duration::from_micros(248),
    ack: Duration::from_micros(28),
};

const RATE_12: FixedAirtime = FixedAirtime {
    data: Duration::from_micros(1044),
    ack: Duration::from_micros(32),
};

/// What one saturated run measured, after the warm-up.
#[derive(Debug)]
struct Measured {
    /// Payload bit/s.
    throughput: f64,
    /// Its standard error, from the means of 20 batches.
    throughput_se: f64,
    /// Collided attempts over attempts.
    p: f64,
    /// Its standard error, from the batches.
    p_se: f64,
    attempts: u64,
    successes: u64,
    drops: u64,
}

/// Mean and standard error of the mean of independent-enough batch values.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let k = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / k;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

/// Batches a saturated run is measured in.
const BATCHES: usize = 20;

/// Every station's counters (station `k` at index `k − 1`) at the start of each batch and at the
/// end of the last.
type Snapshot = Vec<StationCounters>;

/// Runs saturated stations 1..=`dscps.len()`, station `k` sending frames marked `dscps[k − 1]` to
/// the AP: 0.2 s of warm-up (every station starts with a zero counter, so the first access is a
/// collision of all), then `secs` seconds in [`BATCHES`] batches. Every frame delivered or dropped
/// is replaced at once, so no queue ever empties.
fn run_saturated(
    cfg: MediumConfig,
    model: Box<dyn FrameModel>,
    dscps: &[u8],
    seed: u64,
    secs: u64,
) -> Vec<Snapshot> {
    assert_eq!(cfg.validate(), Ok(()));
    let n = dscps.len();
    let mut m = Medium::<usize>::new(cfg, model, &Streams::new(seed), "bss", Time::ZERO);
    let parcel = |k: usize| Parcel {
        item: k,
        bytes: PAYLOAD,
        dscp: dscps[k - 1],
        source: k as u64,
    };
    for k in 1..=n {
        for _ in 0..2 {
            m.enqueue(Time::ZERO, k, 0, parcel(k)).expect("room");
        }
    }
    let from = Time::ZERO + Duration::from_millis(200);
    let batch = Duration::from_secs(secs) / BATCHES as u32;
    let snapshot = |m: &Medium<usize>| -> Snapshot {
        (1..=n)
            .map(|k| m.station_counters(k).copied().unwrap_or_default())
            .collect()
    };
    // Counter snapshots at the first event at or after each batch boundary.
    let mut marks = Vec::new();
    while let Some(t) = m.poll_timeout() {
        while marks.len() <= BATCHES && t >= from + batch * marks.len() as u32 {
            marks.push(snapshot(&m));
        }
        if marks.len() > BATCHES {
            break;
        }
        m.handle_timeout(t);
        while let Some(out) = m.poll_delivery(t) {
            let k = match out {
                Ok(d) => d.parcel.item,
                Err(dropped) => dropped.parcel.item,
            };
            m.enqueue(t, k, 0, parcel(k)).expect("room");
        }
    }
    marks
}

/// What the stations for which `chosen(k)` holds did over a run of `secs` seconds.
fn measure(marks: &[Snapshot], secs: u64, chosen: impl Fn(usize) -> bool) -> Measured {
    let batch = secs as f64 / BATCHES as f64;
    // Attempts, collisions, successes and drops of the chosen stations.
    let totals = |snap: &Snapshot| {
        snap.iter()
            .enumerate()
            .filter(|(i, _)| chosen(i + 1))
            .fold([0u64; 4], |acc, (_, c)| {
                [
                    acc[0] + c.attempts,
                    acc[1] + c.collisions,
                    acc[2] + c.successes,
                    acc[3] + c.drops,
                ]
            })
    };
    let sums: Vec<[u64; 4]> = marks.iter().map(totals).collect();
    let bits = 8.0 * f64::from(PAYLOAD);
    let delta = |w: &[[u64; 4]], i: usize| (w[1][i] - w[0][i]) as f64;
    let rates: Vec<f64> = sums
        .windows(2)
        .map(|w| delta(w, 2) * bits / batch)
        .collect();
    let ps: Vec<f64> = sums.windows(2).map(|w| delta(w, 1) / delta(w, 0)).collect();
    let (throughput, throughput_se) = mean_se(&rates);
    let (_, p_se) = mean_se(&ps);
    let (first, last) = (sums[0], sums[BATCHES]);
    let sum = |i: usize| last[i] - first[i];
    Measured {
        throughput,
        throughput_se,
        p: sum(1) as f64 / sum(0) as f64,
        p_se,
        attempts: sum(0),
        successes: sum(2),
        drops: sum(3),
    }
}

/// `n` saturated DCF stations: [`run_saturated`] measured over all of them.
fn saturate(n: usize, frames: FixedAirtime, seed: u64, secs: u64) -> Measured {
    saturate_with(n, frames, Reception::Collision, seed, secs)
}

/// [`saturate`] with the given reception ([`Reception::Sinr`] at [`EqualPowers`]).
fn saturate_with(
    n: usize,
    frames: FixedAirtime,
    reception: Reception,
    seed: u64,
    secs: u64,
) -> Measured {
    let cfg = MediumConfig {
        reception,
        ..MediumConfig::dcf(TIMING, n, QueueLimit::Packets(4))
    };
    let model: Box<dyn FrameModel> = match reception {
        Reception::Collision => Box::new(frames),
        Reception::Sinr => Box::new(EqualPowers {
            frames,
            radio: Radio::new(n + 1, -94.0, |_, _| -50.0),
        }),
    };
    let marks = run_saturated(cfg, model, &vec![0; n], seed, secs);
    measure(&marks, secs, |_| true)
}

fn bianchi_for(n: usize, frames: FixedAirtime) -> bianchi::Saturation {
    let ex = Exchange::basic_access(
        TIMING.slot,
        TIMING.sifs,
        TIMING.ack_timeout,
        frames.data,
        frames.ack,
        PAYLOAD,
    );
    bianchi::saturation(n, &Backoff::OFDM, &ex)
}

/// Tolerances, for 30 simulated seconds (50 000–76 000 successes, 100 000–140 000 attempts):
///
/// - throughput within 1.5 % of Bianchi's (the issue asks for 3 %). The batch-means standard
///   error is 0.05–0.2 % of the throughput; over six seeds (1000 + n … 1005 + n) the medium differed from Bianchi
///   by −0.24 … +0.78 % (largest at n = 20, where the decoupling approximation — independent
///   stations with a constant τ — is least exact). 1.5 % leaves four standard errors above the
///   worst difference seen.
/// - collision probability within 0.01 of Bianchi's `p`. Its batch standard error is about
///   0.001–0.002; over the same seeds the medium's `p` was 0.003 above to 0.007 below Bianchi's
///   (the model slightly overestimates `p` for n ≥ 10, a known property of the decoupling).
/// - frames dropped at the retry limit: Bianchi predicts `p^7` of the frames. The count is
///   Poisson-like (four standard errors: `4·√expected`) and `p`'s bias of up to 0.007 moves
///   `p^7` by up to `7·Δp/p` ≈ 10 %: the tolerance is the sum.
fn check(n: usize, frames: FixedAirtime) {
    let model = bianchi_for(n, frames);
    let got = saturate(n, frames, 1000 + n as u64, 30);
    let rel = got.throughput / model.throughput_bps - 1.0;
    let frames_done = (got.successes + got.drops) as f64;
    let expected_drops = model.drop_probability * frames_done;
    eprintln!(
        "n={n:>2}: S {:.3} Mbit/s (se {:.3}) vs Bianchi {:.3} ({:+.2} %); p {:.4} (se {:.4}) \
         vs {:.4}; {} attempts, {} successes, {} drops vs {:.0} expected",
        got.throughput / 1e6,
        got.throughput_se / 1e6,
        model.throughput_bps / 1e6,
        100.0 * rel,
        got.p,
        got.p_se,
        model.fixed_point.p,
        got.attempts,
        got.successes,
        got.drops,
        expected_drops,
    );
    assert!(rel.abs() < 0.015, "throughput off by {:+.2} %", 100.0 * rel);
    assert!(
        (got.p - model.fixed_point.p).abs() < 0.01,
        "collision probability {} vs {}",
        got.p,
        model.fixed_point.p
    );
    let drop_tol = 4.0 * expected_drops.sqrt() + 0.1 * expected_drops;
    assert!(
        (got.drops as f64 - expected_drops).abs() <= drop_tol.max(4.0),
        "{} drops, {expected_drops} expected",
        got.drops
    );
}

#[test]
fn five_stations() {
    check(5, RATE_54);
}

#[test]
fn ten_stations() {
    check(10, RATE_54);
}

#[test]
fn twenty_stations() {
    check(20, RATE_54);
}

#[test]
fn fifty_stations() {
    check(50, RATE_54);
}

#[test]
fn ten_stations_with_long_frames() {
    // 1044 µs frames at 12 Mbit/s: collisions cost four times more, p is unchanged.
    check(10, RATE_12);
}

#[test]
fn one_station_matches_the_exact_cycle() {
    // Alone, the model is exact: each frame costs DIFS + k·slot + data + SIFS + ACK with k
    // uniform in 0..=15, a mean cycle of 34 + 67.5 + 248 + 16 + 28 = 393.5 µs, so
    // 12 000 bit / 393.5 µs = 30.496 Mbit/s. The cycle's standard deviation is
    // 9 µs · √((16² − 1)/12) = 41.5 µs; over the ~76 000 cycles of 30 s the mean cycle has a
    // relative standard error of 41.5 / 393.5 / √76 000 = 0.038 %: 0.2 % is five of them.
    let model = bianchi_for(1, RATE_54);
    assert!((model.throughput_bps - 12_000.0 / 393.5e-6).abs() < 1e-3);
    let got = saturate(1, RATE_54, 1001, 30);
    let rel = got.throughput / model.throughput_bps - 1.0;
    eprintln!(
        "n= 1: S {:.3} Mbit/s (se {:.3}) vs {:.3} ({:+.3} %), {} attempts, p = {}",
        got.throughput / 1e6,
        got.throughput_se / 1e6,
        model.throughput_bps / 1e6,
        100.0 * rel,
        got.attempts,
        got.p,
    );
    assert!(rel.abs() < 0.002, "{:+.3} %", 100.0 * rel);
    assert_eq!(got.p, 0.0);
    assert_eq!(got.drops, 0);
}

#[test]
fn one_station_frame_times_are_exact() {
    // Every gap between two deliveries is the fixed exchange (data, SIFS, ACK, DIFS) plus a
    // whole number of slots in 0..=15 — exactly, in integer nanoseconds.
    let cfg = MediumConfig::dcf(TIMING, 1, QueueLimit::Packets(20_000));
    let mut m = Medium::<u32>::new(cfg, Box::new(RATE_54), &Streams::new(7), "bss", Time::ZERO);
    let n = 20_000u32;
    for i in 0..n {
        let p = Parcel {
            item: i,
            bytes: PAYLOAD,
            dscp: 0,
            source: 0,
        };
        m.enqueue(Time::ZERO, 1, 0, p).expect("room");
    }
    let mut at = Vec::new();
    while let Some(t) = m.poll_timeout() {
        m.handle_timeout(t);
        while let Some(out) = m.poll_delivery(t) {
            at.push(out.expect("no loss alone").at);
        }
    }
    assert_eq!(at.len(), n as usize);
    // The first goes at DIFS without backoff.
    assert_eq!(at[0], Time::from_micros(34 + 248));
    let fixed = (248 + 16 + 28 + 34) * 1000;
    let slot = 9 * 1000;
    let ks: Vec<u64> = at
        .windows(2)
        .map(|w| {
            let extra = w[1].nanos_since(w[0]) - fixed;
            assert_eq!(extra % slot, 0, "gap {:?}", w[1] - w[0]);
            extra / slot
        })
        .collect();
    assert!(ks.iter().all(|&k| k <= 15));
    // Uniform on 0..=15: mean 7.5, standard deviation 4.61; over 19 999 draws the standard
    // error is 0.033, and ±0.15 is 4.6 of them.
    let mean = ks.iter().sum::<u64>() as f64 / ks.len() as f64;
    assert!((mean - 7.5).abs() < 0.15, "{mean}");
    assert!((0..=15).all(|k| ks.contains(&k)));
}

#[test]
fn per_receiver_reception_at_equal_powers_lies_between_the_two_collision_costs() {
    // At equal received powers no overlapping frame is ever decoded, as with whole-medium
    // collisions, but the cost of a collision differs by station: its senders wait out the ACK
    // timeout (Bianchi's Tc = data + ACK timeout + DIFS), the stations that only heard it detect
    // no preamble (0 dB SINR) and wait DIFS after it (Tc = data + DIFS), and these are most of
    // the stations. Bianchi's model has one Tc, so the medium must land between the two
    // predictions (with the tolerance of `check`, 1.5 %). It lands at the upper one or a little
    // above it (+0.7 % at n = 10, +0.5 % at n = 50 with these seeds): right after a collision
    // its senders sit out the ACK timeout while the others already count, so fewer stations
    // contend and fewer frames collide than the model's constant τ assumes — the collision
    // probability comes out 0.010 (n = 10) and 0.005 (n = 50) below Bianchi's, hence 0.02 here
    // instead of `check`'s 0.01.
    for n in [10, 50] {
        let long = bianchi_for(n, RATE_54);
        let short = bianchi::saturation(
            n,
            &Backoff::OFDM,
            &Exchange::basic_access(
                TIMING.slot,
                TIMING.sifs,
                Duration::ZERO,
                RATE_54.data,
                RATE_54.ack,
                PAYLOAD,
            ),
        );
        let got = saturate_with(n, RATE_54, Reception::Sinr, 2000 + n as u64, 30);
        eprintln!(
            "n={n}: S {:.3} Mbit/s between {:.3} and {:.3}; p {:.4} vs {:.4}",
            got.throughput / 1e6,
            long.throughput_bps / 1e6,
            short.throughput_bps / 1e6,
            got.p,
            long.fixed_point.p
        );
        assert!(got.throughput > long.throughput_bps * 0.985, "n = {n}");
        assert!(got.throughput < short.throughput_bps * 1.015, "n = {n}");
        assert!(
            (got.p - long.fixed_point.p).abs() < 0.02,
            "n = {n}: p {}",
            got.p
        );
    }
}

/// An access category's DSCP (RFC 8325's mapping: CS1 → BK, DF → BE, AF41 → VI, EF → VO).
fn dscp_of(ac: AccessCategory) -> u8 {
    match ac {
        AccessCategory::Bk => 8,
        AccessCategory::Be => 0,
        AccessCategory::Vi => 34,
        AccessCategory::Vo => 46,
    }
}

/// The 802.11g default EDCA parameters, with or without their TXOP limits.
fn edca_params(txops: bool) -> [AcParams; 4] {
    edca_defaults(Standard::G).map(|p| AcParams {
        txop: if txops { p.txop } else { Duration::ZERO },
        ..p
    })
}

/// The model's categories for `mix` ((category, stations) pairs) under `params`.
fn model_mix(mix: &[(AccessCategory, usize)], params: &[AcParams; 4]) -> Vec<Category> {
    let airtimes = edca_airtimes();
    mix.iter()
        .map(|&(ac, entities)| {
            let p = params[ac.index()];
            Category {
                entities,
                aifsn: p.aifsn,
                backoff: Backoff {
                    cw_min: p.cw_min,
                    cw_max: p.cw_max,
                    attempts: Some(7),
                },
                frames_per_access: frames_per_txop(p.txop, &airtimes),
            }
        })
        .collect()
}

fn edca_airtimes() -> Airtimes {
    Airtimes {
        slot: TIMING.slot,
        sifs: TIMING.sifs,
        ack_timeout: TIMING.ack_timeout,
        data: RATE_54.data,
        ack: RATE_54.ack,
        payload_bytes: PAYLOAD,
    }
}

/// One category's measurement beside the model's prediction.
struct Compared {
    ac: AccessCategory,
    got: Measured,
    want: edca_saturation::CategoryResult,
}

/// Runs `mix` on the EDCA medium with `params` (each station with one category, so no
/// internal collisions) for 30 s, seed 3000 + stations, beside the AIFS-zone model.
fn compare_edca(mix: &[(AccessCategory, usize)], params: [AcParams; 4]) -> (Vec<Compared>, f64) {
    let categories = model_mix(mix, &params);
    let model =
        edca_saturation::saturation(&categories, &edca_airtimes()).expect("the model solves");
    let dscps: Vec<u8> = mix
        .iter()
        .flat_map(|&(ac, n)| std::iter::repeat_n(dscp_of(ac), n))
        .collect();
    let n = dscps.len();
    let cfg = MediumConfig::edca(TIMING, params, n, QueueLimit::Packets(4));
    let marks = run_saturated(cfg, Box::new(RATE_54), &dscps, 3000 + n as u64, 30);
    let mut first = 1;
    let compared = mix
        .iter()
        .zip(&model.categories)
        .zip(&categories)
        .map(|((&(ac, count), &want), cat)| {
            let range = first..first + count;
            first += count;
            let mut got = measure(&marks, 30, |k| range.contains(&k));
            // The medium counts every frame of a TXOP burst as an attempt, the model one
            // attempt per channel access: the k − 1 continuations of each successful access
            // never collide.
            let k = f64::from(cat.frames_per_access);
            let accesses = got.attempts as f64 - got.successes as f64 * (k - 1.0) / k;
            got.p *= got.attempts as f64 / accesses;
            eprintln!(
                "{ac:?} ×{count}: S {:.3} Mbit/s (se {:.3}) vs model {:.3} ({:+.2} %); \
                 p {:.4} (se {:.4}) vs {:.4}; {} successes, {} drops",
                got.throughput / 1e6,
                got.throughput_se / 1e6,
                want.throughput_bps / 1e6,
                100.0 * (got.throughput / want.throughput_bps - 1.0),
                got.p,
                got.p_se,
                want.p,
                got.successes,
                got.drops,
            );
            Compared { ac, got, want }
        })
        .collect();
    (compared, model.total_bps())
}

/// [`compare_edca`] with the 802.11g defaults, checked.
///
/// Tolerances (30 s, 20 batches; numbers from these seeds in `docs/SIMULATOR.md`):
///
/// - categories with the smallest AIFSN, where the model's assumptions hold best: throughput
///   within 3 % of the model's and collision probability within 0.03. Over seeds 3000, 4000 and
///   5000 + stations they landed within 2.1 % (batch standard errors 0.2–1 %) and 0.019 (video
///   beside voice's small window, 0.016–0.019 above the model on every seed: the same
///   short-window effect as below; 0.03 leaves four batch standard errors over it).
/// - a category with a longer AIFS gets *less* than the model predicts (4–62 % less here, while
///   carrying under 6 % of the total), for the reason
///   [`edca_gap_comes_from_short_windows_before_a_longer_aifs`] demonstrates: its throughput
///   must not exceed the model's by more than 4 batch standard errors, and its collision
///   probability must not fall more than 0.02 below the model's.
/// - all categories together within 3 % of the model's total.
fn check_edca(mix: &[(AccessCategory, usize)], txops: bool) {
    let params = edca_params(txops);
    let early = mix.iter().map(|(ac, _)| params[ac.index()].aifsn).min();
    let (compared, total) = compare_edca(mix, params);
    let got_total: f64 = compared.iter().map(|c| c.got.throughput).sum();
    for Compared { ac, got, want } in compared {
        let (s, p) = (got.throughput, got.p);
        if Some(params[ac.index()].aifsn) == early {
            assert!(
                (s / want.throughput_bps - 1.0).abs() < 0.03,
                "{ac:?}: {s} vs {want:?}"
            );
            assert!((p - want.p).abs() < 0.03, "{ac:?}: p {p} vs {want:?}");
        } else {
            assert!(
                s <= want.throughput_bps + 4.0 * got.throughput_se,
                "{ac:?}: {s} vs {want:?}"
            );
            assert!(p > want.p - 0.02, "{ac:?}: p {p} vs {want:?}");
        }
    }
    assert!(
        (got_total / total - 1.0).abs() < 0.03,
        "total {got_total} vs {total}"
    );
}

#[test]
fn edca_voice_and_best_effort() {
    check_edca(&[(AccessCategory::Vo, 5), (AccessCategory::Be, 5)], false);
}

#[test]
fn edca_voice_and_video_differ_by_windows_only() {
    check_edca(&[(AccessCategory::Vo, 5), (AccessCategory::Vi, 5)], false);
}

#[test]
fn edca_best_effort_and_background_differ_by_aifs_only() {
    check_edca(&[(AccessCategory::Be, 5), (AccessCategory::Bk, 5)], false);
}

#[test]
fn edca_all_four_categories() {
    use AccessCategory::*;
    check_edca(&[(Vo, 1), (Vi, 1), (Be, 2), (Bk, 2)], false);
}

#[test]
fn edca_video_and_best_effort_crowded() {
    check_edca(&[(AccessCategory::Vi, 10), (AccessCategory::Be, 10)], false);
}

#[test]
fn edca_with_txop_bursts() {
    check_edca(
        &[
            (AccessCategory::Vo, 3),
            (AccessCategory::Vi, 3),
            (AccessCategory::Be, 4),
        ],
        true,
    );
}

/// Why a category with a longer AIFS gets less than the model says. The model gives each
/// entity one transmission probability `τ` per slot, so the idle runs after a busy period are
/// geometric, and the late category's zone is reached as often as such runs are long enough.
/// Real counters are uniform in `[0, CW]`: with a small window an early station's chance to
/// transmit climbs slot after slot (`1/(CW+1)`, `1/CW`, … `1`), idle runs are shorter-tailed
/// than geometric, and the late zone is reached less often. If that is the cause, the gap must
/// shrink as the early category's window grows (its counters then look memoryless over the
/// few slots of AIFS difference) and vanish for a large one. Voice's window fixed at 15, 63
/// and 255 (AIFSN 2) against 5 background (AIFSN 7) stations: background's deficit was
/// −62 / −64 / −63 %, then −2.7 / −0.3 / −0.8 %, then +0.03 / −0.04 / −0.13 % (seeds 3010,
/// 4010, 5010); against 5 best-effort (AIFSN 3) stations at window 255, −0.2 / −0.1 %.
/// Tolerance where the gap should be gone: 4 batch standard errors plus 1 % (the DCF checks
/// found the model up to 0.8 % off where its assumptions hold); at window 63, 3 % instead of 1 %.
#[test]
fn edca_gap_comes_from_short_windows_before_a_longer_aifs() {
    use AccessCategory::*;
    let run = |cw: u32, late: AccessCategory, bias: f64| {
        let mut params = edca_params(false);
        params[Vo.index()].cw_min = cw;
        params[Vo.index()].cw_max = cw;
        let (c, _) = compare_edca(&[(Vo, 5), (late, 5)], params);
        let near = |x: &Compared, bias: f64| {
            (x.got.throughput - x.want.throughput_bps).abs()
                < 4.0 * x.got.throughput_se + bias * x.want.throughput_bps
        };
        assert!(near(&c[0], 0.01), "voice, window {cw}");
        (
            c[1].got.throughput / c[1].want.throughput_bps - 1.0,
            near(&c[1], bias),
        )
    };
    let (deficit, _) = run(15, Bk, 0.0);
    assert!(deficit < -0.3, "window 15: {deficit}");
    let (deficit, near) = run(63, Bk, 0.03);
    assert!(near, "window 63: {deficit}");
    for late in [Bk, Be] {
        let (deficit, near) = run(255, late, 0.01);
        assert!(near, "window 255, {late:?}: {deficit}");
    }
}
