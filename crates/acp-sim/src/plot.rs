//! Line and scatter charts written as SVG and PNG.
//!
//! A [`Chart`] holds a title, two axis labels and a list of [`Series`]; each
//! series is drawn as a solid line, a dashed line or as points ([`Style`]),
//! in its own colour, and is named in a legend. [`Chart::write_svg`],
//! [`Chart::write_png`] and [`Chart::write_both`] lay the chart out once and
//! hand the same list of drawing primitives to two small back ends: an SVG
//! writer and an anti-aliasing rasteriser whose pixels are encoded with the
//! `png` crate.
//!
//! Nothing is looked up on the machine it runs on: text in PNGs is drawn with
//! a subset of DejaVu Sans bundled in `assets/` (see `assets/README.md`), and
//! the SVG asks for that font by name with generic fall-backs. No system
//! fonts or fontconfig are needed. Output is deterministic: the same chart
//! gives byte-identical files.
//!
//! Data handling:
//! - a point with a non-finite coordinate (and, on a logarithmic y axis, one
//!   with y ≤ 0) is skipped, and a line is broken where it was;
//! - empty series, a single point and all-equal values get a sensible axis
//!   range instead of a panic;
//! - `y_max` caps the y axis: data above it are clipped at the plot frame
//!   (handy to keep a curve's runaway ends from flattening the rest);
//! - axes get "nice" ticks (1, 2, 2.5 or 5 times a power of ten, or decades
//!   on a logarithmic axis), and the legend goes into the corner of the plot
//!   where it hides the fewest data.
//!
//! ```no_run
//! use acp_sim::plot::{Chart, Series};
//!
//! let mut chart = Chart::new("Age vs rate", "rate (updates/s)", "average age (s)");
//! chart.series.push(Series::line("M/M/1 theory", vec![(0.1, 11.1), (0.5, 3.5), (0.9, 10.2)]));
//! chart.series.push(Series::scatter("simulated", vec![(0.1, 11.0), (0.5, 3.6), (0.9, 9.9)]));
//! chart.y_max = Some(20.0);
//! chart.write_both(std::path::Path::new("target/age_vs_rate"))?; // .svg and .png
//! # Ok::<(), acp_sim::plot::PlotError>(())
//! ```

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use ab_glyph::{point, Font, FontRef, PxScale};
use thiserror::Error;

/// Default image width in pixels (PNG) or user units (SVG).
pub const DEFAULT_WIDTH: u32 = 800;
/// Default image height in pixels (PNG) or user units (SVG).
pub const DEFAULT_HEIGHT: u32 = 500;
/// Smallest accepted width or height.
pub const MIN_SIZE: u32 = 100;
/// Largest accepted width or height.
pub const MAX_SIZE: u32 = 8192;

/// Errors from rendering or writing a chart.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The output file, or its parent directory, could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or directory that could not be written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The PNG encoder failed.
    #[error("PNG encoding failed: {0}")]
    Png(#[from] png::EncodingError),
    /// The requested image size is out of range.
    #[error("chart size {width}x{height} is outside {MIN_SIZE}..={MAX_SIZE} pixels per side")]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The bundled font could not be parsed (a broken build, never bad input).
    #[error("the bundled font could not be parsed")]
    Font,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// A solid line through the points in the order given.
    #[default]
    Line,
    /// A marker at every point, no line.
    Points,
    /// A dashed line through the points in the order given.
    DashedLine,
}

/// One named set of `(x, y)` points.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend text; a series with an empty name is drawn but left out of the legend.
    pub name: String,
    /// The data, in drawing order for lines. Non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// How the series is drawn.
    pub style: Style,
}

impl Series {
    /// A series with the given name, style and points.
    pub fn new(name: impl Into<String>, style: Style, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            style,
        }
    }

    /// A series drawn as a solid line.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self::new(name, Style::Line, points)
    }

    /// A series drawn as a dashed line.
    pub fn dashed(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self::new(name, Style::DashedLine, points)
    }

    /// A series drawn as points (a scatter plot).
    pub fn scatter(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self::new(name, Style::Points, points)
    }
}

/// A chart: title, axis labels, series and a few options.
///
/// Build one with [`Chart::new`] (or struct syntax with `..Chart::default()`),
/// push [`Series`] into `series`, then write it with [`Chart::write_svg`],
/// [`Chart::write_png`] or [`Chart::write_both`].
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title above the plot; empty for none.
    pub title: String,
    /// Label under the x axis; empty for none.
    pub x_label: String,
    /// Label left of the y axis (written bottom to top); empty for none.
    pub y_label: String,
    /// The data, drawn in order (later series on top). Colours follow the order.
    pub series: Vec<Series>,
    /// Logarithmic (base 10) y axis; points with y ≤ 0 are then skipped.
    pub log_y: bool,
    /// Ceiling of the y axis: if any data lie above it, the axis ends here
    /// and what lies above is clipped at the frame; otherwise the axis fits
    /// the data as usual. Ignored if not finite (or, with `log_y`, not positive).
    pub y_max: Option<f64>,
    /// Image width in pixels, `MIN_SIZE..=MAX_SIZE`.
    pub width: u32,
    /// Image height in pixels, `MIN_SIZE..=MAX_SIZE`.
    pub height: u32,
}

impl Default for Chart {
    fn default() -> Self {
        Chart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            series: Vec::new(),
            log_y: false,
            y_max: None,
            width: DEFAULT_WIDTH,
            height: DEFAULT_HEIGHT,
        }
    }
}

impl Chart {
    /// An empty chart of the default size with the given title and axis labels.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..Chart::default()
        }
    }

    /// Adds a series and returns the chart (builder style).
    pub fn with_series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Renders the chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, PlotError> {
        let fonts = Fonts::load()?;
        let scene = build_scene(self, &fonts)?;
        Ok(render_svg(&scene))
    }

    /// Renders the chart as a PNG file's bytes (8-bit RGB, `width` × `height`).
    pub fn to_png(&self) -> Result<Vec<u8>, PlotError> {
        let fonts = Fonts::load()?;
        let scene = build_scene(self, &fonts)?;
        let canvas = rasterise(&scene, &fonts);
        encode_png(&canvas)
    }

    /// Writes the chart as SVG to `path`, creating missing parent directories.
    pub fn write_svg(&self, path: impl AsRef<Path>) -> Result<(), PlotError> {
        write_file(path.as_ref(), self.to_svg()?.as_bytes())
    }

    /// Writes the chart as PNG to `path`, creating missing parent directories.
    pub fn write_png(&self, path: impl AsRef<Path>) -> Result<(), PlotError> {
        write_file(path.as_ref(), &self.to_png()?)
    }

    /// Writes `<stem>.svg` and `<stem>.png` (the extensions are appended, so a
    /// stem such as `out/run.v2` gives `out/run.v2.svg`).
    pub fn write_both(&self, stem: impl AsRef<Path>) -> Result<(), PlotError> {
        let stem = stem.as_ref();
        self.write_svg(with_suffix(stem, ".svg"))?;
        self.write_png(with_suffix(stem, ".png"))
    }
}

fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            fs::create_dir_all(dir).map_err(|source| PlotError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    fs::write(path, bytes).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })
}

// ---------------------------------------------------------------------------
// Font
// ---------------------------------------------------------------------------

/// DejaVu Sans, subset to Latin-1, Greek and common symbols (see assets/README.md).
static FONT_DATA: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

/// What the SVG asks for; Verdana has near-identical metrics.
const FONT_FAMILY: &str = "'DejaVu Sans', Verdana, Geneva, sans-serif";

/// The bundled font plus the numbers layout needs from it.
struct Fonts {
    font: FontRef<'static>,
    units_per_em: f64,
    /// ab_glyph scales by the font's height (ascent − descent), not by the em.
    height_per_em: f64,
}

impl Fonts {
    fn load() -> Result<Self, PlotError> {
        let font = FontRef::try_from_slice(FONT_DATA).map_err(|_| PlotError::Font)?;
        let units_per_em = f64::from(font.units_per_em().ok_or(PlotError::Font)?);
        let height_per_em = f64::from(font.height_unscaled()) / units_per_em;
        Ok(Fonts {
            font,
            units_per_em,
            height_per_em,
        })
    }

    /// Advance width of `text` at a font size (em) of `size` pixels, with kerning.
    fn width(&self, text: &str, size: f64) -> f64 {
        let mut units = 0.0f64;
        let mut prev = None;
        for c in text.chars() {
            let id = self.font.glyph_id(c);
            if let Some(p) = prev {
                units += f64::from(self.font.kern_unscaled(p, id));
            }
            units += f64::from(self.font.h_advance_unscaled(id));
            prev = Some(id);
        }
        units * size / self.units_per_em
    }
}

// Font metrics of DejaVu Sans as fractions of the em, for vertical layout.
const ASCENT: f64 = 0.93;
const DESCENT: f64 = 0.24;
const CAP_HEIGHT: f64 = 0.73;

// ---------------------------------------------------------------------------
// Scene: what both back ends draw
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
struct Color {
    r: u8,
    g: u8,
    b: u8,
    a: f64,
}

const fn rgb(hex: u32) -> Color {
    Color {
        r: (hex >> 16) as u8,
        g: (hex >> 8) as u8,
        b: hex as u8,
        a: 1.0,
    }
}

