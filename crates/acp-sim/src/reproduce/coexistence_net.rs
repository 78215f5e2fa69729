//! The coexistence paper's three configurations as scenarios (Shreedhar, Kaul, Yates,
//! "Coexistence of Age Sensitive Traffic and High Throughput Flows: Does Prioritization Help?",
//! §IV; thesis §5.4): ACP sources and bulk TCP CUBIC flows on WiFi clients of one access point,
//! then the Internet to a server.
//!
//! - [`Config::BaselinePriority`] (BP): every flow leaves one WiFi client; ACP marked CS7.
//! - [`Config::MultiaccessPriority`] (MP): each flow on its own client; ACP marked CS7.
//! - [`Config::BestEffort`] (BE): each flow on its own client; nothing marked.
//!
//! [`Coexistence`] builds the scenario of (configuration, ACP flows, TCP flows, PHY rate,
//! controller). What the paper states (seed `003_a8ec1da38bc36102.txt`, §IV): a fixed PHY rate,
//! 12 or 6 Mbit/s; 802.11's priority queueing (EDCA) at the access, DSCP → access category as
//! Table I (RFC 8325: CS7 → AC_VO); "An update packet is of size 1024 bytes in all our
//! experiments"; TCP flows are iPerf3 bulk transfers with `cubic`, "always treated as best
//! effort"; CAKE's Diffserv at the AP's Ethernet interface puts ACP-priority in its highest
//! (voice) tin and the rest in best effort; ORBIT nodes reach the Internet over "the 1 Gbps
//! ethernet NIC"; "The baseline round-trip-time (RTT) ... is ≈ 200 -210 ms".
//!
//! Derived where it is silent (each a choice the other reproductions of the same testbed make,
//! `orbit` and `contention-tcp`):
//! - 802.11g OFDM at the stated rate: the paper's AP is 802.11n at 5 GHz with rate control off,
//!   and a 5 GHz legacy OFDM exchange takes the same time as 802.11g's (`scenarios/paper/orbit.toml`);
//! - the grid (1 m spacing, up to 80 nodes) as a 20 × 20 m² area without shadowing: every frame
//!   is decodable at these rates, as on the grid;
//! - 500 frames per station and access category, the AP serving its stations in turn
//!   (mac80211's per-station queues), each station's frames in arrival order or, with
//!   [`StationQueues::Fq`], its flows by mac80211's fair queueing;
//! - the Internet as one 200 Mbit/s link of 100 ms each way ([`INTERNET_DELAY_MS`]): the base
//!   RTT is then 200 ms plus the WiFi exchange, inside the paper's 200–210 ms; 200 Mbit/s is the
//!   TCP rate the ACP+ paper measured to the same AWS Mumbai server (seed
//!   `001_97aeadf5f0d233f9.txt`, §VIII), so the access stays the bottleneck;
//! - the AP's egress a 1 Gbit/s link with a 1000-packet queue (Linux's default `txqueuelen`)
//!   under [`AP_EGRESS_DISCIPLINE`].

use std::fmt;

use acp_core::controller::ControllerKind;
use acp_netmodel::wifi::medium::VoiceQueue;
use serde::Serialize;

use super::access::Client;
use crate::scenario::{Scenario, ScenarioError};
use crate::tcp::CcKind;

/// DSCP CS7 (network control), the paper's marking for ACP-priority flows.
pub const CS7: u8 = 56;

/// The queue discipline of the AP's wired egress, its one place: CAKE's `diffserv4` tins (CS7
/// in the Voice tin, unmarked traffic in Best Effort).
pub const AP_EGRESS_DISCIPLINE: &str = "discipline = \"diffserv4\"";

/// One-way propagation delay of the Internet path from the AP's egress to the server (ms).
pub const INTERNET_DELAY_MS: f64 = 100.0;

/// Rate of the Internet path (Mbit/s).
pub const INTERNET_MBIT: f64 = 200.0;

/// The AP's Ethernet egress (Mbit/s).
pub const EGRESS_MBIT: f64 = 1000.0;

/// Frames each WiFi station (and access category) may hold.
pub const WIFI_QUEUE: usize = 500;

/// The update payload of the paper's experiments (bytes).
pub const PAYLOAD: u32 = 1024;

/// Which clients the flows leave from and how ACP is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Config {
    /// Every flow on one client; ACP marked CS7.
    #[serde(rename = "BP")]
    BaselinePriority,
    /// Each flow on its own client; ACP marked CS7.
    #[serde(rename = "MP")]
    MultiaccessPriority,
    /// Each flow on its own client; nothing marked.
    #[serde(rename = "BE")]
    BestEffort,
}

