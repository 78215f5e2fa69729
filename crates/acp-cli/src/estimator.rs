//! `acp estimator train`: generates labelled receive traces in the simulator, trains the
//! aggregation-level (frame-boundary) estimator and the bottleneck-location classifier, writes
//! the model file `acp monitor --aggregation-model` reads, and prints held-out metrics
//! (docs/AGGREGATION.md, "Estimators").

use std::path::PathBuf;

use acp_sim::estimator::napi::NapiNoise;
use acp_sim::estimator::train::{train, NpRow, TrainConfig, TrainReport};
use clap::{Args, Subcommand};

use crate::charts::Measured;
use crate::output::{out, outln};
use crate::UsageError;

#[derive(Debug, Subcommand)]
pub enum EstimatorCommand {
    /// Generate training data in the simulator, train, write the model file, print metrics.
    Train(TrainArgs),
}

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Write the model (JSON) here.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Seed of the traces (training and held-out sets both follow from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Send rates of the frame-boundary traces (Mbit/s).
    #[arg(
        long,
        value_name = "MBPS,MBPS",
        value_delimiter = ',',
        default_value = "100,200,300,400,500,600"
    )]
    rates: Vec<f64>,
    /// Packets per frame-boundary trace (each of the training and held-out sets).
    #[arg(long, default_value_t = 20_000)]
    packets: usize,
    /// Inter-arrival times per packet of the model written (the thesis's m = 20).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1000))]
    m: u64,
    /// The m values of the F1-against-m table (Fig. 4.12(a)).
    #[arg(
        long,
        value_name = "M,M",
        value_delimiter = ',',
        default_value = "1,2,5,10,20,40"
    )]
    sweep: Vec<usize>,
    /// Training samples of each RBF SVM (0: no SVM column).
    #[arg(long, default_value_t = 2_000)]
    svm_samples: usize,
    /// Fit the frame-boundary estimator on raw inter-arrival times (µs), as scikit-learn's
    /// default does, instead of standardised ones.
    #[arg(long)]
    raw_features: bool,
    /// Multiply every delay of the timestamp-noise model (interrupt latency, per-packet cost,
    /// yield and preemption pauses) by this.
    #[arg(long, default_value_t = 1.0)]
    noise_scale: f64,
    /// Seconds per send rate of the slot-level SVM's traces (§4.4.2; each set; 0: none).
    #[arg(long, default_value_t = 3.0)]
    level_secs: f64,
    /// Send rates of the bottleneck traces (Mbit/s).
    #[arg(
        long,
        value_name = "MBPS,MBPS",
        value_delimiter = ',',
        default_value = "100,200,300,400,500,600"
    )]
    bottleneck_rates: Vec<f64>,
    /// The n values of the bottleneck classifier's sweep (Fig. 4.17; with --p-sweep).
    #[arg(
        long,
        value_name = "N,N",
        value_delimiter = ',',
        default_value = "1,2,5,10,20"
    )]
    n_sweep: Vec<usize>,
    /// The p values of that sweep (packets of the loss fraction).
    #[arg(
        long,
        value_name = "P,P",
        value_delimiter = ',',
        default_value = "10,50,100,200,500"
    )]
    p_sweep: Vec<usize>,
    /// Write the sweep as CSV (n, p, f1, accuracy) here.
    #[arg(long, value_name = "FILE")]
    sweep_csv: Option<PathBuf>,
    /// Draw the sweep as Fig. 4.17 draws it, F1 against p with a line per n, into STEM.png and
    /// STEM.svg.
    #[arg(long, value_name = "STEM")]
    sweep_chart: Option<PathBuf>,
    /// Packets per bottleneck trace.
    #[arg(long, default_value_t = 20_000)]
    bottleneck_packets: usize,
    /// Print the metrics as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(command: EstimatorCommand) -> anyhow::Result<()> {
    let EstimatorCommand::Train(a) = command;
    let config = TrainConfig {
        rates_mbps: a.rates,
        packets: a.packets,
        m: a.m as usize,
        sweep: a.sweep,
        svm_samples: a.svm_samples,
        level_secs: a.level_secs,
        standardise: !a.raw_features,
        noise: NapiNoise::default().scaled(a.noise_scale),
        bottleneck_rates_mbps: a.bottleneck_rates,
        bottleneck_packets: a.bottleneck_packets,
        n_sweep: a.n_sweep,
        p_sweep: a.p_sweep,
        seed: a.seed,
        ..TrainConfig::default()
    };
    config.validate().map_err(UsageError)?;
    let (model, report) = train(&config).map_err(anyhow::Error::msg)?;
    model.save(&a.out).map_err(anyhow::Error::msg)?;
    if let Some(path) = &a.sweep_csv {
        let mut csv = String::from("n,p,f1,accuracy\n");
        for row in &report.np_sweep {
            csv += &format!("{},{},{},{}\n", row.n, row.p, row.f1, row.accuracy);
        }
        std::fs::write(path, csv)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(stem) = &a.sweep_chart {
        sweep_chart(&report.np_sweep, stem)?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", text(&report, &config))?;
    }
    eprintln!("model written to {}", a.out.display());
    Ok(())
}

