//! Multipath TCP parts: the pieces a connection over K subflows is built from.
//!
//! - [`scheduler`]: which subflow carries the next segment, behind one trait
//!   ([`scheduler::Scheduler`]): minSRTT, round-robin, ECF, BLEST, DAPS, QAware and a model of
//!   upstream Linux's `default` scheduler;
//! - [`device_queue`]: a subflow's device (NIC) queue counters as BQL/DQL keep them, with the
//!   dequeue-rate sampling QAware's Algorithm 1 reads;
//! - [`lia`]: RFC 6356's linked increase (LIA) coupling the subflows' congestion windows;
//! - [`reassembly`]: the connection-level receive buffer: reordering across subflows by data
//!   sequence number, and the head-of-line blocking a small buffer causes;
//! - [`connection`]: the connection over K subflows that puts these parts together on the
//!   [`crate::tcp`] models (a scenario's `type = "mptcp"` flow);
//! - [`queueing`]: the queueing abstraction of thesis §2.4 (Poisson arrivals dispatched to
//!   parallel M/M/1 facilities) that motivates QAware's rule.
//!
//! Every rule and its source is written down in `docs/MULTIPATH.md`.

pub mod connection;
pub mod device_queue;
pub mod lia;
pub mod queueing;
pub mod reassembly;
pub mod scheduler;
