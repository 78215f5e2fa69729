//! The charts the simulator commands write, drawn with the [`plotters`] crate: every chart is
//! written twice, as `stem.png` (plotters' bitmap backend) and `stem.svg` (its SVG backend).
//!
//! - [`age_over_time`]: each update flow's age at the receiver against time, the warm-up shaded
//!   grey and any [`Band`]s (e.g. when other traffic was on) rose, darker for more load;
//! - [`age_vs_rate`]: a sweep's mean age against the fixed update rate, with confidence
//!   intervals and the optimum marked;
//! - [`model_curves`]: analytic curves and simulated points per system (the paper's Fig. 7a);
//! - [`grouped_bars`]: grouped bars, e.g. the paper's Fig. 8 (the backlog of updates per hop);
//! - [`versus`](mod@versus): [`Measured`] series with 95 % confidence intervals against a count (e.g. the
//!   number of sources), with [`Published`] numbers beside them;
//! - [`ratios`](mod@ratios): ratios to a reference per numbered item (each controller's age over
//!   the oracle's, per scenario of the evaluation suite), a dashed line at 1;
//! - [`draw`]: a reproduction's chart as it declares it, drawn with the functions above.
//!
//! The functions take plain numbers, not the simulator's result types, so they do not change
//! when those do. Text is measured and drawn with the DejaVu Sans subset bundled in `assets/`
//! (registered with plotters' `ab_glyph` feature; in the PNGs each glyph is placed by
//! [`typeset`]): no system font or fontconfig is needed, and a chart renders the same on every
//! machine. The subset has Latin-1 (µ, ², ÷), Greek (λ, μ, κ, Δ), arrows (→) and the minus
//! sign (−). The SVGs name the family `sans-serif`, so viewers use their own sans-serif font.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Context};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod declared;
mod ratios;
mod versus;
pub use declared::draw;
pub use ratios::*;
pub use versus::*;

/// Pixel size of every chart.
pub const SIZE: (u32, u32) = (1000, 640);

/// The family name the bundled font is registered under.
const FONT: &str = "sans-serif";
const FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");

/// Okabe–Ito's colour-blind-safe palette (its yellow left out: too pale on white).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermilion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
];
const GREY: RGBColor = RGBColor(0x60, 0x60, 0x60);
/// The colour of an age-over-time chart's [`Band`]s.
const ROSE: RGBColor = RGBColor(0xE0, 0x40, 0x70);
const MESH_BOLD: RGBColor = RGBColor(0xD8, 0xD8, 0xD8);
const MESH_LIGHT: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);

// Text sizes in plotters' unit (the em is size / 1.24 pixels).
const TITLE: f64 = 28.0;
const DESC: f64 = 21.0;
const TICK: f64 = 18.0;
const LEGEND: f64 = 19.0;
const NOTE: f64 = 19.0;

/// The `i`-th series' colour: the palette, then darker and then lighter shades of it, so that
/// up to 21 series stay distinguishable.
fn colour(i: usize) -> RGBColor {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    let towards = |c: u8, target: f64| (f64::from(c) + (target - f64::from(c)) * 0.45) as u8;
    match (i / PALETTE.len()) % 3 {
        0 => RGBColor(r, g, b),
        1 => RGBColor(towards(r, 0.0), towards(g, 0.0), towards(b, 0.0)),
        _ => RGBColor(towards(r, 255.0), towards(g, 255.0), towards(b, 255.0)),
    }
}

/// One system of Fig. 7: its analytic curve and its simulated points, (λ, age) in units of
/// 1/μ.
#[derive(Clone, Debug, Default)]
pub struct Fig7Series {
    /// The system, e.g. "M/M/1 μ=1".
    pub name: String,
    /// The analytic curve (drawn as a line).
    pub analysis: Vec<(f64, f64)>,
    /// The simulated points (drawn as markers of the curve's colour).
    pub simulation: Vec<(f64, f64)>,
}

/// A shaded interval of an age-over-time chart (e.g. when other traffic was on): bands with the
/// same label share one legend entry (the first one's shade), and a band with an empty label has
/// none; darker means more.
pub use acp_sim::reproduce::harness::Band;

/// Age at the receiver (or another quantity, named by `y_desc`) against time, one line per
/// flow: `series` holds (name, [(t s, age ms)]). The first `warmup_s` seconds (not measured)
/// are shaded and marked "warm-up"; each of `bands` is shaded under the lines (clipped to the
/// time axis) and named in the legend.
pub fn age_over_time(
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    warmup_s: f64,
    bands: &[Band],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &AgeOverTime {
            title,
            y_desc,
            series,
            warmup_s,
            bands,
        },
        stem,
    )
}

/// Mean age against fixed update rate: `points` holds (rate /s, mean age ms, 95 % confidence
/// half-width ms or 0 if unknown), `best` the optimum (rate /s, age ms). The y axis stops at
/// 5× the best age so that the bowl stays visible; ages beyond are drawn as triangles on the
/// top edge.
pub fn age_vs_rate(
    title: &str,
    points: &[(f64, f64, f64)],
    best: Option<(f64, f64)>,
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &AgeVsRate {
            title,
            points,
            best,
        },
        stem,
    )
}

/// Analytic curves with simulated points (e.g. the paper's Fig. 7a, average age against update
/// rate): an analytic curve and simulated points per system in the same colour (a system may
/// have only one of them); the y axis from zero to `y_max`, or to above the highest point.
pub fn model_curves(
    title: &str,
    (x_desc, y_desc): (&str, &str),
    y_max: Option<f64>,
    systems: &[Fig7Series],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &Fig7 {
            title,
            x_desc,
            y_desc,
            y_max,
            systems,
        },
        stem,
    )
}

/// Grouped bars (e.g. Fig. 8's backlog of updates per hop): `series` holds (name, [value in
/// group 1, group 2, …]), drawn as one group of bars per label of `groups` along the x axis
/// and one bar per series in each.
pub fn grouped_bars(
    title: &str,
    (x_desc, y_desc): (&str, &str),
    groups: &[&str],
    series: &[(String, Vec<f64>)],
    stem: &Path,
) -> anyhow::Result<()> {
    write_both(
        &GroupedBars {
            title,
            x_desc,
            y_desc,
            groups,
            series,
        },
        stem,
    )
}

