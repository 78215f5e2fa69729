//! Minstrel-HT-like rate adaptation over the VHT MCSs of one channel width and guard interval.
//!
//! The candidates are MCS 0–9 with 1 to `max_streams` spatial streams (the combinations the
//! standard allows). Like Linux's `minstrel_ht`:
//!
//! - every A-MPDU reports how many of its MPDUs were sent at a rate and how many the BlockAck
//!   acknowledged ([`Minstrel::report`]);
//! - every [`MinstrelConfig::interval`] (100 ms) each rate's success ratio over the interval
//!   updates its exponentially weighted success probability `p ← w·p + (1 − w)·ratio`
//!   (`w` = [`MinstrelConfig::ewma`], 0.75), and its expected throughput becomes
//!   `p · 8·L·n / (T_oh + T_air(n))`: a reference A-MPDU of `n` = [`REFERENCE_MPDUS`] MPDUs of
//!   `L` = 1500-byte packets, with the fixed overhead `T_oh` of AIFS, the mean backoff, SIFS and
//!   the BlockAck; rates with `p` < 10 % count as zero (minstrel's rule);
//! - new data goes at the rate of highest expected throughput ([`Minstrel::choose`]);
//!   retransmissions at the most reliable one ([`Minstrel::robust`]: highest `p`, and among
//!   rates above 95 % the fastest), as minstrel's retry chain ends;
//! - every rate not yet tried is sampled first, one A-MPDU each, fastest first (minstrel's
//!   initial probing); after that one A-MPDU in [`MinstrelConfig::sample_every`] is a *sample*
//!   at a random rate that could beat the current best if it worked.
//!
//! Simplifications: one rate per A-MPDU (no multi-rate retry chain within a frame), and the
//! sample frame is a normal aggregate rather than minstrel's single unaggregated probe.

use std::time::Duration;

use super::ampdu::{mpdu_bytes, plan, Aggregation};
use super::blockack::block_ack_airtime;
use super::phy::{AcParams, Mcs, PhyConfig};
use crate::rng::Rng;
use crate::Time;

/// MPDUs of the reference A-MPDU by which rates are compared.
pub const REFERENCE_MPDUS: usize = 16;
/// Packet size of the reference A-MPDU (bytes).
const REFERENCE_PACKET: u32 = 1500;
/// Below this success probability a rate's expected throughput counts as zero.
const MIN_PROBABILITY: f64 = 0.1;
/// Above this, the most reliable rate is the fastest of them.
const RELIABLE: f64 = 0.95;

/// Rate adaptation settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinstrelConfig {
    /// Channel width (MHz): 20, 40, 80 or 160.
    pub width_mhz: u16,
    /// Spatial streams at most, 1–4.
    pub max_streams: u8,
    /// 400 ns guard interval.
    pub short_gi: bool,
    /// Statistics update interval (minstrel: 100 ms).
    pub interval: Duration,
    /// One A-MPDU in this many is a sample (minstrel: about one in ten).
    pub sample_every: u32,
    /// Weight of the old probability in the moving average (minstrel: 0.75).
    pub ewma: f64,
}

impl MinstrelConfig {
    /// Minstrel's defaults at `width_mhz` with up to `max_streams` streams, long guard interval.
    pub fn new(width_mhz: u16, max_streams: u8) -> Self {
        MinstrelConfig {
            width_mhz,
            max_streams,
            short_gi: false,
            interval: Duration::from_millis(100),
            sample_every: 10,
            ewma: 0.75,
        }
    }

    /// The candidate MCSs, slowest index first.
    pub fn candidates(&self) -> Vec<Mcs> {
        let mut out = Vec::new();
        for nss in 1..=self.max_streams {
            for index in 0..=9 {
                let mut mcs = Mcs::new(index, nss, self.width_mhz);
                mcs.short_gi = self.short_gi;
                if PhyConfig::ac(mcs).validate().is_ok() {
                    out.push(mcs);
                }
            }
        }
        out
    }

    /// Checks the settings; the message names what is out of range.
    pub fn validate(&self) -> Result<(), String> {
        PhyConfig::ac(Mcs::new(0, self.max_streams, self.width_mhz)).validate()?;
        if self.interval.is_zero() {
            return Err("the rate statistics interval must be positive".into());
        }
        if self.sample_every < 2 {
            return Err(format!(
                "sample every {} frames: at least every 2nd",
                self.sample_every
            ));
        }
        if !(0.0..1.0).contains(&self.ewma) {
            return Err(format!("EWMA weight {} must be in [0, 1)", self.ewma));
        }
        Ok(())
    }
}

