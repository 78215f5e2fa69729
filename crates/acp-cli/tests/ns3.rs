//! Cross-validation against ns-3 (docs/SIMULATOR.md, "Cross-validation against ns-3"): the same
//! 802.11g networks run in `acp sim` and in our ns-3 3.37 program `validation/ns3/wifi_check`
//! (built by `validation/ns3/build.sh` against Debian's libns3-dev, which `scripts/test-deps.sh`
//! installs; without it this test fails and says how to install it).
//!
//! What is compared, configuration by configuration:
//! - **saturation goodput**: n stations send 1024-byte UDP payloads to the AP faster than the
//!   medium carries them; the goodput is the UDP payload delivered per second. ns-3 puts
//!   24 (MAC header) + 8 (LLC/SNAP) + 20 (IPv4) + 8 (UDP) + 1024 + 4 (FCS) = 1088 bytes on the
//!   air per frame; our `updates` flow of 1052 bytes (the IPv4 datagram) gets the same MAC
//!   header, LLC/SNAP and FCS from the medium (`PhyConfig::psdu_bytes`), so the frames last the
//!   same (754 µs at 12 Mbit/s).
//! - **ages**: n stations behind the AP send periodic updates (1024-byte UDP payloads, the
//!   rates summing to 560/s, 79 % of the first point-to-point hop, spread ±0.5 % around their
//!   mean, see [`RATE_SPREAD`]) across five 6 Mbit/s point-to-point hops to a sink, which
//!   integrates each source's age exactly over the window; the station k starts at
//!   1 s + (k·0.618… mod 1) periods in both simulators.
//! - **ages with ACKs**: the same, with a 44-byte UDP answer from the sink to the station for
//!   every update, across the hops and the WiFi downlink: our side runs ACP sources with the
//!   fixed controller and one probe (980 bytes of payload + the 44-byte ACP header = the same
//!   1024-byte UDP payload; the monitor's ACK is the 44-byte ACP header), and ns-3's sources
//!   mirror the probe (one update, then the periodic ones one period after it, or at the
//!   probe's ACK if that comes later).
//!
//! Both sides place the stations alike: on a 10 m circle around the AP (equal received powers,
//! so no frame can capture a receiver) or uniformly in a 20 × 20 m² square (capture possible);
//! our scenario gives the positions, ns-3's reference loss (46.6777 dB at 1 m), SINR reception,
//! the legacy DCF countdown and beacons explicitly (`[[wifi]]`'s `positions`,
//! `reference_loss`, `reception`, `countdown`, `beacons`). What differs on the wire: ns-3's
//! point-to-point links add a 2-byte PPP header (1054 bytes per update: 2.7 µs more per hop).
//!
//! Tolerances (the issue's): saturation on the circle 2 %, in the square 5 %; ages 2 %; ages
//! with ACKs 5 %. The short form (the `#[test]` below, about 30 s of ns-3 on an idle 2-core
//! machine) runs one, five stations on the circle and ten in the square, and ages of 6 and 24
//! stations with and without ACKs, for 8 s (saturation) and 7 s (ages) after the warm-up;
//! the full form runs 1–50 stations (docs/SIMULATOR.md gives its table and what made the
//! saturation rows agree: ns-3's table-based error model and the bystanders' NAV).
//! Statistical error, measured over five seeds (ns-3's `RngRun`, our `seed`): five saturated
//! stations' goodput in a 4 s window has a standard deviation of 0.36 % in ns-3 and 0.5 % in
//! ours (0.39 % in ns-3 in a 10 s window), so the difference's noise in 8 s is about 0.5 %
//! against a 2 % tolerance; the mean age of 24
//! stations with ACKs in 7 s 0.44 % in ns-3 (ours under 0.02 %), of 6 stations without ACKs
//! 0.05 %. The full form (`cargo test --release -p acp-cli --test ns3 -- --ignored
//! --nocapture`) runs every configuration for longer, prints the table of docs/SIMULATOR.md
//! with each simulator's wall time (the process's, start-up included) and their ratio on the
//! same machine in the same run, and then asserts every tolerance.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use acp_netmodel::rng::Streams;
use common::{acp, json_output};
use serde_json::Value;