// ---------------------------------------------------------------------------------------------
// Rendering to both backends

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart that can draw itself on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: Lines,
    ) -> DrawResult<DB>;
}

/// How thick polylines are drawn.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lines {
    /// One path per line (SVG: the viewer joins segments properly).
    Paths,
    /// One path per segment. plotters' bitmap backend joins the segments of a thick path with
    /// unbounded miters, so the sharp corners of an age sawtooth shoot spikes across the whole
    /// image; separate segments have no joins.
    Segments,
}

/// Registers the bundled font with plotters, once per process.
fn register_font() -> anyhow::Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the bundled chart font does not parse"))
    }
}

/// `stem` with `.ext` appended (not replacing anything after a dot in the stem).
fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = OsString::from(stem.as_os_str());
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

fn write_both(figure: &impl Figure, stem: &Path) -> anyhow::Result<()> {
    register_font()?;
    let png = with_ext(stem, "png");
    {
        let root = typeset::Typeset(BitMapBackend::new(&png, SIZE)).into_drawing_area();
        figure
            .draw(&root, Lines::Segments)
            .with_context(|| format!("cannot draw {}", png.display()))?;
        root.present()
            .with_context(|| format!("cannot write {}", png.display()))?;
    }
    let svg = with_ext(stem, "svg");
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    figure
        .draw(&root, Lines::Paths)
        .with_context(|| format!("cannot draw {}", svg.display()))?;
    root.present()
        .with_context(|| format!("cannot write {}", svg.display()))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Text in the PNGs

/// Text in the PNGs: plotters' bitmap backend with each glyph placed by ab_glyph.
mod typeset {
    use std::sync::OnceLock;

    use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont as _};
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, VPos};
    use plotters_backend::{
        BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
    };

    use super::FONT_BYTES;

    /// The bitmap backend with its text set by ab_glyph directly. plotters 0.3.7's own `ab_glyph`
    /// text drawing drops each glyph's left side bearing and truncates the pen to whole pixels,
    /// which spaces digits visibly unevenly ("0.5 00"); here glyphs sit at their exact (sub-pixel)
    /// positions with kerning. Sizes follow plotters' convention (and its SVG output): the em is
    /// `size / 1.24` pixels. Everything else is plotters' bitmap backend unchanged.
    pub(super) struct Typeset<'a>(pub BitMapBackend<'a>);

    fn bundled_font() -> &'static FontRef<'static> {
        static PARSED: OnceLock<FontRef<'static>> = OnceLock::new();
        // The same bytes parsed for `register_font` before any chart is drawn.
        PARSED.get_or_init(|| FontRef::try_from_slice(FONT_BYTES).expect("bundled font parses"))
    }

    /// One line of text laid out from its box's top-left corner: each glyph positioned on the
    /// baseline, and the box's size.
    fn layout(text: &str, size: f64) -> (Vec<ab_glyph::Glyph>, (f32, f32)) {
        let font = bundled_font();
        let em = size as f32 / 1.24;
        let scale =
            PxScale::from(em * font.height_unscaled() / font.units_per_em().unwrap_or(2048.0));
        let scaled = font.as_scaled(scale);
        let baseline = scaled.ascent();
        let mut pen = 0.0f32;
        let mut prev = None;
        let mut glyphs = Vec::with_capacity(text.len());
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, ab_glyph::point(pen, baseline)));
            pen += scaled.h_advance(id);
            prev = Some(id);
        }
        (glyphs, (pen, scaled.ascent() - scaled.descent()))
    }

    type BitMapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    impl DrawingBackend for Typeset<'_> {
        type ErrorType = BitMapError;

        fn get_size(&self) -> (u32, u32) {
            self.0.get_size()
        }
        fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.ensure_prepared()
        }
        fn present(&mut self) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.present()
        }
        fn draw_pixel(
            &mut self,
            p: BackendCoord,
            c: BackendColor,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.draw_pixel(p, c)
        }
        fn draw_line<S: BackendStyle>(
            &mut self,
            from: BackendCoord,
            to: BackendCoord,
            style: &S,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.draw_line(from, to, style)
        }
        fn draw_rect<S: BackendStyle>(
            &mut self,
            a: BackendCoord,
            b: BackendCoord,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.draw_rect(a, b, style, fill)
        }
        fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            path: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.draw_path(path, style)
        }
        fn draw_circle<S: BackendStyle>(
            &mut self,
            centre: BackendCoord,
            radius: u32,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.draw_circle(centre, radius, style, fill)
        }
        fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            vertices: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.fill_polygon(vertices, style)
        }
        fn blit_bitmap(
            &mut self,
            pos: BackendCoord,
            size: (u32, u32),
            src: &[u8],
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            self.0.blit_bitmap(pos, size, src)
        }

        fn estimate_text_size<S: BackendTextStyle>(
            &self,
            text: &str,
            style: &S,
        ) -> Result<(u32, u32), DrawingErrorKind<BitMapError>> {
            let (_, (w, h)) = layout(text, style.size());
            Ok((w.ceil() as u32, h.ceil() as u32))
        }

        fn draw_text<S: BackendTextStyle>(
            &mut self,
            text: &str,
            style: &S,
            pos: BackendCoord,
        ) -> Result<(), DrawingErrorKind<BitMapError>> {
            let colour = style.color();
            if colour.alpha == 0.0 {
                return Ok(());
            }
            let (glyphs, (w, h)) = layout(text, style.size());
            // The box's top-left corner relative to the anchor, before rotation.
            let dx = match style.anchor().h_pos {
                HPos::Left => 0.0,
                HPos::Center => -w / 2.0,
                HPos::Right => -w,
            };
            let dy = match style.anchor().v_pos {
                VPos::Top => 0.0,
                VPos::Center => -h / 2.0,
                VPos::Bottom => -h,
            };
            let (dx, dy) = (dx.round() as i32, dy.round() as i32);
            let turn = style.transform();
            let mut pixels = Vec::new();
            for g in glyphs {
                if let Some(outline) = bundled_font().outline_glyph(g) {
                    let min = outline.px_bounds().min;
                    outline.draw(|x, y, coverage| {
                        if coverage > 0.0 {
                            let (x, y) =
                                (min.x as i32 + x as i32 + dx, min.y as i32 + y as i32 + dy);
                            let (x, y) = turn.transform(x, y);
                            pixels.push(((pos.0 + x, pos.1 + y), coverage.min(1.0)));
                        }
                    });
                }
            }
            for (p, coverage) in pixels {
                let c = BackendColor {
                    alpha: colour.alpha * coverage as f64,
                    rgb: colour.rgb,
                };
                self.0.draw_pixel(p, c)?;
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Shared layout: title, legend column, axes

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Symbol {
    Line(RGBColor),
    Marker(RGBColor),
    LineAndMarker(RGBColor),
    Bar(RGBColor),
    /// A shaded interval, filled with its style: the warm-up's [`band_style`] or a [`Band`]'s
    /// [`band_fill`].
    Band(ShapeStyle),
    /// Published numbers: a hollow square on a dashed line.
    Published(RGBColor),
    /// The optimum's ring.
    Ring(RGBColor),
    /// A point beyond the top of the axis.
    Beyond(RGBColor),
}

struct Entry {
    name: String,
    symbol: Symbol,
}

fn entry(name: impl Into<String>, symbol: Symbol) -> Entry {
    Entry {
        name: name.into(),
        symbol,
    }
}

fn text_style(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// Fills the background, draws the title and the legend (a column on the right, so that it
/// never hides data) and returns the area left for the plot.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend: &[Entry],
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let title_style = text_style(TITLE).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw_text(title, &title_style, (w as i32 / 2, 14))?;
    let (_, body) = root.split_vertically(52);
    if legend.is_empty() {
        return Ok(body);
    }
    let style = text_style(LEGEND);
    let max_text = (w as i32) * 2 / 5 - 60;
    let mut names = Vec::new();
    let mut widest = 0;
    for e in legend {
        let name = fit(&body, &e.name, &style, max_text)?;
        widest = widest.max(body.estimate_text_size(&name, &style)?.0 as i32);
        names.push(name);
    }
    let panel = widest + 70;
    let (plot, side) = body.split_horizontally(w as i32 - panel);
    let row = 26;
    let top = 28;
    side.draw(&Rectangle::new(
        [
            (4, top - 13),
            (panel - 14, top + row * legend.len() as i32 - 13),
        ],
        MESH_BOLD.stroke_width(1),
    ))?;
    for (i, (e, name)) in legend.iter().zip(&names).enumerate() {
        let y = top + i as i32 * row;
        draw_symbol(&side, e.symbol, (12, 38), y)?;
        let s = style.pos(Pos::new(HPos::Left, VPos::Center));
        side.draw_text(name, &s, (46, y))?;
    }
    Ok(plot)
}

/// `name`, shortened with an ellipsis if it is wider than `max` pixels.
fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    style: &TextStyle,
    max: i32,
) -> Result<String, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chars: Vec<char> = name.chars().collect();
    let mut s = name.to_string();
    while chars.len() > 1 && area.estimate_text_size(&s, style)?.0 as i32 > max {
        chars.pop();
        s = chars.iter().collect::<String>() + "…";
    }
    Ok(s)
}

