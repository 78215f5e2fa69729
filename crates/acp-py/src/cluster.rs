//! Runs on a cluster, and the result store, for the Python package.
//!
//! The study (a reproduction or a sweep) is planned and reported here, in the driving process,
//! as on the command line; only its runs go elsewhere. [`PyRunner`] is a [`Runner`] that hands
//! each batch to a Python callable (`acp.cluster`'s, which submits one Dask task per run) as the
//! study's text and the runs' origins, and takes the results back as they come: `(index,
//! version, encoded result)`. A task calls [`run_task`] on a worker, which rebuilds the run from
//! the study and runs it with the GIL released. With a store, the runs it holds never leave this
//! process and each result that comes back is kept before the next is taken.

use std::path::PathBuf;

use acp_sim::report::SimResult;
use acp_sim::runs::{decode, Local, Run, Runner, VERSION};
use acp_sim::store::{Store, Stored};
use acp_sim::study::{self, Study};
use acp_sim::sweep::Cancel;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{threads, value_error};

/// Sends runs to a Python callable `runner(study, origins)` that yields `(index, version,
/// result)` for each as it finishes.
pub struct PyRunner {
    /// The study's text.
    pub study: String,
    /// The callable.
    pub runner: Py<PyAny>,
}

impl Runner for PyRunner {
    fn run(
        &self,
        runs: &[Run],
        cancel: &Cancel,
        done: &(dyn Fn(usize, Option<SimResult>) + Sync),
    ) -> Result<(), String> {
        if runs.is_empty() {
            return Ok(());
        }
        let origins: Vec<String> = runs
            .iter()
            .map(|r| serde_json::to_string(&r.origin).unwrap_or_default())
            .collect();
        Python::attach(|py| -> PyResult<()> {
            let results = self.runner.call1(py, (self.study.as_str(), origins))?;
            for item in results.bind(py).try_iter()? {
                let (i, version, bytes): (usize, String, Option<Vec<u8>>) = item?.extract()?;
                if version != VERSION {
                    return Err(value_error(format!(
                        "a worker runs simulator version {version}, this process {VERSION}: \
                         install the same build of acp on every worker"
                    )));
                }
                let result = bytes.map(|b| decode(&b)).transpose().map_err(value_error)?;
                cancel.finished(1);
                done(i, result);
            }
            Ok(())
        })
        .map_err(|e| e.to_string())
    }
}

/// Calls `f` with the runner a study asks for: `runner` (a Python callable, see [`PyRunner`])
/// or this machine's cores, through the result store in `store` if given.
pub fn with_runner<T>(
    study: &Study,
    store: Option<PathBuf>,
    runner: Option<Py<PyAny>>,
    f: impl FnOnce(&dyn Runner) -> T,
) -> PyResult<T> {
    let local = Local { threads: threads() };
    let remote = runner.map(|runner| PyRunner {
        study: study.to_text(),
        runner,
    });
    let inner: &dyn Runner = match &remote {
        Some(r) => r,
        None => &local,
    };
    match store {
        None => Ok(f(inner)),
        Some(dir) => {
            let store = Store::open(&dir).map_err(value_error)?;
            Ok(f(&Stored {
                store: &store,
                inner,
            }))
        }
    }
}

/// Runs the run at `origin` of `study` here with the GIL released (a cluster's task): the
/// simulator's version and the encoded result (`None` if the scenario cannot be built).
#[pyfunction]
pub fn run_task<'py>(
    py: Python<'py>,
    study: &str,
    origin: &str,
) -> PyResult<(&'static str, Option<Bound<'py, PyBytes>>)> {
    let (version, bytes) = py
        .detach(|| study::run_at(study, origin))
        .map_err(value_error)?;
    Ok((version, bytes.map(|b| PyBytes::new(py, &b))))
}

/// The simulator's version (results and stores are this version's only).
#[pyfunction]
pub fn version() -> &'static str {
    VERSION
}
