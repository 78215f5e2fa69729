//! # acp-py — the native half of the `acp` Python package
//!
//! PyO3 bindings over the existing crates, adding no protocol or simulation logic of their own:
//! - the simulator (`acp-sim`): a scenario run, a sweep of fixed rates, the papers'
//!   reproductions. Results cross into Python as the JSON the simulator's serde types already
//!   produce, and the pure-Python half (`python/acp/__init__.py`) turns them into tables. The
//!   runs of a sweep or a reproduction may go to a Dask cluster and through a result store
//!   ([`cluster`]; the Dask side is `python/acp/cluster.py`);
//! - a push-mode [`Source`] on a thread of its own (`acp-runtime`'s `SourceSet::run`, fed through
//!   its `PushFeed`), for device code;
//! - a [`Monitor`] (`acp-runtime`'s `MonitorServer` feeding a latest-value `Mailbox`) whose fresh
//!   updates Python iterates, for cloud code.
//!
//! Every call that waits (a simulation, a sweep, waiting for updates, stopping a thread) releases
//! the GIL, so other Python threads run meanwhile; long waits wake every 100 ms to let Ctrl-C
//! through. Errors become Python exceptions: bad input `ValueError`, socket failures `OSError`.
//!
//! Non-goals: a Python API to the sans-IO core (Python's event loops are better served by the
//! threaded source and the mailbox), and plotting (pandas and matplotlib do that).

// The crate's Rust items are all private (its interface is the Python module's): the links above
// are for its maintainers, who read these docs with `cargo doc --document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

mod cluster;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_core::controller::ControllerKind;
use acp_core::seal::Keyring;
use acp_core::wire::MAX_IPV4_PAYLOAD;
use acp_core::{MonitorConfig, SourceConfig};
use acp_runtime::clock;
use acp_runtime::driver::{Payload, PushFeed, RunLimits, SourceReport, SourceSet, SourceSpec};
use acp_runtime::mailbox::{Mailbox, MailboxConfig, OwnedUpdate};
use acp_runtime::resolve::{resolve, Purpose};
use acp_runtime::rows::{session_hex, SessionRow, SourceRow, UpdateRow};
use acp_runtime::server::{MonitorServer, ServerConfig};
use acp_sim::reproduce::{self, harness::Options, write};
use acp_sim::scenario::Scenario;
use acp_sim::study::Study;
use acp_sim::sweep::{self, Cancel, SweepRow};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::Serialize;

/// How often a long wait wakes to check for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn os_error(e: std::io::Error) -> PyErr {
    PyOSError::new_err(e.to_string())
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The scenario in the file `path`, or in the TOML `text`; `seed` overrides its seed.
fn scenario(path: Option<PathBuf>, text: Option<&str>, seed: Option<u64>) -> PyResult<Scenario> {
    let mut s = match (path, text) {
        (Some(p), None) => Scenario::load(&p),
        (None, Some(t)) => Scenario::parse(t),
        _ => return Err(value_error("give a scenario's path or its text, not both")),
    }
    .map_err(value_error)?;
    if let Some(seed) = seed {
        s.config.seed = seed;
    }
    Ok(s)
}

/// Runs a scenario; returns the result as JSON (`SimResult`'s serde form).
#[pyfunction]
#[pyo3(signature = (path=None, text=None, seed=None))]
fn simulate(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<&str>,
    seed: Option<u64>,
) -> PyResult<String> {
    let s = scenario(path, text, seed)?;
    let sim = s.build().map_err(value_error)?;
    Ok(py.detach(move || sim.run().to_json()))
}

/// The rates of `10,20,50` or `START:STOP:STEP`.
#[pyfunction]
fn parse_rates(rates: &str) -> PyResult<Vec<f64>> {
    sweep::parse_rates(rates).map_err(value_error)
}

