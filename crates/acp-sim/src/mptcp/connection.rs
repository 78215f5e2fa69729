//! A multipath TCP connection over K subflows: the parts of this module put together on the
//! single-path models of [`crate::tcp`].
//!
//! - **Subflows.** Each is a [`Sender`] and a [`Receiver`] with its own sequence space, RTT
//!   estimator, loss recovery and congestion control ([`TcpConfig::cc`], or RFC 6356's coupled
//!   [`Lia`] when [`Coupling::Lia`]); the engine carries its segments along its own path and its
//!   ACKs back along the reversed path.
//! - **Shared send buffer and data sequence numbers.** The application writes into one buffer of
//!   `send_buffer` bytes; every byte has a data sequence number (DSN). Bytes not yet assigned to
//!   a subflow wait there; the scheduler ([`super::scheduler`]) picks the subflow for each
//!   decision (one segment, or a burst for the Linux model), which takes the bytes into its own
//!   send buffer and remembers the mapping from its sequence numbers to DSNs (RFC 8684's DSS
//!   mapping; the simulator keeps it beside the connection instead of in a TCP option, as
//!   [`crate::tcp::Connection`] keeps its record boundaries).
//! - **What the scheduler reads.** Per subflow: SRTT and RTTVAR, the window in force, the bytes
//!   it holds in flight or assigned and unsent, its send buffer, a pacing rate (the controller's,
//!   else Linux's `tcp_update_pacing_rate`: `cwnd/SRTT` × 2 in slow start, × 1.2 after), and its
//!   device queue ([`DeviceQueue`]): the engine reports every packet, of any flow, entering and
//!   leaving the first link of the subflow's path, as BQL counts a NIC's queue.
//! - **Connection-level receive buffer.** A subflow's receiver hands its in-order bytes to the
//!   connection, which places them by DSN in a [`ReceiveBuffer`] of `receive_buffer` bytes and
//!   releases them to the application in DSN order. Every subflow ACK carries a data ACK
//!   ([`DataAck`]): the next DSN expected and the free buffer; the sender assigns no DSN at or
//!   beyond `data ACK + window`. Bytes held behind a DSN hole shrink that window: with a small
//!   buffer a slow subflow's late segment stalls the fast one (head-of-line blocking), measured
//!   as [`ConnectionStats::stalled`]: time with data waiting and a subflow's congestion window
//!   open but the connection window closed.
//!
//! Not modelled: the handshakes (every subflow exists at the start), reinjection of data from a
//! failed subflow onto another (a subflow's own retransmissions recover its losses), DATA_FIN,
//! path-manager events.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_core::Time;

use super::device_queue::DeviceQueue;
use super::lia::{Coupling as LiaCoupling, Lia, LiaPath};
use super::reassembly::ReceiveBuffer;
use super::scheduler::{ConnectionView, Scheduler, SchedulerKind, SubflowView};
use crate::tcp::cc::CcKind;
use crate::tcp::{Ack, Receiver, Segment, Sender, TcpConfig, WindowUnit, Wire};

/// Whether the subflows' windows grow independently or coupled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coupling {
    /// Each subflow runs its own congestion control (`none`).
    #[default]
    Uncoupled,
    /// RFC 6356's linked increases on NewReno windows (`lia`).
    Lia,
}

impl FromStr for Coupling {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Coupling::Uncoupled),
            "lia" => Ok(Coupling::Lia),
            _ => Err(format!("unknown coupling {s:?} (expected none or lia)")),
        }
    }
}

impl fmt::Display for Coupling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Coupling::Uncoupled => "none",
            Coupling::Lia => "lia",
        })
    }
}

/// When the scheduler assigns the application's bytes to subflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Assignment {
    /// When a subflow has congestion-window room (`window`): the bytes wait in the shared send
    /// buffer until then, as in Linux, where a subflow is offered data as its window opens.
    #[default]
    Window,
    /// As the application writes (`on-write`): every segment goes at once to the subflow the
    /// scheduler picks and waits in that subflow's own send buffer, the independent TCP streams
    /// of the thesis's ns-3 simulations (§2.7, footnote 5). A subflow is available while its
    /// send buffer has room for a segment, and that room is the window the scheduler reads.
    OnWrite,
}

impl FromStr for Assignment {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "window" => Ok(Assignment::Window),
            "on-write" => Ok(Assignment::OnWrite),
            _ => Err(format!(
                "unknown assign {s:?} (expected window or on-write)"
            )),
        }
    }
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Assignment::Window => "window",
            Assignment::OnWrite => "on-write",
        })
    }
}

