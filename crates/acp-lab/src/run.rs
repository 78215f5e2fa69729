//! Running a [`Plan`]: the hosts, the emulator, and for each flow a receiver in its destination
//! host — a monitor server for ACP and TCP flows, a [`Sink`] for `cross` and `updates` flows —
//! and a sender in its source host, all in this process's threads (so that one clock serves
//! senders and receivers, which measure the true age).
//!
//! Results count from the warm-up on: the receiver's counts are read at the warm-up and at the
//! end, and the differences give the window's age (a monitor's: the age integral between the
//! last arrivals before each reading, over that span; a sink's: between the readings),
//! updates (datagrams) delivered and throughput.
//!
//! `cross` and `updates` flows are measured as `acp sim` measures them: throughput counts the
//! datagrams' bytes on the wire (IPv4 and UDP headers included), an updates flow's only for
//! the updates fresher than all before, which alone count as delivered.
//!
//! A multipath ACP flow runs the runtime's multipath source ([`SourceSet::multipath_bound`], the
//! code `acp source --via` runs) over its paths' addresses ([`mptcp_flows::bound_paths`]); its
//! result carries, as `acp sim`'s does, the session's lost, stale and duplicate updates at the
//! monitor over the whole run and each path as the scheduler saw it at the end.
//!
//! TCP flows are measured as `acp sim` measures them: throughput counts the stream's bytes
//! delivered (each update's whole frame, length prefix and ACP header included, as the
//! simulator counts a record of `payload` bytes), and the mean RTT is the mean of the kernel's
//! smoothed RTT read at each new acknowledgement inside the same window (the simulator averages
//! the RTT samples of the ACKs in its window; a smoothed RTT is a moving average of those
//! samples, so over many ACKs the two means agree).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use std::{io, thread};

use acp_core::wire::FEEDBACK_AGGREGATION;
use acp_core::MonitorConfig;
use acp_runtime::clock;
use acp_runtime::driver::{Payload, RunLimits, SourceSet, SourceSpec};
use acp_runtime::experiment;
use acp_runtime::server::{
    FeedbackCell, MonitorServer, OnUpdate, ServerConfig, SessionReport, TcpConfig,
};
use acp_runtime::tcp_source::{RunningMean, TcpInfo, TcpOptions, TcpSource};
use acp_sim::estimator::slots::{EstimatedSlot, SlotEstimate};
use acp_sim::report::{AcpMultipathCounters, AcpPathResult};

use crate::air::{self, MonitorFeedback};
use crate::datagrams::Sink;
use crate::emulator::{Emulator, EmulatorStats};
use crate::hosts::{self, Host};
use crate::mptcp_flows;
use crate::mptcp_socket::{self, SenderReport};
use crate::plan::{FlowPlan, FlowPlanKind, Plan};
use crate::tcp_flows::{ReceiveBuffer, FRAME_OVERHEAD};
use acp_runtime::realtime::RealTime;

/// Monitor of flow `i` listens on this port plus `i`.
const BASE_PORT: u16 = 7000;

/// How long a TCP connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the main thread looks at the stop flag.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// What the kernel reported for a TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpResult {
    pub congestion: String,
    pub info: TcpInfo,
    /// Mean of the smoothed RTT read at each new acknowledgement in the measured window (s).
    pub mean_rtt: Option<f64>,
    /// `TCP_INFO` every [`SAMPLE_EVERY`] from the connection's start to its end.
    pub samples: Vec<TcpSample>,
}

/// `TCP_INFO` at a moment of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpSample {
    /// Since the start of the run.
    pub at: Duration,
    pub info: TcpInfo,
}

