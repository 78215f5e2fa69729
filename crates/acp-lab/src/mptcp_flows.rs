//! `type = "mptcp"` flows as the lab runs them: the simulator's multipath flow (its scenario
//! parser reads them, so `acp sim` and `acp lab` run the same file) on the kernel's MPTCP.
//!
//! # Addresses and routes
//!
//! Subflow `k` of a flow from host `c` to host `s` leaves `c` from an address of its own, on a
//! TUN device of its own: path 0 is the hosts' usual device and address ([`crate::hosts`]),
//! path `k ≥ 1` an [`Interface`] — device `acpK` holding `10.77.K.(i+1)/24` on host `i` — in
//! each of the two hosts (one address per path on each host). The emulator routes by device
//! and destination address, so the routes of path `k` are: from `c`'s `acpK` to `s` (the
//! path's links in order) and from `s`'s `acpK` to `c`'s `acpK` (the links back, reversed).
//!
//! # The kernel's path manager
//!
//! In the client's namespace, one endpoint per extra path, `ip mptcp endpoint add 10.77.K.(c+1)
//! dev acpK subflow`, and `ip mptcp limits set subflows K add_addr_accepted 0` in both: once the
//! connection is up, the in-kernel path manager opens a subflow from each endpoint to the
//! server's address, bound to the endpoint's device (so it leaves through `acpK`, whatever the
//! routing table says of the destination); the server answers it through its own `acpK`, the
//! route to the client's `10.77.K.0/24`. The server takes in a subflow on a device other than
//! the one its answers leave by, so both namespaces turn reverse-path filtering off.
//!
//! # What carries over
//!
//! Every subflow's congestion control (`TCP_CONGESTION` on the MPTCP socket, which sets it for
//! its subflows), the send buffer (`SO_SNDBUF`) and the connection's receive buffer
//! (`SO_RCVBUF`, autotuning off), checked as a `tcp` flow's are ([`crate::tcp_flows`]).
//! Refused in one line: any scheduler but `linux-default` (the kernel here schedules with
//! `default` only), `coupling = "lia"` (upstream Linux has no coupled congestion control),
//! `rmem`, and more than one multipath flow per host (a host's endpoints serve all its
//! connections).
//!
//! # Multipath ACP sources
//!
//! An ACP flow with `paths` takes the same addresses, devices and routes (a multipath flow, so
//! one per host too): the source sends path `k`'s updates from a UDP socket bound to the
//! client's address of path `k` and to its device ([`bound_paths`]), to the monitor's usual
//! address; the monitor answers each to the address it came from, which the server's `acpK`
//! reaches. No path manager: reverse-path filtering is turned off in both hosts
//! ([`accept_any_device`]), as the ACKs to `acpK` come from the server's path-0 address.

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::process::Command;
use std::time::Duration;

use acp_sim::mptcp::connection::{Coupling, MptcpConfig};
use acp_sim::mptcp::scheduler::SchedulerKind;
use acp_sim::report::SubflowResult;
use acp_sim::tcp::Application;
use acp_sim::topology::Topology;

use crate::emulator::Route;
use crate::hosts::{Host, PREFIX};
use crate::mptcp_socket::{SenderReport, SubflowInfo};
use crate::tcp_flows::{self, ReceiveBuffer};

/// A multipath flow's kernel settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MptcpFlow {
    /// Congestion control of every subflow, by the kernel's name.
    pub cc: String,
    /// `SO_SNDBUF` of the sender's MPTCP socket.
    pub send_buffer: usize,
    /// `SO_RCVBUF` of the receiver's (bytes).
    pub receive_buffer: usize,
    /// Each subflow's path as the simulator names it (`a>r>b`), path 0 first.
    pub paths: Vec<String>,
}