impl Config {
    /// The three, in the paper's order.
    pub const ALL: [Config; 3] = [
        Config::BaselinePriority,
        Config::MultiaccessPriority,
        Config::BestEffort,
    ];

    /// The paper's abbreviation.
    pub fn label(self) -> &'static str {
        match self {
            Config::BaselinePriority => "BP",
            Config::MultiaccessPriority => "MP",
            Config::BestEffort => "BE",
        }
    }

    /// The DSCP of its ACP flows (`None`: unmarked, best effort).
    pub fn acp_dscp(self) -> Option<u8> {
        match self {
            Config::BaselinePriority | Config::MultiaccessPriority => Some(CS7),
            Config::BestEffort => None,
        }
    }

    /// Whether all flows share one client.
    pub fn one_client(self) -> bool {
        self == Config::BaselinePriority
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How the AP orders the frames it holds for each client (the `[[wifi]]` key `ap_queue`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum StationQueues {
    /// The clients in turn, each client's frames in arrival order (`"per-station"`).
    #[default]
    #[serde(rename = "per-station")]
    InTurn,
    /// The clients in turn, each client's flows by mac80211's fair queueing (`"fq"`: new flows
    /// first, deficit round robin by bytes), as a Linux AP schedules them.
    #[serde(rename = "fq")]
    Fq,
    /// As [`StationQueues::Fq`], each flow behind CoDel with mac80211's parameters
    /// (`"fq-codel"`: target 20 ms, interval 100 ms), mac80211's `fq_codel`.
    #[serde(rename = "fq-codel")]
    FqCodel,
}

impl StationQueues {
    /// The value of the `ap_queue` key.
    pub fn key(self) -> &'static str {
        match self {
            StationQueues::InTurn => "per-station",
            StationQueues::Fq => "fq",
            StationQueues::FqCodel => "fq-codel",
        }
    }
}

/// The value of the `voice_queue` key for `q`.
pub fn voice_key(q: VoiceQueue) -> &'static str {
    match q {
        VoiceQueue::Fifo => "fifo",
        VoiceQueue::Freshest => "freshest",
        VoiceQueue::FreshestPreempt => "freshest-preempt",
    }
}

/// One scenario of the paper's setup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coexistence {
    /// The configuration.
    pub config: Config,
    /// ACP flows.
    pub acp: usize,
    /// Bulk TCP CUBIC flows.
    pub tcp: usize,
    /// The 802.11g PHY rate (Mbit/s).
    pub wifi_mbit: f64,
    /// The ACP flows' controller.
    pub controller: ControllerKind,
    /// Update payload (bytes).
    pub payload: u32,
    /// Simulated seconds (the first tenth is warm-up, not measured).
    pub secs: u64,
    /// The seed.
    pub seed: u64,
    /// The monitor's ACKs arrive unmarked (`ack_dscp = 0`) though the updates are marked: a
    /// monitor that does not mark its replies, or a path that bleaches DSCPs. The paper does
    /// not say; by default the ACKs carry the updates' marking.
    pub unmarked_acks: bool,
    /// The TCP flows count their windows in packets (`window = "packets"`), as Linux does, so
    /// that `acp lab` runs the file with kernel CUBIC (it refuses windows in bytes). The
    /// reproductions keep the model's byte windows (false).
    pub packet_windows: bool,
    /// How the AP orders each client's frames; by default in arrival order.
    pub ap_queue: StationQueues,
    /// What the clients' voice queues keep (the `[[wifi]]` key `voice_queue`); by default every
    /// frame.
    pub voice_queue: VoiceQueue,
}

impl Coexistence {
    /// `acp` ACP flows with `controller` and `tcp` TCP flows under `config` at `wifi_mbit`: the
    /// paper's 1024-byte updates, 300 s, seed 1.
    pub fn new(
        config: Config,
        acp: usize,
        tcp: usize,
        wifi_mbit: f64,
        controller: ControllerKind,
    ) -> Coexistence {
        Coexistence {
            config,
            acp,
            tcp,
            wifi_mbit,
            controller,
            payload: PAYLOAD,
            secs: 300,
            seed: 1,
            unmarked_acks: false,
            packet_windows: false,
            ap_queue: StationQueues::InTurn,
            voice_queue: VoiceQueue::Fifo,
        }
    }

    /// WiFi clients: one under BP, one per flow otherwise.
    pub fn clients(&self) -> usize {
        if self.config.one_client() {
            1
        } else {
            self.acp + self.tcp
        }
    }

    /// The node of client `k` (from 1).
    fn client(&self, k: usize) -> String {
        if self.clients() == 1 {
            "client".into()
        } else {
            format!("client#{k}")
        }
    }

