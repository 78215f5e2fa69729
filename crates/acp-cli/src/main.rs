//! `acp`: the Age Control Protocol on the command line.
//!
//! Subcommands: `monitor` (receive and ACK updates), `source` (send updates under a controller),
//! `relay` (emulate a bottleneck path for UDP on one machine), `demo` (all of it on loopback),
//! `bench` (pacing precision, monitor throughput), `sim`, `sweep` and `reproduce` (the simulator),
//! `completions` and `manpage` ([`docgen`]). `monitor` and `source` also read their flags from a
//! TOML file (`--config`, [`config`]). Human output by default, `--json` for machines;
//! a bad argument prints one line and exits with status 2. Output goes through [`output`]: a
//! closed stdout never panics (one-shot commands stop with status 0, long-running ones shut down).

// The argument structs' doc comments are clap's `--help` text, written for a terminal: brackets
// there (`[::]:7000`, `acp[:KAPPA]`, `[[step]]`) are not rustdoc links, nor `<session>` a tag.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod aggregation_feed;
mod bench;
mod charts;
mod config;
mod demo;
mod docgen;
mod estimator;
mod flood;
mod keys;
mod lab;
mod logging;
mod metrics;
mod metrics_flood;
mod monitor;
mod output;
mod pathargs;
mod progress;
mod publish;
mod relay;
mod reproduce;
mod signals;
mod sim;
mod source;
mod source_tcp;
mod timestamp;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use acp_core::controller::ControllerKind;
use acp_netmodel::{Discipline, Jitter, LossModel, Schedule, Trace};
use acp_runtime::resolve::{self, Purpose};

use pathargs::FromFile;

#[derive(Debug, Parser)]
#[command(
    name = "acp",
    version,
    about = "Age Control Protocol: fresh status updates over UDP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    log: logging::LogArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Receive updates from many sources, ACK each one, report freshness per source.
    Monitor(MonitorArgs),
    /// Send status updates to a monitor at the rate a controller chooses.
    Source(SourceArgs),
    /// Emulate a bottleneck path for UDP between sources and a monitor (no root needed).
    Relay(Box<RelayArgs>),
    /// Compare controllers (Seek, ACP+, Lazy) one after another on one emulated path on loopback.
    Demo(DemoArgs),
    /// Measure the runtime.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Simulate a scenario file (deterministic for a given seed).
    Sim(SimArgs),
    /// Run a scenario file on real network stacks: namespaces, TUN links, kernel TCP (root).
    Lab(lab::LabArgs),
    /// Find a scenario's age-optimal fixed rate (the oracle), on all cores.
    Sweep(SweepArgs),
    /// Reproduce a result of the ACP+ paper: a table on stdout, plots and CSV on disk.
    Reproduce(ReproduceArgs),
    /// Train the WiFi aggregation-level and bottleneck estimators on simulator data.
    #[command(subcommand)]
    Estimator(estimator::EstimatorCommand),
    /// Print a new pre-shared key as a key-file line (`ID HEX`) for --psk-file.
    Keygen(KeygenArgs),
    /// Print a shell completion script (e.g. `acp completions bash > /etc/bash_completion.d/acp`).
    Completions(docgen::CompletionsArgs),
    /// Print the man page acp(1), or write it and one page per subcommand to a directory.
    Manpage(docgen::ManpageArgs),
}

/// The subcommands that take `--config FILE` and `--check-config`.
const CONFIGURABLE: [&str; 2] = ["monitor", "source"];

/// The whole command line: the derive definition with the config-file options added.
fn command() -> clap::Command {
    config::enable(Cli::command(), &CONFIGURABLE)
}

#[derive(Debug, Args)]
struct KeygenArgs {
    /// The key's id (0–255), carried in every sealed packet so that keys can be rotated.
    #[arg(long, default_value_t = 1)]
    id: u8,
}

