//! The ACP+ paper's §XI-A, "Ageing over the Core Network": ACP+, Lazy and bulk TCP (iPerf3)
//! over a long path (Frankfurt → Mumbai, RTT ≈ 110 ms), one protocol at a time; the age, delay
//! (mean RTT) and throughput of each run.
//!
//! Each run also gives the mean time between the ACKs reaching the sender and the mean segment
//! length, which the paper uses to explain ACP+'s low throughput (10.4 ms between ACKs against
//! BBR-d1m1's 1.16 ms; BBR's segments of about 14 KB) and finds uncorrelated with the delay
//! (Fig. 19).
//!
//! The paper's age of a TCP flow is its estimate from the sender (every new segment a fresh
//! update, as old as its RTT when its ACK arrives; [`crate::report::FlowResult::est_age`]); an
//! ACP source's is its own estimate, made the same way from its ACKs. Both are compared here.
//!
//! The path is scaled: the paper's flows reached 200 Mbit/s, beyond what the lab's emulator
//! forwards on a shared machine, so the bottleneck here is [`RATE_MBIT`] Mbit/s with the paper's
//! RTT, and the receive buffers keep the paper's ratios to the path (window against
//! bandwidth-delay product): BBR-d1m1's window about half the BDP (the paper's d1m1 reached 110
//! of d1m3's 200 Mbit/s), d1m3's three times that, d5m5's five. [`scenario_text`] is the one
//! scenario file `acp sim` and `acp lab` both run: the harness runs a job in the lab when the
//! caller gives it one (`acp reproduce core-tcp` does where it may create network namespaces),
//! except Vegas and YeAH, always from the models. `docs/LAB.md` compares the results.

use serde::Serialize;

use super::harness::{
    Chart, Declaration, Done, Draw, Job, LabFlow, Options, Plan, Source, Trace, View,
};
use crate::scenario::Scenario;

/// The bottleneck's rate (Mbit/s).
pub const RATE_MBIT: u32 = 20;
/// Propagation one way (ms): the paper's RTT ≈ 110 ms.
pub const ONE_WAY_MS: u32 = 55;
/// The bottleneck's drop-tail queue (packets): about a third of the BDP (36 ms of 1,500-byte
/// packets), so that loss-based TCP adds a few tens of ms, as the paper's CUBIC and Reno did.
pub const QUEUE_PACKETS: u32 = 60;
/// d1: the `tcp_rmem` default and maximum of BBR-d1m1 (bytes); the window Linux grows it to is
/// half of it ([`crate::tcp::Rmem::window`]), 0.55 of the path's BDP.
pub const D1_BYTES: u64 = 300_000;
/// ACP+'s and Lazy's payload (bytes), the paper's.
pub const ACP_PAYLOAD: u32 = 1024;

/// A protocol of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Protocol {
    AcpPlus,
    Lazy,
    Reno,
    Cubic,
    BbrD1m1,
    BbrD1m3,
    BbrD5m5,
    Vegas,
    Yeah,
}

impl Protocol {
    /// All of them, in the paper's order of runs.
    pub const ALL: [Protocol; 9] = [
        Protocol::AcpPlus,
        Protocol::Lazy,
        Protocol::BbrD1m1,
        Protocol::BbrD1m3,
        Protocol::BbrD5m5,
        Protocol::Cubic,
        Protocol::Reno,
        Protocol::Vegas,
        Protocol::Yeah,
    ];