/// How often a TCP flow's `TCP_INFO` is recorded (the source reads it at least every
/// millisecond; a sample is its latest reading): 100 samples a second, about 15 kB per second
/// of a flow's run kept in memory.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// One flow's results over the measured window.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    pub name: String,
    /// `acp`, `tcp`, `cross` or `updates`.
    pub kind: &'static str,
    pub from: String,
    pub to: String,
    /// The controller (ACP), the application (TCP: `updates`, `bulk`) or the arrival process
    /// (`cross`, `updates`: `periodic`, `poisson`, `on-off`).
    pub sender: String,
    /// True time-average age at the monitor (s).
    pub avg_age: Option<f64>,
    /// The sender's estimate of it over the window (s): the ACP source's own; for TCP the ACP+
    /// paper's (§XI-A: each ACK of new data delivers an update as old as the smoothed RTT).
    pub est_age: Option<f64>,
    /// RTT seen by the sender (s): ACP's smoothed RTT̄ at the end; TCP's mean over the measured
    /// window (see the module documentation; `TCP_INFO`'s smoothed RTT at the end is in `tcp`).
    pub rtt: Option<f64>,
    /// Updates (datagrams) delivered, and their throughput (bit/s): payload for ACP, the
    /// stream's bytes (frames whole) for TCP, bytes on the wire for `cross` and `updates`, as
    /// `acp sim` counts each.
    pub delivered: u64,
    pub throughput_bps: f64,
    /// Datagrams of an `updates` flow that did not decode (dropped by the sink) over the run.
    pub undecodable: u64,
    /// Mean time between the ACKs reaching the sender in the window (s): ACP's datagrams back,
    /// TCP's segments without data, as the emulator delivered them; `None` when another flow
    /// shares the flow's pair of hosts (the emulator counts per route).
    pub inter_ack: Option<f64>,
    /// TCP: mean payload of the data segments the receiver got in the window (bytes), likewise.
    pub segment_bytes: Option<f64>,
    /// TCP flows only.
    pub tcp: Option<TcpResult>,
    /// Multipath flows only.
    pub mptcp: Option<MptcpResult>,
    /// Multipath ACP flows only: the session at the monitor and each path, over the whole run.
    pub multipath: Option<AcpMultipathCounters>,
    /// The aggregation reports its monitor made from its own estimate (`acp lab
    /// --aggregation-model`), over the whole run; empty otherwise.
    pub estimated_aggregation: Vec<EstimatedSlot>,
}

/// What the kernel reported for a multipath flow.
#[derive(Debug, Clone, PartialEq)]
pub struct MptcpResult {
    /// The kernel's scheduler (`net.mptcp.scheduler` of the sending host).
    pub scheduler: String,
    /// Per path, in the order of the flow's `paths`, as `acp sim` reports a subflow.
    pub subflows: Vec<acp_sim::report::SubflowResult>,
}

/// What a lab run measured.
#[derive(Debug, Clone)]
pub struct LabResult {
    pub name: String,
    /// Hosts and their addresses.
    pub hosts: Vec<(String, Ipv4Addr)>,
    /// How long it ran, and the measured window (from the warm-up to the end).
    pub ran: Duration,
    pub window: Duration,
    /// False if it was stopped before its duration.
    pub complete: bool,
    pub flows: Vec<FlowResult>,
    pub emulator: EmulatorStats,
}

/// What a flow's thread hands back.
enum Sender {
    Acp(
        acp_core::source::SourceStats,
        String,
        Vec<acp_core::multipath::PathStats>,
    ),
    /// The kernel's view and the windowed estimate of the age.
    Tcp(TcpResult, Option<f64>),
    /// A `cross` or `updates` flow's datagrams, all sent.
    Datagrams,
    /// A multipath flow's subflows at the warm-up and at the end.
    Mptcp(SenderReport),
}

/// Where a flow's packets end.
enum Receiver {
    Monitor(MonitorServer),
    Sink(Sink),
    Mptcp(mptcp_socket::Receiver),
}

/// A receiver's counts at a moment.
struct Reading {
    /// The average age so far, and what [`experiment::age_between`] takes to average it
    /// between two readings.
    avg_age: Option<f64>,
    age_area: Option<(f64, f64)>,
    delivered: u64,
    bytes: u64,
    undecodable: u64,
}