#[derive(Debug, Args)]
struct SimArgs {
    /// The scenario (TOML, see docs/SIMULATOR.md).
    #[arg(value_parser = parse_input_file)]
    file: PathBuf,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Run this long instead of the scenario's duration (e.g. 70s), as `acp lab --duration`.
    #[arg(long, value_parser = parse_run_time)]
    duration: Option<Duration>,
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
    #[arg(value_parser = parse_input_file)]
    file: PathBuf,
    /// Rates to try (updates/s): a list `10,20,50` or a range `START:STOP:STEP`.
    #[arg(long)]
    rates: String,
    /// Override the scenario's (first) seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Run every rate with this many seeds (the scenario's seed and the next ones) and report
    /// the mean age with its 95 % confidence interval.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    seeds: u64,
    /// Print the result as JSON (and no progress bar).
    #[arg(long)]
    json: bool,
    /// Write sweep.csv and the age-against-rate plot (PNG, SVG) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep every run's result in the result store in this directory, and take the runs it
    /// already holds from it instead of running them again (docs/CLUSTER.md).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ReproduceArgs {
    /// Which result.
    #[arg(value_parser = reproduce::names())]
    which: String,
    /// Directory for plots and CSV (a subdirectory per result).
    #[arg(long, default_value = "acp-out")]
    out: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fig7: simulated updates per point (default: 1,000,000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1000..))]
    updates: Option<u64>,
    /// fig2, fig4, table1[-per-hop], dd1, fig15, fig3-16, contention-tcp, core-tcp, orbit,
    /// thesis-3-9, thesis-3-10, fairness, coexistence, no-tcp: seconds per run (default: 300; 60
    /// for dd1; 30 for core-tcp; 600 for thesis-3-10; 120 for fairness; 200 for coexistence and
    /// no-tcp).
    /// thesis-4-8, thesis-4-10, thesis-4-15: 40, the first half warm-up; agg-age: 60.
    /// thesis-4-5: 80 at Δ = 0.5 s (as many slots at the other Δ), the second half measured.
    /// thesis-4-7: 40, the change at 20. thesis-5-7: 60, the second half measured.
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..))]
    secs: Option<u64>,
    /// fig2, fig4, fig15, fig3-16, fig3-15[-poisson], contention-tcp, controllers, core-tcp, orbit,
    /// thesis-3-9, thesis-3-10, fairness, coexistence, no-tcp: seeds per point (--seed and the
    /// next ones); a seed places the WiFi stations and drives every random element (default: 5;
    /// 3 for controllers, orbit, the thesis's, fairness, coexistence and no-tcp; 1 for core-tcp
    /// and fig3-15).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    seeds: Option<u64>,
    /// contention-tcp, orbit, thesis-3-9, coexistence, no-tcp: only these numbers of clients
    /// (sources), comma-separated (contention-tcp: up to 5 low contention, more high;
    /// coexistence: ACP flows beside 1, 2 and 5 TCP; no-tcp: ACP flows alone on 6 Mbit/s;
    /// default: the papers' counts).
    /// thesis-4-8, agg-age: numbers of stations; thesis-4-10: numbers of legacy stations of ten
    /// (0–10). At least 1 except for thesis-4-10.
    #[arg(long, value_name = "N,N", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(0..=500))]
    clients: Vec<u64>,
    /// fig15, fig3-16, orbit, thesis-3-9, thesis-3-10, coexistence, no-tcp: update payload in
    /// bytes (default: 560 for fig15 and fig3-16, the size the papers' RTTs imply, 1024 the size
    /// of their real-world experiments; 1024 for orbit, thesis-3-10, coexistence and no-tcp; 700
    /// for thesis-3-9, the size its numbers imply).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=9000))]
    payload: Option<u32>,
    /// controllers, fairness: only these scenarios (ids, comma-separated; fairness: equal-2,
    /// equal-4, equal-8, equal-16, join-leave, rtt-1:4; default: all of them).
    /// thesis-4-5: K0=0.5 … K0=10, K0_585=1|10, delta_s=0.25 … delta_s=3, changing_delta_s=0.25
    /// … changing_delta_s=3. thesis-4-7: streams=1, queue=500|100, mcs_before=7|8.
    /// thesis-5-7: K1=…, K2=…, K2_mcs4=…, mcs=2|4|9, controller=agg|agg-io, stations=3,
    /// stations_per_source=3, table5_1=3.
    #[arg(long, value_name = "ID,ID", value_delimiter = ',')]
    scenarios: Vec<String>,
    /// controllers, orbit, thesis-3-9, fairness, coexistence, no-tcp: the controllers to
    /// evaluate, comma-separated (seek | acp+ | acp[:KAPPA] | lazy | fixed:RATE; default:
    /// controllers seek,acp+,acp:0.25,lazy; orbit, coexistence, no-tcp acp+,seek; thesis-3-9
    /// acp,acp:2,lazy,acp+,seek; fairness seek,acp+,lazy).
    /// agg-age: default seek,acp+,agg:32 (K₀ = 1/n),agg-io:5,32.
    /// The other reproductions run their own controllers and refuse this option.
    #[arg(long, value_name = "NAME,NAME", value_delimiter = ',')]
    controllers: Vec<ControllerKind>,
    /// controllers: quarter-length runs (a smoke test, not a result).
    #[arg(long)]
    quick: bool,
    /// controllers: evaluate on N random paths drawn with --seed (the held-out evaluation,
    /// docs/SIMULATOR.md "Random paths"; one run seed per path unless --seeds) instead of the
    /// hand-made scenarios.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    random: Option<u64>,
    /// fig15, fig3-16, contention-tcp, thesis-3-10: the whole-medium WiFi reception model (one
    /// collision decision for the medium, Friis reference loss) instead of per-receiver SINR
    /// reception with capture and placements the AP hears (docs/SIMULATOR.md).
    #[arg(long)]
    whole_medium: bool,
    /// core-tcp: run in the simulator even where the lab could run.
    #[arg(long)]
    sim: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Print the tables as markdown (as docs/ shows them).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Keep every run's result in the result store in this directory, and take the runs it
    /// already holds from it instead of running them again (docs/CLUSTER.md).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct MonitorArgs {
    /// Address to listen on, HOST:PORT, e.g. 0.0.0.0:7000, [::]:7000 or localhost:7000 (a name
    /// listens on the first of its addresses this host can bind).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_listen)]
    listen: SocketAddr,
    /// Machine-readable output: periodic and final reports as JSON lines.
    #[arg(long)]
    json: bool,
    /// Most sources tracked at once.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_sessions: u64,
    /// Write fresh updates to stdout as JSON lines (reports then go to stderr); with
    /// --clocks-synced each has its age on arrival. Printing never holds up the monitor: when
    /// stdout falls behind, only the latest unprinted update of each source is kept (at most
    /// --max-sessions updates and 64 MiB of payload), and the summary counts those superseded or
    /// dropped before they could be printed.
    #[arg(long)]
    print_updates: bool,
    /// Declare the sources' clocks synchronised with this host's (same machine or good NTP), so
    /// that true age is measured.
    #[arg(long)]
    clocks_synced: bool,
    /// Time between periodic reports (at least 10ms). If stdout is closed (e.g. `| head`), the
    /// monitor shuts down as on SIGTERM and writes its summary to stderr.
    #[arg(long, default_value = "5s", value_parser = parse_report_interval)]
    report_every: Duration,
    /// Pre-shared keys (`ID HEX` lines, see `acp keygen`): accept only updates sealed with one
    /// of them, seal every ACK, and admit new sources only after a cookie round trip.
    #[arg(long, value_name = "FILE", value_parser = keys::parse_psk_file)]
    psk_file: Option<acp_core::seal::Keyring>,
    /// Most of the session table one network (IPv4 /24, IPv6 /48) may hold, as a fraction in
    /// (0, 1]; 1 turns the limit off (e.g. every source behind one NAT).
    #[arg(long, default_value_t = 0.25, value_parser = parse_fraction)]
    max_prefix_share: f64,
    /// Occupancy of the session table, as a fraction in (0, 1], from which a new source must
    /// echo a cookie (prove its address) before it gets state.
    #[arg(long, default_value_t = 0.5, value_parser = parse_fraction)]
    cookie_threshold: f64,
    /// Sessions listed in each periodic report, besides the totals: all of them, by address, when
    /// there are at most this many; otherwise this many silent the longest (time since their
    /// latest update), longest first, so a large deployment's report stays short and shows the
    /// sources to look at. 0 lists none (reports then cost the monitor nothing). The final
    /// summary always lists every session.
    #[arg(long, default_value_t = 20)]
    report_sessions: usize,
    /// Also send fresh updates to unix:PATH (a Unix stream socket the monitor listens on; each of
    /// up to 64 clients gets JSON lines through its own latest-value mailbox of at most 1 MiB of
    /// payload, and one that reads nothing for 10 s is disconnected) or
    /// mqtt://HOST[:PORT][/PREFIX] or mqtts:// (TLS) (retained, to PREFIX/<session>/update, with
    /// each report's statistics to PREFIX/<session>/stats and the monitor's state to
    /// PREFIX/status; reconnects; see docs/OUTPUTS.md). Repeatable. No sink holds up the
    /// monitor: one that falls behind gets only the latest update of each session.
    #[arg(long, value_name = "URL", value_parser = publish::parse_target)]
    publish: Vec<publish::Target>,
    #[command(flatten)]
    mqtt: publish::mqtt_connect::MqttArgs,
    /// Set SO_REUSEPORT on the UDP socket, so that several monitor processes can listen on one
    /// port; the kernel pins each source (address and port) to one of them (docs/SCALING.md).
    /// Implies --no-tcp.
    #[arg(long)]
    reuse_port: bool,
    /// Accept only UDP. By default the monitor also accepts updates over TCP on the same port
    /// (from `acp source --transport tcp`), with the same statistics and true age.
    #[arg(long)]
    no_tcp: bool,
    /// The receive buffer of each TCP connection (bytes; it bounds TCP's window, as the rmem
    /// settings of the ACP+ paper's TCP runs); the kernel autotunes it if not given.
    #[arg(long, value_name = "BYTES", conflicts_with = "no_tcp", value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    tcp_recv_buffer: Option<u64>,
    /// Most TCP connections open at once (one network, /24 or /48, holds at most
    /// --max-prefix-share of them). Each is a file descriptor: the monitor needs this many plus
    /// 64, raises its soft limit that far if it can and warns at start if it cannot
    /// (deploy/acp-monitor.service sets LimitNOFILE=1088 for the default).
    #[arg(long, value_name = "N", default_value_t = 1024, conflicts_with = "no_tcp", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_tcp_connections: u64,
    /// Serve Prometheus metrics over HTTP at http://ADDR/metrics, e.g. 127.0.0.1:9464 (port 0
    /// picks one, named on stderr): the totals, and series per session for at most
    /// --metrics-sessions sessions. See docs/METRICS.md.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Sessions given their own series in --metrics: all of them when there are at most this
    /// many, otherwise this many silent the longest, which bounds the series a scrape holds
    /// whatever the number of sources; `all` lists every session (as many series as sources).
    /// 0 lists none, and a scrape then reads only the totals.
    #[arg(long, value_name = "N|all", default_value = "20", value_parser = parse_metrics_sessions, requires = "metrics")]
    metrics_sessions: usize,
    /// Report WiFi aggregation levels measured elsewhere (e.g. from MAC timestamps) in the ACKs,
    /// for `acp source --controller agg:…`: one line per slot, `LEVEL [PHY_MBPS [DELAY_MS]]`,
    /// from FILE or `-` (stdin). See docs/AGGREGATION.md.
    #[arg(long, value_name = "FILE|-", group = "aggregation")]
    aggregation_from: Option<std::path::PathBuf>,
    /// Estimate the WiFi aggregation level from the updates' receive times with this trained
    /// model (`acp estimator train --out FILE`) and report it in the ACKs, one report per slot.
    /// See docs/AGGREGATION.md.
    #[arg(long, value_name = "FILE", group = "aggregation")]
    aggregation_model: Option<std::path::PathBuf>,
    /// Slot length for --aggregation-from (a line is reported no sooner than one slot after the
    /// previous one) or --aggregation-model (one report per slot), in ms.
    #[arg(long, value_name = "MS", default_value_t = 500, requires = "aggregation", value_parser = clap::value_parser!(u16).range(1..))]
    aggregation_slot: u16,
}