impl MptcpFlow {
    /// The kernel's settings for flow `name` of the simulator's `config`, or a one-line reason
    /// the lab cannot run it.
    pub fn from_sim(name: &str, config: &MptcpConfig) -> Result<Self, String> {
        if config.scheduler != SchedulerKind::LinuxDefault {
            return Err(format!(
                "flow {name}: scheduler {}: the kernel schedules with its `default` only \
                 (scheduler = \"linux-default\")",
                config.scheduler
            ));
        }
        if config.coupling != Coupling::Uncoupled {
            return Err(format!(
                "flow {name}: coupling = \"{}\": upstream Linux has no coupled congestion \
                 control (coupling = \"none\")",
                config.coupling
            ));
        }
        let tcp = tcp_flows::from_sim(name, &config.tcp, &Application::Bulk)?;
        let ReceiveBuffer::Fixed(receive_buffer) = tcp.receive else {
            unreachable!("an mptcp flow has no rmem (its parser refuses it)")
        };
        Ok(MptcpFlow {
            cc: tcp.cc,
            send_buffer: tcp.send_buffer,
            receive_buffer,
            paths: config.paths.iter().map(|p| p.join(">")).collect(),
        })
    }
}

/// A host's device and address for path `path` (≥ 1) of a multipath flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interface {
    /// Index of the host.
    pub host: usize,
    pub path: usize,
}

/// Most paths a multipath flow may take in the lab (the third octet of their addresses).
pub const MAX_PATHS: usize = 255;

impl Interface {
    /// Its address: `10.77.PATH.(HOST + 1)`.
    pub fn addr(&self) -> Ipv4Addr {
        let [a, b, _, d] = crate::hosts::address(self.host).octets();
        Ipv4Addr::new(a, b, self.path as u8, d)
    }

    /// Its TUN device's name: `acpPATH`.
    pub fn device(&self) -> CString {
        CString::new(device_name(self.path)).unwrap_or_else(|_| unreachable!("no NUL in it"))
    }
}

/// The device of path `path` in every host of a multipath flow (path 0's is the host's own).
fn device_name(path: usize) -> String {
    format!("acp{path}")
}

/// The path a subflow from local address `addr` takes: the third octet (path 0 is the host's
/// own address, `10.77.0.(i+1)`).
pub fn path_of(addr: Ipv4Addr) -> usize {
    usize::from(addr.octets()[2])
}

/// A multipath flow as the planner hands it over: its hosts and its paths' node names.
pub struct Subflows<'a> {
    pub flow: &'a str,
    pub from: usize,
    pub to: usize,
    pub paths: &'a [Vec<String>],
}

