//! What travels through the network: ACP sessions, plain update streams and cross traffic.
//!
//! - **ACP**: a source of `acp-core` (any controller, its own parameters) at the first node of its
//!   path and a monitor of `acp-core` at the last; ACKs return along the reversed path. The
//!   protocol code runs unchanged on the simulator's virtual clock. A multipath source
//!   ([`AcpPaths`]) sends one session over several paths, each update on the path its scheduler
//!   picks, and the monitor measures the age over their union.
//! - **Updates**: status updates without feedback at a fixed rate, periodic, Poisson or on-off
//!   (the queueing models' sources, and the oracle's fixed rates without protocol overhead).
//! - **Cross**: other traffic (CBR, Poisson or on-off) that only competes for the links.
//! - **TCP**: a connection of [`crate::tcp`], bulk data or status updates written into its byte
//!   stream; its updates count when the receiving application reads them, in order.
//! - **MPTCP**: a multipath connection of [`crate::mptcp::connection`] over several paths (its
//!   `path` is the first subflow's), bulk data.
//!
//! Every flow is active from `start` to `stop`: it sends only then, and its age, rate and
//! throughput are measured over the part of its active time after the warm-up.

use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::multipath::{PathRule, MAX_PATHS};
use acp_core::SourceConfig;
pub use acp_netmodel::Process;
use acp_netmodel::{Arrivals, Streams, Time};

use crate::mptcp::connection::MptcpConfig;
use crate::tcp::{Application, TcpConfig};

/// The paths of a multipath ACP source: one session over all of them, each update on the
/// path(s) `rule` picks ([`acp_core::multipath`]), each ACK back along its update's path.
#[derive(Debug, Clone, PartialEq)]
pub struct AcpPaths {
    /// Node names from the source to the monitor, one list per path (the flow's `path` is the
    /// first); every path joins the same two nodes.
    pub paths: Vec<Vec<String>>,
    /// The rule that picks each update's path.
    pub rule: PathRule,
}

impl AcpPaths {
    /// Checks the paths ([`check_paths`]) and their number (at most
    /// [`acp_core::multipath::MAX_PATHS`]).
    pub fn validate(&self) -> Result<(), String> {
        check_paths(&self.paths)?;
        if self.paths.len() > MAX_PATHS {
            return Err(format!(
                "a multipath source takes at most {MAX_PATHS} paths, got {}",
                self.paths.len()
            ));
        }
        Ok(())
    }
}

/// The paths of a multipath flow (ACP or MPTCP): at least one, each of at least two nodes, all
/// joining the same two nodes.
pub fn check_paths(paths: &[Vec<String>]) -> Result<(), String> {
    if paths.is_empty() {
        return Err("paths must name at least one path".into());
    }
    if paths.iter().any(|p| p.len() < 2) {
        return Err("every path needs at least two nodes".into());
    }
    let ends = |p: &Vec<String>| (p.first().cloned(), p.last().cloned());
    if paths.iter().any(|p| ends(p) != ends(&paths[0])) {
        return Err("every path must join the same two nodes".into());
    }
    Ok(())
}

/// A flow's kind and the parameters of that kind.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowKind {
    /// An ACP session.
    Acp {
        /// The source's controller.
        controller: ControllerKind,
        /// Source parameters (rate bounds, probes, EWMA weight, outage handling).
        config: SourceConfig,
        /// Payload bytes per update (the 44-byte ACP header and 28 bytes of UDP/IP come on top).
        payload: u32,
        /// The DSCP of the monitor's ACKs (`None`: the flow's own, as the updates'); 0 stands
        /// for a monitor that does not mark them, or a path that bleaches the marking.
        ack_dscp: Option<u8>,
        /// A multipath source's paths and scheduler (`None`: the one `path`).
        multipath: Option<AcpPaths>,
        /// The sender this flow belongs to (`None`: a sender of its own). The ACP flows with one
        /// `sender` are driven by one controller that sets all their rates
        /// ([`ControllerKind::build_sender`]): Algorithm 2 at an access point's sender over the
        /// flows to its stations.
        sender: Option<String>,
    },
    /// Updates without feedback.
    Updates {
        /// Arrival pattern.
        process: Process,
        /// Updates per second (while on).
        rate: f64,
        /// Bytes per update on the wire.
        size: u32,
    },
    /// Cross traffic.
    Cross {
        /// Arrival pattern.
        process: Process,
        /// Mean bits per second (while on, for on-off).
        rate_bps: f64,
        /// Bytes per packet on the wire.
        size: u32,
    },
    /// A TCP connection (`crate::tcp`): data along the path, ACKs back.
    Tcp {
        /// Segment size, windows, timers, buffers, congestion control.
        config: TcpConfig,
        /// What the sending application writes.
        app: Application,
    },
    /// A multipath TCP connection: data along each subflow's path, ACKs back along it.
    Mptcp(MptcpConfig),
}

