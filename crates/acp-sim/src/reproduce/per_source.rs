//! The per-source means of a multi-source run (`orbit`, `thesis-3-9`, `thesis-3-10`): each
//! source's age at the monitor and its own estimate, backlog, RTT, rate and throughput, and
//! Jain's fairness of the ages.

use super::harness::jain;
use crate::report::SimResult;

/// A run's means over its ACP sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerSource {
    /// The source's own estimate of its age from its ACKs (s): the papers' real-world age.
    pub est_age: f64,
    /// The true age at the monitor (s).
    pub age: f64,
    /// Updates sent and not yet acknowledged, time-averaged.
    pub backlog: f64,
    /// Mean RTT of the ACKs (s).
    pub rtt: f64,
    /// The update rate λ (updates/s).
    pub rate: f64,
    /// Throughput of fresh updates (bit/s, IP datagrams).
    pub throughput: f64,
    /// The sources' sum of it (bit/s).
    pub sum_throughput: f64,
    /// Jain's fairness index of the sources' estimated ages.
    pub jain_est: f64,
    /// Jain's fairness index of their true ages.
    pub jain: f64,
}

/// The per-source means of `r` (a source that never measured an age counts as infinitely old).
pub fn per_source(r: &SimResult) -> PerSource {
    let acp: Vec<_> = r.flows.iter().filter(|f| f.kind == "acp").collect();
    let n = acp.len().max(1) as f64;
    let mean = |v: &dyn Fn(&crate::report::FlowResult) -> Option<f64>| {
        acp.iter()
            .map(|f| v(f).unwrap_or(f64::INFINITY))
            .sum::<f64>()
            / n
    };
    let est: Vec<f64> = acp
        .iter()
        .map(|f| f.est_age.unwrap_or(f64::INFINITY))
        .collect();
    let ages: Vec<f64> = acp.iter().map(|f| f.age.unwrap_or(f64::INFINITY)).collect();
    let sum_throughput: f64 = acp.iter().map(|f| f.throughput_bps).sum();
    PerSource {
        est_age: mean(&|f| f.est_age),
        age: mean(&|f| f.age),
        backlog: mean(&|f| f.source_backlog),
        rtt: mean(&|f| f.mean_rtt),
        rate: mean(&|f| Some(f.send_rate)),
        throughput: sum_throughput / n,
        sum_throughput,
        jain_est: jain(&est),
        jain: jain(&ages),
    }
}
