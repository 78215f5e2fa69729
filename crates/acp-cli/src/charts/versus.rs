//! A measured quantity against a count (e.g. the average age against the number of sources):
//! each [`Measured`] series a line with filled markers and vertical 95 % error bars, and the
//! [`Published`] numbers it is compared with beside it, hollow squares joined by a dashed line
//! in the same colour. [`scatter`] draws the same without the lines: runs as points (e.g. each
//! run's (delay, age)), a series per protocol.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    axes, clip_polyline, colour, dashed_polyline, entry, extent, frame, from_zero, hollow_square,
    inside, polyline, write_both, DrawResult, Entry, Figure, Lines, Symbol, XTicks,
};

/// One measured series of a chart against a count (e.g. number of sources): (x, mean, 95 % CI
/// half-width).
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// The series' legend entry.
    pub name: String,
    /// (x, mean, 95 % confidence half-width, 0 or not finite if unknown). Points with a mean
    /// or x that is not finite are left out.
    pub points: Vec<(f64, f64, f64)>,
}

/// Published numbers drawn beside a measured series: `of` is the index of the measured series
/// they belong to (same colour).
#[derive(Clone, Debug, Default)]
pub struct Published {
    /// The index in `measured` of the series these numbers are compared with.
    pub of: usize,
    /// Their legend entry (e.g. "thesis, Fig. 5.3").
    pub name: String,
    /// (x, value); points that are not finite are left out.
    pub points: Vec<(f64, f64)>,
}

/// `measured` as lines with filled markers and vertical 95 % error bars, `published` as hollow
/// squares joined by a dashed line in the colour of the series they belong to; y axis from
/// zero; x axis `x_desc`, y axis `y_desc`.
pub fn versus(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    measured: &[Measured],
    published: &[Published],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &Versus {
            title,
            x_desc,
            y_desc,
            measured,
            published,
            joined: true,
        },
        stem,
    )
}

/// As [`versus`], with no lines: each point stands alone.
pub fn scatter(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    measured: &[Measured],
    published: &[Published],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &Versus {
            title,
            x_desc,
            y_desc,
            measured,
            published,
            joined: false,
        },
        stem,
    )
}

/// Dash and gap of a published series' line, in pixels.
const DASH: (f64, f64) = (9.0, 6.0);

struct Versus<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    measured: &'a [Measured],
    published: &'a [Published],
    /// Points joined by lines (a curve) or not (a scatter).
    joined: bool,
}

/// A measured series' finite points, by x: (x, mean, half-width or 0).
fn measured_points(m: &Measured) -> Vec<(f64, f64, f64)> {
    let mut points: Vec<(f64, f64, f64)> = m
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(x, mean, ci)| (x, mean, if ci.is_finite() { ci.abs() } else { 0.0 }))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// A published series' finite points, by x.
fn published_points(p: &Published) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = p
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .copied()
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

