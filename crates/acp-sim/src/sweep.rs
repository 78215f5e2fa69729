//! The oracle: the age of a scenario under a range of fixed rates, run in parallel on all cores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::report::SimResult;
use crate::scenario::Scenario;

/// One rate of a sweep.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// Fixed rate of every update flow (updates/s).
    pub rate: f64,
    /// Mean over the update flows of their true time-average age (s).
    pub age: f64,
    /// The whole run.
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

/// Runs `scenario` at every rate on `threads` threads; `progress(done, total)` is called after
/// each run. Results come back in the order of `rates`, identical whatever the thread count.
pub fn sweep(
    scenario: &Scenario,
    rates: &[f64],
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<SweepPoint> {
    let done = AtomicUsize::new(0);
    let runs = parallel(rates.to_vec(), threads, |rate| {
        // `parse` built this scenario once already; a fixed rate cannot make it unbuildable.
        let point = scenario.with_fixed_rate(rate).build().ok().map(|sim| {
            let result = sim.run();
            SweepPoint {
                rate,
                age: mean_age(&result),
                result,
            }
        });
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, rates.len());
        point
    });
    runs.into_iter().flatten().collect()
}

/// Runs `jobs` on `threads` threads (a shared work queue), returning the results in the jobs'
/// order.
pub fn parallel<T: Send, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    run: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let jobs: Vec<Mutex<Option<T>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let results: Vec<Mutex<Option<R>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(slot) = jobs.get(i) else { break };
                let job = slot.lock().ok().and_then(|mut g| g.take());
                if let Some(job) = job {
                    let r = run(job);
                    if let Ok(mut g) = results[i].lock() {
                        *g = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// The point with the least age.
pub fn best(points: &[SweepPoint]) -> Option<&SweepPoint> {
    points.iter().min_by(|a, b| a.age.total_cmp(&b.age))
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
}
