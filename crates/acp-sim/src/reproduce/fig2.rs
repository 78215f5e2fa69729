//! `fig2`: the ACP+ paper's §III, Fig. 2: 536-byte updates at fixed rates over two 1 Mbit/s hops
//! with 10 % random loss, TCP (NewReno) against UDP: the time-average age at the monitor and the
//! mean delay of an update (generation to delivery to the application) against the utilisation
//! of the links. The network and what the paper leaves unstated: [`super::tcp_updates`].

use super::harness::{Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View};
use super::tcp_updates::{
    self, jobs, minimum, Measure, Row, Series, Transport, CHART_CAP_MS, DEFAULT_SECS,
};

/// The update payload (bytes).
pub const PAYLOAD: u32 = 536;
/// The loss probability of the second hop.
pub const LOSS: f64 = 0.1;

/// The curves.
const SERIES: [Series; 2] = [
    ("TCP", Transport::Tcp { nodelay: false }, PAYLOAD),
    ("UDP", Transport::Udp, PAYLOAD),
];

/// The paper's numbers (§III text; the figure's curves are not given as numbers).
pub mod paper {
    /// TCP's minimum time-average age (ms) and the utilisation where it is.
    pub const TCP_MIN: (f64, f64) = (180.0, 0.2);
    /// UDP's minimum age (ms), "≈ 0.01 s", and where, "≈ 0.8".
    pub const UDP_MIN: (f64, f64) = (10.0, 0.8);
}

/// The paper's age of `series` at `utilisation` (ms): its minima.
fn published(series: &str, utilisation: f64) -> Option<f64> {
    let (age, at) = match series {
        "TCP" => paper::TCP_MIN,
        "UDP" => paper::UDP_MIN,
        _ => return None,
    };
    ((utilisation - at).abs() < 1e-9).then_some(age)
}

/// The reproduction.
pub struct Fig2;

impl Declaration for Fig2 {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "fig2"
    }

    fn about(&self) -> &'static str {
        "Status updates over TCP (NewReno) and UDP, two 1 Mbit/s hops, 10 % loss: age and delay against utilisation (§III, Fig. 2)"
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        Plan {
            jobs: jobs(&SERIES, LOSS, secs, &o.seed_list(self.default_seeds())),
        }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => tcp_updates::measure(r, PAYLOAD),
            _ => unreachable!("fig2 runs in the simulator only"),
        }
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        tcp_updates::rows(&SERIES, plan, done, published)
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "Fig. 2: 536-byte updates over TCP (NewReno) and UDP, two 1 Mbit/s hops, 10 % loss; \
             {} s per run, {} seed(s); mean ± 95 % CI",
            o.secs.unwrap_or(DEFAULT_SECS),
            o.seed_list(self.default_seeds()).len()
        )
    }

    fn sources(&self) -> Vec<Source> {
        vec![Source {
            column: "paper_age_ms",
            locator: "ACP+ paper §III (TCP's minimum ≈ 180 ms at utilisation 0.2, UDP's ≈ 10 ms at ≈ 0.8)",
        }]
    }

    fn views(&self) -> Vec<View> {
        vec![tcp_updates::view()]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        let x = ("utilisation", "utilisation of the 1 Mbit/s links");
        vec![
            Chart::lines(
                "fig2_age",
                "Age of 536-byte updates, 10 % loss, two 1 Mbit/s hops (Fig. 2)",
                x,
                ("age_ms", "time-average age (ms; above 1 s not drawn)"),
                &["series"],
            )
            .y_max(CHART_CAP_MS),
            Chart::lines(
                "fig2_delay",
                "Delay of 536-byte updates, 10 % loss, two 1 Mbit/s hops (Fig. 2)",
                x,
                (
                    "delay_ms",
                    "mean delay, generation to delivery (ms; above 1 s not drawn)",
                ),
                &["series"],
            )
            .y_max(CHART_CAP_MS),
        ]
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec!["minimum age: ours [paper]".to_string()];
        for (series, (age, at)) in [("TCP", paper::TCP_MIN), ("UDP", paper::UDP_MIN)] {
            if let Some(p) = minimum(rows, series) {
                notes.push(format!(
                    "{series}: {:.1} ms at utilisation {:.2} [{age:.0} ms at ≈ {at}]",
                    p.age_ms, p.utilisation
                ));
            }
        }
        notes
    }
}
