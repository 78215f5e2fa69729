//! A multipath ACP source over two relays on loopback (wall clock): one session over both paths,
//! one path slowed, then blackholed mid-run, then restored. The monitor must see one session;
//! the updates lost are at most those in flight on the failed path; the path must carry ACKs
//! again within two of its round trips of its return; the age must be far below the failing
//! path's alone and, under QAware, within the run-to-run spread of the best single path's and
//! minSRTT's; with every update on both paths no worse than the best single path's. Real time
//! on a shared machine: each run is at `SCHED_FIFO` when it may, the
//! runs of this binary go one at a time, and every tolerance below says what it allows for.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use acp_core::multipath::{PathRule, PathStats};
use acp_core::{MonitorConfig, Seek, SourceConfig, Time};
use acp_netmodel::{Schedule, Step};
use acp_runtime::clock;
use acp_runtime::driver::{Payload, RunLimits, SourceReport, SourceSet, SourceSpec};
use acp_runtime::experiment::{self, Experiment};
use acp_runtime::relay::{PathConfig, Relay, RelayConfig};
use acp_runtime::server::{MonitorServer, ServerConfig, SessionReport};

mod common;
use common::serial;

const PAYLOAD: usize = 100;
/// 100 kbit/s: an update of 172 bytes on the wire holds the link 13.8 ms, so the paths' service
/// (what a second path adds) outweighs the host's scheduling noise.
const RATE_BPS: f64 = 100e3;
/// When the second path is slowed (its one-way delay from 5 ms to 10 ms), blackholed and
/// restored, from the start of the run.
const SLOWED_AT: Duration = Duration::from_secs(2);
const FAILS_AT: Duration = Duration::from_secs(4);
const RETURNS_AT: Duration = Duration::from_secs(6);
const RUN: Duration = Duration::from_secs(8);
/// How often the multipath run looks at its source (and switches the blackhole).
const TICK: Duration = Duration::from_millis(10);
/// How far above the best single path's age a multipath age may lie: the run-to-run spread of
/// the wall-clock age beside two busy loops (see where it is asserted).
const TOLERANCE: f64 = 1.5;

fn steady() -> PathConfig {
    PathConfig::lossless(RATE_BPS, Duration::from_millis(5), 50)
}

fn slowed() -> PathConfig {
    let mut p = steady();
    p.link.schedule = Some(Schedule {
        steps: vec![Step {
            at: SLOWED_AT,
            rate_bps: None,
            delay: Some(Duration::from_millis(10)),
            loss: None,
        }],
        repeat: None,
    });
    p
}

/// What the run saw of the failing path (a multipath run's path 1).
#[derive(Debug, Default)]
struct Failure {
    /// At the blackhole's start: updates in flight on the path, updates sent on it, its SRTT (s).
    at_failure: Option<(usize, u64, f64)>,
    /// Updates sent on it when it was first seen overdue (none if it never was: the scheduler
    /// sent it nothing long enough before the return to miss an ACK).
    sent_when_overdue: Option<u64>,
    /// Updates sent on it when it returned.
    sent_at_return: Option<u64>,
    /// When it returned (the process clock).
    at_return: Option<Time>,
    /// Its first ACK after the return, which ended its overdue state.
    recovered: Option<Time>,
}

impl Failure {
    /// Blackholes `relay` from `FAILS_AT` to `RETURNS_AT` after the start, watching `path` of a
    /// multipath source (none for a single-path run).
    fn on_tick(&mut self, elapsed: Duration, relay: &Relay, path: Option<&PathStats>) {
        if elapsed >= FAILS_AT && self.at_failure.is_none() {
            relay.set_blackhole(true);
            self.at_failure = Some(path.map_or((0, 0, 0.0), |p| {
                (p.in_flight, p.sent, p.srtt.unwrap_or(0.0))
            }));
        }
        if let (Some(p), None, None) = (path, self.sent_when_overdue, self.at_return) {
            // Read at the first tick after the path was found overdue: the probes sent on it
            // since then make the count err high, never low.
            if self.at_failure.is_some() && p.overdue {
                self.sent_when_overdue = Some(p.sent);
            }
        }
        if elapsed >= RETURNS_AT && self.at_return.is_none() {
            relay.set_blackhole(false);
            self.at_return = Some(clock::now());
            self.sent_at_return = path.map(|p| p.sent);
        }
        if let (Some(p), Some(back)) = (path, self.at_return) {
            self.recovered = p.recovered_at.filter(|&r| r >= back);
        }
    }
}