    /// Its label, the paper's.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::AcpPlus => "ACP+",
            Protocol::Lazy => "Lazy",
            Protocol::Reno => "Reno",
            Protocol::Cubic => "CUBIC",
            Protocol::BbrD1m1 => "BBR-d1m1",
            Protocol::BbrD1m3 => "BBR-d1m3",
            Protocol::BbrD5m5 => "BBR-d5m5",
            Protocol::Vegas => "Vegas",
            Protocol::Yeah => "YeAH",
        }
    }

    /// An ACP protocol's update payload (bytes), its fixed "segment" length.
    fn acp_payload(self) -> Option<f64> {
        matches!(self, Protocol::AcpPlus | Protocol::Lazy).then_some(f64::from(ACP_PAYLOAD))
    }

    /// True if only the simulator has it (Linux has Vegas and YeAH as modules, which the lab's
    /// kernel may lack; the reproduction takes them from the models always).
    pub fn model_only(self) -> bool {
        matches!(self, Protocol::Vegas | Protocol::Yeah)
    }

    /// The receiver's `tcp_rmem` (default, max) of a TCP protocol: d1m1, d1m3, or d5m5 (the
    /// paper's setting for every TCP but BBR's two others).
    fn rmem(self) -> (u64, u64) {
        match self {
            Protocol::BbrD1m1 => (D1_BYTES, D1_BYTES),
            Protocol::BbrD1m3 => (D1_BYTES, 3 * D1_BYTES),
            _ => (5 * D1_BYTES, 5 * D1_BYTES),
        }
    }

    /// The `[[flow]]` of its run.
    fn flow(self) -> String {
        let tcp = |cc: &str| {
            let (default, max) = self.rmem();
            format!(
                "type = \"tcp\"\ncc = \"{cc}\"\napp = \"bulk\"\nwindow = \"packets\"\n\
                 rmem = [{default}, {max}]\n"
            )
        };
        let acp = |controller: &str| {
            format!("type = \"acp\"\ncontroller = \"{controller}\"\npayload = {ACP_PAYLOAD}\n")
        };
        match self {
            Protocol::AcpPlus => acp("acp+"),
            Protocol::Lazy => acp("lazy"),
            Protocol::Reno => tcp("newreno"),
            Protocol::Cubic => tcp("cubic"),
            Protocol::BbrD1m1 | Protocol::BbrD1m3 | Protocol::BbrD5m5 => tcp("bbr"),
            Protocol::Vegas => tcp("vegas"),
            Protocol::Yeah => tcp("yeah"),
        }
    }
}

/// The scenario file of `protocol`'s run: `secs` long, the first third warm-up.
pub fn scenario_text(protocol: Protocol, secs: u64, seed: u64) -> String {
    format!(
        "format = 2\nname = \"core-tcp {label}\"\nseed = {seed}\nduration = \"{secs}s\"\n\
         warmup = \"{warmup}s\"\n\n[[link]]\nfrom = \"frankfurt\"\nto = \"mumbai\"\n\
         rate = \"{RATE_MBIT}mbit\"\ndelay = \"{ONE_WAY_MS}ms\"\nqueue = {QUEUE_PACKETS}\n\n\
         [[flow]]\nname = \"{name}\"\n{flow}path = [\"frankfurt\", \"mumbai\"]\n",
        label = protocol.label(),
        warmup = secs as f64 / 3.0,
        name = protocol.label().to_lowercase(),
        flow = protocol.flow(),
    )
}

/// What the paper says of an age.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Claim {
    /// About this (s).
    About(f64),
    /// Above this (s).
    Above(f64),
    /// Between these (s).
    Between(f64, f64),
}

/// The paper's numbers for a protocol (§XI-A text; Figs. 20–21 give no others as numbers).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Paper {
    pub age: Option<Claim>,
    /// Mean RTT (s).
    pub delay: Option<f64>,
    /// Bits per second.
    pub throughput_bps: Option<f64>,
    /// Mean time between ACKs (s).
    pub inter_ack: Option<f64>,
    /// Mean segment length (bytes).
    pub segment_bytes: Option<f64>,
}

/// The paper's numbers for `protocol`.
pub fn paper(protocol: Protocol) -> Paper {
    let none = Paper {
        age: None,
        delay: None,
        throughput_bps: None,
        inter_ack: None,
        segment_bytes: None,
    };
    match protocol {
        // "the constant 1024 byte payload of an ACP+ packet"; "an average inter-ACK time of
        // 10.4 ms for ACP+ in comparison to a much smaller 1.16 ms for BBR-d1m1"; BBR-d1m1's
        // segments "on an average about 14 KB".
        Protocol::AcpPlus => Paper {
            age: Some(Claim::About(0.1155)),
            delay: Some(0.11079),
            throughput_bps: Some(0.77e6),
            inter_ack: Some(0.0104),
            segment_bytes: Some(1024.0),
        },
        Protocol::BbrD1m1 => Paper {
            age: Some(Claim::About(0.1145)),
            delay: Some(0.11233),
            throughput_bps: Some(110e6),
            inter_ack: Some(0.00116),
            segment_bytes: Some(14_000.0),
        },
        Protocol::BbrD1m3 => Paper {
            age: Some(Claim::About(0.1235)),
            throughput_bps: Some(200e6),
            ..none
        },
        Protocol::BbrD5m5 => Paper {
            age: Some(Claim::Above(0.140)),
            ..none
        },
        Protocol::Cubic => Paper {
            age: Some(Claim::About(0.121)),
            ..none
        },
        // "Reno, Vegas and BBR-d1m3 achieve higher ages than CUBIC, with YeAH achieving the
        // highest age of about 125 ms among them."
        Protocol::Reno | Protocol::Vegas => Paper {
            age: Some(Claim::Between(0.121, 0.125)),
            ..none
        },
        Protocol::Yeah => Paper {
            age: Some(Claim::About(0.125)),
            ..none
        },
        // "the average delay of 112.33 ms when using BBR-d1m1 is the same as that obtained by
        // a Lazy … protocol we ran alongside the others".
        Protocol::Lazy => Paper {
            delay: Some(0.11233),
            ..none
        },
    }
}

