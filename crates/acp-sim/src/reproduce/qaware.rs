//! `qaware-cbr`, `qaware-loss`, `qaware-apps`, `qaware-testbed`: the QAware scheduler against
//! minSRTT and ECF (and DAPS and BLEST on the testbed) as the thesis's ch. 2 evaluates it
//! (`/work/shared/seeds/000_a6b702b1423d5563.txt`, §2.7 lines 551–629 and §2.8 lines 631–683).
//!
//! The simulated network of §2.7 (line 553): a phone with two 802.11g interfaces, each the only
//! station of its own access point at 6–12 Mbit/s PHY, the APs wired to a switch at 30 Mbit/s and
//! the switch to the server at 50 Mbit/s; the phone sends (the scheduler reads its own devices'
//! queues, the WiFi stations' frame queues). What the thesis leaves out we set and say so in
//! `docs/MULTIPATH.md`: 1 ms per wired link, 100 frames per WiFi queue, 2 m from the AP, NewReno,
//! 128 KiB send buffers (ns-3's `TcpSocket::SndBufSize`), 10 s runs with 2 s of warm-up.
//!
//! Its simulations assign packets "over independent TCP streams" (line 558, footnote 5): a
//! segment goes to the picked subflow's socket as the application writes it, whatever that
//! subflow's window. That is [`Assignment::OnWrite`]; every part runs it, and the CBR and loss
//! parts run Linux's rule as well ([`Assignment::Window`]: a subflow takes data when its window
//! opens), where a backlogged application keeps both windows full under any scheduler.
//!
//! The testbed of §2.8 (lines 633–649, Table 2.2) as far as a scenario expresses it: two wired
//! paths of 40 and 80 ms (or 40 and 160 ms) RTT at Table 2.2's 600, 300 and 200 Mbit/s, coupled
//! congestion control (LIA for the thesis's OLIA), Linux's assignment rule, 100 MB and 500 MB
//! transfers.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::harness::{
    by_point, stat, Band, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
};
use crate::mptcp::connection::Assignment;
use crate::mptcp::scheduler::SchedulerKind;
use crate::report::{PacketEvent, SimResult};
use crate::scenario::Scenario;
use crate::sweep::mean_ci95;

/// The schedulers of the simulations (§2.6, line 547).
const SIMULATED: [SchedulerKind; 3] = [
    SchedulerKind::MinSrtt,
    SchedulerKind::Ecf,
    SchedulerKind::QAware,
];
/// The schedulers of the testbed (§2.8, line 640).
const TESTBED: [SchedulerKind; 5] = [
    SchedulerKind::MinSrtt,
    SchedulerKind::Daps,
    SchedulerKind::Blest,
    SchedulerKind::Ecf,
    SchedulerKind::QAware,
];
/// The CBR application's rates swept (Mbit/s): the thesis plots "increasing CBR rates" up to
/// the 12 Mbit/s of its Figs. 2.6–2.8.
const CBR_MBIT: [f64; 6] = [2.0, 4.0, 6.0, 8.0, 10.0, 12.0];
/// Cross traffic on F1's device (Mbit/s) under a 12 Mbit/s CBR application.
const CROSS_MBIT: [f64; 5] = [0.0, 1.0, 2.0, 3.0, 4.0];
/// File sizes of §2.7.2 (MB).
const FILES_MB: [f64; 5] = [10.0, 15.0, 20.0, 25.0, 30.0];
/// Table 2.1: the ten web sites' total object sizes (KB), in its order.
const PAGES_KB: [(&str, f64); 10] = [
    ("News", 3821.2),
    ("Tech", 2152.2),
    ("Radio", 2453.0),
    ("Shopping", 1000.7),
    ("Finance", 1988.1),
    ("Wiki", 601.2),
    ("Market", 2032.8),
    ("Social", 1700.2),
    ("Movie", 845.7),
    ("Travel", 2000.4),
];
/// The window Figs. 2.6–2.8 show (s), at 12 Mbit/s of CBR.
const TRACE_WINDOW: (f64, f64) = (6.0, 8.0);
/// Bins of the traces (s).
const TRACE_BIN: f64 = 0.05;

