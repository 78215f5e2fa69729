//! The network of the papers' real-world runs with many sources: stations behind one WiFi
//! access point, then a long path of equal point-to-point hops to a monitor far away (the ACP+
//! paper's ORBIT testbed and AWS path, §VIII; the thesis's campus access and Internet path,
//! §3.9), and the per-source means of a run over it or over the access network of
//! [`super::access`] (`orbit`, `thesis-3-9`, `thesis-3-10`).
//!
//! The files `scenarios/paper/orbit.toml` and `scenarios/paper/thesis_3_9.toml` are points of
//! [`scenario_text`] (tested): what they state and derive is written there and in
//! `docs/SIMULATOR.md`.

use acp_core::controller::ControllerKind;

use super::harness::jain;
use crate::report::SimResult;
use crate::scenario::Scenario;

/// A WiFi access and the long path behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LongPath {
    /// The 802.11g rate (Mbit/s).
    pub wifi_mbit: f64,
    /// The AP serves its stations in turn (`ap_queue = "per-station"`) instead of one FIFO.
    pub ap_per_station: bool,
    /// Point-to-point hops from the AP to the monitor.
    pub hops: usize,
    /// Each hop's propagation delay, each way (ms).
    pub hop_delay_ms: f64,
    /// Each hop's rate (Mbit/s).
    pub hop_mbit: f64,
    /// The monitor's node.
    pub monitor: &'static str,
    /// Update payload (bytes).
    pub payload: u32,
}

/// The scenario file of `sources` stations of `net` each running `controller` to the monitor
/// for `secs` seconds (the first tenth not measured): stations `node#k` in a 20 × 20 m² area
/// without shadowing around the AP `ap`, 500-frame WiFi queues, hops `ap → r1 → … → monitor`
/// with 100-packet queues.
pub fn scenario_text(
    net: &LongPath,
    controller: ControllerKind,
    sources: usize,
    secs: u64,
    seed: u64,
) -> String {
    let mut nodes = vec!["ap".to_string()];
    nodes.extend((1..net.hops).map(|k| format!("r{k}")));
    nodes.push(net.monitor.into());
    let mut text = format!(
        "format = 2\nname = \"{sources} {controller} sources, {} hops\"\nseed = {seed}\n\
         duration = \"{secs}s\"\nwarmup = \"{}s\"\n\n[[wifi]]\nap = \"ap\"\nstations = \"node\"\n\
         count = {sources}\nstandard = \"g\"\nrate = \"{}mbit\"\narea = [20.0, 20.0]\n\
         queue = 500\nap_queue = \"{}\"\n",
        net.hops,
        secs / 10,
        net.wifi_mbit,
        if net.ap_per_station {
            "per-station"
        } else {
            "fifo"
        },
    );
    for pair in nodes.windows(2) {
        text += &format!(
            "\n[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"{}mbit\"\ndelay = \"{}ms\"\nqueue = 100\n",
            pair[0], pair[1], net.hop_mbit, net.hop_delay_ms
        );
    }
    let mut path = vec!["node".to_string()];
    path.extend(nodes);
    text + &format!(
        "\n[[flow]]\ntype = \"acp\"\nname = \"node\"\ncount = {sources}\n\
         controller = \"{controller}\"\npayload = {}\npath = {path:?}\n",
        net.payload
    )
}

/// [`scenario_text`] parsed.
pub fn scenario(
    net: &LongPath,
    controller: ControllerKind,
    sources: usize,
    secs: u64,
    seed: u64,
) -> Scenario {
    match Scenario::parse(&scenario_text(net, controller, sources, secs, seed)) {
        Ok(s) => s,
        Err(e) => unreachable!("the long path's scenario is well formed: {e}"),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_path_has_its_hops_stations_and_flows() {
        let net = LongPath {
            wifi_mbit: 12.0,
            ap_per_station: true,
            hops: 30,
            hop_delay_ms: 3.4,
            hop_mbit: 200.0,
            monitor: "aws",
            payload: 1024,
        };
        let s = scenario(&net, ControllerKind::AcpPlus, 4, 30, 2);
        assert_eq!(s.flows.len(), 4);
        assert!(s.flows.iter().all(|f| f.path.len() == 32));
        assert_eq!(s.flows[3].path[0], "node#4");
        assert_eq!(s.flows[0].path[31], "aws");
        assert_eq!(s.config.seed, 2);
    }
}