/// Fig. 4.17: the bottleneck classifier's held-out F1 against the packets p of its loss
/// fraction, one line per number n of frames' levels. The thesis plots no numbers we could put
/// beside ours, only its finding (above 0.9 for every n and p), which the title states.
fn sweep_chart(rows: &[NpRow], stem: &std::path::Path) -> anyhow::Result<()> {
    let mut ns: Vec<usize> = rows.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let measured: Vec<Measured> = ns
        .iter()
        .map(|&n| Measured {
            name: format!("n = {n}"),
            points: rows
                .iter()
                .filter(|r| r.n == n)
                .map(|r| (r.p as f64, r.f1, f64::NAN))
                .collect(),
        })
        .collect();
    crate::charts::versus(
        "Bottleneck location: F1 against n and p (Fig. 4.17; thesis: above 0.9 for all)",
        "packets p of the loss fraction",
        "held-out F1, class backhaul",
        &measured,
        &[],
        stem,
    )
}

fn text(r: &TrainReport, c: &TrainConfig) -> String {
    let mut s = String::new();
    let mut line = |l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    line(format!(
        "Frame boundaries: held-out F1 of the label \"first packet of a frame\" (seed {})",
        c.seed
    ));
    line("| m | logistic + σ | logistic | RBF SVM + σ |".into());
    line("|---|---|---|---|".into());
    for row in &r.f1_vs_m {
        let svm = row.svm_sigma.map_or("—".into(), |f| format!("{f:.3}"));
        line(format!(
            "| {} | {:.3} | {:.3} | {svm} |",
            row.m, row.logistic_sigma, row.logistic
        ));
    }
    line(String::new());
    line(format!(
        "Per send rate, m = {} with σ against the threshold on the last inter-arrival time",
        c.m
    ));
    line(
        "| rate (Mbit/s) | F1 | F1 threshold | level (MAC) | level estimated | level threshold |"
            .into(),
    );
    line("|---|---|---|---|---|---|".into());
    for row in &r.per_rate {
        line(format!(
            "| {} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} |",
            row.rate_mbps,
            row.f1,
            row.f1_threshold,
            row.level,
            row.level_model,
            row.level_threshold
        ));
    }
    line(format!(
        "all rates: F1 {:.3}, threshold {:.3}",
        r.f1, r.f1_threshold
    ));
    if !r.level_svm.is_empty() {
        line(String::new());
        line(
            "Slot levels (100 ms, §4.4.2): RMSE of the logistic estimator's slot means and of \
             the RBF SVM regression on them (d = 5), held out"
                .into(),
        );
        line("| rate (Mbit/s) | slots | level (MAC) | RMSE logistic | RMSE SVM |".into());
        line("|---|---|---|---|---|".into());
        for row in &r.level_svm {
            line(format!(
                "| {} | {} | {:.1} | {:.2} | {:.2} |",
                row.rate_mbps, row.slots, row.level, row.rmse_logistic, row.rmse_svm
            ));
        }
    }
    line(String::new());
    line(format!(
        "Bottleneck location (n = {}, p = {}), held out",
        c.n, c.p
    ));
    line("| scenario | rate (Mbit/s) | level | loss | accuracy |".into());
    line("|---|---|---|---|---|".into());
    for row in &r.scenarios {
        line(format!(
            "| {} | {} | {:.1} | {:.3} | {:.3} |",
            row.scenario, row.rate_mbps, row.level, row.loss, row.accuracy
        ));
    }
    line(format!(
        "all scenarios: accuracy {:.3}, F1 (backhaul) {:.3}; always the larger class: {:.3}",
        r.bottleneck.accuracy(),
        r.bottleneck.f1(),
        r.bottleneck_baseline_accuracy
    ));
    if !r.np_sweep.is_empty() {
        line(String::new());
        line("Bottleneck location against n and p (Fig. 4.17): held-out F1 (accuracy)".into());
        let ps: Vec<usize> = c.p_sweep.clone();
        line(format!(
            "| n \\ p | {} |",
            ps.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        line(format!("|---|{}", "---|".repeat(ps.len())));
        for n in &c.n_sweep {
            let cells: Vec<String> = r
                .np_sweep
                .iter()
                .filter(|row| row.n == *n)
                .map(|row| format!("{:.3} ({:.3})", row.f1, row.accuracy))
                .collect();
            line(format!("| {n} | {} |", cells.join(" | ")));
        }
    }
    s
}