impl Color {
    fn alpha(self, a: f64) -> Color {
        Color { a, ..self }
    }

    fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

const WHITE: Color = rgb(0xffffff);
const FRAME: Color = rgb(0x4d4d4d);
const GRID_MAJOR: Color = rgb(0xe2e2e2);
const GRID_MINOR: Color = rgb(0xf1f1f1);
const TICK_TEXT: Color = rgb(0x333333);
const LABEL_TEXT: Color = rgb(0x222222);
const TITLE_TEXT: Color = rgb(0x111111);
const LEGEND_BORDER: Color = rgb(0xc8c8c8);

/// Matplotlib's "tab10" palette; series past ten get golden-angle hues.
const PALETTE: [Color; 10] = [
    rgb(0x1f77b4),
    rgb(0xff7f0e),
    rgb(0x2ca02c),
    rgb(0xd62728),
    rgb(0x9467bd),
    rgb(0x8c564b),
    rgb(0xe377c2),
    rgb(0x7f7f7f),
    rgb(0xbcbd22),
    rgb(0x17becf),
];

fn series_color(i: usize) -> Color {
    if let Some(c) = PALETTE.get(i) {
        return *c;
    }
    // HSL(h, 65%, 42%) with h stepping by the golden angle.
    let h = ((i - PALETTE.len()) as f64 * 0.618_033_988_749_895 + 0.05).fract() * 6.0;
    let (s, l) = (0.65, 0.42);
    let c = (1.0 - (2.0 * l - 1.0f64).abs()) * s;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Color {
        r: to(r),
        g: to(g),
        b: to(b),
        a: 1.0,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cap {
    Butt,
    Round,
    Square,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Stroke {
    color: Color,
    width: f64,
    cap: Cap,
    /// Dash and gap lengths; joins are always round.
    dash: Option<(f64, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Start,
    Middle,
    End,
}

#[derive(Debug, Clone, PartialEq)]
struct Text {
    /// Anchor point on the baseline.
    x: f64,
    y: f64,
    text: String,
    /// Font size (em) in pixels.
    size: f64,
    color: Color,
    anchor: Anchor,
    /// Rotated 90° counter-clockwise (reads bottom to top).
    vertical: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Prim {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: Option<Color>,
        stroke: Option<(Color, f64)>,
    },
    Path {
        points: Vec<(f64, f64)>,
        stroke: Stroke,
        clip: bool,
    },
    Circle {
        cx: f64,
        cy: f64,
        r: f64,
        fill: Color,
        clip: bool,
    },
    Text(Text),
    /// Start (`Some(name)`) or end (`None`) of a series' group; SVG only.
    Group(Option<String>),
}

/// Axis-aligned rectangle `[x0, x1) × [y0, y1)` in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn grow(self, d: f64) -> Rect {
        Rect {
            x0: self.x0 - d,
            y0: self.y0 - d,
            x1: self.x1 + d,
            y1: self.y1 + d,
        }
    }

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        x >= self.x0 && x <= self.x1 && y >= self.y0 && y <= self.y1
    }
}

struct Scene {
    width: u32,
    height: u32,
    title: String,
    /// The plot area: clipped primitives stay inside it.
    clip: Rect,
    prims: Vec<Prim>,
}

// ---------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------

const TITLE_SIZE: f64 = 16.0;
const LABEL_SIZE: f64 = 13.0;
const TICK_SIZE: f64 = 11.0;
const LEGEND_SIZE: f64 = 12.0;
const PAD: f64 = 12.0;
const TICK_LEN: f64 = 5.0;
const MINOR_TICK_LEN: f64 = 3.0;
const LINE_WIDTH: f64 = 2.0;
const DASH: (f64, f64) = (6.0, 4.0);
const POINT_RADIUS: f64 = 3.2;
const SWATCH: f64 = 26.0;
/// Data values are clamped to this magnitude so that range arithmetic stays finite.
const VALUE_LIMIT: f64 = 1e300;
/// Pixel coordinates are clamped to this magnitude before clipping.
const PIXEL_LIMIT: f64 = 1e7;

/// Control characters (invalid in XML, no glyph in the font) become spaces.
fn clean_text(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[derive(Debug, Clone, Copy, Default)]
struct Extent(Option<(f64, f64)>);

impl Extent {
    fn add(&mut self, v: f64) {
        let v = v.clamp(-VALUE_LIMIT, VALUE_LIMIT);
        self.0 = Some(match self.0 {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
    }
}

fn build_scene(chart: &Chart, fonts: &Fonts) -> Result<Scene, PlotError> {
    let size_ok = |v: u32| (MIN_SIZE..=MAX_SIZE).contains(&v);
    if !size_ok(chart.width) || !size_ok(chart.height) {
        return Err(PlotError::Size {
            width: chart.width,
            height: chart.height,
        });
    }
    let (w, h) = (f64::from(chart.width), f64::from(chart.height));
    let fit = |s: &str, size: f64, room: f64| truncate_to(fonts, &clean_text(s.trim()), size, room);
    let title = fit(&chart.title, TITLE_SIZE, w - 2.0 * PAD);
    let x_label = fit(&chart.x_label, LABEL_SIZE, w - 2.0 * PAD);
    let y_label = fit(&chart.y_label, LABEL_SIZE, h - 2.0 * PAD);
    let log = chart.log_y;

    // Axis space: y is log10(y) on a logarithmic axis.
    let to_axis_y = |y: f64| -> Option<f64> {
        if !y.is_finite() {
            None
        } else if log {
            (y > 0.0).then(|| y.log10())
        } else {
            Some(y)
        }
    };
    let y_cap = chart
        .y_max
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .map(|v| v.clamp(-VALUE_LIMIT, VALUE_LIMIT));

    let mut xs = Extent::default();
    let mut ys = Extent::default();
    let mut ys_below_cap = Extent::default();
    for s in &chart.series {
        for &(x, y) in &s.points {
            let Some(ya) = to_axis_y(y) else { continue };
            if !x.is_finite() {
                continue;
            }
            xs.add(x);
            ys.add(ya);
            if y_cap.is_none_or(|cap| y <= cap) {
                ys_below_cap.add(ya);
            }
        }
    }
    let (x_lo, x_hi) = xs.0.unwrap_or((0.0, 1.0));
    // y_max only matters when something lies above it (or there is no data).
    let y_top = y_cap.map(|c| if log { c.log10() } else { c });
    let y_fixed = y_top.filter(|&top| ys.0.is_none_or(|(_, hi)| hi > top));
    let (y_lo, y_hi) = match (ys_below_cap.0, y_fixed) {
        (Some((lo, _)), Some(top)) => (lo.min(top), top),
        (None, Some(top)) if log || top <= 0.0 => (top - 1.0, top),
        (None, Some(top)) => (0.0, top),
        (Some(range), None) => range,
        (None, None) => (0.0, 1.0),
    };

    // Vertical layout.
    let title_h = if title.is_empty() {
        0.0
    } else {
        TITLE_SIZE * (ASCENT + DESCENT) + 10.0
    };
    let top = PAD + title_h + TICK_SIZE * CAP_HEIGHT / 2.0 + 2.0;
    let x_label_h = if x_label.is_empty() {
        0.0
    } else {
        8.0 + LABEL_SIZE * (ASCENT + DESCENT)
    };
    let bottom = PAD + x_label_h + TICK_LEN + 4.0 + TICK_SIZE * (CAP_HEIGHT + DESCENT);
    let y0 = top.round();
    let y1 = (h - bottom).round().max(y0 + 10.0);

    let y_axis = fit_axis(
        (y_lo, y_hi),
        y_fixed.is_some(),
        log,
        y1 - y0,
        55.0,
        |axis, len| labels_overlap(axis, len, |_| TICK_SIZE * 1.4),
    );

    // Horizontal layout: the left margin depends on the y tick labels.
    let y_label_w = if y_label.is_empty() {
        0.0
    } else {
        LABEL_SIZE * (ASCENT + DESCENT) + 8.0
    };
    let max_tick_w = y_axis
        .ticks
        .iter()
        .filter_map(|t| t.label.as_deref())
        .map(|l| fonts.width(l, TICK_SIZE))
        .fold(0.0, f64::max);
    let x0 = (PAD + y_label_w + max_tick_w + 4.0 + TICK_LEN).round();
    let x_fit = |x1: f64| {
        fit_axis((x_lo, x_hi), false, false, x1 - x0, 100.0, |axis, len| {
            labels_overlap(axis, len, |l| fonts.width(l, TICK_SIZE) + 12.0)
        })
    };
    let mut right = PAD + 8.0;
    let mut x1 = (w - right).round().max(x0 + 10.0);
    let mut x_axis = x_fit(x1);
    // Make room for the last x tick label's right half.
    if let Some(last) = x_axis.ticks.iter().rev().find(|t| t.label.is_some()) {
        let label_w = fonts.width(last.label.as_deref().unwrap_or(""), TICK_SIZE);
        let overhang = x0 + 0.5 + x_axis.frac(last.pos) * (x1 - x0 - 1.0) + label_w / 2.0 + 4.0;
        if overhang > w - PAD / 2.0 {
            right += overhang - (w - PAD / 2.0);
            x1 = (w - right).round().max(x0 + 10.0);
            x_axis = x_fit(x1);
        }
    }
    let plot = Rect { x0, y0, x1, y1 };

    let map_x =
        |xa: f64| (x0 + 0.5 + x_axis.frac(xa) * (x1 - x0 - 1.0)).clamp(-PIXEL_LIMIT, PIXEL_LIMIT);
    let map_y =
        |ya: f64| (y1 - 0.5 - y_axis.frac(ya) * (y1 - y0 - 1.0)).clamp(-PIXEL_LIMIT, PIXEL_LIMIT);
    let snap = |v: f64| (v - 0.5).round() + 0.5;

    let mut prims = vec![Prim::Rect {
        x: 0.0,
        y: 0.0,
        w,
        h,
        fill: Some(WHITE),
        stroke: None,
    }];

    // Grid: minor lines first, major on top.
    let grid_line = |points: Vec<(f64, f64)>, color: Color| Prim::Path {
        points,
        stroke: Stroke {
            color,
            width: 1.0,
            cap: Cap::Butt,
            dash: None,
        },
        clip: false,
    };
    let hline = |y: f64, color: Color| grid_line(vec![(x0, y), (x1, y)], color);
    let vline = |x: f64, color: Color| grid_line(vec![(x, y0), (x, y1)], color);
    for major in [false, true] {
        let color = if major { GRID_MAJOR } else { GRID_MINOR };
        for t in x_axis.ticks.iter().filter(|t| t.major == major) {
            prims.push(vline(snap(map_x(t.pos)), color));
        }
        for t in y_axis.ticks.iter().filter(|t| t.major == major) {
            prims.push(hline(snap(map_y(t.pos)), color));
        }
    }

    // Series.
    let cull = plot.grow(LINE_WIDTH + POINT_RADIUS + 1.0);
    let mut samples: Vec<(f64, f64)> = Vec::new();
    for (i, s) in chart.series.iter().enumerate() {
        let color = series_color(i);
        prims.push(Prim::Group(Some(clean_text(&s.name))));
        let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut run: Vec<(f64, f64)> = Vec::new();
        for &(x, y) in &s.points {
            match to_axis_y(y) {
                Some(ya) if x.is_finite() => {
                    run.push((map_x(x.clamp(-VALUE_LIMIT, VALUE_LIMIT)), map_y(ya)));
                }
                _ => {
                    if !run.is_empty() {
                        runs.push(std::mem::take(&mut run));
                    }
                }
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
        let mut dot = |p: (f64, f64), r: f64| {
            if cull.contains(p) {
                samples.push(p);
                prims.push(Prim::Circle {
                    cx: p.0,
                    cy: p.1,
                    r,
                    fill: color,
                    clip: true,
                });
            }
        };
        match s.style {
            Style::Points => {
                // Markers closer than a quarter pixel to one already drawn
                // would look the same: draw each position once.
                let mut seen = std::collections::HashSet::new();
                for &p in runs.iter().flatten() {
                    if seen.insert(((p.0 * 4.0).round() as i64, (p.1 * 4.0).round() as i64)) {
                        dot(p, POINT_RADIUS);
                    }
                }
            }
            Style::Line | Style::DashedLine => {
                let dashed = s.style == Style::DashedLine;
                let mut pieces = Vec::new();
                for run in &runs {
                    if run.len() == 1 {
                        // A lone point would be invisible as a line: mark it.
                        dot(run[0], LINE_WIDTH);
                    } else {
                        pieces.extend(clip_polyline(&thin_polyline(run), cull));
                    }
                }
                for piece in pieces {
                    sample_polyline(&piece, &mut samples);
                    prims.push(Prim::Path {
                        points: piece,
                        stroke: Stroke {
                            color,
                            width: LINE_WIDTH,
                            cap: if dashed { Cap::Butt } else { Cap::Round },
                            dash: dashed.then_some(DASH),
                        },
                        clip: true,
                    });
                }
            }
        }
        prims.push(Prim::Group(None));
    }

    // Frame and ticks.
    prims.push(Prim::Rect {
        x: x0 + 0.5,
        y: y0 + 0.5,
        w: x1 - x0 - 1.0,
        h: y1 - y0 - 1.0,
        fill: None,
        stroke: Some((FRAME, 1.0)),
    });
    let tick = |a: (f64, f64), b: (f64, f64)| Prim::Path {
        points: vec![a, b],
        stroke: Stroke {
            color: FRAME,
            width: 1.0,
            cap: Cap::Butt,
            dash: None,
        },
        clip: false,
    };
    let text = |x: f64, y: f64, s: &str, size: f64, color: Color, anchor: Anchor| {
        Prim::Text(Text {
            x,
            y,
            text: s.to_string(),
            size,
            color,
            anchor,
            vertical: false,
        })
    };
    for t in &x_axis.ticks {
        let x = snap(map_x(t.pos));
        let len = if t.major { TICK_LEN } else { MINOR_TICK_LEN };
        prims.push(tick((x, y1), (x, y1 + len)));
        if let Some(l) = &t.label {
            let base = y1 + TICK_LEN + 4.0 + TICK_SIZE * CAP_HEIGHT;
            prims.push(text(x, base, l, TICK_SIZE, TICK_TEXT, Anchor::Middle));
        }
    }
    for t in &y_axis.ticks {
        let y = snap(map_y(t.pos));
        let len = if t.major { TICK_LEN } else { MINOR_TICK_LEN };
        prims.push(tick((x0 - len, y), (x0, y)));
        if let Some(l) = &t.label {
            let base = y + TICK_SIZE * CAP_HEIGHT / 2.0;
            let x = x0 - TICK_LEN - 4.0;
            prims.push(text(x, base, l, TICK_SIZE, TICK_TEXT, Anchor::End));
        }
    }

    // Axis labels and title.
    let mid_x = (x0 + x1) / 2.0;
    if !x_label.is_empty() {
        let base =
            y1 + TICK_LEN + 4.0 + TICK_SIZE * (CAP_HEIGHT + DESCENT) + 8.0 + LABEL_SIZE * ASCENT;
        prims.push(text(
            mid_x,
            base,
            &x_label,
            LABEL_SIZE,
            LABEL_TEXT,
            Anchor::Middle,
        ));
    }
    if !y_label.is_empty() {
        prims.push(Prim::Text(Text {
            x: PAD + LABEL_SIZE * ASCENT,
            y: (y0 + y1) / 2.0,
            text: y_label,
            size: LABEL_SIZE,
            color: LABEL_TEXT,
            anchor: Anchor::Middle,
            vertical: true,
        }));
    }
    if !title.is_empty() {
        let tw = fonts.width(&title, TITLE_SIZE);
        // Centred over the plot, but kept inside the image.
        let cx = mid_x.clamp(PAD + tw / 2.0, (w - PAD - tw / 2.0).max(PAD + tw / 2.0));
        let base = PAD + TITLE_SIZE * ASCENT;
        prims.push(text(
            cx,
            base,
            &title,
            TITLE_SIZE,
            TITLE_TEXT,
            Anchor::Middle,
        ));
    }

    legend(chart, fonts, plot, &samples, &mut prims);

    Ok(Scene {
        width: chart.width,
        height: chart.height,
        title,
        clip: plot,
        prims,
    })
}

/// Shortens `text` with an ellipsis until it is at most `max` pixels wide.
fn truncate_to(fonts: &Fonts, text: &str, size: f64, max: f64) -> String {
    if fonts.width(text, size) <= max {
        return text.to_string();
    }
    // Longest prefix that leaves room for the ellipsis (kerning across the
    // cut is ignored: it is a fraction of a pixel).
    let room = max - fonts.width("…", size);
    let mut used = 0.0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        used += fonts.width(c.encode_utf8(&mut buf), size);
        if used > room {
            break;
        }
        end = i + c.len_utf8();
    }
    format!("{}…", text[..end].trim_end())
}

/// Adds the legend in the corner of the plot that covers the fewest samples.
///
/// Long names are shortened, many entries are set in columns, and entries
/// that still do not fit are summed up as "+ N more".
fn legend(chart: &Chart, fonts: &Fonts, plot: Rect, samples: &[(f64, f64)], prims: &mut Vec<Prim>) {
    let (plot_w, plot_h) = (plot.x1 - plot.x0, plot.y1 - plot.y0);
    let max_name_w = (plot_w * 0.45).max(60.0);
    let mut entries: Vec<(Option<(usize, Style)>, String)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.name.trim().is_empty())
        .map(|(i, s)| {
            let name = truncate_to(fonts, &clean_text(s.name.trim()), LEGEND_SIZE, max_name_w);
            (Some((i, s.style)), name)
        })
        .collect();
    if entries.is_empty() {
        return;
    }
    let row_h = (LEGEND_SIZE * 1.5).round();
    let (pad_x, pad_y, gap, col_gap, m) = (9.0, 6.0, 7.0, 16.0, 8.0);
    let entry_w = |entries: &[(Option<(usize, Style)>, String)]| {
        let text_w = entries
            .iter()
            .map(|(_, name)| fonts.width(name, LEGEND_SIZE))
            .fold(0.0, f64::max);
        (SWATCH + gap + text_w + 2.0).ceil()
    };
    // Rows and columns that fit inside the plot.
    let max_rows = (((plot_h - 2.0 * m - 2.0 * pad_y) / row_h).floor() as usize).max(1);
    let max_cols = (((plot_w - 2.0 * m - 2.0 * pad_x + col_gap) / (entry_w(&entries) + col_gap))
        .floor() as usize)
        .max(1);
    if entries.len() > max_rows * max_cols {
        let shown = (max_rows * max_cols).saturating_sub(1);
        if shown == 0 {
            return; // No room for even one entry: a legend would only hide the data.
        }
        let more = entries.len() - shown;
        entries.truncate(shown);
        entries.push((None, format!("+ {more} more")));
    }
    let cols = entries.len().div_ceil(max_rows);
    let rows = entries.len().div_ceil(cols);
    let col_w = entry_w(&entries);
    let box_w = (2.0 * pad_x + cols as f64 * col_w + (cols - 1) as f64 * col_gap).ceil();
    let box_h = (2.0 * pad_y + row_h * rows as f64).ceil();
    let candidates = [
        (plot.x1 - m - box_w, plot.y0 + m),         // top right
        (plot.x0 + m, plot.y0 + m),                 // top left
        (plot.x1 - m - box_w, plot.y1 - m - box_h), // bottom right
        (plot.x0 + m, plot.y1 - m - box_h),         // bottom left
    ];
    let mut best = (candidates[0], usize::MAX);
    for &(bx, by) in &candidates {
        let area = Rect {
            x0: bx,
            y0: by,
            x1: bx + box_w,
            y1: by + box_h,
        }
        .grow(4.0);
        let hits = samples.iter().filter(|p| area.contains(**p)).count();
        if hits < best.1 {
            best = ((bx, by), hits);
        }
    }
    let (bx, by) = (best.0 .0.round() + 0.5, best.0 .1.round() + 0.5);
    prims.push(Prim::Rect {
        x: bx,
        y: by,
        w: box_w,
        h: box_h,
        fill: Some(WHITE.alpha(0.9)),
        stroke: Some((LEGEND_BORDER, 1.0)),
    });
    for (k, (series, name)) in entries.into_iter().enumerate() {
        let (col, row) = (k / rows, k % rows);
        let cy = (by + pad_y + row_h * (row as f64 + 0.5)).round();
        let sx = bx + pad_x + col as f64 * (col_w + col_gap);
        match series {
            Some((i, Style::Points)) => prims.push(Prim::Circle {
                cx: sx + SWATCH / 2.0,
                cy,
                r: POINT_RADIUS,
                fill: series_color(i),
                clip: false,
            }),
            Some((i, style)) => prims.push(Prim::Path {
                points: vec![(sx, cy), (sx + SWATCH, cy)],
                stroke: Stroke {
                    color: series_color(i),
                    width: LINE_WIDTH,
                    cap: Cap::Butt,
                    dash: (style == Style::DashedLine).then_some(DASH),
                },
                clip: false,
            }),
            None => {}
        }
        prims.push(Prim::Text(Text {
            x: sx + SWATCH + gap,
            y: cy + LEGEND_SIZE * CAP_HEIGHT / 2.0,
            text: name,
            size: LEGEND_SIZE,
            color: LABEL_TEXT,
            anchor: Anchor::Start,
            vertical: false,
        }));
    }
}

/// Drops points within a quarter pixel of the last point kept (dense data
/// adds nothing visible); the first and last points are always kept.
fn thin_polyline(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    const TOLERANCE: f64 = 0.25;
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len().min(4096));
    let mut skipped = None;
    for &p in pts {
        match out.last() {
            Some(&q) if (p.0 - q.0).hypot(p.1 - q.1) < TOLERANCE => skipped = Some(p),
            _ => {
                out.push(p);
                skipped = None;
            }
        }
    }
    out.extend(skipped);
    out
}

/// Points every few pixels along a polyline, for legend placement.
fn sample_polyline(pts: &[(f64, f64)], out: &mut Vec<(f64, f64)>) {
    const STEP: f64 = 4.0;
    if let Some(p) = pts.first() {
        out.push(*p);
    }
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = (b.0 - a.0).hypot(b.1 - a.1);
        let n = (len / STEP).ceil().min(10_000.0) as usize;
        for k in 1..=n {
            let t = k as f64 / n as f64;
            out.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
        }
    }
}

/// Clips a segment to `r` (Liang–Barsky); endpoints inside are returned unchanged.
fn clip_segment(a: (f64, f64), b: (f64, f64), r: Rect) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.x0),
        (dx, r.x1 - a.0),
        (-dy, a.1 - r.y0),
        (dy, r.y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (a.0 + dx * t, a.1 + dy * t);
    let a2 = if t0 == 0.0 { a } else { at(t0) };
    let b2 = if t1 == 1.0 { b } else { at(t1) };
    Some((a2, b2))
}

/// Clips a polyline to `r`, splitting it where it leaves and re-enters.
fn clip_polyline(pts: &[(f64, f64)], r: Rect) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for w in pts.windows(2) {
        match clip_segment(w[0], w[1], r) {
            Some((a, b)) => {
                if cur.last() != Some(&a) {
                    if cur.len() >= 2 {
                        out.push(std::mem::take(&mut cur));
                    }
                    cur = vec![a];
                }
                cur.push(b);
            }
            None => {
                if cur.len() >= 2 {
                    out.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

// ---------------------------------------------------------------------------
// Axes and ticks
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
struct Tick {
    /// Position in axis space (log10 of the value on a logarithmic axis).
    pos: f64,
    label: Option<String>,
    /// Major ticks get a grid line of the major colour and a full-length tick.
    major: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<Tick>,
}

impl Axis {
    /// Where `v` (axis space) lies between the ends, 0 at `lo` and 1 at `hi`.
    fn frac(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }
}

/// The densest nice axis (about one tick per `px_per_tick` pixels of its
/// `len`) whose labels do not overlap according to `overlap`.
fn fit_axis(
    (lo, hi): (f64, f64),
    fixed_hi: bool,
    log: bool,
    len: f64,
    px_per_tick: f64,
    overlap: impl Fn(&Axis, f64) -> bool,
) -> Axis {
    let mut target = ((len / px_per_tick) as usize).clamp(2, 12);
    let mut fine_log = true;
    loop {
        let axis = if log {
            log_axis(lo, hi, fixed_hi, target, fine_log)
        } else {
            linear_axis(lo, hi, fixed_hi, target)
        };
        if !overlap(&axis, len) {
            return axis;
        }
        if log && fine_log {
            fine_log = false;
        } else if target > 1 {
            target -= 1;
        } else {
            return label_ends_only(axis);
        }
    }
}

/// Keeps the labels of the first and last labelled ticks only (for axes too
/// short for more).
fn label_ends_only(mut axis: Axis) -> Axis {
    let labelled: Vec<usize> = (0..axis.ticks.len())
        .filter(|&i| axis.ticks[i].label.is_some())
        .collect();
    if let [_, inner @ .., _] = labelled.as_slice() {
        for &i in inner {
            axis.ticks[i].label = None;
        }
    }
    axis
}

/// Whether neighbouring labels on an axis `len` pixels long come closer than
/// `need(label)` (their extent along the axis plus a gap) allows.
fn labels_overlap(axis: &Axis, len: f64, need: impl Fn(&str) -> f64) -> bool {
    let labelled: Vec<(f64, f64)> = axis
        .ticks
        .iter()
        .filter_map(|t| {
            t.label
                .as_deref()
                .map(|l| (axis.frac(t.pos) * len, need(l)))
        })
        .collect();
    labelled
        .windows(2)
        .any(|w| (w[1].0 - w[0].0).abs() < (w[0].1 + w[1].1) / 2.0)
}

/// A "nice" step near `raw` (not below it): (mantissa, power of ten), mantissa 1, 2, 2.5 or 5.
fn nice_step(raw: f64) -> (f64, i32) {
    let exp = raw.log10().floor() as i32;
    let f = raw / pow10(exp);
    match [1.0, 2.0, 2.5, 5.0]
        .into_iter()
        .find(|m| f <= m * (1.0 + 1e-9))
    {
        Some(m) => (m, exp),
        None => (1.0, exp + 1),
    }
}

/// 10^e, exact for the powers a double can represent exactly.
fn pow10(e: i32) -> f64 {
    if e >= 0 {
        10f64.powi(e)
    } else {
        1.0 / 10f64.powi(-e)
    }
}

/// `k · m · 10^e`, computed so that decimal steps come out as close as possible.
fn tick_value(k: i64, m: f64, e: i32) -> f64 {
    if e >= 0 {
        k as f64 * m * pow10(e)
    } else {
        k as f64 * m / pow10(-e)
    }
}

fn linear_axis(lo: f64, hi: f64, fixed_hi: bool, target: usize) -> Axis {
    let (mut lo, mut hi) = (
        lo.clamp(-VALUE_LIMIT, VALUE_LIMIT),
        hi.clamp(-VALUE_LIMIT, VALUE_LIMIT),
    );
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    let mag = lo.abs().max(hi.abs());
    if hi - lo <= mag * 1e-9 || hi - lo < 1e-280 {
        // Degenerate (one value): widen by 10% of the value, or by 1 around 0.
        let d = if mag < 1e-280 { 1.0 } else { mag * 0.1 };
        if fixed_hi {
            lo = hi - 2.0 * d;
        } else {
            let c = lo / 2.0 + hi / 2.0;
            lo = c - d;
            hi = c + d;
        }
    }
    let (m, e) = nice_step((hi - lo) / target.max(1) as f64);
    let step = tick_value(1, m, e);
    let (k0, k1) = ((lo / step + 1e-9).floor(), (hi / step - 1e-9).ceil());
    let k1 = if fixed_hi {
        (hi / step + 1e-9).floor()
    } else {
        k1
    };
    if !(step > 0.0 && k0.is_finite() && k1.is_finite() && (0.0..=1000.0).contains(&(k1 - k0))) {
        // Cannot happen for sane inputs; two labelled ends are better than nothing.
        let label = |v: f64| Some(format_fixed(v, 6));
        return Axis {
            lo,
            hi,
            ticks: vec![
                Tick {
                    pos: lo,
                    label: label(lo),
                    major: true,
                },
                Tick {
                    pos: hi,
                    label: label(hi),
                    major: true,
                },
            ],
        };
    }
    let (k0, k1) = (k0 as i64, k1 as i64);
    lo = tick_value(k0, m, e);
    if !fixed_hi {
        hi = tick_value(k1, m, e);
    }
    let sci = mag >= 1e6 || e < -4;
    let extra = i32::from(m == 2.5);
    let ticks = (k0..=k1)
        .map(|k| tick_value(k, m, e))
        .filter(|v| *v <= hi + step * 1e-9)
        .map(|v| Tick {
            pos: v,
            label: Some(if sci {
                format_sci(v, e - extra)
            } else {
                format_fixed(v, (-e + extra).max(0) as usize)
            }),
            major: true,
        })
        .collect();
    Axis { lo, hi, ticks }
}

fn log_axis(lo: f64, hi: f64, fixed_hi: bool, target: usize, fine: bool) -> Axis {
    let (mut lo, mut hi) = (lo.clamp(-400.0, 400.0), hi.clamp(-400.0, 400.0));
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    if hi - lo < 1e-9 {
        if fixed_hi {
            lo = hi - 1.0;
        } else {
            lo -= 0.5;
            hi += 0.5;
        }
    }
    lo = (lo + 1e-9).floor();
    if !fixed_hi {
        hi = (hi - 1e-9).ceil();
    }
    if hi - lo < 1e-9 {
        lo = hi - 1.0;
    }
    let decades = (hi - lo).ceil().max(1.0);
    let every = (decades / target.max(1) as f64).ceil().max(1.0) as i64;
    let (d0, d1) = (lo as i64, hi.floor() as i64);
    let minor = every == 1 && decades <= 8.0;
    let fine = fine && every == 1 && decades <= 2.0;
    let mut ticks = Vec::new();
    for k in d0..=d1 {
        for mantissa in 1..=9u32 {
            let pos = k as f64 + f64::from(mantissa).log10();
            if pos > hi + 1e-9 {
                break;
            }
            if mantissa == 1 {
                if (k - d0) % every == 0 {
                    ticks.push(Tick {
                        pos,
                        label: Some(format_power(1, k)),
                        major: true,
                    });
                }
            } else if fine && (mantissa == 2 || mantissa == 5) {
                ticks.push(Tick {
                    pos,
                    label: Some(format_power(mantissa, k)),
                    major: true,
                });
            } else if minor {
                ticks.push(Tick {
                    pos,
                    label: None,
                    major: false,
                });
            }
        }
    }
    Axis { lo, hi, ticks }
}

/// `m · 10^k` as a plain number where that stays short, else as `me k`.
fn format_power(m: u32, k: i64) -> String {
    if (-4..=5).contains(&k) {
        let v = f64::from(m) * pow10(k as i32);
        format_fixed(v, (-k).max(0) as usize)
    } else {
        format!("{m}e{k}")
    }
}

/// Fixed-point with `decimals` places; never "-0".
fn format_fixed(v: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals.min(12), v);
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// Scientific notation precise to `10^step_exp`, mantissa zeros trimmed: "2.5e-6", "1e6", "0".
fn format_sci(v: f64, step_exp: i32) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let exp = v.abs().log10().floor() as i32;
    let digits = (exp - step_exp).clamp(0, 15) as usize;
    let s = format!("{:.*e}", digits, v);
    match s.split_once('e') {
        Some((mant, e)) if mant.contains('.') => {
            let mant = mant.trim_end_matches('0').trim_end_matches('.');
            format!("{mant}e{e}")
        }
        _ => s,
    }
}

// ---------------------------------------------------------------------------
// SVG back end
// ---------------------------------------------------------------------------

/// A coordinate with at most two decimals, trailing zeros dropped.
fn num(v: f64) -> String {
    let mut s = format!("{v:.2}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn paint(attr: &str, c: Color) -> String {
    if c.a < 1.0 {
        format!(r#" {attr}="{}" {attr}-opacity="{}""#, c.hex(), num(c.a))
    } else {
        format!(r#" {attr}="{}""#, c.hex())
    }
}

const CLIP_ID: &str = "plot-area";

fn render_svg(scene: &Scene) -> String {
    let (w, h) = (scene.width, scene.height);
    let mut s = String::with_capacity(16 * 1024);
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}">"#
    );
    if !scene.title.is_empty() {
        let _ = writeln!(s, "<title>{}</title>", escape(&scene.title));
    }
    let c = scene.clip;
    let _ = writeln!(
        s,
        r#"<defs><clipPath id="{CLIP_ID}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
        num(c.x0),
        num(c.y0),
        num(c.x1 - c.x0),
        num(c.y1 - c.y0)
    );
    let clip_attr = |clip: bool| {
        if clip {
            format!(r#" clip-path="url(#{CLIP_ID})""#)
        } else {
            String::new()
        }
    };
    for prim in &scene.prims {
        match prim {
            Prim::Rect {
                x,
                y,
                w,
                h,
                fill,
                stroke,
            } => {
                let fill = fill.map_or(r#" fill="none""#.to_string(), |c| paint("fill", c));
                let stroke = stroke.map_or(String::new(), |(c, sw)| {
                    format!(r#"{} stroke-width="{}""#, paint("stroke", c), num(sw))
                });
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{}"{fill}{stroke}/>"#,
                    num(*x),
                    num(*y),
                    num(*w),
                    num(*h)
                );
            }
            Prim::Path {
                points,
                stroke,
                clip,
            } => {
                let pts: Vec<String> = points
                    .iter()
                    .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
                    .collect();
                let cap = match stroke.cap {
                    Cap::Butt => "butt",
                    Cap::Round => "round",
                    Cap::Square => "square",
                };
                let dash = stroke.dash.map_or(String::new(), |(on, off)| {
                    format!(r#" stroke-dasharray="{} {}""#, num(on), num(off))
                });
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none"{} stroke-width="{}" stroke-linecap="{cap}" stroke-linejoin="round"{dash}{}/>"#,
                    pts.join(" "),
                    paint("stroke", stroke.color),
                    num(stroke.width),
                    clip_attr(*clip)
                );
            }
            Prim::Circle {
                cx,
                cy,
                r,
                fill,
                clip,
            } => {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="{}"{}{}/>"#,
                    num(*cx),
                    num(*cy),
                    num(*r),
                    paint("fill", *fill),
                    clip_attr(*clip)
                );
            }
            Prim::Text(t) => {
                let anchor = match t.anchor {
                    Anchor::Start => "",
                    Anchor::Middle => r#" text-anchor="middle""#,
                    Anchor::End => r#" text-anchor="end""#,
                };
                let rotate = if t.vertical {
                    format!(r#" transform="rotate(-90 {} {})""#, num(t.x), num(t.y))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{}" font-size="{}"{}{anchor}{rotate}>{}</text>"#,
                    num(t.x),
                    num(t.y),
                    num(t.size),
                    paint("fill", t.color),
                    escape(&t.text)
                );
            }
            Prim::Group(Some(name)) => {
                let _ = writeln!(s, r#"<g class="series">"#);
                if !name.is_empty() {
                    let _ = writeln!(s, "<title>{}</title>", escape(name));
                }
            }
            Prim::Group(None) => s.push_str("</g>\n"),
        }
    }
    s.push_str("</svg>\n");
    s
}

// ---------------------------------------------------------------------------
// Raster back end
// ---------------------------------------------------------------------------

/// Pixel rectangle `[x0, x1) × [y0, y1)`.
#[derive(Debug, Clone, Copy)]
struct PixRect {
    x0: i64,
    y0: i64,
    x1: i64,
    y1: i64,
}

impl PixRect {
    fn intersect(self, o: PixRect) -> PixRect {
        PixRect {
            x0: self.x0.max(o.x0),
            y0: self.y0.max(o.y0),
            x1: self.x1.min(o.x1),
            y1: self.y1.min(o.y1),
        }
    }

    fn is_empty(&self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// The pixels touched by the float box `[x0, x1] × [y0, y1]`.
    fn around(x0: f64, y0: f64, x1: f64, y1: f64) -> PixRect {
        let c = |v: f64| v.clamp(-1e9, 1e9) as i64;
        PixRect {
            x0: c(x0.floor()),
            y0: c(y0.floor()),
            x1: c(x1.ceil()) + 1,
            y1: c(y1.ceil()) + 1,
        }
    }
}

/// An 8-bit RGB image, blended in sRGB space.
struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

fn clamp01(v: f64) -> f64 {
    v.clamp(0.0, 1.0)
}

impl Canvas {
    fn new(width: u32, height: u32) -> Canvas {
        let (width, height) = (width as usize, height as usize);
        Canvas {
            width,
            height,
            pixels: vec![255; width * height * 3],
        }
    }

    fn bounds(&self) -> PixRect {
        PixRect {
            x0: 0,
            y0: 0,
            x1: self.width as i64,
            y1: self.height as i64,
        }
    }

    fn blend(&mut self, x: i64, y: i64, c: Color, coverage: f64) {
        let a = clamp01(coverage) * c.a;
        if a <= 0.0 || x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return;
        }
        let i = (y as usize * self.width + x as usize) * 3;
        for (k, src) in [c.r, c.g, c.b].into_iter().enumerate() {
            let d = f64::from(self.pixels[i + k]);
            self.pixels[i + k] = (d + (f64::from(src) - d) * a).round() as u8;
        }
    }

    fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64, c: Color) {
        let area = PixRect::around(x, y, x + w, y + h).intersect(self.bounds());
        for py in area.y0..area.y1 {
            let cy = clamp01((y + h).min(py as f64 + 1.0) - y.max(py as f64));
            for px in area.x0..area.x1 {
                let cx = clamp01((x + w).min(px as f64 + 1.0) - x.max(px as f64));
                self.blend(px, py, c, cx * cy);
            }
        }
    }

    fn disk(&mut self, cx: f64, cy: f64, r: f64, c: Color, clip: PixRect) {
        if r <= 0.0 {
            return;
        }
        let area =
            PixRect::around(cx - r - 1.0, cy - r - 1.0, cx + r + 1.0, cy + r + 1.0).intersect(clip);
        for py in area.y0..area.y1 {
            for px in area.x0..area.x1 {
                let d = (px as f64 + 0.5 - cx).hypot(py as f64 + 0.5 - cy);
                let cov = clamp01(r + 0.5 - d).min(r * r * std::f64::consts::PI);
                self.blend(px, py, c, cov);
            }
        }
    }

    /// Strokes a polyline: the stroke's cap at the ends (and dash ends), round joins.
    fn stroke(&mut self, pts: &[(f64, f64)], st: &Stroke, clip: PixRect) {
        if pts.is_empty() || st.width <= 0.0 {
            return;
        }
        let hw = st.width / 2.0;
        let pieces = match st.dash {
            Some((on, off)) if on > 0.0 && off > 0.0 => dash_polyline(pts, on, off),
            _ => vec![pts.to_vec()],
        };
        let (mut lx, mut ly, mut hx, mut hy) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for &(x, y) in pieces.iter().flatten() {
            lx = lx.min(x);
            ly = ly.min(y);
            hx = hx.max(x);
            hy = hy.max(y);
        }
        let g = hw + 1.0;
        let area = PixRect::around(lx - g, ly - g, hx + g, hy + g).intersect(clip);
        if area.is_empty() {
            return;
        }
        let mut mask = Mask {
            area,
            cov: vec![0.0; ((area.x1 - area.x0) * (area.y1 - area.y0)) as usize],
        };
        for piece in &pieces {
            let n = piece.len();
            if n == 1 {
                mask.segment(piece[0], piece[0], hw, st.cap, st.cap);
            }
            for (i, w) in piece.windows(2).enumerate() {
                let start = if i == 0 { st.cap } else { Cap::Round };
                let end = if i + 2 == n { st.cap } else { Cap::Round };
                mask.segment(w[0], w[1], hw, start, end);
            }
        }
        let mut k = 0;
        for py in area.y0..area.y1 {
            for px in area.x0..area.x1 {
                let m = mask.cov[k];
                k += 1;
                if m > 0.0 {
                    self.blend(px, py, st.color, f64::from(m));
                }
            }
        }
    }

    fn text(&mut self, fonts: &Fonts, t: &Text) {
        let width = fonts.width(&t.text, t.size);
        let shift = match t.anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => width / 2.0,
            Anchor::End => width,
        };
        // Whole-pixel origin (crisp baselines); glyphs advance by fractions.
        let (ox, oy) = if t.vertical {
            (t.x.round() as i64, (t.y + shift).round() as i64)
        } else {
            ((t.x - shift).round() as i64, t.y.round() as i64)
        };
        let scale = PxScale::from((t.size * fonts.height_per_em) as f32);
        let per_unit = t.size / fonts.units_per_em;
        let font = &fonts.font;
        let mut pen = 0.0f64;
        let mut prev = None;
        for c in t.text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += f64::from(font.kern_unscaled(p, id)) * per_unit;
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(scale, point(pen as f32, 0.0));
            pen += f64::from(font.h_advance_unscaled(id)) * per_unit;
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            let (bx, by) = (b.min.x as i64, b.min.y as i64);
            outline.draw(|gx, gy, cov| {
                let (lx, ly) = (bx + i64::from(gx), by + i64::from(gy));
                let (x, y) = if t.vertical {
                    (ox + ly, oy - lx - 1)
                } else {
                    (ox + lx, oy + ly)
                };
                self.blend(x, y, t.color, f64::from(cov));
            });
        }
    }
}

/// Coverage accumulated over one stroke (maximum, so overlaps don't darken).
struct Mask {
    area: PixRect,
    cov: Vec<f32>,
}

impl Mask {
    fn segment(&mut self, a: (f64, f64), b: (f64, f64), hw: f64, start: Cap, end: Cap) {
        let cover = |d: f64| clamp01(hw + 0.5 - d).min(2.0 * hw);
        let (mut a, mut b, mut start, mut end) = (a, b, start, end);
        let len0 = (b.0 - a.0).hypot(b.1 - a.1);
        if len0 < 1e-9 {
            // A zero-length piece shows only as a round cap (like SVG).
            if start == Cap::Round || end == Cap::Round {
                self.each(a, a, hw, |x, y| cover((x - a.0).hypot(y - a.1)));
            }
            return;
        }
        let (ux, uy) = ((b.0 - a.0) / len0, (b.1 - a.1) / len0);
        if start == Cap::Square {
            a = (a.0 - ux * hw, a.1 - uy * hw);
            start = Cap::Butt;
        }
        if end == Cap::Square {
            b = (b.0 + ux * hw, b.1 + uy * hw);
            end = Cap::Butt;
        }
        let len = (b.0 - a.0).hypot(b.1 - a.1);
        self.each(a, b, hw, |x, y| {
            let (rx, ry) = (x - a.0, y - a.1);
            let t = rx * ux + ry * uy;
            if t < 0.0 && start == Cap::Round {
                return cover(rx.hypot(ry));
            }
            if t > len && end == Cap::Round {
                return cover((x - b.0).hypot(y - b.1));
            }
            let mut c = cover((rx * uy - ry * ux).abs());
            if start == Cap::Butt {
                c *= clamp01(t + 0.5);
            }
            if end == Cap::Butt {
                c *= clamp01(len - t + 0.5);
            }
            c
        });
    }

    /// Applies `f(pixel centre)` to the pixels near segment `a`–`b`.
    fn each(&mut self, a: (f64, f64), b: (f64, f64), hw: f64, f: impl Fn(f64, f64) -> f64) {
        let g = hw + 1.0;
        let r = PixRect::around(
            a.0.min(b.0) - g,
            a.1.min(b.1) - g,
            a.0.max(b.0) + g,
            a.1.max(b.1) + g,
        )
        .intersect(self.area);
        let stride = (self.area.x1 - self.area.x0) as usize;
        for py in r.y0..r.y1 {
            let row = (py - self.area.y0) as usize * stride;
            for px in r.x0..r.x1 {
                let c = f(px as f64 + 0.5, py as f64 + 0.5) as f32;
                let m = &mut self.cov[row + (px - self.area.x0) as usize];
                if c > *m {
                    *m = c;
                }
            }
        }
    }
}

/// Splits a polyline into its dashes (`on` drawn, `off` skipped, from the start).
fn dash_polyline(pts: &[(f64, f64)], on: f64, off: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = vec![pts[0]];
    let mut drawing = true;
    let mut left = on;
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = (b.0 - a.0).hypot(b.1 - a.1);
        let mut pos = 0.0;
        while len - pos > left {
            pos += left;
            let t = pos / len;
            let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            if drawing {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![p];
            }
            drawing = !drawing;
            left = if drawing { on } else { off };
        }
        left -= len - pos;
        if drawing {
            cur.push(b);
        }
    }
    if drawing && cur.len() >= 2 {
        out.push(cur);
    }
    out
}

fn rasterise(scene: &Scene, fonts: &Fonts) -> Canvas {
    let mut canvas = Canvas::new(scene.width, scene.height);
    let all = canvas.bounds();
    let c = scene.clip;
    let plot = PixRect {
        x0: c.x0 as i64,
        y0: c.y0 as i64,
        x1: c.x1 as i64,
        y1: c.y1 as i64,
    }
    .intersect(all);
    let clip_of = |clip: bool| if clip { plot } else { all };
    for prim in &scene.prims {
        match prim {
            Prim::Rect {
                x,
                y,
                w,
                h,
                fill,
                stroke,
            } => {
                if let Some(f) = fill {
                    canvas.fill_rect(*x, *y, *w, *h, *f);
                }
                if let Some((color, width)) = stroke {
                    let (x1, y1) = (x + w, y + h);
                    let ring = [(*x, *y), (x1, *y), (x1, y1), (*x, y1), (*x, *y)];
                    let st = Stroke {
                        color: *color,
                        width: *width,
                        cap: Cap::Square,
                        dash: None,
                    };
                    canvas.stroke(&ring, &st, all);
                }
            }
            Prim::Path {
                points,
                stroke,
                clip,
            } => canvas.stroke(points, stroke, clip_of(*clip)),
            Prim::Circle {
                cx,
                cy,
                r,
                fill,
                clip,
            } => canvas.disk(*cx, *cy, *r, *fill, clip_of(*clip)),
            Prim::Text(t) => canvas.text(fonts, t),
            Prim::Group(_) => {}
        }
    }
    canvas
}

fn encode_png(canvas: &Canvas) -> Result<Vec<u8>, PlotError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, canvas.width as u32, canvas.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::High);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&canvas.pixels)?;
        writer.finish()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    /// A fresh scratch directory for one test.
    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("acp-plot-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    /// Decodes a PNG and returns (width, height, RGB bytes).
    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        assert_eq!(bytes[..8], PNG_SIGNATURE);
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().expect("PNG header");
        let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
        let info = reader.next_frame(&mut buf).expect("PNG frame");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn bowl() -> Chart {
        let theory: Vec<(f64, f64)> = (2..=98)
            .map(|i| {
                let r = f64::from(i) / 100.0;
                (r, 1.0 + 1.0 / r + r * r / (1.0 - r))
            })
            .collect();
        let sim = theory
            .iter()
            .step_by(10)
            .map(|&(x, y)| (x, y * 1.03))
            .collect();
        let mut chart = Chart::new("Age vs rate", "rate", "age (s)")
            .with_series(Series::line("theory", theory))
            .with_series(Series::scatter("simulated", sim))
            .with_series(Series::dashed("bound", vec![(0.0, 2.0), (1.0, 2.0)]));
        chart.y_max = Some(20.0);
        chart
    }

    fn count_color(rgb: &[u8], c: Color) -> usize {
        rgb.chunks_exact(3)
            .filter(|p| p[0] == c.r && p[1] == c.g && p[2] == c.b)
            .count()
    }

    #[test]
    fn write_both_creates_valid_png_and_svg() {
        let dir = scratch_dir("both");
        let mut chart = bowl();
        chart.width = 640;
        chart.height = 400;
        let stem = dir.join("nested").join("age.v2");
        chart.write_both(&stem).unwrap();

        let png_bytes = fs::read(dir.join("nested/age.v2.png")).unwrap();
        let (w, h, rgb) = decode(&png_bytes);
        assert_eq!((w, h), (640, 400));
        assert_eq!(rgb.len(), 640 * 400 * 3);
        assert_eq!(rgb[..3], [255, 255, 255], "white background");
        assert!(
            count_color(&rgb, series_color(0)) > 100,
            "theory line drawn"
        );
        assert!(count_color(&rgb, series_color(1)) > 50, "points drawn");

        let svg = fs::read_to_string(dir.join("nested/age.v2.svg")).unwrap();
        assert!(svg.starts_with("<?xml"));
        assert!(svg.contains(r#"width="640" height="400""#));
        assert!(svg.ends_with("</svg>\n"));
        for name in [
            "theory",
            "simulated",
            "bound",
            "Age vs rate",
            "rate",
            "age (s)",
        ] {
            assert!(svg.contains(&format!(">{name}<")), "SVG names {name}");
        }
        assert!(svg.contains("stroke-dasharray"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_png_and_write_svg_write_exactly_the_given_paths() {
        let dir = scratch_dir("single");
        let chart = bowl();
        chart.write_png(dir.join("a.png")).unwrap();
        chart.write_svg(dir.join("b.svg")).unwrap();
        assert_eq!(
            fs::read(dir.join("a.png")).unwrap(),
            chart.to_png().unwrap()
        );
        assert_eq!(
            fs::read_to_string(dir.join("b.svg")).unwrap(),
            chart.to_svg().unwrap()
        );
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_is_deterministic() {
        let dir = scratch_dir("determinism");
        let chart = bowl();
        chart.write_both(dir.join("one")).unwrap();
        chart.clone().write_both(dir.join("two")).unwrap();
        for ext in ["png", "svg"] {
            let one = fs::read(dir.join(format!("one.{ext}"))).unwrap();
            let two = fs::read(dir.join(format!("two.{ext}"))).unwrap();
            assert!(one == two, "{ext} differs between two writes");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_inputs_render_without_panicking() {
        let nan = f64::NAN;
        let inf = f64::INFINITY;
        let one = |points: Vec<(f64, f64)>, style| Chart {
            series: vec![Series::new("s", style, points)],
            ..Chart::default()
        };
        let mut charts = vec![
            Chart::default(),
            one(vec![], Style::Line),
            one(vec![(1.0, 2.0)], Style::Line),
            one(vec![(1.0, 2.0)], Style::Points),
            one(vec![(1.0, 2.0)], Style::DashedLine),
            one(vec![(0.0, 0.0); 5], Style::Line),
            one(vec![(3.0, 5.0), (3.0, 5.0), (3.0, 5.0)], Style::DashedLine),
            one(vec![(2.0, 0.0), (2.0, 1.0), (2.0, 7.0)], Style::Line),
            one(vec![(0.0, 4.0), (1.0, 4.0), (9.0, 4.0)], Style::Line),
            one(
                vec![(nan, 1.0), (1.0, nan), (inf, 0.0), (0.0, -inf)],
                Style::Line,
            ),
            one(
                vec![(-1e308, 1e308), (1e308, -1e308), (0.0, 0.0)],
                Style::Line,
            ),
            one(
                vec![(f64::MAX, f64::MIN), (f64::MIN, f64::MAX)],
                Style::Points,
            ),
            one(vec![(1e-310, 1e-310), (2e-310, 3e-310)], Style::Line),
            one(vec![(1.0, 1.0 + 1e-15), (1.0 + 1e-15, 1.0)], Style::Line),
            one(vec![(0.0, 1e9), (1.0, 1e9 + 1.0)], Style::Line),
            one(vec![(0.0, 1e-7), (1.0, 3e-7)], Style::Line),
            one(
                (0..10_000)
                    .map(|i| (f64::from(i), f64::from(i % 7)))
                    .collect(),
                Style::DashedLine,
            ),
        ];
        // Logarithmic axes: non-positive data, a single value, a huge range.
        for points in [
            vec![(0.0, -1.0), (1.0, 0.0)],
            vec![(0.0, 5.0)],
            vec![(0.0, 1e-300), (1.0, 1e300)],
            vec![(0.0, 0.3), (1.0, 0.4)],
        ] {
            let mut c = one(points, Style::Line);
            c.log_y = true;
            charts.push(c);
        }
        // y_max: below all data, NaN, negative on a log axis, equal to the data.
        for (y_max, log) in [
            (Some(-5.0), false),
            (Some(nan), false),
            (Some(-1.0), true),
            (Some(2.0), false),
        ] {
            let mut c = one(vec![(0.0, 2.0), (1.0, 3.0)], Style::Line);
            c.y_max = y_max;
            c.log_y = log;
            charts.push(c);
        }
        // Smallest size with long texts, and many series.
        let long = "a very long label that cannot possibly fit ".repeat(5);
        charts.push(Chart {
            title: long.clone(),
            x_label: long.clone(),
            y_label: long.clone(),
            series: vec![Series::line(
                long.clone(),
                vec![(0.0, 1.0), (1.0, 123456.0)],
            )],
            width: MIN_SIZE,
            height: MIN_SIZE,
            ..Chart::default()
        });
        charts.push(Chart {
            title: "tab\tnew\nline\u{7}bell — “quotes” & <tags> 日本".into(),
            series: (0..25)
                .map(|i| {
                    Series::line(
                        format!("series {i}"),
                        vec![(0.0, f64::from(i)), (1.0, f64::from(i))],
                    )
                })
                .collect(),
            ..Chart::default()
        });

        for (i, chart) in charts.iter().enumerate() {
            let png_bytes = chart.to_png().unwrap_or_else(|e| panic!("chart {i}: {e}"));
            let (w, h, _) = decode(&png_bytes);
            assert_eq!((w, h), (chart.width, chart.height), "chart {i}");
            let svg = chart.to_svg().unwrap();
            assert!(svg.ends_with("</svg>\n"), "chart {i}");
            assert!(
                !svg.contains("NaN") && !svg.contains("inf"),
                "chart {i}: {svg}"
            );
            assert!(
                !svg.chars().any(|c| c.is_control() && c != '\n'),
                "chart {i}"
            );
        }
    }

    #[test]
    fn size_out_of_range_is_an_error() {
        for (width, height) in [(0, 500), (800, MIN_SIZE - 1), (MAX_SIZE + 1, 500)] {
            let chart = Chart {
                width,
                height,
                ..bowl()
            };
            assert!(matches!(chart.to_png(), Err(PlotError::Size { .. })));
            assert!(matches!(chart.to_svg(), Err(PlotError::Size { .. })));
        }
    }

    #[test]
    fn unwritable_path_is_an_io_error() {
        let dir = scratch_dir("io");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plain-file");
        fs::write(&file, b"x").unwrap();
        let err = bowl().write_png(file.join("chart.png")).unwrap_err();
        assert!(matches!(err, PlotError::Io { .. }), "{err}");
        assert!(err.to_string().contains("plain-file"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_texts_are_shortened_to_fit() {
        let fonts = Fonts::load().unwrap();
        let long = "x".repeat(100_000);
        let short = truncate_to(&fonts, &long, 12.0, 200.0);
        assert!(short.ends_with('…'));
        assert!(fonts.width(&short, 12.0) <= 200.0);
        assert!(fonts.width(&short, 12.0) > 180.0);
        assert_eq!(truncate_to(&fonts, "fits", 12.0, 200.0), "fits");
        assert_eq!(truncate_to(&fonts, "abc", 12.0, 1.0), "…");

        // Title and labels are shortened; the series' tooltip keeps the full name.
        let chart = Chart::new(long.clone(), long.clone(), long.clone())
            .with_series(Series::line(long.clone(), vec![(0.0, 0.0), (1.0, 1.0)]));
        let svg = chart.to_svg().unwrap();
        assert_eq!(svg.matches(&long).count(), 1);
        assert!(svg.len() < long.len() + 20_000, "{} bytes", svg.len());
    }

    #[test]
    fn svg_escapes_text() {
        let chart = Chart::new("a<b & \"c\"", "x", "y")
            .with_series(Series::line("it's <mine>", vec![(0.0, 0.0), (1.0, 1.0)]));
        let svg = chart.to_svg().unwrap();
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot;"));
        assert!(svg.contains("it&apos;s &lt;mine&gt;"));
        assert!(!svg.contains("<mine>"));
    }

    #[test]
    fn non_finite_points_break_lines() {
        let chart = Chart::default().with_series(Series::line(
            "s",
            vec![
                (0.0, 0.0),
                (1.0, 1.0),
                (f64::NAN, 2.0),
                (2.0, 2.0),
                (3.0, 3.0),
            ],
        ));
        let fonts = Fonts::load().unwrap();
        let scene = build_scene(&chart, &fonts).unwrap();
        let paths = scene
            .prims
            .iter()
            .filter(|p| matches!(p, Prim::Path { clip: true, .. }))
            .count();
        assert_eq!(paths, 2);
    }

    #[test]
    fn y_max_clips_and_sets_the_top_tick() {
        let mut chart = Chart::default().with_series(Series::line(
            "s",
            vec![(0.0, 1.0), (1.0, 1000.0), (2.0, 3.0)],
        ));
        chart.y_max = Some(10.0);
        let fonts = Fonts::load().unwrap();
        let scene = build_scene(&chart, &fonts).unwrap();
        let labels: Vec<&str> = scene
            .prims
            .iter()
            .filter_map(|p| match p {
                Prim::Text(t) if t.anchor == Anchor::End => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(labels.last(), Some(&"10"), "{labels:?}");
        let bound = scene.clip.grow(10.0);
        for p in &scene.prims {
            if let Prim::Path {
                points, clip: true, ..
            } = p
            {
                assert!(points.iter().all(|q| bound.contains(*q)), "{points:?}");
            }
        }
    }

    #[test]
    fn y_max_above_the_data_changes_nothing() {
        let mut chart =
            Chart::default().with_series(Series::line("s", vec![(0.0, 1.0), (1.0, 3.7)]));
        let plain = chart.to_svg().unwrap();
        chart.y_max = Some(100.0);
        assert_eq!(chart.to_svg().unwrap(), plain);
    }

    #[test]
    fn legend_goes_where_the_data_is_not() {
        // A diagonal through the bottom left and top right and a point in the
        // top left: the bottom right is free.
        let chart = Chart::default()
            .with_series(Series::line("a", vec![(0.0, 0.0), (1.0, 10.0)]))
            .with_series(Series::scatter("b", vec![(0.05, 9.5)]));
        let fonts = Fonts::load().unwrap();
        let scene = build_scene(&chart, &fonts).unwrap();
        let legend = scene.prims.iter().find_map(|p| match p {
            Prim::Rect {
                x,
                y,
                stroke: Some((c, _)),
                ..
            } if *c == LEGEND_BORDER => Some((*x, *y)),
            _ => None,
        });
        let (x, y) = legend.expect("legend drawn");
        let mid = (
            (scene.clip.x0 + scene.clip.x1) / 2.0,
            (scene.clip.y0 + scene.clip.y1) / 2.0,
        );
        assert!(x > mid.0 && y > mid.1, "legend at {x},{y}");
    }

    #[test]
    fn no_legend_without_names() {
        let chart = Chart::default().with_series(Series::line("", vec![(0.0, 0.0), (1.0, 1.0)]));
        let fonts = Fonts::load().unwrap();
        let scene = build_scene(&chart, &fonts).unwrap();
        assert!(!scene
            .prims
            .iter()
            .any(|p| matches!(p, Prim::Rect { stroke: Some((c, _)), .. } if *c == LEGEND_BORDER)));
    }

    fn labels(axis: &Axis) -> Vec<&str> {
        axis.ticks
            .iter()
            .filter_map(|t| t.label.as_deref())
            .collect()
    }

    #[test]
    fn linear_ticks_are_nice() {
        let a = linear_axis(0.03, 0.97, false, 5);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        assert_eq!(labels(&a), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);

        let a = linear_axis(-3.0, 7.0, false, 5);
        assert_eq!(labels(&a), ["-4", "-2", "0", "2", "4", "6", "8"]);

        let a = linear_axis(0.0, 1.0, false, 4);
        assert_eq!(labels(&a), ["0.00", "0.25", "0.50", "0.75", "1.00"]);

        let a = linear_axis(1.0, 17.0, true, 5);
        assert_eq!(a.hi, 17.0, "fixed top stays");
        assert_eq!(labels(&a), ["0", "5", "10", "15"]);

        let a = linear_axis(0.0, 3e6, false, 3);
        assert_eq!(labels(&a), ["0", "1e6", "2e6", "3e6"]);

        let a = linear_axis(0.0, 3e-5, false, 3);
        assert_eq!(labels(&a), ["0", "1e-5", "2e-5", "3e-5"]);

        // One value: widened by 10% around it (1 around zero).
        let a = linear_axis(5.0, 5.0, false, 5);
        assert!(a.lo < 5.0 && a.hi > 5.0);
        let a = linear_axis(0.0, 0.0, false, 5);
        assert!(a.lo <= -1.0 && a.hi >= 1.0);
        assert!(a.ticks.iter().all(|t| t.label.as_deref() != Some("-0")));
    }

    #[test]
    fn log_ticks_are_decades() {
        let a = log_axis(3f64.log10(), 2000f64.log10(), false, 8, true);
        assert_eq!((a.lo, a.hi), (0.0, 4.0));
        assert_eq!(labels(&a), ["1", "10", "100", "1000", "10000"]);
        assert!(a.ticks.iter().any(|t| !t.major), "minor ticks");

        let a = log_axis(-2.0, 0.0, false, 8, true);
        assert_eq!(
            labels(&a),
            ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"]
        );

        let a = log_axis(-30.0, 30.0, false, 6, true);
        assert!(labels(&a).len() <= 7);
        assert!(labels(&a).contains(&"1e-30") && labels(&a).contains(&"1e30"));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(format_fixed(-0.0001, 2), "0.00");
        assert_eq!(format_fixed(-1.5, 1), "-1.5");
        assert_eq!(format_sci(2.5e-6, -7), "2.5e-6");
        assert_eq!(format_sci(3e6, 6), "3e6");
        assert_eq!(format_power(1, -5), "1e-5");
        assert_eq!(format_power(2, -2), "0.02");
        assert_eq!(format_power(5, 3), "5000");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(3.0), "3");
    }

    #[test]
    fn series_colours_are_distinct() {
        let colours: Vec<Color> = (0..40).map(series_color).collect();
        for (i, a) in colours.iter().enumerate() {
            for b in &colours[i + 1..] {
                assert_ne!((a.r, a.g, a.b), (b.r, b.g, b.b));
            }
        }
    }

    #[test]
    fn clipping_splits_polylines() {
        let r = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 10.0,
            y1: 10.0,
        };
        let pieces = clip_polyline(&[(1.0, 1.0), (5.0, 20.0), (9.0, 1.0)], r);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0][0], (1.0, 1.0));
        assert!((pieces[0][1].1 - 10.0).abs() < 1e-9);
        assert!(clip_polyline(&[(20.0, 20.0), (30.0, 30.0)], r).is_empty());
    }

    #[test]
    fn dashes_follow_the_pattern() {
        let dashes = dash_polyline(&[(0.0, 0.0), (26.0, 0.0)], 6.0, 4.0);
        let spans: Vec<(f64, f64)> = dashes.iter().map(|d| (d[0].0, d[d.len() - 1].0)).collect();
        assert_eq!(spans, [(0.0, 6.0), (10.0, 16.0), (20.0, 26.0)]);
    }
}