/// UDP payload of every update and saturating datagram (bytes).
const PAYLOAD: u32 = 1024;
/// IPv4 + UDP headers (bytes).
const UDP_IP: u32 = 28;
/// The ACP header (bytes): an ACP update carries `PAYLOAD - ACP_HEADER` bytes of its own
/// payload, and an ACK is the bare header.
const ACP_HEADER: u32 = 44;
/// Updates per second summed over the stations in the ages configurations.
const TOTAL_RATE: f64 = 560.0;
/// Point-to-point hops from the AP to the sink, and their names in our scenario.
const HOPS: [&str; 6] = ["ap", "isp1", "core", "isp2", "gateway", "sink"];

/// Seed of the square's positions (the same in every run, whatever the run's seed).
const SQUARE_SEED: u64 = 1;

/// Where the stations are.
#[derive(Debug, Clone, Copy)]
enum Placement {
    /// Evenly on a circle of this radius (m): equal received powers at the AP.
    Circle(f64),
    /// Uniform in a square of this side (m) centred on the AP, from a fixed stream.
    Square(f64),
}

impl Placement {
    /// One (x, y) per station, metres from the AP.
    fn positions(self, n: usize) -> Vec<(f64, f64)> {
        match self {
            Placement::Circle(r) => (0..n)
                .map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / n as f64;
                    (r * a.cos(), r * a.sin())
                })
                .collect(),
            Placement::Square(side) => {
                let mut rng = Streams::new(SQUARE_SEED).stream("ns-3 cross-validation square");
                let half = side / 2.0;
                (0..n)
                    .map(|_| (rng.uniform(-half, half), rng.uniform(-half, half)))
                    .collect()
            }
        }
    }

    fn label(self) -> String {
        match self {
            Placement::Circle(r) => format!("circle r = {r} m"),
            Placement::Square(s) => format!("{s} × {s} m²"),
        }
    }

    /// The 2 % of equal powers, the 5 % where capture is possible.
    fn tolerance(self) -> f64 {
        match self {
            Placement::Circle(_) => 0.02,
            Placement::Square(_) => 0.05,
        }
    }
}

/// One configuration run in both simulators.
#[derive(Debug, Clone, Copy)]
enum Config {
    /// With or without the AP's beacons.
    Saturation {
        n: usize,
        placement: Placement,
        beacons: bool,
    },
    Ages {
        n: usize,
        acks: bool,
    },
}

impl Config {
    fn stations(self) -> usize {
        match self {
            Config::Saturation { n, .. } | Config::Ages { n, .. } => n,
        }
    }

    /// A run measuring `window_s` seconds after the warm-up: 2 s for saturation (association
    /// takes the first second), 3 s for ages (the sources start by 1.1 s).
    fn length(self, window_s: f64) -> Length {
        let warmup = match self {
            Config::Saturation { .. } => 2.0,
            Config::Ages { .. } => 3.0,
        };
        Length {
            secs: warmup + window_s,
            warmup,
        }
    }

    /// The ages configurations run with beacons.
    fn beacons(self) -> bool {
        match self {
            Config::Saturation { beacons, .. } => beacons,
            Config::Ages { .. } => true,
        }
    }

    /// The ages configurations place their stations on the circle.
    fn placement(self) -> Placement {
        match self {
            Config::Saturation { placement, .. } => placement,
            Config::Ages { .. } => Placement::Circle(10.0),
        }
    }
}

/// Run length and warm-up (s).
#[derive(Debug, Clone, Copy)]
struct Length {
    secs: f64,
    warmup: f64,
}

/// What the two simulators measured for one configuration.
struct Compared {
    what: String,
    unit: &'static str,
    ours: f64,
    ns3: f64,
    tolerance: f64,
    ours_wall_s: f64,
    ns3_wall_s: f64,
}

