//! `fig4`: the ACP+ paper's §III, Fig. 4: no loss, 500-byte against 536-byte updates over TCP
//! (536 bytes is the minimum SMSS, the segment size): age against utilisation, with Nagle's
//! algorithm (Linux's default) and with TCP_NODELAY, and each curve's congestion window over the
//! first seconds at one utilisation (the first seed). The network: [`super::tcp_updates`].

use super::harness::{Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View};
use super::tcp_updates::{
    self, jobs, scenario, Measure as PointMeasure, Row, Series, Transport, CHART_CAP_MS,
    DEFAULT_SECS, SMSS,
};

/// The congestion-window traces: this utilisation, over this many seconds.
pub const TRACE: (f64, u64) = (0.5, 20);

/// The curves: both payloads, Nagle on and off.
const SERIES: [Series; 4] = [
    ("500 B, Nagle", Transport::Tcp { nodelay: false }, 500),
    ("536 B, Nagle", Transport::Tcp { nodelay: false }, 536),
    ("500 B, nodelay", Transport::Tcp { nodelay: true }, 500),
    ("536 B, nodelay", Transport::Tcp { nodelay: true }, 536),
];

/// A job's measurement: a point's run, or a congestion-window trace.
#[derive(Debug, Clone)]
pub enum Measure {
    /// A run of the sweep.
    Point(PointMeasure),
    /// `(t s, window in segments of SMSS)`.
    Cwnd(Vec<(f64, f64)>),
}

/// The first point of the traces (after the sweep's).
const TRACES: usize = SERIES.len() * 19;

/// The reproduction.
pub struct Fig4;

impl Declaration for Fig4 {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "fig4"
    }

    fn about(&self) -> &'static str {
        "500- against 536-byte updates over TCP without loss, Nagle on and off: age against utilisation and the congestion window (§III, Fig. 4)"
    }

    fn plan(&self, o: &Options) -> Plan {
        let seeds = o.seed_list(self.default_seeds());
        let mut jobs = jobs(&SERIES, 0.0, o.secs.unwrap_or(DEFAULT_SECS), &seeds);
        let (u, secs) = TRACE;
        let seed = seeds.first().copied().unwrap_or(1);
        for (s, &(_, transport, payload)) in SERIES.iter().enumerate() {
            let sc = scenario(transport, payload, u, 0.0, secs, seed, 10 * secs as usize);
            jobs.push(Job::sim(TRACES + s, sc));
        }
        Plan { jobs }
    }

    fn measure(&self, job: &Job, done: Done<'_>) -> Measure {
        let Done::Sim(r) = done else {
            unreachable!("fig4 runs in the simulator only")
        };
        if job.point >= TRACES {
            let trace = r.flows.first().and_then(|f| f.tcp.as_ref());
            let smss = f64::from(SMSS);
            return Measure::Cwnd(
                trace
                    .map(|t| t.cwnd_trace.iter().map(|&(t, w)| (t, w / smss)).collect())
                    .unwrap_or_default(),
            );
        }
        Measure::Point(tcp_updates::measure(r, SERIES[job.point / 19].2))
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let points: Vec<Option<PointMeasure>> = done
            .iter()
            .map(|m| match m {
                Some(Measure::Point(p)) => Some(*p),
                _ => None,
            })
            .collect();
        tcp_updates::rows(&SERIES, plan, &points, |_, _| None)
    }

    fn traces(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Trace> {
        plan.jobs
            .iter()
            .zip(done)
            .filter_map(|(job, m)| match m {
                Some(Measure::Cwnd(points)) => Some(Trace {
                    name: SERIES[job.point - TRACES].0.into(),
                    points: points.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "Fig. 4: 500- and 536-byte updates over TCP (NewReno, SMSS 536), two 1 Mbit/s hops, \
             no loss; {} s per run, {} seed(s); mean ± 95 % CI",
            o.secs.unwrap_or(DEFAULT_SECS),
            o.seed_list(self.default_seeds()).len()
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![tcp_updates::view()]
    }

    fn charts(&self, _o: &Options, traces: &[Trace]) -> Vec<Chart> {
        let (u, _) = TRACE;
        vec![
            Chart::lines(
                "fig4_age",
                "Age of 500- and 536-byte updates over TCP, no loss (Fig. 4)",
                ("utilisation", "utilisation of the 1 Mbit/s links"),
                ("age_ms", "time-average age (ms; above 1 s not drawn)"),
                &["series"],
            )
            .y_max(CHART_CAP_MS),
            Chart::lines(
                "fig4_cwnd",
                format!("Congestion window at utilisation {u} (Fig. 4)"),
                ("t_s", "time (s)"),
                ("cwnd", "congestion window (segments of 536 bytes)"),
                &[],
            )
            .draw(Draw::Curves(traces.to_vec())),
        ]
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec![
            "age of 500-byte updates over 536-byte ones, at the same utilisation:".to_string(),
        ];
        for how in ["Nagle", "nodelay"] {
            let ratios: Vec<f64> = rows
                .iter()
                .filter(|p| p.series == format!("500 B, {how}"))
                .filter_map(|small| {
                    rows.iter()
                        .find(|p| {
                            p.series == format!("536 B, {how}")
                                && (p.utilisation - small.utilisation).abs() < 1e-9
                        })
                        .map(|full| small.age_ms / full.age_ms)
                })
                .filter(|r| r.is_finite())
                .collect();
            let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
                (lo.min(r), hi.max(r))
            });
            notes.push(format!(
                "{how:>8}: ×{lo:.2} to ×{hi:.2} (paper: 500-byte updates have the higher age)"
            ));
        }
        notes
    }
}