fn spec() -> SourceSpec {
    SourceSpec {
        name: "mp".into(),
        controller: Box::new(Seek::new()),
        config: SourceConfig::default(),
        payload: Payload::Synthetic(PAYLOAD),
    }
}

/// A multipath run over `paths` under `scheduler`, path 1 (if any) failing: the source's final
/// report and the monitor's view of its session. (Its own loop rather than `experiment::run`,
/// whose ticks wait for the monitor's snapshot on the source's thread.)
fn multipath(
    scheduler: PathRule,
    paths: Vec<PathConfig>,
) -> (SourceReport, SessionReport, Failure) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let monitor = MonitorConfig {
        clocks_synchronised: true,
        max_prefix_share: 1.0,
        ..MonitorConfig::default()
    };
    let server = MonitorServer::start(ServerConfig::new(any, monitor), None).expect("monitor");
    let relays: Vec<Relay> = paths
        .into_iter()
        .enumerate()
        .map(|(k, path)| {
            Relay::start(RelayConfig::symmetric(
                any,
                server.local_addr(),
                path,
                21 + k as u64,
            ))
            .expect("relay")
        })
        .collect();
    let hops: Vec<SocketAddr> = relays.iter().map(Relay::local_addr).collect();
    let mut set = SourceSet::multipath(&hops, scheduler).expect("sockets");
    set.add(spec());
    let mut failure = Failure::default();
    let start = Instant::now();
    let limits = RunLimits {
        duration: Some(RUN),
        ..RunLimits::default()
    };
    let last = set
        .run(&limits, TICK, |r| {
            let path = r[0].paths.get(1).map(|(_, p)| p);
            if let Some(relay) = relays.get(1) {
                failure.on_tick(start.elapsed(), relay, path);
            }
        })
        .expect("source runs")
        .pop()
        .expect("one source");
    // Let the last updates arrive.
    std::thread::sleep(Duration::from_millis(100));
    let snapshot = server.stop().expect("monitor stops");
    let session = experiment::session_in(&snapshot, last.session)
        .expect("the monitor saw the session")
        .clone();
    assert_eq!(snapshot.sessions.len(), 1, "one session over both paths");
    (last, session, failure)
}

/// A single-path run over `path`, failing if `fails`: the monitor's time-average age (s).
fn single(path: PathConfig, fails: bool) -> f64 {
    let exp = Experiment {
        relays: vec![path],
        sources: vec![spec()],
        duration: RUN,
        tick: Duration::from_millis(500),
        seed: 21,
        ipv6: false,
        stop: None,
    };
    let mut failure = Failure::default();
    experiment::run(exp, |t| {
        if fails {
            failure.on_tick(t.elapsed, &t.relays[0], None)
        }
    })
    .expect("experiment runs")
    .pop()
    .and_then(|o| o.age())
    .expect("the monitor saw the session")
}

