//! Nodes, directional links, shared WiFi media and explicit routes.
//!
//! A link leaves one node for another and is an [`acp_netmodel::Link`] built from its
//! [`LinkConfig`] when a simulation starts, named `from→to` (which also names its random streams).
//! A WiFi medium joins an access-point node and station nodes on one channel
//! ([`acp_netmodel::wifi::medium::Medium`]); a hop between a station and its AP crosses it. A
//! route is the list of hops a flow's packets take.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use acp_netmodel::wifi::downlink::{Downlink, DownlinkConfig};
use acp_netmodel::wifi::medium::MediumConfig;
use acp_netmodel::wifi::FrameModel;
use acp_netmodel::{LinkConfig, Streams, Time};
use thiserror::Error;

use crate::slot_reports::ReportSettings;

/// Index of a node.
pub type NodeId = usize;
/// Index of a link.
pub type LinkId = usize;

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

/// A link's ends and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkDef {
    /// Where it starts.
    pub from: NodeId,
    /// Where it ends.
    pub to: NodeId,
    /// Its model.
    pub config: LinkConfig,
}

/// Builds a medium's frame model (PHY airtime, channel, errors) from the run's random streams,
/// so that station placement and shadowing follow the seed.
pub type FramesBuilder = Arc<dyn Fn(&Streams) -> Box<dyn FrameModel> + Send + Sync>;

/// A shared WiFi medium: its AP, its stations (medium station `k` is `stations[k - 1]`), its MAC
/// and how to build its frame model.
#[derive(Clone)]
pub struct WifiDef {
    /// The medium's name (its random streams' label).
    pub name: String,
    /// The access point's node (medium station 0).
    pub ap: NodeId,
    /// Station nodes, medium stations 1, 2, ….
    pub stations: Vec<NodeId>,
    /// The MAC.
    pub mac: MediumConfig,
    /// The PHY and channel.
    pub frames: FramesBuilder,
    /// The 802.11ac A-MPDU downlink instead of the one-frame medium: its configuration, each
    /// station's SNR filled in from `frames` when a run starts (`None`: the one-frame medium).
    pub aggregation: Option<DownlinkConfig>,
    /// How the stations of the A-MPDU downlink report their aggregation to their monitors.
    pub reports: ReportSettings,
}

impl WifiDef {
    /// The A-MPDU downlink `template` (this medium's `aggregation`) starting at `start`, each
    /// station's SNR taken from `frames`, this medium's frame model built from `streams`.
    pub fn downlink<P>(
        &self,
        template: &DownlinkConfig,
        frames: &dyn FrameModel,
        streams: &Streams,
        start: Time,
    ) -> Result<Downlink<P>, String> {
        let mut config = template.clone();
        for (k, s) in config.stations.iter_mut().enumerate() {
            s.snr_db = frames.uplink(k + 1).map_or(f64::INFINITY, |u| u.snr_db);
        }
        Downlink::new(config, streams, &self.name, start)
    }
}

impl fmt::Debug for WifiDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WifiDef")
            .field("name", &self.name)
            .field("ap", &self.ap)
            .field("stations", &self.stations)
            .field("mac", &self.mac)
            .field("aggregation", &self.aggregation)
            .field("reports", &self.reports)
            .finish_non_exhaustive()
    }
}

/// One hop of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// Across a link.
    Link(LinkId),
    /// Across WiFi medium `medium`, from medium station `from` to `to` (one of them the AP, 0).
    Wifi {
        /// Index in [`Topology::wifi`].
        medium: usize,
        /// Sending station.
        from: usize,
        /// Receiving station.
        to: usize,
    },
}

/// Nodes, links and media.
#[derive(Clone, Default)]
pub struct Topology {
    names: Vec<String>,
    by_name: HashMap<String, NodeId>,
    /// The links.
    pub links: Vec<LinkDef>,
    /// The WiFi media.
    pub wifi: Vec<WifiDef>,
    by_ends: HashMap<(NodeId, NodeId), Hop>,
}

