//! The controllers' evaluation suite (`acp reproduce controllers`): every controller of a list
//! against the fixed-rate oracle on [`suite`]'s scenarios.
//!
//! The suite spans 1–6 hops, bottlenecks from 0.5 Mbit/s to 1 Gbit/s, 0–80 ms of one-way
//! propagation, 64–1400-byte updates, no cross traffic or CBR, Poisson and on-off cross traffic
//! up to 70 % of the bottleneck, deterministic and exponential service, 1, 4 and 16 sources
//! sharing a bottleneck, Bernoulli and Gilbert–Elliott loss, capacity schedules and sources
//! joining and leaving; it includes the demo's path, D/D/1 paths of `docs/ALGORITHMS.md` §8 and
//! Table I networks. Most scenarios are drafted as a chain of hops (`Draft`) written out as
//! scenario TOML; the D/D/1 and Table I ones come from [`dd1_scenario`] and [`table1_scenario`].
//!
//! Per scenario, [`Controllers`] finds the oracle, the best rate that every update flow sends at
//! (common random numbers: every rate sees the same seeds), with an oracle job over
//! [`SuiteScenario::oracle_rates`]; runs each controller on every ACP flow over the same seeds
//! and reports its mean age as a ratio to the oracle's, a row per scenario and controller.
//! [`summarise`] reduces the ratios per controller. Results do not depend on the thread count.

use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_netmodel::LinkConfig;

use serde::{Deserialize, Serialize};

use super::dd1::dd1_scenario;
use super::harness::{
    by_point, jain, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
};
use super::random_paths;
use super::table1::{table1_scenario, OtherTraffic, TABLE1};
use crate::flows::{FlowKind, FlowSpec};
use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::{self, mean_age, mean_ci95};

/// The controllers evaluated unless the caller says otherwise.
pub const DEFAULT_CONTROLLERS: &[ControllerKind] = &[
    ControllerKind::Seek,
    ControllerKind::AcpPlus,
    ControllerKind::Acp(0.25),
    ControllerKind::Lazy,
];

/// Seeds per scenario unless the caller says otherwise.
pub const DEFAULT_SEEDS: u64 = 3;

/// Rates of the oracle's coarse stage, in equal ratios from [`SuiteScenario::cap`] /
/// [`ORACLE_SPAN`] to the cap.
pub const ORACLE_RATES: usize = 26;

/// How far below the cap the oracle's coarse stage reaches (a factor).
pub const ORACLE_SPAN: f64 = 20.0;

/// The class of the hand-made scenarios.
pub const HAND_MADE: &str = "hand-made";

/// A controller is "worse than ACP+" on a scenario when its ratio exceeds ACP+'s by this factor.
pub const WORSE_THAN_ACP_PLUS: f64 = 1.02;

/// How long the suite's runs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// The scenarios' own durations (2–60 simulated seconds).
    Full,
    /// A quarter of them (at least 3 s): a smoke test.
    Quick,
}

impl Length {
    /// The factor it scales durations by.
    pub(super) fn scale(self) -> f64 {
        match self {
            Length::Full => 1.0,
            Length::Quick => 0.25,
        }
    }

    /// `secs` scaled, whole seconds, at least 3.
    fn whole_secs(self, secs: u64) -> u64 {
        ((secs as f64 * self.scale()).round() as u64).max(3)
    }
}

/// One scenario of the suite.
#[derive(Debug, Clone)]
pub struct SuiteScenario {
    /// Short id, e.g. `dd1-s5-p20`.
    pub id: String,
    /// One line on what it is.
    pub about: String,
    /// Its class: [`HAND_MADE`] for the suite's, a [`random_paths::Class`] for a drawn one.
    pub class: &'static str,
    /// The network and its flows, every ACP flow under ACP+ (runs replace the controller).
    pub scenario: Scenario,
    /// The bottleneck's rate where it is not the slowest link's (a WiFi access), bit/s.
    pub capacity_bps: Option<f64>,
}

impl SuiteScenario {
    fn acp_flows(&self) -> impl Iterator<Item = &FlowSpec> {
        self.scenario
            .flows
            .iter()
            .filter(|f| matches!(f.kind, FlowKind::Acp { .. }))
    }

    /// ACP sources in all.
    pub fn sources(&self) -> usize {
        self.acp_flows().count()
    }

    /// ACP sources active for the whole run (starting at 0, possibly staggered, never stopping):
    /// the fewest that share the path at any time.
    pub fn residents(&self) -> usize {
        self.acp_flows()
            .filter(|f| f.start.is_zero() && f.stop.is_none())
            .count()
            .max(1)
    }

    /// The links along the first ACP flow's path, source to monitor.
    pub fn links(&self) -> Vec<&LinkConfig> {
        let topo = &self.scenario.topology;
        let path = self.acp_flows().next().map_or(&[][..], |f| &f.path[..]);
        path.windows(2)
            .filter_map(|w| {
                topo.links.iter().find(|l| {
                    topo.name(l.from) == w[0].as_str() && topo.name(l.to) == w[1].as_str()
                })
            })
            .map(|l| &l.config)
            .collect()
    }

    /// Hops from source to monitor.
    pub fn hops(&self) -> usize {
        self.links().len()
    }

    /// The slowest link's rate at the start, or the bottleneck's [`capacity_bps`](Self::capacity_bps)
    /// (bit/s).
    pub fn bottleneck_bps(&self) -> f64 {
        self.links()
            .iter()
            .map(|l| l.rate_bps)
            .chain(self.capacity_bps)
            .fold(f64::INFINITY, f64::min)
    }

