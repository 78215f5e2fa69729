//! The oracle: the age of a scenario under a range of fixed rates, its runs spread by a
//! [`Runner`] (this machine's cores, or a cluster).
//!
//! Every batch of simulation runs goes through a runner; on this machine through [`parallel`],
//! which a [`Cancel`] handle can stop between runs: runs not yet started are skipped, runs under
//! way finish, and the handle counts both so that a caller can say how much of its work its
//! results cover. [`oracles`] runs many oracle searches at once, each stage of all of them in
//! one batch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use crate::report::SimResult;
use crate::runs::{run_all, Run, Runner};
use crate::scenario::Scenario;

/// One rate of a sweep, over one or more seeds.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// Fixed rate of every update flow (updates/s).
    pub rate: f64,
    /// Per seed, the mean over the update flows of their true time-average age (s).
    pub ages: Vec<f64>,
    /// Mean of `ages` (s).
    pub age: f64,
    /// Half-width of the 95 % confidence interval of `age` (Student's t over the seeds; 0 with
    /// one seed) (s).
    pub ci95: f64,
    /// The run of the first seed.
    pub result: SimResult,
}

/// One rate of a sweep as every writer shows it: `acp sweep`'s table, CSV and JSON, and the
/// Python package's `sweep` rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// Fixed rate of every update flow (updates/s).
    pub rate_hz: f64,
    /// Seeds run at this rate.
    pub seeds: usize,
    /// Mean over the seeds of the update flows' mean time-average age (ms).
    pub age_ms: f64,
    /// Half-width of its 95 % confidence interval (ms); `None` from a single seed, which gives
    /// no interval.
    pub age_ms_ci95: Option<f64>,
    /// That age at each seed (ms).
    pub ages_ms: Vec<f64>,
}

impl From<&SweepPoint> for SweepRow {
    fn from(p: &SweepPoint) -> SweepRow {
        SweepRow {
            rate_hz: p.rate,
            seeds: p.ages.len(),
            age_ms: p.age * 1e3,
            age_ms_ci95: (p.ages.len() > 1).then_some(p.ci95 * 1e3),
            ages_ms: p.ages.iter().map(|a| a * 1e3).collect(),
        }
    }
}

/// Which end of the grid the best point sits at, if it sits at one: the least age may then lie
/// beyond the rates swept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Edge {
    /// The lowest rate swept.
    Lowest,
    /// The highest rate swept.
    Highest,
}

/// The end of the grid of `points` that `best` sits at, if any (none from one rate: a single
/// point is no grid to search).
pub fn edge(points: &[SweepPoint], best: &SweepPoint) -> Option<Edge> {
    let rates = || points.iter().map(|p| p.rate);
    if points.len() < 2 {
        None
    } else if rates().reduce(f64::max) == Some(best.rate) {
        Some(Edge::Highest)
    } else if rates().reduce(f64::min) == Some(best.rate) {
        Some(Edge::Lowest)
    } else {
        None
    }
}

/// Mean age of a run's update flows (∞ if none delivered anything).
pub fn mean_age(r: &SimResult) -> f64 {
    let ages: Vec<f64> = r.flows.iter().filter_map(|f| f.age).collect();
    if ages.is_empty() {
        f64::INFINITY
    } else {
        ages.iter().sum::<f64>() / ages.len() as f64
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (normal beyond 30).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

/// Mean and 95 % confidence half-width of `xs`.
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 || !mean.is_finite() {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t975(n - 1) * (var / n as f64).sqrt())
}

/// Parses `10,20,50` or `START:STOP:STEP` (inclusive) into rates.
pub fn parse_rates(s: &str) -> Result<Vec<f64>, String> {
    let num = |x: &str| {
        x.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("expected a positive rate, got {x:?}"))
    };
    let rates = if let [a, b, c] = s.split(':').collect::<Vec<_>>()[..] {
        let (start, stop, step) = (num(a)?, num(b)?, num(c)?);
        if stop < start {
            return Err(format!("{s:?}: STOP is below START"));
        }
        let n = ((stop - start) / step + 1e-9).floor() as usize + 1;
        if n > 100_000 {
            return Err(format!("{s:?}: more than 100,000 rates"));
        }
        (0..n).map(|i| start + i as f64 * step).collect()
    } else {
        s.split(',').map(num).collect::<Result<Vec<_>, _>>()?
    };
    if rates.is_empty() {
        return Err("no rates".into());
    }
    Ok(rates)
}