#[derive(Debug, Args)]
struct SourceArgs {
    /// The monitor's (or a relay's) address, HOST:PORT, e.g. monitor.example.net:7200 (the
    /// first of the host's addresses, IPv6 or IPv4, this host can send to).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_peer)]
    to: SocketAddr,
    /// seek | acp+ | acp[:KAPPA] | lazy | fixed:RATE (updates/s) | agg[:NEPS[,K0[,DELTA]]] |
    /// agg-io[:TBAR_MS[,NBAR[,K1[,K2]]]] | agg-air:LEAD_MBPS[,NEPS[,K0[,DELTA]]]. `acp` alone is
    /// κ = 1, the thesis' setting for the Internet; its simulations (and our reproductions) use
    /// acp:0.25. Results label ACP with its κ, e.g. acp(κ=0.25). The agg forms set the rate from
    /// the aggregation levels the monitor reports (`acp monitor --aggregation-from`;
    /// docs/AGGREGATION.md). Default: seek.
    #[arg(long)]
    controller: Option<ControllerKind>,
    /// Bytes of synthetic payload per update.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(0..=65_463))]
    payload_size: u64,
    /// Stop after this long, e.g. 30s or 2m.
    #[arg(long, value_parser = parse_run_time, conflicts_with = "count")]
    duration: Option<Duration>,
    /// Stop after this many updates.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Push mode: each line on stdin is an update; only the freshest unsent one is kept. A line
    /// longer than an update can carry (65463 bytes) is reported on stderr and skipped.
    #[arg(long)]
    push: bool,
    /// Highest rate the source may use (updates/s), e.g. the sensing rate; within the
    /// supported 0.1–1000000.
    #[arg(long, default_value_t = 1_000_000.0, value_parser = parse_max_rate)]
    max_rate: f64,
    /// Machine-readable output: status and summary as JSON lines.
    #[arg(long)]
    json: bool,
    /// Time between status lines (at least 10ms). If stdout is closed, the source stops as on
    /// SIGTERM and writes its summary to stderr.
    #[arg(long, default_value = "1s", value_parser = parse_report_interval)]
    report_every: Duration,
    /// Differentiated-services code point (0–63) to mark the datagrams with (46 = expedited
    /// forwarding).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=63))]
    dscp: u8,
    /// Pre-shared key file (`ID HEX` lines, see `acp keygen`): seal every update with its first
    /// key and believe only ACKs sealed with it.
    #[arg(long, value_name = "FILE", value_parser = keys::parse_psk_file)]
    psk_file: Option<acp_core::seal::Keyring>,
    /// Serve Prometheus metrics over HTTP at http://ADDR/metrics, e.g. 127.0.0.1:9465 (port 0
    /// picks one, named on stderr): rate, estimated age, backlog, RTT and the source's counters,
    /// refreshed every 200 ms. See docs/METRICS.md.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Multipath: send the session over several paths, one per --via (repeatable, up to 64):
    /// HOST:PORT of a relay or gateway that forwards to the --to monitor, or `direct` for --to
    /// itself. The controller sets the total rate; --scheduler picks each update's path; the
    /// monitor joins the paths into one session (docs/MULTIPATH.md, "Multipath ACP sources").
    #[arg(long, value_name = "HOST:PORT|direct", value_parser = parse_via)]
    via: Vec<Via>,
    /// Multipath scheduler (with --via): qaware (the least n·b + S: n updates ahead at the
    /// path's bottleneck, each served in b, and S the round trip without waiting), minsrtt (the
    /// least smoothed RTT), roundrobin, or duplicate (every update on every path). Default:
    /// qaware.
    #[arg(long, value_name = "NAME", requires = "via")]
    scheduler: Option<acp_core::multipath::PathRule>,
    /// udp: ACP under --controller. tcp: fresh updates over a kernel TCP connection, written
    /// whenever the socket takes one (the baseline ACP is compared with; the monitor accepts
    /// both on one port).
    #[arg(long, value_enum, default_value_t = Transport::Udp)]
    transport: Transport,
    /// tcp: congestion control (TCP_CONGESTION), e.g. reno, cubic, bbr: one this kernel offers
    /// (net.ipv4.tcp_available_congestion_control); the system's default if not given.
    #[arg(long, value_name = "NAME")]
    cc: Option<String>,
    /// tcp: send small writes at once (TCP_NODELAY) instead of coalescing them (Nagle).
    #[arg(long)]
    nodelay: bool,
    /// tcp: take a new update only while fewer than this many bytes wait unsent in the kernel
    /// (TCP_NOTSENT_LOWAT), so that updates do not queue in the send buffer.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    notsent_lowat: Option<u32>,
    /// tcp: the send buffer (SO_SNDBUF, bytes); the kernel autotunes it if not given.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    send_buffer: Option<u64>,
}

