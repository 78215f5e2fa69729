//! The lab as a testbed of the reproductions' harness: a job's scenario file run by `acp lab`
//! (real kernel TCP in network namespaces), one at a time, its file under `scenarios/` and its
//! record (`acp lab --out`) under `lab/` of the reproduction's directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use acp_sim::reproduce::harness::{Job, Lab, LabFlow, Work};
use anyhow::Context;

/// Runs jobs in the lab, writing under `dir`.
pub struct LabBed<'a> {
    dir: PathBuf,
    stop: &'a AtomicBool,
}

impl<'a> LabBed<'a> {
    /// A lab writing under `dir`, stopping its runs once `stop` is raised.
    pub fn new(dir: &Path, stop: &'a AtomicBool) -> anyhow::Result<LabBed<'a>> {
        std::fs::create_dir_all(dir.join("scenarios"))?;
        Ok(LabBed {
            dir: dir.to_path_buf(),
            stop,
        })
    }

    /// Runs `text`, the scenario file of `job`.
    fn run_job(&self, job: &Job, text: &str) -> anyhow::Result<LabFlow> {
        let flow = match &job.work {
            Work::Sim(s) => s.flows.first().map(|f| f.name.clone()),
            Work::Oracle { .. } => None,
        };
        let name = format!("{}-seed{}", flow.unwrap_or_default(), job.seed);
        let file = self.dir.join("scenarios").join(format!("{name}.toml"));
        std::fs::write(&file, text)?;
        eprintln!("lab run {name}");
        let plan = acp_lab::plan::load(&file).map_err(anyhow::Error::msg)?;
        let result =
            acp_lab::run::run(&plan, None, self.stop).with_context(|| format!("lab run {name}"))?;
        crate::lab::write_record(&self.dir.join("lab").join(&name), &file, &result)?;
        let f = result.flows.first().context("the run has no flow")?;
        Ok(LabFlow {
            est_age: f.est_age,
            age: f.avg_age,
            rtt: f.rtt,
            throughput_bps: f.throughput_bps,
            inter_ack: f.inter_ack,
            segment_bytes: f.segment_bytes,
        })
    }
}

impl Lab for LabBed<'_> {
    fn run(&self, job: &Job, text: &str) -> Result<LabFlow, String> {
        self.run_job(job, text).map_err(|e| format!("{e:#}"))
    }
}
