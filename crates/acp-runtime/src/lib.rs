//! # acp-runtime — ACP over real UDP sockets
//!
//! Drives the sans-IO state machines of `acp-core` with real sockets (IPv4 and IPv6) and a real
//! clock:
//! - [`bench`](mod@bench): pacing and monitor-throughput measurements behind `acp bench`;
//! - [`clock`]: the process clock that feeds `acp_core::Time`, and precise waiting;
//! - [`driver`]: runs many sources over one socket with precise pacing;
//! - [`experiment`]: monitor, relay chain and sources on loopback in one call;
//! - [`flood`]: the state-exhaustion and malformed floods of `acp bench flood`, measured;
//! - [`mailbox`]: per-session latest-value hand-off from the monitor server to a slower consumer;
//! - [`server`]: the batched monitor server (UDP, and TCP for comparisons);
//! - [`stream`]: ACP updates over TCP: framing and the monitor's listener;
//! - [`tcp_source`]: updates over kernel TCP generated at will, the baseline ACP is compared with;
//! - [`net`]: address conversion, readiness waits, batched `recvmmsg`/`sendmmsg`, DSCP marking;
//! - [`realtime`]: `SCHED_FIFO` for the threads of a run, ahead of other work on the machine;
//! - [`relay`]: a userspace UDP path emulator running the `acp-netmodel` network model;
//! - [`resolve`]: `HOST:PORT` to the first address of the host usable to listen or send;
//! - [`rows`]: the results every writer shows alike (source and session counters, updates);
pub mod bench;
pub mod clock;
pub mod driver;
pub mod experiment;
pub mod flood;
pub mod mailbox;
pub mod net;
pub mod realtime;
pub mod relay;
pub mod resolve;
pub mod rows;
pub mod server;
pub mod stream;
pub mod tcp_source;

/// The README's Rust snippets, compiled and run as doctests (see `build.rs`).
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/readme_rust.md"))]
pub struct ReadmeSnippets;