/// What the sending application writes into the shared send buffer.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum MptcpApp {
    /// As much as the send buffer takes (`bulk`).
    #[default]
    Bulk,
    /// A constant bit rate (`cbr`): one segment's bytes every `smss·8/bits_per_s` seconds from
    /// the start; writes the buffer cannot take wait for room (the application blocks and
    /// catches up), so the connection carries `min(rate, what the subflows deliver)`.
    Cbr {
        /// Offered bits per second.
        bits_per_s: f64,
    },
    /// A file of `bytes` (`file`), written as fast as the buffer takes; the connection records
    /// when the receiving application has read all of it ([`MptcpConnection::completed`]).
    File {
        /// Its size.
        bytes: u64,
    },
}

impl MptcpApp {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            MptcpApp::Cbr { bits_per_s } if !(bits_per_s.is_finite() && bits_per_s > 0.0) => Err(
                format!("rate must be a positive bit rate, got {bits_per_s}"),
            ),
            MptcpApp::File { bytes: 0 } => Err("size must be at least one byte".into()),
            _ => Ok(()),
        }
    }
}

/// A multipath connection's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MptcpConfig {
    /// Every subflow's TCP parameters; `send_buffer` and `receive_buffer` are the connection's
    /// (and each subflow's own send buffer, Linux's `sk_sndbuf`).
    pub tcp: TcpConfig,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// Independent or coupled windows.
    pub coupling: Coupling,
    /// Each subflow's path, node names from the sender to the receiver.
    pub paths: Vec<Vec<String>>,
    /// Algorithm 1's Δt: the window over which a device queue's dequeue rate is sampled.
    pub device_sampling: Duration,
    /// What the sending application writes.
    pub app: MptcpApp,
    /// When its bytes are assigned to subflows.
    pub assignment: Assignment,
}

impl MptcpConfig {
    /// The defaults of [`TcpConfig`] over `paths`, the Linux default scheduler, uncoupled,
    /// 10 ms sampling.
    pub fn new(paths: Vec<Vec<String>>) -> Self {
        MptcpConfig {
            tcp: TcpConfig::default(),
            scheduler: SchedulerKind::LinuxDefault,
            coupling: Coupling::Uncoupled,
            paths,
            device_sampling: Duration::from_millis(10),
            app: MptcpApp::Bulk,
            assignment: Assignment::Window,
        }
    }

