//! # acp-netmodel — one network model for the simulator, the relay and the lab
//!
//! The path an update crosses is modelled here once, and every user drives the same code: the
//! discrete-event simulator (`acp-sim`) on a virtual clock, the userspace relay (`acp-runtime`) on
//! the wall clock, and later the TUN-based lab. Like `acp-core`, the model is *sans-IO*: it never
//! reads a clock and never touches a socket. Callers pass the current [`Time`] and packets in, and
//! ask when the model next needs them ([`Link::poll_timeout`]) and what leaves
//! ([`Link::poll_departure`]).
//!
//! A [`Link`] is a pipeline, each stage configurable and off unless asked for:
//!
//! ```text
//! arrival ─► outage? ─► loss (Bernoulli | Gilbert–Elliott) ─► queue discipline (drop-tail FIFO |
//!   strict priority by DSCP | diffserv4 tins | freshest update per source) ─► server (rate: deterministic | exponential; or a Mahimahi delivery
//!   trace) ─► propagation delay (+ jitter, in order unless reordering is asked) ─► outage? ─► departure
//! ```
//!
//! with rate, delay and loss changing over time along a piecewise [`Schedule`].
//!
//! Modules:
//! - [`rng`]: the seeded generator and its independent, named streams (common random numbers);
//! - [`loss`]: random loss models;
//! - [`queue`]: the queue-discipline trait, drop-tail FIFO and strict priority;
//! - [`tins`]: Diffserv tins in the manner of CAKE's `diffserv4`;
//! - [`freshest`]: age-aware queueing, the freshest update of each source (with or without
//!   pre-emption in service);
//! - [`schedule`]: piecewise link schedules and Mahimahi packet-delivery traces;
//! - [`link`]: the link itself;
//! - [`arrivals`]: arrival processes (periodic/CBR, Poisson, on-off) for cross traffic and update
//!   streams;
//! - [`driver`]: the one loop that drives a sans-IO endpoint at a timer.
//!
//! Non-goals: no routing or topology (the simulator's), no sockets or threads (the runtime's), no
//! per-flow bookkeeping beyond a discipline's per-source state (the caller's packets are opaque
//! but for their size, DSCP and source key).
//!
//! Nothing here panics on configuration that passed [`LinkConfig::validate`].

pub mod arrivals;
pub mod driver;
pub mod freshest;
pub mod link;
pub mod loss;
pub mod queue;
pub mod rng;
pub mod schedule;
pub mod tins;
pub mod wifi;

pub use acp_core::Time;
pub use arrivals::{Arrivals, Process};
pub use link::{
    Admission, Departure, DropReason, Dropped, Jitter, Link, LinkConfig, LinkCounters, Service,
};
pub use loss::LossModel;
pub use queue::{Discipline, Parcel, QueueDiscipline, QueueLimit, DISCIPLINE_NAMES};
pub use rng::{Rng, Streams};
pub use schedule::{Schedule, Step, Trace};
