//! # acp-runtime — ACP over real UDP sockets
//!
//! Drives the sans-IO state machines of `acp-core` with real sockets (IPv4 and IPv6) and a real
//! clock:
//! - [`clock`]: the process clock that feeds `acp_core::Time`, and precise waiting;
//! - [`units`]: parsing of rates, durations and sizes such as `2mbit`, `20ms`, `1500b`.
pub mod clock;
pub mod units;