/// A rate picked for an A-MPDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Position among the candidates (what [`Minstrel::report`] takes).
    pub index: usize,
    /// The MCS.
    pub mcs: Mcs,
    /// Whether the frame is a sample.
    pub sample: bool,
}

#[derive(Debug, Clone)]
struct Rate {
    mcs: Mcs,
    /// Throughput of the reference A-MPDU if every MPDU arrived (bit/s).
    ideal_bps: f64,
    attempts: u64,
    successes: u64,
    /// Smoothed success probability, once the rate has been tried.
    probability: Option<f64>,
}

impl Rate {
    fn expected_bps(&self) -> f64 {
        match self.probability {
            Some(p) if p >= MIN_PROBABILITY => p * self.ideal_bps,
            _ => 0.0,
        }
    }
}

/// The rate adaptation state of one link.
#[derive(Debug, Clone)]
pub struct Minstrel {
    config: MinstrelConfig,
    rates: Vec<Rate>,
    best: usize,
    robust: usize,
    frames: u64,
    next_update: Time,
    rng: Rng,
}

impl Minstrel {
    /// Rate adaptation from `now` for an EDCA entity with `access` parameters, drawing samples
    /// from `rng`; starts at the slowest rate.
    pub fn new(config: MinstrelConfig, access: AcParams, rng: Rng, now: Time) -> Self {
        let rates = config
            .candidates()
            .into_iter()
            .map(|mcs| Rate {
                mcs,
                ideal_bps: reference_throughput(&PhyConfig::ac(mcs), access),
                attempts: 0,
                successes: 0,
                probability: None,
            })
            .collect();
        Minstrel {
            config,
            rates,
            best: 0,
            robust: 0,
            frames: 0,
            next_update: now + config.interval,
            rng,
        }
    }

    /// The rate for the next A-MPDU of new data.
    pub fn choose(&mut self, now: Time) -> Choice {
        self.update(now);
        self.frames += 1;
        let sample = match self.untried() {
            Some(rate) => Some(rate),
            None if self.frames % u64::from(self.config.sample_every) == 0 => self.sample_rate(),
            None => None,
        };
        let index = sample.unwrap_or(self.best);
        Choice {
            index,
            mcs: self.rates[index].mcs,
            sample: sample.is_some(),
        }
    }

    /// The rate for an A-MPDU of retransmissions.
    pub fn robust(&mut self, now: Time) -> Choice {
        self.update(now);
        Choice {
            index: self.robust,
            mcs: self.rates[self.robust].mcs,
            sample: false,
        }
    }

    /// `attempted` MPDUs went at candidate `index` and `acked` of them were acknowledged.
    pub fn report(&mut self, index: usize, attempted: usize, acked: usize) {
        if let Some(r) = self.rates.get_mut(index) {
            r.attempts += attempted as u64;
            r.successes += acked.min(attempted) as u64;
        }
    }

    /// The current rate of highest expected throughput.
    pub fn best(&self) -> Mcs {
        self.rates[self.best].mcs
    }

    /// The smoothed success probability of `mcs`, once tried.
    pub fn probability(&self, mcs: Mcs) -> Option<f64> {
        self.rates
            .iter()
            .find(|r| r.mcs == mcs)
            .and_then(|r| r.probability)
    }

    fn update(&mut self, now: Time) {
        if now < self.next_update {
            return;
        }
        while self.next_update <= now {
            self.next_update += self.config.interval;
        }
        let w = self.config.ewma;
        for r in &mut self.rates {
            if r.attempts > 0 {
                let ratio = r.successes as f64 / r.attempts as f64;
                r.probability = Some(match r.probability {
                    Some(p) => w * p + (1.0 - w) * ratio,
                    None => ratio,
                });
                r.attempts = 0;
                r.successes = 0;
            }
        }
        let by = |key: &dyn Fn(&Rate) -> f64| {
            (0..self.rates.len())
                .max_by(|a, b| key(&self.rates[*a]).total_cmp(&key(&self.rates[*b])))
                .unwrap_or(0)
        };
        self.best = by(&|r| r.expected_bps());
        self.robust = by(&|r| match r.probability {
            Some(p) if p > RELIABLE => 1.0 + r.ideal_bps / 1e12,
            Some(p) => p,
            None => -1.0,
        });
    }