/// A legend entry's symbol between `x0` and `x1` on the row at `y`.
fn draw_symbol<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    symbol: Symbol,
    (x0, x1): (i32, i32),
    y: i32,
) -> DrawResult<DB> {
    let mid = (x0 + x1) / 2;
    match symbol {
        Symbol::Line(c) => area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(3))),
        Symbol::Marker(c) => area.draw(&Circle::new((mid, y), 5, c.filled())),
        Symbol::LineAndMarker(c) => {
            area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2)))?;
            area.draw(&Circle::new((mid, y), 5, c.filled()))
        }
        Symbol::Bar(c) => area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], c.filled())),
        Symbol::Band(style) => area.draw(&Rectangle::new([(x0, y - 8), (x1, y + 8)], style)),
        Symbol::Published(c) => {
            for dash in dashes(&[(x0, y), (x1, y)], 6.0, 4.0) {
                area.draw(&PathElement::new(dash, c.stroke_width(2)))?;
            }
            hollow_square(area, (mid, y), c)
        }
        Symbol::Ring(c) => area.draw(&Circle::new((mid, y), 8, c.stroke_width(3))),
        Symbol::Beyond(c) => area.draw(&TriangleMarker::new((mid, y), 6, c.filled())),
    }
}

/// The warm-up's shading.
fn band_style() -> ShapeStyle {
    GREY.mix(0.15).filled()
}

/// A [`Band`]'s shading: rose, more opaque the larger `shade` (clamped to [0, 1]; a shade that
/// is not a number counts as 1).
fn band_fill(shade: f64) -> ShapeStyle {
    let shade = if shade.is_nan() {
        1.0
    } else {
        shade.clamp(0.0, 1.0)
    };
    ROSE.mix(0.12 + 0.3 * shade).filled()
}

/// Half the side of a hollow square marker, in pixels, and its border's width.
const SQUARE: (i32, i32) = (6, 2);

/// A hollow square marker centred on the pixel `(x, y)` of `area`: four filled rectangles, so
/// that its corners are square on every backend.
fn hollow_square<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    c: RGBColor,
) -> DrawResult<DB> {
    let (h, b) = SQUARE;
    let style = c.filled();
    for edge in [
        [(x - h, y - h), (x + h, y - h + b - 1)],
        [(x - h, y + h - b + 1), (x + h, y + h)],
        [(x - h, y - h), (x - h + b - 1, y + h)],
        [(x + h - b + 1, y - h), (x + h, y + h)],
    ] {
        area.draw(&Rectangle::new(edge, style))?;
    }
    Ok(())
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The x axis's ticks.
#[derive(Clone, Copy)]
enum XTicks<'a> {
    /// Round numbers, with grid lines.
    Numbers,
    /// One labelled tick per item 1, …, n and no grid lines (the bars are the grid).
    Items(usize),
    /// One tick per label, at 1, …, n, and no grid lines.
    Labels(&'a [&'a str]),
}

