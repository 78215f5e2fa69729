//! `no-tcp`: the coexistence paper's §V-B (thesis §5.5.2, Figs. 5.5b and 5.7): ACP flows alone
//! on a 6 Mbit/s WiFi access ("No TCP", 5 to 80 flows, each on its own client) against ACP
//! flows beside TCP on 12 Mbit/s under Multiaccess Priority, and TCP alone on 6 Mbit/s; ACP+,
//! and Seek beside it. The network, measurements and rows are [`super::coexistence`]'s.
//!
//! The paper does not say whether its No-TCP flows were marked; without other traffic the
//! marking still matters under EDCA, since AC_VO contends with a window of 3 to 7 slots and
//! AC_BE with 15 to 1023. So the No-TCP part runs both: marked (MP) and unmarked (BE).

use acp_core::controller::ControllerKind;
use acp_netmodel::wifi::medium::VoiceQueue;

use super::coexistence::{self, controllers, Measure, Point, Row, TCP_FLOWS};
use super::coexistence_net::{Config, StationQueues};
use super::harness::{Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View};

/// The numbers of ACP flows alone on 6 Mbit/s.
pub const NO_TCP_FLOWS: [usize; 5] = [5, 10, 20, 40, 80];
/// The numbers of ACP flows beside TCP on 12 Mbit/s (the paper's Fig. 7 has 10 and 20; its
/// TCP throughputs are given beside 1, 5, 10 and 20).
pub const MP_FLOWS: [usize; 4] = [1, 5, 10, 20];
/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = coexistence::DEFAULT_SECS;

/// The reproduction.
pub struct NoTcp;

/// The points of `o`: for each controller (or `--controllers`), ACP alone on 6 Mbit/s marked
/// and unmarked (`--clients` picks the counts), TCP alone on 6 Mbit/s, and MP on 12 Mbit/s.
fn points(o: &Options) -> Vec<Point> {
    let controllers = controllers(o);
    let alone = if o.clients.is_empty() {
        NO_TCP_FLOWS.to_vec()
    } else {
        o.clients.clone()
    };
    let mut out = Vec::new();
    for &controller in &controllers {
        for config in [Config::MultiaccessPriority, Config::BestEffort] {
            for &acp in &alone {
                out.push(Point {
                    part: "no-tcp 6 Mbit/s",
                    controller,
                    config,
                    wifi_mbit: 6.0,
                    acp,
                    tcp: 0,
                    unmarked_acks: false,
                    ap_queue: StationQueues::InTurn,
                    voice_queue: VoiceQueue::Fifo,
                });
            }
        }
        for acp in MP_FLOWS {
            for tcp in TCP_FLOWS {
                out.push(Point {
                    part: "MP 12 Mbit/s",
                    controller,
                    config: Config::MultiaccessPriority,
                    wifi_mbit: 12.0,
                    acp,
                    tcp,
                    unmarked_acks: false,
                    ap_queue: StationQueues::InTurn,
                    voice_queue: VoiceQueue::Fifo,
                });
            }
        }
    }
    // TCP alone: no ACP flow, so one controller's runs are everybody's.
    for tcp in TCP_FLOWS {
        out.push(Point {
            part: "TCP alone 6 Mbit/s",
            controller: controllers
                .first()
                .copied()
                .unwrap_or(ControllerKind::AcpPlus),
            config: Config::BestEffort,
            wifi_mbit: 6.0,
            acp: 0,
            tcp,
            unmarked_acks: false,
            ap_queue: StationQueues::InTurn,
            voice_queue: VoiceQueue::Fifo,
        });
    }
    out
}