    /// The fastest rate never tried, if any.
    fn untried(&self) -> Option<usize> {
        (0..self.rates.len())
            .filter(|i| self.rates[*i].probability.is_none() && self.rates[*i].attempts == 0)
            .max_by(|a, b| {
                self.rates[*a]
                    .ideal_bps
                    .total_cmp(&self.rates[*b].ideal_bps)
            })
    }

    fn sample_rate(&mut self) -> Option<usize> {
        let current = self.rates[self.best].expected_bps();
        let better: Vec<usize> = (0..self.rates.len())
            .filter(|i| *i != self.best && self.rates[*i].ideal_bps > current)
            .collect();
        if better.is_empty() {
            return None;
        }
        let pick = self.rng.up_to(better.len() as u32 - 1) as usize;
        better.get(pick).copied()
    }
}

/// Throughput (bit/s) of back-to-back reference A-MPDUs at `phy`'s rate when every MPDU
/// arrives: [`REFERENCE_MPDUS`] packets of 1500 bytes per AIFS + mean backoff + A-MPDU + SIFS +
/// BlockAck.
pub fn reference_throughput(phy: &PhyConfig, access: AcParams) -> f64 {
    let mpdu = mpdu_bytes(phy.qos, &[REFERENCE_PACKET]);
    let limits = Aggregation::default();
    let frame = plan(phy, &limits, REFERENCE_MPDUS, &[mpdu; REFERENCE_MPDUS]);
    let backoff = phy.slot().as_secs_f64() * f64::from(access.cw_min) / 2.0;
    let fixed = phy.sifs().as_secs_f64() * 2.0
        + phy.slot().as_secs_f64() * f64::from(access.aifsn)
        + backoff
        + block_ack_airtime(phy).as_secs_f64();
    let bits = 8.0 * f64::from(REFERENCE_PACKET) * frame.mpdus as f64;
    bits / (fixed + frame.airtime.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{edca_defaults, Standard};

    fn be() -> AcParams {
        edca_defaults(Standard::Ac)[1]
    }

    #[test]
    fn candidates_skip_what_the_standard_forbids() {
        let c = MinstrelConfig::new(20, 2).candidates();
        assert_eq!(c.len(), 18); // MCS 9 is not valid at 20 MHz with 1 or 2 streams
        assert_eq!(MinstrelConfig::new(80, 2).candidates().len(), 20);
        assert!(MinstrelConfig::new(80, 5).validate().is_err());
        assert!(MinstrelConfig::new(60, 1).validate().is_err());
    }

    #[test]
    fn settles_on_the_rate_that_delivers_most() {
        // A made-up channel: MCS ≤ 5 always works, 6 and 7 half the time, faster never, with one
        // stream or two. The expected throughput of MCS 5 (64-QAM ⅔) beats half of MCS 7's
        // (⅚ vs ⅔ of the bits at p = 0.5), so the best is MCS 5 with two streams, and the most
        // reliable rate is the fastest of those that always work: the same.
        let config = MinstrelConfig::new(80, 2);
        let mut m = Minstrel::new(config, be(), Rng::new(7), Time::ZERO);
        let mut channel = Rng::new(8);
        let mut now = Time::ZERO;
        for _ in 0..20_000 {
            now += Duration::from_micros(500);
            let c = m.choose(now);
            let p = match c.mcs.index {
                0..=5 => 1.0,
                6 | 7 => 0.5,
                _ => 0.0,
            };
            let acked = (0..16).filter(|_| channel.chance(p)).count();
            m.report(c.index, 16, acked);
        }
        assert_eq!(m.best(), Mcs::new(5, 2, 80));
        assert_eq!(m.robust(now).mcs, Mcs::new(5, 2, 80));
        let p7 = m.probability(Mcs::new(7, 2, 80)).unwrap();
        assert!((p7 - 0.5).abs() < 0.2, "{p7}");
    }

    #[test]
    fn reference_throughput_grows_with_the_rate() {
        let t = |i| reference_throughput(&PhyConfig::ac(Mcs::new(i, 1, 80)), be());
        for i in 0..9 {
            assert!(t(i) < t(i + 1));
        }
        // Below the PHY rate (overheads), above half of it with 16 MPDUs.
        let phy = PhyConfig::ac(Mcs::new(9, 1, 80));
        assert!(t(9) < phy.data_rate_bps() && t(9) > 0.5 * phy.data_rate_bps());
    }
}