/// A request to stop a computation made of many simulation runs, and the tally of its runs.
///
/// [`parallel`] looks at it before starting each run: once it is cancelled, by [`Cancel::cancel`]
/// or by raising the flag it was made [`on`](Cancel::on) (a signal handler's, say), runs not yet
/// started are skipped and runs under way finish. Pass one handle down through every stage of a
/// computation: it counts the runs done and skipped in all of them.
#[derive(Debug, Default)]
pub struct Cancel {
    flag: Arc<AtomicBool>,
    done: AtomicUsize,
    skipped: AtomicUsize,
}

/// How many runs a computation did and skipped ([`Cancel::tally`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Runs completed.
    pub done: usize,
    /// Runs skipped because the computation was cancelled.
    pub skipped: usize,
}

impl Tally {
    /// Runs in all, done or skipped.
    pub fn total(&self) -> usize {
        self.done + self.skipped
    }

    /// Whether any run was skipped, so that the results are partial.
    pub fn interrupted(&self) -> bool {
        self.skipped > 0
    }
}

impl Cancel {
    /// A handle that only [`Cancel::cancel`] stops.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// A handle that stops once `flag` is true (e.g. a flag that a signal handler raises).
    pub fn on(flag: Arc<AtomicBool>) -> Cancel {
        Cancel {
            flag,
            ..Cancel::default()
        }
    }

    /// Stops the computation: runs not yet started will be skipped.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether the computation has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Counts `runs` that a caller leaves out without handing them to [`parallel`] (a later
    /// stage that has nothing to go on once an earlier one was cut short).
    pub fn skip(&self, runs: usize) {
        self.skipped.fetch_add(runs, Ordering::Relaxed);
    }

    /// Counts `runs` done without [`parallel`]: by a cluster, or found in a result store.
    pub fn finished(&self, runs: usize) {
        self.done.fetch_add(runs, Ordering::Relaxed);
    }

    /// The runs done and skipped so far.
    pub fn tally(&self) -> Tally {
        Tally {
            done: self.done.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
        }
    }
}

/// Runs `scenario` at every rate with every seed with `runner`; `progress(done, total)` is
/// called after each run. Cross traffic draws from its own streams, so at one seed every rate
/// sees the same cross traffic (common random numbers). Results come back in the order of
/// `rates`, identical whatever runs them. Once `cancel` stops the sweep, a point covers the seeds
/// that ran, and rates none of whose seeds ran are left out. An error only from the runner.
pub fn sweep(
    scenario: &Scenario,
    rates: &[f64],
    seeds: &[u64],
    runner: &dyn Runner,
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<SweepPoint>, String> {
    let done = AtomicUsize::new(0);
    let runs = sweep_runs(0, scenario, rates, seeds);
    let total = runs.len();
    let results = run_all(runner, &runs, cancel, &|| {
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, total)
    })?;
    Ok(points(rates, seeds.len(), results))
}

/// The runs of a sweep of job `job`'s `scenario`: every rate with every seed, rate by rate.
fn sweep_runs(job: usize, scenario: &Scenario, rates: &[f64], seeds: &[u64]) -> Vec<Run> {
    rates
        .iter()
        .flat_map(|&r| seeds.iter().map(move |&s| Run::fixed(job, scenario, r, s)))
        .collect()
}

/// The points of a sweep over `rates` from the results of its runs ([`sweep_runs`]).
fn points(rates: &[f64], seeds: usize, results: Vec<Option<SimResult>>) -> Vec<SweepPoint> {
    let mut runs = results.into_iter();
    rates
        .iter()
        .filter_map(|&rate| {
            // Skipped runs are `None`, as are (in principle) runs that did not build.
            let results: Vec<SimResult> = runs.by_ref().take(seeds).flatten().collect();
            let ages: Vec<f64> = results.iter().map(mean_age).collect();
            let (age, ci95) = mean_ci95(&ages);
            Some(SweepPoint {
                rate,
                ages,
                age,
                ci95,
                result: results.into_iter().next()?,
            })
        })
        .collect()
}