/// Runs a scenario at each fixed rate with seeds `seed..seed+seeds`; returns JSON rows, named as
/// `acp sweep --json` names them. The runs go to `runner` if given ([`cluster::PyRunner`]) and
/// through the result store in `store` if given.
#[pyfunction]
#[pyo3(signature = (rates, seeds, path=None, text=None, seed=None, store=None, runner=None))]
#[allow(clippy::too_many_arguments)]
fn sweep_rates(
    py: Python<'_>,
    rates: Vec<f64>,
    seeds: u64,
    path: Option<PathBuf>,
    text: Option<&str>,
    seed: Option<u64>,
    store: Option<PathBuf>,
    runner: Option<Py<PyAny>>,
) -> PyResult<String> {
    if rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) || rates.is_empty() {
        return Err(value_error("rates must be positive numbers (at least one)"));
    }
    if seeds == 0 {
        return Err(value_error("seeds must be at least 1"));
    }
    let study = Study::Sweep {
        text: match (&path, text) {
            (Some(p), None) => std::fs::read_to_string(p).map_err(os_error)?,
            _ => text.unwrap_or_default().to_string(),
        },
        dir: path.as_deref().and_then(|p| p.parent()).map(PathBuf::from),
    };
    let s = scenario(path, text, seed)?;
    let first = s.config.seed;
    let seeds: Vec<u64> = (0..seeds).map(|k| first.saturating_add(k)).collect();
    let cancel = Cancel::new();
    let points = cluster::with_runner(&study, store, runner, |r| {
        py.detach(|| sweep::sweep(&s, &rates, &seeds, r, &cancel, &|_, _| {}))
    })?
    .map_err(value_error)?;
    let rows: Vec<SweepRow> = points.iter().map(SweepRow::from).collect();
    serde_json::to_string(&rows).map_err(value_error)
}

/// The reproductions `reproduce` runs: (name, one line on what it reproduces), in the order
/// `acp reproduce` lists them.
#[pyfunction]
fn reproductions() -> Vec<(&'static str, &'static str)> {
    reproduce::registry()
        .into_iter()
        .map(|r| (r.name(), r.about()))
        .collect()
}