/// The transport of `acp source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    Udp,
    Tcp,
}

/// How long a packet occupies the relay's link.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ServiceArg {
    /// Size / rate.
    Deterministic,
    /// Exponential with mean size / rate.
    Exponential,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("queue_limit").required(true).args(["queue", "queue_bytes"])))]
struct RelayArgs {
    /// Address sources send to, HOST:PORT (a name listens on the first of its addresses this
    /// host can bind).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_listen)]
    listen: SocketAddr,
    /// Address to forward to (the monitor, or the next relay), HOST:PORT (the first of the
    /// host's addresses this host can send to).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_peer)]
    to: SocketAddr,
    /// Bottleneck rate, e.g. 2mbit, 500kbit (bits per second; kbps and mbps are bytes per
    /// second, as in tc), from 1kbit to 100gbit. Not needed when both directions follow traces.
    #[arg(long, value_parser = parse_rate, required_unless_present_all = ["trace", "trace_back"])]
    rate: Option<f64>,
    /// One-way propagation delay, e.g. 20ms (at most 1h).
    #[arg(long, value_parser = parse_duration)]
    delay: Duration,
    /// Queue limit in packets (including the one being sent).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    queue: Option<u64>,
    /// Queue limit in bytes on the wire (including the packet being sent), instead of --queue.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    queue_bytes: Option<u64>,
    /// Service time of a packet.
    #[arg(long, value_enum, default_value_t = ServiceArg::Deterministic)]
    service: ServiceArg,
    /// Random loss: P (Bernoulli) or ge:P,R[,LOSS_GOOD,LOSS_BAD] (Gilbert–Elliott: P = good→bad,
    /// R = bad→good per packet; loss in the states 0 and 1 unless given).
    #[arg(long, value_parser = pathargs::parse_loss)]
    loss: Option<LossModel>,
    /// Delay jitter: AMOUNT (uniform within ±AMOUNT, order kept) or AMOUNT:reorder.
    #[arg(long, value_parser = pathargs::parse_jitter)]
    jitter: Option<Jitter>,
    /// Strict priority by DSCP: classes highest first, separated by '/', DSCPs in a class by ','
    /// (e.g. 46/34,26); unlisted DSCPs form the lowest class. Default: one drop-tail FIFO.
    #[arg(long, value_name = "CLASSES", value_parser = pathargs::parse_priority)]
    priority: Option<Discipline>,
    /// Queue discipline by name, instead of --priority: diffserv4 (CAKE-style Diffserv tins by
    /// DSCP: Voice = CS7, CS6, EF, VA, CS5, CS4 with priority up to 25 % of the rate; Video =
    /// AF4x, AF3x, CS3, AF2x, CS2 up to 50 %; Bulk = CS1, LE up to 6.25 %; Best Effort the
    /// rest; above its share a tin shares what is left by byte round robin; each tin holds up
    /// to the queue limit), freshest (each source's newest update waits, replacing the one
    /// before) or freshest-preempt (the newest arrival also pre-empts the packet being sent; a
    /// source is a client address and port).
    #[arg(long, value_name = "NAME", value_parser = pathargs::parse_discipline, conflicts_with = "priority")]
    discipline: Option<Discipline>,
    /// Rate, delay and loss over time, both directions: a TOML file of `repeat = "20s"`
    /// (optional) and [[step]] tables with `at` and any of `rate`, `delay`, `loss`.
    #[arg(long, value_name = "FILE", value_parser = pathargs::read_schedule)]
    schedule: Option<FromFile<Schedule>>,
    /// Mahimahi packet-delivery trace for client→target (instead of --rate that way).
    #[arg(long, value_name = "FILE", value_parser = pathargs::read_trace)]
    trace: Option<FromFile<Trace>>,
    /// Mahimahi packet-delivery trace for target→client (instead of --rate that way).
    #[arg(long, value_name = "FILE", value_parser = pathargs::read_trace)]
    trace_back: Option<FromFile<Trace>>,
    /// Drop everything both ways for DURATION from AT after the start, e.g. 8s+3s (repeatable).
    #[arg(long, value_name = "AT+DURATION", value_parser = pathargs::parse_blackhole)]
    blackhole: Vec<(Duration, Duration)>,
    /// Mean rate of Poisson cross traffic sharing the bottleneck, e.g. 500kbit (at most 10gbit).
    #[arg(long, value_parser = parse_rate)]
    cross: Option<f64>,
    /// Seed of every random draw (loss, service, jitter, cross traffic).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Largest share of the client table (4096 mappings) that the clients of one network (IPv4
    /// /24, IPv6 /48) may hold, in (0, 1]; 1 leaves only the table's bound. Datagrams of refused
    /// new clients are counted in the reports.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.25, value_parser = relay::parse_client_share)]
    max_prefix_share: f64,
    /// Machine-readable output. If stdout is closed, the relay shuts down as on SIGTERM and
    /// writes its summary to stderr.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// How long each controller runs, e.g. 20s.
    #[arg(long, default_value = "10s", value_parser = parse_run_time)]
    duration: Duration,
    /// The controllers to run, one after another, comma-separated (seek | acp+ | acp[:KAPPA] |
    /// lazy | fixed:RATE; default: seek,acp+,lazy).
    #[arg(long, value_name = "NAME,NAME", value_delimiter = ',')]
    controllers: Vec<ControllerKind>,
    /// Leave each round's first part out of its final age (e.g. 20s), so that the rounds compare
    /// steady states rather than how fast each controller starts.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
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
    /// The lab emulator (root): packets/s and Mbit/s it forwards between two namespaces at
    /// 100 B and 1400 B, the one-way delay error of 1,000 probes through a 20 ms link, and how
    /// late it hands on the frames of a saturated 802.11g cell of 2, 8 and 32 stations.
    Lab {
        /// Measurement time per packet size.
        #[arg(long, default_value = "5s", value_parser = parse_run_time)]
        duration: Duration,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Send-time precision of the source driver at 1,000 and 10,000 updates/s.
    Pacing {
        /// Measurement time per rate.
        #[arg(long, default_value = "5s", value_parser = parse_run_time)]
        duration: Duration,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Updates/s the monitor server handles, next to a minimal batched UDP echo server; or,
    /// with --latency, how fast it answers while holding --sessions live sessions.
    Monitor {
        /// Measurement time per server and round.
        #[arg(long, default_value = "2s", value_parser = parse_run_time)]
        duration: Duration,
        /// Rounds (echo and monitor back to back, alternating order); medians are reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
        rounds: u64,
        /// Synthetic sources.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        sessions: u64,
        /// Datagrams kept in flight by the load generator.
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
        window: u64,
        /// Also measure a monitor with these pre-shared keys under sealed load, against the
        /// unauthenticated one (see `acp keygen`).
        #[arg(long, value_name = "FILE", value_parser = keys::parse_psk_file)]
        psk_file: Option<acp_core::seal::Keyring>,
        /// Measure reply latency instead: establish --sessions sessions, then send their updates
        /// round-robin at --rate for --duration and report percentiles of the time to each ACK.
        #[arg(long, conflicts_with = "psk_file")]
        latency: bool,
        /// With --latency: updates per second, sent open loop.
        #[arg(long, default_value_t = 20_000.0, requires = "latency", value_parser = parse_bench_rate)]
        rate: f64,
        /// With --latency: another thread reads the per-session list this often, as the
        /// periodic reports of `acp monitor` do.
        #[arg(long, requires = "latency", value_parser = parse_run_time)]
        read_sessions_every: Option<Duration>,
        /// With --read-sessions-every: the reader lists this many sessions, those silent the
        /// longest, as `acp monitor --report-sessions` does (20 by default), or all.
        #[arg(long, value_name = "N|all", default_value = "all", value_parser = parse_metrics_sessions,
              requires = "read_sessions_every")]
        list_sessions: usize,
        /// Compare this many monitor servers sharing one port (SO_REUSEPORT, as
        /// `acp monitor --reuse-port`) with one server, under load from 16 source ports. The
        /// servers share one core and the load generator has the other: on a two-core machine
        /// this shows the cost of the spreading, not scaling over cores.
        #[arg(long, value_parser = clap::value_parser!(u64).range(2..=64),
              conflicts_with_all = ["latency", "psk_file"])]
        workers: Option<u64>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Floods a local monitor (hosts holding sessions, blind spoofed sessions, malformed
    /// datagrams, TCP writers and idle connections, sequence jumps) and its metrics endpoint, and
    /// reports established sources' ACK loss, newcomers' admission time and memory. Attackers
    /// use their own 127.x.y.z addresses; nothing leaves the host.
    Flood(FloodArgs),
}

