//! `acp reproduce fig7|table1`: the paper's results, a table on stdout and a plot or CSV on disk.

use std::path::Path;

use acp_sim::reproduce;
use anyhow::Context;
use serde_json::json;

use crate::{ReproduceArgs, Reproduction};

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs one reproduction.
pub fn run(a: ReproduceArgs) -> anyhow::Result<()> {
    let dir = a.out.join(match a.which {
        Reproduction::Fig7 => "fig7",
        Reproduction::Table1 => "table1",
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    match a.which {
        Reproduction::Fig7 => fig7(&dir, a.updates, a.seed, a.json),
        Reproduction::Table1 => table1(&dir, a.secs, a.seed, a.json),
    }
}

fn fig7(dir: &Path, updates: u64, seed: u64, json_out: bool) -> anyhow::Result<()> {
    let points = reproduce::fig7(12, updates, seed, threads());
    let mut csv = String::from("system,lambda,analytic,simulated,error_pct\n");
    for p in &points {
        csv += &format!(
            "{},{},{},{},{}\n",
            p.system,
            p.lambda,
            p.analytic,
            p.simulated,
            (p.simulated / p.analytic - 1.0) * 100.0
        );
    }
    std::fs::write(dir.join("fig7.csv"), csv)?;
    let systems: Vec<_> = reproduce::fig7_systems()
        .into_iter()
        .map(|(name, mus)| {
            // The analytic curve on a fine grid up to the slowest server's rate.
            let slowest = mus.iter().copied().fold(f64::INFINITY, f64::min);
            let analysis = (1..400)
                .map(|k| slowest * k as f64 / 400.0)
                .map(|l| (l, reproduce::chain_age(l, &mus)))
                .collect();
            let simulation = points.iter().filter(|p| p.system == name);
            let simulation = simulation.map(|p| (p.lambda, p.simulated)).collect();
            crate::charts::Fig7Series {
                name,
                analysis,
                simulation,
            }
        })
        .collect();
    crate::charts::fig7(&systems, &dir.join("fig7"))?;
    if json_out {
        let rows: Vec<_> = points
            .iter()
            .map(|p| json!({"system": p.system, "lambda": p.lambda, "analytic": p.analytic, "simulated": p.simulated}))
            .collect();
        println!("{}", json!({ "fig7": rows }));
    } else {
        println!(
            "Fig. 7a: average age against λ ({updates} simulated updates per point, seed {seed})"
        );
        println!(
            "{:<16} {:>8} {:>10} {:>10} {:>8}",
            "system", "lambda", "analytic", "simulated", "error%"
        );
        for p in &points {
            println!(
                "{:<16} {:>8.4} {:>10.4} {:>10.4} {:>+8.2}",
                p.system,
                p.lambda,
                p.analytic,
                p.simulated,
                (p.simulated / p.analytic - 1.0) * 100.0
            );
        }
        println!(
            "wrote {0}/fig7.png, {0}/fig7.svg, {0}/fig7.csv",
            dir.display()
        );
    }
    Ok(())
}

fn table1(dir: &Path, secs: u64, seed: u64, json_out: bool) -> anyhow::Result<()> {
    let rows = reproduce::table1(secs, seed, threads(), &|done, total| {
        if !json_out {
            eprintln!("table1: {done}/{total} networks done");
        }
    });
    let mut csv = String::from(
        "network,oracle_rate,oracle_age_ms,b1,b2,b3,b4,b5,b6,acp+_ratio,acp0.25_ratio,lazy_ratio\n",
    );
    for r in &rows {
        let b: Vec<String> = r.backlog.iter().map(|x| format!("{x:.4}")).collect();
        let c: Vec<String> = r
            .controllers
            .iter()
            .map(|(_, ratio, _)| format!("{ratio:.4}"))
            .collect();
        csv += &format!(
            "{},{:.3},{:.4},{},{}\n",
            r.network,
            r.oracle_rate,
            r.oracle_age * 1e3,
            b.join(","),
            c.join(",")
        );
    }
    std::fs::write(dir.join("table1.csv"), csv)?;
    let backlog: Vec<_> = rows
        .iter()
        .map(|r| (r.network.clone(), r.backlog.clone()))
        .collect();
    crate::charts::backlog_per_hop(
        "Backlog of updates per hop at the age-optimal rate (Fig. 8)",
        &backlog,
        &dir.join("fig8_backlog"),
    )?;
    if json_out {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"network": r.network, "oracle_rate": r.oracle_rate, "oracle_age": r.oracle_age,
                       "backlog": r.backlog,
                       "controllers": r.controllers.iter().map(|(c, ratio, age)| json!({"controller": c, "age": age, "ratio": ratio})).collect::<Vec<_>>()})
            })
            .collect();
        println!("{}", json!({ "table1": out }));
        return Ok(());
    }
    println!("Table I networks, {secs} s per run (10 % warm-up), 0.2 Mbit/s Poisson other traffic per hop, seed {seed}");
    println!("\nbacklog of updates per hop at the oracle's rate (Fig. 8):");
    println!(
        "{:<6} {:>9} {:>9}  {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "net", "λ* (/s)", "age (ms)", "hop1", "hop2", "hop3", "hop4", "hop5", "hop6"
    );
    for r in &rows {
        let b: Vec<String> = r.backlog.iter().map(|x| format!("{x:>6.3}")).collect();
        println!(
            "{:<6} {:>9.2} {:>9.2}  {}",
            r.network,
            r.oracle_rate,
            r.oracle_age * 1e3,
            b.join(" ")
        );
    }
    println!("\nage as a ratio to the oracle's:");
    println!(
        "{:<6} {:>10} {:>10} {:>10}",
        "net", "acp+", "acp:0.25", "lazy"
    );
    for r in &rows {
        let c: Vec<String> = r
            .controllers
            .iter()
            .map(|(_, ratio, _)| format!("{ratio:>10.3}"))
            .collect();
        println!("{:<6} {}", r.network, c.join(" "));
    }
    println!(
        "wrote {0}/table1.csv, {0}/fig8_backlog.png, {0}/fig8_backlog.svg",
        dir.display()
    );
    Ok(())
}
