//! # acp-core — the sans-IO heart of the Age Control Protocol
//!
//! ACP and ACP+ let a source of status updates choose the update rate that keeps the information
//! at its monitor as fresh as possible (minimal time-average *age of information*) over a network
//! path it knows nothing about. This crate holds everything protocol-related and nothing else: it
//! performs no I/O and reads no clock. Callers pass the current [`Time`] and received datagrams in,
//! and ask what to send and when to be woken. The same code therefore runs over real UDP sockets
//! (the runtime crate), inside the discrete-event simulator, and in deterministic tests.
//!
//! Modules:
//! - [`time`]: integer nanosecond time.
//! - [`wire`]: the v1 wire format (`docs/PROTOCOL.md`).
//! - [`accounting`]: exact time averages of age and backlog.
//! - [`ewma`]: the RTT̄ and Z̄ estimators.
//! - [`controller`]: the controller trait and Seek (ours), ACP+, ACP, Lazy, Fixed.
//! - [`source`]: the source state machine.
//! - [`sent_log`]: what the source sent for each recent sequence, to check ACK echoes.
//! - [`monitor`]: the monitor state machine.
//! - [`multipath`]: which path each update of a multipath source takes (QAware, minSRTT, ...).
//! - [`cookie`]: stateless address-validation cookies.
//! - [`seal`]: optional authentication with pre-shared keys.
//! - [`prefix`]: per-network shares of bounded tables (monitor sessions, relay clients).
//! - [`units`]: parsing of rates and durations users type (`2mbit`, `20ms`).
//!
//! Paths are modelled in `acp-netmodel`, not here; the simulator's D/D/1 path tests the
//! controllers end to end.
pub mod accounting;
pub mod controller;
pub mod cookie;
pub mod ewma;
pub mod monitor;
pub mod multipath;
pub mod prefix;
pub mod seal;
pub mod sent_log;
mod session_table;
pub mod source;
pub mod time;
pub mod units;
pub mod wire;

pub use controller::{Acp, Controller, Fixed, Lazy, Seek};
pub use monitor::{Monitor, MonitorConfig, SessionKey};
pub use source::{AppMode, Source, SourceConfig, SourceStats};
pub use time::Time;