/// UDP traffic from the phone on F1's device.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Udp {
    mbit: f64,
    from_s: f64,
    to_s: f64,
}

/// The network of a point.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Net {
    /// §2.7's two WiFi paths: PHY rates (Mbit/s) of F1 and F2, a loss rate on one path's wired
    /// hop, other traffic on F1's device.
    Wifi {
        phy: [u32; 2],
        loss: Option<(usize, f64)>,
        udp: Option<Udp>,
    },
    /// §2.8's shaped wired paths: RTTs (ms) and rates (Mbit/s).
    Wired { rtt_ms: [u32; 2], mbit: [u32; 2] },
}

/// What the application does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum App {
    Cbr { mbit: f64 },
    File { bytes: u64 },
}

/// One point: a part of a figure, its x value, a scheduler.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    part: &'static str,
    x: f64,
    net: Net,
    app: App,
    scheduler: SchedulerKind,
    assign: Assignment,
    secs: u64,
    warmup: u64,
    /// Record the packets for the traces (first seed only).
    trace: bool,
}

/// The scenario of `p` with `seed`.
fn scenario_text(p: &Point, seed: u64) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "format = 2\nname = \"{} {} {}\"\nseed = {seed}\nduration = \"{}s\"\nwarmup = \"{}s\"\n",
        p.part, p.x, p.scheduler, p.secs, p.warmup
    );
    let link = |t: &mut String, from: &str, to: &str, mbit: u32, delay_us: u32, extra: &str| {
        let _ = writeln!(
            t,
            "[[link]]\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"{mbit}mbit\"\ndelay = \"{delay_us}us\"\n{extra}"
        );
    };
    let (paths, cc) = match p.net {
        Net::Wifi { phy, loss, udp } => {
            for (k, rate) in phy.iter().enumerate() {
                let _ = writeln!(
                    t,
                    "[[wifi]]\nap = \"ap{n}\"\nstations = \"phone\"\ncount = 1\nstandard = \"g\"\nrate = \"{rate}mbit\"\npositions = [[2.0, 0.0]]\nqueue = 100\n",
                    n = k + 1
                );
                let lossy = match loss {
                    Some((at, rate)) if at == k => format!("loss = {rate}\n"),
                    _ => String::new(),
                };
                link(&mut t, &format!("ap{}", k + 1), "sw", 30, 1000, &lossy);
            }
            link(&mut t, "sw", "server", 50, 1000, "");
            if let Some(u) = udp {
                let _ = writeln!(
                    t,
                    "[[flow]]\ntype = \"cross\"\nname = \"udp\"\nprocess = \"periodic\"\nrate = \"{}mbit\"\nsize = 1500\nstart = \"{}s\"\nstop = \"{}s\"\npath = [\"phone\", \"ap1\"]\n",
                    u.mbit, u.from_s, u.to_s
                );
            }
            (
                "[[\"phone\", \"ap1\", \"sw\", \"server\"], [\"phone\", \"ap2\", \"sw\", \"server\"]]",
                "cc = \"newreno\"\nsend_buffer = 131072\nreceive_buffer = 1048576",
            )
        }
        Net::Wired { rtt_ms, mbit } => {
            for k in 0..2 {
                let nic = format!("nic{}", k + 1);
                link(&mut t, "client", &nic, 1000, 10, "queue = 1000\n");
                // Half the RTT each way on the shaped hop.
                link(
                    &mut t,
                    &nic,
                    "server",
                    mbit[k],
                    rtt_ms[k] * 500,
                    "queue = 1000\n",
                );
            }
            (
                "[[\"client\", \"nic1\", \"server\"], [\"client\", \"nic2\", \"server\"]]",
                "cc = \"newreno\"\ncoupling = \"lia\"\nsend_buffer = 4194304\nreceive_buffer = 6291456",
            )
        }
    };
    let app = match p.app {
        App::Cbr { mbit } => format!("app = \"cbr\"\nrate = \"{mbit}mbit\""),
        App::File { bytes } => format!("app = \"file\"\nsize = {bytes}"),
    };
    let _ = writeln!(
        t,
        "[[flow]]\ntype = \"mptcp\"\nname = \"mp\"\npaths = {paths}\nscheduler = \"{}\"\nassign = \"{}\"\n{app}\n{cc}",
        p.scheduler, p.assign
    );
    t
}