/// Runs one of the reproductions as `acp reproduce NAME` does (in the simulator; the lab is the
/// command's) and returns its JSON (`--json`: the rows with the same fields, the setup, the
/// published numbers' sources, the notes), its tables (the command's text) and its CSV. The
/// runs go to `runner` if given ([`cluster::PyRunner`]) and through the result store in
/// `store` if given.
#[pyfunction]
#[pyo3(name = "reproduce", signature = (name, seed=1, seeds=None, secs=None, updates=None, payload=None, clients=None, scenarios=None, controllers=None, quick=false, random=None, whole_medium=false, store=None, runner=None))]
#[allow(clippy::too_many_arguments)]
fn run_reproduction(
    py: Python<'_>,
    name: &str,
    seed: u64,
    seeds: Option<u64>,
    secs: Option<u64>,
    updates: Option<u64>,
    payload: Option<u32>,
    clients: Option<Vec<usize>>,
    scenarios: Option<Vec<String>>,
    controllers: Option<Vec<String>>,
    quick: bool,
    random: Option<usize>,
    whole_medium: bool,
    store: Option<PathBuf>,
    runner: Option<Py<PyAny>>,
) -> PyResult<(String, String, String)> {
    let Some(r) = reproduce::find(name) else {
        let known: Vec<&str> = reproduce::registry().iter().map(|r| r.name()).collect();
        return Err(value_error(format!(
            "unknown reproduction {name:?} (expected one of {})",
            known.join(", ")
        )));
    };
    // The ranges `acp reproduce` accepts.
    let checks = [
        (secs.is_some_and(|s| s < 10), "secs must be at least 10"),
        (
            updates.is_some_and(|u| u < 1000),
            "updates must be at least 1000",
        ),
        (
            seeds.is_some_and(|s| !(1..=1000).contains(&s)),
            "seeds must be within 1-1000",
        ),
        (
            payload.is_some_and(|p| !(1..=9000).contains(&p)),
            "payload must be within 1-9000 bytes",
        ),
        (
            // The least number a reproduction takes is its own (`Declaration::min_clients`:
            // thesis-4-10 takes 0 legacy stations), checked where the CLI's is.
            clients.iter().flatten().any(|&n| n > 500),
            "clients must be within 0-500",
        ),
        (
            random.is_some_and(|n| !(1..=100_000).contains(&n)),
            "random must be within 1-100000",
        ),
    ];
    if let Some((_, why)) = checks.iter().find(|(bad, _)| *bad) {
        return Err(value_error(why));
    }
    let controllers = controllers
        .unwrap_or_default()
        .iter()
        .map(|c| c.parse::<ControllerKind>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let o = Options {
        seed,
        seeds,
        secs,
        updates,
        payload,
        clients: clients.unwrap_or_default(),
        scenarios: scenarios.unwrap_or_default(),
        controllers,
        quick,
        random,
        whole_medium,
        threads: threads(),
    };
    r.check(&o).map_err(value_error)?;
    // Never cancelled: every run of the reproduction is made.
    let cancel = Cancel::new();
    let study = Study::Reproduce {
        name: name.to_string(),
        options: o.clone(),
    };
    let report = cluster::with_runner(&study, store, runner, |runner| {
        py.detach(|| r.run_on(&o, runner, &cancel, &|_, _| {}, None))
    })?
    .map_err(value_error)?;
    Ok((
        report.to_json().to_string(),
        write::text(&report),
        write::csv(&report),
    ))
}

/// The keys of a key file's text (`ID HEX` per line), if given.
fn keyring(text: Option<&str>) -> PyResult<Option<Keyring>> {
    text.map(|t| Keyring::parse(t).map_err(|e| value_error(format!("keys: {e}"))))
        .transpose()
}

/// A row as a dict with the fields, names and units its JSON has in the `acp` command's output.
fn row_dict<'py>(py: Python<'py>, row: &impl Serialize) -> PyResult<Bound<'py, PyDict>> {
    let text = serde_json::to_string(row).map_err(value_error)?;
    let dict = py.import("json")?.call_method1("loads", (text,))?;
    Ok(dict.cast_into::<PyDict>()?)
}

/// What a pushed payload may be.
#[derive(FromPyObject)]
enum PushPayload {
    Text(String),
    Bytes(Vec<u8>),
}

/// The source thread's state, shared with the Python object.
struct SourceShared {
    /// The latest reports (one source), refreshed every tick and at the end.
    reports: Mutex<Vec<SourceReport>>,
    /// Why the thread ended early, if it did.
    failure: Mutex<Option<String>>,
}

/// A push-mode ACP source running on a thread of its own.
///
/// `Source(monitor, controller="seek", *, min_rate=None, max_rate=None, dscp=None, keys=None)`
/// starts at once (`keys`: the text of a key file, `ID HEX` per line, as `acp` reads them: the
/// source seals every update with the first key); `push()` offers the freshest reading (only the latest unsent one is ever sent);
/// `stats()` reads its statistics; `close()` (or leaving a `with` block) stops it.
#[pyclass(module = "acp._native")]
struct Source {
    feed: PushFeed,
    session: u64,
    stop: Arc<AtomicBool>,
    shared: Arc<SourceShared>,
    thread: Option<JoinHandle<()>>,
}

impl Source {
    fn latest(&self) -> Option<SourceReport> {
        let reports = self
            .shared
            .reports
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        reports.first().cloned()
    }