    /// Whether the ACP flows' ACKs are marked (CS7 as their updates).
    pub fn acks_marked(&self) -> bool {
        self.config.acp_dscp().is_some() && !self.unmarked_acks
    }

    /// The scenario file.
    pub fn text(&self) -> String {
        let marked = match self.config.acp_dscp() {
            None => "unmarked".to_string(),
            Some(d) if self.unmarked_acks => format!("DSCP {d}, ACKs unmarked"),
            Some(d) => format!("DSCP {d}"),
        };
        let mut queues = match self.ap_queue {
            StationQueues::InTurn => String::new(),
            StationQueues::Fq => ", fq AP".into(),
            StationQueues::FqCodel => ", fq-codel AP".into(),
        };
        let mut voice = String::new();
        if self.voice_queue != VoiceQueue::Fifo {
            let key = voice_key(self.voice_queue);
            queues += &format!(", {key} voice queues");
            voice = format!("voice_queue = \"{key}\"\n");
        }
        let mut text = format!(
            "format = 2\nname = \"{}: {} {} ({marked}) and {} CUBIC flows, {} Mbit/s 802.11g{queues}\"\n\
             seed = {}\nduration = \"{}s\"\nwarmup = \"{}s\"\n\n\
             [[wifi]]\nap = \"ap\"\nstations = \"client\"\ncount = {}\nstandard = \"g\"\n\
             rate = \"{}mbit\"\narea = [20.0, 20.0]\nshadowing = 0.0\nexponent = 3.0\n\
             access = \"edca\"\nqueue = {WIFI_QUEUE}\nap_queue = \"{}\"\n{voice}\n\
             [[link]]\nfrom = \"ap\"\nto = \"internet\"\nrate = \"{EGRESS_MBIT}mbit\"\nqueue = 1000\n\
             {AP_EGRESS_DISCIPLINE}\n\n\
             [[link]]\nfrom = \"internet\"\nto = \"server\"\nrate = \"{INTERNET_MBIT}mbit\"\n\
             delay = \"{INTERNET_DELAY_MS}ms\"\nqueue = 1000\n",
            self.config,
            self.acp,
            self.controller,
            self.tcp,
            self.wifi_mbit,
            self.seed,
            self.secs,
            self.secs / 10,
            self.clients(),
            self.wifi_mbit,
            self.ap_queue.key(),
        );
        let path =
            |first: String| format!("path = [\"{first}\", \"ap\", \"internet\", \"server\"]");
        if self.acp > 0 {
            // A replicated flow leaves replica k from client#k (one client: all from it).
            let first = if self.acp == 1 {
                self.client(1)
            } else {
                "client".into()
            };
            text += &format!(
                "\n[[flow]]\nname = \"acp\"\ncount = {}\n{}\n{}",
                self.acp,
                path(first),
                Client::Acp(self.controller).flow_fields(self.payload)
            );
            if let Some(d) = self.config.acp_dscp() {
                text += &format!("dscp = {d}\n");
                if self.unmarked_acks {
                    text += "ack_dscp = 0\n";
                }
            }
        }
        for j in 1..=self.tcp {
            let k = if self.config.one_client() {
                1
            } else {
                self.acp + j
            };
            text += &format!(
                "\n[[flow]]\nname = \"tcp{j}\"\n{}\n{}",
                path(self.client(k)),
                Client::Tcp(CcKind::Cubic).flow_fields(self.payload)
            );
            if self.packet_windows {
                text += "window = \"packets\"\n";
            }
        }
        text
    }

