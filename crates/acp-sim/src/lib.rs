//! # acp-sim — a deterministic discrete-event network simulator for ACP
//!
//! Nodes joined by directional links (rate, propagation delay, FIFO drop-tail queue limited in
//! packets or bytes, deterministic or exponential service), explicit routes, and traffic: ACP
//! sessions driven by the `acp-core` state machines *unchanged* on a virtual clock, fixed-rate
//! update streams (periodic or Poisson), and cross traffic (CBR, Poisson, on-off). A seed fully
//! determines a run, byte for byte. The analytic module holds the queueing results the simulator
//! is validated against.
//!
//! Modules:
//! - [`analytic`]: closed-form queueing results (the oracles of the validation tests);
//! - [`rng`]: the seeded generator;
//! - [`topology`]: nodes, links, routes;
//! - [`flows`]: what travels;
//! - [`engine`]: the event loop;
//! - [`plot`]: line and scatter charts as PNG and SVG (font bundled);
//! - [`report`]: results, JSON and CSV;
//! - [`spec`]: TOML forms of the network model's parameters (units, loss, schedules);
//! - [`scenario`]: TOML scenario files;
//! - [`sweep`]: the oracle, a parallel sweep over fixed rates;
//! - [`reproduce`]: the paper's Fig. 7 and Table I.
pub mod analytic;
pub mod engine;
pub mod flows;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod rng;
pub mod scenario;
pub mod spec;
pub mod sweep;
pub mod topology;

pub use engine::{Sim, SimConfig};