    fn failure(&self) -> Option<String> {
        self.shared
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[pymethods]
impl Source {
    #[new]
    #[pyo3(signature = (monitor, controller="seek", *, min_rate=None, max_rate=None, dscp=None, keys=None))]
    fn new(
        monitor: &str,
        controller: &str,
        min_rate: Option<f64>,
        max_rate: Option<f64>,
        dscp: Option<u8>,
        keys: Option<&str>,
    ) -> PyResult<Self> {
        let target = resolve(monitor, Purpose::Connect)
            .map_err(|e| value_error(format!("monitor address: {e}")))?;
        let kind: ControllerKind = controller.parse().map_err(value_error)?;
        let defaults = SourceConfig::default();
        let config = SourceConfig {
            min_rate: min_rate.unwrap_or(defaults.min_rate),
            max_rate: max_rate.unwrap_or(defaults.max_rate),
            psk: keyring(keys)?.map(|k| k.first().clone()),
            ..defaults
        };
        config.check_rates().map_err(value_error)?;
        if dscp.is_some_and(|d| d > 63) {
            return Err(value_error("dscp must be within 0-63"));
        }
        let mut set = SourceSet::new(target).map_err(os_error)?;
        if let Some(d) = dscp {
            set.set_dscp(d).map_err(os_error)?;
        }
        let session = set.add(SourceSpec {
            name: "python".into(),
            controller: kind.build(),
            config,
            payload: Payload::Push,
        });
        let feed = set.push_feed(session).map_err(os_error)?;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(SourceShared {
            reports: Mutex::new(set.reports()),
            failure: Mutex::new(None),
        });
        let (stop_t, shared_t) = (stop.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name("acp-source".into())
            .spawn(move || {
                let limits = RunLimits {
                    stop: Some(stop_t),
                    ..RunLimits::default()
                };
                let publish = |reports: &[SourceReport]| {
                    *shared_t
                        .reports
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = reports.to_vec();
                };
                match set.run(&limits, Duration::from_millis(50), publish) {
                    Ok(last) => publish(&last),
                    Err(e) => {
                        *shared_t
                            .failure
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
                    }
                }
            })
            .map_err(os_error)?;
        Ok(Source {
            feed,
            session,
            stop,
            shared,
            thread: Some(thread),
        })
    }

    /// The session id the monitor sees (16 hex digits, as `acp` prints it).
    #[getter]
    fn session(&self) -> String {
        session_hex(self.session)
    }

    /// Offers a fresh update (bytes, or str sent as UTF-8); never blocks.
    fn push(&self, payload: PushPayload) -> PyResult<()> {
        let bytes = match &payload {
            PushPayload::Text(s) => s.as_bytes(),
            PushPayload::Bytes(b) => b.as_slice(),
        };
        if bytes.len() > MAX_IPV4_PAYLOAD {
            return Err(value_error(format!(
                "an update carries at most {MAX_IPV4_PAYLOAD} bytes, got {}",
                bytes.len()
            )));
        }
        if self.thread.is_none() {
            return Err(PyRuntimeError::new_err("the source is closed"));
        }
        if let Some(why) = self.failure() {
            return Err(PyOSError::new_err(format!("the source stopped: {why}")));
        }
        self.feed.offer(bytes).map_err(os_error)
    }

    /// The source's statistics (refreshed every 50 ms while it runs, final once closed).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match self.latest() {
            Some(r) => row_dict(py, &SourceRow::from(&r)),
            None => Err(PyRuntimeError::new_err("the source has no statistics")),
        }
    }

    /// Stops the source (waiting for its thread without holding the GIL); returns its final
    /// statistics. Closing twice is harmless.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        py.detach(|| self.shutdown());
        if let Some(why) = self.failure() {
            return Err(PyOSError::new_err(format!("the source stopped: {why}")));
        }
        self.stats(py)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (_ty, _value, _tb, /))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        _ty: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<acp.Source session {:016x}>", self.session)
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A fresh update received by a [`Monitor`].
#[pyclass(module = "acp._native", frozen)]
struct Update {
    inner: OwnedUpdate,
    /// Whether its monitor was told the clocks are synchronised (`to_dict` gives an age).
    synced: bool,
}

#[pymethods]
impl Update {
    /// The source's session id (16 hex digits, as `acp` prints it).
    #[getter]
    fn session(&self) -> String {
        session_hex(self.inner.key.session)
    }

