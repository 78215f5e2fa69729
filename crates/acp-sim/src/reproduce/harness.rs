//! The one harness every reproduction goes through.
//!
//! A reproduction is a [`Declaration`]: the runs it needs as data (a [`Plan`] of [`Job`]s, each
//! a scenario with its seed and controller, or an oracle search over fixed rates), how one run is
//! reduced to a measurement, how the measurements become rows (one serde type per reproduction,
//! units in its field names, the papers' numbers in `paper_*` fields beside ours), where those
//! published numbers come from ([`Source`]), the tables ([`View`]) and charts ([`Chart`]) to
//! make of the rows. A run is a pure function of its job (scenario, seed, controller) and of the
//! program's version, so jobs can be run anywhere in any order.
//!
//! [`Reproduction::run`] executes a plan: the simulation jobs in parallel (one [`Cancel`] handle
//! for all of them: once it is cancelled, jobs not yet started are skipped and jobs under way
//! finish), then the oracle searches one after another, then the jobs a [`Lab`] may run, one at
//! a time. The declaration turns what was done into rows, and the result is a [`Report`] whose
//! rows are JSON objects with the row type's fields in its order: every writer (the text table,
//! CSV, JSON, markdown, charts, the Python binding) reads those, so a quantity has one name
//! everywhere. [`registry`](super::registry) lists the reproductions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use acp_core::controller::ControllerKind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::report::SimResult;
use crate::runs::{Local, Run, Runner};
use crate::scenario::Scenario;
use crate::sweep::{self, mean_ci95, parallel, Cancel, Search, SweepPoint, Tally};

/// What a caller may choose about a reproduction (the `acp reproduce` flags, the Python
/// keywords); each reproduction reads the options it has and ignores the others. Its serde form
/// (controllers by name, no thread count) travels with a study to a cluster's workers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// The first seed.
    pub seed: u64,
    /// Seeds per point (the reproduction's default if `None`).
    pub seeds: Option<u64>,
    /// Simulated seconds per run (the reproduction's default if `None`).
    pub secs: Option<u64>,
    /// Simulated updates per point (fig7).
    pub updates: Option<u64>,
    /// Update payload in bytes (the reproduction's default if `None`).
    pub payload: Option<u32>,
    /// Numbers of clients (sources) to run (contention-tcp, orbit, thesis-3-9; all of the
    /// papers' if empty).
    pub clients: Vec<usize>,
    /// Scenario ids to run (controllers, fairness; all if empty).
    pub scenarios: Vec<String>,
    /// Controllers to evaluate (controllers, orbit, thesis-3-9; the default set if empty).
    #[serde(with = "controller_names")]
    pub controllers: Vec<ControllerKind>,
    /// Quarter-length runs (controllers; a smoke test).
    pub quick: bool,
    /// Evaluate on this many random paths drawn with `seed` instead of the hand-made scenarios
    /// (controllers; `super::random_paths`).
    pub random: Option<usize>,
    /// The whole-medium WiFi reception model instead of per-receiver reception (fig15, fig3-16,
    /// contention-tcp, thesis-3-10; `super::access::WHOLE_MEDIUM`).
    pub whole_medium: bool,
    /// Worker threads for the simulation runs (on this machine).
    #[serde(skip)]
    pub threads: usize,
}

