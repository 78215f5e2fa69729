//! The oracle: the age of a scenario under a range of fixed rates, run in parallel on all cores.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::report::SimResult;
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

/// Runs `scenario` at every rate with every seed on `threads` threads; `progress(done, total)`
/// is called after each run. Cross traffic draws from its own streams, so at one seed every rate
/// sees the same cross traffic (common random numbers). Results come back in the order of
/// `rates`, identical whatever the thread count.
pub fn sweep(
    scenario: &Scenario,
    rates: &[f64],
    seeds: &[u64],
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<SweepPoint> {
    let done = AtomicUsize::new(0);
    let total = rates.len() * seeds.len();
    let jobs: Vec<(f64, u64)> = rates
        .iter()
        .flat_map(|&r| seeds.iter().map(move |&s| (r, s)))
        .collect();
    let runs = parallel(jobs, threads, |(rate, seed)| {
        let mut s = scenario.with_fixed_rate(rate);
        s.config.seed = seed;
        // `parse` built this scenario once already; a fixed rate cannot make it unbuildable.
        let run = s.build().ok().map(|sim| sim.run());
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
        run
    });
    let mut runs = runs.into_iter();
    rates
        .iter()
        .filter_map(|&rate| {
            let results: Vec<SimResult> = runs.by_ref().take(seeds.len()).flatten().collect();
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
pub fn parallel<T: Send, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    run: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("acp-sim-{i}"))
        .build()
    {
        Ok(pool) => pool.install(|| jobs.into_par_iter().with_max_len(1).map(run).collect()),
        Err(_) => jobs.into_iter().map(run).collect(),
    }
}

/// The point with the least age.
pub fn best(points: &[SweepPoint]) -> Option<&SweepPoint> {
    points.iter().min_by(|a, b| a.age.total_cmp(&b.age))
}

/// The oracle of `scenario`: the best of 24 fixed rates up to `cap` (updates/s), then the best
/// of ±6 % around it in 1 % steps (which include it), each rate run with every one of `seeds`.
pub fn oracle(scenario: &Scenario, cap: f64, seeds: &[u64], threads: usize) -> Option<SweepPoint> {
    let coarse: Vec<f64> = (1..=24).map(|k| cap * k as f64 / 24.0).collect();
    let points = sweep(scenario, &coarse, seeds, threads, &|_, _| {});
    let best_coarse = best(&points)?;
    let fine: Vec<f64> = (-6..=6)
        .map(|k| best_coarse.rate * (1.0 + k as f64 * 0.01))
        .collect();
    let refined = sweep(scenario, &fine, seeds, threads, &|_, _| {});
    best(&refined).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