/// A chart with light grid lines and labelled axes over `x` × `y`.
fn axes<'a, DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    (x, y): ((f64, f64), (f64, f64)),
    (x_desc, y_desc): (&str, &str),
    x_ticks: XTicks<'_>,
) -> Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chart = ChartBuilder::on(plot)
        .margin_top(10)
        .margin_left(16)
        .margin_right(26)
        .margin_bottom(10)
        .x_label_area_size(64)
        .y_label_area_size(92)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(text_style(DESC))
        .label_style(text_style(TICK))
        .bold_line_style(MESH_BOLD)
        .light_line_style(MESH_LIGHT)
        .y_labels(8)
        .y_label_formatter(&|v| tick(*v));
    // A label tick's text: the label at whole positions 1, …, n.
    let labels = match x_ticks {
        XTicks::Labels(labels) => labels,
        _ => &[],
    };
    let label_of = |v: &f64| match labels.get((v.round() as usize).wrapping_sub(1)) {
        Some(l) if (v - v.round()).abs() < 1e-6 => l.to_string(),
        _ => String::new(),
    };
    match x_ticks {
        XTicks::Numbers => mesh.x_labels(10).x_label_formatter(&|v| tick(*v)),
        // Steps of 1 are the finest that give at most `n` labels: one per hop.
        XTicks::Items(n) => mesh
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|v| format!("{}", v.round() as i64)),
        XTicks::Labels(labels) => mesh
            .disable_x_mesh()
            .x_labels(labels.len())
            .x_label_formatter(&label_of),
    };
    mesh.draw()?;
    Ok(chart)
}

/// A tick label: no trailing zeros, a real minus sign.
fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let mut s = format!("{v:.6}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    s.replace('-', "−")
}

/// A number with three or four significant digits.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The smallest and largest finite value, if any.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A range from 0 (or below, for negative data) to a little above `hi`, never empty.
fn from_zero(lo: f64, hi: f64, headroom: f64) -> (f64, f64) {
    let lo = lo.min(0.0);
    let hi = if hi > lo { hi } else { lo + 1.0 };
    (lo, lo + (hi - lo) * headroom)
}

/// Draws a line through `points` (inside the chart's ranges) on the chart's pixels, skipping
/// points that fall on the same pixel as the one before (plotters' bitmap backend turns a
/// zero-length thick segment into a polygon reaching the image's corner).
fn polyline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    points: &[(f64, f64)],
    style: ShapeStyle,
    lines: Lines,
) -> DrawResult<DB> {
    stroke(root, root_pixels(root, chart, points), style, lines)
}

/// [`polyline`] dashed: `on` pixels drawn, `off` pixels left out, the pattern running on
/// around corners.
fn dashed_polyline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    points: &[(f64, f64)],
    (on, off): (f64, f64),
    style: ShapeStyle,
    lines: Lines,
) -> DrawResult<DB> {
    for dash in dashes(&root_pixels(root, chart, points), on, off) {
        stroke(root, dash, style, lines)?;
    }
    Ok(())
}

/// The pixels of `points` relative to `root`, repeats of the same pixel dropped.
fn root_pixels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    points: &[(f64, f64)],
) -> Vec<(i32, i32)> {
    let origin = root.get_base_pixel();
    let mut pixels: Vec<(i32, i32)> = Vec::with_capacity(points.len());
    for p in points {
        let (x, y) = chart.backend_coord(p);
        let q = (x - origin.0, y - origin.1);
        if pixels.last() != Some(&q) {
            pixels.push(q);
        }
    }
    pixels
}

/// The dashes of the line through `pixels`: pieces `on` pixels long with gaps of `off`, the
/// first starting at the first pixel. Each piece has at least two pixels and no repeats.
fn dashes(pixels: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let Some(&first) = pixels.first() else {
        return Vec::new();
    };
    let f = |p: (i32, i32)| (f64::from(p.0), f64::from(p.1));
    let (on, off) = (on.max(1.0), off.max(1.0));
    let mut drawing = true;
    let mut left = on; // Of the current dash or gap.
    let mut current = vec![f(first)];
    for pair in pixels.windows(2) {
        let (a, b) = (f(pair[0]), f(pair[1]));
        let len = (b.0 - a.0).hypot(b.1 - a.1);
        let mut done = 0.0;
        while len - done > left {
            done += left;
            let p = (
                a.0 + (b.0 - a.0) * done / len,
                a.1 + (b.1 - a.1) * done / len,
            );
            if drawing {
                current.push(p);
                pieces.push(std::mem::take(&mut current));
            } else {
                current = vec![p];
            }
            drawing = !drawing;
            left = if drawing { on } else { off };
        }
        left -= len - done;
        if drawing {
            current.push(b);
        }
    }
    if drawing {
        pieces.push(current);
    }
    pieces
        .into_iter()
        .map(|piece| {
            let mut px: Vec<(i32, i32)> = Vec::with_capacity(piece.len());
            for (x, y) in piece {
                let q = (x.round() as i32, y.round() as i32);
                if px.last() != Some(&q) {
                    px.push(q);
                }
            }
            px
        })
        .filter(|px| px.len() > 1)
        .collect()
}

/// Draws the line through `pixels` (relative to `root`, no repeats) as [`Lines`] says.
fn stroke<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pixels: Vec<(i32, i32)>,
    style: ShapeStyle,
    lines: Lines,
) -> DrawResult<DB> {
    match lines {
        Lines::Paths if pixels.len() > 1 => root.draw(&PathElement::new(pixels, style)),
        Lines::Paths => Ok(()),
        Lines::Segments => {
            for pair in pixels.windows(2) {
                root.draw(&PathElement::new(pair.to_vec(), style))?;
            }
            Ok(())
        }
    }
}

/// `v` rounded up to two significant digits if that moves it by less than 2 % (so that an
/// axis ending at 119.97 s ends at the round 120 and gets its last tick).
fn nice_ceil(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return v;
    }
    let unit = 10f64.powf(v.log10().floor() - 1.0);
    let up = (v / unit).ceil() * unit;
    if up - v < 0.02 * v {
        up
    } else {
        v
    }
}