/// Controllers by the names `acp` takes (`acp+`, `fixed:20`).
mod controller_names {
    use acp_core::controller::ControllerKind;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[ControllerKind], ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(v.iter().map(ToString::to_string))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<ControllerKind>, D::Error> {
        Vec::<String>::deserialize(de)?
            .iter()
            .map(|c| c.parse().map_err(D::Error::custom))
            .collect()
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            seed: 1,
            seeds: None,
            secs: None,
            updates: None,
            payload: None,
            clients: Vec::new(),
            scenarios: Vec::new(),
            controllers: Vec::new(),
            quick: false,
            random: None,
            whole_medium: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl Options {
    /// The seeds: `seed` and the next ones, `seeds` of them (`default` if not given).
    pub fn seed_list(&self, default: u64) -> Vec<u64> {
        let n = self.seeds.unwrap_or(default);
        (0..n).map(|k| self.seed.saturating_add(k)).collect()
    }
}

/// What one job computes.
#[derive(Debug, Clone)]
pub enum Work {
    /// One run of a scenario (its seed and controllers set).
    Sim(Scenario),
    /// The best fixed rate of `base` ([`sweep::oracles`]): the best of `coarse`, then ±6 %
    /// around it, every rate run with every one of `seeds`.
    Oracle {
        /// The scenario whose update flows get the fixed rates.
        base: Scenario,
        /// The coarse stage's rates (updates/s).
        coarse: Vec<f64>,
        /// The seeds every rate runs with.
        seeds: Vec<u64>,
    },
}

/// One job of a plan: the point of the reproduction it belongs to (the declaration's index),
/// the seed, and the work.
#[derive(Debug, Clone)]
pub struct Job {
    /// The point (an index the declaration gives meaning to).
    pub point: usize,
    /// The seed (of an oracle: its first).
    pub seed: u64,
    /// What to compute.
    pub work: Work,
    /// The scenario file a [`Lab`] may run instead of the simulator (`None`: simulator only).
    pub lab: Option<String>,
}

impl Job {
    /// A simulation run of `scenario` for `point`, with the scenario's seed.
    pub fn sim(point: usize, scenario: Scenario) -> Job {
        Job {
            point,
            seed: scenario.config.seed,
            work: Work::Sim(scenario),
            lab: None,
        }
    }

    /// An oracle search for `point` ([`Work::Oracle`]).
    pub fn oracle(point: usize, base: Scenario, coarse: Vec<f64>, seeds: Vec<u64>) -> Job {
        Job {
            point,
            seed: seeds.first().copied().unwrap_or(base.config.seed),
            work: Work::Oracle {
                base,
                coarse,
                seeds,
            },
            lab: None,
        }
    }

    /// Runs of the simulator this job makes (an oracle's both stages).
    fn runs(&self) -> usize {
        match &self.work {
            Work::Sim(_) => 1,
            Work::Oracle { coarse, seeds, .. } => {
                (coarse.len() + sweep::ORACLE_FINE_RATES) * seeds.len()
            }
        }
    }
}

/// A reproduction's runs, as data.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The jobs; simulation jobs start in this order (longest first keeps the cores busy).
    pub jobs: Vec<Job>,
}

/// One flow's numbers from a run in a [`Lab`] (the simulator's [`SimResult`] has them too).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabFlow {
    /// The sender's estimate of the time-average age (s).
    pub est_age: Option<f64>,
    /// True time-average age at the receiver (s).
    pub age: Option<f64>,
    /// Mean RTT (s).
    pub rtt: Option<f64>,
    /// Bits per second delivered.
    pub throughput_bps: f64,
    /// Mean time between the ACKs reaching the sender (s).
    pub inter_ack: Option<f64>,
    /// TCP: mean payload of the data segments (bytes).
    pub segment_bytes: Option<f64>,
}

/// A testbed that runs a job's scenario file on real network stacks (`acp lab`), one at a time.
pub trait Lab: Sync {
    /// Runs `text` (the scenario file of `job`); the first flow's numbers.
    fn run(&self, job: &Job, text: &str) -> Result<LabFlow, String>;
}

/// What a job produced, handed to [`Declaration::measure`].
#[derive(Debug, Clone, Copy)]
pub enum Done<'a> {
    /// A simulation run.
    Sim(&'a SimResult),
    /// An oracle search: its best rate.
    Oracle(&'a SweepPoint),
    /// A lab run.
    Lab(&'a LabFlow),
}

/// Where a published number comes from: the row field it fills and the seed text's locator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// The row field (`paper_age_ms`).
    pub column: &'static str,
    /// Where the number is stated ("ACP+ paper §IX, Fig. 15b").
    pub locator: &'static str,
}

/// A table of the text and markdown output: a title and the row fields shown. A field `x`
/// with a `x_ci95` field is shown as "mean ± CI", and one with a `paper_x` field gets a
/// "paper" column beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The table's title.
    pub title: String,
    /// The fields shown, in order.
    pub columns: Vec<String>,
}

impl View {
    /// A table titled `title` of `columns`.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> View {
        View {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        }
    }
}