    /// One-way propagation, source to monitor.
    pub fn delay(&self) -> Duration {
        self.links().iter().map(|l| l.delay).sum()
    }

    /// Update payload (bytes).
    pub fn payload(&self) -> u32 {
        self.acp_flows()
            .find_map(|f| match f.kind {
                FlowKind::Acp { payload, .. } => Some(payload),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Bits of one update on a link: payload, ACP header, 28 bytes of UDP/IPv4.
    pub fn update_bits(&self) -> f64 {
        8.0 * f64::from(self.payload() + acp_core::wire::HEADER_LEN as u32 + 28)
    }

    /// The highest rate the oracle tries (updates/s per source): the bottleneck's rate in updates
    /// shared by the resident sources.
    pub fn cap(&self) -> f64 {
        self.bottleneck_bps() / self.update_bits() / self.residents() as f64
    }

    /// The oracle's coarse rates: [`ORACLE_RATES`] in equal ratios from cap / [`ORACLE_SPAN`]
    /// to the cap, so that optima far below the cap (heavy cross traffic, capacity drops) are
    /// found as precisely as those near it.
    pub fn oracle_rates(&self) -> Vec<f64> {
        let cap = self.cap();
        sweep::geometric(cap / ORACLE_SPAN, cap, ORACLE_RATES)
    }

    /// The scenario with `controller` on every ACP flow and `seed`.
    pub fn run_with(&self, controller: ControllerKind, seed: u64) -> Scenario {
        let mut s = self.scenario.with_controller(controller);
        s.config.seed = seed;
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Drafting scenarios as chains of hops

/// One hop of a drafted chain (both directions alike; ACKs come back through it).
#[derive(Debug, Clone)]
pub(super) struct Hop {
    mbit: f64,
    ms: f64,
    queue: u32,
    /// Further TOML lines of the link (service, loss, jitter).
    extra: Vec<String>,
    /// Capacity steps: (fraction of the run, Mbit/s).
    steps: Vec<(f64, f64)>,
}

/// A hop of `mbit` Mbit/s and `ms` of propagation, a 100-packet queue.
pub(super) fn hop(mbit: f64, ms: f64) -> Hop {
    Hop {
        mbit,
        ms,
        queue: 100,
        extra: Vec::new(),
        steps: Vec::new(),
    }
}

impl Hop {
    /// With a queue of `packets`.
    pub(super) fn queue(mut self, packets: u32) -> Hop {
        self.queue = packets;
        self
    }

    /// With a further TOML line.
    pub(super) fn with(mut self, line: impl Into<String>) -> Hop {
        self.extra.push(line.into());
        self
    }

    /// With exponential service.
    pub(super) fn exponential(self) -> Hop {
        self.with("service = \"exponential\"")
    }

    /// With capacity steps: (fraction of the run, Mbit/s).
    pub(super) fn steps(mut self, steps: &[(f64, f64)]) -> Hop {
        self.steps = steps.to_vec();
        self
    }
}

/// The arrival process of drafted cross traffic.
#[derive(Debug, Clone, Copy)]
pub(super) enum Traffic {
    Cbr,
    Poisson,
    /// Mean on and off periods (s).
    OnOff(f64, f64),
}

/// Cross traffic over one hop of a draft.
#[derive(Debug, Clone, Copy)]
struct Cross {
    /// The hop (`None`: the bottleneck).
    hop: Option<usize>,
    traffic: Traffic,
    /// Its rate as a share of the hop's.
    share: f64,
    /// Packet bytes.
    size: u32,
}

/// The nodes of a chain of `hops` hops: `source`, `r1`, …, `monitor`.
pub(super) fn chain_nodes(hops: usize) -> Vec<String> {
    (0..=hops)
        .map(|i| match i {
            0 => "source".to_string(),
            i if i == hops => "monitor".to_string(),
            i => format!("r{i}"),
        })
        .collect()
}

/// A scenario as a chain of hops `source → r1 → … → monitor`, written out as TOML.
#[derive(Debug, Clone)]
pub(super) struct Draft {
    id: String,
    about: String,
    class: &'static str,
    secs: f64,
    hops: Vec<Hop>,
    payload: u32,
    sources: u32,
    /// Sources joining and leaving: (count, join and leave as fractions of the run).
    guests: Option<(u32, f64, f64)>,
    cross: Vec<Cross>,
}

/// A draft of `secs` simulated seconds over `hops`: one source of 100-byte updates.
pub(super) fn draft(id: &str, about: &str, secs: f64, hops: Vec<Hop>) -> Draft {
    Draft {
        id: id.into(),
        about: about.into(),
        class: HAND_MADE,
        secs,
        hops,
        payload: 100,
        sources: 1,
        guests: None,
        cross: Vec::new(),
    }
}

/// `mbit` as a TOML rate, in whole kbit/s.
fn kbit(mbit: f64) -> String {
    format!("\"{}kbit\"", (mbit * 1e3).round() as u64)
}

impl Draft {
    /// Of class `class`.
    pub(super) fn class(mut self, class: &'static str) -> Draft {
        self.class = class;
        self
    }

    /// Updates of `bytes`.
    pub(super) fn payload(mut self, bytes: u32) -> Draft {
        self.payload = bytes;
        self
    }

    /// `n` sources for the whole run.
    pub(super) fn sources(mut self, n: u32) -> Draft {
        self.sources = n;
        self
    }

    /// `n` more sources from `join` to `leave` (fractions of the run).
    pub(super) fn guests(mut self, n: u32, join: f64, leave: f64) -> Draft {
        self.guests = Some((n, join, leave));
        self
    }

    /// Cross traffic over the bottleneck at `share` of its rate, packets of `size` bytes.
    pub(super) fn cross(self, traffic: Traffic, share: f64, size: u32) -> Draft {
        self.cross_at(None, traffic, share, size)
    }

    /// Cross traffic over hop `hop` (`None`: the bottleneck).
    pub(super) fn cross_at(
        mut self,
        hop: Option<usize>,
        traffic: Traffic,
        share: f64,
        size: u32,
    ) -> Draft {
        self.cross.push(Cross {
            hop,
            traffic,
            share,
            size,
        });
        self
    }

    /// The index of the slowest hop (the first of equals).
    fn bottleneck(&self) -> usize {
        (0..self.hops.len())
            .min_by(|&a, &b| self.hops[a].mbit.total_cmp(&self.hops[b].mbit))
            .unwrap_or(0)
    }

    /// The scenario file, durations scaled by `scale`.
    fn toml(&self, scale: f64) -> String {
        let secs = self.secs * scale;
        let at = |fraction: f64| format!("\"{}ms\"", (fraction * secs * 1e3).round());
        let nodes = chain_nodes(self.hops.len());
        let mut t = format!(
            "format = 2\nname = \"{}\"\nduration = {}\nwarmup = {}\n",
            self.id,
            at(1.0),
            at(1.0 / 3.0)
        );
        for (i, h) in self.hops.iter().enumerate() {
            t += &format!(
                "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = {}\ndelay = \"{}ms\"\nqueue = {}\n",
                nodes[i],
                nodes[i + 1],
                kbit(h.mbit),
                h.ms,
                h.queue
            );
            for line in &h.extra {
                t += line;
                t += "\n";
            }
            if !h.steps.is_empty() {
                let steps: Vec<String> = h
                    .steps
                    .iter()
                    .map(|&(f, mbit)| format!("{{ at = {}, rate = {} }}", at(f), kbit(mbit)))
                    .collect();
                t += &format!("schedule = {{ step = [{}] }}\n", steps.join(", "));
            }
        }
        let path = format!("{nodes:?}");
        let acp = |name: &str, count: u32, more: &str| {
            format!(
                "[[flow]]\nname = \"{name}\"\ntype = \"acp\"\ncount = {count}\ncontroller = \"acp+\"\npayload = {}\npath = {path}\n{more}",
                self.payload
            )
        };
        t += &acp("updates", self.sources, "");
        if let Some((n, join, leave)) = self.guests {
            t += &acp(
                "guest",
                n,
                &format!("start = {}\nstop = {}\n", at(join), at(leave)),
            );
        }
        for (k, c) in self.cross.iter().enumerate() {
            let b = c.hop.unwrap_or_else(|| self.bottleneck());
            let process = match c.traffic {
                Traffic::Cbr => "\"cbr\"".to_string(),
                Traffic::Poisson => "\"poisson\"".to_string(),
                Traffic::OnOff(on, off) => format!(
                    "{{ onoff = {{ on = \"{}ms\", off = \"{}ms\" }} }}",
                    (on * scale * 1e3).round(),
                    (off * scale * 1e3).round()
                ),
            };
            // The first keeps the name (and so the random stream) of the suite's only one.
            let name = match k {
                0 => "cross".to_string(),
                k => format!("cross{k}"),
            };
            t += &format!(
                "[[flow]]\nname = \"{name}\"\ntype = \"cross\"\nprocess = {process}\nrate = {}\nsize = {}\npath = [\"{}\", \"{}\"]\n",
                kbit(c.share * self.hops[b].mbit),
                c.size,
                nodes[b],
                nodes[b + 1]
            );
        }
        t
    }

    /// The scenario at `length`.
    pub(super) fn build(&self, length: Length) -> SuiteScenario {
        let text = self.toml(length.scale());
        match Scenario::parse(&text) {
            Ok(scenario) => SuiteScenario {
                id: self.id.clone(),
                about: self.about.clone(),
                class: self.class,
                scenario,
                capacity_bps: None,
            },
            Err(e) => unreachable!("suite scenario {} is well formed: {e}\n{text}", self.id),
        }
    }
}

/// The demo's path (`scenarios/bottleneck.toml`): 100 Mbit/s, 1 ms, then 2 Mbit/s, 20 ms, a
/// 50-packet queue.
fn demo_path() -> Vec<Hop> {
    vec![hop(100.0, 1.0), hop(2.0, 20.0).queue(50)]
}

/// An access link of 100 Mbit/s and 1 ms, then `last`.
fn behind_access(last: Hop) -> Vec<Hop> {
    vec![hop(100.0, 1.0), last]
}

/// The drafted scenarios (all but the D/D/1 and Table I ones).
fn drafts() -> Vec<Draft> {
    use Traffic::{Cbr, OnOff, Poisson};
    vec![
        // One hop.
        draft("mm1-2mbit", "one 2 Mbit/s hop with exponential service (M/M/1-like), 10 ms", 30.0,
            vec![hop(2.0, 10.0).queue(1000).exponential()]),
        draft("mm1-500kbit-64b", "one 0.5 Mbit/s exponential hop, 40 ms, 64-byte updates", 60.0,
            vec![hop(0.5, 40.0).exponential()]).payload(64),
        draft("lan-10mbit-0ms", "one 10 Mbit/s hop without propagation delay, 500-byte updates", 20.0,
            vec![hop(10.0, 0.0)]).payload(500),
        draft("sat-1mbit-80ms", "one 1 Mbit/s hop with 80 ms of propagation, 1000-byte updates", 60.0,
            vec![hop(1.0, 80.0).queue(50)]).payload(1000),
        draft("gbit-1400b", "one 1 Gbit/s hop, 1 ms, 1400-byte updates, 1000-packet queue", 6.0,
            vec![hop(1000.0, 1.0).queue(1000)]).payload(1400),
        // The demo's path.
        draft("demo", "the demo's path: 100 Mbit/s 1 ms, then 2 Mbit/s 20 ms, 50-packet queue", 30.0,
            demo_path()),
        draft("demo-onoff25", "demo path, on-off cross traffic of 0.5 Mbit/s (25 %), 10 s on/off", 60.0,
            demo_path()).cross(OnOff(10.0, 10.0), 0.25, 1200),
        draft("demo-onoff70", "demo path, on-off cross traffic of 1.4 Mbit/s (70 %), 5 s on/off", 60.0,
            demo_path()).cross(OnOff(5.0, 5.0), 0.7, 1200),
        draft("demo-share4", "demo path shared by 4 sources", 30.0, demo_path()).sources(4),
        draft("demo-bern1", "demo path, 1 % Bernoulli loss on the bottleneck (both ways)", 30.0,
            vec![hop(100.0, 1.0), hop(2.0, 20.0).queue(50).with("loss = 0.01")]),
        draft("demo-ge", "demo path, Gilbert–Elliott loss p = 0.01, r = 0.3 (3.2 %, bursts of 3.3)", 30.0,
            vec![hop(100.0, 1.0), hop(2.0, 20.0).queue(50)
                .with("loss = { model = \"gilbert-elliott\", p = 0.01, r = 0.3 }")]),
        draft("demo-halve", "demo path whose bottleneck halves to 1 Mbit/s from 40 % to 70 % of the run", 60.0,
            vec![hop(100.0, 1.0), hop(2.0, 20.0).queue(50).steps(&[(0.4, 1.0), (0.7, 2.0)])]),
        // Two hops, other rates and delays.
        draft("wan-5mbit-80ms", "100 Mbit/s access, then 5 Mbit/s with 79 ms (80 ms one way), 500-byte updates", 60.0,
            behind_access(hop(5.0, 79.0))).payload(500),
        draft("sched-10to1mbit", "10 Mbit/s bottleneck dropping to 1 Mbit/s from 45 % to 75 % of the run", 40.0,
            behind_access(hop(10.0, 10.0).steps(&[(0.45, 1.0), (0.75, 10.0)]))).payload(200),
        draft("gbit-cbr50", "10 Gbit/s access, 1 Gbit/s 2 ms bottleneck with 500 Mbit/s CBR cross traffic", 6.0,
            vec![hop(10_000.0, 0.1).queue(1000), hop(1000.0, 2.0).queue(1000)])
            .payload(1400).cross(Cbr, 0.5, 1400),
        draft("100mbit-poisson70", "1 Gbit/s access, 100 Mbit/s 5 ms bottleneck, 70 Mbit/s Poisson cross traffic", 10.0,
            vec![hop(1000.0, 0.5), hop(100.0, 5.0).queue(300)]).payload(1400).cross(Poisson, 0.7, 1400),
        draft("10mbit-cbr30", "100 Mbit/s access, 10 Mbit/s 10 ms, 3 Mbit/s CBR cross traffic, 200-byte updates", 20.0,
            behind_access(hop(10.0, 10.0))).payload(200).cross(Cbr, 0.3, 1000),
        draft("10mbit-poisson50", "100 Mbit/s access, 10 Mbit/s 10 ms, 5 Mbit/s Poisson cross traffic, 200-byte updates", 20.0,
            behind_access(hop(10.0, 10.0))).payload(200).cross(Poisson, 0.5, 1000),
        draft("500kbit-cbr70", "10 Mbit/s access, 0.5 Mbit/s 38 ms bottleneck, 0.35 Mbit/s CBR, 64-byte updates", 60.0,
            vec![hop(10.0, 2.0), hop(0.5, 38.0)]).payload(64).cross(Cbr, 0.7, 500),
        // Sources sharing a bottleneck, joining and leaving.
        draft("share16-10mbit", "16 sources behind a 10 Mbit/s 10 ms bottleneck, 200-byte updates", 30.0,
            behind_access(hop(10.0, 10.0))).payload(200).sources(16),
        draft("share16-1mbit-64b", "16 sources behind a 1 Mbit/s 20 ms bottleneck, 64-byte updates", 60.0,
            vec![hop(10.0, 1.0), hop(1.0, 20.0)]).payload(64).sources(16),
        draft("share4-exp-100mbit", "4 sources, 100 Mbit/s 5 ms bottleneck with exponential service, 1400-byte updates", 10.0,
            vec![hop(1000.0, 0.5), hop(100.0, 5.0).exponential()]).payload(1400).sources(4),
        draft("share4-onoff50", "4 sources, 5 Mbit/s 10 ms bottleneck, on-off cross traffic of 2.5 Mbit/s, 5 s on/off", 60.0,
            behind_access(hop(5.0, 10.0))).payload(500).sources(4).cross(OnOff(5.0, 5.0), 0.5, 1200),
        draft("churn4-5mbit", "2 sources on 5 Mbit/s 10 ms, 2 more join at 45 % and leave at 80 % of the run", 60.0,
            behind_access(hop(5.0, 10.0))).payload(500).sources(2).guests(2, 0.45, 0.8),
        draft("churn16-10mbit", "8 sources on 10 Mbit/s 10 ms, 8 more join at 40 % and leave at 75 % of the run", 40.0,
            behind_access(hop(10.0, 10.0))).payload(200).sources(8).guests(8, 0.4, 0.75),
        // Longer chains.
        draft("tandem3-exp-1mbit", "three 1 Mbit/s hops with exponential service, 5 ms each, 200-byte updates", 60.0,
            vec![hop(1.0, 5.0).exponential(), hop(1.0, 5.0).exponential(), hop(1.0, 5.0).exponential()])
            .payload(200),
        draft("chain4-mixed", "100, 10, 50, 100 Mbit/s, 5 ms each, 3 Mbit/s Poisson on the 10 Mbit/s hop, 1000-byte updates", 20.0,
            vec![hop(100.0, 5.0), hop(10.0, 5.0), hop(50.0, 5.0), hop(100.0, 5.0)])
            .payload(1000).cross(Poisson, 0.3, 1000),
        draft("chain5-4mbit-loss", "five 4 Mbit/s hops, 3 ms each, 1 % Bernoulli loss on the third, 300-byte updates", 30.0,
            vec![hop(4.0, 3.0), hop(4.0, 3.0), hop(4.0, 3.0).with("loss = 0.01"), hop(4.0, 3.0), hop(4.0, 3.0)])
            .payload(300),
        draft("chain6-1mbit", "six 1 Mbit/s hops, 2 ms each, 1024-byte updates (Net A without other traffic)", 60.0,
            vec![hop(1.0, 2.0); 6]).payload(1024),
    ]
}

/// The D/D/1 paths of `docs/ALGORITHMS.md` §8 in the suite: (id, service ms, propagation ms).
const DD1: [(&str, u64, u64); 5] = [
    ("dd1-s1-p5", 1, 5),
    ("dd1-s1-p10", 1, 10),
    ("dd1-s2-p5", 2, 5),
    ("dd1-s5-p2", 5, 2),
    ("dd1-s5-p20", 5, 20),
];

/// Simulated seconds of the D/D/1 and Table I runs.
const MODEL_SECS: u64 = 60;

/// The Table I networks in the suite: (id, index into [`TABLE1`]).
const TABLE1_NETS: [(&str, usize); 2] = [("table1-netb", 1), ("table1-netd", 3)];

fn dd1_entries(length: Length) -> impl Iterator<Item = SuiteScenario> {
    DD1.iter().map(move |&(id, s, p)| SuiteScenario {
        id: id.into(),
        about:
            "D/D/1 path of ALGORITHMS.md §8: service S ms, propagation P ms each way (optimum 1/S)"
                .into(),
        class: HAND_MADE,
        capacity_bps: None,
        scenario: dd1_scenario(
            Duration::from_millis(s),
            Duration::from_millis(p),
            ControllerKind::AcpPlus,
            length.whole_secs(MODEL_SECS),
        ),
    })
}

fn table1_entries(length: Length) -> impl Iterator<Item = SuiteScenario> {
    TABLE1_NETS.iter().map(move |&(id, k)| SuiteScenario {
        id: id.into(),
        about: "Table I network: six hops, 2 ms each, 0.2 Mbit/s Poisson on every hop, 1024-byte updates".into(),
        class: HAND_MADE,
        capacity_bps: None,
        scenario: table1_scenario(
            &TABLE1[k].1,
            OtherTraffic::PerHop,
            ControllerKind::AcpPlus,
            length.whole_secs(MODEL_SECS),
            1,
        ),
    })
}

/// The suite: every scenario, ACP flows under ACP+.
pub fn suite(length: Length) -> Vec<SuiteScenario> {
    dd1_entries(length)
        .chain(drafts().iter().map(|d| d.build(length)))
        .chain(table1_entries(length))
        .collect()
}

/// The scenarios of `suite` with the given ids, in the order given, or the first unknown id.
pub fn select<'a>(
    suite: &'a [SuiteScenario],
    ids: &[String],
) -> Result<Vec<&'a SuiteScenario>, String> {
    ids.iter()
        .map(|id| {
            suite
                .iter()
                .find(|s| s.id == id.as_str())
                .ok_or_else(|| id.clone())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct RunFigures {
    age: f64,
    rate: f64,
    jain: f64,
}

fn figures(r: &SimResult) -> RunFigures {
    let acp: Vec<_> = r.flows.iter().filter(|f| f.kind == "acp").collect();
    let ages: Vec<f64> = acp.iter().map(|f| f.age.unwrap_or(f64::INFINITY)).collect();
    let rate = acp.iter().map(|f| f.send_rate).sum::<f64>() / acp.len().max(1) as f64;
    RunFigures {
        age: mean_age(r),
        rate,
        jain: jain(&ages),
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    sum / n.max(1) as f64
}

/// What a job yields: a controller's run, or a scenario's oracle (rate, age, CI).
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// A run.
    Run((f64, f64, f64)),
    /// The oracle: its rate (updates/s), age and CI over the seeds (s).
    Oracle(f64, f64, f64),
}

/// One controller on one scenario, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The scenario's id.
    pub id: String,
    /// Its class ([`HAND_MADE`], or a random path's class).
    pub class: String,
    /// Its description.
    pub about: String,
    /// ACP sources in all.
    pub sources: usize,
    /// The oracle's rate of every update flow (updates/s).
    pub oracle_rate_hz: f64,
    /// The oracle's mean age over the update flows and the seeds (ms).
    pub oracle_age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub oracle_age_ms_ci95: f64,
    /// The controller's label (`acp+`, `acp(κ=0.25)`, …).
    pub controller: String,
    /// Seeds run.
    pub seeds: usize,
    /// Mean age over the update flows and the seeds (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: f64,
    /// The age over the oracle's.
    pub age_ratio: f64,
    /// Updates sent per second per source, mean over the sources and the seeds.
    pub rate_hz: f64,
    /// Jain's fairness index of the sources' ages, mean over the seeds (multi-source
    /// scenarios).
    pub jain: Option<f64>,
}

/// One controller's ratios over the suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The controller's label.
    pub controller: String,
    /// Scenarios with a ratio.
    pub scenarios: usize,
    /// Median ratio.
    pub median: f64,
    /// Geometric mean of the ratios.
    pub geomean: f64,
    /// 95th percentile of the ratios (linear between order statistics).
    pub p95: f64,
    /// The largest ratio …
    pub worst: f64,
    /// … and the scenario where it is.
    pub worst_id: String,
    /// Scenarios where its ratio exceeds ACP+'s by more than 2 % (`None` without ACP+).
    pub worse_than_acp_plus: Option<usize>,
    /// Scenarios where its ratio exceeds both ACP+'s and Lazy's by more than 2 % (`None`
    /// without both).
    pub worse_than_both: Option<usize>,
}

/// The `q`-quantile of `xs`, linear between order statistics (NaN if empty).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let at = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

/// The median of `xs` (NaN if empty).
fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// The geometric mean of `xs`.
fn geomean(xs: &[f64]) -> f64 {
    mean(xs.iter().map(|r| r.ln())).exp()
}

/// Per controller of `labels`: median, geometric mean and worst ratio and how often it is worse
/// than ACP+, over the scenarios of `rows` it ran on.
pub fn summarise(rows: &[Row], labels: &[String]) -> Vec<Summary> {
    let ratio = |id: &str, c: &str| {
        rows.iter()
            .find(|r| r.id == id && r.controller == c)
            .map(|r| r.age_ratio)
    };
    let plus = ControllerKind::AcpPlus.to_string();
    let lazy = ControllerKind::Lazy.to_string();
    let has_plus = labels.contains(&plus);
    let has_both = has_plus && labels.contains(&lazy);
    labels
        .iter()
        .map(|c| {
            let mine: Vec<&Row> = rows.iter().filter(|r| &r.controller == c).collect();
            let ratios: Vec<f64> = mine.iter().map(|r| r.age_ratio).collect();
            let (worst_id, worst) = mine
                .iter()
                .map(|r| (r.id.as_str(), r.age_ratio))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or(("", f64::NAN));
            let worse = has_plus.then(|| {
                mine.iter()
                    .filter(|r| {
                        ratio(&r.id, &plus)
                            .is_some_and(|theirs| r.age_ratio > theirs * WORSE_THAN_ACP_PLUS)
                    })
                    .count()
            });
            let worse_than_both = has_both.then(|| {
                mine.iter()
                    .filter(|r| {
                        // Worse than both: worse than the worse of the two.
                        let worse_of_two = ratio(&r.id, &plus)
                            .zip(ratio(&r.id, &lazy))
                            .map(|(a, b)| a.max(b));
                        worse_of_two.is_some_and(|w| r.age_ratio > w * WORSE_THAN_ACP_PLUS)
                    })
                    .count()
            });
            Summary {
                controller: c.clone(),
                scenarios: ratios.len(),
                median: median(&ratios),
                geomean: geomean(&ratios),
                p95: quantile(&ratios, 0.95),
                worst,
                worst_id: worst_id.into(),
                worse_than_acp_plus: worse,
                worse_than_both,
            }
        })
        .collect()
}

/// Per class of `rows` (in the order of first appearance): its scenarios and each controller of
/// `labels`'s geometric mean ratio over them.
pub fn by_class(rows: &[Row], labels: &[String]) -> Vec<(String, usize, Vec<f64>)> {
    let mut classes: Vec<&str> = Vec::new();
    for r in rows {
        if !classes.contains(&r.class.as_str()) {
            classes.push(&r.class);
        }
    }
    classes
        .into_iter()
        .map(|class| {
            let of = |c: &String| -> Vec<f64> {
                rows.iter()
                    .filter(|r| r.class == class && &r.controller == c)
                    .map(|r| r.age_ratio)
                    .collect()
            };
            let n = labels.first().map_or(0, |c| of(c).len());
            (
                class.to_string(),
                n,
                labels.iter().map(|c| geomean(&of(c))).collect(),
            )
        })
        .collect()
}

/// The reproduction.
pub struct Controllers;

impl Controllers {
    /// The suite's length that `o` asks for.
    fn length(o: &Options) -> Length {
        if o.quick {
            Length::Quick
        } else {
            Length::Full
        }
    }

    /// Every scenario `o` may choose from: its random paths, or the hand-made suite.
    fn all(o: &Options) -> Vec<SuiteScenario> {
        match o.random {
            Some(n) => random_paths::draw(o.seed, n, Self::length(o)),
            None => suite(Self::length(o)),
        }
    }

    /// The scenarios `o` asks for (all if none), or the first unknown id.
    fn scenarios(o: &Options) -> Result<Vec<SuiteScenario>, String> {
        let all = Self::all(o);
        if o.scenarios.is_empty() {
            return Ok(all);
        }
        Ok(select(&all, &o.scenarios)?.into_iter().cloned().collect())
    }

    /// The controllers `o` asks for (the default set if none).
    fn controllers(o: &Options) -> Vec<ControllerKind> {
        if o.controllers.is_empty() {
            DEFAULT_CONTROLLERS.to_vec()
        } else {
            o.controllers.clone()
        }
    }
}

impl Declaration for Controllers {
    type Measure = Measure;
    type Row = Row;

    fn takes_controllers(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "controllers"
    }

    fn about(&self) -> &'static str {
        "Our evaluation suite: Seek, ACP+, ACP(κ=0.25), Lazy (or --controllers) against the fixed-rate oracle on 36 scenarios (docs/SIMULATOR.md)"
    }

    fn default_seeds(&self) -> u64 {
        DEFAULT_SEEDS
    }

    /// `--seed` and the next: one per random path unless `--seeds` (the paths vary; the ratio
    /// is within a path and seed), else [`DEFAULT_SEEDS`].
    fn seeds(&self, o: &Options) -> Vec<u64> {
        o.seed_list(if o.random.is_some() { 1 } else { DEFAULT_SEEDS })
    }

    fn check(&self, o: &Options) -> Result<(), String> {
        Self::scenarios(o).map(drop).map_err(|id| {
            let all = Self::all(o);
            let known: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
            format!(
                "--scenarios: unknown scenario {id:?} (known: {})",
                known.join(", ")
            )
        })
    }

    fn plan(&self, o: &Options) -> Plan {
        let scenarios = Self::scenarios(o).unwrap_or_default();
        let controllers = Self::controllers(o);
        let seeds = Declaration::seeds(self, o);
        let per = controllers.len() + 1;
        let mut jobs = Vec::new();
        for (k, s) in scenarios.iter().enumerate() {
            for (c, &controller) in controllers.iter().enumerate() {
                for &seed in &seeds {
                    jobs.push(Job::sim(k * per + c, s.run_with(controller, seed)));
                }
            }
            let oracle = Job::oracle(
                k * per + controllers.len(),
                s.scenario.clone(),
                s.oracle_rates(),
                seeds.clone(),
            );
            jobs.push(oracle);
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => {
                let f = figures(r);
                Measure::Run((f.age, f.rate, f.jain))
            }
            Done::Oracle(p) => Measure::Oracle(p.rate, p.age, p.ci95),
            Done::Lab(_) => unreachable!("the suite runs in the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let scenarios = Self::scenarios(o).unwrap_or_default();
        let controllers = Self::controllers(o);
        let per = controllers.len() + 1;
        let points = by_point(plan, done, scenarios.len() * per);
        let mut rows = Vec::new();
        for (k, s) in scenarios.iter().enumerate() {
            // A scenario whose oracle was cut short has no rows.
            let Some(&&Measure::Oracle(oracle_rate, oracle_age, oracle_ci)) =
                points[k * per + controllers.len()].first()
            else {
                continue;
            };
            let sources = s.sources();
            for (c, controller) in controllers.iter().enumerate() {
                let runs: Vec<RunFigures> = points[k * per + c]
                    .iter()
                    .filter_map(|m| match m {
                        Measure::Run((age, rate, jain)) => Some(RunFigures {
                            age: *age,
                            rate: *rate,
                            jain: *jain,
                        }),
                        Measure::Oracle(..) => None,
                    })
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let ages: Vec<f64> = runs.iter().map(|r| r.age).collect();
                let (age, ci95) = mean_ci95(&ages);
                rows.push(Row {
                    id: s.id.clone(),
                    class: s.class.into(),
                    about: s.about.clone(),
                    sources,
                    oracle_rate_hz: oracle_rate,
                    oracle_age_ms: oracle_age * 1e3,
                    oracle_age_ms_ci95: oracle_ci * 1e3,
                    controller: controller.to_string(),
                    seeds: runs.len(),
                    age_ms: age * 1e3,
                    age_ms_ci95: ci95 * 1e3,
                    age_ratio: age / oracle_age,
                    rate_hz: mean(runs.iter().map(|r| r.rate)),
                    jain: (sources > 1).then(|| mean(runs.iter().map(|r| r.jain))),
                });
            }
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let seeds = Declaration::seeds(self, o);
        format!(
            "controllers against the fixed-rate oracle (the best rate common to every source: \
             {ORACLE_RATES} rates in equal ratios up to the bottleneck's rate in updates shared \
             by the sources, then ±6 % in 1 % steps) over the same {} seed(s) from {}; \
             age_ratio = mean age / the oracle's; {}{}",
            seeds.len(),
            seeds.first().copied().unwrap_or_default(),
            match o.random {
                Some(n) => format!(
                    "{n} random paths drawn with seed {} (docs/SIMULATOR.md, \"Random paths\")",
                    o.seed
                ),
                None => "the hand-made scenarios".into(),
            },
            if o.quick { ", quarter-length runs" } else { "" }
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "",
            &[
                "id",
                "sources",
                "oracle_rate_hz",
                "oracle_age_ms",
                "controller",
                "age_ms",
                "age_ratio",
            ],
        )]
    }

    /// Per controller, the empirical distribution of its ratios: (ratio, fraction of the
    /// scenarios at or below it).
    fn traces(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Trace> {
        let rows = self.rows(o, plan, done);
        Self::controllers(o)
            .iter()
            .map(|c| {
                let label = c.to_string();
                let mut ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.controller == label)
                    .map(|r| r.age_ratio)
                    .collect();
                ratios.sort_by(f64::total_cmp);
                let n = ratios.len() as f64;
                Trace {
                    name: label,
                    points: ratios
                        .iter()
                        .enumerate()
                        .map(|(k, &r)| (r, (k + 1) as f64 / n))
                        .collect(),
                }
            })
            .collect()
    }

    fn charts(&self, _o: &Options, traces: &[Trace]) -> Vec<Chart> {
        vec![
            Chart::lines(
                "ratios",
                "Age relative to the best fixed rate, per scenario",
                ("id", "scenario (in the table's order)"),
                ("age_ratio", "age / the oracle's"),
                &["controller"],
            )
            .draw(Draw::Ratios),
            Chart::lines(
                "ecdf",
                "Distribution of the age relative to the best fixed rate",
                ("age_ratio", "age / the oracle's"),
                ("fraction", "fraction of the scenarios at or below"),
                &["controller"],
            )
            .draw(Draw::Curves(traces.to_vec())),
        ]
    }

    fn notes(&self, o: &Options, rows: &[Row]) -> Vec<String> {
        let labels: Vec<String> = Self::controllers(o)
            .iter()
            .map(ToString::to_string)
            .collect();
        let scenarios = {
            let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            ids.dedup();
            ids.len()
        };
        let count = |n: Option<usize>| n.map_or_else(|| "-".to_string(), |n| n.to_string());
        let mut notes = vec![
            format!("summary over {scenarios} scenarios (age / oracle's):"),
            format!(
                "{:<14} {:>7} {:>8} {:>7} {:>7}  {:<28} {:>10} {:>10}",
                "controller",
                "median",
                "geomean",
                "p95",
                "worst",
                "(at)",
                "> acp+ ×1.02",
                "> both ×1.02"
            ),
        ];
        for s in summarise(rows, &labels) {
            notes.push(format!(
                "{:<14} {:>7.3} {:>8.3} {:>7.3} {:>7.3}  {:<28} {:>12} {:>12}",
                s.controller,
                s.median,
                s.geomean,
                s.p95,
                s.worst,
                s.worst_id,
                count(s.worse_than_acp_plus),
                count(s.worse_than_both)
            ));
        }
        let classes = by_class(rows, &labels);
        if classes.len() > 1 {
            notes.push("geometric mean per class (scenarios):".into());
            notes.push(format!(
                "{:<14} {:>4} {}",
                "class",
                "n",
                labels
                    .iter()
                    .map(|l| format!("{l:>12}"))
                    .collect::<String>()
            ));
            for (class, n, means) in classes {
                notes.push(format!(
                    "{class:<14} {n:>4} {}",
                    means
                        .iter()
                        .map(|m| format!("{m:>12.3}"))
                        .collect::<String>()
                ));
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn a_draft_writes_its_hops_flows_and_cross_traffic() {
        let d = draft("x", "y", 30.0, demo_path())
            .sources(4)
            .guests(2, 0.5, 0.75)
            .cross(Traffic::OnOff(10.0, 10.0), 0.25, 1200);
        let s = d.build(Length::Full);
        assert_eq!(s.sources(), 6);
        assert_eq!(s.residents(), 4);
        assert_eq!(s.hops(), 2);
        assert_eq!(s.bottleneck_bps(), 2e6);
        assert_eq!(s.delay(), Duration::from_millis(21));
        assert_eq!(s.scenario.config.duration, Duration::from_secs(30));
        assert_eq!(s.scenario.config.warmup, Duration::from_secs(10));
        let guest = s
            .scenario
            .flows
            .iter()
            .find(|f| f.name.starts_with("guest"));
        assert_eq!(
            guest.map(|f| (f.start, f.stop)),
            Some((Duration::from_secs(15), Some(Duration::from_millis(22_500))))
        );
        let cross = s.scenario.flows.iter().find(|f| f.name == "cross");
        assert_eq!(
            cross.map(|f| f.path.clone()),
            Some(vec!["r1".into(), "monitor".into()])
        );
        // 2 Mbit/s shared by the four residents, in 172-byte updates.
        assert!((s.cap() - 2e6 / (172.0 * 8.0) / 4.0).abs() < 1e-9);
    }

    #[test]
    fn summary_takes_median_geomean_worst_and_counts_against_acp_plus() {
        let row = |id: &str, controller: &str, ratio: f64| Row {
            id: id.into(),
            class: HAND_MADE.into(),
            about: String::new(),
            sources: 1,
            oracle_rate_hz: 1.0,
            oracle_age_ms: 1.0,
            oracle_age_ms_ci95: 0.0,
            controller: controller.into(),
            seeds: 1,
            age_ms: ratio,
            age_ms_ci95: 0.0,
            age_ratio: ratio,
            rate_hz: 1.0,
            jain: None,
        };
        let mut rows = Vec::new();
        for (id, ratios) in [
            ("a", [1.0, 1.01, 1.04]),
            ("b", [2.0, 4.0, 3.0]),
            ("c", [1.5, 1.0, 1.6]),
        ] {
            rows.push(row(id, "acp+", ratios[0]));
            rows.push(row(id, "lazy", ratios[1]));
            rows.push(row(id, "seek", ratios[2]));
        }
        let s = summarise(&rows, &["acp+".into(), "lazy".into(), "seek".into()]);
        assert_eq!(s[0].median, 1.5);
        assert!((s[0].geomean - 3f64.cbrt()).abs() < 1e-12);
        assert_eq!((s[0].worst, s[0].worst_id.as_str()), (2.0, "b"));
        assert_eq!(s[0].worse_than_acp_plus, Some(0));
        // Lazy: 1.01 is within 2 % of 1.0, 4.0 is worse than 2.0, 1.0 is better than 1.5.
        assert_eq!(s[1].worse_than_acp_plus, Some(1));
        assert_eq!(s[1].controller, "lazy");
        assert_eq!(s[1].scenarios, 3);
        // Seek: 1.04 is more than 2 % above both 1.0 and 1.01, and 1.6 above both 1.5 and 1.0;
        // 3.0 is worse than ACP+'s 2.0 but better than Lazy's 4.0, so not worse than both.
        assert_eq!(s[2].worse_than_acp_plus, Some(3));
        assert_eq!(s[2].worse_than_both, Some(2));
        assert_eq!(s[0].worse_than_both, Some(0));
    }
}