    /// The source's address, "ip:port".
    #[getter]
    fn peer(&self) -> String {
        self.inner.key.peer.to_string()
    }

    /// Sequence number within the session.
    #[getter]
    fn seq(&self) -> u64 {
        self.inner.seq
    }

    /// Generation time on the source's clock (ns since the Unix epoch).
    #[getter]
    fn generated_ns(&self) -> u64 {
        self.inner.gen_ts
    }

    /// Arrival time on this machine's clock (ns since the Unix epoch).
    #[getter]
    fn received_ns(&self) -> u64 {
        self.inner.received.as_nanos()
    }

    /// Age on arrival (ms): meaningful when the clocks are synchronised.
    #[getter]
    fn age_ms(&self) -> f64 {
        (self.inner.received.as_nanos() as f64 - self.inner.gen_ts as f64) * 1e-6
    }

    /// Whether it was one of the source's initialisation probes.
    #[getter]
    fn probe(&self) -> bool {
        self.inner.probe
    }

    /// The application payload.
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.payload)
    }

    /// The update as a dict (a row for a table): the fields of `acp monitor --print-updates`'
    /// lines but `type` and `time` (the payload as text if it is UTF-8, and in hex).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        row_dict(py, &UpdateRow::new(&self.inner, self.synced))
    }

    fn __repr__(&self) -> String {
        format!(
            "<acp.Update session {:016x} seq {} from {} ({} bytes)>",
            self.inner.key.session,
            self.inner.seq,
            self.inner.key.peer,
            self.inner.payload.len()
        )
    }
}

/// An ACP monitor serving on a UDP socket (on a thread of its own), whose fresh updates Python
/// takes at its own pace.
///
/// `Monitor(listen="0.0.0.0:7200", *, clocks_synced=False, max_sessions=10000, keys=None)`
/// (`keys`: a key file's text; then only sealed updates are believed). Iterating it
/// yields fresh updates as they come (blocking, Ctrl-C works); `poll(timeout)` returns those
/// pending. A consumer slower than the sources gets, per source, the latest update it has not
/// taken yet: the monitor never waits for Python.
#[pyclass(module = "acp._native")]
struct Monitor {
    server: Option<MonitorServer>,
    mailbox: Arc<Mailbox>,
    local: SocketAddr,
    pending: VecDeque<OwnedUpdate>,
    /// `clocks_synced`.
    synced: bool,
}

impl Monitor {
    /// Waits up to `timeout` (forever if `None`) for updates, without the GIL, waking to check
    /// for signals. Returns whether any are pending.
    fn wait(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<bool> {
        let end = timeout.map(|t| Instant::now() + t);
        loop {
            let slice = end.map_or(SIGNAL_CHECK, |e| {
                e.saturating_duration_since(Instant::now())
                    .min(SIGNAL_CHECK)
            });
            let mailbox = &self.mailbox;
            if py.detach(|| mailbox.wait(slice)) {
                return Ok(true);
            }
            py.check_signals()?;
            if mailbox.is_closed() || end.is_some_and(|e| Instant::now() >= e) {
                return Ok(false);
            }
        }
    }

    fn refill(&mut self) {
        let mut batch = Vec::new();
        self.mailbox.take_into(&mut batch);
        self.pending.extend(batch);
    }
}

#[pymethods]
impl Monitor {
    #[new]
    #[pyo3(signature = (listen="0.0.0.0:7200", *, clocks_synced=false, max_sessions=10_000, keys=None))]
    fn new(
        listen: &str,
        clocks_synced: bool,
        max_sessions: usize,
        keys: Option<&str>,
    ) -> PyResult<Self> {
        if max_sessions == 0 {
            return Err(value_error("max_sessions must be at least 1"));
        }
        let listen = resolve(listen, Purpose::Listen)
            .map_err(|e| value_error(format!("listen address: {e}")))?;
        let config = MonitorConfig {
            clocks_synchronised: clocks_synced,
            max_sessions,
            keys: keyring(keys)?,
            ..MonitorConfig::default()
        };
        let mailbox = Arc::new(Mailbox::new(MailboxConfig::new(max_sessions)));
        let producer = mailbox.clone();
        let server = MonitorServer::start(
            ServerConfig::new(listen, config),
            Some(Box::new(move |d, _| {
                producer.offer_delivery(d, clock::now());
            })),
        )
        .map_err(os_error)?;
        Ok(Monitor {
            local: server.local_addr(),
            server: Some(server),
            mailbox,
            pending: VecDeque::new(),
            synced: clocks_synced,
        })
    }

