//! The discrete-event engine.
//!
//! Events sit in a binary heap ordered by (time, insertion number), so simultaneous events run in
//! the order they were scheduled and a seed fully determines a run. Links are
//! [`acp_netmodel::Link`]s: the engine offers them packets, wakes them at their
//! `poll_timeout`, and moves what departs to the next hop. Packets live in a slab whose slots
//! (and byte buffers) are reused, so memory stays bounded by the packets in flight. ACP sources
//! and monitors are the `acp-core` state machines, driven with the virtual clock through
//! [`acp_netmodel::driver::on_timer`]; source timers are heap events invalidated by a
//! generation number when they move earlier, and a link is woken only when it needs waking
//! before every wake-up already pending for it.
//!
//! Randomness comes from [`acp_netmodel::Streams`]: each link's service, loss and jitter and each
//! flow's arrivals draw from their own stream, named after the link or flow, so changing one
//! flow's controller or rate leaves every other flow's arrivals unchanged (common random numbers).
//!
//! Measurements cover the window from the warm-up to the end, and for each flow only its active
//! part (`start` to `stop`). A link's per-flow backlog (updates queued or in service) is integrated
//! exactly from each packet's arrival and service-end times.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use acp_core::accounting::AgeIntegral;
use acp_core::controller::{Controller, ControllerKind};
use acp_core::multipath::{PathScheduler, PathSet};
use acp_core::source::Transmit;
use acp_core::wire::{FeedbackItem, FEEDBACK_AGGREGATION, HEADER_LEN};
use acp_core::{AppMode, Monitor, MonitorConfig, Source, Time};
use acp_netmodel::driver::{on_timer, Endpoint};
use acp_netmodel::wifi::downlink::Downlink;
use acp_netmodel::wifi::medium::{Medium, Outcome as WifiOutcome};
use acp_netmodel::wifi::FrameModel;
use acp_netmodel::{Arrivals, Link, Parcel, Streams};

use crate::flows::{FlowKind, FlowSpec};
use crate::mptcp::connection::{self as mpconn, DataAck, MptcpConnection};
use crate::report::{
    AcpMultipathCounters, AcpPathResult, FlowResult, HopBacklog, LinkResult, MptcpCounters,
    PacketEvent, SimResult, SourceCounters, SubflowResult, TcpCounters, WifiResult,
};
use crate::slot_reports::SlotMeter;
use crate::tcp::{self, Connection, Wire};
use crate::topology::{Hop, Topology, TopologyError, WifiDef};

/// Run parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Seed of every random stream.
    pub seed: u64,
    /// Simulated time.
    pub duration: Duration,
    /// Measurements (age, backlog, rates) start after this.
    pub warmup: Duration,
    /// Record each update flow's mean age on a regular grid of this many points (for plots).
    pub trace_points: usize,
    /// Record every packet offered to every link ([`SimResult::packet_log`]).
    pub packet_log: bool,
}

/// Bytes of IPv4 and UDP headers added to every ACP datagram on a link.
pub const UDP_IP_OVERHEAD: u32 = 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Update,
    Ack,
    Cross,
    /// A TCP segment or ACK (the packet's `wire` says which).
    Tcp,
    /// A segment or ACK of a multipath connection's subflow (`subflow` says which).
    Mptcp,
}

#[derive(Debug)]
struct Packet {
    flow: u32,
    size: u32,
    route: u32,
    hop: u32,
    kind: Kind,
    seq: u64,
    gen: Time,
    /// When it reached its current link (for the packet log).
    reached: Time,
    bytes: Vec<u8>,
    /// A TCP packet's header.
    wire: Option<Wire>,
    /// A multipath packet's subflow.
    subflow: u32,
    /// A multipath ACK's connection-level acknowledgement.
    data_ack: Option<DataAck>,
}

