//! # acp-lab — scenarios on real network stacks
//!
//! `acp lab` runs a simulator scenario (format 2, `docs/SIMULATOR.md`) on real network stacks,
//! as Mahimahi does: each end node of the scenario's flows becomes a host — a network namespace
//! with a TUN device — and one emulator thread carries IP packets between the devices through
//! the scenario's links, each the relay's [`acp_runtime::relay::PathModel`] around an
//! `acp-netmodel` link: the model the simulator and the relay run. Real kernel TCP and the ACP
//! runtime run inside the hosts. See `docs/LAB.md`.
//!
//! Nothing outlives the process: namespaces are held by file descriptors only, TUN devices are
//! not persistent, and everything runs in this process's threads.
//!
//! Non-goals: WiFi media offered more frames than the emulator keeps in real time (refused),
//! IPv6, more than
//! [`hosts::MAX_HOSTS`] hosts, running without root.
//!
//! Modules:
//! - [`privilege`]: the capability check;
//! - [`netns`]: namespaces held by descriptors;
//! - [`tun`]: TUN devices and interface settings;
//! - [`hosts`]: a namespace, its devices and address;
//! - [`ipv4`]: the header fields routed by;
//! - [`emulator`]: the forwarding thread;
//! - [`air`]: WiFi media as the emulator plays them (the DCF medium, the A-MPDU downlink and its
//!   stations' aggregation reports);
//! - [`tcp_flows`]: the simulator's `type = "tcp"` flows as kernel socket settings;
//! - [`mptcp_flows`]: the simulator's `type = "mptcp"` flows as kernel MPTCP: one address and
//!   device per path, the routes between them, the kernel's path manager;
//! - [`mptcp_socket`]: MPTCP sockets, the bulk sender and receiver, the subflows' `TCP_INFO`;
//! - [`datagrams`]: the simulator's `cross` and `updates` flows as UDP datagrams and a sink;
//! - [`plan`]: hosts, links, routes and flows of a scenario;
//! - [`realtime`]: the WiFi load a scenario may offer, and the refusal beyond the emulator's;
//! - [`run`]: running a plan and its results;
//! - [`bench`](mod@bench): the emulator's throughput ceiling and delay accuracy (`acp bench lab`).
pub mod air;
pub mod bench;
pub mod datagrams;
pub mod emulator;
pub mod hosts;
pub mod ipv4;
pub mod mptcp_flows;
pub mod mptcp_socket;
pub mod netns;
pub mod plan;
pub mod privilege;
pub mod realtime;
pub mod run;
pub mod tcp_flows;
pub mod tun;