    /// The bound address, "ip:port" (useful after listening on port 0).
    #[getter]
    fn address(&self) -> String {
        self.local.to_string()
    }

    /// The bound port.
    #[getter]
    fn port(&self) -> u16 {
        self.local.port()
    }

    /// The updates pending now, after waiting up to `timeout` seconds for one (0: do not wait;
    /// None: wait until one comes).
    #[pyo3(signature = (timeout=0.0))]
    fn poll(&mut self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Vec<Update>> {
        let timeout = timeout
            .map(|t| Duration::try_from_secs_f64(t).map_err(value_error))
            .transpose()?;
        if self.pending.is_empty() && timeout.is_none_or(|t| !t.is_zero()) {
            self.wait(py, timeout)?;
        }
        self.refill();
        Ok(self
            .pending
            .drain(..)
            .map(|inner| Update {
                inner,
                synced: self.synced,
            })
            .collect())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Update>> {
        loop {
            if let Some(inner) = self.pending.pop_front() {
                return Ok(Some(Update {
                    inner,
                    synced: self.synced,
                }));
            }
            if self.mailbox.is_closed() {
                return Ok(None);
            }
            self.wait(py, None)?;
            self.refill();
        }
    }

    /// Every session the monitor tracks, as rows.
    fn sessions<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let server = self
            .server
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the monitor is closed"))?;
        let snapshot = py.detach(|| server.snapshot());
        snapshot
            .sessions
            .iter()
            .map(|s| row_dict(py, &SessionRow::from(s)))
            .collect()
    }

    /// Monitor-wide counters, refreshed every 200 ms.
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let server = self
            .server
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the monitor is closed"))?;
        let t = server.totals();
        let mail = self.mailbox.stats();
        let d = PyDict::new(py);
        d.set_item("sessions_live", t.sessions)?;
        d.set_item("datagrams", t.stats.datagrams)?;
        d.set_item("delivered", t.stats.delivered)?;
        d.set_item("acks", t.acks_sent)?;
        d.set_item("malformed", t.stats.malformed)?;
        d.set_item("updates_superseded", mail.superseded)?;
        d.set_item("updates_dropped", mail.dropped)?;
        Ok(d)
    }

    /// Stops serving. Updates already taken stay; iteration ends once those pending are read.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        self.mailbox.close();
        if let Some(server) = self.server.take() {
            py.detach(|| server.stop()).map_err(os_error)?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (_ty, _value, _tb, /))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        _ty: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<acp.Monitor on {}>", self.local)
    }
}

/// The native half of the `acp` package (import `acp`, not this).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rates, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_rates, m)?)?;
    m.add_function(wrap_pyfunction!(run_reproduction, m)?)?;
    m.add_function(wrap_pyfunction!(reproductions, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::run_task, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::version, m)?)?;
    m.add_class::<Source>()?;
    m.add_class::<Monitor>()?;
    m.add_class::<Update>()?;
    Ok(())
}
