//! Ratios to a reference per numbered item (e.g. each controller's age over the oracle's, per
//! scenario of the evaluation suite): a marker per series and item, the series side by side
//! around each item's number, a dashed line at 1 (the reference), and the y axis cut at
//! [`RATIO_TOP`] with the ratios beyond it drawn as triangles on the top edge.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    axes, colour, dashed_polyline, entry, extent, frame, write_both, DrawResult, Entry, Figure,
    Lines, Symbol, XTicks, GREY,
};

/// Where the y axis of [`ratios`] stops at most.
pub const RATIO_TOP: f64 = 4.0;

/// `series` holds (name, ratio of item 1, 2, …); each ratio is drawn at its item's number,
/// shifted a little per series. Ratios that are not finite are left out.
pub fn ratios(
    title: &str,
    x_desc: &str,
    series: &[(String, Vec<f64>)],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &Ratios {
            title,
            x_desc,
            series,
        },
        stem,
    )
}

struct Ratios<'a> {
    title: &'a str,
    x_desc: &'a str,
    series: &'a [(String, Vec<f64>)],
}

impl Figure for Ratios<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: Lines,
    ) -> DrawResult<DB> {
        let items = self
            .series
            .iter()
            .map(|s| s.1.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let finite = || {
            self.series
                .iter()
                .flat_map(|s| s.1.iter().copied())
                .filter(|r| r.is_finite())
        };
        let (lo, hi) = extent(finite()).unwrap_or((1.0, 1.0));
        let y = (
            (lo.min(1.0) - 0.05).max(0.0),
            (hi.max(1.0) * 1.05).min(RATIO_TOP),
        );
        let x = (0.5, items as f64 + 0.5);
        let beyond = finite().any(|r| r > y.1);

        let mut legend: Vec<Entry> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| entry(name.clone(), Symbol::Marker(colour(i))))
            .collect();
        legend.push(entry("reference (ratio 1)", Symbol::Line(GREY)));
        if beyond {
            legend.push(entry(
                format!("beyond {RATIO_TOP}"),
                Symbol::Beyond(colour(0)),
            ));
        }
        let plot = frame(root, self.title, &legend)?;
        let mut chart = axes(
            &plot,
            (x, y),
            (self.x_desc, "age / oracle's age"),
            // Whole numbers only; at most a dozen of them.
            XTicks::Items(items.min(12)),
        )?;
        dashed_polyline(
            root,
            &chart,
            &[(x.0, 1.0), (x.1, 1.0)],
            (8.0, 5.0),
            GREY.stroke_width(2),
            lines,
        )?;

        let k = self.series.len().max(1) as f64;
        let width = 0.6;
        for (i, (_, ratios)) in self.series.iter().enumerate() {
            let c = colour(i);
            let shift = if k > 1.0 {
                -width / 2.0 + width * i as f64 / (k - 1.0)
            } else {
                0.0
            };
            let at = |item: usize| (item + 1) as f64 + shift;
            let shown = ratios.iter().enumerate().filter(|(_, r)| r.is_finite());
            chart.draw_series(
                shown
                    .clone()
                    .filter(|(_, &r)| r <= y.1)
                    .map(|(item, &r)| Circle::new((at(item), r), 4, c.filled())),
            )?;
            chart.draw_series(shown.filter(|(_, &r)| r > y.1).map(|(item, _)| {
                EmptyElement::at((at(item), y.1)) + TriangleMarker::new((0, 8), 6, c.filled())
            }))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, dir};
    use super::*;

    #[test]
    fn ratios_draw_every_series_and_the_reference() {
        let d = dir("ratios");
        let stem = d.join("ratios");
        let series = vec![
            ("acp+".to_string(), vec![1.0, 1.2, 2.0, f64::NAN]),
            ("lazy".to_string(), vec![1.5, 1.7, 9.0, 1.1]),
        ];
        ratios("age over the oracle's", "scenario", &series, &stem).unwrap();
        check(
            &stem,
            &[colour(0), colour(1)],
            &["acp+", "lazy", "scenario", "beyond 4"],
        );
    }
}
