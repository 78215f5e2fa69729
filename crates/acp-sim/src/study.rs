//! A study as data: what a cluster's worker needs to rebuild any of its runs.
//!
//! A [`Study`] is a reproduction with its options, or a sweep of a scenario file's text; a run
//! of it is an [`Origin`] (the job of the plan, and the fixed rate and seed an oracle or a sweep
//! gives it). Both are small JSON texts, so a task sent to a worker is a few hundred bytes
//! whatever the scenario, and [`run_at`] runs it there: it plans the study (once per worker: the
//! last few studies' plans are kept), takes the job's scenario and runs it. Plans are
//! deterministic, so the worker's scenario is the one the driving process planned, and the
//! result comes back with the [`VERSION`] that computed it, so a worker of another build is
//! caught rather than trusted.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::reproduce::harness::{Options, Plan, Work};
use crate::reproduce::{self};
use crate::runs::{encode, Origin, Run, VERSION};
use crate::scenario::Scenario;

/// A study whose runs a cluster executes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Study {
    /// A reproduction (`acp reproduce NAME`) with its options.
    Reproduce {
        /// Its name.
        name: String,
        /// Its options.
        options: Options,
    },
    /// A sweep over fixed rates (`acp sweep`) of a scenario file.
    Sweep {
        /// The scenario file's text.
        text: String,
        /// The directory its relative paths (traces) are read from.
        dir: Option<PathBuf>,
    },
}

/// A study, planned: what its origins refer to.
#[derive(Debug)]
enum Planned {
    /// A reproduction's plan.
    Plan(Plan),
    /// A sweep's scenario.
    Scenario(Box<Scenario>),
}

/// Plans kept per process: a worker runs the tasks of a few studies at a time.
const PLANS_KEPT: usize = 4;

/// The plans of the last studies [`Study::scenario`] planned, newest last.
static PLANS: Mutex<Vec<(String, Arc<Planned>)>> = Mutex::new(Vec::new());

impl Study {
    /// Its JSON text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The study `text` ([`Study::to_text`]) describes.
    pub fn parse(text: &str) -> Result<Study, String> {
        serde_json::from_str(text).map_err(|e| format!("not a study: {e}"))
    }

    /// It, planned.
    fn plan(&self) -> Result<Planned, String> {
        match self {
            Study::Reproduce { name, options } => {
                let r = reproduce::find(name)
                    .ok_or_else(|| format!("unknown reproduction {name:?}"))?;
                Ok(Planned::Plan(r.plan_runs(options)))
            }
            Study::Sweep { text, dir } => Scenario::parse_in(text, dir.as_deref())
                .map(|s| Planned::Scenario(Box::new(s)))
                .map_err(|e| e.to_string()),
        }
    }

    /// The run at `origin`.
    pub fn run(&self, origin: Origin) -> Result<Run, String> {
        self.run_in(&self.plan()?, origin)
    }

    /// The run at `origin` of this study planned as `planned`.
    fn run_in(&self, planned: &Planned, origin: Origin) -> Result<Run, String> {
        let base = match planned {
            Planned::Scenario(s) => s,
            Planned::Plan(plan) => match plan.jobs.get(origin.job).map(|j| &j.work) {
                Some(Work::Sim(s)) => s,
                Some(Work::Oracle { base, .. }) => base,
                None => return Err(format!("the study has no job {}", origin.job)),
            },
        };
        Ok(match origin.fixed {
            None => Run::of(origin.job, base.clone()),
            Some((rate, seed)) => Run::fixed(origin.job, base, rate, seed),
        })
    }
}

/// Runs the run at `origin` (JSON of an [`Origin`]) of the study `study` (its JSON text) here,
/// on this thread: the simulator's [`VERSION`] and the [`encode`]d result (`None` if the
/// scenario cannot be built). What a cluster's task does.
pub fn run_at(study: &str, origin: &str) -> Result<(&'static str, Option<Vec<u8>>), String> {
    let origin: Origin =
        serde_json::from_str(origin).map_err(|e| format!("not a run's origin: {e}"))?;
    let planned = planned(study)?;
    let run = Study::parse(study)?.run_in(&planned, origin)?;
    Ok((VERSION, run.execute().map(|r| encode(&r))))
}

/// The study `text`, planned (from the kept plans if it was planned lately).
fn planned(text: &str) -> Result<Arc<Planned>, String> {
    let kept = |plans: &Vec<(String, Arc<Planned>)>| {
        plans
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, p)| p.clone())
    };
    if let Some(p) = kept(&PLANS.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(p);
    }
    // Planned outside the lock: other threads' tasks of planned studies go on meanwhile.
    let p = Arc::new(Study::parse(text)?.plan()?);
    let mut plans = PLANS.lock().unwrap_or_else(|e| e.into_inner());
    if plans.len() >= PLANS_KEPT {
        plans.remove(0);
    }
    plans.push((text.to_string(), p.clone()));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::decode;

    #[test]
    fn a_worker_rebuilds_the_planned_run() {
        let o = Options {
            secs: Some(20),
            seeds: Some(1),
            ..Options::default()
        };
        let study = Study::Reproduce {
            name: "dd1".into(),
            options: o.clone(),
        };
        let text = study.to_text();
        let plan = reproduce::find("dd1").unwrap().plan_runs(&o);
        let (k, job) = plan
            .jobs
            .iter()
            .enumerate()
            .find_map(|(k, j)| match &j.work {
                Work::Sim(s) => Some((k, s)),
                Work::Oracle { .. } => None,
            })
            .expect("dd1 has simulation jobs");
        let origin = Origin {
            job: k,
            fixed: None,
        };
        assert_eq!(
            study.run(origin).unwrap().key(),
            Run::of(k, job.clone()).key()
        );
        let (version, bytes) = run_at(&text, &serde_json::to_string(&origin).unwrap()).unwrap();
        assert_eq!(version, VERSION);
        let here = Run::of(k, job.clone()).execute();
        assert_eq!(decode(&bytes.unwrap()).ok(), here);
        assert!(run_at(&text, r#"{"job": 100000, "fixed": null}"#).is_err());
        assert!(run_at("{}", r#"{"job": 0, "fixed": null}"#).is_err());
    }
}