/// A shaded interval of a chart over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    /// Start and end on the x axis.
    pub from: f64,
    /// End.
    pub to: f64,
    /// Its legend entry.
    pub label: String,
    /// Darkness, 0–1.
    pub shade: f64,
}

/// A curve that is not a row field: an analytic curve, a trace over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    /// Its name.
    pub name: String,
    /// Its points (x, y) in the chart's units.
    pub points: Vec<(f64, f64)>,
}

/// How a chart draws its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Draw {
    /// A line per series with 95 % error bars from `{y}_ci95` where the rows have it, and the
    /// `paper_{y}` values beside it.
    Lines,
    /// A point per row, a colour per series, and these (name, x, y) published points.
    Scatter(Vec<(String, f64, f64)>),
    /// Grouped bars: per series, the values of these (field, tick label) pairs, a group per
    /// field along the x axis.
    Bars(Vec<(&'static str, &'static str)>),
    /// A marker per row and series against the row's number, a reference line at 1.
    Ratios,
    /// The traces as lines over time, the bands shaded (the rows are not drawn).
    OverTime(Vec<Trace>, Vec<Band>),
    /// The traces as lines with markers (the rows are not drawn).
    Curves(Vec<Trace>),
    /// The traces as analytic curves, the rows as simulated points on them.
    Model(Vec<Trace>),
}