#[derive(Debug, Args)]
struct FloodArgs {
    /// Only this attack: hold | spoof | malformed | tcp-writer | tcp-idle | seq-jump |
    /// hold-prefixes | metrics-header | metrics-idle | metrics-noread (default: all ten, one
    /// after another).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(flood::attack_names()))]
    attack: Option<String>,
    /// How long each attack runs.
    #[arg(long, default_value = "15s", value_parser = parse_run_time)]
    duration: Duration,
    /// The monitor's session table size.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(16..=1_000_000))]
    max_sessions: u64,
    /// Sessions the hold attacker opens (two updates each, refreshed every 10 s).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    hold_sessions: u64,
    /// Datagrams per second of the spoof and malformed floods (and of the hold attacker's
    /// opening burst).
    #[arg(long, default_value_t = 20_000.0, value_parser = parse_flood_rate)]
    rate: f64,
    /// Seal the monitor and the legitimate sources with these keys (the attackers have none).
    #[arg(long, value_name = "FILE", value_parser = keys::parse_psk_file)]
    psk_file: Option<acp_core::seal::Keyring>,
    /// Machine-readable output: one JSON line per attack.
    #[arg(long)]
    json: bool,
}

fn parse_flood_rate(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|r: &f64| (1.0..=1e7).contains(r))
        .ok_or_else(|| "must be a rate within 1–10000000 datagrams/s".to_string())
}