    /// The scenario; an error for no flows at all or a rate 802.11g does not have.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        if self.acp + self.tcp == 0 {
            return Err(ScenarioError::Invalid(
                "a coexistence scenario needs at least one ACP or TCP flow".into(),
            ));
        }
        Scenario::parse(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(config: Config, acp: usize, tcp: usize) -> Scenario {
        Coexistence::new(config, acp, tcp, 12.0, ControllerKind::AcpPlus)
            .scenario()
            .unwrap()
    }

    #[test]
    fn baseline_priority_puts_every_flow_on_one_marked_client() {
        let s = build(Config::BaselinePriority, 5, 2);
        assert_eq!(s.topology.wifi[0].stations.len(), 1);
        assert_eq!(s.flows.len(), 7);
        assert!(s.flows.iter().all(|f| f.path[0] == "client"));
        let acp: Vec<_> = s
            .flows
            .iter()
            .filter(|f| f.name.starts_with("acp"))
            .collect();
        assert_eq!(acp.len(), 5);
        assert!(acp.iter().all(|f| f.dscp == CS7));
        assert!(s
            .flows
            .iter()
            .filter(|f| f.name.starts_with("tcp"))
            .all(|f| f.dscp == 0));
    }

    #[test]
    fn the_multiaccess_configurations_give_each_flow_its_own_client() {
        for (config, dscp) in [(Config::MultiaccessPriority, CS7), (Config::BestEffort, 0)] {
            let s = build(config, 3, 2);
            assert_eq!(s.topology.wifi[0].stations.len(), 5);
            let firsts: Vec<&str> = s.flows.iter().map(|f| f.path[0].as_str()).collect();
            assert_eq!(
                firsts,
                ["client#1", "client#2", "client#3", "client#4", "client#5"]
            );
            assert_eq!(s.flows[0].dscp, dscp);
            // The ACP flows on the first clients, as `coexistence::measure` counts them.
            assert!(s.flows[..3]
                .iter()
                .all(|f| matches!(f.kind, crate::flows::FlowKind::Acp { .. })));
            assert_eq!(s.flows[4].dscp, 0);
        }
        // One ACP flow beside TCP, and TCP alone.
        let s = build(Config::MultiaccessPriority, 1, 1);
        assert_eq!(s.flows[0].path[0], "client#1");
        assert_eq!(s.flows[1].path[0], "client#2");
        let s = build(Config::BestEffort, 0, 1);
        assert_eq!(s.flows[0].path[0], "client");
    }

    #[test]
    fn unmarked_acks_leave_the_updates_marked() {
        let ack_dscps = |unmarked_acks| {
            let c = Coexistence {
                unmarked_acks,
                ..Coexistence::new(
                    Config::MultiaccessPriority,
                    2,
                    1,
                    12.0,
                    ControllerKind::Seek,
                )
            };
            let s = c.scenario().unwrap();
            assert_eq!(c.acks_marked(), !unmarked_acks);
            s.flows
                .iter()
                .map(|f| (f.dscp, f.ack_dscp()))
                .collect::<Vec<_>>()
        };
        assert_eq!(ack_dscps(false), [(CS7, CS7), (CS7, CS7), (0, 0)]);
        assert_eq!(ack_dscps(true), [(CS7, 0), (CS7, 0), (0, 0)]);
        // Out of range is refused with the field's name.
        let text = Coexistence::new(
            Config::MultiaccessPriority,
            1,
            0,
            12.0,
            ControllerKind::Seek,
        )
        .text()
        .replace("dscp = 56", "dscp = 56\nack_dscp = 64");
        let e = Scenario::parse(&text).unwrap_err().to_string();
        assert!(e.contains("ack_dscp"), "{e}");
    }

    #[test]
    fn the_fq_ap_is_the_only_difference_of_its_scenario() {
        let c = Coexistence::new(Config::BaselinePriority, 2, 1, 12.0, ControllerKind::Seek);
        let fq = Coexistence {
            ap_queue: StationQueues::Fq,
            ..c
        };
        assert_eq!(
            fq.text(),
            c.text()
                .replace("802.11g\"", "802.11g, fq AP\"")
                .replace("ap_queue = \"per-station\"", "ap_queue = \"fq\"")
        );
        assert!(fq.scenario().is_ok());
    }

    #[test]
    fn freshest_voice_queues_are_a_key_of_the_access_and_need_edca() {
        let c = Coexistence {
            voice_queue: VoiceQueue::FreshestPreempt,
            ..Coexistence::new(
                Config::MultiaccessPriority,
                2,
                1,
                12.0,
                ControllerKind::Seek,
            )
        };
        assert!(c.text().contains("voice_queue = \"freshest-preempt\"\n"));
        assert!(c.scenario().is_ok());
        let dcf = c.text().replace("access = \"edca\"", "access = \"dcf\"");
        let e = Scenario::parse(&dcf).unwrap_err().to_string();
        assert!(e.contains("EDCA"), "{e}");
        // The default writes no key: the paper's files stay as they were.
        let plain = Coexistence::new(
            Config::MultiaccessPriority,
            2,
            1,
            12.0,
            ControllerKind::Seek,
        );
        assert!(!plain.text().contains("voice_queue"));
    }

    #[test]
    fn a_scenario_without_flows_or_with_a_rate_802_11g_lacks_is_refused() {
        let none = Coexistence::new(Config::BestEffort, 0, 0, 12.0, ControllerKind::Seek);
        assert!(none.scenario().is_err());
        let bad = Coexistence::new(Config::BestEffort, 2, 0, 13.0, ControllerKind::Seek);
        let e = bad.scenario().unwrap_err().to_string();
        assert!(e.contains("rate"), "{e}");
    }
}