/// A chart, as data: which fields against which, the series, the axes and the title.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File stem (the renderer writes `stem.png` and `stem.svg`).
    pub stem: String,
    /// Title.
    pub title: String,
    /// The x field and the axis label.
    pub x: (&'static str, String),
    /// The y field and the axis label.
    pub y: (&'static str, String),
    /// The fields whose values name a row's series (joined with a space).
    pub series: Vec<&'static str>,
    /// Only rows whose fields hold these values.
    pub only: Vec<(&'static str, Value)>,
    /// Values of y above this are not drawn.
    pub y_max: Option<f64>,
    /// How.
    pub draw: Draw,
}

impl Chart {
    /// Lines of `y` against `x`, a series per value of `series`.
    pub fn lines(
        stem: impl Into<String>,
        title: impl Into<String>,
        x: (&'static str, &str),
        y: (&'static str, &str),
        series: &[&'static str],
    ) -> Chart {
        Chart {
            stem: stem.into(),
            title: title.into(),
            x: (x.0, x.1.into()),
            y: (y.0, y.1.into()),
            series: series.to_vec(),
            only: Vec::new(),
            y_max: None,
            draw: Draw::Lines,
        }
    }

    /// Only the rows whose `field` holds `value`.
    pub fn only(mut self, field: &'static str, value: impl Into<Value>) -> Chart {
        self.only.push((field, value.into()));
        self
    }

    /// Values of y above `max` not drawn.
    pub fn y_max(mut self, max: f64) -> Chart {
        self.y_max = Some(max);
        self
    }

    /// Drawn as `draw`.
    pub fn draw(mut self, draw: Draw) -> Chart {
        self.draw = draw;
        self
    }

    /// The rows of `rows` this chart draws.
    pub fn rows<'a>(
        &'a self,
        rows: &'a [Map<String, Value>],
    ) -> impl Iterator<Item = &'a Map<String, Value>> {
        rows.iter()
            .filter(|r| self.only.iter().all(|(f, v)| r.get(*f) == Some(v)))
    }

    /// The series name of `row`.
    pub fn series_of(&self, row: &Map<String, Value>) -> String {
        let parts: Vec<String> = self
            .series
            .iter()
            .map(|f| {
                row.get(*f)
                    .map_or_else(String::new, super::write::csv_field)
            })
            .collect();
        parts.join(" ")
    }
}

/// A reproduction declared: its runs, measurements, rows, published numbers, tables and charts.
pub trait Declaration: Sync {
    /// What one job yields.
    type Measure: Send;
    /// One row of the result (units in the field names; the papers' numbers in `paper_*`).
    type Row: Serialize;
    /// Its name (`acp reproduce NAME`).
    fn name(&self) -> &'static str;
    /// One line on what it reproduces.
    fn about(&self) -> &'static str;
    /// Seeds per point unless the caller says otherwise.
    fn default_seeds(&self) -> u64 {
        5
    }
    /// The seeds `o` asks for (its count defaulting to [`default_seeds`](Self::default_seeds)).
    fn seeds(&self, o: &Options) -> Vec<u64> {
        o.seed_list(self.default_seeds())
    }
    /// Whether it runs the controllers `--controllers` lists. One that does not refuses the
    /// option ([`Reproduction::check`]) rather than ignore it.
    fn takes_controllers(&self) -> bool {
        false
    }
    /// The fewest clients (stations, sources) `--clients` may ask for: 1, unless zero is a
    /// point of its own (no legacy stations, say). [`Reproduction::check`] refuses fewer.
    fn min_clients(&self) -> usize {
        1
    }
    /// Refuses options it cannot run (a usage error), beyond those
    /// [`takes_controllers`](Self::takes_controllers) and [`min_clients`](Self::min_clients)
    /// rule out.
    fn check(&self, _o: &Options) -> Result<(), String> {
        Ok(())
    }
    /// The runs.
    fn plan(&self, o: &Options) -> Plan;
    /// One job's measurement.
    fn measure(&self, job: &Job, done: Done<'_>) -> Self::Measure;
    /// The rows, from the plan and the measurements of its jobs (`None`: skipped).
    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Self::Measure>]) -> Vec<Self::Row>;
    /// Curves beside the rows (traces over time), from the same measurements.
    fn traces(&self, _o: &Options, _plan: &Plan, _done: &[Option<Self::Measure>]) -> Vec<Trace> {
        Vec::new()
    }
    /// One paragraph on the setup run.
    fn setup(&self, o: &Options) -> String;
    /// Where the `paper_*` fields' numbers come from.
    fn sources(&self) -> Vec<Source>;
    /// The tables to print (default: one with every field but the `_ci95` and `paper_` ones).
    fn views(&self) -> Vec<View> {
        Vec::new()
    }
    /// The charts.
    fn charts(&self, o: &Options, traces: &[Trace]) -> Vec<Chart>;
    /// Lines after the tables: the papers' claims that are no table cell, beside ours.
    fn notes(&self, _o: &Options, _rows: &[Self::Row]) -> Vec<String> {
        Vec::new()
    }
    /// Files to write beside the results: (path under the output directory, contents), e.g.
    /// the scenario file of every run.
    fn files(&self, _o: &Options) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// A reproduction's result, generic over what it reproduces: every writer reads this.
#[derive(Debug, Clone)]
pub struct Report {
    /// Its name.
    pub name: &'static str,
    /// The setup run.
    pub setup: String,
    /// The seeds per point asked for.
    pub seeds: usize,
    /// The rows: the row type's fields, in its order.
    pub rows: Vec<Map<String, Value>>,
    /// Curves beside the rows.
    pub traces: Vec<Trace>,
    /// Where the published numbers come from.
    pub sources: Vec<Source>,
    /// Tables to print.
    pub views: Vec<View>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// The papers' claims beside ours.
    pub notes: Vec<String>,
    /// Files to write beside the results: (path under the output directory, contents).
    pub files: Vec<(String, String)>,
    /// The runs done and skipped.
    pub tally: Tally,
}

impl Report {
    /// The field names of the rows (those of the first row: every row has the same).
    pub fn columns(&self) -> Vec<String> {
        self.rows
            .first()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The result as one JSON object: name, setup, seeds, rows, traces (if any), the
    /// published numbers' sources, the notes, and, if runs were skipped, `interrupted`, `runs_done`, `runs`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("reproduction".into(), self.name.into());
        out.insert("setup".into(), self.setup.clone().into());
        out.insert("seeds".into(), self.seeds.into());
        out.insert(
            "rows".into(),
            Value::Array(self.rows.iter().cloned().map(Value::Object).collect()),
        );
        if !self.traces.is_empty() {
            out.insert("traces".into(), json_of(&self.traces));
        }
        out.insert("sources".into(), json_of(&self.sources));
        out.insert("notes".into(), json_of(&self.notes));
        if self.tally.interrupted() {
            out.insert("interrupted".into(), true.into());
            out.insert("runs_done".into(), self.tally.done.into());
            out.insert("runs".into(), self.tally.total().into());
        }
        Value::Object(out)
    }
}

/// `value` as JSON (the types serialised here cannot fail).
fn json_of(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A reproduction as the CLI and the Python binding see it, whatever its row type.
pub trait Reproduction: Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// One line on what it reproduces.
    fn about(&self) -> &'static str;
    /// Seeds per point unless the caller says otherwise.
    fn default_seeds(&self) -> u64;
    /// Refuses options it cannot run: `--controllers` where it runs its own, `--clients`
    /// below its [`Declaration::min_clients`], then its own [`Declaration::check`].
    fn check(&self, o: &Options) -> Result<(), String>;
    /// Whether some of its jobs may run in a [`Lab`].
    fn uses_lab(&self, o: &Options) -> bool;
    /// Its runs ([`Declaration::plan`]).
    fn plan_runs(&self, o: &Options) -> Plan;
    /// Runs it with `runner` (this machine's cores, a result store, a cluster):
    /// `progress(done, total)` after each run of its plan; `lab` runs the jobs that can run in a
    /// lab, else the simulator does. The report depends on the results alone, not on where or
    /// in which order they were computed. An error only from the runner or the lab.
    fn run_on(
        &self,
        o: &Options,
        runner: &dyn Runner,
        cancel: &Cancel,
        progress: &(dyn Fn(usize, usize) + Sync),
        lab: Option<&dyn Lab>,
    ) -> Result<Report, String>;
    /// Runs it on `o.threads` threads of this machine ([`Reproduction::run_on`]).
    fn run(
        &self,
        o: &Options,
        cancel: &Cancel,
        progress: &(dyn Fn(usize, usize) + Sync),
        lab: Option<&dyn Lab>,
    ) -> Result<Report, String> {
        let local = Local { threads: o.threads };
        self.run_on(o, &local, cancel, progress, lab)
    }
}

impl<D: Declaration> Reproduction for D {
    fn name(&self) -> &'static str {
        Declaration::name(self)
    }

    fn about(&self) -> &'static str {
        Declaration::about(self)
    }

    fn default_seeds(&self) -> u64 {
        Declaration::default_seeds(self)
    }

    fn check(&self, o: &Options) -> Result<(), String> {
        let name = Declaration::name(self);
        if !o.controllers.is_empty() && !self.takes_controllers() {
            return Err(format!(
                "{name} runs its own controllers and does not take --controllers"
            ));
        }
        let least = self.min_clients();
        if let Some(n) = o.clients.iter().find(|&&n| n < least) {
            return Err(format!("{name}: --clients {n}: at least {least}"));
        }
        Declaration::check(self, o)
    }

    fn uses_lab(&self, o: &Options) -> bool {
        Declaration::plan(self, o)
            .jobs
            .iter()
            .any(|j| j.lab.is_some())
    }

    fn plan_runs(&self, o: &Options) -> Plan {
        Declaration::plan(self, o)
    }

    fn run_on(
        &self,
        o: &Options,
        runner: &dyn Runner,
        cancel: &Cancel,
        progress: &(dyn Fn(usize, usize) + Sync),
        lab: Option<&dyn Lab>,
    ) -> Result<Report, String> {
        let plan = Declaration::plan(self, o);
        let done = execute(self, &plan, runner, cancel, progress, lab)?;
        let rows = self.rows(o, &plan, &done);
        let traces = self.traces(o, &plan, &done);
        let notes = self.notes(o, &rows);
        let rows: Vec<Map<String, Value>> = rows
            .iter()
            .filter_map(|r| match json_of(r) {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .collect();
        let mut views = self.views();
        if views.is_empty() {
            views.push(View {
                title: String::new(),
                columns: default_columns(&rows),
            });
        }
        Ok(Report {
            name: Declaration::name(self),
            setup: self.setup(o),
            seeds: Declaration::seeds(self, o).len(),
            charts: self.charts(o, &traces),
            traces,
            sources: self.sources(),
            views,
            rows,
            notes,
            files: self.files(o),
            tally: cancel.tally(),
        })
    }
}

/// Every field of `rows` but the CI and paper fields (shown beside their own).
fn default_columns(rows: &[Map<String, Value>]) -> Vec<String> {
    rows.first()
        .map(|r| {
            r.keys()
                .filter(|k| !k.ends_with("_ci95") && !k.starts_with("paper_"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `plan`'s jobs: the simulations and the oracle searches with `runner` (the simulations
/// with the oracles' first stage, then their second: two batches), then the lab's one at a time,
/// each measured by `d`. `None` for a job skipped (cancelled, or not buildable).
fn execute<D: Declaration + ?Sized>(
    d: &D,
    plan: &Plan,
    runner: &dyn Runner,
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
    lab: Option<&dyn Lab>,
) -> Result<Vec<Option<D::Measure>>, String> {
    let in_lab = |j: &Job| lab.is_some() && j.lab.is_some();
    let total: usize = plan.jobs.iter().map(Job::runs).sum();
    let count = AtomicUsize::new(0);
    let tick = |runs: usize| progress(count.fetch_add(runs, Ordering::Relaxed) + runs, total);
    let results: Vec<Mutex<Option<D::Measure>>> =
        plan.jobs.iter().map(|_| Mutex::new(None)).collect();
    let store = |k: usize, m: D::Measure| {
        *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(m);
    };
    let mut sims = Vec::new();
    let mut searches = Vec::new();
    for (k, job) in plan.jobs.iter().enumerate() {
        match &job.work {
            Work::Sim(s) if !in_lab(job) => sims.push(Run::of(k, s.clone())),
            Work::Sim(_) => {}
            Work::Oracle {
                base,
                coarse,
                seeds,
            } => searches.push(Search {
                job: k,
                base,
                coarse,
                seeds,
            }),
        }
    }
    let sim_jobs: Vec<usize> = sims.iter().map(|r| r.origin.job).collect();
    let (ran, best) = sweep::oracles(&searches, sims, runner, cancel, &|| tick(1))?;
    for (&k, r) in sim_jobs.iter().zip(&ran) {
        if let Some(r) = r {
            store(k, d.measure(&plan.jobs[k], Done::Sim(r)));
        }
    }
    for (search, best) in searches.iter().zip(&best) {
        if let Some(best) = best {
            let k = search.job;
            store(k, d.measure(&plan.jobs[k], Done::Oracle(best)));
        }
    }
    if let Some(lab) = lab {
        let labbed: Vec<usize> = (0..plan.jobs.len())
            .filter(|&k| plan.jobs[k].lab.is_some())
            .collect();
        // One at a time: a lab run owns the machine's network stack.
        for r in parallel(labbed, 1, cancel, |k| {
            let job = &plan.jobs[k];
            let text = job.lab.as_deref().unwrap_or_default();
            let flow = lab.run(job, text)?;
            store(k, d.measure(job, Done::Lab(&flow)));
            tick(1);
            Ok::<(), String>(())
        })
        .into_iter()
        .flatten()
        {
            r?;
        }
    }
    Ok(results
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect())
}

/// The measurements of each point's jobs that were done, by point (`points` of them).
pub fn by_point<'a, M>(plan: &Plan, done: &'a [Option<M>], points: usize) -> Vec<Vec<&'a M>> {
    let mut out: Vec<Vec<&M>> = (0..points).map(|_| Vec::new()).collect();
    for (job, m) in plan.jobs.iter().zip(done) {
        if let (Some(m), Some(slot)) = (m, out.get_mut(job.point)) {
            slot.push(m);
        }
    }
    out
}

/// Mean and 95 % confidence half-width of a field over a point's measurements.
pub fn stat<M>(runs: &[&M], f: impl Fn(&M) -> f64) -> (f64, f64) {
    let xs: Vec<f64> = runs.iter().map(|m| f(m)).collect();
    mean_ci95(&xs)
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²), 1 when all are equal.
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || squares == 0.0 {
        return f64::NAN;
    }
    sum * sum / (xs.len() as f64 * squares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jains_index() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        // One of n holds everything: 1/n.
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 3.0]) - 16.0 / 20.0).abs() < 1e-12);
        assert!(jain(&[]).is_nan());
    }
}