impl Declaration for NoTcp {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "no-tcp"
    }

    fn about(&self) -> &'static str {
        "ACP+ and Seek alone on a 6 Mbit/s WiFi access (5–80 flows) against ACP beside TCP on 12 Mbit/s (MP), and TCP alone (coexistence paper §V-B)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn takes_controllers(&self) -> bool {
        true
    }

    fn plan(&self, o: &Options) -> Plan {
        coexistence::plan(&points(o), o, self.default_seeds(), DEFAULT_SECS)
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        coexistence::measure_done(done)
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        coexistence::rows(&points(o), plan, done)
    }

    fn setup(&self, o: &Options) -> String {
        coexistence::setup(
            "coexistence paper §V-B: 5, 10, 20, 40, 80 ACP flows (ACP+ and Seek) alone on 6 \
             Mbit/s, each on its own client, marked CS7 (MP) and unmarked (BE); 1, 5, 10, 20 \
             ACP flows beside 1, 2, 5 TCP flows under MP on 12 Mbit/s; 1, 2, 5 TCP flows alone \
             on 6 Mbit/s",
            o,
            &o.seed_list(self.default_seeds()),
            DEFAULT_SECS,
        )
    }

    fn sources(&self) -> Vec<Source> {
        coexistence::sources()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "age, RTT, throughput and the ACP stations' MAC retries (Figs. 5b and 7)",
            &[
                "part",
                "controller",
                "config",
                "acp_flows",
                "tcp_flows",
                "est_age_ms",
                "rtt_ms",
                "acp_mbit_s",
                "tcp_mbit_s",
                "retries_pct",
            ],
        )]
    }

    fn charts(&self, o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        let mut charts = Vec::new();
        for c in controllers(o) {
            let label = c.to_string();
            let stem = label.replace('+', "_plus");
            for (field, axis) in [
                ("est_age_ms", "mean age of the ACP flows (ms)"),
                ("acp_mbit_s", "ACP sum throughput (Mbit/s)"),
                ("retries_pct", "MAC retries of the ACP stations (%)"),
            ] {
                charts.push(
                    Chart::lines(
                        format!("no_tcp_{stem}_{field}"),
                        format!("{axis}, {label}, alone on 6 Mbit/s (Figs. 5b, 7)"),
                        ("acp_flows", "ACP flows"),
                        (field, axis),
                        &["config"],
                    )
                    .only("controller", label.clone())
                    .only("part", "no-tcp 6 Mbit/s"),
                );
            }
            charts.push(
                Chart::lines(
                    format!("mp_12_{stem}_est_age_ms"),
                    format!(
                        "mean age of the ACP flows, {label}, MP beside TCP on 12 Mbit/s (Fig. 7)"
                    ),
                    ("tcp_flows", "TCP flows"),
                    ("est_age_ms", "mean age of the ACP flows (ms)"),
                    &["acp_flows"],
                )
                .only("controller", label.clone())
                .only("part", "MP 12 Mbit/s"),
            );
        }
        charts
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec!["the paper's findings beside ours:".to_string()];
        let mut controllers: Vec<&str> = rows
            .iter()
            .filter(|r| r.acp_flows > 0)
            .map(|r| r.controller.as_str())
            .collect();
        controllers.dedup();
        for c in controllers {
            let alone = |config: Config| {
                rows.iter()
                    .filter(|r| r.controller == c && r.tcp_flows == 0 && r.config == config)
                    .max_by_key(|r| r.acp_flows)
            };
            let beside = rows
                .iter()
                .filter(|r| r.controller == c && r.part == "MP 12 Mbit/s" && r.acp_flows == 20)
                .map(|r| r.est_age_ms)
                .fold(f64::NAN, f64::min);
            for config in [Config::MultiaccessPriority, Config::BestEffort] {
                if let Some(most) = alone(config) {
                    notes.push(format!(
                        "  {c}, {} ACP flows alone on 6 Mbit/s ({config}) against 20 beside TCP on 12 Mbit/s (MP): paper 327.41 ms < 252.76–358.77 ms; ours {:.1} ms, least beside TCP {:.1} ms",
                        most.acp_flows, most.est_age_ms, beside
                    ));
                }
            }
        }
        let tcp: Vec<String> = rows
            .iter()
            .filter(|r| r.acp_flows == 0)
            .map(|r| format!("{} flows {:.2}", r.tcp_flows, r.tcp_mbit_s))
            .collect();
        if !tcp.is_empty() {
            notes.push(format!(
                "  TCP alone on 6 Mbit/s (paper ≈ {} Mbit/s): {} Mbit/s",
                coexistence::paper::TCP_ALONE_6_MBIT,
                tcp.join(", ")
            ));
        }
        notes.push("differences from the paper are explained in docs/COEXISTENCE.md".into());
        notes
    }
}