/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 30;

/// The scenario of `protocol`'s run.
fn scenario(protocol: Protocol, secs: u64, seed: u64) -> Scenario {
    match Scenario::parse(&scenario_text(protocol, secs, seed)) {
        Ok(s) => s,
        Err(e) => unreachable!("the core-tcp scenario is well formed: {e}"),
    }
}

/// Where a run ran and its first flow's numbers.
pub type Measure = (&'static str, LabFlow);

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The protocol, the paper's label.
    pub protocol: &'static str,
    /// Where it ran: `lab` (real kernel TCP), `sim`, or `model` (the simulator, always).
    pub bed: &'static str,
    /// The seed.
    pub seed: u64,
    /// Time-average age at the receiver (ms), where it is measured (ACP flows in the
    /// simulator; every flow in the lab).
    pub age_ms: Option<f64>,
    /// The sender's estimate of the time-average age (ms; see the module documentation): the
    /// paper's measure.
    pub est_age_ms: Option<f64>,
    /// The paper's, where it gives a value.
    pub paper_est_age_ms: Option<f64>,
    /// The paper's, where it gives a bound ("> 140", "121–125").
    pub paper_est_age_ms_bound: Option<String>,
    /// Mean RTT (ms): the paper's "delay".
    pub rtt_ms: Option<f64>,
    /// The paper's.
    pub paper_rtt_ms: Option<f64>,
    /// Delivered throughput (Mbit/s).
    pub throughput_mbit_s: f64,
    /// The paper's, on its faster path.
    pub paper_throughput_mbit_s: Option<f64>,
    /// Mean time between the ACKs reaching the sender (ms).
    pub inter_ack_ms: Option<f64>,
    /// The paper's.
    pub paper_inter_ack_ms: Option<f64>,
    /// Mean segment length (bytes): TCP's data segments' payload, ACP's update payload.
    pub segment_bytes: Option<f64>,
    /// The paper's.
    pub paper_segment_bytes: Option<f64>,
    /// Bytes delivered per ACK: the throughput times the time between ACKs.
    pub bytes_per_ack: Option<f64>,
    /// The paper's, from its throughput and time between ACKs.
    pub paper_bytes_per_ack: Option<f64>,
}

/// The reproduction.
pub struct CoreTcp;

/// The protocols of the jobs, in the plan's order: every protocol for each seed in turn.
fn protocols(o: &Options) -> Vec<(Protocol, u64)> {
    o.seed_list(1)
        .into_iter()
        .flat_map(|s| Protocol::ALL.into_iter().map(move |p| (p, s)))
        .collect()
}