/// The parts of a polyline inside the box `x` × `y` (non-finite points break the line).
fn clip_polyline(points: &[(f64, f64)], x: (f64, f64), y: (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let clipped = if finite(&a) && finite(&b) {
            clip_segment(a, b, x, y)
        } else {
            None
        };
        match clipped {
            Some((p, q)) => {
                if current.last() != Some(&p) {
                    if current.len() > 1 {
                        pieces.push(std::mem::take(&mut current));
                    }
                    current = vec![p];
                }
                current.push(q);
            }
            None => {
                if current.len() > 1 {
                    pieces.push(std::mem::take(&mut current));
                }
                current.clear();
            }
        }
    }
    if current.len() > 1 {
        pieces.push(current);
    }
    pieces
}

/// Liang–Barsky: the part of the segment a→b inside the box, if any.
fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    x: (f64, f64),
    y: (f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - x.0),
        (dx, x.1 - a.0),
        (-dy, a.1 - y.0),
        (dy, y.1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| {
        if t == 0.0 {
            a
        } else if t == 1.0 {
            b
        } else {
            (a.0 + t * dx, a.1 + t * dy)
        }
    };
    Some((at(t0), at(t1)))
}

fn inside(p: (f64, f64), x: (f64, f64), y: (f64, f64)) -> bool {
    p.0 >= x.0 && p.0 <= x.1 && p.1 >= y.0 && p.1 <= y.1
}

// ---------------------------------------------------------------------------------------------
// The charts

struct AgeOverTime<'a> {
    title: &'a str,
    y_desc: &'a str,
    series: &'a [(String, Vec<(f64, f64)>)],
    warmup_s: f64,
    bands: &'a [Band],
}

impl Figure for AgeOverTime<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: Lines,
    ) -> DrawResult<DB> {
        let all = || self.series.iter().flat_map(|(_, p)| p.iter());
        let (t0, t1) = extent(all().map(|p| p.0)).unwrap_or((0.0, 1.0));
        let t1 = t1.max(self.warmup_s);
        let x = (
            t0.min(0.0),
            if t1 > t0.min(0.0) { nice_ceil(t1) } else { 1.0 },
        );
        let (a0, a1) = extent(all().map(|p| p.1)).unwrap_or((0.0, 1.0));
        // Room above the highest peak for the warm-up label.
        let y = from_zero(a0, a1, 1.1);

        let mut legend: Vec<Entry> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| entry(name.clone(), Symbol::Line(colour(i))))
            .collect();
        // The bands' parts on the time axis (an infinite end reaches the axis's end).
        let bands: Vec<(f64, f64, &Band)> = self
            .bands
            .iter()
            .filter(|b| !(b.from.is_nan() || b.to.is_nan()))
            .filter_map(|b| {
                let (from, to) = (b.from.max(x.0), b.to.min(x.1));
                (from < to).then_some((from, to, b))
            })
            .collect();
        let mut labels: Vec<&str> = Vec::new();
        for (_, _, b) in &bands {
            if !b.label.is_empty() && !labels.contains(&b.label.as_str()) {
                labels.push(&b.label);
                legend.push(entry(b.label.clone(), Symbol::Band(band_fill(b.shade))));
            }
        }
        let warmup = self.warmup_s > x.0 && self.warmup_s.is_finite();
        if warmup {
            legend.push(entry("warm-up (excluded)", Symbol::Band(band_style())));
        }
        let plot = frame(root, self.title, &legend)?;
        let mut chart = axes(&plot, (x, y), ("time (s)", self.y_desc), XTicks::Numbers)?;

        if warmup {
            let w = self.warmup_s.min(x.1);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x.0, y.0), (w, y.1)],
                band_style(),
            )))?;
        }
        chart.draw_series(
            bands
                .iter()
                .map(|&(from, to, b)| Rectangle::new([(from, y.0), (to, y.1)], band_fill(b.shade))),
        )?;
        for (i, (_, points)) in self.series.iter().enumerate() {
            // A long, jagged trace drawn thick would fill its band solid.
            let width = if points.len() > 1000 { 1 } else { 2 };
            for piece in clip_polyline(points, x, y) {
                polyline(root, &chart, &piece, colour(i).stroke_width(width), lines)?;
            }
        }
        if warmup {
            let w = self.warmup_s.min(x.1);
            chart.draw_series(DashedLineSeries::new(
                vec![(w, y.0), (w, y.1)],
                8,
                5,
                BLACK.stroke_width(2),
            ))?;
            // The label beside the line, on the side with more room.
            let left_room = (w - x.0) / (x.1 - x.0) > 0.5;
            let (h, dx) = if left_room {
                (HPos::Right, -8)
            } else {
                (HPos::Left, 8)
            };
            let style = text_style(NOTE).pos(Pos::new(h, VPos::Top));
            chart.draw_series(std::iter::once(
                EmptyElement::at((w, y.1)) + Text::new("warm-up", (dx, 6), style),
            ))?;
        }
        Ok(())
    }
}

struct AgeVsRate<'a> {
    title: &'a str,
    points: &'a [(f64, f64, f64)],
    best: Option<(f64, f64)>,
}

impl Figure for AgeVsRate<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _: Lines) -> DrawResult<DB> {
        let (r0, r1) = extent(self.points.iter().map(|p| p.0)).unwrap_or((0.0, 1.0));
        let pad = if r1 > r0 {
            (r1 - r0) * 0.05
        } else {
            r0.abs() * 0.1 + 1.0
        };
        let x = ((r0 - pad).max(0.0), r1 + pad);
        // Keep the bowl visible: the axis stops at 5× the best age.
        let best_age = self
            .best
            .map(|b| b.1)
            .or_else(|| extent(self.points.iter().map(|p| p.1)).map(|e| e.0))
            .filter(|a| a.is_finite() && *a > 0.0);
        let (_, top) = extent(self.points.iter().map(|p| p.1 + p.2.max(0.0))).unwrap_or((0.0, 1.0));
        let y_top = match best_age {
            Some(b) if top > 5.0 * b => 5.0 * b,
            _ => top * 1.08,
        };
        let y = from_zero(0.0, y_top, 1.0);