/// The interfaces and routes of the paths after the first of `flows` (the first takes the
/// hosts' own addresses and routes), with `hosts` hosts: interface `j` is the emulator's port
/// `hosts + j`.
pub fn subflow_routes(
    topology: &Topology,
    hosts: usize,
    flows: &[Subflows<'_>],
) -> Result<(Vec<Interface>, Vec<Route>), String> {
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut routes = Vec::new();
    let mut flow_of_host: HashMap<usize, &str> = HashMap::new();
    for f in flows {
        for h in [f.from, f.to] {
            if let Some(other) = flow_of_host.insert(h, f.flow) {
                return Err(format!(
                    "flow {}: another multipath flow ({other}) has the same host; the lab runs \
                     one multipath flow per host (a host's addresses and path-manager endpoints \
                     serve all its connections)",
                    f.flow
                ));
            }
        }
        if f.paths.len() > MAX_PATHS {
            return Err(format!(
                "flow {}: {} paths; the lab gives at most {MAX_PATHS} an address each",
                f.flow,
                f.paths.len()
            ));
        }
        for (k, nodes) in f.paths.iter().enumerate().skip(1) {
            let mut port = |host| {
                let i = Interface { host, path: k };
                hosts
                    + interfaces.iter().position(|&j| j == i).unwrap_or_else(|| {
                        interfaces.push(i);
                        interfaces.len() - 1
                    })
            };
            let (client, server) = (port(f.from), port(f.to));
            let back: Vec<String> = nodes.iter().rev().cloned().collect();
            let hops = |nodes: &[String]| {
                topology.route(nodes).map_err(|e| {
                    format!(
                        "flow {}: {e} (ACKs return along the reversed path, so its links must \
                         exist both ways)",
                        f.flow
                    )
                })
            };
            routes.push(Route {
                from: client,
                to: f.to,
                hops: hops(nodes)?,
            });
            routes.push(Route {
                from: server,
                to: client,
                hops: hops(&back)?,
            });
        }
    }
    Ok((interfaces, routes))
}

/// Runs `ip ARGS` in `host`'s namespace (a child forked from a thread inside it lives there).
fn ip(host: &Host, args: &[&str]) -> io::Result<()> {
    let out = host.ns.enter(|| {
        Command::new("ip")
            .args(args)
            .output()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot run `ip` (iproute2): {e}")))
    })?;
    if out.status.success() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "`ip {}` in host {}: {}",
        args.join(" "),
        host.name,
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Writes a sysctl of the calling thread's namespace.
fn sysctl(path: &str, value: &str) -> io::Result<()> {
    std::fs::write(path, value).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// Creates `interface`'s TUN device in `host` (its namespace), configured with the interface's
/// address, and turns reverse-path filtering off there; returns the device's emulator port.
pub fn create_interface(host: &Host, interface: Interface) -> io::Result<crate::emulator::Port> {
    let addr = interface.addr();
    let device = interface.device();
    let tun = host.ns.enter(|| {
        let tun = crate::tun::Tun::create(&device)?;
        crate::tun::configure(&device, addr, PREFIX)?;
        Ok(tun)
    })?;
    Ok(crate::emulator::Port { tun, addr })
}

/// Turns reverse-path filtering off in `hosts` (for all devices, the default, and the devices
/// of `paths` paths): a multipath flow's packets arrive on a device other than the one the
/// routing table would answer by.
pub fn accept_any_device(hosts: &[&Host], paths: usize) -> io::Result<()> {
    for host in hosts {
        host.ns.enter(|| {
            for scope in ["all", "default"]
                .into_iter()
                .map(String::from)
                .chain((0..paths).map(device_name))
            {
                sysctl(&format!("/proc/sys/net/ipv4/conf/{scope}/rp_filter"), "0")?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// What a multipath ACP source on host `host` (its own address `addr`) binds path `k`'s socket
/// to, for `paths` paths: the address (any port) and, beyond path 0, the path's device.
pub fn bound_paths(
    host: usize,
    addr: Ipv4Addr,
    paths: usize,
) -> Vec<(std::net::SocketAddr, Option<String>)> {
    (0..paths)
        .map(|k| match k {
            0 => ((addr, 0).into(), None),
            _ => {
                let i = Interface { host, path: k };
                ((i.addr(), 0).into(), Some(device_name(k)))
            }
        })
        .collect()
}

/// Sets up the kernel's path manager for a flow over `paths` paths from `client` to `server`
/// (their interfaces already created): the limits in both namespaces, reverse-path filtering
/// off in both, and one `subflow` endpoint per extra path in the client's.
pub fn configure_path_manager(
    client: &Host,
    client_index: usize,
    server: &Host,
    paths: usize,
) -> io::Result<()> {
    let extra = (paths - 1).to_string();
    accept_any_device(&[client, server], paths)?;
    for host in [client, server] {
        ip(
            host,
            &[
                "mptcp",
                "limits",
                "set",
                "subflows",
                &extra,
                "add_addr_accepted",
                "0",
            ],
        )?;
    }
    for k in 1..paths {
        let i = Interface {
            host: client_index,
            path: k,
        };
        let (addr, device) = (i.addr().to_string(), device_name(k));
        ip(
            client,
            &["mptcp", "endpoint", "add", &addr, "dev", &device, "subflow"],
        )?;
    }
    Ok(())
}

/// The scheduler the kernel of `host` runs (`net.mptcp.scheduler`).
pub fn kernel_scheduler(host: &Host) -> io::Result<String> {
    let name = host
        .ns
        .enter(|| std::fs::read_to_string("/proc/sys/net/mptcp/scheduler"))?;
    Ok(name.trim().to_string())
}

/// Each path's subflow as `acp sim` reports it, from what the sender's kernel reported at the
/// start and at the end of the measured `window`: bytes acknowledged in the window (its
/// throughput and share of all paths'), and the counters and state at the end. Subflows that
/// share a path (none, unless one was opened again) are summed.
pub fn subflow_results(
    flow: &MptcpFlow,
    report: &SenderReport,
    window: Duration,
) -> Vec<SubflowResult> {
    let before = |s: &SubflowInfo| {
        report
            .at_warmup
            .iter()
            .find(|b| b.local == s.local)
            .map_or(0, |b| b.bytes_acked)
    };
    let on = |k: usize| report.at_end.iter().filter(move |s| path_of(s.local) == k);
    let carried: Vec<u64> = (0..flow.paths.len())
        .map(|k| on(k).map(|s| s.bytes_acked.saturating_sub(before(s))).sum())
        .collect();
    let total: u64 = carried.iter().sum();
    flow.paths
        .iter()
        .enumerate()
        .map(|(k, path)| {
            let last = on(k).next_back();
            SubflowResult {
                path: path.clone(),
                throughput_bps: carried[k] as f64 * 8.0 / window.as_secs_f64().max(1e-9),
                share: if total > 0 {
                    carried[k] as f64 / total as f64
                } else {
                    0.0
                },
                segments: on(k).map(|s| u64::from(s.segments)).sum(),
                retransmits: on(k).map(|s| u64::from(s.retransmits)).sum(),
                timeouts: on(k).map(|s| u64::from(s.timeouts)).sum(),
                cwnd: last.map_or(0, |s| s.cwnd_bytes),
                srtt: last.map(|s| s.srtt),
                device_dequeue_rate: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use acp_sim::topology::Hop;

    const TWO_PATHS: &str = r#"
        format = 2
        duration = "10s"
        [[link]]
        from = "c"
        to = "a"
        rate = "10mbit"
        delay = "1ms"
        [[link]]
        from = "a"
        to = "s"
        rate = "1gbit"
        delay = "9ms"
        [[link]]
        from = "c"
        to = "b"
        rate = "5mbit"
        delay = "1ms"
        [[link]]
        from = "b"
        to = "s"
        rate = "1gbit"
        delay = "39ms"
        [[flow]]
        type = "mptcp"
        name = "m"
        paths = [["c", "a", "s"], ["c", "b", "s"]]
        cc = "cubic"
        window = "packets"
    "#;

    #[test]
    fn an_extra_path_has_a_device_on_each_host_and_routes_both_ways() {
        let p = crate::plan::parse(TWO_PATHS).unwrap();
        assert_eq!(p.hosts, ["c", "s"]);
        // Ports 0 and 1 are the hosts' own devices, 2 and 3 their acp1.
        assert_eq!(
            p.interfaces,
            [
                Interface { host: 0, path: 1 },
                Interface { host: 1, path: 1 }
            ]
        );
        let names = |hops: &[Hop]| -> Vec<String> {
            hops.iter()
                .map(|h| match h {
                    Hop::Link(l) => p.links[*l].name.clone(),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let route = |from: usize, to: usize| {
            let r = p.routes.iter().find(|r| (r.from, r.to) == (from, to));
            names(&r.unwrap_or_else(|| panic!("no route {from}→{to}")).hops)
        };
        assert_eq!(route(0, 1), ["c→a", "a→s"]);
        assert_eq!(route(1, 0), ["s→a", "a→c"]);
        // The client's acp1 to the server's own address; the server's acp1 back to it.
        assert_eq!(route(2, 1), ["c→b", "b→s"]);
        assert_eq!(route(3, 2), ["s→b", "b→c"]);
        assert_eq!(p.routes.len(), 4);
        let crate::plan::FlowPlanKind::Mptcp(m) = &p.flows[0].kind else {
            panic!("{:?}", p.flows[0].kind)
        };
        assert_eq!(m.paths, ["c>a>s", "c>b>s"]);
        assert_eq!(m.cc, "cubic");
    }

    #[test]
    fn what_the_kernel_lacks_is_refused_in_one_line() {
        let second = r#"
        [[flow]]
        type = "mptcp"
        name = "n"
        paths = [["c", "a", "s"], ["c", "b", "s"]]
        window = "packets"
        "#;
        let cases = [
            (
                TWO_PATHS.replace("cc = \"cubic\"", "scheduler = \"qaware\""),
                "the kernel schedules with its `default` only",
            ),
            (
                TWO_PATHS.replace(
                    "cc = \"cubic\"\n        window = \"packets\"",
                    "cc = \"newreno\"\ncoupling = \"lia\"",
                ),
                "no coupled congestion control",
            ),
            (
                format!("{TWO_PATHS}{second}"),
                "one multipath flow per host",
            ),
        ];
        for (text, needle) in cases {
            let e = crate::plan::parse(&text).unwrap_err();
            assert!(
                e.contains(needle) && !e.contains('\n'),
                "{e:?} lacks {needle:?}"
            );
        }
    }

    #[test]
    fn each_path_counts_the_bytes_its_subflows_had_acknowledged_in_the_window() {
        let flow = MptcpFlow {
            cc: "cubic".into(),
            send_buffer: 1 << 20,
            receive_buffer: 1 << 22,
            paths: vec!["c>a>s".into(), "c>b>s".into()],
        };
        let sub = |path: u8, bytes_acked: u64, segments: u32| SubflowInfo {
            local: Ipv4Addr::new(10, 77, path, 1),
            bytes_acked,
            segments,
            retransmits: 1,
            timeouts: 0,
            cwnd_bytes: 14_480,
            srtt: 0.05,
            established: true,
        };
        let report = SenderReport {
            at_warmup: vec![sub(0, 1_000, 10), sub(1, 500, 5)],
            // Path 1 also has a subflow opened inside the window (none before it).
            at_end: vec![
                sub(0, 3_000, 30),
                sub(1, 1_500, 15),
                SubflowInfo {
                    local: Ipv4Addr::new(10, 77, 1, 9),
                    ..sub(1, 500, 5)
                },
            ],
        };
        let r = subflow_results(&flow, &report, Duration::from_secs(2));
        // Path 0: 2000 bytes; path 1: 1000 + 500 (the new subflow counted from zero).
        assert_eq!(r[0].throughput_bps, 2_000.0 * 8.0 / 2.0);
        assert_eq!(r[1].throughput_bps, 1_500.0 * 8.0 / 2.0);
        assert!((r[0].share - 2_000.0 / 3_500.0).abs() < 1e-12);
        assert!((r[0].share + r[1].share - 1.0).abs() < 1e-12);
        assert_eq!((r[1].segments, r[1].retransmits), (20, 2));
        assert_eq!((r[0].path.as_str(), r[0].srtt), ("c>a>s", Some(0.05)));
    }

    #[test]
    fn a_subflow_takes_the_path_of_its_local_address() {
        assert_eq!(path_of(Ipv4Addr::new(10, 77, 0, 1)), 0);
        assert_eq!(path_of(Interface { host: 0, path: 3 }.addr()), 3);
    }

    #[test]
    fn interfaces_are_addressed_per_path_and_host() {
        let i = Interface { host: 1, path: 2 };
        assert_eq!(i.addr(), Ipv4Addr::new(10, 77, 2, 2));
        assert_eq!(i.device().as_bytes(), b"acp2");
    }
}
