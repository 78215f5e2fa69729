//! # acp-sim — a deterministic discrete-event network simulator for ACP
//!
//! Nodes joined by directional links, explicit routes, and traffic: ACP sessions driven by the
//! `acp-core` state machines *unchanged* on a virtual clock, fixed-rate update streams, cross
//! traffic and TCP connections with five congestion controls. The links are the shared network model of `acp-netmodel` (the same code the relay
//! runs): rate or delivery trace, propagation delay and jitter, drop-tail or priority queues,
//! loss models, schedules and outages. A seed fully determines a run, byte for byte, and every
//! random element has its own stream, so runs that differ only in a controller or a rate see the
//! same cross traffic (common random numbers). The analytic module holds the queueing results
//! the simulator is validated against.
//!
//! Non-goals: plotting (the CLI draws the results), real sockets (the runtime's).
//!
//! Modules:
//! - [`analytic`]: closed-form queueing results (the oracles of the validation tests);
//! - [`topology`]: nodes, links, routes;
//! - [`flows`]: what travels;
//! - [`engine`]: the event loop;
//! - [`report`]: results, JSON and CSV;
//! - [`spec`]: TOML forms of the network model's parameters (units, loss, schedules);
//! - [`scenario`]: TOML scenario files (format 2);
//! - [`slot_reports`]: the aggregation reports of an A-MPDU downlink's stations;
//! - [`sweep`]: the oracle, a parallel sweep over fixed rates;
//! - [`runs`]: what identifies a run, and the runners that execute batches of them (this
//!   machine's cores; the Python package adds a Dask cluster's);
//! - [`store`]: the result store (SQLite), so that a study run again computes only what it lacks;
//! - [`study`]: a study (a reproduction or a sweep) as data a cluster's workers rebuild runs from;
//! - [`tcp`]: TCP senders and receivers with their congestion controls;
//! - [`mptcp`]: multipath TCP parts: schedulers, device queues, LIA, the connection-level
//!   receive buffer;
//! - [`reproduce`]: the papers' Figs. 2 and 4 (updates over TCP), Fig. 7, Table I, the D/D/1
//!   table and the multi-source WiFi results (Fig. 15, thesis Figs. 3.15 and 3.16).
pub mod analytic;
pub mod engine;
pub mod estimator;
pub mod flows;
pub mod mptcp;
pub mod report;
pub mod reproduce;
pub mod runs;
pub mod scenario;
pub mod slot_reports;
pub mod spec;
pub mod store;
pub mod study;
pub mod sweep;
pub mod tcp;
pub mod topology;

pub use engine::{Sim, SimConfig};