/// Runs `jobs` on a `rayon` pool of `threads` threads, one job per task (each is a whole
/// simulation run, so a finer split has nothing to gain), returning the results in the jobs'
/// order. Earlier jobs tend to start first, so callers list their longest runs first. If the
/// pool cannot be created (no threads left), the jobs run on this thread.
///
/// A job that would start after `cancel` was cancelled is skipped and yields `None`; jobs
/// already under way finish. `cancel` counts the jobs run and skipped.
pub fn parallel<T: Send, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    cancel: &Cancel,
    run: impl Fn(T) -> R + Sync + Send,
) -> Vec<Option<R>> {
    let job = |j: T| {
        if cancel.is_cancelled() {
            cancel.skip(1);
            return None;
        }
        let r = run(j);
        cancel.done.fetch_add(1, Ordering::Relaxed);
        Some(r)
    };
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("acp-sim-{i}"))
        .build()
    {
        Ok(pool) => pool.install(|| jobs.into_par_iter().with_max_len(1).map(job).collect()),
        Err(_) => jobs.into_iter().map(job).collect(),
    }
}

/// The point with the least age.
pub fn best(points: &[SweepPoint]) -> Option<&SweepPoint> {
    points.iter().min_by(|a, b| a.age.total_cmp(&b.age))
}

/// Whether `cancel` cut short a sweep over `rates` rates and `seeds` seeds: it was cancelled and
/// some run is missing.
fn cut_short(cancel: &Cancel, points: &[SweepPoint], rates: usize, seeds: usize) -> bool {
    cancel.is_cancelled()
        && !(points.len() == rates && points.iter().all(|p| p.ages.len() == seeds))
}

/// Rates of the oracle's coarse stage.
const ORACLE_COARSE: usize = 24;
/// Rates of the oracle's fine stage, ±6 % in 1 % steps.
const ORACLE_FINE: i32 = 6;
/// Runs of the oracle's fine stage per seed.
pub const ORACLE_FINE_RATES: usize = 2 * ORACLE_FINE as usize + 1;

/// The oracle of `scenario`: the best of 24 fixed rates up to `cap` (updates/s), then the best
/// of ±6 % around it in 1 % steps (which include it), each rate run with every one of `seeds`
/// ([`oracles`]). An error only from the runner.
pub fn oracle(
    scenario: &Scenario,
    cap: f64,
    seeds: &[u64],
    runner: &dyn Runner,
    cancel: &Cancel,
) -> Result<Option<SweepPoint>, String> {
    let coarse: Vec<f64> = (1..=ORACLE_COARSE)
        .map(|k| cap * k as f64 / ORACLE_COARSE as f64)
        .collect();
    let search = Search {
        job: 0,
        base: scenario,
        coarse: &coarse,
        seeds,
    };
    let (_, mut best) = oracles(&[search], Vec::new(), runner, cancel, &|| {})?;
    Ok(best.pop().flatten())
}

/// One oracle search: job `job`'s `base` at the `coarse` stage's rates, then ±6 % in 1 % steps
/// around the best of them, every rate with every one of `seeds`.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    /// The job it is, in its study.
    pub job: usize,
    /// The scenario whose update flows get the fixed rates.
    pub base: &'a Scenario,
    /// The coarse stage's rates (updates/s).
    pub coarse: &'a [f64],
    /// The seeds every rate runs with.
    pub seeds: &'a [u64],
}

impl Search<'_> {
    /// Its runs in all (both stages).
    pub fn runs(&self) -> usize {
        (self.coarse.len() + ORACLE_FINE_RATES) * self.seeds.len()
    }
}

/// The results of [`oracles`]: those of the other runs, and each search's best point.
pub type Searched = (Vec<Option<SimResult>>, Vec<Option<SweepPoint>>);

