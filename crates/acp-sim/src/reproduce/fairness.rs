//! `fairness`: how evenly a controller shares one bottleneck among equal sources (issue 24's
//! multi-source target: Jain's index of the sources' ages ≥ 0.98), with sources that join and
//! leave mid-run, and between sources whose RTTs differ 1 : 4.
//!
//! The network is a 2 Mbit/s bottleneck (100-packet drop-tail queue) behind 100 Mbit/s access
//! links; 100-byte updates. The cases:
//! - `equal`: 2, 4, 8 or 16 sources on one access link, 3 ms one way to the monitor;
//! - `join-leave`: 8 sources: 4 for the whole run, 2 that join at 40 % of it, 2 that leave at
//!   70 % (each source's age is its time average over its own active time);
//! - `rtt-1:4`: 4 sources 10 ms one way from the monitor (RTT ≈ 20 ms) and 4 sources 40 ms
//!   (≈ 80 ms), sharing the bottleneck's 1 ms hop.
//!
//! Per run: Jain's index of the ages at the monitor, of the *excess* ages (the age less the
//! source's one-way propagation, the part a controller decides: with unequal RTTs the ages
//! differ by the propagation whatever the rates) and of the update rates; for `rtt-1:4` the
//! far sources' rate over the near ones'. Means ± 95 % CI over the seeds.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::harness::{
    by_point, jain, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use crate::report::SimResult;
use crate::scenario::Scenario;

/// The controllers compared unless the caller says otherwise.
pub const CONTROLLERS: [ControllerKind; 3] = [
    ControllerKind::Seek,
    ControllerKind::AcpPlus,
    ControllerKind::Lazy,
];
/// Simulated seconds per run unless the caller says otherwise (a sixth of it is warm-up).
pub const DEFAULT_SECS: u64 = 120;
/// The fairness the issue asks of equal sources (Jain's index of their ages).
pub const TARGET_JAIN: f64 = 0.98;
/// Update payload (bytes).
const PAYLOAD: u32 = 100;
/// One-way propagation of the near sources and the far ones in `rtt-1:4` (ms), bottleneck hop
/// included; and of every source in the other cases.
const NEAR_MS: f64 = 10.0;
const FAR_MS: f64 = 40.0;
const EQUAL_MS: f64 = 3.0;
/// The bottleneck hop's propagation (ms).
const BOTTLENECK_MS: f64 = 1.0;

/// A case: who shares the bottleneck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// `n` sources for the whole run, equally far from the monitor.
    Equal(usize),
    /// 4 sources for the whole run, 2 joining at 40 % of it, 2 leaving at 70 %.
    JoinLeave,
    /// 4 sources at 10 ms and 4 at 40 ms one way.
    Rtt,
}

/// Every case, in the order of the table.
pub const CASES: [Case; 6] = [
    Case::Equal(2),
    Case::Equal(4),
    Case::Equal(8),
    Case::Equal(16),
    Case::JoinLeave,
    Case::Rtt,
];

impl Case {
    /// Its name in the table and in `--scenarios`.
    pub fn kind(self) -> &'static str {
        match self {
            Case::Equal(_) => "equal",
            Case::JoinLeave => "join-leave",
            Case::Rtt => "rtt-1:4",
        }
    }

    /// Its id for `--scenarios`: `equal-N`, `join-leave`, `rtt-1:4`.
    pub fn id(self) -> String {
        match self {
            Case::Equal(n) => format!("equal-{n}"),
            _ => self.kind().into(),
        }
    }

    /// Sources sharing the bottleneck (over the run).
    pub fn sources(self) -> usize {
        match self {
            Case::Equal(n) => n,
            Case::JoinLeave | Case::Rtt => 8,
        }
    }

    /// The scenario of this case with `controller`, `secs` long, seeded `seed`.
    pub fn scenario_text(self, controller: ControllerKind, secs: u64, seed: u64) -> String {
        let access = |from: &str, ms: f64| {
            format!(
                "[[link]]\nfrom = \"{from}\"\nto = \"router\"\nrate = \"100mbit\"\ndelay = \"{}ms\"\n\n",
                ms - BOTTLENECK_MS
            )
        };
        let flow = |name: &str, from: &str, count: usize, extra: &str| {
            format!(
                "[[flow]]\ntype = \"acp\"\nname = \"{name}\"\ncontroller = \"{controller}\"\n\
                 payload = {PAYLOAD}\ncount = {count}\n{extra}path = [\"{from}\", \"router\", \"cloud\"]\n\n"
            )
        };
        let mut text = format!(
            "format = 2\nname = \"fairness {} {controller}\"\nseed = {seed}\nduration = \"{secs}s\"\n\
             warmup = \"{}s\"\n\n[[link]]\nfrom = \"router\"\nto = \"cloud\"\nrate = \"2mbit\"\n\
             delay = \"{BOTTLENECK_MS}ms\"\nqueue = 100\n\n",
            self.id(),
            secs / 6
        );
        let at = |share: f64| format!("{}s", (secs as f64 * share).round());
        match self {
            Case::Equal(n) => {
                text += &access("sensors", EQUAL_MS);
                text += &flow("s", "sensors", n, "");
            }
            Case::JoinLeave => {
                text += &access("sensors", EQUAL_MS);
                text += &flow("stay", "sensors", 4, "");
                text += &flow("join", "sensors", 2, &format!("start = \"{}\"\n", at(0.4)));
                text += &flow("leave", "sensors", 2, &format!("stop = \"{}\"\n", at(0.7)));
            }
            Case::Rtt => {
                text += &access("near", NEAR_MS);
                text += &access("far", FAR_MS);
                text += &flow("near", "near", 4, "");
                text += &flow("far", "far", 4, "");
            }
        }
        text
    }
}