impl Receiver {
    /// Its counts now; none from a monitor before its session opens.
    fn read(&self) -> Option<Reading> {
        match self {
            Receiver::Monitor(m) => session(m).map(|r| Reading {
                avg_age: r.avg_age,
                age_area: Some(age_area(&r)),
                delivered: r.stats.delivered,
                bytes: r.stats.bytes,
                undecodable: 0,
            }),
            Receiver::Sink(s) => {
                let r = s.read();
                Some(Reading {
                    avg_age: (r.age_defined > 0.0).then(|| r.age_area / r.age_defined),
                    age_area: (r.age_defined > 0.0).then_some((r.age_area, r.age_defined)),
                    delivered: r.delivered,
                    bytes: r.bytes,
                    undecodable: r.undecodable,
                })
            }
            Receiver::Mptcp(r) => Some(Reading {
                avg_age: None,
                age_area: None,
                delivered: 0,
                bytes: r.bytes(),
                undecodable: 0,
            }),
        }
    }

    fn stop(self) -> io::Result<()> {
        match self {
            Receiver::Monitor(m) => m.stop().map(drop),
            Receiver::Sink(s) => s.stop(),
            Receiver::Mptcp(r) => r.stop(),
        }
    }
}

struct Running {
    receiver: Receiver,
    thread: JoinHandle<io::Result<Sender>>,
    /// The slots its monitor reported from its own estimate, if it estimates.
    estimated: Arc<Mutex<Vec<EstimatedSlot>>>,
}

/// Sleeps until `at` or until `stop` is raised; false if stopped.
pub(crate) fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        thread::sleep((at - now).min(LOOK_EVERY));
    }
}

/// Where a flow's receiver listens, and the aggregation reports its monitor puts on its ACKs.
struct Receiving {
    port: u16,
    feedback: Option<MonitorFeedback>,
}

