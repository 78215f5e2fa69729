//! The ACP+ paper's §III (thesis §3.3): status updates over TCP against UDP, on the paper's
//! network of two 1 Mbit/s hops (source → router → monitor). The network, the sweep over
//! utilisations and the row type of `fig2` (TCP against UDP with 10 % loss) and `fig4` (500-
//! against 536-byte updates over TCP without loss).
//!
//! The utilisation is the update payload's share of a link: `λ · payload · 8 / 1 Mbit/s`. What
//! the paper leaves unstated (it ran ns-3) is chosen as ns-3 does by default where it can: no
//! propagation delay (ns-3's point-to-point channel has none; §III gives none), 100-packet
//! drop-tail queues, the loss on the router → monitor hop in the data direction only
//! (so each update is lost with probability 0.1 and ACKs are not), SMSS 536 bytes, a 128 KiB
//! send buffer (ns-3's default) and otherwise our TCP model's Linux defaults (initial window 10,
//! minimum RTO 200 ms, delayed ACKs every two full segments or 40 ms, with ns-3's receiver:
//! `delayed_ack = { linux = false }`, none of Linux's receive-MSS estimate, pushed ACKs or quick
//! ACKs). `docs/SIMULATOR.md` compares the results with the paper's.

use serde::Serialize;

use super::harness::{by_point, stat, Job, View};
use crate::report::SimResult;
use crate::scenario::Scenario;

/// The segment size (the minimum SMSS, and ns-3's default).
pub const SMSS: u32 = 536;
/// The sender's socket buffer (ns-3's default).
pub const SEND_BUFFER: u64 = 131_072;
/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;
/// Ages and delays (ms) above this are not drawn: a saturated TCP connection's reach minutes
/// and would hide everything else.
pub const CHART_CAP_MS: f64 = 1000.0;

/// The utilisations of the sweeps: 0.05 to 0.95 in steps of 0.05.
pub fn utilisations() -> Vec<f64> {
    (1..=19).map(|k| f64::from(k) * 0.05).collect()
}

/// How the updates travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Transport {
    /// One UDP datagram per update (28 bytes of IPv4/UDP headers), no feedback.
    Udp,
    /// Update records written into a NewReno connection, with Nagle's algorithm or without.
    Tcp {
        /// TCP_NODELAY.
        nodelay: bool,
    },
}

/// One of the paper's runs: `payload`-byte updates over `transport` at `utilisation`, loss
/// `loss` on the second hop, `secs` long (a tenth warm-up), `trace_points` grid points.
pub fn scenario(
    transport: Transport,
    payload: u32,
    utilisation: f64,
    loss: f64,
    secs: u64,
    seed: u64,
    trace_points: usize,
) -> Scenario {
    let rate = utilisation * 1e6 / (8.0 * f64::from(payload));
    let flow = match transport {
        Transport::Udp => format!(
            "type = \"updates\"\nrate = {rate}\nsize = {}\n",
            payload + crate::engine::UDP_IP_OVERHEAD
        ),
        Transport::Tcp { nodelay } => format!(
            "type = \"tcp\"\ncc = \"newreno\"\napp = \"updates\"\npayload = {payload}\n\
             rate = {rate}\nsmss = {SMSS}\nsend_buffer = {SEND_BUFFER}\nnodelay = {nodelay}\n\
             delayed_ack = {{ linux = false }}\n"
        ),
    };
    let link = |from: &str, to: &str, loss: f64| {
        format!(
            "[[link]]\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"1mbit\"\nqueue = 100\n\
             both_ways = false\nloss = {loss}\n"
        )
    };
    let text = format!(
        "format = 2\nname = \"tcp-updates\"\nseed = {seed}\nduration = \"{secs}s\"\n\
         warmup = \"{}s\"\ntrace_points = {trace_points}\n{}{}{}{}[[flow]]\nname = \"updates\"\n\
         path = [\"source\", \"router\", \"monitor\"]\n{flow}",
        secs as f64 / 10.0,
        link("source", "router", 0.0),
        link("router", "source", 0.0),
        link("router", "monitor", loss),
        link("monitor", "router", 0.0),
    );
    match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("the §III scenario is well formed: {e}"),
    }
}

/// One curve: its label, how the updates travel, their payload.
pub type Series = (&'static str, Transport, u32);

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    age: f64,
    delay: f64,
    delivered: f64,
    timeouts: f64,
}