impl Figure for Versus<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: Lines,
    ) -> DrawResult<DB> {
        let measured: Vec<Vec<(f64, f64, f64)>> =
            self.measured.iter().map(measured_points).collect();
        let published: Vec<Vec<(f64, f64)>> = self.published.iter().map(published_points).collect();

        // x: the points with a margin, so that no marker sits on the plot's edge; from 0 if
        // that leaves the first marker clear of the y axis, or if there is only one x > 0 (a
        // count's axis then keeps whole-number ticks).
        let xs = || {
            let m = measured.iter().flatten().map(|p| p.0);
            m.chain(published.iter().flatten().map(|p| p.0))
        };
        let x = match extent(xs()) {
            None => (0.0, 1.0),
            Some((lo, hi)) => {
                let pad = if hi > lo {
                    (hi - lo) * 0.05
                } else {
                    lo.abs() * 0.1 + 1.0
                };
                let x0 = if (hi == lo && lo > 0.0) || (lo - pad < 0.0 && lo >= pad / 2.0) {
                    0.0
                } else {
                    lo - pad
                };
                (x0, hi + pad)
            }
        };
        // y: from zero to a little above the highest error bar or published number.
        let lows = measured.iter().flatten().map(|p| p.1 - p.2);
        let highs = measured.iter().flatten().map(|p| p.1 + p.2);
        let pub_ys = published.iter().flatten().map(|p| p.1);
        let y = match extent(lows.chain(highs).chain(pub_ys)) {
            None => (0.0, 1.0),
            Some((lo, hi)) => from_zero(lo, hi, 1.1),
        };

        let mut legend: Vec<Entry> = self
            .measured
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let symbol = if self.joined {
                    Symbol::LineAndMarker(colour(i))
                } else {
                    Symbol::Marker(colour(i))
                };
                entry(m.name.clone(), symbol)
            })
            .collect();
        legend.extend(
            self.published
                .iter()
                .map(|p| entry(p.name.clone(), Symbol::Published(colour(p.of)))),
        );
        let plot = frame(root, self.title, &legend)?;
        let mut chart = axes(&plot, (x, y), (self.x_desc, self.y_desc), XTicks::Numbers)?;

        // Lines first, then error bars, then markers, the published squares last: hollow, they
        // frame a measured marker at the same place rather than hide it.
        for (i, points) in measured.iter().enumerate().filter(|_| self.joined) {
            let line: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
            for piece in clip_polyline(&line, x, y) {
                polyline(root, &chart, &piece, colour(i).stroke_width(2), lines)?;
            }
        }
        for (p, points) in self
            .published
            .iter()
            .zip(&published)
            .filter(|_| self.joined)
        {
            for piece in clip_polyline(points, x, y) {
                let style = colour(p.of).stroke_width(2);
                dashed_polyline(root, &chart, &piece, DASH, style, lines)?;
            }
        }
        for (i, points) in measured.iter().enumerate() {
            let c = colour(i);
            chart.draw_series(
                points
                    .iter()
                    .filter(|p| p.2 > 0.0 && inside((p.0, p.1), x, y))
                    .map(|&(px, mean, ci)| {
                        ErrorBar::new_vertical(
                            px,
                            (mean - ci).max(y.0),
                            mean,
                            (mean + ci).min(y.1),
                            c.filled().stroke_width(2),
                            10,
                        )
                    }),
            )?;
            chart.draw_series(
                points
                    .iter()
                    .filter(|p| inside((p.0, p.1), x, y))
                    .map(|p| Circle::new((p.0, p.1), 5, c.filled())),
            )?;
        }
        let origin = root.get_base_pixel();
        for (p, points) in self.published.iter().zip(&published) {
            for &q in points.iter().filter(|q| inside(**q, x, y)) {
                let (px, py) = chart.backend_coord(&q);
                hollow_square(root, (px - origin.0, py - origin.1), colour(p.of))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, dir, png_pixels};
    use super::super::with_ext;
    use super::*;

    fn sources() -> Vec<Measured> {
        ["ACP", "lazy"]
            .iter()
            .enumerate()
            .map(|(i, name)| Measured {
                name: name.to_string(),
                points: [1.0, 6.0, 12.0, 24.0, 48.0]
                    .iter()
                    .map(|&n| (n, 40.0 + (i + 1) as f64 * 3.0 * n, 2.0 + 0.1 * n))
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn versus_draws_measured_and_published_series() {
        let d = dir("versus");
        let stem = d.join("versus");
        let published = vec![Published {
            of: 1,
            name: "lazy, thesis Fig. 5.3".into(),
            points: vec![(1.0, 45.0), (6.0, 70.0), (12.0, 105.0), (48.0, 330.0)],
        }];
        versus(
            "Average age against the number of sources",
            "number of sources",
            "average age (ms)",
            &sources(),
            &published,
            &stem,
        )
        .unwrap();
        check(
            &stem,
            &[colour(0), colour(1)],
            &[
                "Average age against the number of sources",
                "number of sources",
                "average age (ms)",
                "ACP",
                "lazy",
                "lazy, thesis Fig. 5.3",
            ],
        );
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        let c = colour(1);
        let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        // The published series: 4 hollow squares and the legend's, 4 rectangles each.
        let rects = svg
            .split('<')
            .filter(|e| e.starts_with("rect ") && e.contains(&format!(r#"fill="{hex}""#)))
            .count();
        assert_eq!(rects, 5 * 4, "edges of hollow squares in {hex}");
        // Its dashed line: many short paths in its colour (the measured line is one path).
        let paths = svg
            .split('<')
            .filter(|e| e.starts_with("polyline ") && e.contains(&format!(r#"stroke="{hex}""#)))
            .count();
        assert!(paths > 20, "{paths} dashes and lines in {hex}");
        // Five error bars (bar and two caps) per measured series.
        for i in 0..2 {
            let c = colour(i);
            let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            let bars = svg
                .split('<')
                .filter(|e| e.starts_with("line ") && e.contains(&hex))
                .count();
            assert_eq!(bars, 5 * 3, "error bars in {hex}");
        }
    }

    #[test]
    fn versus_survives_empty_odd_and_single_inputs() {
        let d = dir("versus-odd");
        // Nothing at all: axes and title only.
        let stem = d.join("empty");
        versus("Nothing", "n", "age (ms)", &[], &[], &stem).unwrap();
        check(&stem, &[], &["Nothing", "n", "age (ms)"]);
        // Series without a finite point, a published series of a missing measured one.
        let stem = d.join("odd");
        let measured = vec![
            Measured {
                name: "empty".into(),
                points: vec![],
            },
            Measured {
                name: "broken".into(),
                points: vec![
                    (f64::NAN, 1.0, 0.1),
                    (2.0, f64::INFINITY, 0.1),
                    (3.0, 5.0, f64::NAN),
                    (4.0, 6.0, f64::INFINITY),
                ],
            },
        ];
        let published = vec![Published {
            of: 7,
            name: "elsewhere".into(),
            points: vec![(f64::NEG_INFINITY, 3.0), (5.0, f64::NAN)],
        }];
        versus("Odd", "n", "age (ms)", &measured, &published, &stem).unwrap();
        check(&stem, &[colour(1)], &["empty", "broken", "elsewhere"]);
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        // A single point of each.
        let stem = d.join("single");
        let measured = vec![Measured {
            name: "one".into(),
            points: vec![(12.0, 80.0, 5.0)],
        }];
        let published = vec![Published {
            of: 0,
            name: "one, published".into(),
            points: vec![(12.0, 90.0)],
        }];
        versus("Single", "n", "age (ms)", &measured, &published, &stem).unwrap();
        check(&stem, &[colour(0)], &["one", "one, published"]);
    }

    #[test]
    fn published_points_are_the_highest_on_the_axis_with_headroom() {
        let d = dir("versus-top");
        let stem = d.join("top");
        let published = vec![Published {
            of: 0,
            name: "published".into(),
            points: vec![(1.0, 1000.0)],
        }];
        versus("Top", "n", "age (ms)", &sources(), &published, &stem).unwrap();
        // The square is the highest thing in its colour left of the legend: near the top of
        // the plot (which starts some 62 pixels down, under the title) but not on its edge.
        let pixels = png_pixels(&with_ext(&stem, "png"));
        let c = colour(0);
        let w = super::super::SIZE.0 as usize;
        let highest = pixels
            .chunks(w)
            .position(|row| row[100..700].contains(&[c.0, c.1, c.2]))
            .unwrap();
        assert!(
            (75..200).contains(&highest),
            "highest in {c:?}: row {highest}"
        );
    }
}