fn start_flow(
    f: &FlowPlan,
    receiving: Receiving,
    hosts: &[Host],
    t0: Instant,
    warmup: Duration,
    end: Instant,
    finish: &Arc<AtomicBool>,
) -> io::Result<Running> {
    let (src, dst) = (hosts[f.from].clone(), hosts[f.to].clone());
    let port = receiving.port;
    let listen = SocketAddr::from((dst.addr, port));
    let estimated = Arc::new(Mutex::new(Vec::new()));
    let mut on_update = None;
    let receiver = if let FlowPlanKind::Datagrams(d) = &f.kind {
        let socket = dst.ns.enter(|| UdpSocket::bind(listen))?;
        Receiver::Sink(Sink::start(socket, d.updates, t0)?)
    } else if let FlowPlanKind::Mptcp(m) = &f.kind {
        let at = SocketAddrV4::new(dst.addr, port);
        let listener = dst
            .ns
            .enter(|| mptcp_socket::listen(at, m.receive_buffer))?;
        Receiver::Mptcp(mptcp_socket::Receiver::start(listener, finish.clone())?)
    } else {
        let mut cfg = ServerConfig::new(
            listen,
            MonitorConfig {
                clocks_synchronised: true,
                ..MonitorConfig::default()
            },
        );
        if let Some(feedback) = receiving.feedback {
            cfg.feedback = Some(feedback.cell.clone());
            cfg.ack_interval = feedback.ack_interval;
            if let Some(estimate) = feedback.estimate {
                cfg.kernel_timestamps = true;
                on_update = Some(estimating(estimate, feedback.cell, &estimated, t0));
            }
        }
        if let FlowPlanKind::Tcp(t) = &f.kind {
            cfg.tcp = Some(TcpConfig {
                recv_buffer: match t.receive {
                    ReceiveBuffer::Fixed(bytes) => Some(bytes),
                    ReceiveBuffer::Autotuned { .. } => None,
                },
                ..TcpConfig::default()
            });
        }
        Receiver::Monitor(dst.ns.enter(|| MonitorServer::start(cfg, on_update))?)
    };
    let (kind, dscp, finish, f_from) = (f.kind.clone(), f.dscp, finish.clone(), f.from);
    let (start, stop) = (t0 + f.start, f.stop.map_or(end, |s| (t0 + s).min(end)));
    let measure_from = t0 + warmup;
    let thread = thread::Builder::new()
        .name(format!("lab-flow-{}", f.name))
        .spawn(move || {
            if !sleep_until(start, &finish) {
                return Err(io::Error::other("stopped before the flow started"));
            }
            let limits = RunLimits {
                duration: Some(stop.saturating_duration_since(Instant::now())),
                count: None,
                stop: Some(finish.clone()),
            };
            match kind {
                FlowPlanKind::Acp {
                    controller,
                    config,
                    payload,
                    multipath,
                } => {
                    let mut set = src.ns.enter(|| match &multipath {
                        Some((rule, paths)) => {
                            let bound = mptcp_flows::bound_paths(f_from, src.addr, paths.len());
                            let bound: Vec<(SocketAddr, Option<&str>)> =
                                bound.iter().map(|(a, d)| (*a, d.as_deref())).collect();
                            SourceSet::multipath_bound(listen, &bound, *rule)
                        }
                        None => SourceSet::new(listen),
                    })?;
                    set.set_dscp(dscp)?;
                    set.add(SourceSpec {
                        name: String::new(),
                        controller: controller.build(),
                        config,
                        payload: Payload::Synthetic(payload as usize),
                    });
                    // Up to the warm-up, then on with the source's averages restarted.
                    let warmup = RunLimits {
                        duration: Some(measure_from.saturating_duration_since(Instant::now())),
                        ..limits.clone()
                    };
                    set.run(&warmup, Duration::from_secs(3600), |_| {})?;
                    set.restart_averages();
                    let rest = RunLimits {
                        duration: Some(stop.saturating_duration_since(Instant::now())),
                        ..limits
                    };
                    let reports = set.run(&rest, Duration::from_secs(3600), |_| {})?;
                    let r = reports.into_iter().next().ok_or(io::ErrorKind::NotFound)?;
                    let paths = r.paths.into_iter().map(|(_, p)| p).collect();
                    Ok(Sender::Acp(r.stats, r.controller, paths))
                }
                FlowPlanKind::Tcp(t) => {
                    let options = TcpOptions {
                        congestion: Some(t.cc.clone()),
                        nodelay: t.nodelay,
                        notsent_lowat: t.notsent_lowat,
                        send_buffer: Some(t.send_buffer),
                    };
                    let payload = t.payload;
                    let mut source = src
                        .ns
                        .enter(|| TcpSource::connect(listen, &options, payload, CONNECT_TIMEOUT))?;
                    // A tick every SAMPLE_EVERY records TCP_INFO as the source last read it;
                    // the first at or after the warm-up reads the sums taken before the window
                    // (none if the flow starts inside it).
                    let mut before: Option<(RunningMean, RunningMean)> =
                        (Instant::now() >= measure_from).then(Default::default);
                    let mut samples = Vec::new();
                    let r = source.run(&limits, SAMPLE_EVERY, |r| {
                        let now = Instant::now();
                        samples.push(TcpSample {
                            at: now - t0,
                            info: r.info,
                        });
                        if now >= measure_from {
                            before.get_or_insert((r.est_age, r.rtt_samples));
                        }
                    })?;
                    let (age0, rtt0) = before.unwrap_or_default();
                    let result = TcpResult {
                        congestion: r.congestion,
                        info: r.info,
                        mean_rtt: r.rtt_samples.mean_since(&rtt0),
                        samples,
                    };
                    Ok(Sender::Tcp(result, r.est_age.mean_since(&age0)))
                }
                FlowPlanKind::Datagrams(d) => {
                    let socket = src.ns.enter(|| UdpSocket::bind((src.addr, 0)))?;
                    acp_runtime::net::set_dscp(&socket, dscp)?;
                    socket.connect(listen)?;
                    d.send(&socket, t0, stop, &finish)?;
                    Ok(Sender::Datagrams)
                }
                FlowPlanKind::Mptcp(m) => {
                    let to = SocketAddrV4::new(dst.addr, port);
                    let stream = src
                        .ns
                        .enter(|| mptcp_socket::connect(to, &m, CONNECT_TIMEOUT))?;
                    let report = mptcp_socket::send_bulk(
                        stream,
                        m.paths.len(),
                        measure_from,
                        stop,
                        &finish,
                    )?;
                    Ok(Sender::Mptcp(report))
                }
            }
        })?;
    Ok(Running {
        receiver,
        thread,
        estimated,
    })
}