/// What one run yields.
#[derive(Debug, Clone)]
pub struct Measure {
    throughput_mbit: f64,
    share_f1: f64,
    completion_s: Option<f64>,
    traces: Vec<Trace>,
}

/// Per 50 ms bin of `window`, the Mbit/s of `flow`'s packets leaving `link`.
fn departures(log: &[PacketEvent], link: &str, flow: &str, window: (f64, f64)) -> Vec<(f64, f64)> {
    let bins = ((window.1 - window.0) / TRACE_BIN).round() as usize;
    let mut bytes = vec![0.0; bins];
    for e in log.iter().filter(|e| e.link == link && e.flow == flow) {
        if let Some(d) = e.departed_ns {
            let t = d as f64 * 1e-9 - window.0;
            if t >= 0.0 && t < window.1 - window.0 {
                bytes[((t / TRACE_BIN) as usize).min(bins - 1)] += f64::from(e.bytes);
            }
        }
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            (
                window.0 + (i as f64 + 0.5) * TRACE_BIN,
                b * 8.0 / TRACE_BIN / 1e6,
            )
        })
        .collect()
}

/// Every 10 ms of `window`, the packets of any flow waiting in or being sent by `link` (dropped
/// ones leave at once).
fn occupancy(log: &[PacketEvent], link: &str, window: (f64, f64)) -> Vec<(f64, f64)> {
    let on: Vec<(u64, u64)> = log
        .iter()
        .filter(|e| e.link == link)
        .filter_map(|e| e.departed_ns.map(|d| (e.arrived_ns, d)))
        .collect();
    let steps = ((window.1 - window.0) / 0.01).round() as usize;
    (0..=steps)
        .map(|i| {
            let t = window.0 + i as f64 * 0.01;
            let ns = (t * 1e9) as u64;
            let n = on.iter().filter(|&&(a, d)| a <= ns && ns < d).count();
            (t, n as f64)
        })
        .collect()
}

/// The traces of a run with a packet log: per subflow, throughput leaving its device and the
/// device's occupancy, over `window`.
fn traces_of(r: &SimResult, scheduler: SchedulerKind, window: (f64, f64)) -> Vec<Trace> {
    let mut out = Vec::new();
    for k in 1..=2 {
        let link = format!("phone→ap{k}");
        out.push(Trace {
            name: format!("{scheduler} F{k} Mbit/s"),
            points: departures(&r.packet_log, &link, "mp", window),
        });
        out.push(Trace {
            name: format!("{scheduler} F{k} queue"),
            points: occupancy(&r.packet_log, &link, window),
        });
    }
    out
}

fn measure_run(p: &Point, r: &SimResult) -> Measure {
    let flow = r.flows.iter().find(|f| f.name == "mp");
    let m = flow.and_then(|f| f.mptcp.as_ref());
    let window = match p.net {
        Net::Wifi { udp: Some(_), .. } => (0.0, p.secs as f64),
        _ => TRACE_WINDOW,
    };
    Measure {
        throughput_mbit: flow.map_or(0.0, |f| f.throughput_bps / 1e6),
        share_f1: m.and_then(|m| m.subflows.first()).map_or(0.0, |s| s.share),
        completion_s: m.and_then(|m| m.completion),
        traces: if p.trace {
            traces_of(r, p.scheduler, window)
        } else {
            Vec::new()
        },
    }
}

/// One row: a scheduler at one point of a part.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The part (network, application, assignment rule).
    pub part: &'static str,
    /// The x value (its meaning in `x_is`).
    pub x: f64,
    /// What x is.
    pub x_is: &'static str,
    /// The scheduler.
    pub scheduler: String,
    /// When data is assigned to subflows (`on-write`: the thesis's simulations; `window`:
    /// Linux).
    pub assign: String,
    /// Connection throughput after warm-up (Mbit/s).
    pub throughput_mbit_s: f64,
    /// Its 95 % confidence half-width over seeds.
    pub throughput_mbit_s_ci95: f64,
    /// The part of the bytes F1 carried.
    pub share_f1: f64,
    /// A file's completion time (s), if the application is a file.
    pub completion_s: Option<f64>,
    /// Its 95 % confidence half-width.
    pub completion_s_ci95: Option<f64>,
    /// QAware's gain over this scheduler at this point (%): more throughput, or less
    /// completion time for files.
    pub qaware_gain_pct: Option<f64>,
    /// The thesis's number for that gain (its average over the part's points).
    pub paper_qaware_gain_pct: Option<f64>,
    /// Runs behind the row.
    pub runs: usize,
}