#[test]
fn qaware_rides_out_a_slowed_then_blackholed_path() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let (mp, session, failure) = multipath(PathRule::QAware, vec![steady(), slowed()]);
    let (_, minsrtt, _) = multipath(PathRule::MinSrtt, vec![steady(), slowed()]);
    let age_minsrtt = minsrtt.avg_age.expect("minSRTT age");
    // The steady path alone through the same source loop: the multipath runs' ages differ
    // from `experiment::run`'s by the loop, not only by the scheduler.
    let (_, steady_alone, _) = multipath(PathRule::QAware, vec![steady()]);
    let age_best = steady_alone.avg_age.expect("steady path age");
    let age_other = single(slowed(), true);
    let s = &session.stats;
    let age_mp = session.avg_age.expect("multipath age");
    let (in_flight, sent_before, srtt) = failure.at_failure.expect("the path failed");
    let returned = failure.at_return.expect("the path returned");
    // Updates that went into the blackhole: those sent until the path was found overdue, or,
    // if it never was (QAware found path A enough), all sent on it before the return.
    let sent_failing = failure
        .sent_when_overdue
        .or(failure.sent_at_return)
        .expect("the path's count")
        - sent_before;
    // A path never found overdue has nothing to recover from.
    let took = match (failure.sent_when_overdue, failure.recovered) {
        (None, _) => Duration::ZERO,
        (Some(_), recovered) => {
            let recovered = recovered.expect("the path carried ACKs again");
            Duration::from_nanos(recovered.nanos_since(returned))
        }
    };
    eprintln!(
        "multipath qaware: age {:.2} ms (minSRTT {:.2} ms, steady path alone {:.2} ms, failing \
         path alone {:.2} ms); lost {} (in flight on the failed path at failure {in_flight}, sent there until \
         found overdue {sent_failing}); recovery {:.1} ms after the return (SRTT before the \
         failure {:.1} ms); sent {} delivered {} stale {} duplicates {}; paths {:?}",
        age_mp * 1e3,
        age_minsrtt * 1e3,
        age_best * 1e3,
        age_other * 1e3,
        s.lost,
        took.as_secs_f64() * 1e3,
        srtt * 1e3,
        mp.stats.sent,
        s.delivered,
        s.stale,
        s.duplicates,
        mp.paths,
    );
    // Updates lost: at most those in flight on the failed path when it failed plus those
    // sent on it before it was found overdue.
    assert!(
        s.lost <= in_flight as u64 + sent_failing,
        "lost {} > {in_flight} + {sent_failing}",
        s.lost
    );
    // Recovery within two round trips of the path (its SRTT before the failure), plus 40 ms of
    // scheduling delay on a loaded host.
    let limit = Duration::from_secs_f64(2.0 * srtt) + Duration::from_millis(40);
    assert!(
        took <= limit,
        "recovered {took:?} after the return, limit {limit:?}"
    );
    // Far better than the failing path alone, and at most the best single path's and
    // minSRTT's within 50 %. The same network in the simulator (`scenarios/lab/multipath_acp.toml`,
    // exact) puts QAware 6.8 % below path A alone (26.48 against 28.41 ms) and 19 % below
    // minSRTT. On the wall clock, with `b̂` from the pairs that queued (their median), QAware
    // over A alone was 0.94–1.04 in six runs beside other helpers' builds (load average 6–9)
    // and 0.93–1.37 in twelve beside two busy loops (load 6–9.5), where runs with `b̂` held at the
    // links' true 13.76 ms gave 0.99 and 1.18 (1.21 × minSRTT): with both cores busy Seek
    // overshoots in the first two seconds, queues updates on both paths and keeps a low rate
    // for the rest of the run, whatever the estimate (docs/MULTIPATH.md, "Why QAware is level
    // with path A on the real clock"). 50 % passes that spread and still fails a source that
    // keeps to the failed path (path B alone: 420–440 ms).
    assert!(
        age_mp < age_other,
        "multipath {age_mp} s vs failing path {age_other} s"
    );
    assert!(
        age_mp <= TOLERANCE * age_best,
        "multipath {age_mp} s vs best single path {age_best} s"
    );
    assert!(
        age_mp <= TOLERANCE * age_minsrtt,
        "multipath {age_mp} s vs minSRTT {age_minsrtt} s"
    );
}

#[test]
fn duplicate_sends_every_update_on_both_paths_and_the_monitor_keeps_one() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let (mp, session, _) = multipath(PathRule::Duplicate, vec![steady(), slowed()]);
    let age_best = single(steady(), false);
    let age_mp = session.avg_age.expect("multipath age");
    let s = &session.stats;
    eprintln!(
        "multipath duplicate: age {:.2} ms (steady path alone {:.2} ms); sent {} delivered {} \
         stale {} duplicates {} lost {}",
        age_mp * 1e3,
        age_best * 1e3,
        mp.stats.sent,
        s.delivered,
        s.stale,
        s.duplicates,
        s.lost
    );
    // Every update went both ways. Each sequence is accounted for once (delivered, stale or
    // lost; the last few may still be in flight when the run ends), an update is lost only if
    // both copies were (the steady path's 50-packet queue seldom overflows under Seek: at most
    // 1 %), and the copies that came second are duplicates: all but those lost in the 2 s
    // blackhole of one path of the 8 s run, so more than half.
    assert!(s.delivered + s.stale + s.lost + 5 >= mp.stats.sent, "{s:?}");
    assert!(s.lost * 100 <= mp.stats.sent, "{s:?}");
    assert!(s.duplicates >= s.delivered / 2, "{s:?}");
    assert!(
        mp.paths.iter().all(|(_, p)| p.sent == mp.stats.sent),
        "{:?}",
        mp.paths
    );
    // The monitor keeps the first copy of each update, so the age is at most the better
    // path's, within the run-to-run spread of the wall-clock age of Seek itself: 0.76–1.01 ×
    // the steady path alone in six runs (three beside two busy loops), but 1.18 in one CI run
    // (27 Nov, 22b0395: Seek sent 252 updates in 8 s against 423–479 in the others, the low
    // settled rate of Seek on a loaded host that docs/MULTIPATH.md describes), so the
    // QAware tests' [`TOLERANCE`].
    assert!(
        age_mp <= TOLERANCE * age_best,
        "multipath {age_mp} s vs best single path {age_best} s"
    );
}