/// What `r`, a run of `payload`-byte updates, measured.
pub fn measure(r: &SimResult, payload: u32) -> Measure {
    let f = &r.flows[0];
    Measure {
        age: f.age.unwrap_or(f64::INFINITY),
        delay: f.mean_delay.unwrap_or(f64::INFINITY),
        delivered: f.rate * 8.0 * f64::from(payload) / 1e6,
        timeouts: f.tcp.as_ref().map_or(0.0, |t| t.timeouts as f64),
    }
}

/// The jobs of every (series, utilisation) over `seeds` with `loss`, `secs` long: point
/// `s · 19 + u`.
pub fn jobs(series: &[Series], loss: f64, secs: u64, seeds: &[u64]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (s, &(_, transport, payload)) in series.iter().enumerate() {
        for (u, utilisation) in utilisations().into_iter().enumerate() {
            for &seed in seeds {
                let sc = scenario(transport, payload, utilisation, loss, secs, seed, 0);
                jobs.push(Job::sim(s * 19 + u, sc));
            }
        }
    }
    jobs
}

/// A point of an age-against-utilisation curve over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The curve, e.g. "TCP" or "500 B, Nagle".
    pub series: String,
    /// Offered utilisation of the 1 Mbit/s links.
    pub utilisation: f64,
    /// Seeds run.
    pub seeds: usize,
    /// Time-average age at the receiving application (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: f64,
    /// The paper's.
    pub paper_age_ms: Option<f64>,
    /// Mean delay of an update, generation to delivery (ms).
    pub delay_ms: f64,
    /// Its 95 % confidence half-width.
    pub delay_ms_ci95: f64,
    /// Utilisation the delivered updates achieved (their payload's share of a link).
    pub delivered_utilisation: f64,
    /// TCP: retransmission timeouts per run, mean over seeds.
    pub timeouts: f64,
}

/// The rows of `series` from the measurements of [`jobs`]' jobs (`None`: skipped); a point
/// none of whose runs was done is left out. `paper(series, utilisation)` is the paper's age (ms).
pub fn rows(
    series: &[Series],
    plan_jobs: &super::harness::Plan,
    done: &[Option<Measure>],
    paper: impl Fn(&str, f64) -> Option<f64>,
) -> Vec<Row> {
    let points = by_point(plan_jobs, done, series.len() * 19);
    let mut rows = Vec::new();
    for (s, &(name, _, _)) in series.iter().enumerate() {
        for (u, utilisation) in utilisations().into_iter().enumerate() {
            let runs = &points[s * 19 + u];
            if runs.is_empty() {
                continue;
            }
            let (age, age_ci) = stat(runs, |m| m.age);
            let (delay, delay_ci) = stat(runs, |m| m.delay);
            let n = runs.len() as f64;
            rows.push(Row {
                series: name.into(),
                utilisation,
                seeds: runs.len(),
                age_ms: age * 1e3,
                age_ms_ci95: age_ci * 1e3,
                paper_age_ms: paper(name, utilisation),
                delay_ms: delay * 1e3,
                delay_ms_ci95: delay_ci * 1e3,
                delivered_utilisation: runs.iter().map(|m| m.delivered).sum::<f64>() / n,
                timeouts: runs.iter().map(|m| m.timeouts).sum::<f64>() / n,
            });
        }
    }
    rows
}

/// The table of [`Row`]s.
pub fn view() -> View {
    View::new(
        "",
        &[
            "series",
            "utilisation",
            "age_ms",
            "delay_ms",
            "delivered_utilisation",
            "timeouts",
        ],
    )
}

/// The lowest age of `series` among `rows`.
pub fn minimum<'a>(rows: &'a [Row], series: &str) -> Option<&'a Row> {
    rows.iter()
        .filter(|p| p.series == series)
        .min_by(|a, b| a.age_ms.total_cmp(&b.age_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenarios_carry_the_offered_load() {
        for transport in [Transport::Udp, Transport::Tcp { nodelay: false }] {
            let r = scenario(transport, 536, 0.3, 0.0, 20, 1, 0)
                .build()
                .unwrap()
                .run();
            let f = &r.flows[0];
            let offered = 0.3 * 1e6 / (8.0 * 536.0);
            assert!(
                (f.rate / offered - 1.0).abs() < 0.01,
                "{transport:?}: {}",
                f.rate
            );
            assert!(f.age.unwrap() < 0.1);
        }
    }
}
