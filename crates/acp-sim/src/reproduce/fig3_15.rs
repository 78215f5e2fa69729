//! `fig3-15`: one ACP (κ = 0.25) source while UDP flows switch on and off (thesis Fig. 3.15):
//! six 1 Mbit/s point-to-point hops (the thesis: "all links are 1 Mbps"), 0.2 Mbit/s of UDP from
//! AP-1 and 0.3 Mbit/s from AP-2 to the monitor, on at the thesis's times. A row per interval
//! between switches (ACP's age and rate of fresh updates over it, over the seeds), and the age
//! on a 1 s grid over time per seed (the first three drawn).
//!
//! The thesis does not say how its UDP clients send; Poisson (the other traffic of its Table I
//! networks) makes the seeds differ, where constant rate would make every seed's run the same.

use serde::Serialize;

use super::access::{seed_range, BACKHAUL};
use super::harness::{
    by_point, stat, Band, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
};
use crate::scenario::Scenario;

/// The run length (s).
pub const SECS: u64 = 1400;

/// ACP's update payload (bytes).
const PAYLOAD: u32 = 1024;

/// One of the UDP flows; it goes to the monitor.
#[derive(Debug, Clone, Copy)]
pub struct UdpFlow {
    /// Its name.
    pub name: &'static str,
    /// The node it enters at.
    pub entry: &'static str,
    /// Its rate (bit/s).
    pub bps: f64,
    /// When it is on (s).
    pub on: [(u64, u64); 2],
}

/// The other traffic.
pub const UDP: [UdpFlow; 2] = [
    UdpFlow {
        name: "udp-ap1",
        entry: "ap1",
        bps: 0.2e6,
        on: [(200, 400), (1000, 1200)],
    },
    UdpFlow {
        name: "udp-ap2",
        entry: "ap2",
        bps: 0.3e6,
        on: [(600, 800), (1000, 1200)],
    },
];

/// Bytes of each UDP packet (ns-3's `UdpClient` default).
const UDP_BYTES: u32 = 1024;

/// The network with seed `seed`, the age traced on a 1 s grid.
pub fn scenario(seed: u64) -> Scenario {
    let mut text = format!(
        "format = 2\nname = \"ACP and switching UDP flows\"\nseed = {seed}\n\
         duration = \"{SECS}s\"\n"
    );
    let mut path = vec!["source"];
    path.extend(BACKHAUL);
    for pair in path.windows(2) {
        text += &format!(
            "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"1mbit\"\nqueue = 100\n",
            pair[0], pair[1]
        );
    }
    text += &format!(
        "[[flow]]\ntype = \"acp\"\nname = \"acp\"\ncontroller = \"acp:0.25\"\npayload = {PAYLOAD}\npath = {path:?}\n"
    );
    for UdpFlow {
        name,
        entry,
        bps,
        on: intervals,
    } in UDP
    {
        let from = BACKHAUL.iter().position(|n| *n == entry).unwrap_or(0);
        for (k, (on, off)) in intervals.iter().enumerate() {
            text += &format!(
                "[[flow]]\ntype = \"cross\"\nname = \"{name}-{}\"\nprocess = \"poisson\"\nrate = \"{bps}bit\"\n\
                 size = {UDP_BYTES}\nstart = \"{on}s\"\nstop = \"{}s\"\npath = {:?}\n",
                k + 1,
                off,
                &BACKHAUL[from..]
            );
        }
    }
    let mut s = match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("Fig. 3.15's scenario is well formed: {e}"),
    };
    s.config.trace_points = SECS as usize;
    s
}