/// A reproduction of the chapter: its points and the thesis's gains.
pub struct QawareFigure {
    name: &'static str,
    about: &'static str,
    setup: &'static str,
    points: fn(&Options) -> Vec<Point>,
    /// The thesis's gain of QAware over `scheduler` in `part`.
    published: fn(part: &str, scheduler: SchedulerKind) -> Option<f64>,
    sources: &'static [Source],
    claims: &'static [&'static str],
}

fn cbr_point(part: &'static str, net: Net, mbit: f64, s: SchedulerKind, a: Assignment) -> Point {
    Point {
        part,
        x: mbit,
        net,
        app: App::Cbr { mbit },
        scheduler: s,
        assign: a,
        secs: 10,
        warmup: 2,
        trace: false,
    }
}

/// The WiFi network at these PHY rates, no loss, no other traffic.
const fn wifi(phy: [u32; 2]) -> Net {
    Net::Wifi {
        phy,
        loss: None,
        udp: None,
    }
}

/// Every scheduler of `schedulers` at every rate of [`CBR_MBIT`] on `net`.
fn cbr_sweep(part: &'static str, net: Net, a: Assignment) -> Vec<Point> {
    CBR_MBIT
        .iter()
        .flat_map(|&r| SIMULATED.map(|s| cbr_point(part, net, r, s, a)))
        .collect()
}

fn cbr_points(_o: &Options) -> Vec<Point> {
    let mut out = cbr_sweep("6+6", wifi([6, 6]), Assignment::OnWrite);
    out.extend(cbr_sweep("12+6", wifi([12, 6]), Assignment::OnWrite));
    out.extend(cbr_sweep(
        "6+6 linux rule",
        wifi([6, 6]),
        Assignment::Window,
    ));
    for &c in &CROSS_MBIT {
        let net = Net::Wifi {
            phy: [6, 6],
            loss: None,
            udp: (c > 0.0).then_some(Udp {
                mbit: c,
                from_s: 0.0,
                to_s: 10.0,
            }),
        };
        for s in SIMULATED {
            let mut p = cbr_point("6+6 cross on F1", net, 12.0, s, Assignment::OnWrite);
            p.x = c;
            out.push(p);
        }
    }
    for s in SIMULATED {
        let mut p = cbr_point(
            "trace 12 Mbit/s",
            wifi([6, 6]),
            12.0,
            s,
            Assignment::OnWrite,
        );
        p.trace = true;
        out.push(p);
    }
    out
}

fn loss_points(_o: &Options) -> Vec<Point> {
    let lossy = |phy, at| Net::Wifi {
        phy,
        loss: Some((at, 0.01)),
        udp: None,
    };
    let mut out = cbr_sweep("6+6 F1 lossy", lossy([6, 6], 0), Assignment::OnWrite);
    out.extend(cbr_sweep(
        "12+6 F2 lossy",
        lossy([12, 6], 1),
        Assignment::OnWrite,
    ));
    out.extend(cbr_sweep(
        "6+6 F1 lossy linux rule",
        lossy([6, 6], 0),
        Assignment::Window,
    ));
    out
}

fn file_point(part: &'static str, net: Net, x: f64, bytes: u64, s: SchedulerKind) -> Point {
    Point {
        part,
        x,
        net,
        app: App::File { bytes },
        scheduler: s,
        assign: Assignment::OnWrite,
        secs: 10 + bytes / 500_000,
        warmup: 0,
        trace: false,
    }
}

