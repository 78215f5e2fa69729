//! The plots the simulator commands write (PNG and SVG side by side).

use std::path::Path;

use acp_sim::plot::{Chart, Series, Style};
use acp_sim::report::SimResult;
use acp_sim::reproduce::Fig7Point;
use acp_sim::sweep::SweepPoint;

fn chart(title: &str, x: &str, y: &str, series: Vec<Series>) -> Chart {
    Chart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        series,
        ..Chart::default()
    }
}

/// Age over time of every update flow of a run: `stem.png` and `stem.svg`.
pub fn age_over_time(r: &SimResult, stem: &Path) -> anyhow::Result<()> {
    let series = r
        .flows
        .iter()
        .filter(|f| !f.age_trace.is_empty())
        .map(|f| Series {
            name: f.name.clone(),
            points: f.age_trace.iter().map(|&(t, a)| (t, a * 1e3)).collect(),
            style: Style::Line,
        })
        .collect();
    chart("Age at the receiver", "time (s)", "age (ms)", series).write_both(stem)?;
    Ok(())
}

/// Age against fixed rate from a sweep.
pub fn age_vs_rate(name: &str, points: &[SweepPoint], stem: &Path) -> anyhow::Result<()> {
    let pts: Vec<(f64, f64)> = points.iter().map(|p| (p.rate, p.age * 1e3)).collect();
    let finite: Vec<f64> = pts.iter().map(|p| p.1).filter(|a| a.is_finite()).collect();
    let best = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let mut c = chart(
        &format!("{name}: age against fixed update rate"),
        "update rate (updates/s)",
        "average age (ms)",
        vec![Series {
            name: "simulation".into(),
            points: pts,
            style: Style::Points,
        }],
    );
    // Keep the bowl visible: clip the overloaded rates' runaway ages.
    c.y_max = best.is_finite().then_some(best * 5.0);
    c.write_both(stem)?;
    Ok(())
}

/// Fig. 7: analytic curves and simulated points per system.
pub fn fig7(points: &[Fig7Point], stem: &Path) -> anyhow::Result<()> {
    let mut series = Vec::new();
    for (s, mus) in acp_sim::reproduce::fig7_systems() {
        let mine: Vec<&Fig7Point> = points.iter().filter(|p| p.system == s).collect();
        // The analytic curve on a fine grid up to the slowest server's rate.
        let slowest = mus.iter().copied().fold(f64::INFINITY, f64::min);
        series.push(Series {
            name: format!("{s} (analysis)"),
            points: (1..400)
                .map(|k| {
                    let l = slowest * k as f64 / 400.0;
                    (l, acp_sim::reproduce::chain_age(l, &mus))
                })
                .collect(),
            style: Style::Line,
        });
        series.push(Series {
            name: format!("{s} (simulation)"),
            points: mine.iter().map(|p| (p.lambda, p.simulated)).collect(),
            style: Style::Points,
        });
    }
    let mut c = chart(
        "Average age against update rate (Fig. 7a)",
        "update rate λ",
        "average age",
        series,
    );
    c.y_max = Some(20.0);
    c.write_both(stem)?;
    Ok(())
}

/// Fig. 8: per-hop backlog of updates at the oracle's rate, one line per network.
pub fn table1_backlog(rows: &[acp_sim::reproduce::Table1Row], stem: &Path) -> anyhow::Result<()> {
    let series = rows
        .iter()
        .map(|r| Series {
            name: r.network.clone(),
            points: r
                .backlog
                .iter()
                .enumerate()
                .map(|(i, b)| ((i + 1) as f64, *b))
                .collect(),
            style: Style::Line,
        })
        .collect();
    chart(
        "Backlog of updates per hop at the age-optimal rate (Fig. 8)",
        "hop",
        "average updates queued or in service",
        series,
    )
    .write_both(stem)?;
    Ok(())
}