    /// Checks the parameters, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        self.tcp.validate()?;
        crate::flows::check_paths(&self.paths)?;
        self.app.validate()?;
        if self.device_sampling.is_zero() {
            return Err("device_sampling must be positive".into());
        }
        if self.coupling == Coupling::Lia
            && (self.tcp.cc != CcKind::NewReno || self.tcp.window != WindowUnit::Bytes)
        {
            return Err(
                "coupling = \"lia\" couples NewReno byte windows (cc = \"newreno\", window = \"bytes\")"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The connection-level acknowledgement a subflow ACK carries (RFC 8684's DATA_ACK and the
/// connection's receive window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataAck {
    /// The next DSN the receiving application waits for.
    pub ack: u64,
    /// Free connection-level receive buffer, bytes.
    pub window: u64,
}

/// Something a call on an [`MptcpConnection`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Output {
    /// Put this on subflow `subflow`'s path (data forward, ACKs, with their data ACK, back).
    Transmit {
        /// Which subflow.
        subflow: usize,
        /// The packet.
        wire: Wire,
        /// On ACKs, the connection-level acknowledgement.
        data_ack: Option<DataAck>,
    },
    /// Bytes reached the receiving application in DSN order.
    Read(u64),
    /// An RTT sample at subflow `subflow`'s sender.
    Rtt {
        /// Which subflow.
        subflow: usize,
        /// The sample.
        rtt: Duration,
    },
}

/// The connection's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectionStats {
    /// Time the sender had data and a subflow had room in its congestion window (nothing
    /// assigned to it waiting), but the connection-level window was closed (less than a segment
    /// left): the receive-buffer stall.
    pub stalled: Duration,
    /// The most bytes the receive buffer held behind a DSN hole.
    pub max_held: u64,
}

/// One subflow: its TCP ends, its device queue and its DSN mappings.
#[derive(Debug)]
struct Subflow {
    sender: Sender,
    receiver: Receiver,
    device: DeviceQueue,
    /// `(subflow seq, DSN, bytes)` assigned and not yet read at the receiver, in order.
    mappings: VecDeque<(u64, u64, u64)>,
    /// Bytes assigned so far (the end of its sequence space).
    assigned: u64,
    /// Bytes its receiver passed on in order.
    delivered: u64,
}

/// A multipath connection and the applications at its ends ([`MptcpApp`]).
#[derive(Debug)]
pub struct MptcpConnection {
    subflows: Vec<Subflow>,
    scheduler: Box<dyn Scheduler>,
    coupling: Option<LiaCoupling>,
    smss: u64,
    unit_bytes: u64,
    send_buffer: u64,
    receive: ReceiveBuffer,
    /// End of the bytes the application wrote.
    written: u64,
    /// The next DSN to assign.
    next_dsn: u64,
    /// The latest data ACK: DSNs below it were read; none at or beyond `data_edge` may be sent.
    data_una: u64,
    data_edge: u64,
    start: Option<Time>,
    assignment: Assignment,
    app: MptcpApp,
    /// When the application starts writing.
    app_start: Time,
    /// When the receiving application read the last byte of a [`MptcpApp::File`].
    completed: Option<Time>,
    stopped: bool,
    stall_since: Option<Time>,
    stats: ConnectionStats,
}

impl MptcpConnection {
    /// A connection under `cfg` whose application writes from `start` on; `seed` drives the congestion
    /// controls' random choices (subflow k gets `seed + k`).
    pub fn new(cfg: &MptcpConfig, start: Time, seed: u64) -> Self {
        let k = cfg.paths.len();
        let coupling: Option<LiaCoupling> = (cfg.coupling == Coupling::Lia).then(|| {
            Arc::new(Mutex::new(vec![
                LiaPath {
                    cwnd: 0,
                    srtt: Duration::ZERO,
                };
                k
            ]))
        });
        let tcp = &cfg.tcp;
        let smss = u64::from(tcp.smss);
        let subflows = (0..k)
            .map(|i| {
                let cc = match &coupling {
                    Some(c) => Box::new(Lia::new(
                        smss,
                        u64::from(tcp.initial_window) * smss,
                        i,
                        Arc::clone(c),
                    )) as Box<dyn crate::tcp::cc::CongestionControl>,
                    None => tcp.controller(seed.wrapping_add(i as u64)),
                };
                Subflow {
                    sender: Sender::new(tcp, cc, start),
                    receiver: Receiver::new(tcp),
                    device: DeviceQueue::new(cfg.device_sampling),
                    mappings: VecDeque::new(),
                    assigned: 0,
                    delivered: 0,
                }
            })
            .collect();
        MptcpConnection {
            subflows,
            scheduler: cfg.scheduler.build(),
            coupling,
            smss,
            unit_bytes: tcp.window.bytes(smss),
            send_buffer: tcp.send_buffer,
            receive: ReceiveBuffer::new(tcp.receive_buffer),
            written: 0,
            next_dsn: 0,
            data_una: 0,
            data_edge: tcp.receive_buffer,
            start: Some(start),
            assignment: cfg.assignment,
            app: cfg.app,
            app_start: start,
            completed: None,
            stopped: false,
            stall_since: None,
            stats: ConnectionStats::default(),
        }
    }

    /// Subflows.
    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    /// Subflow `k`'s sending half.
    pub fn sender(&self, k: usize) -> &Sender {
        &self.subflows[k].sender
    }

    /// Subflow `k`'s receiving half.
    pub fn receiver(&self, k: usize) -> &Receiver {
        &self.subflows[k].receiver
    }

    /// Bytes subflow `k`'s receiver passed to the connection in order so far.
    pub fn subflow_delivered(&self, k: usize) -> u64 {
        self.subflows[k].delivered
    }

    /// Subflow `k`'s device queue.
    pub fn device(&self, k: usize) -> &DeviceQueue {
        &self.subflows[k].device
    }

    /// The connection-level receive buffer.
    pub fn receive_buffer(&self) -> &ReceiveBuffer {
        &self.receive
    }

    /// The counters, the stall under way counted up to `now`.
    pub fn stats(&self, now: Time) -> ConnectionStats {
        let mut s = self.stats;
        if let Some(since) = self.stall_since {
            s.stalled += now.saturating_since(since);
        }
        s
    }

    /// When the receiving application read the last byte of a [`MptcpApp::File`] (`None`
    /// before, and for the other applications).
    pub fn completed(&self) -> Option<Time> {
        self.completed
    }