/// `--listen HOST:PORT`: the first of the host's addresses this host can bind.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    resolve::resolve(s, Purpose::Listen).map_err(|e| e.to_string())
}

/// `--to HOST:PORT`: the first of the host's addresses this host can send to. Port 0 is
/// refused: nothing listens there, and a source would send into the void forever.
fn parse_peer(s: &str) -> Result<SocketAddr, String> {
    let addr = resolve::resolve(s, Purpose::Connect).map_err(|e| e.to_string())?;
    if addr.port() == 0 {
        return Err(
            "port 0 is not a destination (it means \"any port\" only when listening)".into(),
        );
    }
    Ok(addr)
}

/// One path of a multipath source (`acp source --via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// Straight to the `--to` monitor.
    Direct,
    /// Through this first hop (a relay or gateway forwarding to the monitor).
    Hop(SocketAddr),
}

fn parse_via(s: &str) -> Result<Via, String> {
    if s == "direct" {
        Ok(Via::Direct)
    } else {
        parse_peer(s).map(Via::Hop)
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    acp_core::units::parse_duration(s).map_err(|e| e.to_string())
}

/// How long something runs or waits between rounds: a duration longer than zero.
fn parse_run_time(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err("must be longer than zero".into());
    }
    Ok(d)
}

/// The run's length: `--duration` if given, else the scenario's; a length within the warm-up is
/// refused in one line (`acp sim` and `acp lab`).
fn run_length(
    duration: Option<Duration>,
    scenario: Duration,
    warmup: Duration,
) -> Result<Duration, UsageError> {
    let length = duration.unwrap_or(scenario);
    if length <= warmup {
        return Err(UsageError(format!(
            "--duration {:.1}s leaves nothing to measure: the scenario's warm-up is {:.1}s",
            length.as_secs_f64(),
            warmup.as_secs_f64()
        )));
    }
    Ok(length)
}

