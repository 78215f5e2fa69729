//! The ACP+ paper's §III (thesis §3.3): status updates over TCP against UDP, on the paper's
//! network of two 1 Mbit/s hops (source → router → monitor).
//!
//! - [`fig2`]: 536-byte updates at fixed rates with 10 % random loss, TCP (NewReno) against UDP:
//!   the time-average age at the monitor and the mean delay of an update (generation to delivery
//!   to the application) against the utilisation of the 1 Mbit/s links;
//! - [`fig4`]: no loss, 500-byte against 536-byte updates over TCP (536 bytes is the minimum
//!   SMSS, the segment size): age against utilisation, with Nagle's algorithm (Linux's default)
//!   and with TCP_NODELAY, and the congestion window over time.
//!
//! The utilisation is the update payload's share of a link: `λ · payload · 8 / 1 Mbit/s`. What
//! the paper leaves unstated (it ran ns-3) is chosen here: 1 ms of propagation per hop,
//! 100-packet drop-tail queues, the loss on the router → monitor hop in the data direction only
//! (so each update is lost with probability 0.1 and ACKs are not), SMSS 536 bytes, a 128 KiB
//! send buffer (ns-3's default) and otherwise our TCP model's Linux defaults (initial window 10,
//! minimum RTO 200 ms, delayed ACKs every two full segments or 40 ms). `docs/SIMULATOR.md`
//! compares the results with the paper's.

use serde::Serialize;

use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::{mean_ci95, parallel, Cancel};

/// The paper's numbers these reproductions are compared with (§III text; the figures' curves
/// are not given as numbers).
pub mod paper {
    /// Fig. 2: TCP's minimum time-average age (s)…
    pub const FIG2_TCP_MIN_AGE_S: f64 = 0.18;
    /// … at this utilisation.
    pub const FIG2_TCP_MIN_AT: f64 = 0.2;
    /// Fig. 2: UDP's minimum age (s), "≈ 0.01 s"…
    pub const FIG2_UDP_MIN_AGE_S: f64 = 0.01;
    /// … at this utilisation, "≈ 0.8".
    pub const FIG2_UDP_MIN_AT: f64 = 0.8;
}

