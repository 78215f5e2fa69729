//! One network model: the simulator's link and the relay's path model, given the same
//! configuration, seed, link name and arrivals, make the same decisions at the same instants.
//!
//! A scenario with one link named `client→target` (random loss, exponential service, jitter and
//! a schedule that overloads it for a while) carries a Poisson update stream. The simulator's
//! packet log gives each packet's arrival time, size and fate on that link; the same arrivals are
//! pushed through the relay's per-direction model (`acp_runtime::relay::PathModel`), built from
//! the scenario's own `LinkConfig` with the scenario's seed, and every departure time and every
//! drop must be identical — to the nanosecond, as both run the same `acp-netmodel` code with the
//! same random streams.

use std::collections::HashMap;

use acp_netmodel::{Streams, Time};
use acp_runtime::relay::{PathConfig, PathModel, TO_TARGET};
use acp_sim::report::PacketEvent;
use acp_sim::scenario::Scenario;

const SCENARIO: &str = r#"
format = 2
name = "one model"
seed = 42
duration = "20s"

[[link]]
from = "client"
to = "target"
both_ways = false
rate = "2mbit"
delay = "20ms"
queue = 40
service = "exponential"
loss = 0.02
jitter = "3ms"
# 1 Mbit/s (overloaded: queue drops) and 35 ms from 6 s to 12 s, with bursty loss from 9 s.
schedule = { step = [
  { at = "6s", rate = "1mbit", delay = "35ms" },
  { at = "9s", loss = { model = "gilbert-elliott", p = 0.05, r = 0.3 } },
  { at = "12s", rate = "2mbit", delay = "20ms", loss = 0.02 },
] }

[[flow]]
type = "updates"
name = "sensor"
process = "poisson"
rate = 1000
size = 150
path = ["client", "target"]
"#;

#[test]
fn the_relay_path_and_the_simulator_link_agree_packet_for_packet() {
    let mut scenario = Scenario::parse(SCENARIO).expect("scenario");
    scenario.config.packet_log = true;
    let link = scenario.topology.links[0].config.clone();
    let seed = scenario.config.seed;
    let duration = scenario.config.duration;
    let result = scenario.build().expect("builds").run();

    // Packets still in flight when the run ends are not logged: compare the ones that arrived
    // 2 s before the end (the longest stay is a full queue of 40 exponential services at
    // 1 Mbit/s plus 38 ms, far below that), which with every packet before them are complete.
    let cutoff = duration.as_nanos() as u64 - 2_000_000_000;
    let mut sim: Vec<&PacketEvent> = result
        .packet_log
        .iter()
        .filter(|e| e.link == TO_TARGET && e.arrived_ns < cutoff)
        .collect();
    sim.sort_by_key(|e| e.seq);
    assert!(
        sim.windows(2).all(|w| w[0].arrived_ns < w[1].arrived_ns),
        "one Poisson flow: arrivals in sequence order, no ties"
    );

    let mut path: PathModel<u64> = PathModel::new(
        &PathConfig {
            link,
            cross_bps: 0.0,
        },
        &Streams::new(seed),
        TO_TARGET,
        Time::ZERO,
    );
    // Drive it as the relay's worker does: look at each arrival (and at the end), collect what
    // has left by then.
    let mut departed = HashMap::new();
    let mut admitted = HashMap::new();
    let ends = sim.iter().map(|e| (Some(*e), e.arrived_ns));
    for (event, at) in ends.chain([(None, duration.as_nanos() as u64)]) {
        let now = Time::from_nanos(at);
        path.handle_timeout(now);
        while let Some(d) = path.poll_departure(now) {
            departed.insert(d.parcel.item, d.at.as_nanos());
        }
        if let Some(e) = event {
            admitted.insert(e.seq, path.arrive(now, e.seq, e.bytes, 0, 0).is_ok());
        }
    }
    let relay: Vec<(u64, Option<u64>)> = sim
        .iter()
        .map(|e| (e.seq, departed.get(&e.seq).copied()))
        .collect();
    assert!(
        relay.iter().all(|(seq, d)| d.is_none() || admitted[seq]),
        "only admitted packets leave"
    );
    let sim: Vec<(u64, Option<u64>)> = sim.iter().map(|e| (e.seq, e.departed_ns)).collect();

    let dropped = sim.iter().filter(|(_, d)| d.is_none()).count();
    println!(
        "{} packets compared, {dropped} dropped by the simulator's link",
        sim.len()
    );
    // The run exercised what it claims to: thousands of packets, drops by loss and a full queue.
    assert!(sim.len() > 15_000, "{}", sim.len());
    assert!(dropped > 500, "{dropped}");
    let c = path.take_counters();
    assert!(c.dropped_loss > 0 && c.dropped_queue > 0, "{c:?}");
    assert_eq!(c.dropped_loss + c.dropped_queue, dropped as u64);
    if let Some(i) = (0..sim.len()).find(|&i| sim[i] != relay[i]) {
        panic!(
            "first difference at packet {i}: simulator {:?}, relay model {:?}",
            sim[i], relay[i]
        );
    }
}
