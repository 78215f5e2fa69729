//! Where simulation runs execute, and what identifies one.
//!
//! A run is a pure function of its scenario (which holds its seed and its flows' controllers)
//! and of the simulator's [`VERSION`]: [`Run::key`] hashes exactly those, so a result can be
//! computed anywhere and kept ([`crate::store`]). Every batch of runs, a reproduction's or a
//! sweep's, goes through a [`Runner`]: [`Local`] runs them on this machine's cores (`rayon`);
//! the Python package's runner sends them to a Dask cluster, which rebuilds each scenario from
//! its [`Origin`] in the study ([`crate::study`]) and sends back the [`encode`]d result.
//!
//! Whatever runs a batch, [`run_all`] hands its results back in the batch's order, and the
//! encoding keeps every number bit for bit, so the tables and CSV made of them are byte for byte
//! those of a local run.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::{parallel, Cancel};

/// The simulator's version: the crate's, and a digest of the sources a run depends on (this
/// crate's, `acp-core`'s and `acp-netmodel`'s), so two builds that could run a scenario
/// differently never share results.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("ACP_SIM_SOURCE_HASH"));

/// Where a run sits in its study: the job of the study's plan, and the fixed rate and seed an
/// oracle or a sweep gives the job's scenario (`None`: the job's scenario as it is).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The job (its index in the plan; 0 for a sweep's scenario).
    pub job: usize,
    /// The fixed rate (updates/s) and the seed.
    pub fixed: Option<(f64, u64)>,
}

/// One simulation run: the scenario and where it comes from.
#[derive(Debug, Clone)]
pub struct Run {
    /// What is run (seed and controllers included).
    pub scenario: Scenario,
    /// Where it sits in its study.
    pub origin: Origin,
}

impl Run {
    /// The run of job `job`'s `scenario` as it is.
    pub fn of(job: usize, scenario: Scenario) -> Run {
        Run {
            scenario,
            origin: Origin { job, fixed: None },
        }
    }

    /// The run of job `job`'s `base` with every update flow at `rate` and seed `seed`.
    pub fn fixed(job: usize, base: &Scenario, rate: f64, seed: u64) -> Run {
        let mut scenario = base.with_fixed_rate(rate);
        scenario.config.seed = seed;
        Run {
            scenario,
            origin: Origin {
                job,
                fixed: Some((rate, seed)),
            },
        }
    }

    /// Its key: the SHA-256 (hex) of the simulator's [`VERSION`] and the scenario's full
    /// description (every parameter of its configuration, seed included, topology and flows,
    /// controllers included).
    pub fn key(&self) -> String {
        key_of(&self.scenario)
    }

    /// Runs it here (`None` if the scenario cannot be built).
    pub fn execute(&self) -> Option<SimResult> {
        self.scenario.build().ok().map(|sim| sim.run())
    }
}

/// The key of a run of `scenario` ([`Run::key`]).
pub fn key_of(scenario: &Scenario) -> String {
    let mut hash = Sha256::new();
    hash.update(VERSION.as_bytes());
    hash.update([0]);
    hash.update(format!("{scenario:?}").as_bytes());
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A run's result as the store keeps it and a cluster carries it: CBOR of [`SimResult`], which
/// keeps every value as the simulator holds it (seconds, bit/s; the JSON's units are for people).
pub fn encode(r: &SimResult) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to memory cannot fail, and every value of a result has a CBOR form.
    let _ = ciborium::into_writer(r, &mut out);
    out
}

/// The result [`encode`] wrote.
pub fn decode(bytes: &[u8]) -> Result<SimResult, String> {
    ciborium::from_reader(bytes).map_err(|e| format!("a stored result does not decode: {e}"))
}

/// What runs a batch of runs.
pub trait Runner: Sync {
    /// Runs `runs`, calling `done(i, result)` for run `i` as each finishes, in any order, each
    /// once: `None` if it could not be built or was skipped because `cancel` stopped the batch
    /// (counted in `cancel`'s tally either way). An error ends the batch (a lost cluster, a
    /// store that cannot be written).
    fn run(
        &self,
        runs: &[Run],
        cancel: &Cancel,
        done: &(dyn Fn(usize, Option<SimResult>) + Sync),
    ) -> Result<(), String>;
}

/// Runs on this machine's cores: `threads` of them ([`parallel`]).
#[derive(Debug, Clone, Copy)]
pub struct Local {
    /// Worker threads.
    pub threads: usize,
}

impl Runner for Local {
    fn run(
        &self,
        runs: &[Run],
        cancel: &Cancel,
        done: &(dyn Fn(usize, Option<SimResult>) + Sync),
    ) -> Result<(), String> {
        let skipped = parallel((0..runs.len()).collect(), self.threads, cancel, |i| {
            done(i, runs[i].execute())
        });
        for (i, r) in skipped.iter().enumerate() {
            if r.is_none() {
                done(i, None);
            }
        }
        Ok(())
    }
}

/// Runs `runs` with `runner`; `tick()` after each; the results in the order of `runs`.
pub fn run_all(
    runner: &dyn Runner,
    runs: &[Run],
    cancel: &Cancel,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Option<SimResult>>, String> {
    let results: Mutex<Vec<Option<SimResult>>> = Mutex::new(vec![None; runs.len()]);
    runner.run(runs, cancel, &|i, r| {
        if let Some(slot) = results.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
            *slot = r;
        }
        tick();
    })?;
    Ok(results.into_inner().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use acp_core::controller::ControllerKind;

    use super::*;
    use crate::reproduce::dd1::dd1_scenario;

    fn small(controller: ControllerKind) -> Scenario {
        dd1_scenario(
            Duration::from_millis(2),
            Duration::from_millis(5),
            controller,
            3,
        )
    }

    #[test]
    fn keys_name_the_scenario_seed_and_controller() {
        let a = Run::of(0, small(ControllerKind::Fixed(100.0)));
        // Built again: the same description (no hash-map order in it), so the same key.
        assert_eq!(
            a.key(),
            Run::of(7, small(ControllerKind::Fixed(100.0))).key()
        );
        let mut reseeded = a.clone();
        reseeded.scenario.config.seed += 1;
        let other = Run::of(0, small(ControllerKind::Fixed(101.0)));
        let keys = [a.key(), reseeded.key(), other.key()];
        assert!(keys[0] != keys[1] && keys[0] != keys[2] && keys[1] != keys[2]);
        assert_eq!(keys[0].len(), 64);
    }

    #[test]
    fn results_decode_bit_for_bit() {
        let run = Run::fixed(0, &small(ControllerKind::Fixed(1.0)), 150.0, 3);
        let r = run.execute().expect("builds");
        let back = decode(&encode(&r)).expect("decodes");
        assert_eq!(back, r);
        // Bits, not just equality: the JSON of both (units and all) is the same text.
        assert_eq!(back.to_json(), r.to_json());
        assert!(decode(b"not cbor").is_err());
    }

    #[test]
    fn a_batch_comes_back_in_its_order_whatever_the_threads() {
        let base = small(ControllerKind::Fixed(1.0));
        let runs: Vec<Run> = [50.0, 100.0, 150.0, 200.0]
            .iter()
            .map(|&r| Run::fixed(0, &base, r, 1))
            .collect();
        let one = run_all(&Local { threads: 1 }, &runs, &Cancel::new(), &|| {}).unwrap();
        let two = run_all(&Local { threads: 2 }, &runs, &Cancel::new(), &|| {}).unwrap();
        assert_eq!(one, two);
        assert!(one.iter().all(Option::is_some));
    }
}
