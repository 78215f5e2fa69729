//! `acp bench`: pacing precision and monitor throughput.

use acp_runtime::bench;
use serde_json::json;

use crate::BenchCommand;

/// Runs one benchmark and prints its figures.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
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
