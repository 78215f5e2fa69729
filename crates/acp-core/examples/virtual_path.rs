//! Compares the controllers on the deterministic virtual path of `acp_core::harness`.
//!
//! ```text
//! cargo run --release -p acp-core --example virtual_path [SERVICE_MS DELAY_MS SECONDS]
//! ```
//! Defaults: service 1 ms, propagation 10 ms each way, 60 s (the first third is warm-up).
//! Prints, per controller, the true time-average age at the monitor, its ratio to the best Fixed
//! rate of a sweep (the oracle), the time-average number of updates at the bottleneck server, the
//! source's estimated backlog and the delivered update rate.

use std::process::ExitCode;
use std::time::Duration;

use acp_core::harness::{run, HarnessConfig, HarnessReport, VirtualPath};
use acp_core::{Acp, Controller, Fixed, Lazy, SourceConfig};

fn parse(args: &[String]) -> Result<(u64, u64, u64), String> {
    let num = |i: usize, default: u64| -> Result<u64, String> {
        match args.get(i) {
            None => Ok(default),
            Some(s) => s
                .parse::<u64>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("expected a positive whole number, got {s:?}")),
        }
    };
    if args.len() > 3 {
        return Err("usage: virtual_path [SERVICE_MS DELAY_MS SECONDS]".into());
    }
    Ok((num(0, 1)?, num(1, 10)?, num(2, 60)?))
}

fn row(r: &HarnessReport, oracle_age: f64) {
    println!(
        "{:<12} {:>9.3} {:>8.3} {:>9.3} {:>9.2} {:>10.1}",
        r.controller,
        r.age * 1e3,
        r.age / oracle_age,
        r.server_backlog,
        r.source.avg_backlog,
        r.delivery_rate
    );
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (service, delay, secs) = match parse(&args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let path = VirtualPath {
        service: Duration::from_millis(service),
        forward_delay: Duration::from_millis(delay),
        reverse_delay: Duration::from_millis(delay),
        queue_limit: 10_000,
    };
    let cfg = HarnessConfig {
        path: path.clone(),
        duration: Duration::from_secs(secs),
        warmup: Duration::from_secs(secs / 3),
        source: SourceConfig::default(),
        payload: 64,
        outages: vec![],
    };
    let capacity = 1000.0 / service as f64;
    let sweep: Vec<HarnessReport> = [0.2, 0.5, 0.8, 0.9, 0.95, 1.0, 1.05]
        .iter()
        .map(|f| run(Box::new(Fixed::new(f * capacity)), &cfg))
        .collect();
    let oracle = sweep
        .iter()
        .min_by(|a, b| a.age.total_cmp(&b.age))
        .map_or(f64::INFINITY, |r| r.age);
    println!(
        "virtual path: D/D/1 service {service} ms, propagation {delay} ms each way, {secs} s \
         (first {} s warm-up); analytic optimum {:.3} ms",
        secs / 3,
        path.optimal_age() * 1e3
    );
    println!(
        "{:<12} {:>9} {:>8} {:>9} {:>9} {:>10}",
        "controller", "age_ms", "/oracle", "server_B", "est_B", "rate_hz"
    );
    let controllers: Vec<Box<dyn Controller>> = vec![
        Box::new(Acp::plus()),
        Box::new(Acp::original(0.25)),
        Box::new(Lazy),
    ];
    for c in controllers {
        row(&run(c, &cfg), oracle);
    }
    for r in &sweep {
        row(r, oracle);
    }
    ExitCode::SUCCESS
}