fn apps_points(_o: &Options) -> Vec<Point> {
    let mut out = Vec::new();
    for &mb in &FILES_MB {
        for s in SIMULATED {
            let bytes = (mb * 1e6) as u64;
            out.push(file_point("files 6+6", wifi([6, 6]), mb, bytes, s));
        }
    }
    for (part, phy) in [("pages 6+6", [6, 6]), ("pages 12+6", [12, 6])] {
        for (i, &(_, kb)) in PAGES_KB.iter().enumerate() {
            for s in SIMULATED {
                let bytes = (kb * 1000.0) as u64;
                out.push(file_point(part, wifi(phy), (i + 1) as f64, bytes, s));
            }
        }
    }
    let udp = Net::Wifi {
        phy: [9, 6],
        loss: None,
        udp: Some(Udp {
            mbit: 9.0,
            from_s: 4.0,
            to_s: 8.0,
        }),
    };
    for s in SIMULATED {
        let mut p = cbr_point("udp 4-8 s on F1 at 9+6", udp, 12.0, s, Assignment::OnWrite);
        p.warmup = 0;
        out.push(p);
        out.push(Point { trace: true, ..p });
    }
    out
}

fn testbed_points(_o: &Options) -> Vec<Point> {
    let mut out = Vec::new();
    for (part, rtt_ms, mbit) in [
        ("40/80 ms", [40, 80], [600, 300]),
        ("40/160 ms", [40, 160], [600, 200]),
    ] {
        for mb in [100u64, 500] {
            for s in TESTBED {
                out.push(Point {
                    part,
                    x: mb as f64,
                    net: Net::Wired { rtt_ms, mbit },
                    app: App::File {
                        bytes: mb * 1_000_000,
                    },
                    scheduler: s,
                    assign: Assignment::Window,
                    secs: 5 + mb / 20,
                    warmup: 0,
                    trace: false,
                });
            }
        }
    }
    out
}

/// Whether `o` runs `p` of `points`: every point unless `--scenarios` names some of their
/// parts (names that are no part of theirs are another reproduction's and ignored; traces run
/// only when no part is named).
fn selected(o: &Options, points: &[Point], p: &Point) -> bool {
    let named: Vec<&String> = o
        .scenarios
        .iter()
        .filter(|s| points.iter().any(|q| q.part == s.as_str()))
        .collect();
    named.is_empty() || named.iter().any(|s| s.as_str() == p.part)
}

impl QawareFigure {
    fn x_is(p: &Point) -> &'static str {
        match (p.app, p.part) {
            (_, part) if part.starts_with("pages") => "site (Table 2.1 order)",
            (App::File { .. }, _) => "file MB",
            (App::Cbr { .. }, part) if part.contains("cross") => "cross Mbit/s",
            (App::Cbr { .. }, _) => "CBR Mbit/s",
        }
    }
}

/// QAware's gain over `other` (%): throughput up, or completion time down.
fn gain(qaware: &Row, other: &Row) -> Option<f64> {
    match (qaware.completion_s, other.completion_s) {
        (Some(q), Some(o)) if o > 0.0 => Some((1.0 - q / o) * 100.0),
        (None, None) if other.throughput_mbit_s > 0.0 => {
            Some((qaware.throughput_mbit_s / other.throughput_mbit_s - 1.0) * 100.0)
        }
        _ => None,
    }
}

impl Declaration for QawareFigure {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn default_seeds(&self) -> u64 {
        if self.name == "qaware-testbed" {
            3
        } else {
            10
        }
    }

    fn plan(&self, o: &Options) -> Plan {
        let seeds = Declaration::seeds(self, o);
        let mut jobs = Vec::new();
        let points = (self.points)(o);
        for (i, p) in points.iter().enumerate() {
            if !selected(o, &points, p) {
                continue;
            }
            let run_seeds = if p.trace { &seeds[..1] } else { &seeds[..] };
            for &seed in run_seeds {
                let Ok(mut sc) = Scenario::parse(&scenario_text(p, seed)) else {
                    continue;
                };
                sc.config.packet_log = p.trace;
                jobs.push(Job::sim(i, sc));
            }
        }
        Plan { jobs }
    }