/// The one-way propagation of the source named `flow` (s): the `rtt-1:4` case names its
/// sources `near#k` and `far#k`.
fn one_way(flow: &str) -> f64 {
    let ms = if flow.starts_with("far#") {
        FAR_MS
    } else if flow.starts_with("near#") {
        NEAR_MS
    } else {
        EQUAL_MS
    };
    ms / 1e3
}

/// What one run yields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    /// Jain's index of the ages at the monitor.
    pub jain_age: f64,
    /// Jain's index of the ages less the one-way propagation.
    pub jain_excess_age: f64,
    /// Jain's index of the update rates.
    pub jain_rate: f64,
    /// Mean age over the sources (s).
    pub age: f64,
    /// Mean update rate per source (updates/s).
    pub rate: f64,
    /// `rtt-1:4`: the far sources' mean rate over the near ones'.
    pub far_over_near_rate: Option<f64>,
}

/// One run's measure (a source that never measured an age counts as infinitely old).
pub fn measure(r: &SimResult) -> Measure {
    let acp: Vec<_> = r.flows.iter().filter(|f| f.kind == "acp").collect();
    let ages: Vec<f64> = acp.iter().map(|f| f.age.unwrap_or(f64::INFINITY)).collect();
    let excess: Vec<f64> = acp
        .iter()
        .zip(&ages)
        .map(|(f, a)| a - one_way(&f.name))
        .collect();
    let rates: Vec<f64> = acp.iter().map(|f| f.send_rate).collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let group_rate = |far: bool| {
        let rs: Vec<f64> = acp
            .iter()
            .filter(|f| f.name.starts_with("far#") == far)
            .map(|f| f.send_rate)
            .collect();
        mean(&rs)
    };
    Measure {
        jain_age: jain(&ages),
        jain_excess_age: jain(&excess),
        jain_rate: jain(&rates),
        age: mean(&ages),
        rate: mean(&rates),
        far_over_near_rate: acp
            .iter()
            .any(|f| f.name.starts_with("far#"))
            .then(|| group_rate(true) / group_rate(false)),
    }
}

/// One case with one controller, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The case's kind: `equal`, `join-leave`, `rtt-1:4`.
    pub case: &'static str,
    /// The controller's label.
    pub controller: String,
    /// Sources sharing the bottleneck.
    pub sources: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Jain's index of the sources' ages at the monitor.
    pub jain_age: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub jain_age_ci95: f64,
    /// Jain's index of the ages less each source's one-way propagation.
    pub jain_excess_age: f64,
    /// Jain's index of the sources' update rates.
    pub jain_rate: f64,
    /// Mean age per source (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width.
    pub age_ms_ci95: f64,
    /// Mean update rate per source (updates/s).
    pub rate_hz: f64,
    /// `rtt-1:4`: the far (80 ms RTT) sources' rate over the near (20 ms) ones'.
    pub far_over_near_rate: Option<f64>,
}

/// The reproduction.
pub struct Fairness;

/// The points: (case, controller), case-major: the cases `scenarios` names (all if empty) and
/// the controllers `controllers` lists (the default set if empty).
fn points(o: &Options) -> Vec<(Case, ControllerKind)> {
    let controllers = if o.controllers.is_empty() {
        CONTROLLERS.to_vec()
    } else {
        o.controllers.clone()
    };
    CASES
        .into_iter()
        .filter(|c| o.scenarios.is_empty() || o.scenarios.contains(&c.id()))
        .flat_map(|case| controllers.iter().map(move |&c| (case, c)))
        .collect()
}

impl Declaration for Fairness {
    type Measure = Measure;
    type Row = Row;

    fn takes_controllers(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "fairness"
    }