impl Packet {
    /// Whether losing it loses data of its flow (an update, a cross-traffic packet or a TCP data
    /// segment), not an acknowledgement.
    fn carries_data(&self) -> bool {
        matches!(
            (self.kind, self.wire),
            (Kind::Update | Kind::Cross, _) | (Kind::Tcp | Kind::Mptcp, Some(Wire::Data(_)))
        )
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Wake(u32),
    Timer(u32, u64),
    Generate(u32),
    Stop(u32),
    Warmup,
    /// The stations of the A-MPDU downlink of element `el` end a report slot.
    Report(u32),
}

/// One path of an ACP flow.
#[derive(Debug, Clone, Copy)]
struct AcpRoute {
    fwd: u32,
    rev: u32,
    /// Where the monitor sees the updates come from (and sends their ACKs).
    peer: SocketAddr,
}

enum State {
    Acp {
        /// Taken out while it runs, so the engine can route what it sends.
        source: Option<Box<Source>>,
        monitor: usize,
        /// Each path's (forward, reverse) route and the source's address on it (one path unless
        /// multipath).
        paths: Vec<AcpRoute>,
        /// A multipath source's scheduler.
        scheduler: Option<Box<PathScheduler>>,
        timer_gen: u64,
        timer_at: Option<Time>,
        /// The monitor answers no update before this (`slot_reports` feedback interval).
        next_ack: Time,
    },
    Stream {
        arrivals: Arrivals,
        size: u32,
        route: u32,
        next_seq: u64,
        freshest: u64,
    },
    Tcp {
        conn: Box<Connection>,
        fwd: u32,
        rev: u32,
        timer_gen: u64,
        timer_at: Option<Time>,
        /// The ACP+ paper's estimate of the age (§X): every segment carries an update fresh
        /// when it is sent, so each RTT sample (Karn's rule: no retransmitted segment) resets
        /// the age to that RTT at the ACK's arrival.
        est_age: AgeIntegral,
    },
    Mptcp {
        conn: Box<MptcpConnection>,
        /// Each subflow's (forward, reverse) route.
        routes: Vec<(u32, u32)>,
        timer_gen: u64,
        timer_at: Option<Time>,
        /// Bytes each subflow had passed on when the measurement window opened.
        baseline: Vec<u64>,
    },
}

struct Flow {
    spec: FlowSpec,
    state: State,
    /// Index among update flows (for backlog tracking).
    tracked: Option<usize>,
    start: Time,
    stop: Time,
    active: bool,
    age: AgeIntegral,
    sent: u64,
    delivered: u64,
    delivered_in_window: u64,
    bytes_in_window: u64,
    sent_in_window: u64,
    /// ACKs received in the window and the sum of their round-trip times (s).
    acks_in_window: u64,
    rtt_sum: f64,
    /// Arrival of the window's first and latest such ACK.
    first_ack: Option<Time>,
    last_ack: Time,
    /// Data segments a TCP flow sent in the window, and their payload bytes.
    segments_in_window: u64,
    segment_bytes_in_window: u64,
    /// Updates delivered in the window and the sum of their delays from generation (s).
    delays_in_window: u64,
    delay_sum: f64,
    dropped: u64,
    /// Updates a TCP flow's application skipped because the send buffer was full.
    skipped: u64,
    /// A TCP flow's congestion window (bytes) at the first event after each grid point.
    cwnd_trace: Vec<(f64, f64)>,
    /// Age integral over the current trace interval.
    recent: AgeIntegral,
    /// Fresh deliveries in the current trace interval.
    recent_delivered: u64,
    trace: Vec<(f64, f64)>,
    delivery_trace: Vec<(f64, f64)>,
    next_trace: Time,
    next_trace_cwnd: Time,
}

impl Flow {
    /// An ACK that gave a round-trip sample of `rtt` seconds arrived at `now`, in the window.
    fn sample_ack(&mut self, now: Time, rtt: f64) {
        self.acks_in_window += 1;
        self.rtt_sum += rtt;
        self.first_ack.get_or_insert(now);
        self.last_ack = now;
    }
}

/// What a hop crosses: a point-to-point link, a shared WiFi medium, or an 802.11ac A-MPDU
/// downlink.
enum Model {
    Link(Link<u32>),
    Wifi(Medium<u32>),
    Ampdu(Downlink<u32>, Box<dyn FrameModel>),
}

/// A packet leaving an element: its slab index and when its service ended (`None` when dropped
/// before service); `Ok` if it goes on, `Err` if it was dropped.
type Out = Result<(u32, Time), (u32, Option<Time>)>;

impl Model {
    fn arrive(&mut self, now: Time, hop: Hop, parcel: Parcel<u32>) -> Result<(), u32> {
        match (self, hop) {
            (Model::Link(l), _) => l.arrive(now, parcel).map_err(|d| d.parcel.item),
            (Model::Wifi(m), Hop::Wifi { from, to, .. }) => {
                m.enqueue(now, from, to, parcel).map_err(|d| d.parcel.item)
            }
            (Model::Ampdu(m, _), Hop::Wifi { from, to, .. }) => {
                m.enqueue(now, from, to, parcel).map_err(|d| d.parcel.item)
            }
            (Model::Wifi(_) | Model::Ampdu(..), Hop::Link(_)) => Err(parcel.item),
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        match self {
            Model::Link(l) => l.poll_timeout(),
            Model::Wifi(m) => m.poll_timeout(),
            Model::Ampdu(m, _) => m.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        match self {
            Model::Link(l) => l.handle_timeout(now),
            Model::Wifi(m) => m.handle_timeout(now),
            Model::Ampdu(m, _) => m.handle_timeout(now),
        }
    }

    fn poll_out(&mut self, now: Time) -> Option<Out> {
        Some(match self {
            Model::Link(l) => match l.poll_departure(now)? {
                Ok(d) => Ok((d.parcel.item, d.served_at)),
                Err(d) => Err((d.parcel.item, d.served_at)),
            },
            Model::Wifi(m) => delivered(m.poll_delivery(now)?),
            Model::Ampdu(m, _) => delivered(m.poll_delivery(now)?),
        })
    }
}

/// A WiFi outcome as the element's output: delivered at the end of its frame, or dropped.
fn delivered(outcome: WifiOutcome<u32>) -> Out {
    match outcome {
        Ok(d) => Ok((d.parcel.item, d.at)),
        Err(d) => Err((d.parcel.item, d.served_at)),
    }
}

/// A link or medium in a running simulation.
struct Element {
    model: Model,
    /// Times of the wake-up events in the heap (rarely more than two). A new one is scheduled
    /// only when the link needs waking before all of them, so none is ever wasted.
    wakes: Vec<Time>,
    /// Per tracked flow: ∫ backlog dt over the window, kept as Σ (end − max(t, w)) at arrivals
    /// minus the same at service ends (ns).
    backlog_area: Vec<i128>,
    /// The multipath subflows (flow, subflow) whose device queue this element is: the first
    /// hop of their path. Every packet entering and leaving it is counted there, as BQL counts
    /// a NIC's queue.
    devices: Vec<(u32, u32)>,
}

/// Errors building a simulation.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A bad route or link.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A flow parameter out of range.
    #[error("flow {0}: {1}")]
    BadFlow(String, String),
}

/// A simulation ready to run.
pub struct Sim {
    cfg: SimConfig,
    now: Time,
    window_start: Time,
    end: Time,
    topo: Topology,
    /// The links (element `l` is link `l`), then the WiFi media.
    elements: Vec<Element>,
    routes: Vec<Vec<Hop>>,
    flows: Vec<Flow>,
    monitors: Vec<Monitor>,
    /// The report meters of the A-MPDU downlinks' stations that host a monitor.
    meters: Vec<StationMeter>,
    /// Per monitor, the interval at which it answers updates (`None`: every update).
    feedback: Vec<Option<Duration>>,
    heap: BinaryHeap<Reverse<(Time, u64, Event)>>,
    counter: u64,
    packets: Vec<Packet>,
    free: Vec<u32>,
    events: u64,
    measuring: bool,
    ack_buf: Vec<u8>,
    tx_buf: Vec<u8>,
    tcp_out: Vec<tcp::Output>,
    log: Vec<PacketEvent>,
}

/// Checks what a flow asks for (rates, sizes, TCP settings, DSCP, stop time) before it runs;
/// `acp lab` checks its flows with it too.
pub fn check_flow(spec: &FlowSpec) -> Result<(), BuildError> {
    let bad = |why: &str| Err(BuildError::BadFlow(spec.name.clone(), why.into()));
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if let FlowKind::Acp {
        multipath: Some(m), ..
    } = &spec.kind
    {
        if m.paths.first() != Some(&spec.path) {
            return bad("a multipath ACP flow's path is its first");
        }
        m.validate().or_else(|e| bad(&e))?;
    }
    match &spec.kind {
        FlowKind::Updates { rate, size, .. } if !positive(*rate) || *size == 0 => {
            bad("updates need a positive rate and size")
        }
        FlowKind::Cross { rate_bps, size, .. } if !positive(*rate_bps) || *size == 0 => {
            bad("cross traffic needs a positive rate and packet size")
        }
        FlowKind::Tcp { config, app } => match config.validate().and_then(|()| app.validate()) {
            Err(e) => bad(&e),
            Ok(()) => Ok(()),
        },
        FlowKind::Mptcp(config) if config.paths.first() != Some(&spec.path) => {
            bad("an mptcp flow's path is its first subflow's")
        }
        FlowKind::Mptcp(config) => match config.validate() {
            Err(e) => bad(&e),
            Ok(()) => Ok(()),
        },
        _ if spec.dscp > 63 => bad("dscp must be 0–63"),
        _ if spec.stop.is_some_and(|s| s <= spec.start + spec.stagger) => {
            bad("stop must come after start (and its stagger)")
        }
        _ => Ok(()),
    }
}

/// Each of a multipath flow's `paths` as a (forward, reverse) pair of indices into `routes`,
/// whose new routes it appends; the first path's forward route is already there, at `fwd`.
fn path_routes(
    topo: &Topology,
    routes: &mut Vec<Vec<Hop>>,
    fwd: u32,
    paths: &[Vec<String>],
) -> Result<Vec<(u32, u32)>, TopologyError> {
    let mut pairs = Vec::new();
    for (k, path) in paths.iter().enumerate() {
        let forward = if k == 0 {
            fwd
        } else {
            routes.push(topo.route(path)?);
            routes.len() as u32 - 1
        };
        let rev_path: Vec<String> = path.iter().rev().cloned().collect();
        routes.push(topo.route(&rev_path)?);
        pairs.push((forward, routes.len() as u32 - 1));
    }
    Ok(pairs)
}

/// The report meter of station `station` of the A-MPDU downlink of element `el`, whose node
/// hosts monitor `monitor` ([`crate::slot_reports`]).
struct StationMeter {
    el: usize,
    station: usize,
    monitor: usize,
    meter: SlotMeter,
}

/// A meter for every station of an A-MPDU downlink whose node hosts one of the `monitors`
/// monitors (by node name in `monitor_at`), and each monitor's feedback interval.
fn station_meters(
    topo: &Topology,
    monitor_at: &HashMap<String, usize>,
    monitors: usize,
) -> (Vec<StationMeter>, Vec<Option<Duration>>) {
    let mut meters = Vec::new();
    let mut feedback = vec![None; monitors];
    for (medium, def) in topo.wifi.iter().enumerate() {
        if def.aggregation.is_none() {
            continue;
        }
        for (k, &node) in def.stations.iter().enumerate() {
            if let Some(&monitor) = monitor_at.get(topo.name(node)) {
                feedback[monitor] = def.reports.feedback;
                meters.push(StationMeter {
                    el: topo.links.len() + medium,
                    station: k + 1,
                    monitor,
                    meter: SlotMeter::default(),
                });
            }
        }
    }
    (meters, feedback)
}

/// The controllers of the ACP flows that name a `sender`, by flow index: one
/// [`ControllerKind::build_sender`] per sender over its flows in the order given, which must all
/// run the same controller.
fn sender_controllers(
    specs: &[FlowSpec],
) -> Result<HashMap<usize, Box<dyn Controller>>, BuildError> {
    let mut senders: Vec<(&str, ControllerKind, Vec<usize>)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let FlowKind::Acp {
            controller,
            sender: Some(name),
            ..
        } = &spec.kind
        else {
            continue;
        };
        match senders.iter_mut().find(|s| s.0 == name) {
            Some(s) if s.1 != *controller => {
                return Err(BuildError::BadFlow(
                    spec.name.clone(),
                    format!(
                        "sender {name:?} runs {} on its other flows: one sender, one controller",
                        s.1
                    ),
                ))
            }
            Some(s) => s.2.push(i),
            None => senders.push((name, *controller, vec![i])),
        }
    }
    let mut built = HashMap::new();
    for (name, kind, flows) in senders {
        let controllers = kind.build_sender(flows.len()).map_err(|e| {
            BuildError::BadFlow(
                specs[flows[0]].name.clone(),
                format!("sender {name:?}: {e}"),
            )
        })?;
        built.extend(flows.into_iter().zip(controllers));
    }
    Ok(built)
}

fn monitor_config() -> MonitorConfig {
    MonitorConfig {
        clocks_synchronised: true,
        max_sessions: 1 << 20,
        idle_timeout: Duration::from_secs(1 << 30),
        probation: Duration::from_secs(1 << 30),
        // The simulated network has no attackers: no share limits, no cookie round trips.
        max_prefix_share: 1.0,
        cookie_threshold: f64::INFINITY,
        ..MonitorConfig::default()
    }
}

impl Sim {
    /// The node names of the stations of `def`, its AP first (medium station `k` is the `k`th).
    fn station_names(&self, def: &WifiDef) -> Vec<String> {
        std::iter::once(def.ap)
            .chain(def.stations.iter().copied())
            .map(|n| self.topo.name(n).to_string())
            .collect()
    }

