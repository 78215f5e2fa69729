//! What a lab runs, read from a scenario file: hosts, links, routes and flows.
//!
//! Hosts are the nodes flows start and end at; other nodes are only where links meet. Every
//! directed link of the scenario becomes an emulator link named as in the simulator (`a→b`, also
//! its random streams' label). A flow's path gives the route from its source host to its
//! destination, and for ACP and TCP flows the reversed path the route back (their ACKs return
//! along it, so every link on the path must exist both ways); `cross` and `updates` flows have
//! no feedback and need only the route there. Packets are routed by address, so two flows
//! joining the same hosts must take the same path.
//!
//! A `[[wifi]]` medium is carried over as the simulator defines it (its stations and AP are
//! nodes like any other; a route crossing it is a hop of the emulator's medium).
//!
//! What the lab cannot emulate is refused with one line naming it: age traces
//! (`trace_points`), datagrams larger than the hosts' MTU; and, when a file is loaded for a run
//! ([`load`]), WiFi media offered more frames than the emulator keeps in real time
//! ([`crate::realtime`]; [`parse`] does not refuse them: `acp bench lab` saturates the emulator
//! on purpose).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::multipath::PathRule;
use acp_core::SourceConfig;
use acp_netmodel::Streams;
use acp_runtime::relay::PathConfig;
use acp_sim::estimator::model::BoundaryModel;
use acp_sim::flows::{FlowKind, FlowSpec};
use acp_sim::scenario::Scenario;
use acp_sim::topology::{Hop, Topology};

use crate::datagrams::DatagramFlow;
use crate::emulator::{LinkSpec, MediumSpec, Route};
use crate::hosts::MAX_HOSTS;
use crate::mptcp_flows::{self, Interface, MptcpFlow, Subflows};
use crate::realtime::{self, MediumLoad};
use crate::tcp_flows::{self, ReceiveBuffer, TcpFlow};

/// What a flow runs.
#[derive(Debug, Clone)]
pub enum FlowPlanKind {
    /// An ACP source (the runtime's UDP driver) and a monitor.
    Acp {
        controller: ControllerKind,
        config: SourceConfig,
        /// Payload bytes per update.
        payload: u32,
        /// A multipath source's scheduler and paths (`a>r>b`, path 0 first), over the
        /// addresses and devices of [`crate::mptcp_flows`]; `None`: the one path.
        multipath: Option<(PathRule, Vec<String>)>,
    },
    /// A kernel TCP connection to a monitor.
    Tcp(TcpFlow),
    /// A `cross` or `updates` flow: datagrams to a sink, no feedback.
    Datagrams(DatagramFlow),
    /// A kernel MPTCP connection over the flow's paths, bulk data to a receiver.
    Mptcp(MptcpFlow),
}

/// A flow between two hosts (indices into [`Plan::hosts`]).
#[derive(Debug, Clone)]
pub struct FlowPlan {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// When it starts (stagger included) and stops, from the start of the run.
    pub start: Duration,
    pub stop: Option<Duration>,
    pub dscp: u8,
    pub kind: FlowPlanKind,
}

/// A lab to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration: Duration,
    /// Results count from here.
    pub warmup: Duration,
    /// Host names, in order of first appearance in the flows.
    pub hosts: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// The WiFi media, as the simulator defines them.
    pub media: Vec<MediumSpec>,
    pub routes: Vec<Route>,
    /// The extra devices and addresses of multipath flows' paths: interface `j` is the
    /// emulator's port `hosts.len() + j` (routes name ports).
    pub interfaces: Vec<Interface>,
    pub flows: Vec<FlowPlan>,
    /// Per medium, what its stations may offer it ([`crate::realtime`]).
    pub loads: Vec<MediumLoad>,
    /// Per host, the `net.ipv4.tcp_rmem` (default, max) its TCP flows' `rmem` asks for.
    pub tcp_rmem: Vec<Option<(usize, usize)>>,
    /// The frame-boundary estimator that the ACP monitors at an A-MPDU downlink's stations run
    /// on their kernel receive timestamps to report their levels themselves (`acp lab
    /// --aggregation-model`), instead of being handed the emulator's measurement; `None` from
    /// a scenario ([`crate::air`]).
    pub aggregation_estimator: Option<BoundaryModel>,
}