/// An input file (a scenario): it must exist and be a readable file, so that a wrong path is a
/// usage error (exit 2) rather than a failed run.
fn parse_input_file(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    std::fs::File::open(&path).map_err(|e| e.to_string())?;
    Ok(path)
}

fn parse_rate(s: &str) -> Result<f64, String> {
    acp_core::units::parse_rate(s).map_err(|e| e.to_string())
}

/// `acp bench monitor --rate`: 1 to 10⁶ updates per second.
fn parse_bench_rate(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|rate| (1.0..=1e6).contains(rate))
        .ok_or_else(|| "must be 1–1000000 updates/s".to_string())
}

/// Shortest time between periodic reports: shorter would flood the output.
const MIN_REPORT_INTERVAL: Duration = Duration::from_millis(10);

fn parse_report_interval(s: &str) -> Result<Duration, String> {
    let every = parse_duration(s)?;
    if every < MIN_REPORT_INTERVAL {
        return Err(format!("must be at least {MIN_REPORT_INTERVAL:?}"));
    }
    Ok(every)
}

/// `--metrics-sessions`: a count, or `all`.
fn parse_metrics_sessions(s: &str) -> Result<usize, String> {
    if s == "all" {
        return Ok(usize::MAX);
    }
    s.parse()
        .map_err(|_| "must be a number of sessions or `all`".to_string())
}

/// A fraction in (0, 1].
fn parse_fraction(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|f: &f64| *f > 0.0 && *f <= 1.0)
        .ok_or_else(|| "must be a fraction in (0, 1]".to_string())
}

