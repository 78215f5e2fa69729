//! Nodes, directional links and explicit routes.
//!
//! A link leaves one node for another. It serialises packets one at a time at its rate (or, for
//! queueing-model validation, for an exponentially distributed time with the same mean), then the
//! packet propagates for the link's delay. Packets waiting for the link sit in a FIFO drop-tail
//! queue limited in packets or in bytes (the packet in service counts). A route is the list of
//! links a flow's packets take.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use acp_core::accounting::StepIntegral;
use acp_core::Time;
use thiserror::Error;

/// Index of a node.
pub type NodeId = usize;
/// Index of a link.
pub type LinkId = usize;

/// How long a packet occupies a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `8 · size / rate`.
    Deterministic,
    /// Exponential with mean `8 · size / rate` (M/M/1-style servers).
    Exponential,
}

/// How much a link's queue holds, counting the packet in service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes.
    Bytes(u64),
}

/// A link's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// Bits per second.
    pub rate_bps: f64,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue limit.
    pub limit: QueueLimit,
    /// Service-time model.
    pub service: Service,
}

/// Counters of one link.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkCounters {
    /// Packets that entered the queue.
    pub enqueued: u64,
    /// Packets dropped because the queue was full.
    pub dropped: u64,
    /// Bytes sent.
    pub bytes: u64,
}

/// A link in a running simulation.
#[derive(Debug)]
pub struct Link {
    /// Where it starts.
    pub from: NodeId,
    /// Where it ends.
    pub to: NodeId,
    /// Its parameters.
    pub spec: LinkSpec,
    /// Packets queued, the head one in service when `busy`.
    pub queue: VecDeque<u32>,
    /// Bytes in `queue`.
    pub queued_bytes: u64,
    /// Whether the head of the queue is being served.
    pub busy: bool,
    /// Counters.
    pub counters: LinkCounters,
    /// Time-average number of each tracked flow's packets here (indexed by tracked-flow index).
    pub backlog: Vec<StepIntegral>,
}

impl Link {
    /// Whether a packet of `size` bytes fits.
    pub fn admits(&self, size: u32) -> bool {
        match self.spec.limit {
            QueueLimit::Packets(n) => self.queue.len() < n,
            QueueLimit::Bytes(n) => self.queued_bytes + u64::from(size) <= n,
        }
    }

    /// Mean service time of a packet of `size` bytes (s).
    pub fn mean_service(&self, size: u32) -> f64 {
        8.0 * f64::from(size) / self.spec.rate_bps
    }
}

/// Problems in a topology description.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TopologyError {
    /// A route names two consecutive nodes with no link between them.
    #[error("no link from {0} to {1}")]
    NoLink(String, String),
    /// A route with fewer than two nodes.
    #[error("a route needs at least two nodes, got {0:?}")]
    ShortRoute(Vec<String>),
    /// Two links between the same pair of nodes in the same direction.
    #[error("duplicate link from {0} to {1}")]
    DuplicateLink(String, String),
    /// A parameter out of range.
    #[error("link {0} → {1}: {2}")]
    BadLink(String, String, String),
}

/// Nodes and links.
#[derive(Debug, Default)]
pub struct Topology {
    names: Vec<String>,
    by_name: HashMap<String, NodeId>,
    /// The links.
    pub links: Vec<Link>,
    by_ends: HashMap<(NodeId, NodeId), LinkId>,
}

impl Topology {
    /// The node called `name`, created if new.
    pub fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        self.by_name.insert(name.to_string(), id);
        id
    }

    /// The name of node `id`.
    pub fn name(&self, id: NodeId) -> &str {
        &self.names[id]
    }

    /// Adds a link `from → to`.
    pub fn add_link(
        &mut self,
        from: &str,
        to: &str,
        spec: LinkSpec,
    ) -> Result<LinkId, TopologyError> {
        let bad = |why: &str| TopologyError::BadLink(from.into(), to.into(), why.into());
        if !(spec.rate_bps.is_finite() && spec.rate_bps > 0.0) {
            return Err(bad("rate must be positive"));
        }
        if matches!(spec.limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err(bad("queue limit must be positive"));
        }
        let (a, b) = (self.node(from), self.node(to));
        if self.by_ends.contains_key(&(a, b)) {
            return Err(TopologyError::DuplicateLink(from.into(), to.into()));
        }
        let id = self.links.len();
        self.links.push(Link {
            from: a,
            to: b,
            spec,
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy: false,
            counters: LinkCounters::default(),
            backlog: Vec::new(),
        });
        self.by_ends.insert((a, b), id);
        Ok(id)
    }

    /// The links along the node path `nodes`.
    pub fn route(&self, nodes: &[String]) -> Result<Vec<LinkId>, TopologyError> {
        if nodes.len() < 2 {
            return Err(TopologyError::ShortRoute(nodes.to_vec()));
        }
        nodes
            .windows(2)
            .map(|w| {
                let ends = (self.by_name.get(&w[0]), self.by_name.get(&w[1]));
                match ends {
                    (Some(&a), Some(&b)) => self.by_ends.get(&(a, b)).copied(),
                    _ => None,
                }
                .ok_or_else(|| TopologyError::NoLink(w[0].clone(), w[1].clone()))
            })
            .collect()
    }

    /// A name for link `id`, "from→to".
    pub fn link_name(&self, id: LinkId) -> String {
        let l = &self.links[id];
        format!("{}→{}", self.names[l.from], self.names[l.to])
    }

    /// Prepares backlog tracking of `flows` flows on every link, from `start`.
    pub fn track(&mut self, flows: usize, start: Time) {
        for l in &mut self.links {
            l.backlog = (0..flows).map(|_| StepIntegral::new(start)).collect();
        }
    }
}