/// The monitor's callback that feeds `estimate` the kernel's receive time of every fresh update
/// and puts each slot's report in `cell` (its ACKs) and in `slots` (timed from `t0`).
fn estimating(
    mut estimate: SlotEstimate,
    cell: Arc<FeedbackCell>,
    slots: &Arc<Mutex<Vec<EstimatedSlot>>>,
    t0: Instant,
) -> OnUpdate {
    let slots = slots.clone();
    let origin = clock::to_time(t0).as_nanos();
    Box::new(move |_, kernel_ns| {
        // Over UDP the kernel stamps every datagram; the process clock reads as Unix time.
        let stamp = kernel_ns.unwrap_or_else(|| clock::now().as_nanos());
        if let Some(r) = estimate.update(stamp) {
            cell.set(FEEDBACK_AGGREGATION, r.report.encode().to_vec());
            slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(r.slot(origin));
        }
    })
}

/// The flow's single session at a monitor, if it has one yet.
fn session(m: &MonitorServer) -> Option<SessionReport> {
    m.snapshot().sessions.into_iter().next()
}

/// [`experiment::session_age_area`], with no area yet before a session's second update.
fn age_area(r: &SessionReport) -> (f64, f64) {
    experiment::session_age_area(r).unwrap_or((0.0, r.stats.last_seen.as_secs_f64()))
}

/// Results over the window from `before` (the warm-up reading, if any) to `after`.
/// `frame_overhead` is added to each delivered update's payload in the throughput.
fn window_stats(
    before: Option<&Reading>,
    after: Option<&Reading>,
    window: Duration,
    frame_overhead: u64,
) -> (Option<f64>, u64, f64) {
    let Some(after) = after else {
        return (None, 0, 0.0);
    };
    let (age, delivered, bytes) = match before {
        Some(b) => (
            match (b.age_area, after.age_area) {
                (Some(mark), Some(end)) => experiment::age_between(mark, end),
                (None, _) => after.avg_age,
                (Some(_), None) => None,
            },
            after.delivered - b.delivered,
            after.bytes - b.bytes,
        ),
        None => (after.avg_age, after.delivered, after.bytes),
    };
    let bytes = bytes + delivered * frame_overhead;
    let throughput = bytes as f64 * 8.0 / window.as_secs_f64().max(1e-9);
    (age, delivered, throughput)
}