impl Declaration for CoreTcp {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "core-tcp"
    }

    fn about(&self) -> &'static str {
        "ACP+, Lazy, Reno, CUBIC and BBR (three receive buffers) over a long core path, one at a time, in the lab if this process may (else the simulator); Vegas and YeAH from the models (§XI-A, Figs. 20–21)"
    }

    fn default_seeds(&self) -> u64 {
        1
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let jobs = protocols(o)
            .into_iter()
            .enumerate()
            .map(|(k, (p, seed))| Job {
                lab: (!p.model_only()).then(|| scenario_text(p, secs, seed)),
                ..Job::sim(k, scenario(p, secs, seed))
            })
            .collect();
        Plan { jobs }
    }

    fn measure(&self, job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Lab(f) => ("lab", *f),
            Done::Sim(r) => {
                let bed = if job.lab.is_some() { "sim" } else { "model" };
                let f = r.flows.first();
                let flow = LabFlow {
                    est_age: f.and_then(|f| f.est_age),
                    age: f.and_then(|f| f.age),
                    rtt: f.and_then(|f| f.mean_rtt),
                    throughput_bps: f.map_or(0.0, |f| f.throughput_bps),
                    inter_ack: f.and_then(|f| f.inter_ack),
                    segment_bytes: f.and_then(|f| f.segment_bytes),
                };
                (bed, flow)
            }
            Done::Oracle(_) => unreachable!("core-tcp has no oracle"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let jobs = protocols(o);
        let mut rows: Vec<(usize, Row)> = plan
            .jobs
            .iter()
            .zip(done)
            .filter_map(|(job, m)| {
                let (bed, f) = m.as_ref()?;
                let (protocol, seed) = jobs[job.point];
                let pp = paper(protocol);
                let ms = |v: Option<f64>| v.map(|s| s * 1e3);
                let row = Row {
                    protocol: protocol.label(),
                    bed,
                    seed,
                    age_ms: ms(f.age),
                    est_age_ms: ms(f.est_age),
                    paper_est_age_ms: match pp.age {
                        Some(Claim::About(a)) => Some(a * 1e3),
                        _ => None,
                    },
                    paper_est_age_ms_bound: match pp.age {
                        Some(Claim::Above(a)) => Some(format!("> {:.0}", a * 1e3)),
                        Some(Claim::Between(a, b)) => {
                            Some(format!("{:.0}–{:.0}", a * 1e3, b * 1e3))
                        }
                        _ => None,
                    },
                    rtt_ms: ms(f.rtt),
                    paper_rtt_ms: ms(pp.delay),
                    throughput_mbit_s: f.throughput_bps / 1e6,
                    paper_throughput_mbit_s: pp.throughput_bps.map(|b| b / 1e6),
                    inter_ack_ms: ms(f.inter_ack),
                    paper_inter_ack_ms: ms(pp.inter_ack),
                    segment_bytes: f.segment_bytes.or_else(|| protocol.acp_payload()),
                    paper_segment_bytes: pp.segment_bytes,
                    bytes_per_ack: f.inter_ack.map(|gap| f.throughput_bps * gap / 8.0),
                    paper_bytes_per_ack: pp
                        .throughput_bps
                        .zip(pp.inter_ack)
                        .map(|(bps, gap)| bps * gap / 8.0),
                };
                let order = Protocol::ALL.iter().position(|&p| p == protocol);
                Some((order.unwrap_or(0), row))
            })
            .collect();
        rows.sort_by_key(|(order, r)| (*order, r.seed));
        rows.into_iter().map(|(_, r)| r).collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "§XI-A core network: {RATE_MBIT} Mbit/s bottleneck (the paper's path scaled, \
             docs/LAB.md), RTT {} ms, {QUEUE_PACKETS} packet queue; {} s per run (first third \
             warm-up), {} seed(s); age: the sender's estimate (TCP: the paper's, every ACK a fresh \
             update as old as its RTT; ACP: its own)",
            2 * ONE_WAY_MS,
            o.secs.unwrap_or(DEFAULT_SECS),
            o.seed_list(1).len()
        )
    }

    fn sources(&self) -> Vec<Source> {
        let locator = "ACP+ paper §XI-A (text; Figs. 20–21 give no other numbers)";
        [
            "paper_est_age_ms",
            "paper_est_age_ms_bound",
            "paper_rtt_ms",
            "paper_throughput_mbit_s",
            "paper_inter_ack_ms",
            "paper_segment_bytes",
            "paper_bytes_per_ack",
        ]
        .into_iter()
        .map(|column| Source { column, locator })
        .collect()
    }

    fn views(&self) -> Vec<View> {
        vec![
            View::new(
                "",
                &[
                    "protocol",
                    "bed",
                    "seed",
                    "est_age_ms",
                    "paper_est_age_ms_bound",
                    "age_ms",
                    "rtt_ms",
                    "throughput_mbit_s",
                ],
            ),
            View::new(
                "ACKs and segments (§XI-A-4, Fig. 19)",
                &[
                    "protocol",
                    "bed",
                    "seed",
                    "inter_ack_ms",
                    "segment_bytes",
                    "bytes_per_ack",
                    "rtt_ms",
                ],
            ),
        ]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        // The paper's (delay, age) pairs beside ours; its throughputs are of a faster path.
        let published = Protocol::ALL
            .iter()
            .filter_map(|&p| match (paper(p).delay, paper(p).age) {
                (Some(d), Some(Claim::About(a))) => Some((p.label().to_string(), d * 1e3, a * 1e3)),
                _ => None,
            })
            .collect();
        let age = ("est_age_ms", "time-average age, the sender's estimate (ms)");
        vec![
            Chart::lines(
                "core_tcp_delay_age",
                "Delay against age, one point per run (§XI-A, Fig. 20)",
                ("rtt_ms", "mean RTT (ms)"),
                age,
                &["protocol"],
            )
            .draw(Draw::Scatter(published)),
            Chart::lines(
                "core_tcp_throughput_age",
                format!("Throughput against age, {RATE_MBIT} Mbit/s path (§XI-A, Fig. 21)"),
                ("throughput_mbit_s", "throughput (Mbit/s)"),
                age,
                &["protocol"],
            )
            .draw(Draw::Scatter(Vec::new())),
            Chart::lines(
                "core_tcp_segment_delay",
                "Segment length against delay, one point per run (§XI-A, Fig. 19)",
                ("segment_bytes", "mean segment length (bytes)"),
                ("rtt_ms", "mean RTT (ms)"),
                &["protocol"],
            )
            .draw(Draw::Scatter(
                Protocol::ALL
                    .iter()
                    .filter_map(|&p| {
                        let pp = paper(p);
                        Some((p.label().to_string(), pp.segment_bytes?, pp.delay? * 1e3))
                    })
                    .collect(),
            )),
        ]
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec![format!(
            "the paper's throughput is of a path of 200+ Mbit/s; ours is scaled to {RATE_MBIT} Mbit/s"
        )];
        notes.extend(segment_note(rows));
        notes.push(
            "the paper's 14 KB segments and 1.16 ms between ACKs are TSO bursts of about 1 ms of \
             BBR's pacing rate, one ACK each (docs/LAB.md, \"Inter-ACK times and segment lengths\")"
                .into(),
        );
        notes
    }

    fn files(&self, o: &Options) -> Vec<(String, String)> {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        protocols(o)
            .into_iter()
            .map(|(p, seed)| {
                let name = format!("scenarios/{}-seed{seed}.toml", p.label().to_lowercase());
                (name, scenario_text(p, secs, seed))
            })
            .collect()
    }
}