        let with_ci = self.points.iter().any(|p| p.2 > 0.0);
        let beyond = self
            .points
            .iter()
            .filter(|p| p.1 > y.1)
            .map(|p| p.0)
            .collect::<Vec<_>>();
        let blue = colour(0);
        let red = colour(1);
        let mut legend = vec![entry(
            if with_ci {
                "simulation ± 95 % CI"
            } else {
                "simulation"
            },
            Symbol::Marker(blue),
        )];
        if !beyond.is_empty() {
            legend.push(entry("beyond the axis", Symbol::Beyond(blue)));
        }
        if self.best.is_some() {
            legend.push(entry("optimum", Symbol::Ring(red)));
        }
        let plot = frame(root, self.title, &legend)?;
        let mut chart = axes(
            &plot,
            (x, y),
            ("update rate (updates/s)", "average age (ms)"),
            XTicks::Numbers,
        )?;

        for &(rate, age, ci) in self.points {
            if !(rate.is_finite() && age.is_finite() && age <= y.1) {
                continue;
            }
            if ci > 0.0 {
                chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                    rate,
                    (age - ci).max(y.0),
                    age,
                    (age + ci).min(y.1),
                    blue.filled().stroke_width(2),
                    10,
                )))?;
            } else {
                chart.draw_series(std::iter::once(Circle::new((rate, age), 5, blue.filled())))?;
            }
        }
        chart.draw_series(beyond.iter().filter(|r| r.is_finite()).map(|&r| {
            EmptyElement::at((r, y.1)) + TriangleMarker::new((0, 8), 6, blue.filled())
        }))?;

        if let Some((rate, age)) = self.best.filter(|b| inside(*b, x, y)) {
            chart.draw_series(std::iter::once(Circle::new(
                (rate, age),
                10,
                red.stroke_width(3),
            )))?;
            // The label below the optimum and its error bar (the lowest point, so nothing
            // else is there), or above them if there is no room below; aligned so that it
            // stays inside the plot.
            let ci = self
                .points
                .iter()
                .find(|p| p.0 == rate)
                .map_or(0.0, |p| p.2.max(0.0));
            let f = (rate - x.0) / (x.1 - x.0);
            let h = if f < 0.25 {
                HPos::Left
            } else if f > 0.75 {
                HPos::Right
            } else {
                HPos::Center
            };
            let label = format!("optimum {}/s, {} ms", num(rate), num(age));
            let below = (rate, (age - ci).max(y.0));
            let room = chart.backend_coord(&(rate, y.0)).1 - chart.backend_coord(&below).1;
            let (at, v, dy) = if room > 48 {
                (below, VPos::Top, 14)
            } else {
                ((rate, (age + ci).min(y.1)), VPos::Bottom, -14)
            };
            let style = text_style(NOTE).color(&red).pos(Pos::new(h, v));
            chart.draw_series(std::iter::once(
                EmptyElement::at(at) + Text::new(label, (0, dy), style),
            ))?;
        }
        Ok(())
    }
}

struct Fig7<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    y_max: Option<f64>,
    systems: &'a [Fig7Series],
}

impl Figure for Fig7<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        lines: Lines,
    ) -> DrawResult<DB> {
        let all = || {
            self.systems
                .iter()
                .flat_map(|s| s.analysis.iter().chain(&s.simulation))
        };
        let (_, l1) = extent(all().map(|p| p.0)).unwrap_or((0.0, 1.0));
        let x = from_zero(0.0, nice_ceil(l1), 1.0);
        let y = match self.y_max {
            Some(max) => (0.0, max),
            None => from_zero(0.0, extent(all().map(|p| p.1)).map_or(1.0, |e| e.1), 1.1),
        };

        let mut legend: Vec<Entry> = self
            .systems
            .iter()
            .enumerate()
            .map(|(i, s)| entry(s.name.clone(), Symbol::LineAndMarker(colour(i))))
            .collect();
        legend.push(entry("line: analysis", Symbol::Line(GREY)));
        legend.push(entry("markers: simulation", Symbol::Marker(GREY)));
        let plot = frame(root, self.title, &legend)?;
        let mut chart = axes(&plot, (x, y), (self.x_desc, self.y_desc), XTicks::Numbers)?;
        for (i, s) in self.systems.iter().enumerate() {
            let c = colour(i);
            for piece in clip_polyline(&s.analysis, x, y) {
                polyline(root, &chart, &piece, c.stroke_width(2), lines)?;
            }
            chart.draw_series(
                s.simulation
                    .iter()
                    .filter(|p| inside(**p, x, y))
                    .map(|&p| Circle::new(p, 5, c.filled())),
            )?;
        }
        Ok(())
    }
}

struct GroupedBars<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    groups: &'a [&'a str],
    series: &'a [(String, Vec<f64>)],
}

