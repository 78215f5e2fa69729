//! `acp estimator train`: generates labelled receive traces in the simulator, trains the
//! aggregation-level (frame-boundary) estimator and the bottleneck-location classifier, writes
//! the model file `acp monitor --aggregation-model` reads, and prints held-out metrics
//! (docs/AGGREGATION.md, "Estimators").

use std::path::PathBuf;

use acp_sim::estimator::train::{train, TrainConfig, TrainReport};
use clap::{Args, Subcommand};

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
    /// Send rates of the bottleneck traces (Mbit/s).
    #[arg(
        long,
        value_name = "MBPS,MBPS",
        value_delimiter = ',',
        default_value = "100,200,300,400,500,600"
    )]
    bottleneck_rates: Vec<f64>,
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
        bottleneck_rates_mbps: a.bottleneck_rates,
        bottleneck_packets: a.bottleneck_packets,
        seed: a.seed,
        ..TrainConfig::default()
    };
    config.validate().map_err(UsageError)?;
    let (model, report) = train(&config).map_err(anyhow::Error::msg)?;
    model.save(&a.out).map_err(anyhow::Error::msg)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", text(&report, &config))?;
    }
    eprintln!("model written to {}", a.out.display());
    Ok(())
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
    s
}