    fn measure(&self, job: &Job, done: Done<'_>) -> Measure {
        let Done::Sim(r) = done else {
            unreachable!("the qaware reproductions run in the simulator only")
        };
        let points = (self.points)(&Options::default());
        measure_run(&points[job.point], r)
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let points = (self.points)(o);
        let runs = by_point(plan, done, points.len());
        let mut rows: Vec<Row> = points
            .iter()
            .zip(&runs)
            .filter(|(p, r)| !p.trace && !r.is_empty())
            .map(|(p, r)| {
                let (tp, tp_ci) = stat(r, |m| m.throughput_mbit);
                let completion = matches!(p.app, App::File { .. }).then(|| {
                    // A file not read within the run counts as the run's length.
                    let all: Vec<f64> = r
                        .iter()
                        .map(|m| m.completion_s.unwrap_or(p.secs as f64))
                        .collect();
                    mean_ci95(&all)
                });
                Row {
                    part: p.part,
                    x: p.x,
                    x_is: Self::x_is(p),
                    scheduler: p.scheduler.to_string(),
                    assign: p.assign.to_string(),
                    throughput_mbit_s: tp,
                    throughput_mbit_s_ci95: tp_ci,
                    share_f1: stat(r, |m| m.share_f1).0,
                    completion_s: completion.map(|c| c.0),
                    completion_s_ci95: completion.map(|c| c.1),
                    qaware_gain_pct: None,
                    paper_qaware_gain_pct: None,
                    runs: r.len(),
                }
            })
            .collect();
        let qaware: Vec<Row> = rows
            .iter()
            .filter(|r| r.scheduler == SchedulerKind::QAware.to_string())
            .cloned()
            .collect();
        for row in &mut rows {
            let Some(q) = qaware
                .iter()
                .find(|q| q.part == row.part && q.x == row.x && row.scheduler != q.scheduler)
            else {
                continue;
            };
            row.qaware_gain_pct = gain(q, row);
            let kind = points
                .iter()
                .find(|p| p.part == row.part && p.scheduler.to_string() == row.scheduler)
                .map(|p| p.scheduler);
            row.paper_qaware_gain_pct = kind.and_then(|k| (self.published)(row.part, k));
        }
        rows
    }

    fn traces(&self, _o: &Options, _plan: &Plan, done: &[Option<Measure>]) -> Vec<Trace> {
        done.iter()
            .flatten()
            .flat_map(|m| m.traces.iter().cloned())
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "{}; {} seed(s) from {}; mean ± 95 % CI",
            self.setup,
            Declaration::seeds(self, o).len(),
            o.seed
        )
    }

    fn sources(&self) -> Vec<Source> {
        self.sources.to_vec()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "",
            &[
                "part",
                "x_is",
                "x",
                "scheduler",
                "assign",
                "throughput_mbit_s",
                "share_f1",
                "completion_s",
                "qaware_gain_pct",
            ],
        )]
    }

    fn charts(&self, o: &Options, traces: &[Trace]) -> Vec<Chart> {
        let mut parts: Vec<&'static str> = Vec::new();
        let points = (self.points)(o);
        for p in points
            .iter()
            .filter(|p| !p.trace && selected(o, &points, p))
        {
            if !parts.contains(&p.part) {
                parts.push(p.part);
            }
        }
        let mut charts: Vec<Chart> = parts
            .iter()
            .map(|&part| {
                let files = part.starts_with("files")
                    || part.starts_with("pages")
                    || self.name == "qaware-testbed";
                let stem = format!(
                    "{}_{}",
                    self.name,
                    part.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                );
                let x_is = (self.points)(o)
                    .iter()
                    .find(|p| p.part == part)
                    .map_or("x", Self::x_is);
                let y = if files {
                    ("completion_s", "completion time (s)")
                } else {
                    ("throughput_mbit_s", "connection throughput (Mbit/s)")
                };
                Chart::lines(
                    stem,
                    format!("{}: {part}", self.name),
                    ("x", x_is),
                    y,
                    &["scheduler"],
                )
                .only("part", Value::from(part))
            })
            .collect();
        let udp = self.name == "qaware-apps";
        for s in SIMULATED {
            let of = |what: &str| -> Vec<Trace> {
                traces
                    .iter()
                    .filter(|t| t.name.starts_with(&format!("{s} ")) && t.name.ends_with(what))
                    .cloned()
                    .collect()
            };
            let bands = if udp {
                vec![Band {
                    from: 4.0,
                    to: 8.0,
                    label: "UDP on F1".into(),
                    shade: 0.2,
                }]
            } else {
                Vec::new()
            };
            for (what, y) in [
                ("Mbit/s", "leaving the subflow's device (Mbit/s)"),
                ("queue", "device queue (packets)"),
            ] {
                let t = of(what);
                if t.is_empty() {
                    continue;
                }
                let stem = format!(
                    "{}_{s}_{}",
                    self.name,
                    if what == "queue" {
                        "queue"
                    } else {
                        "throughput"
                    }
                );
                charts.push(
                    Chart::lines(
                        stem,
                        format!("{}: {s}, per subflow over time", self.name),
                        ("t_s", "time (s)"),
                        ("y", y),
                        &[],
                    )
                    .draw(Draw::OverTime(t, bands.clone())),
                );
            }
        }
        charts
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes: Vec<String> = self.claims.iter().map(|c| c.to_string()).collect();
        let mut keys: Vec<(&str, &str)> = Vec::new();
        for r in rows.iter().filter(|r| r.qaware_gain_pct.is_some()) {
            if !keys.contains(&(r.part, r.scheduler.as_str())) {
                keys.push((r.part, r.scheduler.as_str()));
            }
        }
        for (part, s) in keys {
            let gains: Vec<f64> = rows
                .iter()
                .filter(|r| r.part == part && r.scheduler == s)
                .filter_map(|r| r.qaware_gain_pct)
                .collect();
            let mean = gains.iter().sum::<f64>() / gains.len().max(1) as f64;
            let paper = rows
                .iter()
                .find(|r| r.part == part && r.scheduler == s)
                .and_then(|r| r.paper_qaware_gain_pct)
                .map_or_else(|| "not given".to_string(), |p| format!("≈ {p:.0} %"));
            notes.push(format!(
                "{part}: QAware over {s}, mean over the points: {mean:+.1} % (thesis {paper})"
            ));
        }
        notes
    }
}

