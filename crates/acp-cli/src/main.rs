//! `acp`: the Age Control Protocol on the command line.
//!
//! Subcommands: `monitor` (receive and ACK updates), `source` (send updates under a controller),
//! `relay` (emulate a bottleneck path for UDP on one machine), `demo` (all of it on loopback),
//! `bench` (pacing precision, monitor throughput), `sim`, `sweep` and `reproduce` (the simulator). Human output by default, `--json` for machines;
//! a bad argument prints one line and exits with status 2.

mod bench;
mod charts;
mod demo;
mod monitor;
mod relay;
mod reproduce;
mod signals;
mod sim;
mod source;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use acp_core::controller::ControllerKind;

#[derive(Debug, Parser)]
#[command(
    name = "acp",
    version,
    about = "Age Control Protocol: fresh status updates over UDP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Receive updates from many sources, ACK each one, report freshness per source.
    Monitor(MonitorArgs),
    /// Send status updates to a monitor at the rate a controller chooses.
    Source(SourceArgs),
    /// Emulate a bottleneck path for UDP between sources and a monitor (no root needed).
    Relay(RelayArgs),
    /// Run a monitor, a relay and four sources on loopback and compare them.
    Demo(DemoArgs),
    /// Measure the runtime.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Simulate a scenario file (deterministic for a given seed).
    Sim(SimArgs),
    /// Find a scenario's age-optimal fixed rate (the oracle), on all cores.
    Sweep(SweepArgs),
    /// Reproduce a result of the ACP+ paper: a table on stdout, plots and CSV on disk.
    Reproduce(ReproduceArgs),
}

#[derive(Debug, Args)]
struct SimArgs {
    /// The scenario (TOML, see docs/SIMULATOR.md).
    file: PathBuf,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the full result as JSON.
    #[arg(long)]
    json: bool,
    /// Write result.json, flows.csv, backlog.csv and age plots (PNG, SVG) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SweepArgs {
    /// The scenario (TOML).
    file: PathBuf,
    /// Rates to try (updates/s): a list `10,20,50` or a range `START:STOP:STEP`.
    #[arg(long)]
    rates: String,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the result as JSON (and no progress bar).
    #[arg(long)]
    json: bool,
    /// Write sweep.csv and the age-against-rate plot (PNG, SVG) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Reproduction {
    /// Age against λ: three M/M/1 queues and the tandem, simulation over analysis.
    Fig7,
    /// Net A–E: oracle backlog per hop (Fig. 8) and ACP+, ACP, Lazy against the oracle.
    Table1,
}

#[derive(Debug, Args)]
struct ReproduceArgs {
    /// Which result.
    which: Reproduction,
    /// Directory for plots and CSV (a subdirectory per result).
    #[arg(long, default_value = "acp-out")]
    out: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fig7: simulated updates per point.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1000..))]
    updates: u64,
    /// table1: simulated seconds per run.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(10..))]
    secs: u64,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct MonitorArgs {
    /// Address to listen on, e.g. 0.0.0.0:7000 or [::]:7000.
    #[arg(long)]
    listen: SocketAddr,
    /// Machine-readable output: periodic and final reports as JSON lines.
    #[arg(long)]
    json: bool,
    /// Most sources tracked at once.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_sessions: u64,
    /// Write every fresh update to stdout as a JSON line (reports then go to stderr).
    #[arg(long)]
    print_updates: bool,
    /// Declare the sources' clocks synchronised with this host's (same machine or good NTP), so
    /// that true age is measured.
    #[arg(long)]
    clocks_synced: bool,
    /// Seconds between periodic reports.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    report_every: Duration,
}

#[derive(Debug, Args)]
struct SourceArgs {
    /// The monitor's (or a relay's) address.
    #[arg(long)]
    to: SocketAddr,
    /// acp+ | acp[:KAPPA] | lazy | fixed:RATE (updates/s).
    #[arg(long, default_value = "acp+")]
    controller: ControllerKind,
    /// Bytes of synthetic payload per update.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(0..=65_463))]
    payload_size: u64,
    /// Stop after this long, e.g. 30s or 2m.
    #[arg(long, value_parser = parse_duration, conflicts_with = "count")]
    duration: Option<Duration>,
    /// Stop after this many updates.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Push mode: each line on stdin is an update; only the freshest unsent one is kept.
    #[arg(long)]
    push: bool,
    /// Highest rate the source may use (updates/s), e.g. the sensing rate.
    #[arg(long, default_value_t = 1_000_000.0)]
    max_rate: f64,
    /// Machine-readable output: status and summary as JSON lines.
    #[arg(long)]
    json: bool,
    /// Time between status lines.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    report_every: Duration,
}

#[derive(Debug, Args)]
struct RelayArgs {
    /// Address sources send to.
    #[arg(long)]
    listen: SocketAddr,
    /// Address to forward to (the monitor, or the next relay).
    #[arg(long)]
    to: SocketAddr,
    /// Bottleneck rate, e.g. 2mbit, 500kbit.
    #[arg(long, value_parser = parse_rate)]
    rate: f64,
    /// One-way propagation delay, e.g. 20ms.
    #[arg(long, value_parser = parse_duration)]
    delay: Duration,
    /// Queue limit in packets (including the one being sent).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    queue: u64,
    /// Random loss probability, 0 to 1.
    #[arg(long, default_value_t = 0.0, value_parser = parse_probability)]
    loss: f64,
    /// Mean rate of Poisson cross traffic sharing the bottleneck, e.g. 500kbit.
    #[arg(long, value_parser = parse_rate)]
    cross: Option<f64>,
    /// Seed of the loss and cross-traffic generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// How long the sources run, e.g. 20s.
    #[arg(long, default_value = "20s", value_parser = parse_duration)]
    duration: Duration,
    /// Print only the final result, as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Simulator speed: events/s on one core, and the wall time of 48 ACP+ sources over six
    /// hops for 300 simulated seconds.
    Sim {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Send-time precision of the source driver at 1,000 and 10,000 updates/s.
    Pacing {
        /// Measurement time per rate.
        #[arg(long, default_value = "5s", value_parser = parse_duration)]
        duration: Duration,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Updates/s the monitor server handles, next to a minimal batched UDP echo server.
    Monitor {
        /// Measurement time per server and round.
        #[arg(long, default_value = "2s", value_parser = parse_duration)]
        duration: Duration,
        /// Rounds (echo and monitor back to back, alternating order); medians are reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
        rounds: u64,
        /// Synthetic sources.
        #[arg(long, default_value_t = 1000)]
        sessions: u64,
        /// Datagrams kept in flight by the load generator.
        #[arg(long, default_value_t = 256)]
        window: usize,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    acp_core::units::parse_duration(s).map_err(|e| e.to_string())
}

fn parse_rate(s: &str) -> Result<f64, String> {
    acp_core::units::parse_rate(s).map_err(|e| e.to_string())
}

fn parse_probability(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("expected a probability between 0 and 1, got {s:?}"))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One clear line: clap's first line names the problem; usage follows on --help.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("error: invalid arguments");
            // "…were not provided:" names the arguments on the next line; keep them on this one.
            match (first.ends_with(':'), lines.next()) {
                (true, Some(what)) => eprintln!("{first} {what}"),
                _ => eprintln!("{first}"),
            }
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.command {
        Command::Monitor(a) => monitor::run(a),
        Command::Source(a) => source::run(a),
        Command::Relay(a) => relay::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Sim(a) => sim::run(a),
        Command::Sweep(a) => sim::sweep(a),
        Command::Reproduce(a) => reproduce::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
