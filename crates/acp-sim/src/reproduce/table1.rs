//! `table1`: the six-hop networks Net A–E of the ACP+ paper's Table I with 0.2 Mbit/s of Poisson
//! other traffic: one flow from the client across all six hops ("the other flow, which also
//! originates at the client", ACP+ paper §V-B), or, as `table1-per-hop`, an independent flow on
//! every hop (our reading before issue 23). Per network the oracle (the best fixed rate, with the backlog of
//! updates it keeps at each hop: the paper's Fig. 8) and Seek, ACP+, ACP (κ = 0.25) and Lazy, each
//! one's age as a ratio to the oracle's, in rows of one type: the oracle is the row whose
//! controller is `oracle`.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::harness::{Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View};
use crate::report::FlowResult;
use crate::scenario::Scenario;
use crate::sweep::mean_age;

/// Link rates (Mbit/s) of Net A–E, hop 1 (source → AP-1) to hop 6 (AP-2 → monitor).
pub const TABLE1: [(&str, [f64; 6]); 5] = [
    ("Net A", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    ("Net B", [1.0, 1.0, 5.0, 5.0, 1.0, 1.0]),
    ("Net C", [1.0, 5.0, 5.0, 5.0, 5.0, 1.0]),
    ("Net D", [5.0, 5.0, 5.0, 5.0, 5.0, 1.0]),
    ("Net E", [5.0, 5.0, 5.0, 5.0, 5.0, 5.0]),
];

/// Update payload of the Table I networks (bytes, as in the paper's simulations).
pub const TABLE1_PAYLOAD: u32 = 1024;

/// The controllers compared with the oracle.
pub const CONTROLLERS: [ControllerKind; 4] = [
    ControllerKind::Seek,
    ControllerKind::AcpPlus,
    ControllerKind::Acp(0.25),
    ControllerKind::Lazy,
];

/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;

/// Where the Table I networks' 0.2 Mbit/s of other traffic flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherTraffic {
    /// One flow from the source to the monitor across every hop: the paper's "other flow, which
    /// also originates at the client" (ACP+ paper §V-B).
    FromClient,
    /// An independent flow on each hop.
    PerHop,
}

/// A Table I network as a scenario: seven nodes in a line, links of the given rates with 2 ms of
/// propagation and 100-packet queues in both directions, one ACP flow with `controller`, and
/// 0.2 Mbit/s of Poisson other traffic of 1000-byte packets as `other` says.
pub fn table1_scenario(
    rates: &[f64; 6],
    other: OtherTraffic,
    controller: ControllerKind,
    secs: u64,
    seed: u64,
) -> Scenario {
    let nodes = ["source", "ap1", "isp1", "core", "isp2", "ap2", "monitor"];
    let mut text = format!(
        "format = 2\nname = \"table1\"\nseed = {seed}\nduration = \"{secs}s\"\nwarmup = \"{}s\"\n",
        secs / 10
    );
    let cross = |name: String, path: &[&str]| {
        format!(
            "[[flow]]\nname = \"{name}\"\ntype = \"cross\"\nprocess = \"poisson\"\nrate = \"0.2mbit\"\nsize = 1000\npath = {path:?}\n"
        )
    };
    for (i, r) in rates.iter().enumerate() {
        text += &format!(
            "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"{}mbit\"\ndelay = \"2ms\"\nqueue = 100\n",
            nodes[i],
            nodes[i + 1],
            r
        );
        if other == OtherTraffic::PerHop {
            text += &cross(format!("other{}", i + 1), &nodes[i..i + 2]);
        }
    }
    if other == OtherTraffic::FromClient {
        text += &cross("other".into(), &nodes);
    }
    text += &format!(
        "[[flow]]\nname = \"updates\"\ntype = \"acp\"\ncontroller = \"{controller}\"\npayload = {TABLE1_PAYLOAD}\npath = {:?}\n",
        nodes
    );
    match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("the Table I scenario is well formed: {e}"),
    }
}

/// What one run (or the oracle) measured: the update flow's rate, age and backlog per hop.
#[derive(Debug, Clone)]
pub struct Measure {
    rate: f64,
    age: f64,
    backlog: Vec<f64>,
}

/// The update flow of a run.
fn updates(flows: &[FlowResult]) -> Option<&FlowResult> {
    flows.iter().find(|f| f.kind == "acp")
}

/// Its backlog at each hop.
fn backlog(f: Option<&FlowResult>) -> Vec<f64> {
    f.map(|f| f.backlog.iter().map(|h| h.backlog).collect())
        .unwrap_or_default()
}

/// One controller (or the oracle) on one network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// "Net A" … "Net E".
    pub network: String,
    /// `oracle` (the best fixed rate) or the controller.
    pub controller: String,
    /// Updates sent per second.
    pub rate_hz: f64,
    /// Time-average age at the monitor (ms).
    pub age_ms: f64,
    /// Age over the oracle's.
    pub age_ratio: f64,
    /// Updates at hop 1 (sent on it and not yet across), time-average.
    pub backlog_hop1: f64,
    /// At hop 2.
    pub backlog_hop2: f64,
    /// At hop 3.
    pub backlog_hop3: f64,
    /// At hop 4.
    pub backlog_hop4: f64,
    /// At hop 5.
    pub backlog_hop5: f64,
    /// At hop 6.
    pub backlog_hop6: f64,
}

/// The backlog fields, hop 1 to hop 6.
const HOPS: [&str; 6] = [
    "backlog_hop1",
    "backlog_hop2",
    "backlog_hop3",
    "backlog_hop4",
    "backlog_hop5",
    "backlog_hop6",
];