/// Runs `plan` for `duration` (its own if `None`) or until `stop` is raised, and reports.
pub fn run(plan: &Plan, duration: Option<Duration>, stop: &AtomicBool) -> io::Result<LabResult> {
    crate::privilege::check().map_err(io::Error::other)?;
    // Every thread of the run inherits it; without it the run goes on at normal priority.
    let realtime = RealTime::raise();
    if let Err(e) = &realtime {
        eprintln!("acp lab: running at normal priority (SCHED_FIFO refused: {e})");
    }
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for (i, name) in plan.hosts.iter().enumerate() {
        let (host, port) = hosts::create(name, i)?;
        if let Some((default, max)) = plan.tcp_rmem[i] {
            hosts::set_tcp_rmem(&host, default, max)?;
        }
        hosts.push(host);
        ports.push(port);
    }
    for i in &plan.interfaces {
        ports.push(mptcp_flows::create_interface(&hosts[i.host], *i)?);
    }
    let mut schedulers = Vec::new();
    for f in &plan.flows {
        schedulers.push(match &f.kind {
            FlowPlanKind::Mptcp(m) => {
                let (client, server) = (&hosts[f.from], &hosts[f.to]);
                mptcp_flows::configure_path_manager(client, f.from, server, m.paths.len())?;
                Some(mptcp_flows::kernel_scheduler(client)?)
            }
            FlowPlanKind::Acp {
                multipath: Some((_, paths)),
                ..
            } => {
                let (client, server) = (&hosts[f.from], &hosts[f.to]);
                mptcp_flows::accept_any_device(&[client, server], paths.len())?;
                None
            }
            _ => None,
        });
    }
    let (media, feedback) = air::wire_reports(plan);
    let emulator = Emulator::start(ports, &plan.links, &media, &plan.routes, plan.seed)?;
    let duration = duration.unwrap_or(plan.duration);
    let warmup = plan.warmup.min(duration);
    let t0 = Instant::now();
    let end = t0 + duration;
    let finish = Arc::new(AtomicBool::new(false));
    let mut running = Vec::new();
    for (i, (f, feedback)) in plan.flows.iter().zip(feedback).enumerate() {
        let port = BASE_PORT + u16::try_from(i).unwrap_or(u16::MAX - BASE_PORT);
        let receiving = Receiving { port, feedback };
        running.push(start_flow(f, receiving, &hosts, t0, warmup, end, &finish)?);
    }
    let watch = |at: Instant| {
        while Instant::now() < at && !stop.load(Ordering::Relaxed) {
            thread::sleep(LOOK_EVERY.min(at.saturating_duration_since(Instant::now())));
        }
    };
    watch(t0 + warmup);
    let at_warmup: Vec<Option<Reading>> = if warmup.is_zero() {
        running.iter().map(|_| None).collect()
    } else {
        running.iter().map(|r| r.receiver.read()).collect()
    };
    emulator.measure();
    let measured_from = Instant::now();
    watch(end);
    let complete = Instant::now() >= end;
    // Every receiver is read at the window's end, before any sender is stopped or joined: a
    // reading taken later (after the flows before it were joined) would count the time since
    // in a sink's age area, and the updates stopped at the end (a run read periodic updates
    // 12 ms older when one flow took 0.3 s to join).
    let at_end_of_window: Vec<Option<Reading>> =
        running.iter().map(|r| r.receiver.read()).collect();
    let window = measured_from.elapsed();
    finish.store(true, Ordering::Relaxed);
    let emulator = emulator.stop();
    let mut flows = Vec::new();
    for ((((f, r), before), after), scheduler) in plan
        .flows
        .iter()
        .zip(running)
        .zip(&at_warmup)
        .zip(at_end_of_window)
        .zip(schedulers)
    {
        let sender = r
            .thread
            .join()
            .map_err(|_| io::Error::other("a flow panicked"))?;
        // A multipath flow's session counters over the whole run (a snapshot asks the
        // monitor's thread, so only where it is used).
        let at_end = match (&r.receiver, &f.kind) {
            (
                Receiver::Monitor(m),
                FlowPlanKind::Acp {
                    multipath: Some(_), ..
                },
            ) => session(m),
            _ => None,
        };
        r.receiver.stop()?;
        let estimated_aggregation =
            std::mem::take(&mut *r.estimated.lock().unwrap_or_else(PoisonError::into_inner));
        let overhead = match f.kind {
            FlowPlanKind::Tcp(_) => FRAME_OVERHEAD as u64,
            FlowPlanKind::Acp { .. } | FlowPlanKind::Datagrams(_) | FlowPlanKind::Mptcp(_) => 0,
        };
        let (avg_age, delivered, throughput_bps) =
            window_stats(before.as_ref(), after.as_ref(), window, overhead);
        let (mut mptcp, mut multipath) = (None, None);
        let (kind, sender_name, rtt, est_age, tcp) = match (sender, &f.kind) {
            (Ok(Sender::Acp(stats, controller, paths)), FlowPlanKind::Acp { multipath: m, .. }) => {
                if let Some((rule, names)) = m {
                    let origin = clock::to_time(t0);
                    let s = at_end.as_ref().map(|r| &r.stats);
                    multipath = Some(AcpMultipathCounters {
                        scheduler: rule.name().into(),
                        lost: s.map_or(0, |s| s.lost),
                        stale: s.map_or(0, |s| s.stale),
                        duplicates: s.map_or(0, |s| s.duplicates),
                        paths: names
                            .iter()
                            .zip(&paths)
                            .map(|(name, p)| AcpPathResult::new(name.clone(), p, origin))
                            .collect(),
                    });
                }
                ("acp", controller, stats.rtt, stats.avg_age, None)
            }
            (Ok(Sender::Tcp(t, est)), FlowPlanKind::Tcp(spec)) => {
                let app = format!("{:?}", spec.app).to_lowercase();
                ("tcp", app, t.mean_rtt, est, Some(t))
            }
            (Ok(Sender::Datagrams), FlowPlanKind::Datagrams(d)) => {
                let kind = if d.updates { "updates" } else { "cross" };
                (kind, d.process_label().to_string(), None, None, None)
            }
            (Ok(Sender::Mptcp(report)), FlowPlanKind::Mptcp(m)) => {
                mptcp = Some(MptcpResult {
                    scheduler: scheduler.unwrap_or_default(),
                    subflows: mptcp_flows::subflow_results(m, &report, window),
                });
                ("mptcp", "bulk".to_string(), None, None, None)
            }
            (Err(e), _) => return Err(io::Error::new(e.kind(), format!("flow {}: {e}", f.name))),
            (Ok(_), _) => unreachable!("each kind of flow's thread hands back its own"),
        };
        let (inter_ack, segment_bytes) = route_measures(plan, f, &emulator);
        flows.push(FlowResult {
            name: f.name.clone(),
            kind,
            from: plan.hosts[f.from].clone(),
            to: plan.hosts[f.to].clone(),
            sender: sender_name,
            avg_age,
            est_age,
            rtt,
            delivered,
            throughput_bps,
            undecodable: after.map_or(0, |a| a.undecodable),
            inter_ack,
            segment_bytes,
            tcp,
            mptcp,
            multipath,
            estimated_aggregation,
        });
    }
    Ok(LabResult {
        name: plan.name.clone(),
        hosts: hosts.iter().map(|h| (h.name.clone(), h.addr)).collect(),
        ran: t0.elapsed(),
        window,
        complete,
        flows,
        emulator,
    })
}