/// The nodes, links and media, in the order they were made; not the lookup tables built from
/// them, whose hash order differs from one instance to the next, so that a scenario's `Debug`
/// form describes it the same way every time (a run's key in [`crate::runs`]).
impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("names", &self.names)
            .field("links", &self.links)
            .field("wifi", &self.wifi)
            .finish()
    }
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
        config: LinkConfig,
    ) -> Result<LinkId, TopologyError> {
        config
            .validate()
            .map_err(|why| TopologyError::BadLink(from.into(), to.into(), why))?;
        let (a, b) = (self.node(from), self.node(to));
        if self.by_ends.contains_key(&(a, b)) {
            return Err(TopologyError::DuplicateLink(from.into(), to.into()));
        }
        let id = self.links.len();
        self.links.push(LinkDef {
            from: a,
            to: b,
            config,
        });
        self.by_ends.insert((a, b), Hop::Link(id));
        Ok(id)
    }

    /// Adds a WiFi medium called `name` joining the node `ap` and the `stations` nodes, both ways.
    pub fn add_wifi(
        &mut self,
        name: &str,
        ap: &str,
        stations: &[String],
        mac: MediumConfig,
        frames: FramesBuilder,
    ) -> Result<usize, TopologyError> {
        let bad = |why: String| TopologyError::BadLink(ap.into(), name.into(), why);
        if stations.len() != mac.stations {
            return Err(bad(format!(
                "{} station nodes for a medium of {} stations",
                stations.len(),
                mac.stations
            )));
        }
        mac.validate().map_err(bad)?;
        let medium = self.wifi.len();
        let ap_id = self.node(ap);
        let mut ids = Vec::new();
        for (k, s) in stations.iter().enumerate() {
            let id = self.node(s);
            for (a, b, hop) in [
                (
                    id,
                    ap_id,
                    Hop::Wifi {
                        medium,
                        from: k + 1,
                        to: 0,
                    },
                ),
                (
                    ap_id,
                    id,
                    Hop::Wifi {
                        medium,
                        from: 0,
                        to: k + 1,
                    },
                ),
            ] {
                if self.by_ends.insert((a, b), hop).is_some() {
                    return Err(TopologyError::DuplicateLink(s.clone(), ap.into()));
                }
            }
            ids.push(id);
        }
        self.wifi.push(WifiDef {
            name: name.into(),
            ap: ap_id,
            stations: ids,
            mac,
            frames,
            aggregation: None,
            reports: ReportSettings::default(),
        });
        Ok(medium)
    }

    /// Whether a node called `name` exists.
    pub fn has_node(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The hops along the node path `nodes`.
    pub fn route(&self, nodes: &[String]) -> Result<Vec<Hop>, TopologyError> {
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

    /// The ends of link `id` by name.
    pub fn ends(&self, id: LinkId) -> (&str, &str) {
        let l = &self.links[id];
        (&self.names[l.from], &self.names[l.to])
    }

    /// The name of link `id`, "from→to" (also the label of its random streams).
    pub fn link_name(&self, id: LinkId) -> String {
        let (a, b) = self.ends(id);
        format!("{a}→{b}")
    }

    /// The ends of a hop by name.
    pub fn hop_ends(&self, hop: Hop) -> (&str, &str) {
        match hop {
            Hop::Link(l) => self.ends(l),
            Hop::Wifi { medium, from, to } => {
                let w = &self.wifi[medium];
                let node = |k: usize| if k == 0 { w.ap } else { w.stations[k - 1] };
                (&self.names[node(from)], &self.names[node(to)])
            }
        }
    }

    /// The name of a hop, "from→to".
    pub fn hop_name(&self, hop: Hop) -> String {
        let (a, b) = self.hop_ends(hop);
        format!("{a}→{b}")
    }
}
