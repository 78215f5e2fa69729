//! A whole experiment on one machine: a monitor server, a chain of relays in front of it and a
//! set of sources, over loopback. Used by `acp demo` and by the integration tests.
//!
//! The monitor declares clocks synchronised (everything shares this process's clock), so the age
//! it reports is the true age. A callback runs every tick with the live state and may act on the
//! relays (e.g. blackhole one to emulate an outage).

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_core::monitor::SessionKey;
use acp_core::source::SourceStats;
use acp_core::MonitorConfig;

use crate::driver::{RunLimits, SourceReport, SourceSet, SourceSpec};
use crate::relay::{PathConfig, Relay, RelayConfig};
use crate::server::{MonitorServer, ServerConfig, SessionReport, Snapshot};

/// What to run.
pub struct Experiment {
    /// Relays from the sources towards the monitor (first = nearest the sources), each with the
    /// same path model both ways; may be empty.
    pub relays: Vec<PathConfig>,
    /// The sources.
    pub sources: Vec<SourceSpec>,
    /// How long the sources run.
    pub duration: Duration,
    /// Interval between callbacks.
    pub tick: Duration,
    /// Seed of the relays' random generators (relay i uses `seed + i`).
    pub seed: u64,
    /// Bind everything to `[::1]` instead of `127.0.0.1`.
    pub ipv6: bool,
    /// Raised by another thread (e.g. on SIGINT) to end the run before `duration`; the outcomes
    /// then cover the time run.
    pub stop: Option<Arc<AtomicBool>>,
}

/// The live state handed to the tick callback.
pub struct Tick<'a> {
    /// Time since the sources started.
    pub elapsed: Duration,
    /// The sources' own reports.
    pub sources: &'a [SourceReport],
    /// The monitor's state, with every session, as of this tick.
    pub monitor: &'a Snapshot,
    /// The relays, nearest the sources first.
    pub relays: &'a [Relay],
}

/// One source's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Its label.
    pub name: String,
    /// Its controller.
    pub controller: String,
    /// Its session id.
    pub session: u64,
    /// The source's statistics at the end.
    pub source: SourceStats,
    /// The monitor's view of the session, if any update arrived.
    pub monitor: Option<SessionReport>,
    /// How long the sources ran: the experiment's duration, or less if it was stopped.
    pub ran_for: Duration,
}

impl Outcome {
    /// True time-average age at the monitor (s).
    pub fn age(&self) -> Option<f64> {
        self.monitor.as_ref()?.avg_age
    }
}

/// The monitor's report for `session`, if present.
pub fn session_in(snap: &Snapshot, session: u64) -> Option<&SessionReport> {
    snap.sessions.iter().find(|s| s.key.session == session)
}

/// Area under a session's true age curve (s²) up to its latest update, and that update's arrival
/// time (s): differences of two such pairs give the average age between two snapshots.
pub fn age_area(snap: &Snapshot, key: &SessionKey) -> Option<(f64, f64)> {
    session_age_area(snap.session(key)?)
}

/// [`age_area`] of one session's report.
pub fn session_age_area(s: &SessionReport) -> Option<(f64, f64)> {
    let span = s.stats.last_seen.nanos_since(s.stats.first_seen) as f64 * 1e-9;
    Some((s.avg_age? * span, s.stats.last_seen.as_secs_f64()))
}

/// The average age between two readings of [`session_age_area`], `mark` then `end`: the growth
/// of the area over the time between their latest updates (none if no update came between).
pub fn age_between(mark: (f64, f64), end: (f64, f64)) -> Option<f64> {
    let ((a0, t0), (a1, t1)) = (mark, end);
    (t1 > t0).then(|| (a1 - a0) / (t1 - t0))
}

/// Runs the experiment.
pub fn run(exp: Experiment, mut on_tick: impl FnMut(&Tick<'_>)) -> io::Result<Vec<Outcome>> {
    let host = if exp.ipv6 { "[::1]:0" } else { "127.0.0.1:0" };
    let any: SocketAddr = host.parse().map_err(io::Error::other)?;
    let monitor_cfg = MonitorConfig {
        clocks_synchronised: true,
        max_sessions: exp.sources.len() + 1024,
        // Every source is local: one host may hold the whole table.
        max_prefix_share: 1.0,
        ..MonitorConfig::default()
    };
    let mut server_cfg = ServerConfig::new(any, monitor_cfg);
    server_cfg.snapshot_every = exp.tick.min(Duration::from_millis(200));
    let server = MonitorServer::start(server_cfg, None)?;
    // Build the chain from the monitor outwards.
    let mut target = server.local_addr();
    let mut relays = Vec::new();
    for (i, path) in exp.relays.iter().enumerate().rev() {
        let seed = exp.seed.wrapping_add(i as u64);
        let relay = Relay::start(RelayConfig::symmetric(any, target, path.clone(), seed))?;
        target = relay.local_addr();
        relays.push(relay);
    }
    relays.reverse();
    let mut set = SourceSet::new(target)?;
    let mut names = Vec::new();
    for spec in exp.sources {
        names.push(spec.name.clone());
        set.add(spec);
    }
    let start = Instant::now();
    let limits = RunLimits {
        duration: Some(exp.duration),
        stop: exp.stop,
        ..RunLimits::default()
    };
    let reports = set.run(&limits, exp.tick, |sources| {
        let snapshot = server.snapshot();
        on_tick(&Tick {
            elapsed: start.elapsed(),
            sources,
            monitor: &snapshot,
            relays: &relays,
        });
    })?;
    let ran_for = start.elapsed().min(exp.duration);
    // Let the last updates arrive before the final snapshot.
    std::thread::sleep(Duration::from_millis(100));
    let last = server.stop()?;
    drop(relays);
    Ok(reports
        .into_iter()
        .map(|r| Outcome {
            monitor: session_in(&last, r.session).cloned(),
            name: r.name,
            controller: r.controller,
            session: r.session,
            source: r.stats,
            ran_for,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::age_between;

    #[test]
    fn the_age_between_readings_is_the_area_grown_over_the_time_between() {
        // Area 1 s² at t = 2 s, then 4 s² at t = 4 s: 3 s² over 2 s.
        assert_eq!(age_between((1.0, 2.0), (4.0, 4.0)), Some(1.5));
        // No update between the readings: no average.
        assert_eq!(age_between((1.0, 2.0), (1.0, 2.0)), None);
    }
}