/// The intervals between the switches: (from s, to s, the UDP flows on, their load in bit/s).
pub fn phases() -> Vec<(u64, u64, Vec<&'static str>, f64)> {
    let mut cuts: Vec<u64> = vec![0, SECS];
    for flow in UDP {
        for (on, off) in flow.on {
            cuts.extend([on, off]);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|w| {
            let on: Vec<&UdpFlow> = UDP
                .iter()
                .filter(|f| f.on.iter().any(|&(a, b)| a <= w[0] && w[1] <= b))
                .collect();
            let load = on.iter().fold(0.0, |sum, f| sum + f.bps);
            (w[0], w[1], on.iter().map(|f| f.name).collect(), load)
        })
        .collect()
}

/// One run: ACP's mean age (s) and fresh updates per second, each on the 1 s grid.
#[derive(Debug, Clone)]
pub struct Measure {
    ages: Vec<(f64, f64)>,
    deliveries: Vec<(f64, f64)>,
}

/// The mean of a 1 s grid over [from, to): grid point t closes the second ending at t.
fn over(trace: &[(f64, f64)], from: u64, to: u64) -> f64 {
    let xs: Vec<f64> = trace
        .iter()
        .filter(|(t, _)| *t > from as f64 && *t <= to as f64)
        .map(|p| p.1)
        .collect();
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// One interval between switches, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Start (s).
    pub from_s: u64,
    /// End (s).
    pub to_s: u64,
    /// The UDP flows on ("udp-ap1 + udp-ap2", "-" for none).
    pub udp_on: String,
    /// Their total rate (Mbit/s).
    pub udp_mbit_s: f64,
    /// Seeds run.
    pub seeds: usize,
    /// ACP's time-average age over the interval (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: f64,
    /// ACP's fresh updates delivered per second over the interval.
    pub fresh_rate_hz: f64,
    /// Its 95 % confidence half-width.
    pub fresh_rate_hz_ci95: f64,
}

/// The reproduction.
pub struct Fig3_15;

impl Declaration for Fig3_15 {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "fig3-15"
    }

    fn about(&self) -> &'static str {
        "One ACP(κ=0.25) source while UDP flows switch on and off (thesis Fig. 3.15)"
    }

    fn plan(&self, o: &Options) -> Plan {
        let jobs = o
            .seed_list(self.default_seeds())
            .into_iter()
            .map(|seed| Job::sim(0, scenario(seed)))
            .collect();
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        let acp = match done {
            Done::Sim(r) => r.flows.iter().find(|f| f.kind == "acp"),
            _ => None,
        };
        Measure {
            ages: acp.map(|f| f.mean_age_trace.clone()).unwrap_or_default(),
            deliveries: acp.map(|f| f.delivery_trace.clone()).unwrap_or_default(),
        }
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let runs = by_point(plan, done, 1).remove(0);
        if runs.is_empty() {
            // No run, no phases: a mean over no seed would read as an age of 0.
            return Vec::new();
        }
        phases()
            .into_iter()
            .map(|(from, to, udp, load)| {
                let (age, age_ci) = stat(&runs, |m| over(&m.ages, from, to));
                let (rate, rate_ci) = stat(&runs, |m| over(&m.deliveries, from, to));
                Row {
                    from_s: from,
                    to_s: to,
                    udp_on: if udp.is_empty() {
                        "-".into()
                    } else {
                        udp.join(" + ")
                    },
                    udp_mbit_s: load / 1e6,
                    seeds: runs.len(),
                    age_ms: age * 1e3,
                    age_ms_ci95: age_ci * 1e3,
                    fresh_rate_hz: rate,
                    fresh_rate_hz_ci95: rate_ci,
                }
            })
            .collect()
    }

    fn traces(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Trace> {
        plan.jobs
            .iter()
            .zip(done)
            .filter_map(|(job, m)| Some((job.seed, m.as_ref()?)))
            .map(|(seed, m)| Trace {
                name: format!("ACP(κ=0.25), seed {seed}"),
                points: m.ages.iter().map(|&(t, a)| (t, a * 1e3)).collect(),
            })
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "thesis Fig. 3.15: one ACP (κ = 0.25) source, {PAYLOAD}-byte updates over six 1 Mbit/s \
             hops; Poisson UDP flows of {UDP_BYTES}-byte packets, 0.2 Mbit/s from AP-1 and 0.3 \
             Mbit/s from AP-2 to the monitor, on at the thesis's times; {SECS} s per run, seeds \
             {}; mean ± 95 % CI over the seeds",
            seed_range(&o.seed_list(self.default_seeds()))
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "",
            &[
                "from_s",
                "to_s",
                "udp_on",
                "udp_mbit_s",
                "age_ms",
                "fresh_rate_hz",
            ],
        )]
    }

    fn charts(&self, _o: &Options, traces: &[Trace]) -> Vec<Chart> {
        // The loaded intervals shaded, darker for more load, as in the thesis.
        let phases = phases();
        let peak = phases.iter().map(|p| p.3).fold(0.0, f64::max);
        let bands = phases
            .iter()
            .filter(|p| p.3 > 0.0)
            .map(|p| Band {
                from: p.0 as f64,
                to: p.1 as f64,
                label: format!("UDP {} Mbit/s", p.3 / 1e6),
                shade: p.3 / peak,
            })
            .collect();
        vec![Chart::lines(
            "fig3-15_age",
            "ACP adapting to UDP flows switching on and off (thesis Fig. 3.15)",
            ("from_s", "time (s)"),
            ("age_ms", "age (ms)"),
            &[],
        )
        .draw(Draw::OverTime(
            traces.iter().take(3).cloned().collect(),
            bands,
        ))]
    }

    fn notes(&self, _o: &Options, _rows: &[Row]) -> Vec<String> {
        vec![
            "paper: a plot only (ACP lowers λ while the flows are on and recovers when they stop)"
                .into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_follow_the_switches() {
        let phases = phases();
        let spans: Vec<(u64, u64)> = phases.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(
            spans,
            [
                (0, 200),
                (200, 400),
                (400, 600),
                (600, 800),
                (800, 1000),
                (1000, 1200),
                (1200, 1400)
            ]
        );
        let loads: Vec<f64> = phases.iter().map(|p| p.3).collect();
        assert_eq!(loads, [0.0, 0.2e6, 0.0, 0.3e6, 0.0, 0.5e6, 0.0]);
        assert_eq!(phases[5].2, ["udp-ap1", "udp-ap2"]);
    }
}