/// Whether segment length goes with delay over the TCP runs (the paper: uncorrelated, Fig. 19):
/// their Pearson correlation, or, when every run has the same segments, that length and the
/// spread of the delays.
fn segment_note(rows: &[Row]) -> Option<String> {
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| !matches!(r.protocol, "ACP+" | "Lazy"))
        .filter_map(|r| Some((r.segment_bytes?, r.rtt_ms?)))
        .collect();
    let n = pairs.len() as f64;
    let (sx, sy) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let cov =
        |f: &dyn Fn(f64, f64) -> f64| pairs.iter().map(|&(x, y)| f(x - mx, y - my)).sum::<f64>();
    let (sxy, sxx, syy) = (cov(&|a, b| a * b), cov(&|a, _| a * a), cov(&|_, b| b * b));
    let delays = pairs.iter().map(|p| p.1);
    let (lo, hi) = (
        delays.clone().fold(f64::INFINITY, f64::min),
        delays.fold(0.0, f64::max),
    );
    match pairs.len() {
        0 | 1 => None,
        _ if sxx == 0.0 => Some(format!(
            "every TCP run's segments are {mx:.0} bytes while its delay ranges {lo:.1}–{hi:.1} ms: \
             segment length does not set the delay (paper: uncorrelated, Fig. 19)"
        )),
        _ => Some(format!(
            "segment length against delay over the TCP runs: Pearson r = {:.2} (paper: uncorrelated, Fig. 19)",
            sxy / (sxx * syy).sqrt()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocols_scenario_parses_with_its_buffers() {
        for p in Protocol::ALL {
            let s = Scenario::parse(&scenario_text(p, 30, 1)).unwrap();
            assert_eq!(s.flows.len(), 1, "{p:?}");
            if let crate::flows::FlowKind::Tcp { config, .. } = &s.flows[0].kind {
                let rmem = config.rmem.unwrap();
                assert_eq!((rmem.default, rmem.max), p.rmem());
                assert_eq!(config.receive_buffer, p.rmem().1 / 2);
            }
        }
    }

    /// The scaling keeps the paper's mechanism: d1m1's window below the path's BDP (so the
    /// receiver, not the path, limits it and no queue forms), d1m3's and d5m5's above.
    #[test]
    fn windows_straddle_the_bandwidth_delay_product() {
        let bdp = f64::from(RATE_MBIT) * 1e6 / 8.0 * f64::from(2 * ONE_WAY_MS) * 1e-3;
        let window = |p: Protocol| {
            let (default, max) = p.rmem();
            crate::tcp::Rmem { default, max }.window() as f64 / bdp
        };
        assert!((0.5..0.6).contains(&window(Protocol::BbrD1m1)));
        assert!(window(Protocol::BbrD1m3) > 1.5);
        assert!(window(Protocol::BbrD5m5) > 2.5);
    }
}