impl Compared {
    fn difference(&self) -> f64 {
        self.ours / self.ns3 - 1.0
    }

    fn agrees(&self) -> bool {
        self.difference().abs() <= self.tolerance
    }
}

/// The built ns-3 program (validation/ns3/build.sh compiles it on first use).
fn ns3_program() -> PathBuf {
    let script = repo().join("validation/ns3/build.sh");
    let out = Command::new("bash").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{} failed (the ns-3 cross-validation needs libns3-dev: run scripts/test-deps.sh):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `command`, returning its JSON output and wall time (s).
fn timed(command: &mut Command) -> (Value, f64) {
    let t = Instant::now();
    let v = json_output(command);
    (v, t.elapsed().as_secs_f64())
}

/// Spread of the ages configurations' rates: station k of n sends at
/// `TOTAL_RATE / n · (1 + RATE_SPREAD · (k / (n − 1) − ½))`. With equal rates the sources' phases
/// stay locked for the whole run, and whether two of them (or an update and another source's
/// ACK) collide at every period then turns on microseconds (ns-3's PPP header alone moves an
/// ACK by 13 µs); spread rates let every pair's offset drift through a period or more in the
/// window, so both simulators average over offsets.
const RATE_SPREAD: f64 = 0.01;

/// Each station's update rate (/s) in the ages configurations; they sum to `TOTAL_RATE`.
fn rates(n: usize) -> Vec<f64> {
    let base = TOTAL_RATE / n as f64;
    if n == 1 {
        return vec![base];
    }
    (0..n)
        .map(|k| base * (1.0 + RATE_SPREAD * (k as f64 / (n - 1) as f64 - 0.5)))
        .collect()
}

/// Each station's start time (s) in the ages configurations: one second for association, then
/// a fraction k·φ mod 1 of its period (φ the golden ratio's fraction), spreading the phases.
fn starts(rates: &[f64]) -> Vec<f64> {
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    rates
        .iter()
        .enumerate()
        .map(|(k, r)| 1.0 + (k as f64 * phi).fract() / r)
        .collect()
}

/// Per-station rate of a saturating source: three times an even share of 10 Mbit/s, so every
/// queue stays full.
fn saturating_rate(n: usize) -> f64 {
    3.0 * 10e6 / (n as f64 * 8.0 * f64::from(PAYLOAD))
}

/// The name our scenario gives station k (1-based) of n.
fn station(n: usize, k: usize) -> String {
    if n == 1 {
        "sta".into()
    } else {
        format!("sta#{k}")
    }
}

/// "1 station", "5 stations".
fn stations(n: usize) -> String {
    format!("{n} station{}", if n == 1 { "" } else { "s" })
}

/// Our scenario for `config`.
fn scenario(config: Config, len: Length, seed: u64) -> String {
    let n = config.stations();
    let positions: Vec<String> = config
        .placement()
        .positions(n)
        .iter()
        .map(|(x, y)| format!("[{x:?}, {y:?}]"))
        .collect();
    let mut s = format!(
        "format = 2\nseed = {seed}\nduration = \"{}s\"\nwarmup = \"{}s\"\n\n\
         [[wifi]]\nap = \"ap\"\nstations = \"sta\"\ncount = {n}\nstandard = \"g\"\n\
         rate = \"12mbit\"\nqueue = 500\narea = [20.0, 20.0]\npositions = [{}]\n\
         exponent = 3.0\nreference_loss = 46.6777\nreception = \"sinr\"\n\
         countdown = \"legacy\"\nbeacons = {}\n",
        len.secs,
        len.warmup,
        positions.join(", "),
        config.beacons()
    );
    match config {
        Config::Saturation { .. } => {
            let _ = write!(
                s,
                "\n[[flow]]\ntype = \"updates\"\nname = \"sta\"\ncount = {n}\nstagger = \"0s\"\n\
                 start = \"1s\"\nrate = {:?}\nsize = {}\npath = [\"sta\", \"ap\"]\n",
                saturating_rate(n),
                PAYLOAD + UDP_IP
            );
        }
        Config::Ages { acks, .. } => {
            for hop in HOPS.windows(2) {
                let _ = write!(
                    s,
                    "\n[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"6mbit\"\nqueue = 100\n",
                    hop[0], hop[1]
                );
            }
            let rates = rates(n);
            for (k, (rate, start)) in rates.iter().zip(starts(&rates)).enumerate() {
                let path: Vec<String> = std::iter::once(station(n, k + 1))
                    .chain(HOPS.iter().map(|h| h.to_string()))
                    .collect();
                let _ = write!(
                    s,
                    "\n[[flow]]\nname = \"u{k}\"\nstart = \"{start:?}s\"\npath = {path:?}\n"
                );
                let _ = if acks {
                    writeln!(
                        s,
                        "type = \"acp\"\ncontroller = \"fixed:{rate:?}\"\nprobes = 1\npayload = {}",
                        PAYLOAD - ACP_HEADER
                    )
                } else {
                    writeln!(
                        s,
                        "type = \"updates\"\nrate = {rate:?}\nsize = {}",
                        PAYLOAD + UDP_IP
                    )
                };
            }
        }
    }
    s
}

/// ns-3's command line for `config`.
fn ns3_args(config: Config, len: Length, seed: u64) -> Vec<String> {
    let mut args = vec![
        format!("--duration={}", len.secs),
        format!("--warmup={}", len.warmup),
        format!("--run={seed}"),
        format!("--size={PAYLOAD}"),
    ];
    let join = |points: Vec<(f64, f64)>| {
        points
            .iter()
            .map(|(x, y)| format!("{x:.6},{y:.6}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    let n = config.stations();
    args.push(format!("--beacons={}", config.beacons()));
    args.push(format!(
        "--positions={}",
        join(config.placement().positions(n))
    ));
    match config {
        Config::Saturation { .. } => {
            args.push("--mode=saturation".into());
            args.push(format!("--rate={}", saturating_rate(n)));
        }
        Config::Ages { acks, .. } => {
            let rates = rates(n);
            let list = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:?}"))
                    .collect::<Vec<_>>()
                    .join(";")
            };
            args.push("--mode=ages".into());
            args.push(format!("--starts={}", list(&starts(&rates))));
            args.push(format!("--rates={}", list(&rates)));
            args.push(format!("--hops={}", HOPS.len() - 1));
            if acks {
                args.push(format!("--ack-size={ACP_HEADER}"));
            }
        }
    }
    args
}

/// Runs `config` in both simulators.
fn compare(program: &Path, dir: &Path, config: Config, len: Length, seed: u64) -> Compared {
    let file = dir.join("scenario.toml");
    std::fs::write(&file, scenario(config, len, seed)).unwrap();
    let (ours, ours_wall_s) = timed(acp().args(["sim", "--json"]).arg(&file));
    let (theirs, ns3_wall_s) = timed(Command::new(program).args(ns3_args(config, len, seed)));
    assert_eq!(
        theirs["associated_stations"].as_u64(),
        Some(config.stations() as u64),
        "not every ns-3 station associated: {config:?}"
    );
    let flows = ours["flows"].as_array().unwrap();
    let field = |f: &Value, name: &str| f[name].as_f64().unwrap();
    let (what, unit, ours, ns3, tolerance) = match config {
        Config::Saturation {
            n,
            placement,
            beacons,
        } => {
            let ip_mbit_s: f64 = flows.iter().map(|f| field(f, "throughput_mbit_s")).sum();
            let goodput = ip_mbit_s * f64::from(PAYLOAD) / f64::from(PAYLOAD + UDP_IP);
            (
                format!(
                    "saturation, {}, {}{}",
                    stations(n),
                    placement.label(),
                    if beacons { "" } else { ", no beacons" }
                ),
                "Mbit/s",
                goodput,
                field(&theirs, "goodput_mbps"),
                placement.tolerance(),
            )
        }
        Config::Ages { n, acks } => {
            let mean = flows.iter().map(|f| field(f, "age_ms")).sum::<f64>() / n as f64;
            let with = if acks { ", ACKs" } else { "" };
            (
                format!("ages, {}{with}", stations(n)),
                "ms",
                mean,
                field(&theirs, "mean_age_ms"),
                if acks { 0.05 } else { 0.02 },
            )
        }
    };
    Compared {
        what,
        unit,
        ours,
        ns3,
        tolerance,
        ours_wall_s,
        ns3_wall_s,
    }
}

/// Runs every configuration (saturation for `saturation_s` and ages for `ages_s` after the
/// warm-up), prints one table row per configuration as it finishes, then the wall times, and
/// fails on every row outside its tolerance.
fn run_all(configs: &[Config], saturation_s: f64, ages_s: f64, seed: u64) {
    let program = ns3_program();
    let dir = acp_testkit::Scratch::new("acp-ns3");
    println!(
        "| configuration (window) | ours | ns-3 | difference | tolerance | ours (s) | ns-3 (s) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for &config in configs {
        let len = match config {
            Config::Saturation { .. } => config.length(saturation_s),
            Config::Ages { .. } => config.length(ages_s),
        };
        let c = compare(&program, &dir, config, len, seed);
        println!(
            "| {} ({} s) | {:.3} {} | {:.3} {} | {:+.2} % | {} % | {:.3} | {:.2} |",
            c.what,
            len.secs - len.warmup,
            c.ours,
            c.unit,
            c.ns3,
            c.unit,
            100.0 * c.difference(),
            100.0 * c.tolerance,
            c.ours_wall_s,
            c.ns3_wall_s
        );
        rows.push(c);
    }
    let ours: f64 = rows.iter().map(|c| c.ours_wall_s).sum();
    let ns3: f64 = rows.iter().map(|c| c.ns3_wall_s).sum();
    println!(
        "wall time: ours {ours:.2} s, ns-3 {ns3:.1} s, ns-3 ÷ ours = {:.0}",
        ns3 / ours
    );
    let outside: Vec<String> = rows
        .iter()
        .filter(|c| !c.agrees())
        .map(|c| format!("{}: {:+.2} %", c.what, 100.0 * c.difference()))
        .collect();
    assert!(outside.is_empty(), "outside the tolerance: {outside:?}");
}

#[test]
fn agrees_with_ns3_short() {
    let configs = [
        Config::Saturation {
            n: 5,
            placement: Placement::Circle(10.0),
            beacons: true,
        },
        Config::Saturation {
            n: 1,
            placement: Placement::Circle(10.0),
            beacons: true,
        },
        Config::Saturation {
            n: 10,
            placement: Placement::Square(20.0),
            beacons: true,
        },
        Config::Ages { n: 6, acks: false },
        Config::Ages { n: 24, acks: false },
        Config::Ages { n: 6, acks: true },
        Config::Ages { n: 24, acks: true },
    ];
    run_all(&configs, 8.0, 7.0, 1);
}

#[test]
#[ignore = "the full table of docs/SIMULATOR.md: several minutes of ns-3"]
fn agrees_with_ns3_full() {
    let mut configs = Vec::new();
    for placement in [Placement::Circle(10.0), Placement::Square(20.0)] {
        for n in [1, 5, 10, 20, 50] {
            configs.push(Config::Saturation {
                n,
                placement,
                beacons: true,
            });
        }
    }
    // Without beacons ns-3's stations associate by active probing, which leaves some of 50
    // unassociated: 1, 5 and 20 stations show what beacons cost each simulator.
    for n in [1, 5, 20] {
        configs.push(Config::Saturation {
            n,
            placement: Placement::Circle(10.0),
            beacons: false,
        });
    }
    for acks in [false, true] {
        for n in [1, 2, 6, 12, 24, 48] {
            configs.push(Config::Ages { n, acks });
        }
    }
    run_all(&configs, 20.0, 30.0, 1);
}