    /// Builds a simulation of `specs` over `topo`.
    pub fn new(cfg: SimConfig, topo: Topology, specs: Vec<FlowSpec>) -> Result<Self, BuildError> {
        let start = Time::ZERO;
        let end = start + cfg.duration;
        let streams = Streams::new(cfg.seed);
        let tracked_count = specs.iter().filter(|f| f.is_update_flow()).count();
        let links = (0..topo.links.len()).map(|id| {
            Model::Link(Link::new(
                topo.links[id].config.clone(),
                &streams,
                &topo.link_name(id),
                start,
            ))
        });
        let media = topo.wifi.iter().map(|w| {
            let frames = (w.frames)(&streams);
            match &w.aggregation {
                None => Ok(Model::Wifi(Medium::new(
                    w.mac.clone(),
                    frames,
                    &streams,
                    &w.name,
                    start,
                ))),
                Some(template) => w
                    .downlink(template, frames.as_ref(), &streams, start)
                    .map(|d| Model::Ampdu(d, frames))
                    .map_err(|e| TopologyError::BadLink(topo.name(w.ap).into(), w.name.clone(), e)),
            }
        });
        let media: Vec<Model> = media.collect::<Result<_, _>>()?;
        let mut elements = links
            .chain(media)
            .map(|model| Element {
                model,
                wakes: Vec::new(),
                backlog_area: vec![0; tracked_count],
                devices: Vec::new(),
            })
            .collect::<Vec<Element>>();
        let mut routes = Vec::new();
        let mut monitors: Vec<Monitor> = Vec::new();
        let mut monitor_at: HashMap<String, usize> = HashMap::new();
        let mut flows = Vec::new();
        let mut names = std::collections::HashSet::new();
        let mut next_tracked = 0;
        let mut shared = sender_controllers(&specs)?;
        for (i, spec) in specs.into_iter().enumerate() {
            check_flow(&spec)?;
            if !names.insert(spec.name.clone()) {
                return Err(BuildError::BadFlow(
                    spec.name,
                    "two flows have this name".into(),
                ));
            }
            let fwd = routes.len() as u32;
            routes.push(topo.route(&spec.path)?);
            let carries_updates =
                matches!(spec.kind, FlowKind::Acp { .. } | FlowKind::Updates { .. });
            let tracked = carries_updates.then(|| {
                next_tracked += 1;
                next_tracked - 1
            });
            let flow_start = start + spec.staggered_start(&streams);
            let state = match &spec.kind {
                FlowKind::Acp {
                    controller,
                    config,
                    payload,
                    multipath,
                    ..
                } => {
                    let ip = Ipv4Addr::from(0x0A00_0000 + i as u32);
                    let one = [spec.path.clone()];
                    let paths = multipath.as_ref().map_or(&one[..], |m| &m.paths[..]);
                    let acp_routes = path_routes(&topo, &mut routes, fwd, paths)?
                        .into_iter()
                        .enumerate()
                        .map(|(k, (fwd, rev))| AcpRoute {
                            fwd,
                            rev,
                            peer: SocketAddr::V4(SocketAddrV4::new(ip, 4000 + k as u16)),
                        })
                        .collect();
                    let last = spec.path.last().cloned().unwrap_or_default();
                    let monitor = *monitor_at.entry(last).or_insert_with(|| {
                        monitors.push(Monitor::new(monitor_config(), start));
                        monitors.len() - 1
                    });
                    let n = *payload as usize;
                    let mode = AppMode::GenerateAtWill(Box::new(move |_, out: &mut Vec<u8>| {
                        out.resize(out.len() + n, 0)
                    }));
                    let controller = shared.remove(&i).unwrap_or_else(|| controller.build());
                    let mut source = Source::new(
                        config.clone(),
                        controller,
                        mode,
                        0xACE0_0000 + i as u64,
                        flow_start,
                    );
                    let scheduler = match multipath {
                        Some(m) => {
                            source.set_multipath();
                            let s = PathScheduler::new(m.rule, m.paths.len())
                                .map_err(|e| BuildError::BadFlow(spec.name.clone(), e))?;
                            Some(Box::new(s))
                        }
                        None => None,
                    };
                    State::Acp {
                        source: Some(Box::new(source)),
                        monitor,
                        paths: acp_routes,
                        scheduler,
                        timer_gen: 0,
                        timer_at: None,
                        next_ack: Time::ZERO,
                    }
                }
                FlowKind::Updates { size, .. } | FlowKind::Cross { size, .. } => State::Stream {
                    arrivals: spec
                        .arrivals(&streams, flow_start)
                        .unwrap_or_else(|| unreachable!("updates and cross flows have arrivals")),
                    size: *size,
                    route: fwd,
                    next_seq: 1,
                    freshest: 0,
                },
                FlowKind::Tcp { config, app } => {
                    let rev_path: Vec<String> = spec.path.iter().rev().cloned().collect();
                    let rev = routes.len() as u32;
                    routes.push(topo.route(&rev_path)?);
                    let seed = streams
                        .stream(&format!("flow {} congestion control", spec.name))
                        .next_u64();
                    State::Tcp {
                        conn: Box::new(Connection::new(config, *app, flow_start, seed)),
                        fwd,
                        rev,
                        timer_gen: 0,
                        timer_at: None,
                        est_age: AgeIntegral::new(start),
                    }
                }
                FlowKind::Mptcp(config) => {
                    let subflow_routes = path_routes(&topo, &mut routes, fwd, &config.paths)?;
                    for (k, &(forward, _)) in subflow_routes.iter().enumerate() {
                        if let Some(&first) = routes[forward as usize].first() {
                            let el = match first {
                                Hop::Link(l) => l,
                                Hop::Wifi { medium, .. } => topo.links.len() + medium,
                            };
                            elements[el].devices.push((i as u32, k as u32));
                        }
                    }
                    let seed = streams
                        .stream(&format!("flow {} congestion control", spec.name))
                        .next_u64();
                    State::Mptcp {
                        conn: Box::new(MptcpConnection::new(config, flow_start, seed)),
                        baseline: vec![0; subflow_routes.len()],
                        routes: subflow_routes,
                        timer_gen: 0,
                        timer_at: None,
                    }
                }
            };
            flows.push(Flow {
                start: flow_start,
                stop: spec.stop.map_or(Time::MAX, |s| start + s),
                active: false,
                spec,
                state,
                tracked,
                age: AgeIntegral::new(start),
                sent: 0,
                delivered: 0,
                delivered_in_window: 0,
                bytes_in_window: 0,
                sent_in_window: 0,
                acks_in_window: 0,
                rtt_sum: 0.0,
                first_ack: None,
                last_ack: Time::ZERO,
                segments_in_window: 0,
                segment_bytes_in_window: 0,
                delays_in_window: 0,
                delay_sum: 0.0,
                dropped: 0,
                skipped: 0,
                cwnd_trace: Vec::new(),
                recent: AgeIntegral::new(start),
                recent_delivered: 0,
                trace: Vec::new(),
                delivery_trace: Vec::new(),
                next_trace: start,
                next_trace_cwnd: start,
            });
        }
        let (meters, feedback) = station_meters(&topo, &monitor_at, monitors.len());
        let mut sim = Sim {
            now: start,
            window_start: start + cfg.warmup,
            end,
            cfg,
            topo,
            elements,
            routes,
            flows,
            monitors,
            meters,
            feedback,
            heap: BinaryHeap::new(),
            counter: 0,
            packets: Vec::new(),
            free: Vec::new(),
            events: 0,
            measuring: false,
            ack_buf: vec![0u8; HEADER_LEN + 64],
            tx_buf: Vec::new(),
            tcp_out: Vec::new(),
            log: Vec::new(),
        };
        sim.schedule(sim.window_start, Event::Warmup);
        let reporting: Vec<(usize, Duration)> = (0..sim.topo.wifi.len())
            .map(|medium| {
                let el = sim.topo.links.len() + medium;
                (el, sim.topo.wifi[medium].reports.slot)
            })
            .filter(|(el, _)| sim.meters.iter().any(|m| m.el == *el))
            .collect();
        for (el, slot) in reporting {
            sim.schedule(start + slot, Event::Report(el as u32));
        }
        // A downlink with legacy stations has traffic before any packet reaches it.
        for el in 0..sim.elements.len() {
            if matches!(sim.elements[el].model, Model::Ampdu(..)) {
                sim.reschedule(el);
            }
        }
        for i in 0..sim.flows.len() {
            let f = &mut sim.flows[i];
            f.active = f.start <= start;
            let (first, stop) = match &f.state {
                State::Acp { .. } | State::Tcp { .. } | State::Mptcp { .. } => (None, f.stop),
                State::Stream { arrivals, .. } => (Some(arrivals.next_at()), f.stop),
            };
            if stop < Time::MAX {
                sim.schedule(stop, Event::Stop(i as u32));
            }
            match first {
                None => sim.reschedule_timer(i),
                Some(t) if t < stop => sim.schedule(t, Event::Generate(i as u32)),
                Some(_) => {}
            }
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Time, ev: Event) {
        self.counter += 1;
        self.heap.push(Reverse((at, self.counter, ev)));
    }

    fn alloc(&mut self, flow: usize, kind: Kind, route: u32, size: u32, seq: u64) -> u32 {
        let p = Packet {
            flow: flow as u32,
            size,
            route,
            hop: 0,
            kind,
            seq,
            gen: self.now,
            reached: self.now,
            bytes: Vec::new(),
            wire: None,
            subflow: 0,
            data_ack: None,
        };
        match self.free.pop() {
            Some(id) => {
                let slot = &mut self.packets[id as usize];
                let mut bytes = std::mem::take(&mut slot.bytes);
                bytes.clear();
                *slot = Packet { bytes, ..p };
                id
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> SimResult {
        while let Some(Reverse((t, _, ev))) = self.heap.pop() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.events += 1;
            match ev {
                Event::Wake(e) => self.wake(e as usize),
                Event::Timer(f, generation) => self.timer(f as usize, generation),
                Event::Generate(f) => self.generate(f as usize),
                Event::Stop(f) => self.stop_flow(f as usize),
                Event::Warmup => self.start_measuring(),
                Event::Report(el) => self.end_report_slot(el as usize),
            }
        }
        self.now = self.end;
        self.results()
    }

    fn start_measuring(&mut self) {
        self.measuring = true;
        let now = self.now;
        for f in &mut self.flows {
            f.age.take_window(now);
            match &mut f.state {
                State::Acp {
                    source: Some(source),
                    ..
                } => source.restart_averages(now),
                State::Tcp { est_age, .. } => {
                    est_age.take_window(now);
                }
                State::Mptcp { conn, baseline, .. } => {
                    for (k, b) in baseline.iter_mut().enumerate() {
                        *b = conn.subflow_delivered(k);
                    }
                }
                _ => {}
            }
        }
    }

    /// The stations of the A-MPDU downlink of element `el` end a report slot: each meter takes
    /// its frames, and its monitor reports the slot on its ACKs from now on.
    fn end_report_slot(&mut self, el: usize) {
        let now = self.now;
        let frames = match &mut self.elements[el].model {
            Model::Ampdu(d, _) => d.take_frames(),
            Model::Link(_) | Model::Wifi(_) => Vec::new(),
        };
        let slot = self.topo.wifi[el - self.topo.links.len()].reports.slot;
        for m in self.meters.iter_mut().filter(|m| m.el == el) {
            for f in frames.iter().filter(|f| f.station == m.station) {
                m.meter.frame(f);
            }
            if let Some(report) = m.meter.close(now, slot) {
                let value = report.encode();
                let item = FeedbackItem {
                    kind: FEEDBACK_AGGREGATION,
                    value: &value,
                };
                // One 19-byte report always encodes.
                let _ = self.monitors[m.monitor].set_feedback(&[item]);
            }
        }
        self.schedule(now + slot, Event::Report(el as u32));
    }

    /// Packet `p` left element `el` for its next hop: if that was an A-MPDU downlink to a
    /// metered station, its delay at the AP counts in the station's slot.
    fn meter_delivery(&mut self, el: usize, p: u32) {
        if self.meters.is_empty() {
            return;
        }
        let pk = &self.packets[p as usize];
        let Some(&Hop::Wifi { from: 0, to, .. }) =
            self.routes[pk.route as usize].get(pk.hop as usize)
        else {
            return;
        };
        let delay = Duration::from_nanos(self.now.nanos_since(pk.reached));
        if let Some(m) = self
            .meters
            .iter_mut()
            .find(|m| m.el == el && m.station == to)
        {
            m.meter.delivered(delay);
        }
    }

    /// From its stop on, a flow's deliveries no longer reset its age, so its age integral read
    /// at the stop is its age while active.
    fn stop_flow(&mut self, i: usize) {
        self.flows[i].active = false;
        match &mut self.flows[i].state {
            State::Tcp { conn, .. } => conn.stop(),
            State::Mptcp { conn, .. } => conn.stop(),
            _ => {}
        }
    }

    /// Where a packet of `flow` is in the measurement window: `end − max(t, window start)`.
    fn window_rest(&self, t: Time) -> i128 {
        i128::from(self.end.nanos_since(t.max(self.window_start)))
    }

    /// The element a hop crosses.
    fn element(&self, hop: Hop) -> usize {
        match hop {
            Hop::Link(l) => l,
            Hop::Wifi { medium, .. } => self.topo.links.len() + medium,
        }
    }

    /// Offers packet `p` to `hop`.
    fn enqueue(&mut self, hop: Hop, p: u32) {
        let now = self.now;
        let pk = &mut self.packets[p as usize];
        pk.reached = now;
        let (flow, kind, size) = (pk.flow as usize, pk.kind, pk.size);
        let spec = &self.flows[flow].spec;
        let dscp = if matches!(kind, Kind::Ack) {
            spec.ack_dscp()
        } else {
            spec.dscp
        };
        let parcel = Parcel {
            item: p,
            bytes: pk.size,
            dscp,
            source: flow as u64,
        };
        let el = self.element(hop);
        match self.elements[el].model.arrive(now, hop, parcel) {
            Ok(()) => {
                if let (Kind::Update, Some(t)) = (kind, self.flows[flow].tracked) {
                    let rest = self.window_rest(now);
                    self.elements[el].backlog_area[t] += rest;
                }
                self.device_event(el, size, None);
            }
            Err(_) => {
                if self.packets[p as usize].carries_data() {
                    self.flows[flow].dropped += 1;
                }
                self.log_packet(hop, p, None);
                self.release(p);
            }
        }
        self.reschedule(el);
    }

    fn reschedule(&mut self, el: usize) {
        let e = &mut self.elements[el];
        let Some(t) = e.model.poll_timeout() else {
            return;
        };
        let t = t.max(self.now);
        if e.wakes.iter().any(|&w| w <= t) {
            return; // a wake-up at or before t is pending; it will reschedule
        }
        e.wakes.push(t);
        self.schedule(t, Event::Wake(el as u32));
    }

    fn wake(&mut self, el: usize) {
        let now = self.now;
        let wakes = &mut self.elements[el].wakes;
        if let Some(i) = wakes.iter().position(|&w| w == now) {
            wakes.swap_remove(i);
        }
        self.elements[el].model.handle_timeout(now);
        while let Some(out) = self.elements[el].model.poll_out(now) {
            let (p, served_at, delivered) = match out {
                Ok((p, served)) => (p, Some(served), true),
                Err((p, served)) => (p, served, false),
            };
            let bytes = self.packets[p as usize].size;
            self.device_event(el, bytes, Some(served_at.unwrap_or(now)));
            let pk = &self.packets[p as usize];
            if let (Kind::Update, Some(t)) = (pk.kind, self.flows[pk.flow as usize].tracked) {
                // Dropped before service: it left the queue now.
                let rest = self.window_rest(served_at.unwrap_or(now));
                self.elements[el].backlog_area[t] -= rest;
            }
            if self.cfg.packet_log {
                let pk = &self.packets[p as usize];
                let hop = self.routes[pk.route as usize][pk.hop as usize];
                self.log_packet(hop, p, delivered.then_some(now));
            }
            if delivered {
                self.meter_delivery(el, p);
                self.packets[p as usize].hop += 1;
                self.arrive(p);
            } else {
                if self.packets[p as usize].carries_data() {
                    self.flows[self.packets[p as usize].flow as usize].dropped += 1;
                }
                self.release(p);
            }
        }
        self.reschedule(el);
    }

    /// A packet of `bytes` entered element `el` (`left` none) or left it at `left`: the device
    /// queues of the multipath subflows whose first hop it is count it.
    fn device_event(&mut self, el: usize, bytes: u32, left: Option<Time>) {
        for &(flow, k) in &self.elements[el].devices {
            if let State::Mptcp { conn, .. } = &mut self.flows[flow as usize].state {
                match left {
                    None => conn.device_enqueue(k as usize, u64::from(bytes)),
                    Some(at) => conn.device_complete(k as usize, at, u64::from(bytes)),
                }
            }
        }
    }

    fn log_packet(&mut self, hop: Hop, p: u32, departed: Option<Time>) {
        if !self.cfg.packet_log {
            return;
        }
        let pk = &self.packets[p as usize];
        let event = PacketEvent {
            link: self.topo.hop_name(hop),
            flow: self.flows[pk.flow as usize].spec.name.clone(),
            kind: match (pk.kind, pk.wire) {
                (Kind::Update, _) => "update",
                (Kind::Ack, _) => "ack",
                (Kind::Cross, _) => "cross",
                (Kind::Tcp | Kind::Mptcp, Some(Wire::Data(_))) => "segment",
                (Kind::Tcp | Kind::Mptcp, _) => "tcp-ack",
            }
            .into(),
            seq: pk.seq,
            bytes: pk.size,
            arrived_ns: pk.reached.as_nanos(),
            departed_ns: departed.map(Time::as_nanos),
        };
        self.log.push(event);
    }

    /// Packet `p` reached the node before its next hop (or its destination).
    fn arrive(&mut self, p: u32) {
        let (route, hop) = {
            let pk = &self.packets[p as usize];
            (pk.route as usize, pk.hop as usize)
        };
        match self.routes[route].get(hop) {
            Some(&hop) => self.enqueue(hop, p),
            None => self.deliver(p),
        }
    }

    /// A packet reached the end of its route.
    fn deliver(&mut self, p: u32) {
        let now = self.now;
        let (flow, kind, size, seq, gen) = {
            let pk = &self.packets[p as usize];
            (pk.flow as usize, pk.kind, pk.size, pk.seq, pk.gen)
        };
        match kind {
            Kind::Cross => {
                let measuring = self.measuring;
                let f = &mut self.flows[flow];
                f.delivered += 1;
                if measuring {
                    f.delivered_in_window += 1;
                    f.bytes_in_window += u64::from(size);
                }
            }
            Kind::Ack => {
                let measuring = self.measuring;
                let f = &mut self.flows[flow];
                if measuring && f.active {
                    // An ACK carries its update's send time: one RTT sample.
                    f.sample_ack(now, now.nanos_since(gen) as f64 * 1e-9);
                }
                if let State::Acp {
                    source: Some(source),
                    scheduler,
                    ..
                } = &mut f.state
                {
                    let pk = &self.packets[p as usize];
                    match scheduler {
                        Some(s) => s.handle_datagram(source, pk.subflow as usize, now, &pk.bytes),
                        None => source.handle_datagram(now, &pk.bytes),
                    };
                }
                self.reschedule_timer(flow);
            }
            Kind::Tcp => {
                let wire = self.packets[p as usize].wire;
                self.drive_tcp(flow, |conn, now, out| match wire {
                    Some(Wire::Data(seg)) => conn.on_data(now, seg, out),
                    Some(Wire::Ack(ack)) => conn.on_ack(now, ack, out),
                    None => {}
                });
            }
            Kind::Mptcp => {
                let pk = &self.packets[p as usize];
                let (wire, k, data_ack) = (pk.wire, pk.subflow as usize, pk.data_ack);
                self.drive_mptcp(flow, |conn, now, out| match (wire, data_ack) {
                    (Some(Wire::Data(seg)), _) => conn.on_data(now, k, seg, out),
                    (Some(Wire::Ack(ack)), Some(d)) => conn.on_ack(now, k, ack, d, out),
                    _ => {}
                });
            }
            Kind::Update => {
                let mut ack = None;
                let fresh = match &mut self.flows[flow].state {
                    State::Acp {
                        monitor,
                        paths,
                        next_ack,
                        ..
                    } => {
                        let m = &mut self.monitors[*monitor];
                        let path = paths[self.packets[p as usize].subflow as usize];
                        match m.handle_datagram(
                            now,
                            path.peer,
                            &self.packets[p as usize].bytes,
                            &mut self.ack_buf,
                        ) {
                            Ok(h) => {
                                if now >= *next_ack {
                                    ack = Some((h.ack_len, path.rev));
                                    if let Some(every) = self.feedback[*monitor] {
                                        *next_ack = now + every;
                                    }
                                }
                                h.delivery.map(|d| Time::from_nanos(d.gen_ts))
                            }
                            Err(_) => None,
                        }
                    }
                    State::Stream { freshest, .. } => (seq > *freshest).then(|| {
                        *freshest = seq;
                        gen
                    }),
                    // TCP's packets are Kind::Tcp or Kind::Mptcp.
                    State::Tcp { .. } | State::Mptcp { .. } => None,
                };
                if let Some(gen) = fresh {
                    self.record_delivery(flow, gen);
                    self.count_bytes(flow, u64::from(size));
                }
                if let Some((len, rev)) = ack {
                    let subflow = self.packets[p as usize].subflow;
                    let a = self.alloc(flow, Kind::Ack, rev, len as u32 + UDP_IP_OVERHEAD, seq);
                    let pk = &mut self.packets[a as usize];
                    pk.gen = gen;
                    pk.subflow = subflow;
                    pk.bytes.extend_from_slice(&self.ack_buf[..len]);
                    self.arrive(a);
                }
            }
        }
        self.release(p);
    }

    /// Bytes of `flow` delivered to the receiving application (its throughput).
    fn count_bytes(&mut self, flow: usize, bytes: u64) {
        let f = &mut self.flows[flow];
        if self.measuring && f.active {
            f.bytes_in_window += bytes;
        }
    }

    /// A fresh update of `flow`, generated at `gen`, reached the receiver.
    fn record_delivery(&mut self, flow: usize, gen: Time) {
        let now = self.now;
        let measuring = self.measuring;
        let spacing = self.cfg.duration / (self.cfg.trace_points.max(1) as u32);
        let f = &mut self.flows[flow];
        f.delivered += 1;
        if !f.active {
            return; // stopped: what is still in flight no longer counts
        }
        f.age.reset(now, gen.as_nanos());
        if measuring {
            f.delivered_in_window += 1;
            f.delays_in_window += 1;
            f.delay_sum += now.nanos_since(gen) as f64 * 1e-9;
        }
        if self.cfg.trace_points > 0 && !spacing.is_zero() {
            // Close every grid interval that ended by now, then move the reference.
            while f.next_trace <= now {
                let t = f.next_trace.as_secs_f64();
                if let Some(avg) = f.recent.take_window(f.next_trace) {
                    f.trace.push((t, avg));
                }
                let per_s = f.recent_delivered as f64 / spacing.as_secs_f64();
                f.delivery_trace.push((t, per_s));
                f.recent_delivered = 0;
                f.next_trace += spacing;
            }
            f.recent.reset(now, gen.as_nanos());
            f.recent_delivered += 1;
        }
    }

    /// Moves flow `i`'s timer event (an ACP source's or a TCP connection's) to when it next
    /// needs waking.
    fn reschedule_timer(&mut self, i: usize) {
        let now = self.now;
        let (next, timer_gen, timer_at) = match &mut self.flows[i].state {
            State::Acp {
                source: Some(source),
                timer_gen,
                timer_at,
                ..
            } => (Endpoint::poll_timeout(source.as_ref()), timer_gen, timer_at),
            State::Tcp {
                conn,
                timer_gen,
                timer_at,
                ..
            } => (conn.poll_timeout(now), timer_gen, timer_at),
            State::Mptcp {
                conn,
                timer_gen,
                timer_at,
                ..
            } => (conn.poll_timeout(now), timer_gen, timer_at),
            _ => return,
        };
        let next = next.map(|t| t.max(now));
        if next == *timer_at {
            return;
        }
        *timer_at = next;
        *timer_gen += 1;
        let generation = *timer_gen;
        if let Some(t) = next {
            self.schedule(t, Event::Timer(i as u32, generation));
        }
    }

    fn timer(&mut self, i: usize, generation: u64) {
        let now = self.now;
        if let State::Tcp {
            timer_gen,
            timer_at,
            ..
        }
        | State::Mptcp {
            timer_gen,
            timer_at,
            ..
        } = &mut self.flows[i].state
        {
            if *timer_gen != generation {
                return;
            }
            *timer_at = None;
            if now < self.flows[i].stop {
                self.flows[i].active = true;
            }
            if matches!(self.flows[i].state, State::Tcp { .. }) {
                self.drive_tcp(i, |conn, now, out| conn.on_timer(now, out));
            } else {
                self.drive_mptcp(i, |conn, now, out| conn.on_timer(now, out));
            }
            return;
        }
        let (routes, mut source, mut scheduler) = match &mut self.flows[i].state {
            State::Acp {
                timer_gen,
                timer_at,
                paths,
                source,
                scheduler,
                ..
            } if *timer_gen == generation => {
                *timer_at = None;
                let routes: Vec<u32> = paths.iter().map(|r| r.fwd).collect();
                (routes, source.take(), scheduler.take())
            }
            _ => return,
        };
        let Some(src) = source.as_mut() else {
            return;
        };
        if now >= self.flows[i].stop {
            self.restore_source(i, source, scheduler);
            return;
        }
        self.flows[i].active = true;
        let mut buf = std::mem::take(&mut self.tx_buf);
        let mut send = |data: &[u8], tx: Transmit, chosen: PathSet| {
            let size = data.len() as u32 + UDP_IP_OVERHEAD;
            for k in chosen.iter() {
                let p = self.alloc(i, Kind::Update, routes[k], size, tx.seq);
                let pk = &mut self.packets[p as usize];
                pk.bytes.extend_from_slice(data);
                pk.subflow = k as u32;
                self.arrive(p);
            }
            let f = &mut self.flows[i];
            f.sent += 1;
            f.sent_in_window += u64::from(self.measuring);
            Ok::<(), Infallible>(())
        };
        let _ = match scheduler.as_mut() {
            Some(s) => s.on_timer(src, now, &mut buf, send),
            None => on_timer(src.as_mut(), now, &mut buf, |data, tx| {
                send(data, tx, PathSet::single(0))
            }),
        };
        self.tx_buf = buf;
        self.restore_source(i, source, scheduler);
        self.reschedule_timer(i);
    }

    /// Runs `call` on TCP flow `i`'s connection, then carries out what it did: packets onto
    /// the path (data forward, ACKs back), updates and bytes delivered, RTT samples.
    fn drive_tcp(
        &mut self,
        i: usize,
        call: impl FnOnce(&mut Connection, Time, &mut dyn FnMut(tcp::Output)),
    ) {
        let now = self.now;
        let mut outputs = std::mem::take(&mut self.tcp_out);
        let State::Tcp { conn, fwd, rev, .. } = &mut self.flows[i].state else {
            return;
        };
        let (fwd, rev) = (*fwd, *rev);
        call(conn, now, &mut |o| outputs.push(o));
        let cwnd = conn.sender().cwnd();
        for o in outputs.drain(..) {
            self.tcp_output(i, o, fwd, rev);
        }
        self.tcp_out = outputs;
        let spacing = self.cfg.duration / (self.cfg.trace_points.max(1) as u32);
        let f = &mut self.flows[i];
        if self.cfg.trace_points > 0 && !spacing.is_zero() && f.next_trace_cwnd <= now {
            f.cwnd_trace.push((now.as_secs_f64(), cwnd as f64));
            while f.next_trace_cwnd <= now {
                f.next_trace_cwnd += spacing;
            }
        }
        self.reschedule_timer(i);
    }

    fn tcp_output(&mut self, i: usize, o: tcp::Output, fwd: u32, rev: u32) {
        let measuring = self.measuring;
        match o {
            tcp::Output::Transmit(wire) => {
                let (route, seq) = match wire {
                    Wire::Data(seg) => {
                        self.count_segment(i, seg.len);
                        (fwd, seg.seq)
                    }
                    Wire::Ack(ack) => (rev, ack.ack),
                };
                let p = self.alloc(i, Kind::Tcp, route, wire.wire_bytes(), seq);
                self.packets[p as usize].wire = Some(wire);
                self.arrive(p);
            }
            tcp::Output::Written => {
                let f = &mut self.flows[i];
                f.sent += 1;
                f.sent_in_window += u64::from(measuring);
            }
            tcp::Output::Skipped => self.flows[i].skipped += 1,
            tcp::Output::Delivered { generated, .. } => self.record_delivery(i, generated),
            tcp::Output::Read(bytes) => self.count_bytes(i, bytes),
            tcp::Output::Rtt(rtt) => self.count_rtt(i, rtt),
        }
    }

    /// Runs `call` on multipath flow `i`'s connection, then carries out what it did: packets
    /// onto their subflow's path, bytes delivered, RTT samples.
    fn drive_mptcp(
        &mut self,
        i: usize,
        call: impl FnOnce(&mut MptcpConnection, Time, &mut dyn FnMut(mpconn::Output)),
    ) {
        let now = self.now;
        let mut outputs = Vec::new();
        let State::Mptcp { conn, .. } = &mut self.flows[i].state else {
            return;
        };
        call(conn, now, &mut |o| outputs.push(o));
        for o in outputs {
            match o {
                mpconn::Output::Transmit {
                    subflow,
                    wire,
                    data_ack,
                } => {
                    let State::Mptcp { routes, .. } = &self.flows[i].state else {
                        return;
                    };
                    let (fwd, rev) = routes[subflow];
                    let (route, seq) = match wire {
                        Wire::Data(seg) => {
                            self.count_segment(i, seg.len);
                            (fwd, seg.seq)
                        }
                        Wire::Ack(ack) => (rev, ack.ack),
                    };
                    let p = self.alloc(i, Kind::Mptcp, route, wire.wire_bytes(), seq);
                    let pk = &mut self.packets[p as usize];
                    pk.wire = Some(wire);
                    pk.subflow = subflow as u32;
                    pk.data_ack = data_ack;
                    self.arrive(p);
                }
                mpconn::Output::Read(bytes) => self.count_bytes(i, bytes),
                mpconn::Output::Rtt { rtt, .. } => self.count_rtt(i, rtt),
            }
        }
        self.reschedule_timer(i);
    }

    /// A data segment of `len` payload bytes of flow `i` went out.
    fn count_segment(&mut self, i: usize, len: u32) {
        if self.measuring {
            let f = &mut self.flows[i];
            f.segments_in_window += 1;
            f.segment_bytes_in_window += u64::from(len);
        }
    }

    /// An ACK of flow `i` gave an RTT sample (a TCP flow's age estimate resets with it).
    fn count_rtt(&mut self, i: usize, rtt: Duration) {
        let now = self.now;
        let measuring = self.measuring;
        let f = &mut self.flows[i];
        if !f.active {
            return; // stopped: as for the true age, later ACKs no longer count
        }
        if measuring {
            f.sample_ack(now, rtt.as_secs_f64());
        }
        if let State::Tcp { est_age, .. } = &mut f.state {
            est_age.reset(now, now.as_nanos().saturating_sub(rtt.as_nanos() as u64));
        }
    }

    fn restore_source(
        &mut self,
        i: usize,
        source: Option<Box<Source>>,
        scheduler: Option<Box<PathScheduler>>,
    ) {
        if let State::Acp {
            source: slot,
            scheduler: s,
            ..
        } = &mut self.flows[i].state
        {
            *slot = source;
            *s = scheduler;
        }
    }

    fn generate(&mut self, i: usize) {
        let f = &mut self.flows[i];
        f.active = true;
        let State::Stream {
            arrivals,
            size,
            route,
            next_seq,
            ..
        } = &mut f.state
        else {
            return;
        };
        arrivals.pop();
        let (size, route, seq, next) = (*size, *route, *next_seq, arrivals.next_at());
        *next_seq += 1;
        let kind = if f.spec.is_update_flow() {
            Kind::Update
        } else {
            Kind::Cross
        };
        f.sent += 1;
        f.sent_in_window += u64::from(self.measuring);
        let stop = f.stop;
        let p = self.alloc(i, kind, route, size, seq);
        self.arrive(p);
        if next < stop {
            self.schedule(next, Event::Generate(i as u32));
        }
    }

    /// Seconds of `f`'s active time inside the measurement window.
    fn active_secs(&self, f: &Flow) -> f64 {
        let from = f.start.max(self.window_start);
        let to = f.stop.min(self.end);
        to.as_nanos().saturating_sub(from.as_nanos()) as f64 * 1e-9
    }

    fn results(&mut self) -> SimResult {
        let window = self.end.nanos_since(self.window_start) as f64;
        // Updates served but still propagating at the end left their queue before it.
        for l in 0..self.topo.links.len() {
            let Model::Link(link) = &self.elements[l].model else {
                continue;
            };
            let done: Vec<(usize, Time)> = link
                .propagating()
                .filter_map(|d| {
                    let pk = &self.packets[d.parcel.item as usize];
                    let t = self.flows[pk.flow as usize].tracked?;
                    (pk.kind == Kind::Update).then_some((t, d.served_at))
                })
                .collect();
            for (t, served_at) in done {
                let rest = self.window_rest(served_at);
                self.elements[l].backlog_area[t] -= rest;
            }
        }
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let stats = match &f.state {
                    State::Acp {
                        source: Some(source),
                        ..
                    } => Some((source.controller_name(), source.stats(self.now.min(f.stop)))),
                    _ => None,
                };
                let s = stats.as_ref().map(|(_, s)| s);
                let backlog = match f.tracked {
                    Some(t) => self.routes[self.fwd_route(f)]
                        .iter()
                        .map(|&hop| {
                            let (from, to) = self.topo.hop_ends(hop);
                            let area = self.elements[self.element(hop)].backlog_area[t];
                            HopBacklog {
                                from: from.into(),
                                to: to.into(),
                                backlog: area as f64 / window.max(1.0),
                            }
                        })
                        .collect(),
                    None => Vec::new(),
                };
                let active = self.active_secs(f);
                let age = f.age.average(self.now.min(f.stop));
                let tcp = match &f.state {
                    State::Tcp { conn, .. } => Some(tcp_counters(conn, f)),
                    _ => None,
                };
                let mptcp = match &f.state {
                    State::Mptcp { conn, baseline, .. } => {
                        Some(mptcp_counters(conn, f, baseline, active, self.now))
                    }
                    _ => None,
                };
                let multipath = self.multipath_counters(f);
                FlowResult {
                    name: f.spec.name.clone(),
                    kind: f.spec.kind.label().into(),
                    controller: stats
                        .as_ref()
                        .map(|(c, _)| c.clone())
                        .or_else(|| tcp.as_ref().map(|t| t.cc.clone()))
                        .or_else(|| mptcp.as_ref().map(|m| m.scheduler.clone())),
                    dscp: f.spec.dscp,
                    active_s: active,
                    age: age.filter(|_| f.spec.is_update_flow()),
                    mean_delay: (f.delays_in_window > 0)
                        .then(|| f.delay_sum / f.delays_in_window as f64),
                    est_age: match &f.state {
                        State::Tcp { est_age, .. } => est_age.average(self.now.min(f.stop)),
                        _ => s.and_then(|s| s.avg_age),
                    },
                    rtt: s.and_then(|s| s.rtt),
                    source_backlog: s.map(|s| s.avg_backlog),
                    final_rate: s.map(|s| s.rate),
                    mean_rtt: (f.acks_in_window > 0).then(|| f.rtt_sum / f.acks_in_window as f64),
                    inter_ack: f.first_ack.filter(|_| f.acks_in_window > 1).map(|first| {
                        f.last_ack.nanos_since(first) as f64 * 1e-9 / (f.acks_in_window - 1) as f64
                    }),
                    segment_bytes: (f.segments_in_window > 0)
                        .then(|| f.segment_bytes_in_window as f64 / f.segments_in_window as f64),
                    rate: f.delivered_in_window as f64 / active.max(1e-12),
                    send_rate: f.sent_in_window as f64 / active.max(1e-12),
                    throughput_bps: f.bytes_in_window as f64 * 8.0 / active.max(1e-12),
                    sent: f.sent,
                    delivered: f.delivered,
                    dropped: f.dropped,
                    backlog,
                    source: s.map(|s| SourceCounters {
                        phase: s.phase.name().into(),
                        probes_sent: s.probes_sent,
                        probes_lost: s.probes_lost,
                        epochs: s.epochs,
                        outages: s.outages,
                        acks_in_sequence: s.acks_in_sequence,
                        acks_out_of_sequence: s.acks_out_of_sequence,
                    }),
                    mean_age_trace: f.trace.clone(),
                    delivery_trace: f.delivery_trace.clone(),
                    tcp,
                    mptcp,
                    multipath,
                }
            })
            .collect();
        let elapsed = self.now.as_nanos().max(1) as f64;
        let mut links = Vec::new();
        let mut wifi = Vec::new();
        for (i, e) in self.elements.iter().enumerate() {
            match &e.model {
                Model::Link(l) => {
                    let (from, to) = self.topo.ends(i);
                    let c = l.counters();
                    links.push(LinkResult {
                        from: from.into(),
                        to: to.into(),
                        arrived: c.arrived,
                        lost: c.lost,
                        dropped_queue: c.dropped_queue,
                        dropped_outage: c.dropped_outage,
                        served: c.served,
                        utilisation: c.busy_ns as f64 / elapsed,
                    });
                }
                Model::Wifi(m) => {
                    let def = &self.topo.wifi[i - self.topo.links.len()];
                    wifi.push(WifiResult::of(
                        &def.name,
                        m,
                        &self.station_names(def),
                        Duration::from_nanos(self.now.as_nanos()),
                    ));
                }
                Model::Ampdu(m, frames) => {
                    let def = &self.topo.wifi[i - self.topo.links.len()];
                    let reports = |k: usize| {
                        self.meters
                            .iter()
                            .find(|s| s.el == i && s.station == k)
                            .map(|s| s.meter.reported.clone())
                            .unwrap_or_default()
                    };
                    wifi.push(WifiResult::of_downlink(
                        &def.name,
                        m,
                        frames.as_ref(),
                        &self.station_names(def),
                        Duration::from_nanos(self.now.as_nanos()),
                        reports,
                    ));
                }
            }
        }
        SimResult {
            seed: self.cfg.seed,
            duration: self.cfg.duration.as_secs_f64(),
            warmup: self.cfg.warmup.as_secs_f64(),
            events: self.events,
            flows,
            links,
            wifi,
            packet_log: std::mem::take(&mut self.log),
        }
    }

    /// A multipath ACP flow's session at its monitor and its paths at the end of the run.
    fn multipath_counters(&self, f: &Flow) -> Option<AcpMultipathCounters> {
        let State::Acp {
            source: Some(source),
            scheduler: Some(scheduler),
            monitor,
            ..
        } = &f.state
        else {
            return None;
        };
        let FlowKind::Acp {
            multipath: Some(m), ..
        } = &f.spec.kind
        else {
            unreachable!("a flow with a path scheduler is a multipath ACP flow")
        };
        let session = self.monitors[*monitor]
            .sessions()
            .find(|(k, _)| k.session == source.session())
            .map(|(_, s)| s);
        let paths = (0..scheduler.paths())
            .filter_map(|k| scheduler.path_stats(k, self.now))
            .zip(&m.paths)
            // The run starts at time zero.
            .map(|(p, nodes)| AcpPathResult::new(nodes.join(">"), &p, Time::ZERO))
            .collect();
        Some(AcpMultipathCounters {
            scheduler: scheduler.rule().name().into(),
            lost: session.map_or(0, |s| s.lost),
            stale: session.map_or(0, |s| s.stale),
            duplicates: session.map_or(0, |s| s.duplicates),
            paths,
        })
    }

    fn fwd_route(&self, f: &Flow) -> usize {
        match &f.state {
            State::Acp { paths, .. } => paths[0].fwd as usize,
            State::Stream { route, .. } => *route as usize,
            State::Tcp { fwd, .. } => *fwd as usize,
            State::Mptcp { routes, .. } => routes[0].0 as usize,
        }
    }
}

/// A multipath flow's counters: the connection's, and each subflow's over the window.
fn mptcp_counters(
    conn: &MptcpConnection,
    f: &Flow,
    baseline: &[u64],
    active: f64,
    now: Time,
) -> MptcpCounters {
    let FlowKind::Mptcp(config) = &f.spec.kind else {
        unreachable!("only multipath flows have a multipath connection")
    };
    let carried: Vec<u64> = (0..conn.subflow_count())
        .map(|k| conn.subflow_delivered(k) - baseline[k])
        .collect();
    let total: u64 = carried.iter().sum();
    let stats = conn.stats(now.min(f.stop));
    MptcpCounters {
        scheduler: config.scheduler.to_string(),
        coupling: config.coupling.to_string(),
        stalled: stats.stalled.as_secs_f64(),
        max_held: stats.max_held,
        completion: conn
            .completed()
            .map(|t| t.saturating_since(f.start).as_secs_f64()),
        subflows: carried
            .iter()
            .enumerate()
            .map(|(k, &bytes)| {
                let sender = conn.sender(k);
                let tx = sender.stats();
                SubflowResult {
                    path: config.paths[k].join(">"),
                    throughput_bps: bytes as f64 * 8.0 / active.max(1e-12),
                    share: if total > 0 {
                        bytes as f64 / total as f64
                    } else {
                        0.0
                    },
                    segments: tx.segments,
                    retransmits: tx.retransmits,
                    timeouts: tx.timeouts,
                    cwnd: sender.cwnd(),
                    srtt: sender.rto().srtt().map(|d| d.as_secs_f64()),
                    device_dequeue_rate: conn.device(k).dequeue_rate(),
                }
            })
            .collect(),
    }
}

/// A TCP flow's counters at the end of the run.
fn tcp_counters(conn: &Connection, f: &Flow) -> TcpCounters {
    let sender = conn.sender();
    let (tx, rx) = (sender.stats(), conn.receiver().stats());
    let cc = sender.cc();
    let secs = |d: std::time::Duration| d.as_secs_f64();
    TcpCounters {
        cc: match &f.spec.kind {
            FlowKind::Tcp { config, .. } => config.cc.to_string(),
            _ => String::new(),
        },
        segments: tx.segments,
        retransmits: tx.retransmits,
        fast_retransmits: tx.fast_retransmits,
        timeouts: tx.timeouts,
        probes: tx.probes,
        spurious_retransmits: rx.duplicates,
        segments_received: rx.segments,
        acks_sent: rx.acks,
        dup_acks: tx.dup_acks,
        out_of_order: rx.out_of_order,
        updates_skipped: f.skipped,
        cwnd: sender.cwnd(),
        ssthresh: (sender.ssthresh() < u64::MAX).then_some(sender.ssthresh()),
        phase: cc.phase().into(),
        pacing_rate_bps: sender.pacing_rate().map(|r| r * 8.0),
        srtt: sender.rto().srtt().map(secs),
        rto: secs(sender.rto().rto()),
        cwnd_trace: f.cwnd_trace.clone(),
    }
}
