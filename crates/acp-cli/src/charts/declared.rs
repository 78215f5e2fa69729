//! A reproduction's charts as it declares them ([`Chart`]: which fields against which, the
//! series, the axes, the title), drawn from its rows by the chart functions of this module's
//! parent: lines with error bars and the papers' numbers beside them ([`versus`]), scatters,
//! grouped bars, ratios, curves over time and analytic curves with simulated points.

use std::path::Path;

use acp_sim::reproduce::harness::{Chart, Draw};
use serde_json::{Map, Value};

use super::{
    age_over_time, grouped_bars, model_curves, ratios, scatter, versus, Fig7Series, Measured,
    Published,
};

/// A field of `row` as a number (NaN if absent, null or not a number).
fn number(row: &Map<String, Value>, field: &str) -> f64 {
    row.get(field).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// The series of `chart`'s rows, in order of first appearance.
fn series_names(chart: &Chart, rows: &[Map<String, Value>]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in chart.rows(rows) {
        let n = chart.series_of(r);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// Per series, its rows' (x, y, CI) within the chart's y range.
fn measured(chart: &Chart, rows: &[Map<String, Value>], names: &[String]) -> Vec<Measured> {
    let (x, y) = (chart.x.0, chart.y.0);
    let ci = format!("{y}_ci95");
    names
        .iter()
        .map(|name| Measured {
            name: name.clone(),
            points: chart
                .rows(rows)
                .filter(|r| &chart.series_of(r) == name)
                .map(|r| (number(r, x), number(r, y), number(r, &ci)))
                .filter(|p| chart.y_max.is_none_or(|max| p.1 <= max))
                .collect(),
        })
        .collect()
}

/// Draws `chart` of `rows` into `dir` (`stem.png` and `stem.svg`); false, and nothing drawn, if
/// the chart has no row to draw (its points were not asked for, or not run).
pub fn draw(chart: &Chart, rows: &[Map<String, Value>], dir: &Path) -> anyhow::Result<bool> {
    let empty = chart.rows(rows).next().is_none();
    if empty
        && !matches!(
            chart.draw,
            Draw::OverTime(..) | Draw::Model(_) | Draw::Curves(_)
        )
    {
        return Ok(false);
    }
    draw_on(chart, rows, &dir.join(&chart.stem))?;
    Ok(true)
}

/// Draws `chart` of `rows` at `stem`.
fn draw_on(chart: &Chart, rows: &[Map<String, Value>], stem: &Path) -> anyhow::Result<()> {
    let names = series_names(chart, rows);
    let (title, x_desc, y_desc) = (&chart.title, &chart.x.1, &chart.y.1);
    match &chart.draw {
        Draw::Lines => {
            let paper = format!("paper_{}", chart.y.0);
            let published: Vec<Published> = names
                .iter()
                .enumerate()
                .filter_map(|(of, name)| {
                    let points: Vec<(f64, f64)> = chart
                        .rows(rows)
                        .filter(|r| &chart.series_of(r) == name)
                        .map(|r| (number(r, chart.x.0), number(r, &paper)))
                        .filter(|p| p.1.is_finite())
                        .collect();
                    (!points.is_empty()).then(|| Published {
                        of,
                        name: format!("{name} (paper)"),
                        points,
                    })
                })
                .collect();
            let measured = measured(chart, rows, &names);
            versus(title, x_desc, y_desc, &measured, &published, stem)
        }
        Draw::Scatter(papers) => {
            let published: Vec<Published> = papers
                .iter()
                .filter_map(|(name, x, y)| {
                    let of = names.iter().position(|n| n == name)?;
                    Some(Published {
                        of,
                        name: format!("paper: {name}"),
                        points: vec![(*x, *y)],
                    })
                })
                .collect();
            let measured = measured(chart, rows, &names);
            scatter(title, x_desc, y_desc, &measured, &published, stem)
        }
        Draw::Bars(fields) => {
            let groups: Vec<(String, Vec<f64>)> = names
                .iter()
                .filter_map(|name| {
                    let r = chart.rows(rows).find(|r| &chart.series_of(r) == name)?;
                    Some((
                        name.clone(),
                        fields.iter().map(|f| number(r, f.0)).collect(),
                    ))
                })
                .collect();
            let labels: Vec<&str> = fields.iter().map(|f| f.1).collect();
            grouped_bars(title, (x_desc, y_desc), &labels, &groups, stem)
        }
        Draw::Ratios => {
            let mut items: Vec<Value> = Vec::new();
            for r in chart.rows(rows) {
                let item = r.get(chart.x.0).cloned().unwrap_or(Value::Null);
                if !items.contains(&item) {
                    items.push(item);
                }
            }
            let series: Vec<(String, Vec<f64>)> = names
                .iter()
                .map(|name| {
                    let ratio = |item: &Value| {
                        chart
                            .rows(rows)
                            .find(|r| &chart.series_of(r) == name && r.get(chart.x.0) == Some(item))
                            .map_or(f64::NAN, |r| number(r, chart.y.0))
                    };
                    (name.clone(), items.iter().map(ratio).collect())
                })
                .collect();
            ratios(title, x_desc, &series, stem)
        }
        Draw::OverTime(traces, bands) => {
            let series: Vec<(String, Vec<(f64, f64)>)> = traces
                .iter()
                .map(|t| (t.name.clone(), t.points.clone()))
                .collect();
            age_over_time(title, y_desc, &series, 0.0, bands, stem)
        }
        Draw::Curves(traces) => {
            let measured: Vec<Measured> = traces
                .iter()
                .map(|t| Measured {
                    name: t.name.clone(),
                    points: t.points.iter().map(|&(x, y)| (x, y, 0.0)).collect(),
                })
                .collect();
            versus(title, x_desc, y_desc, &measured, &[], stem)
        }
        Draw::Model(curves) => {
            // A system per curve with the rows of its series, then one per other series.
            let simulated = |name: &str| -> Vec<(f64, f64)> {
                chart
                    .rows(rows)
                    .filter(|r| chart.series_of(r) == name)
                    .map(|r| (number(r, chart.x.0), number(r, chart.y.0)))
                    .collect()
            };
            let systems: Vec<Fig7Series> = curves
                .iter()
                .map(|c| (c.name.clone(), c.points.clone()))
                .chain(
                    names
                        .iter()
                        .filter(|n| !curves.iter().any(|c| &c.name == *n))
                        .map(|n| (n.clone(), Vec::new())),
                )
                .map(|(name, analysis)| Fig7Series {
                    simulation: simulated(&name),
                    name,
                    analysis,
                })
                .collect();
            model_curves(title, (x_desc, y_desc), chart.y_max, &systems, stem)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_sim::reproduce::harness::Trace;
    use serde_json::json;

    fn rows(values: &[Value]) -> Vec<Map<String, Value>> {
        values
            .iter()
            .map(|v| v.as_object().unwrap().clone())
            .collect()
    }

    /// Draws `chart` of `rows` in a fresh directory for `test`, checks both files (two series'
    /// colours, `texts` in the SVG) and returns the SVG.
    fn drawn(test: &str, chart: &Chart, rows: &[Value], texts: &[&str]) -> String {
        use super::super::{colour, tests, with_ext};
        let d = tests::dir(test);
        assert!(draw(chart, &self::rows(rows), &d).unwrap());
        let stem = d.join(&chart.stem);
        tests::check(&stem, &[colour(0), colour(1)], texts);
        std::fs::read_to_string(with_ext(&stem, "svg")).unwrap()
    }

    /// An analytic curve beside rows of another series (Fig. 4.8's GP theory and agg:32): the
    /// rows are drawn under the chart's own title and axes.
    #[test]
    fn a_model_chart_draws_the_rows_of_every_series_under_its_own_axes() {
        let chart = Chart::lines(
            "model",
            "Goodput against receivers",
            ("stations", "receivers"),
            ("goodput", "sum goodput (Mbit/s)"),
            &["series"],
        )
        .draw(Draw::Model(vec![Trace {
            name: "theory".into(),
            points: vec![(1.0, 540.0), (20.0, 515.0)],
        }]));
        let svg = drawn(
            "declared-model",
            &chart,
            &[
                json!({"series": "agg:32", "stations": 1, "goodput": 535.0}),
                json!({"series": "agg:32", "stations": 20, "goodput": 517.0}),
            ],
            &[
                "Goodput against receivers",
                "receivers",
                "sum goodput (Mbit/s)",
                "theory",
                "agg:32",
            ],
        );
        assert!(!svg.contains("Fig. 7a") && !svg.contains("average age"));
    }

    /// Grouped bars are labelled by the chart's axes and the fields' tick labels.
    #[test]
    fn bars_carry_the_charts_axes_and_the_fields_labels() {
        let chart = Chart::lines(
            "bars",
            "Goodput and delay",
            ("series", ""),
            ("goodput", "Mbit/s, ms"),
            &["series"],
        )
        .draw(Draw::Bars(vec![
            ("goodput", "goodput (Mbit/s)"),
            ("delay", "delay (ms)"),
        ]));
        let svg = drawn(
            "declared-bars",
            &chart,
            &[
                json!({"series": "A", "goodput": 300.0, "delay": 6.0}),
                json!({"series": "B", "goodput": 150.0, "delay": 19.0}),
            ],
            &["Mbit/s, ms", "goodput (Mbit/s)", "delay (ms)", "A", "B"],
        );
        assert!(!svg.contains("updates at the hop") && !svg.contains(">hop"));
    }
}