impl Figure for GroupedBars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _: Lines) -> DrawResult<DB> {
        let hops = self.groups.len().max(1);
        let (lo, hi) =
            extent(self.series.iter().flat_map(|n| n.1.iter().copied())).unwrap_or((0.0, 1.0));
        let y = from_zero(lo, hi, 1.1);
        let legend: Vec<Entry> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| entry(name.clone(), Symbol::Bar(colour(i))))
            .collect();
        let plot = frame(root, self.title, &legend)?;

        let mut chart = axes(
            &plot,
            ((0.5, hops as f64 + 0.5), y),
            (self.x_desc, self.y_desc),
            XTicks::Labels(self.groups),
        )?;

        let k = self.series.len().max(1) as f64;
        let group = 0.8;
        let w = group / k;
        for (i, (_, backlog)) in self.series.iter().enumerate() {
            let c = colour(i);
            chart.draw_series(
                backlog
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.is_finite())
                    .map(|(h, &b)| {
                        let left = (h + 1) as f64 - group / 2.0 + i as f64 * w;
                        Rectangle::new([(left + 0.06 * w, 0.0), (left + 0.94 * w, b)], c.filled())
                    }),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A fresh directory for one test's output (removed when dropped).
    pub(super) fn dir(test: &str) -> acp_testkit::Scratch {
        acp_testkit::Scratch::new(&format!("acp-charts-{test}"))
    }

    /// Decodes the PNG and checks its size: its pixels, row by row.
    pub(super) fn png_pixels(path: &Path) -> Vec<[u8; 3]> {
        let file = std::fs::File::open(path).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), SIZE, "{}", path.display());
        assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
        buf[..info.buffer_size()]
            .chunks(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect()
    }

    /// Checks both files of a chart: the PNG has the expected size, a white border (nothing
    /// drawn runs off the chart) and every one of `colours` among many; the SVG has a text
    /// element for every one of `texts`.
    pub(super) fn check(stem: &Path, colours: &[RGBColor], texts: &[&str]) {
        let pixels = png_pixels(&with_ext(stem, "png"));
        let (w, h) = (SIZE.0 as usize, SIZE.1 as usize);
        for (i, p) in pixels.iter().enumerate() {
            let (x, y) = (i % w, i / w);
            if x < 2 || y < 2 || x >= w - 2 || y >= h - 2 {
                assert_eq!(
                    *p,
                    [255, 255, 255],
                    "pixel ({x}, {y}) of {}",
                    stem.display()
                );
            }
        }
        let seen: HashSet<[u8; 3]> = pixels.into_iter().collect();
        assert!(seen.len() > 20, "only {} colours: blank?", seen.len());
        for c in colours {
            assert!(
                seen.contains(&[c.0, c.1, c.2]),
                "colour {c:?} missing from {}",
                stem.display()
            );
        }
        let svg = std::fs::read_to_string(with_ext(stem, "svg")).unwrap();
        assert!(svg.starts_with("<svg"), "not an SVG");
        assert!(svg.contains(r#"width="1000" height="640""#));
        let elements = svg_texts(&svg);
        for t in texts {
            assert!(
                elements.iter().any(|e| e == t),
                "{t:?} missing from {}: {elements:?}",
                stem.display()
            );
        }
    }

    /// The contents of the SVG's text elements.
    fn svg_texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|e| {
                let body = &e[e.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    fn sawtooth(period: f64, offset: f64) -> Vec<(f64, f64)> {
        (0..2000)
            .map(|k| {
                let t = k as f64 * 0.01;
                (t, offset + 1e3 * (t % period))
            })
            .collect()
    }

    #[test]
    fn age_over_time_draws_lines_legend_and_warmup() {
        let d = dir("age");
        let stem = d.join("age");
        let series = vec![
            ("acp+".to_string(), sawtooth(0.5, 20.0)),
            ("lazy".to_string(), sawtooth(0.8, 40.0)),
        ];
        age_over_time("Age at the receiver", "age (ms)", &series, 2.0, &[], &stem).unwrap();
        check(
            &stem,
            &[colour(0), colour(1)],
            &[
                "time (s)",
                "age (ms)",
                "acp+",
                "lazy",
                "warm-up",
                "Age at the receiver",
            ],
        );
    }

    #[test]
    fn age_over_time_shades_bands_under_the_lines() {
        let d = dir("bands");
        let stem = d.join("age");
        let series = vec![("acp+".to_string(), sawtooth(0.5, 20.0))];
        let band = |from: f64, to: f64, label: &str, shade: f64| Band {
            from,
            to,
            label: label.into(),
            shade,
        };
        let bands = [
            band(5.0, 9.0, "other traffic", 1.0),
            band(12.0, 14.0, "other traffic", 0.2),
            band(16.0, 1e9, "sweep", 0.5),
            band(f64::NAN, 3.0, "not a number", 1.0),
            band(-5.0, -1.0, "before the start", 1.0),
            band(3.0, 4.0, "", 1.0),
        ];
        age_over_time(
            "Age with other traffic",
            "age (ms)",
            &series,
            2.0,
            &bands,
            &stem,
        )
        .unwrap();
        check(
            &stem,
            &[colour(0)],
            &["other traffic", "sweep", "warm-up (excluded)"],
        );
        // Rose over white, as dark as the shade says: the first band of a label gives its
        // legend entry's shade, the later ones are drawn in their own.
        let seen: HashSet<[u8; 3]> = png_pixels(&with_ext(&stem, "png")).into_iter().collect();
        let blend = |alpha: f64| {
            let mix = |c: u8| 255.0 + (f64::from(c) - 255.0) * alpha;
            [mix(ROSE.0), mix(ROSE.1), mix(ROSE.2)]
        };
        for shade in [1.0, 0.2, 0.5] {
            let want = blend(0.12 + 0.3 * shade);
            let near = |p: &[u8; 3]| (0..3).all(|k| (f64::from(p[k]) - want[k]).abs() <= 3.0);
            assert!(seen.iter().any(near), "no band of shade {shade}: {want:?}");
        }
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        let texts = svg_texts(&svg);
        assert_eq!(texts.iter().filter(|t| *t == "other traffic").count(), 1);
        for t in ["not a number", "before the start"] {
            assert!(!texts.iter().any(|e| e == t), "{t:?} drawn");
        }
        // Four bands (the one without a label too) and two legend swatches.
        let rose = svg.matches(r##"fill="#E04070""##).count();
        assert_eq!(rose, 4 + 2, "rose rectangles");
    }

    #[test]
    fn age_over_time_without_data_still_writes_both_files() {
        let d = dir("age-empty");
        let stem = d.join("age");
        let bands = [Band {
            from: 0.2,
            to: 0.6,
            label: "other traffic".into(),
            shade: 0.5,
        }];
        age_over_time("Nothing yet", "age (ms)", &[], 0.0, &bands, &stem).unwrap();
        check(&stem, &[], &["Nothing yet", "time (s)", "other traffic"]);
    }

    #[test]
    fn dashes_alternate_along_the_line_and_around_corners() {
        let d = dashes(&[(0, 0), (20, 0), (20, 20)], 6.0, 4.0);
        assert_eq!(
            d,
            vec![
                vec![(0, 0), (6, 0)],
                vec![(10, 0), (16, 0)],
                vec![(20, 0), (20, 6)],
                vec![(20, 10), (20, 16)],
            ]
        );
        let corner = dashes(&[(0, 0), (8, 0), (8, 8)], 10.0, 3.0);
        assert_eq!(corner[0], vec![(0, 0), (8, 0), (8, 2)]);
        assert!(dashes(&[], 6.0, 4.0).is_empty());
        assert!(dashes(&[(3, 3)], 6.0, 4.0).is_empty());
    }

    #[test]
    fn age_vs_rate_marks_the_optimum_and_clips_the_overload() {
        let d = dir("rate");
        let stem = d.join("age_vs_rate");
        let points: Vec<(f64, f64, f64)> = (1..10)
            .map(|k| {
                let r = k as f64 * 10.0;
                let age = 1e3 / r + 1e3 / (100.0 - r);
                (r, age, 0.08 * age)
            })
            .chain([(99.5, 1e6, 0.0), (100.0, f64::INFINITY, 0.0)])
            .collect();
        age_vs_rate(
            "M/M/1: age against rate",
            &points,
            Some((50.0, 40.0)),
            &stem,
        )
        .unwrap();
        check(
            &stem,
            &[colour(0), colour(1)],
            &[
                "update rate (updates/s)",
                "average age (ms)",
                "optimum 50.0/s, 40.0 ms",
                "beyond the axis",
                "simulation ± 95 % CI",
            ],
        );
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        let blue = |element: &str| {
            svg.split('<')
                .filter(|e| e.starts_with(element) && e.contains("#0072B2"))
                .count()
        };
        assert_eq!(
            blue("line "),
            9 * 3,
            "an error bar (bar and two caps) per point"
        );
        assert_eq!(
            blue("polygon "),
            2 + 1,
            "a triangle per point beyond the axis"
        );
    }

    #[test]
    fn fig7_draws_curves_and_points_per_system() {
        let d = dir("fig7");
        let stem = d.join("fig7");
        let systems: Vec<Fig7Series> = [1.0, 2.0]
            .iter()
            .map(|&mu: &f64| Fig7Series {
                name: format!("M/M/1 μ={mu}"),
                analysis: (1..200)
                    .map(|k| {
                        let l = mu * k as f64 / 200.0;
                        (l, (1.0 / mu) * (1.0 + mu / l + l * l / (mu * (mu - l))))
                    })
                    .collect(),
                simulation: (1..10).map(|k| (mu * k as f64 / 10.0, 3.0 / mu)).collect(),
            })
            .collect();
        model_curves(
            "Average age against update rate (Fig. 7a)",
            (
                "update rate λ (updates/s; service rates μ in /s)",
                "average age (s)",
            ),
            Some(20.0),
            &systems,
            &stem,
        )
        .unwrap();
        check(
            &stem,
            &[colour(0), colour(1)],
            &[
                "update rate λ (updates/s; service rates μ in /s)",
                "average age (s)",
                "M/M/1 μ=1",
                "M/M/1 μ=2",
            ],
        );
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        for i in 0..2 {
            let c = colour(i);
            let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            // Each system's 9 simulated points, and its legend marker, in its curve's colour.
            let markers = svg.matches(&format!(r#"fill="{hex}""#)).count();
            assert_eq!(markers, 10, "markers in {hex}");
            // Its curve and its legend line.
            let curves = svg.matches(&format!(r#"stroke="{hex}""#)).count();
            assert_eq!(curves, 2, "lines in {hex}");
        }
    }

    #[test]
    fn backlog_draws_one_bar_per_network_and_hop() {
        let d = dir("backlog");
        let stem = d.join("fig8");
        let networks: Vec<(String, Vec<f64>)> = (0..5)
            .map(|n| {
                let name = format!("Net {}", (b'A' + n as u8) as char);
                (name, (0..6).map(|h| 0.2 + 0.1 * (n + h) as f64).collect())
            })
            .collect();
        let hops = ["1", "2", "3", "4", "5", "6"];
        grouped_bars(
            "Backlog per hop",
            ("hop", "updates at the hop (queued or in service)"),
            &hops,
            &networks,
            &stem,
        )
        .unwrap();
        check(
            &stem,
            &(0..5).map(colour).collect::<Vec<_>>(),
            &[
                "updates at the hop (queued or in service)",
                "Net A",
                "Net E",
            ],
        );
        // 30 bars, and the legend's 5 swatches, are filled rectangles in the SVG.
        let svg = std::fs::read_to_string(with_ext(&stem, "svg")).unwrap();
        let bars = (0..5)
            .map(|i| {
                let c = colour(i);
                let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
                svg.matches(&fill).count()
            })
            .collect::<Vec<_>>();
        assert!(bars.iter().all(|&n| n >= 7), "bars per colour: {bars:?}");
    }

    #[test]
    fn clipping_keeps_lines_inside_the_box() {
        let line = [
            (0.0, 30.0),
            (1.0, 10.0),
            (2.0, 10.0),
            (3.0, 30.0),
            (4.0, f64::NAN),
            (5.0, 5.0),
            (6.0, 6.0),
        ];
        let pieces = clip_polyline(&line, (0.0, 10.0), (0.0, 20.0));
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(
            pieces[0],
            vec![(0.5, 20.0), (1.0, 10.0), (2.0, 10.0), (2.5, 20.0)]
        );
        assert_eq!(pieces[1], vec![(5.0, 5.0), (6.0, 6.0)]);
        assert!(clip_polyline(&[(0.0, 30.0), (1.0, 40.0)], (0.0, 1.0), (0.0, 20.0)).is_empty());
    }

    #[test]
    fn the_bundled_font_registers_and_file_names_keep_dots() {
        register_font().unwrap();
        assert_eq!(
            with_ext(Path::new("a/b.c"), "png"),
            PathBuf::from("a/b.c.png")
        );
        assert_eq!(tick(-2.5), "−2.5");
        assert_eq!(tick(20.0), "20");
        assert_eq!(num(42.0), "42.0");
        assert_eq!(num(0.5), "0.500");
        assert_eq!(nice_ceil(119.97), 120.0);
        assert_eq!(nice_ceil(3.99), 4.0);
        assert_eq!(nice_ceil(105.0), 105.0);
    }
}
