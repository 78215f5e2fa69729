//! Nodes, directional links and explicit routes.
//!
//! A link leaves one node for another and is an [`acp_netmodel::Link`] built from its
//! [`LinkConfig`] when a simulation starts, named `from→to` (which also names its random streams).
//! A route is the list of links a flow's packets take.

use std::collections::HashMap;

use acp_netmodel::LinkConfig;
use thiserror::Error;

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

/// Nodes and links.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    names: Vec<String>,
    by_name: HashMap<String, NodeId>,
    /// The links.
    pub links: Vec<LinkDef>,
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
}