    /// Bytes a [`MptcpApp::Cbr`] application at `bits_per_s` has written by `now`: whole
    /// segments, the first at the start.
    fn cbr_written(&self, bits_per_s: f64, now: Time) -> u64 {
        let elapsed = now.saturating_since(self.app_start).as_secs_f64();
        let writes = (elapsed * bits_per_s / (8.0 * self.smss as f64)).floor() as u64 + 1;
        writes * self.smss
    }

    /// When a [`MptcpApp::Cbr`] application writes next after `now`.
    fn next_cbr_write(&self, bits_per_s: f64, now: Time) -> Time {
        let writes = self.cbr_written(bits_per_s, now) / self.smss;
        let at = self.app_start
            + Duration::from_secs_f64(writes as f64 * 8.0 * self.smss as f64 / bits_per_s);
        at.max(now + Duration::from_nanos(1))
    }

    /// The sending application stops writing (what it wrote still goes).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// A packet of `bytes` entered subflow `k`'s device queue (the first link of its path).
    pub fn device_enqueue(&mut self, k: usize, bytes: u64) {
        self.subflows[k].device.enqueue(bytes);
    }

    /// The device of subflow `k` finished a packet of `bytes` at `at`.
    pub fn device_complete(&mut self, k: usize, at: Time, bytes: u64) {
        self.subflows[k].device.complete(at, bytes);
    }