/// `qaware-cbr`.
pub const QAWARE_CBR: QawareFigure = QawareFigure {
    name: "qaware-cbr",
    about: "QAware, minSRTT and ECF over two 802.11g paths under a CBR application of increasing rate (thesis Figs. 2.5–2.9)",
    setup: "thesis §2.7.1: a CBR application of 2–12 Mbit/s over two 802.11g paths at 6+6 and 12+6 Mbit/s PHY, each segment assigned as written (the thesis's independent streams) and, for 6+6, by Linux's window rule; 12 Mbit/s of CBR beside 0–4 Mbit/s of other traffic on F1's device; traces of one seed at 12 Mbit/s over 6–8 s; 10 s runs, 2 s warm-up",
    points: cbr_points,
    published: |part, _| match part {
        "6+6" | "6+6 cross on F1" => Some(40.0),
        "12+6" => Some(50.0),
        _ => None,
    },
    sources: &[Source {
        column: "paper_qaware_gain_pct",
        locator: "thesis §2.7.1 (lines 568 and 581: ≈ 40 % over the rest at 6+6, ≈ 50 % at 12+6)",
    }],
    claims: &[
        "thesis (line 568): QAware uses both subflows almost equally; ECF one subflow for most of the interval; minSRTT both, switching very infrequently",
    ],
};

/// `qaware-loss`.
pub const QAWARE_LOSS: QawareFigure = QawareFigure {
    name: "qaware-loss",
    about: "QAware, minSRTT and ECF with one error-prone path (1 % loss; thesis Fig. 2.10)",
    setup: "thesis §2.7.1, access paths with packet errors: a CBR application of 2–12 Mbit/s, 1 % loss on F1's wired hop at 6+6 Mbit/s PHY and on the slower F2's at 12+6; each segment assigned as written, and by Linux's window rule at 6+6; 10 s runs, 2 s warm-up",
    points: loss_points,
    published: |part, s| match (part, s) {
        ("6+6 F1 lossy", SchedulerKind::MinSrtt) => Some(32.0),
        ("6+6 F1 lossy", SchedulerKind::Ecf) => Some(15.0),
        ("12+6 F2 lossy", SchedulerKind::MinSrtt) => Some(53.0),
        ("12+6 F2 lossy", SchedulerKind::Ecf) => Some(6.0),
        _ => None,
    },
    sources: &[Source {
        column: "paper_qaware_gain_pct",
        locator: "thesis §2.7.1 (line 593: 32 % over minSRTT, 15 % over ECF; 12+6 with the error on the slower link 53 % / 6 %)",
    }],
    claims: &[],
};