/// Runs the `searches` and the other runs `with` in two batches, so that a runner has as many
/// as it can at once to spread: `with` and every search's coarse stage, then every fine stage.
/// `tick()` after each run. The best of a stage cut short by `cancel` is no oracle: that search
/// has none, and its fine stage is skipped (and counted so) if the coarse one was cut short. An
/// error only from the runner.
pub fn oracles(
    searches: &[Search<'_>],
    with: Vec<Run>,
    runner: &dyn Runner,
    cancel: &Cancel,
    tick: &(dyn Fn() + Sync),
) -> Result<Searched, String> {
    let mut runs = with;
    let others = runs.len();
    for s in searches {
        runs.extend(sweep_runs(s.job, s.base, s.coarse, s.seeds));
    }
    let mut results = run_all(runner, &runs, cancel, tick)?;
    let mut coarse = results.split_off(others).into_iter();
    let mut fine: Vec<Option<Vec<f64>>> = Vec::new();
    let mut fine_runs = Vec::new();
    for s in searches {
        let n = s.coarse.len() * s.seeds.len();
        let pts = points(s.coarse, s.seeds.len(), coarse.by_ref().take(n).collect());
        let around = if cut_short(cancel, &pts, s.coarse.len(), s.seeds.len()) {
            cancel.skip(ORACLE_FINE_RATES * s.seeds.len());
            None
        } else {
            best(&pts).map(|b| {
                (-ORACLE_FINE..=ORACLE_FINE)
                    .map(|k| b.rate * (1.0 + k as f64 * 0.01))
                    .collect::<Vec<f64>>()
            })
        };
        if let Some(rates) = &around {
            fine_runs.extend(sweep_runs(s.job, s.base, rates, s.seeds));
        }
        fine.push(around);
    }
    let mut refined = run_all(runner, &fine_runs, cancel, tick)?.into_iter();
    let best_points = searches
        .iter()
        .zip(fine)
        .map(|(s, rates)| {
            let rates = rates?;
            let n = rates.len() * s.seeds.len();
            let pts = points(&rates, s.seeds.len(), refined.by_ref().take(n).collect());
            if cut_short(cancel, &pts, rates.len(), s.seeds.len()) {
                return None;
            }
            best(&pts).cloned()
        })
        .collect();
    Ok((results, best_points))
}

/// `n` rates from `lo` to `hi` (both included) in equal ratios.
pub fn geometric(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let steps = n.saturating_sub(1).max(1) as f64;
    (0..n)
        .map(|k| lo * (hi / lo).powf(k as f64 / steps))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use acp_core::controller::ControllerKind;

    use super::*;
    use crate::reproduce::dd1::dd1_scenario;
    use crate::runs::Local;

    /// A scenario that runs in a few milliseconds: the D/D/1 path for 3 s.
    fn small() -> Scenario {
        dd1_scenario(
            Duration::from_millis(2),
            Duration::from_millis(5),
            ControllerKind::Fixed(1.0),
            3,
        )
    }

    #[test]
    fn rows_give_no_interval_from_one_seed_and_edges_are_found() {
        let s = small();
        let points = sweep(
            &s,
            &[50.0, 100.0, 150.0],
            &[1],
            &Local { threads: 1 },
            &Cancel::new(),
            &|_, _| {},
        )
        .unwrap();
        for p in &points {
            let row = SweepRow::from(p);
            assert_eq!((row.seeds, row.age_ms_ci95), (1, None), "{row:?}");
            assert_eq!(row.ages_ms, [row.age_ms]);
        }
        let two = sweep(
            &s,
            &[100.0],
            &[1, 2],
            &Local { threads: 1 },
            &Cancel::new(),
            &|_, _| {},
        )
        .unwrap();
        assert!(SweepRow::from(&two[0]).age_ms_ci95.is_some());
        assert_eq!(edge(&points, &points[0]), Some(Edge::Lowest));
        assert_eq!(edge(&points, &points[1]), None);
        assert_eq!(edge(&points, &points[2]), Some(Edge::Highest));
        assert_eq!(edge(&two, &two[0]), None);
    }

    #[test]
    fn jobs_after_a_cancel_are_skipped_and_results_keep_job_order() {
        let cancel = Cancel::new();
        // One thread runs the jobs in order: the fourth cancels, the six after it are skipped.
        let out = parallel((0..10).collect(), 1, &cancel, |i: u32| {
            if i == 3 {
                cancel.cancel();
            }
            i * 10
        });
        let want: Vec<Option<u32>> = (0..10).map(|i| (i <= 3).then_some(i * 10)).collect();
        assert_eq!(out, want);
        assert_eq!(
            cancel.tally(),
            Tally {
                done: 4,
                skipped: 6
            }
        );
        assert!(cancel.tally().interrupted());
        assert_eq!(cancel.tally().total(), 10);
    }

    #[test]
    fn on_several_threads_a_cancel_stops_the_jobs_not_yet_started() {
        let cancel = Cancel::new();
        let out = parallel((0..64).collect(), 4, &cancel, |i: usize| {
            if i == 5 {
                cancel.cancel();
            }
            std::thread::sleep(Duration::from_millis(2));
            i
        });
        assert_eq!(out.len(), 64);
        // Every result sits at its job's place; the canceller finished.
        for (k, r) in out.iter().enumerate() {
            assert!(r.is_none_or(|i| i == k), "{k}: {r:?}");
        }
        assert_eq!(out[5], Some(5));
        let ran = out.iter().flatten().count();
        let tally = cancel.tally();
        assert_eq!(tally.done, ran);
        assert_eq!(tally.total(), 64);
        // At most the other three threads' jobs under way, and the ones started before, ran.
        assert!(tally.skipped > 0, "{tally:?}");
    }

    #[test]
    fn an_uncancelled_run_does_every_job() {
        let cancel = Cancel::new();
        let out = parallel((0..20).collect(), 3, &cancel, |i: u32| i + 1);
        assert_eq!(out, (1..=20).map(Some).collect::<Vec<_>>());
        assert_eq!(
            cancel.tally(),
            Tally {
                done: 20,
                skipped: 0
            }
        );
        assert!(!cancel.tally().interrupted());
    }

    #[test]
    fn a_cancelled_sweep_keeps_the_seeds_that_ran() {
        let cancel = Cancel::new();
        // One thread, runs in order (rate, seed): stop after the third of six.
        let points = sweep(
            &small(),
            &[100.0, 200.0, 300.0],
            &[1, 2],
            &Local { threads: 1 },
            &cancel,
            &|done, _| {
                if done == 3 {
                    cancel.cancel();
                }
            },
        )
        .unwrap();
        let rates: Vec<f64> = points.iter().map(|p| p.rate).collect();
        assert_eq!(rates, [100.0, 200.0]);
        assert_eq!(points[0].ages.len(), 2);
        assert_eq!(points[1].ages.len(), 1);
        assert_eq!(
            cancel.tally(),
            Tally {
                done: 3,
                skipped: 3
            }
        );
    }

    #[test]
    fn an_oracle_cut_short_is_none_and_counts_both_stages() {
        let flag = Arc::new(AtomicBool::new(true));
        let cancel = Cancel::on(flag);
        let two = Local { threads: 2 };
        assert!(oracle(&small(), 500.0, &[1, 2], &two, &cancel)
            .unwrap()
            .is_none());
        // 24 coarse rates and 13 fine ones, two seeds each, none run.
        assert_eq!(
            cancel.tally(),
            Tally {
                done: 0,
                skipped: 74
            }
        );
        let whole = Cancel::new();
        let best = oracle(&small(), 500.0, &[1], &two, &whole)
            .unwrap()
            .map(|p| p.rate);
        assert!(best.is_some_and(|r| r > 0.0 && r < 600.0), "{best:?}");
        assert_eq!(
            whole.tally(),
            Tally {
                done: 37,
                skipped: 0
            }
        );
    }

    #[test]
    fn geometric_rates_span_both_ends_in_equal_ratios() {
        let r = geometric(1.0, 16.0, 5);
        assert_eq!(r.len(), 5);
        for (got, want) in r.iter().zip([1.0, 2.0, 4.0, 8.0, 16.0]) {
            assert!((got - want).abs() < 1e-12, "{r:?}");
        }
        assert_eq!(geometric(3.0, 9.0, 1), [3.0]);
    }

    #[test]
    fn rate_lists_and_ranges() {
        assert_eq!(parse_rates("10,20,50"), Ok(vec![10.0, 20.0, 50.0]));
        assert_eq!(parse_rates("10:30:10"), Ok(vec![10.0, 20.0, 30.0]));
        assert_eq!(parse_rates("0.1:0.3:0.1").map(|v| v.len()), Ok(3));
        assert!(parse_rates("10:5:1").is_err());
        assert!(parse_rates("a,b").is_err());
        assert!(parse_rates("-1").is_err());
    }

    #[test]
    fn confidence_interval_uses_students_t() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        // s = 1, n = 3: 4.303 / sqrt(3).
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci95(&[5.0]), (5.0, 0.0));
    }
}
