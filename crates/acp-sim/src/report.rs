//! Results of a run, as JSON or CSV.

use serde::Serialize;

/// Average number of one flow's updates at one link (queued or in service): the backlog of the
/// paper's Fig. 8.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HopBacklog {
    /// "from→to".
    pub link: String,
    /// Time-average number of the flow's updates there.
    pub backlog: f64,
}

/// One flow's measurements (over the measurement window after warm-up unless stated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowResult {
    /// Its label.
    pub name: String,
    /// `acp`, `updates` or `cross`.
    pub kind: String,
    /// The ACP controller, if any.
    pub controller: Option<String>,
    /// True time-average age at the receiver (s).
    pub age: Option<f64>,
    /// The ACP source's time-average estimated age over the whole run (s).
    pub est_age: Option<f64>,
    /// The ACP source's RTT̄ at the end (s).
    pub rtt: Option<f64>,
    /// The ACP source's time-average estimated backlog over the whole run.
    pub source_backlog: Option<f64>,
    /// The ACP source's rate at the end (updates/s).
    pub final_rate: Option<f64>,
    /// Fresh updates (cross traffic: packets) delivered per second.
    pub rate: f64,
    /// Bits per second of fresh updates (cross traffic: packets) delivered.
    pub throughput_bps: f64,
    /// Updates (packets) sent over the whole run.
    pub sent: u64,
    /// Fresh updates (packets) delivered over the whole run.
    pub delivered: u64,
    /// Updates dropped by full queues over the whole run.
    pub dropped: u64,
    /// Backlog at each link of the flow's route.
    pub backlog: Vec<HopBacklog>,
    /// (time, time-average age over the interval ending then) at `trace_points` intervals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub age_trace: Vec<(f64, f64)>,
}

/// One link's counters over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkResult {
    /// "from→to".
    pub link: String,
    /// Packets admitted.
    pub enqueued: u64,
    /// Packets dropped.
    pub dropped: u64,
    /// Fraction of the run the link was sending.
    pub utilisation: f64,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    /// The seed.
    pub seed: u64,
    /// Simulated seconds.
    pub duration: f64,
    /// Warm-up seconds excluded from measurements.
    pub warmup: f64,
    /// Events processed.
    pub events: u64,
    /// Per flow.
    pub flows: Vec<FlowResult>,
    /// Per link.
    pub links: Vec<LinkResult>,
}

fn opt(v: Option<f64>, scale: f64) -> String {
    v.map_or_else(String::new, |x| format!("{:.6}", x * scale))
}

impl SimResult {
    /// The result as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// One CSV row per flow (times in ms).
    pub fn flows_csv(&self) -> String {
        let mut out = String::from(
            "flow,kind,controller,age_ms,est_age_ms,rtt_ms,source_backlog,rate_hz,throughput_bps,sent,delivered,dropped\n",
        );
        for f in &self.flows {
            out += &format!(
                "{},{},{},{},{},{},{},{:.6},{:.3},{},{},{}\n",
                f.name,
                f.kind,
                f.controller.clone().unwrap_or_default(),
                opt(f.age, 1e3),
                opt(f.est_age, 1e3),
                opt(f.rtt, 1e3),
                opt(f.source_backlog, 1.0),
                f.rate,
                f.throughput_bps,
                f.sent,
                f.delivered,
                f.dropped
            );
        }
        out
    }

    /// One CSV row per (flow, link) backlog.
    pub fn backlog_csv(&self) -> String {
        let mut out = String::from("flow,link,backlog\n");
        for f in &self.flows {
            for h in &f.backlog {
                out += &format!("{},{},{:.6}\n", f.name, h.link, h.backlog);
            }
        }
        out
    }

    /// A human-readable table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<14} {:<8} {:<10} {:>10} {:>10} {:>9} {:>9} {:>10} {:>8}\n",
            "flow",
            "kind",
            "controller",
            "age_ms",
            "est_age_ms",
            "rtt_ms",
            "rate_hz",
            "thrpt_kbps",
            "dropped"
        );
        let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{:.3}", x * 1e3));
        for f in &self.flows {
            out += &format!(
                "{:<14} {:<8} {:<10} {:>10} {:>10} {:>9} {:>9.2} {:>10.1} {:>8}\n",
                f.name,
                f.kind,
                f.controller.clone().unwrap_or_else(|| "-".into()),
                ms(f.age),
                ms(f.est_age),
                ms(f.rtt),
                f.rate,
                f.throughput_bps / 1e3,
                f.dropped
            );
        }
        out
    }
}