/// `qaware-apps`.
pub const QAWARE_APPS: QawareFigure = QawareFigure {
    name: "qaware-apps",
    about: "QAware, minSRTT and ECF for 10–30 MB files, Table 2.1's pages and UDP on one path from 4 s to 8 s (thesis Figs. 2.11–2.13)",
    setup: "thesis §2.7.2–2.7.4: 10–30 MB files at 6+6 Mbit/s PHY; each of Table 2.1's ten sites as one transfer of its total object size at 6+6 and 12+6; a 12 Mbit/s CBR application over 9+6 Mbit/s with 9 Mbit/s of UDP on F1's device from 4 s to 8 s (10 s, no warm-up); each segment assigned as written",
    points: apps_points,
    published: |part, s| match (part, s) {
        ("files 6+6", SchedulerKind::MinSrtt) => Some(35.0),
        ("files 6+6", SchedulerKind::Ecf) => Some(30.0),
        ("pages 6+6", _) => Some(35.0),
        ("pages 12+6", _) => Some(28.0),
        ("udp 4-8 s on F1 at 9+6", SchedulerKind::MinSrtt) => Some(40.0),
        ("udp 4-8 s on F1 at 9+6", SchedulerKind::Ecf) => Some(50.0),
        _ => None,
    },
    sources: &[Source {
        column: "paper_qaware_gain_pct",
        locator: "thesis §2.7.2 (line 600: 35 % / 30 % less time than minSRTT / ECF), §2.7.3 (line 618: up to 35 % at 6+6, up to 28 % at 12+6), §2.7.4 (line 629: ≈ 40 % over minSRTT, ≈ 50 % over ECF)",
    }],
    claims: &[
        "pages: the thesis downloads each site's objects one after another at a rate drawn between 10 and 30 Mbit/s (line 604); here each site is one transfer of its total size, so per-object round trips are not modelled",
    ],
};

/// `qaware-testbed`.
pub const QAWARE_TESTBED: QawareFigure = QawareFigure {
    name: "qaware-testbed",
    about: "QAware, minSRTT, DAPS, BLEST and ECF on two shaped paths of 40/80 and 40/160 ms RTT, 100 MB and 500 MB transfers (thesis §2.8.1, Fig. 2.15b–c)",
    setup: "thesis §2.8.1, Table 2.2: two wired paths, 40 ms RTT at 600 Mbit/s beside 80 ms at 300 Mbit/s or 160 ms at 200 Mbit/s, 1000-packet queues, LIA-coupled NewReno (the testbed ran coupled OLIA), Linux's window rule, 4 MiB send and 6 MiB receive buffers (Linux's tcp_wmem/tcp_rmem maxima), 100 MB and 500 MB transfers",
    points: testbed_points,
    published: |part, s| match (part, s) {
        ("40/80 ms", SchedulerKind::MinSrtt | SchedulerKind::Daps) => Some(10.0),
        ("40/80 ms", SchedulerKind::Ecf | SchedulerKind::Blest) => Some(5.0),
        ("40/160 ms", SchedulerKind::MinSrtt | SchedulerKind::Daps) => Some(7.0),
        ("40/160 ms", SchedulerKind::Ecf | SchedulerKind::Blest) => Some(4.0),
        _ => None,
    },
    sources: &[Source {
        column: "paper_qaware_gain_pct",
        locator: "thesis §2.8.1 (line 658: 40/80 ms ≈ 10 % over default and DAPS, 5 % over ECF and BLEST; 40/160 ms 7 % and 4 %), throughput gains of bulk transfers",
    }],
    claims: &[
        "thesis (line 658): QAware 310 Mbit/s at 40/80 ms",
        "the thesis's gains are bulk throughput; ours are completion-time reductions of 100 MB and 500 MB transfers (equal for a transfer at a steady rate)",
    ],
};