    /// When the connection needs waking.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let write = match self.app {
            MptcpApp::Cbr { bits_per_s } if !self.stopped && self.start.is_none() => {
                Some(self.next_cbr_write(bits_per_s, now))
            }
            _ => None,
        };
        self.subflows
            .iter()
            .flat_map(|s| [s.sender.poll_timeout(now), s.receiver.poll_timeout()])
            .chain([self.start, write])
            .flatten()
            .min()
    }

    /// Runs whatever is due at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut dyn FnMut(Output)) {
        if self.start.is_some_and(|t| t <= now) {
            self.start = None;
        }
        self.refresh_coupling();
        for s in &mut self.subflows {
            s.sender.handle_timeout(now);
            s.receiver.handle_timeout(now);
        }
        self.flush(now, out);
    }

    /// A data segment of subflow `k` reached the receiver.
    pub fn on_data(&mut self, now: Time, k: usize, seg: Segment, out: &mut dyn FnMut(Output)) {
        let sf = &mut self.subflows[k];
        let from = sf.receiver.rcv_nxt();
        let read = sf.receiver.handle_segment(now, seg);
        if read > 0 {
            sf.delivered += read;
            let to = from + read;
            let mut released = 0;
            while let Some(&(seq, dsn, len)) = sf.mappings.front() {
                if seq >= to {
                    break;
                }
                let lo = from.max(seq);
                let hi = to.min(seq + len);
                if lo < hi {
                    released += self.receive.receive(dsn + (lo - seq), hi - lo).delivered;
                }
                if seq + len > to {
                    break;
                }
                sf.mappings.pop_front();
            }
            self.stats.max_held = self.stats.max_held.max(self.receive.held_bytes());
            if released > 0 {
                out(Output::Read(released));
            }
            if let MptcpApp::File { bytes } = self.app {
                if self.completed.is_none() && self.receive.delivered() >= bytes {
                    self.completed = Some(now);
                }
            }
        }
        self.flush(now, out);
    }

    /// An ACK of subflow `k`, with its data ACK, reached the sender.
    pub fn on_ack(
        &mut self,
        now: Time,
        k: usize,
        ack: Ack,
        data_ack: DataAck,
        out: &mut dyn FnMut(Output),
    ) {
        self.refresh_coupling();
        if let Some(rtt) = self.subflows[k].sender.handle_ack(now, ack) {
            out(Output::Rtt { subflow: k, rtt });
        }
        if data_ack.ack >= self.data_una {
            self.data_una = data_ack.ack;
            self.data_edge = data_ack.ack + data_ack.window;
        }
        self.flush(now, out);
    }

    /// Writes every subflow's window and SRTT where the LIA controllers read them.
    fn refresh_coupling(&mut self) {
        let Some(c) = &self.coupling else {
            return;
        };
        let mut paths = match c.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (p, s) in paths.iter_mut().zip(&self.subflows) {
            *p = LiaPath {
                cwnd: s.sender.cwnd(),
                srtt: s.sender.rto().srtt().unwrap_or(Duration::ZERO),
            };
        }
    }

    /// What the scheduler reads of subflow `s`.
    fn view(&self, s: &Subflow) -> SubflowView {
        let sender = &s.sender;
        let srtt = sender.rto().srtt();
        let in_flight = sender.pipe() * self.unit_bytes + sender.not_sent();
        let cwnd = match self.assignment {
            Assignment::Window => sender.window() * self.unit_bytes,
            Assignment::OnWrite => in_flight + sender.send_space(),
        };
        let mut v = SubflowView::new(srtt.unwrap_or(Duration::ZERO), cwnd, in_flight, self.smss);
        v.srtt = srtt;
        v.rttvar = sender.rto().rttvar();
        v.device_queue_packets = s.device.occupancy_packets();
        v.device_wait = s.device.wait_estimate();
        v.queued = self.send_buffer - sender.send_space();
        v.send_buffer = self.send_buffer;
        v.pacing_rate = sender.pacing_rate().unwrap_or_else(|| {
            // Linux's tcp_update_pacing_rate: 200 % of cwnd/SRTT in slow start, 120 % after;
            // without an RTT sample the kernel skips the division by SRTT, a rate of
            // cwnd·factor per 1/8 µs.
            let factor = if sender.cwnd() < sender.ssthresh() {
                2.0
            } else {
                1.2
            };
            let per = srtt.map_or(0.125e-6, |r| r.as_secs_f64().max(1e-9));
            sender.cwnd() as f64 * factor / per
        });
        v
    }

    /// The application writes; the scheduler assigns what the connection window allows.
    fn assign(&mut self, now: Time) {
        if self.start.is_some() {
            return;
        }
        if !self.stopped {
            let room = self.data_una + self.send_buffer;
            let wants = match self.app {
                MptcpApp::Bulk => room,
                MptcpApp::Cbr { bits_per_s } => room.min(self.cbr_written(bits_per_s, now)),
                MptcpApp::File { bytes } => room.min(bytes),
            };
            self.written = self.written.max(wants);
        }
        loop {
            let unassigned = self.written - self.next_dsn;
            if unassigned == 0 {
                self.end_stall(now);
                return;
            }
            let window = self.data_edge.saturating_sub(self.next_dsn);
            let views: Vec<SubflowView> = self.subflows.iter().map(|s| self.view(s)).collect();
            if window < self.smss.min(unassigned) {
                if views.iter().any(SubflowView::has_window_space) {
                    self.stall_since.get_or_insert(now);
                } else {
                    self.end_stall(now);
                }
                return;
            }
            self.end_stall(now);
            let conn = ConnectionView::new(unassigned, window);
            let Some(k) = self.scheduler.pick(now, &views, &conn) else {
                return;
            };
            let sf = &mut self.subflows[k];
            let mut amount = self
                .scheduler
                .burst(self.smss)
                .min(unassigned)
                .min(window)
                .min(sf.sender.send_space());
            if amount >= self.smss {
                amount -= amount % self.smss;
            }
            if amount == 0 {
                return;
            }
            sf.mappings.push_back((sf.assigned, self.next_dsn, amount));
            if amount == unassigned {
                sf.sender.write(amount);
            } else {
                sf.sender.write_more(amount);
            }
            sf.assigned += amount;
            self.next_dsn += amount;
        }
    }

    fn end_stall(&mut self, now: Time) {
        if let Some(since) = self.stall_since.take() {
            self.stats.stalled += now.saturating_since(since);
        }
    }

    /// Assigns, sends what the subflows may, and the ACKs that are due.
    fn flush(&mut self, now: Time, out: &mut dyn FnMut(Output)) {
        self.assign(now);
        let data_ack = DataAck {
            ack: self.receive.next_expected(),
            window: self.receive.window(),
        };
        for (k, s) in self.subflows.iter_mut().enumerate() {
            while let Some(seg) = s.sender.poll_transmit(now) {
                out(Output::Transmit {
                    subflow: k,
                    wire: Wire::Data(seg),
                    data_ack: None,
                });
            }
            while let Some(ack) = s.receiver.poll_ack() {
                out(Output::Transmit {
                    subflow: k,
                    wire: Wire::Ack(ack),
                    data_ack: Some(data_ack),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(k: usize, scheduler: SchedulerKind) -> MptcpConfig {
        let paths = (0..k)
            .map(|i| vec!["a".to_string(), format!("r{i}"), "b".to_string()])
            .collect();
        MptcpConfig {
            scheduler,
            ..MptcpConfig::new(paths)
        }
    }

    /// Carries every packet at once (no delay, no loss), for at most 10 000 packets: what one
    /// side sends the other gets.
    fn exchange(c: &mut MptcpConnection, now: Time, first: Vec<Output>) -> u64 {
        let mut pending = VecDeque::from(first);
        let mut read = 0;
        let mut steps = 0;
        while let Some(o) = pending.pop_front() {
            steps += 1;
            if steps > 10_000 {
                break;
            }
            let mut next = Vec::new();
            match o {
                Output::Transmit {
                    subflow,
                    wire: Wire::Data(seg),
                    ..
                } => c.on_data(now, subflow, seg, &mut |o| next.push(o)),
                Output::Transmit {
                    subflow,
                    wire: Wire::Ack(ack),
                    data_ack: Some(d),
                } => c.on_ack(now, subflow, ack, d, &mut |o| next.push(o)),
                Output::Read(n) => read += n,
                _ => {}
            }
            pending.extend(next);
        }
        read
    }

    /// The connection sends on every subflow, and the receiving application reads the DSNs in
    /// order from both: the bytes read equal the bytes the subflows passed on.
    #[test]
    fn bytes_spread_over_subflows_arrive_in_order() {
        let mut c = MptcpConnection::new(&config(2, SchedulerKind::RoundRobin), Time::ZERO, 1);
        let mut first = Vec::new();
        c.on_timer(Time::ZERO, &mut |o| first.push(o));
        let sent_on: Vec<usize> = first
            .iter()
            .filter_map(|o| match o {
                Output::Transmit {
                    subflow,
                    wire: Wire::Data(_),
                    ..
                } => Some(*subflow),
                _ => None,
            })
            .collect();
        assert!(sent_on.contains(&0) && sent_on.contains(&1), "{sent_on:?}");
        let read = exchange(&mut c, Time::from_millis(1), first);
        assert!(read > 0);
        let passed: u64 = (0..2).map(|k| c.subflow_delivered(k)).sum();
        assert_eq!(c.receive_buffer().delivered(), passed);
        assert_eq!(c.receive_buffer().held_bytes(), 0);
    }

    /// A full connection window stalls the sender: with a 4-segment receive buffer and the data
    /// of subflow 0 never delivered, subflow 1's segments fill the buffer behind the hole and the
    /// connection assigns nothing more until the hole fills.
    #[test]
    fn a_hole_closes_the_connection_window() {
        let mut cfg = config(2, SchedulerKind::RoundRobin);
        cfg.tcp.receive_buffer = 4 * u64::from(cfg.tcp.smss);
        let mut c = MptcpConnection::new(&cfg, Time::ZERO, 1);
        let mut first = Vec::new();
        c.on_timer(Time::ZERO, &mut |o| first.push(o));
        let data: Vec<(usize, Segment)> = first
            .iter()
            .filter_map(|o| match *o {
                Output::Transmit {
                    subflow,
                    wire: Wire::Data(seg),
                    ..
                } => Some((subflow, seg)),
                _ => None,
            })
            .collect();
        assert_eq!(data.len(), 4, "the window admits four segments");
        let mut acks = Vec::new();
        for &(k, seg) in data.iter().filter(|(k, _)| *k == 1) {
            c.on_data(Time::from_millis(1), k, seg, &mut |o| acks.push(o));
        }
        assert_eq!(c.receive_buffer().held_bytes(), 2 * u64::from(cfg.tcp.smss));
        let mut more = Vec::new();
        for o in acks {
            if let Output::Transmit {
                subflow,
                wire: Wire::Ack(ack),
                data_ack: Some(d),
            } = o
            {
                c.on_ack(Time::from_millis(2), subflow, ack, d, &mut |o| more.push(o));
            }
        }
        assert!(
            !more.iter().any(|o| matches!(
                o,
                Output::Transmit {
                    wire: Wire::Data(_),
                    ..
                }
            )),
            "nothing new while the hole holds the window: {more:?}"
        );
        assert!(c.stats(Time::from_millis(12)).stalled >= Duration::from_millis(10));
    }

    #[test]
    fn bad_configurations_are_named() {
        let mut cfg = config(2, SchedulerKind::MinSrtt);
        cfg.coupling = Coupling::Lia;
        cfg.tcp.cc = CcKind::Cubic;
        assert!(cfg.validate().unwrap_err().contains("lia"));
        let mut cfg = config(2, SchedulerKind::MinSrtt);
        cfg.paths[1] = vec!["a".into(), "c".into()];
        assert!(cfg.validate().unwrap_err().contains("same two nodes"));
        assert!("both".parse::<Coupling>().is_err());
    }
}
