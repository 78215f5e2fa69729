//! `acp bench`: pacing precision and monitor throughput.

use std::time::Instant;

use acp_runtime::bench;
use acp_sim::reproduce::queue_chain;
use acp_sim::scenario::Scenario;
use serde_json::json;

use crate::BenchCommand;

/// Runs one benchmark and prints its figures.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Sim { json } => sim(json)?,
        BenchCommand::Pacing { duration, json } => {
            for rate in [1_000.0, 10_000.0] {
                let r = bench::pacing(rate, duration)?;
                if json {
                    println!(
                        "{}",
                        json!({"rate": r.rate, "samples": r.samples, "p50_us": r.p50_us,
                               "p99_us": r.p99_us, "max_us": r.max_us})
                    );
                } else {
                    println!(
                        "pacing at {:>6} updates/s: {} sends, |error| p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                        r.rate, r.samples, r.p50_us, r.p99_us, r.max_us
                    );
                }
            }
        }
        BenchCommand::Monitor {
            duration,
            sessions,
            window,
            json,
        } => {
            let r = bench::monitor(sessions, window, duration)?;
            let ratio = r.monitor.replies_per_sec / r.echo.replies_per_sec;
            if json {
                println!(
                    "{}",
                    json!({"sessions": sessions, "window": window,
                           "monitor_acks_per_sec": r.monitor.replies_per_sec,
                           "monitor_handled_per_sec": r.monitor_handled_per_sec,
                           "echo_replies_per_sec": r.echo.replies_per_sec,
                           "ratio": ratio})
                );
            } else {
                println!("load: {sessions} synthetic sources, {window} datagrams in flight, one generator thread");
                println!(
                    "batched UDP echo (recvmmsg/sendmmsg, 20-byte replies): {:>9.0} replies/s",
                    r.echo.replies_per_sec
                );
                println!(
                    "acp monitor server:                                  {:>9.0} ACKs/s ({:.0} updates/s handled)",
                    r.monitor.replies_per_sec, r.monitor_handled_per_sec
                );
                println!("monitor / echo: {:.1} %", ratio * 100.0);
            }
        }
    }
    Ok(())
}

/// The 48-source, six-hop scenario shipped in `scenarios/`.
const SIX_HOPS_48: &str = include_str!("../../../scenarios/six_hops_48.toml");

fn sim(json_out: bool) -> anyhow::Result<()> {
    // Events/s: an M/M/1 queue at ρ = 0.8, 2 million updates, on this thread only.
    let t = Instant::now();
    let mm1 = queue_chain(0.8, &[1.0], 2_000_000, 1);
    let mm1_wall = t.elapsed().as_secs_f64();
    let scenario = Scenario::parse(SIX_HOPS_48)?;
    let t = Instant::now();
    let big = scenario.build()?.run();
    let big_wall = t.elapsed().as_secs_f64();
    let rate = |events: u64, wall: f64| events as f64 / wall;
    if json_out {
        println!(
            "{}",
            json!({"mm1_events": mm1.events, "mm1_events_per_sec": rate(mm1.events, mm1_wall),
                   "six_hops_48_events": big.events, "six_hops_48_wall_s": big_wall,
                   "six_hops_48_events_per_sec": rate(big.events, big_wall)})
        );
    } else {
        println!(
            "M/M/1, 2M updates: {} events in {:.2} s = {:.2} M events/s (one core)",
            mm1.events,
            mm1_wall,
            rate(mm1.events, mm1_wall) / 1e6
        );
        println!(
            "48 ACP+ sources, 6 hops, 300 simulated s: {} events in {:.2} s = {:.2} M events/s",
            big.events,
            big_wall,
            rate(big.events, big_wall) / 1e6
        );
    }
    Ok(())
}