impl FlowKind {
    /// `acp`, `updates` or `cross`.
    pub fn label(&self) -> &'static str {
        match self {
            FlowKind::Acp { .. } => "acp",
            FlowKind::Updates { .. } => "updates",
            FlowKind::Cross { .. } => "cross",
            FlowKind::Tcp { .. } => "tcp",
            FlowKind::Mptcp(_) => "mptcp",
        }
    }
}

/// A flow: what, along which path, when, marked how.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// A label for reports; also names the flow's random streams, so it must be unique.
    pub name: String,
    /// What it sends.
    pub kind: FlowKind,
    /// Node names from the sender to the receiver.
    pub path: Vec<String>,
    /// When it starts, before its stagger.
    pub start: Duration,
    /// The start is moved later by a uniform draw in `[0, stagger)` from the flow's own stream
    /// (`flow NAME start`), so replicas of one flow do not start in lockstep.
    pub stagger: Duration,
    /// When it stops sending (never if `None`).
    pub stop: Option<Duration>,
    /// DSCP of its packets (ACKs of an ACP flow carry it too), 0–63.
    pub dscp: u8,
}

impl FlowSpec {
    /// The DSCP of the packets it sends back (an ACP monitor's ACKs): its `ack_dscp`, else its
    /// own.
    pub fn ack_dscp(&self) -> u8 {
        match self.kind {
            FlowKind::Acp {
                ack_dscp: Some(d), ..
            } => d,
            _ => self.dscp,
        }
    }

    /// When the flow starts, after the run's start: `start` plus its stagger, drawn uniformly
    /// from its stream `flow NAME start` (the lab draws it as the simulator does).
    pub fn staggered_start(&self, streams: &Streams) -> Duration {
        let offset = match self.stagger.as_secs_f64() {
            0.0 => Duration::ZERO,
            s => {
                let mut rng = streams.stream(&format!("flow {} start", self.name));
                acp_core::time::secs_to_duration(rng.uniform(0.0, s)).min(self.stagger)
            }
        };
        self.start + offset
    }

    /// An `updates` or `cross` flow's arrival process and packets per second (while on, for an
    /// on-off process; cross traffic: packets of `size` at `rate_bps`); none for the flows that
    /// send when their protocol says.
    pub fn datagram_process(&self) -> Option<(Process, f64)> {
        match &self.kind {
            FlowKind::Updates { process, rate, .. } => Some((*process, *rate)),
            FlowKind::Cross {
                process,
                rate_bps,
                size,
            } => Some((*process, rate_bps / (8.0 * f64::from(*size)))),
            FlowKind::Acp { .. } | FlowKind::Tcp { .. } | FlowKind::Mptcp(_) => None,
        }
    }

    /// An `updates` or `cross` flow's packet arrivals from `start` ([`Self::datagram_process`]),
    /// drawn from its stream `flow NAME arrivals`; none for the flows that send when their
    /// protocol says.
    pub fn arrivals(&self, streams: &Streams, start: Time) -> Option<Arrivals> {
        let (process, rate) = self.datagram_process()?;
        let rng = streams.stream(&format!("flow {} arrivals", self.name));
        Some(Arrivals::new(process, rate, rng, start))
    }

    /// Whether the flow carries status updates whose age and backlog are measured.
    pub fn is_update_flow(&self) -> bool {
        !matches!(
            self.kind,
            FlowKind::Cross { .. }
                | FlowKind::Mptcp(_)
                | FlowKind::Tcp {
                    app: Application::Bulk,
                    ..
                }
        )
    }
}