    fn about(&self) -> &'static str {
        "Jain's fairness of age among sources sharing a bottleneck: 2–16 equal sources, sources joining and leaving, RTTs 1 : 4 (Seek, ACP+, Lazy)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn check(&self, o: &Options) -> Result<(), String> {
        let ids: Vec<String> = CASES.iter().map(|c| c.id()).collect();
        match o.scenarios.iter().find(|s| !ids.contains(s)) {
            Some(s) => Err(format!(
                "fairness has no case {s:?} (cases: {})",
                ids.join(", ")
            )),
            None => Ok(()),
        }
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let mut jobs = Vec::new();
        for (k, &(case, c)) in points(o).iter().enumerate() {
            for seed in self.seeds(o) {
                let text = case.scenario_text(c, secs, seed);
                let scenario = Scenario::parse(&text)
                    .unwrap_or_else(|e| panic!("fairness builds valid scenarios: {e}\n{text}"));
                jobs.push(Job::sim(k, scenario));
            }
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => measure(r),
            Done::Oracle(_) | Done::Lab(_) => unreachable!("fairness runs the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let all = points(o);
        let by = by_point(plan, done, all.len());
        let mut rows = Vec::new();
        for (p, &(case, c)) in all.iter().enumerate() {
            let runs = &by[p];
            if runs.is_empty() {
                continue;
            }
            let (jain_age, jain_age_ci95) = stat(runs, |m| m.jain_age);
            let (age, age_ci) = stat(runs, |m| m.age);
            rows.push(Row {
                case: case.kind(),
                controller: c.to_string(),
                sources: case.sources(),
                seeds: runs.len(),
                jain_age,
                jain_age_ci95,
                jain_excess_age: stat(runs, |m| m.jain_excess_age).0,
                jain_rate: stat(runs, |m| m.jain_rate).0,
                age_ms: age * 1e3,
                age_ms_ci95: age_ci * 1e3,
                rate_hz: stat(runs, |m| m.rate).0,
                far_over_near_rate: (case == Case::Rtt)
                    .then(|| stat(runs, |m| m.far_over_near_rate.unwrap_or(f64::NAN)).0),
            });
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let seeds = self.seeds(o);
        format!(
            "sources sharing a 2 Mbit/s bottleneck (100-packet queue) behind 100 Mbit/s access \
             links, {PAYLOAD}-byte updates; equal: 2–16 sources {EQUAL_MS} ms one way; \
             join-leave: 4 sources all run, 2 joining at 40 %, 2 leaving at 70 %; rtt-1:4: 4 \
             sources {NEAR_MS} ms and 4 {FAR_MS} ms one way; {secs} s per run ({} s warm-up), \
             seeds {}–{}; Jain's index of the ages at the monitor, of the ages less the one-way \
             propagation (excess) and of the rates; mean ± 95 % CI over the seeds",
            secs / 6,
            seeds.first().copied().unwrap_or(o.seed),
            seeds.last().copied().unwrap_or(o.seed),
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "fairness of age among sources sharing a bottleneck",
            &[
                "case",
                "controller",
                "sources",
                "jain_age",
                "jain_excess_age",
                "jain_rate",
                "age_ms",
                "rate_hz",
                "far_over_near_rate",
            ],
        )]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        vec![Chart::lines(
            "fairness_jain_age",
            "Jain's index of age, equal sources sharing a bottleneck",
            ("sources", "sources sharing the bottleneck"),
            ("jain_age", "Jain's index of the sources' ages"),
            &["controller"],
        )
        .only("case", "equal")]
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = Vec::new();
        let mut labels: Vec<&str> = rows.iter().map(|r| r.controller.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        for c in labels {
            let mine = || rows.iter().filter(move |r| r.controller == c);
            let worst = mine()
                .filter(|r| r.case != "rtt-1:4")
                .map(|r| r.jain_age)
                .fold(f64::INFINITY, f64::min);
            if worst.is_finite() {
                notes.push(format!(
                    "{c}: lowest Jain's index of age over the equal and join-leave cases {worst:.4} \
                     (target ≥ {TARGET_JAIN}: {})",
                    if worst >= TARGET_JAIN { "met" } else { "missed" }
                ));
            }
            if let Some(r) = mine().find(|r| r.case == "rtt-1:4") {
                notes.push(format!(
                    "{c}: RTTs 1 : 4: the far sources send {:.2}× the near ones' rate; Jain's index \
                     of the excess ages {:.4}, of the ages {:.4}",
                    r.far_over_near_rate.unwrap_or(f64::NAN),
                    r.jain_excess_age,
                    r.jain_age
                ));
            }
        }
        notes
    }

    fn files(&self, _o: &Options) -> Vec<(String, String)> {
        CASES
            .into_iter()
            .map(|c| {
                (
                    format!("scenarios/fairness_{}.toml", c.id().replace(':', "_")),
                    c.scenario_text(ControllerKind::Seek, DEFAULT_SECS, 1),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_builds_a_scenario_with_its_sources() {
        for case in CASES {
            let s = Scenario::parse(&case.scenario_text(ControllerKind::Seek, 60, 1))
                .unwrap_or_else(|e| panic!("{}: {e}", case.id()));
            assert_eq!(s.flows.len(), case.sources(), "{}", case.id());
        }
    }

    #[test]
    fn excess_age_takes_each_sources_own_propagation() {
        assert_eq!(one_way("far#3"), 0.040);
        assert_eq!(one_way("near#1"), 0.010);
        assert_eq!(one_way("s#1"), 0.003);
    }
}