/// A flow's inter-ACK time and segment length from the emulator's routes: its ACKs are what the
/// route back to its source delivered, its segments what the route to its destination did;
/// `(None, None)` when another flow shares the pair of hosts.
fn route_measures(
    plan: &Plan,
    f: &FlowPlan,
    emulator: &EmulatorStats,
) -> (Option<f64>, Option<f64>) {
    let alone = plan
        .flows
        .iter()
        .filter(|g| (g.from, g.to) == (f.from, f.to) || (g.from, g.to) == (f.to, f.from))
        .count()
        == 1;
    let route = |from: usize, to: usize| {
        let i = plan
            .routes
            .iter()
            .position(|r| (r.from, r.to) == (from, to))?;
        emulator.routes.get(i).filter(|_| alone)
    };
    let (fwd, back) = (route(f.from, f.to), route(f.to, f.from));
    match f.kind {
        FlowPlanKind::Tcp(_) => (
            back.and_then(|r| r.tcp_empty.mean_gap()),
            fwd.and_then(|r| r.tcp_data.mean_payload()),
        ),
        FlowPlanKind::Acp { .. } => (back.and_then(|r| r.udp.mean_gap()), None),
        FlowPlanKind::Datagrams(_) | FlowPlanKind::Mptcp(_) => (None, None),
    }
}