/// Points per network: the controllers, then the oracle.
const PER_NETWORK: usize = CONTROLLERS.len() + 1;

/// The reproduction, with its other traffic.
pub struct Table1 {
    /// Where the other traffic flows.
    pub other: OtherTraffic,
}

/// `table1`: the paper's one other flow from the client.
pub const TABLE1_FROM_CLIENT: Table1 = Table1 {
    other: OtherTraffic::FromClient,
};

/// `table1-per-hop`: an independent other flow on every hop.
pub const TABLE1_PER_HOP: Table1 = Table1 {
    other: OtherTraffic::PerHop,
};

impl Declaration for Table1 {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        match self.other {
            OtherTraffic::FromClient => "table1",
            OtherTraffic::PerHop => "table1-per-hop",
        }
    }

    fn about(&self) -> &'static str {
        match self.other {
            OtherTraffic::FromClient => {
                "Net A–E: oracle backlog per hop (Fig. 8) and Seek, ACP+, ACP(κ=0.25), Lazy against the oracle"
            }
            OtherTraffic::PerHop => "table1 with an independent other flow on every hop",
        }
    }

    fn default_seeds(&self) -> u64 {
        1
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let mut jobs = Vec::new();
        for (n, (_, rates)) in TABLE1.iter().enumerate() {
            for (c, &controller) in CONTROLLERS.iter().enumerate() {
                let s = table1_scenario(rates, self.other, controller, secs, o.seed);
                jobs.push(Job::sim(n * PER_NETWORK + c, s));
            }
            // Updates are 1024 + 44 + 28 bytes; the slowest link bounds the useful rates, and
            // the coarse stage tries 24 rates up to it.
            let bits = f64::from(TABLE1_PAYLOAD + 72) * 8.0;
            let cap = rates.iter().copied().fold(f64::INFINITY, f64::min) * 1e6 / bits;
            let coarse = (1..=24).map(|k| cap * f64::from(k) / 24.0).collect();
            let base = table1_scenario(rates, self.other, ControllerKind::Fixed(1.0), secs, o.seed);
            jobs.push(Job::oracle(
                n * PER_NETWORK + CONTROLLERS.len(),
                base,
                coarse,
                vec![o.seed],
            ));
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => {
                let f = updates(&r.flows);
                Measure {
                    rate: f.map_or(f64::NAN, |f| f.send_rate),
                    age: mean_age(r),
                    backlog: backlog(f),
                }
            }
            Done::Oracle(p) => Measure {
                rate: p.rate,
                age: p.age,
                backlog: backlog(updates(&p.result.flows)),
            },
            Done::Lab(_) => unreachable!("{} has no lab runs", self.name()),
        }
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let at = |point: usize| {
            plan.jobs
                .iter()
                .zip(done)
                .find(|(j, _)| j.point == point)
                .and_then(|(_, m)| m.as_ref())
        };
        let mut rows = Vec::new();
        for (n, (network, _)) in TABLE1.iter().enumerate() {
            let oracle = at(n * PER_NETWORK + CONTROLLERS.len());
            let oracle_age = oracle.map_or(f64::NAN, |m| m.age);
            let labels = CONTROLLERS.iter().map(ToString::to_string);
            let labels = labels.chain(["oracle".to_string()]);
            for (k, controller) in labels.enumerate() {
                let Some(m) = at(n * PER_NETWORK + k) else {
                    continue;
                };
                let hop = |h: usize| m.backlog.get(h).copied().unwrap_or(f64::NAN);
                rows.push(Row {
                    network: (*network).into(),
                    controller,
                    rate_hz: m.rate,
                    age_ms: m.age * 1e3,
                    age_ratio: m.age / oracle_age,
                    backlog_hop1: hop(0),
                    backlog_hop2: hop(1),
                    backlog_hop3: hop(2),
                    backlog_hop4: hop(3),
                    backlog_hop5: hop(4),
                    backlog_hop6: hop(5),
                });
            }
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let other = match self.other {
            OtherTraffic::FromClient => {
                "one 0.2 Mbit/s Poisson flow from the client across all hops"
            }
            OtherTraffic::PerHop => "0.2 Mbit/s Poisson other traffic per hop",
        };
        format!(
            "Table I networks, {} s per run (10 % warm-up), {other}, 1024-byte updates, seed {}; \
             the oracle is the best fixed rate (24 rates up to the slowest link's, then ±6 % in \
             1 % steps)",
            o.secs.unwrap_or(DEFAULT_SECS),
            o.seed
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![
            View::new(
                "age against the oracle's",
                &["network", "controller", "rate_hz", "age_ms", "age_ratio"],
            ),
            View::new(
                "backlog of updates per hop (Fig. 8: the oracle's)",
                &[&["network", "controller"][..], &HOPS[..]].concat(),
            ),
        ]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        vec![Chart::lines(
            "fig8_backlog",
            "Backlog of updates per hop at the age-optimal rate (Fig. 8)",
            ("network", "hop (1 = the source's first link)"),
            ("backlog_hop1", "updates at the hop (queued or in service)"),
            &["network"],
        )
        .only("controller", "oracle")
        .draw(Draw::Bars(
            HOPS.iter()
                .zip(["1", "2", "3", "4", "5", "6"])
                .map(|(&f, l)| (f, l))
                .collect(),
        ))]
    }

    fn notes(&self, _o: &Options, _rows: &[Row]) -> Vec<String> {
        vec!["paper (ACP+ paper §V, Fig. 8): the bottleneck nodes hold ≈ 0.8–1 update at the optimal λ".into()]
    }
}