/// Fig. 2's update payload (bytes).
pub const FIG2_PAYLOAD: u32 = 536;
/// Fig. 2's loss probability.
pub const FIG2_LOSS: f64 = 0.1;
/// Fig. 4's payloads (bytes): below and at the minimum SMSS.
pub const FIG4_PAYLOADS: [u32; 2] = [500, 536];
/// The segment size (the minimum SMSS, and ns-3's default).
pub const SMSS: u32 = 536;
/// The sender's socket buffer (ns-3's default).
pub const SEND_BUFFER: u64 = 131_072;
/// Fig. 4's congestion-window traces: this utilisation, over this many seconds.
pub const FIG4_TRACE: (f64, u64) = (0.5, 20);

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
             rate = {rate}\nsmss = {SMSS}\nsend_buffer = {SEND_BUFFER}\nnodelay = {nodelay}\n"
        ),
    };
    let link = |from: &str, to: &str, loss: f64| {
        format!(
            "[[link]]\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"1mbit\"\ndelay = \"1ms\"\n\
             queue = 100\nboth_ways = false\nloss = {loss}\n"
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

/// A point of an age-against-utilisation curve: means over seeds with 95 % confidence
/// half-widths (s).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The curve, e.g. "TCP" or "500 B, Nagle".
    pub series: String,
    /// Offered utilisation of the 1 Mbit/s links.
    pub utilisation: f64,
    /// Time-average age at the receiving application (s).
    pub age: f64,
    /// Its 95 % confidence half-width (s).
    pub age_ci: f64,
    /// Mean delay of an update, generation to delivery (s).
    pub delay: f64,
    /// Its 95 % confidence half-width (s).
    pub delay_ci: f64,
    /// Utilisation the delivered updates achieved (their payload's share of a link).
    pub delivered: f64,
    /// TCP: retransmission timeouts per run, mean over seeds.
    pub timeouts: f64,
}

/// Runs every (series, utilisation) over `seeds`; a point none of whose runs `cancel` let start
/// is left out.
fn sweep(
    series: &[(String, Transport, u32)],
    loss: f64,
    secs: u64,
    seeds: &[u64],
    threads: usize,
    cancel: &Cancel,
) -> Vec<Point> {
    let mut jobs = Vec::new();
    for (s, &(_, transport, payload)) in series.iter().enumerate() {
        for u in utilisations() {
            for &seed in seeds {
                jobs.push((s, transport, payload, u, seed));
            }
        }
    }
    let runs = parallel(jobs.clone(), threads, cancel, |(_, t, payload, u, seed)| {
        let r = scenario(t, payload, u, loss, secs, seed, 0)
            .build()
            .map(|s| s.run());
        r.ok().map(|r| measure(&r, payload))
    });
    let mut points = Vec::new();
    for (job, run) in jobs.chunks(seeds.len()).zip(runs.chunks(seeds.len())) {
        let done: Vec<Measure> = run.iter().flatten().flatten().copied().collect();
        if done.is_empty() {
            continue;
        }
        let (s, _, _, u, _) = job[0];
        let col = |f: fn(&Measure) -> f64| done.iter().map(f).collect::<Vec<f64>>();
        let (age, age_ci) = mean_ci95(&col(|m| m.age));
        let (delay, delay_ci) = mean_ci95(&col(|m| m.delay));
        let n = done.len() as f64;
        points.push(Point {
            series: series[s].0.clone(),
            utilisation: u,
            age,
            age_ci,
            delay,
            delay_ci,
            delivered: done.iter().map(|m| m.delivered).sum::<f64>() / n,
            timeouts: done.iter().map(|m| m.timeouts).sum::<f64>() / n,
        });
    }
    points
}

#[derive(Debug, Clone, Copy)]
struct Measure {
    age: f64,
    delay: f64,
    delivered: f64,
    timeouts: f64,
}

fn measure(r: &SimResult, payload: u32) -> Measure {
    let f = &r.flows[0];
    Measure {
        age: f.age.unwrap_or(f64::INFINITY),
        delay: f.mean_delay.unwrap_or(f64::INFINITY),
        delivered: f.rate * 8.0 * f64::from(payload) / 1e6,
        timeouts: f.tcp.as_ref().map_or(0.0, |t| t.timeouts as f64),
    }
}

/// Fig. 2: TCP and UDP, 536-byte updates, 10 % loss, every utilisation of [`utilisations`].
pub fn fig2(secs: u64, seeds: &[u64], threads: usize, cancel: &Cancel) -> Vec<Point> {
    let series = [
        (
            "TCP".to_string(),
            Transport::Tcp { nodelay: false },
            FIG2_PAYLOAD,
        ),
        ("UDP".to_string(), Transport::Udp, FIG2_PAYLOAD),
    ];
    sweep(&series, FIG2_LOSS, secs, seeds, threads, cancel)
}

/// The lowest age of `series` among `points`.
pub fn minimum<'a>(points: &'a [Point], series: &str) -> Option<&'a Point> {
    points
        .iter()
        .filter(|p| p.series == series)
        .min_by(|a, b| a.age.total_cmp(&b.age))
}

/// A congestion window over time: `(t s, window in segments of SMSS)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CwndTrace {
    /// The curve, e.g. "500 B, Nagle".
    pub series: String,
    /// The samples.
    pub points: Vec<(f64, f64)>,
}

/// Fig. 4's curves: (label, transport, payload) for both payloads, Nagle on and off.
fn fig4_series() -> Vec<(String, Transport, u32)> {
    let mut series = Vec::new();
    for nodelay in [false, true] {
        for payload in FIG4_PAYLOADS {
            let how = if nodelay { "nodelay" } else { "Nagle" };
            series.push((
                format!("{payload} B, {how}"),
                Transport::Tcp { nodelay },
                payload,
            ));
        }
    }
    series
}

/// Fig. 4: 500- and 536-byte updates over TCP without loss, Nagle on and off, every
/// utilisation; and each curve's congestion window over the first seconds at one utilisation
/// ([`FIG4_TRACE`], the first seed).
pub fn fig4(
    secs: u64,
    seeds: &[u64],
    threads: usize,
    cancel: &Cancel,
) -> (Vec<Point>, Vec<CwndTrace>) {
    let series = fig4_series();
    let points = sweep(&series, 0.0, secs, seeds, threads, cancel);
    let (u, trace_secs) = FIG4_TRACE;
    let seed = seeds.first().copied().unwrap_or(1);
    let traces = parallel(series, threads, cancel, |(name, t, payload)| {
        let trace_points = 10 * trace_secs as usize;
        let s = scenario(t, payload, u, 0.0, trace_secs, seed, trace_points);
        let r = s.build().map(|s| s.run());
        let points = r
            .ok()
            .and_then(|r| r.flows.into_iter().next())
            .and_then(|f| f.tcp)
            .map(|t| {
                let smss = f64::from(SMSS);
                t.cwnd_trace.iter().map(|&(t, w)| (t, w / smss)).collect()
            })
            .unwrap_or_default();
        CwndTrace {
            series: name,
            points,
        }
    });
    (points, traces.into_iter().flatten().collect())
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