/// Reads `path` (the simulator's format 2) for a run: refused, too, if its WiFi media may be
/// offered more frames than the emulator keeps in real time ([`realtime::check`]).
pub fn load(path: &Path) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let scenario = Scenario::parse_in(&text, path.parent()).map_err(|e| e.to_string())?;
    let plan = from_scenario(&scenario)?;
    realtime::check(&plan.loads)?;
    Ok(plan)
}

/// Reads a scenario's text (format 2), as [`load`] reads a file, without the real-time check.
pub fn parse(text: &str) -> Result<Plan, String> {
    from_scenario(&Scenario::parse(text).map_err(|e| e.to_string())?)
}

struct Builder<'a> {
    topology: &'a Topology,
    hosts: Vec<String>,
    routes: Vec<Route>,
    by_ends: HashMap<(usize, usize), Vec<String>>,
}

impl Builder<'_> {
    fn host(&mut self, name: &str) -> Result<usize, String> {
        if let Some(i) = self.hosts.iter().position(|h| h == name) {
            return Ok(i);
        }
        if self.hosts.len() == MAX_HOSTS {
            return Err(format!("the lab holds at most {MAX_HOSTS} hosts"));
        }
        self.hosts.push(name.to_string());
        Ok(self.hosts.len() - 1)
    }

    /// Hops of the node path `nodes`.
    fn hops(&self, nodes: &[String]) -> Result<Vec<Hop>, String> {
        self.topology.route(nodes).map_err(|e| e.to_string())
    }

    /// Adds flow `f`, between `hosts`, to what it offers the media it crosses (and, if `back`,
    /// its feedback crosses). Across an A-MPDU downlink only paced flows are bounded: an ACP
    /// flow by its `max_rate` (its ACKs by that too, or by one per feedback interval), a
    /// datagram flow by its rate; TCP is refused.
    fn add_load(
        &self,
        loads: &mut [MediumLoad],
        f: &FlowSpec,
        hosts: (usize, usize),
        back: bool,
    ) -> Result<(), String> {
        let (from, to) = hosts;
        let ways: &[(usize, usize)] = if back {
            &[(from, to), (to, from)]
        } else {
            &[(from, to)]
        };
        for &(a, b) in ways {
            let Some(route) = self.routes.iter().find(|r| (r.from, r.to) == (a, b)) else {
                continue;
            };
            for hop in &route.hops {
                let Hop::Wifi { medium, .. } = *hop else {
                    continue;
                };
                let def = &self.topology.wifi[medium];
                match (f.datagram_process(), &f.kind, def.aggregation.is_some()) {
                    (Some((_, rate)), _, _) => loads[medium].datagram_fps += rate,
                    (None, _, false) => loads[medium].closed_loop = true,
                    (None, FlowKind::Acp { config, .. }, true) => {
                        let acks = def.reports.feedback.map_or(config.max_rate, |every| {
                            config.max_rate.min(1.0 / every.as_secs_f64())
                        });
                        loads[medium].paced_fps += if (a, b) == (from, to) {
                            config.max_rate
                        } else {
                            acks
                        };
                    }
                    (None, _, true) => {
                        return Err(format!(
                            "flow {}: only ACP flows (paced by max_rate) and datagram flows may \
                             cross the A-MPDU downlink {} in the lab (its packet rate is bounded \
                             by nothing else before the run; docs/LAB.md)",
                            f.name, def.name
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// The hosts of a flow along `path`, with the route there and, if `back`, back.
    fn connect(
        &mut self,
        flow: &str,
        path: &[String],
        back: bool,
    ) -> Result<(usize, usize), String> {
        let err = |e: String| format!("flow {flow}: {e}");
        let (first, last) = match path {
            [first, .., last] => (first, last),
            _ => return Err(err(format!("a path needs two nodes, got {path:?}"))),
        };
        let (from, to) = (self.host(first)?, self.host(last)?);
        let mut ways = vec![(from, to, path.to_vec())];
        if back {
            ways.push((to, from, path.iter().rev().cloned().collect()));
        }
        for (a, b, nodes) in ways {
            let hops = self.hops(&nodes).map_err(|e| match back {
                true => err(format!(
                    "{e} (ACKs return along the reversed path, so its links must exist both ways)"
                )),
                false => err(e),
            })?;
            match self.by_ends.get(&(a, b)) {
                Some(known) if *known != nodes => {
                    return Err(err(format!(
                        "the path {nodes:?} differs from {known:?}, which another flow takes \
                         between the same hosts (the lab routes by address)"
                    )))
                }
                Some(_) => {}
                None => {
                    self.by_ends.insert((a, b), nodes);
                    self.routes.push(Route {
                        from: a,
                        to: b,
                        hops,
                    });
                }
            }
        }
        Ok((from, to))
    }
}

fn from_scenario(s: &Scenario) -> Result<Plan, String> {
    if s.config.trace_points > 0 {
        return Err("trace_points: the lab records no age traces (remove it)".into());
    }
    let streams = Streams::new(s.config.seed);
    let mut b = Builder {
        topology: &s.topology,
        hosts: Vec::new(),
        routes: Vec::new(),
        by_ends: HashMap::new(),
    };
    let mut flows = Vec::new();
    let mut loads: Vec<MediumLoad> = s
        .topology
        .wifi
        .iter()
        .map(|w| MediumLoad {
            name: w.name.clone(),
            ceiling_fps: realtime::frame_ceiling(w, s.config.seed),
            datagram_fps: 0.0,
            paced_fps: 0.0,
            closed_loop: false,
        })
        .collect();
    let mut multipath = Vec::new();
    for f in &s.flows {
        acp_sim::engine::check_flow(f).map_err(|e| e.to_string())?;
        let start = f.staggered_start(&streams);
        let arrivals = |f: &FlowSpec| {
            let at = acp_netmodel::Time::from_nanos(acp_core::time::duration_nanos(start));
            f.arrivals(&streams, at)
                .unwrap_or_else(|| unreachable!("updates and cross flows have arrivals"))
        };
        if let FlowKind::Acp {
            sender: Some(sender),
            ..
        } = &f.kind
        {
            return Err(format!(
                "flow {}: sender {sender:?}: the lab runs a controller per source (remove it)",
                f.name
            ));
        }
        let kind =
            match &f.kind {
                FlowKind::Acp {
                    ack_dscp: Some(d), ..
                } if *d != f.dscp => {
                    return Err(format!(
                "flow {}: ack_dscp: the lab's monitor marks its ACKs as the updates (remove it)",
                f.name
            ))
                }
                FlowKind::Acp {
                    controller,
                    config,
                    payload,
                    multipath,
                    ..
                } => FlowPlanKind::Acp {
                    controller: *controller,
                    config: config.clone(),
                    payload: *payload,
                    multipath: multipath
                        .as_ref()
                        .map(|m| (m.rule, m.paths.iter().map(|p| p.join(">")).collect())),
                },
                FlowKind::Tcp { config, app } => {
                    FlowPlanKind::Tcp(tcp_flows::from_sim(&f.name, config, app)?)
                }
                FlowKind::Mptcp(config) => {
                    FlowPlanKind::Mptcp(MptcpFlow::from_sim(&f.name, config)?)
                }
                FlowKind::Updates { process, size, .. } => FlowPlanKind::Datagrams(
                    DatagramFlow::new(&f.name, true, *process, *size, arrivals(f))?,
                ),
                FlowKind::Cross { process, size, .. } => FlowPlanKind::Datagrams(
                    DatagramFlow::new(&f.name, false, *process, *size, arrivals(f))?,
                ),
            };
        let back = !matches!(kind, FlowPlanKind::Datagrams(_));
        let (from, to) = b.connect(&f.name, &f.path, back)?;
        b.add_load(&mut loads, f, (from, to), back)?;
        let paths = match &f.kind {
            FlowKind::Mptcp(config) => Some(&config.paths),
            FlowKind::Acp {
                multipath: Some(m), ..
            } => Some(&m.paths),
            _ => None,
        };
        if let Some(paths) = paths {
            multipath.push(Subflows {
                flow: &f.name,
                from,
                to,
                paths,
            });
        }
        flows.push(FlowPlan {
            name: f.name.clone(),
            from,
            to,
            start,
            stop: f.stop,
            dscp: f.dscp,
            kind,
        });
    }
    if flows.is_empty() {
        return Err("the scenario has no flows".into());
    }
    let (interfaces, subflow_routes) =
        mptcp_flows::subflow_routes(&s.topology, b.hosts.len(), &multipath)?;
    b.routes.extend(subflow_routes);
    let tcp_rmem = host_rmem(&flows, b.hosts.len())?;
    let links = (0..s.topology.links.len())
        .map(|id| LinkSpec {
            name: s.topology.link_name(id),
            path: PathConfig {
                link: s.topology.links[id].config.clone(),
                cross_bps: 0.0,
            },
        })
        .collect();
    Ok(Plan {
        name: s.name.clone(),
        seed: s.config.seed,
        duration: s.config.duration,
        warmup: s.config.warmup,
        hosts: b.hosts,
        links,
        media: s
            .topology
            .wifi
            .iter()
            .map(|w| MediumSpec {
                def: w.clone(),
                nodes: std::iter::once(w.ap)
                    .chain(w.stations.iter().copied())
                    .map(|n| s.topology.name(n).to_string())
                    .collect(),
                reports: Vec::new(),
            })
            .collect(),
        routes: b.routes,
        interfaces,
        flows,
        loads,
        tcp_rmem,
        aggregation_estimator: None,
    })
}

/// Each host's `tcp_rmem`: the `rmem` of the TCP flows ending there, which must agree (it is
/// one setting of the host's namespace).
fn host_rmem(flows: &[FlowPlan], hosts: usize) -> Result<Vec<Option<(usize, usize)>>, String> {
    let mut rmem: Vec<Option<(usize, usize)>> = vec![None; hosts];
    for f in flows {
        let FlowPlanKind::Tcp(TcpFlow {
            receive: ReceiveBuffer::Autotuned { default, max },
            ..
        }) = f.kind
        else {
            continue;
        };
        match rmem[f.to] {
            Some(known) if known != (default, max) => {
                return Err(format!(
                    "flow {}: rmem {:?} differs from {known:?}, which another flow to the same \
                     host asks for (tcp_rmem is one setting per host)",
                    f.name,
                    (default, max)
                ))
            }
            _ => rmem[f.to] = Some((default, max)),
        }
    }
    Ok(rmem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan, String> {
        parse(text)
    }

    const CHAIN: &str = r#"
        format = 2
        duration = "10s"
        [[link]]
        from = "a"
        to = "r"
        rate = "2mbit"
        delay = "10ms"
        [[link]]
        from = "r"
        to = "b"
        rate = "1mbit"
        delay = "5ms"
        [[flow]]
        type = "acp"
        name = "x"
        path = ["a", "r", "b"]
        [[flow]]
        type = "tcp"
        name = "t"
        cc = "reno"
        window = "packets"
        path = ["b", "r", "a"]
    "#;

    #[test]
    fn end_nodes_are_hosts_and_paths_routes_both_ways() {
        let p = plan(CHAIN).unwrap();
        assert_eq!(p.hosts, ["a", "b"]);
        let names: Vec<&str> = p.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["a→r", "r→a", "r→b", "b→r"]);
        assert_eq!(
            p.routes,
            [
                Route {
                    from: 0,
                    to: 1,
                    hops: vec![Hop::Link(0), Hop::Link(2)]
                },
                Route {
                    from: 1,
                    to: 0,
                    hops: vec![Hop::Link(3), Hop::Link(1)]
                },
            ]
        );
        assert_eq!((p.flows[1].from, p.flows[1].to), (1, 0));
        assert_eq!(p.tcp_rmem, [None, None]);
    }

    #[test]
    fn rmem_is_the_receiving_hosts_setting() {
        let with =
            |rmem: &str| CHAIN.replace("cc = \"reno\"", &format!("cc = \"reno\"\nrmem = {rmem}"));
        let p = plan(&with("[1000000, 3000000]")).unwrap();
        assert_eq!(p.tcp_rmem, [Some((1_000_000, 3_000_000)), None]);
        let second = format!(
            "{}\n[[flow]]\ntype = \"tcp\"\nname = \"u\"\nwindow = \"packets\"\nrmem = [5000, 6000]\npath = [\"b\", \"r\", \"a\"]\n",
            with("[1000000, 3000000]")
        );
        let e = plan(&second).unwrap_err();
        assert!(
            e.contains("flow u: rmem") && e.contains("one setting per host"),
            "{e}"
        );
    }

    #[test]
    fn cross_and_updates_flows_run_one_way_at_the_simulators_times() {
        let text = r#"
            format = 2
            seed = 7
            duration = "10s"
            [[link]]
            from = "a"
            to = "b"
            rate = "2mbit"
            delay = "10ms"
            both_ways = false
            [[flow]]
            type = "cross"
            name = "c"
            rate = "1mbit"
            size = 1000
            process = "poisson"
            path = ["a", "b"]
            [[flow]]
            type = "updates"
            name = "u"
            rate = 20
            start = "1s"
            path = ["a", "b"]
        "#;
        let p = plan(text).unwrap();
        // No link back from b: only the route there.
        assert_eq!(
            p.routes,
            [Route {
                from: 0,
                to: 1,
                hops: vec![Hop::Link(0)]
            }]
        );
        let streams = Streams::new(7);
        let datagrams = |i: usize| match &p.flows[i].kind {
            FlowPlanKind::Datagrams(d) => d.clone(),
            other => panic!("{other:?}"),
        };
        let (mut c, mut u) = (datagrams(0), datagrams(1));
        assert!(!c.updates && u.updates && (c.size, u.size) == (1000, 100));
        // The simulator's arrivals: its stream for the flow, 1 Mbit/s of 1000-byte packets
        // (125 a second) from the flow's start.
        let mut sim = acp_netmodel::Arrivals::new(
            acp_netmodel::Process::Poisson,
            125.0,
            streams.stream("flow c arrivals"),
            acp_core::Time::ZERO,
        );
        for _ in 0..100 {
            assert_eq!(c.arrivals.pop(), sim.pop());
        }
        // Periodic updates: the first at the start, then every 50 ms.
        assert_eq!(u.arrivals.pop(), acp_core::Time::from_secs(1));
        assert_eq!(u.arrivals.pop(), acp_core::Time::from_millis(1050));
    }

    #[test]
    fn a_wifi_medium_is_a_hop_of_the_routes_across_it() {
        let text = CHAIN
            .replace(
                "from = \"a\"\n        to = \"r\"",
                "from = \"w\"\n        to = \"r\"",
            )
            .replace("[\"a\", \"r\", \"b\"]", "[\"a\", \"w\", \"r\", \"b\"]")
            .replace("[\"b\", \"r\", \"a\"]", "[\"b\", \"r\", \"w\", \"a\"]");
        let p = plan(&format!(
            "{text}\n[[wifi]]\nname = \"air\"\nap = \"w\"\nstations = \"a\"\n"
        ))
        .unwrap();
        assert_eq!(p.hosts, ["a", "b"]);
        assert_eq!(p.media.len(), 1);
        assert_eq!(p.media[0].def.name, "air");
        assert_eq!(p.media[0].nodes, ["w", "a"]);
        // Station 1 (a) to the AP (0), then the wired links; and back.
        assert_eq!(
            p.routes[0].hops,
            [
                Hop::Wifi {
                    medium: 0,
                    from: 1,
                    to: 0
                },
                Hop::Link(0),
                Hop::Link(2)
            ]
        );
        assert_eq!(
            p.routes[1].hops,
            [
                Hop::Link(3),
                Hop::Link(1),
                Hop::Wifi {
                    medium: 0,
                    from: 0,
                    to: 1
                }
            ]
        );
    }

    #[test]
    fn what_the_lab_cannot_emulate_is_refused_in_one_line() {
        let cases = [
            (
                CHAIN.replace(
                    "type = \"acp\"",
                    "type = \"cross\"\nrate = \"1mbit\"\nsize = 9000",
                ),
                "flow x: size 9000 is outside 28..=1500",
            ),
            (
                CHAIN.replace("duration = \"10s\"", "duration = \"10s\"\ntrace_points = 5"),
                "trace_points",
            ),
            (
                CHAIN.replace("delay = \"5ms\"", "delay = \"5ms\"\nboth_ways = false"),
                "no link from b to r",
            ),
        ];
        for (text, needle) in cases {
            let e = plan(&text).unwrap_err();
            assert!(
                e.contains(needle) && !e.contains('\n'),
                "{e:?} lacks {needle:?}"
            );
        }
    }
}
