//! What travels through the network: ACP sessions, plain update streams and cross traffic.
//!
//! - **ACP**: a source of `acp-core` (any controller) at the first node of its path and a monitor of
//!   `acp-core` at the last; ACKs return along the reversed path. The protocol code runs unchanged
//!   on the simulator's virtual clock.
//! - **Updates**: fixed-rate status updates, periodic or Poisson, without feedback (the queueing
//!   models' sources, and the oracle's Fixed rates without protocol overhead).
//! - **Cross**: other traffic (CBR, Poisson, or on-off) that only competes for the links.

use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::SourceConfig;

/// Arrival pattern of an update stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// One update every 1/rate.
    Periodic,
    /// Exponential gaps with mean 1/rate.
    Poisson,
}

/// Pattern of cross traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CrossPattern {
    /// Constant bit rate.
    Cbr,
    /// Poisson packet arrivals.
    Poisson,
    /// CBR during exponentially distributed on periods, silent during off periods.
    OnOff {
        /// Mean on period.
        on: Duration,
        /// Mean off period.
        off: Duration,
    },
}

/// A flow's kind and parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowKind {
    /// An ACP session.
    Acp {
        /// The source's controller.
        controller: ControllerKind,
        /// Source parameters.
        config: SourceConfig,
        /// Payload bytes per update (the 44-byte ACP header comes on top).
        payload: u32,
    },
    /// Updates without feedback.
    Updates {
        /// Arrival pattern.
        process: Process,
        /// Updates per second.
        rate: f64,
        /// Bytes per update on the wire.
        size: u32,
    },
    /// Cross traffic.
    Cross {
        /// Arrival pattern.
        pattern: CrossPattern,
        /// Mean bits per second (while on, for on-off).
        rate_bps: f64,
        /// Bytes per packet.
        size: u32,
    },
}

/// A flow: what, along which path, when.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// A label for reports.
    pub name: String,
    /// What it sends.
    pub kind: FlowKind,
    /// Node names from the sender to the receiver.
    pub path: Vec<String>,
    /// When it starts.
    pub start: Duration,
    /// When it stops sending (never if `None`).
    pub stop: Option<Duration>,
}

impl FlowSpec {
    /// Whether the flow carries status updates whose age and backlog are measured.
    pub fn is_update_flow(&self) -> bool {
        !matches!(self.kind, FlowKind::Cross { .. })
    }
}