/// `--max-rate`: a number within the rates a source supports (at least its minimum rate).
fn parse_max_rate(s: &str) -> Result<f64, String> {
    let range = acp_core::controller::supported_rates();
    s.parse()
        .ok()
        .filter(|rate| range.contains(rate))
        .ok_or_else(|| {
            format!(
                "must be a rate within {}–{} updates/s ({} is the source's minimum rate)",
                range.start(),
                range.end(),
                range.start()
            )
        })
}

/// A bad argument found after parsing (a combination clap does not check): reported like a
/// parse error, on one line with exit status 2.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Creates the `--out` directory `dir` and checks that files can be written in it, before a long
/// run rather than after.
fn out_dir(dir: &Path) -> Result<(), UsageError> {
    let bad = |e: std::io::Error| UsageError(format!("--out {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(bad)?;
    let probe = dir.join(format!(".acp-write-test-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(bad)?;
    std::fs::remove_file(&probe).map_err(bad)
}

/// A bad `--listen` address: taken by another socket, not this host's, or privileged.
fn listen_error(addr: SocketAddr, e: std::io::Error) -> anyhow::Error {
    bind_error("--listen", addr, e)
}

/// A bad address given to `flag`: a usage error when it is taken by another socket, not this
/// host's, or privileged; any other failure to bind it is the command's.
fn bind_error(flag: &str, addr: SocketAddr, e: std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind::{AddrInUse, AddrNotAvailable, PermissionDenied};
    match e.kind() {
        AddrInUse | AddrNotAvailable | PermissionDenied => {
            UsageError(format!("{flag} {addr}: {e}")).into()
        }
        _ => anyhow::Error::new(e).context(format!("cannot listen on {addr}")),
    }
}

/// clap's error `e` on one clear line: its first line names the problem; usage follows on --help.
fn error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: invalid arguments");
    // "…were not provided:" names the arguments on the next line, and an invalid choice
    // is followed by "[possible values: …]"; keep them on this one.
    match lines.next() {
        Some(what) if first.ends_with(':') || what.starts_with('[') => format!("{first} {what}"),
        _ => first.to_string(),
    }
}

/// Longest quoted value an error line repeats whole (characters).
const MAX_ECHOED_VALUE: usize = 64;
/// Longest error line printed (characters).
const MAX_ERROR_LINE: usize = 400;

/// `line` with every value quoted in it ('…') longer than [`MAX_ECHOED_VALUE`] cut short, and
/// the whole cut at [`MAX_ERROR_LINE`], each cut saying how long the original was: a bad value
/// of any size is reported on one readable line.
fn shorten(line: &str) -> String {
    let cut = |text: &str, keep: usize| -> String {
        let kept: String = text.chars().take(keep).collect();
        format!("{kept}… ({} bytes)", text.len())
    };
    let parts: Vec<String> = line
        .split('\'')
        .enumerate()
        .map(
            |(i, part)| match i % 2 == 1 && part.chars().count() > MAX_ECHOED_VALUE {
                true => cut(part, MAX_ECHOED_VALUE),
                false => part.to_string(),
            },
        )
        .collect();
    let short = parts.join("'");
    match short.chars().count() > MAX_ERROR_LINE {
        true => cut(&short, MAX_ERROR_LINE),
        false => short,
    }
}

fn main() -> ExitCode {
    let cmd = command();
    let expanded = match config::expand(&cmd, std::env::args_os().collect()) {
        Ok(expanded) => expanded,
        Err(e) => {
            eprintln!("error: {}", shorten(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    let parsed = cmd
        .clone()
        .try_get_matches_from(&expanded.args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (m, cli)));
    let (matches, cli) = match parsed {
        Ok(parsed) => parsed,
        // `acp` or `acp bench` alone: the usage and the list of subcommands, on stderr.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) if e.use_stderr() => {
            let line = error_line(&e);
            match expanded.explain(&e, &line) {
                Some(in_file) => eprintln!("error: {}", shorten(&in_file)),
                None => eprintln!("{}", shorten(&line)),
            }
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    if let Some(settings) = config::effective(&cmd, &matches, &expanded) {
        // A closed stdout is not an error here either.
        let _ = output::out!("{settings}");
        return ExitCode::SUCCESS;
    }
    if let Err(e) = logging::init(&cli.log) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    keys::log_exposed_files();
    let result = match cli.command {
        Command::Monitor(a) => monitor::run(a),
        Command::Source(a) => source::run(a),
        Command::Relay(a) => relay::run(*a),
        Command::Demo(a) => demo::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Sim(a) => sim::run(a),
        Command::Lab(a) => lab::run(a),
        Command::Sweep(a) => sim::sweep(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Estimator(c) => estimator::run(c),
        Command::Keygen(a) => keys::run(a),
        Command::Completions(a) => docgen::completions(a),
        Command::Manpage(a) => docgen::manpage(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`acp sim … | head`): nothing is wrong.
        Err(e) if output::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<UsageError>() => {
            eprintln!("error: {}", shorten(&e.to_string()));
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
