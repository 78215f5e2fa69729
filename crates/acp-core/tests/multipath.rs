//! A multipath source driven through the scheduler's two driver methods,
//! `PathScheduler::on_timer` and `PathScheduler::handle_datagram`, over two hand-run paths: the
//! rate follows a path's failure and return with no other call, and only for controllers whose
//! rate is a share of the capacity.

use std::collections::VecDeque;
use std::net::SocketAddr;

use acp_core::controller::{EpochSummary, Estimates};
use acp_core::multipath::{PathRule, PathScheduler};
use acp_core::source::AckOutcome;
use acp_core::{
    AppMode, Controller, Fixed, Lazy, Monitor, MonitorConfig, Source, SourceConfig, Time,
};

/// Keeps the rate in force (its first 100 updates/s, scaled as the paths change): the rate moves
/// only by `Source::scale_rate`.
#[derive(Debug)]
struct Keep;

impl Controller for Keep {
    fn name(&self) -> String {
        "keep".into()
    }
    fn initial_rate(&mut self, _est: &Estimates) -> f64 {
        100.0
    }
    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        est.rate
    }
    fn epoch_length(&self, _est: &Estimates) -> f64 {
        0.1
    }
}

/// Path 1 is blackholed over this span (ms).
const BLACKHOLE: (u64, u64) = (600, 900);
/// Round trips of paths 0 and 1 (ms).
const RTT: [u64; 2] = [20, 30];

/// What a run showed: the rate before path 1 failed, just after it was found overdue, and at the
/// end; when it came back (ms).
#[derive(Debug)]
struct Run {
    before: f64,
    after_failure: f64,
    end: f64,
    recovered_ms: u64,
}

/// One source under `controller`, round robin over the two paths, for 1.2 s in 1 ms steps (about 250 ms of probes first). Each ACK
/// goes back over the path its update took; the monitor answers at once.
fn run(controller: Box<dyn Controller>) -> Run {
    let mode = AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| out.push(7)));
    let mut source = Source::new(SourceConfig::default(), controller, mode, 9, Time::ZERO);
    source.set_multipath();
    let mut scheduler = PathScheduler::new(PathRule::RoundRobin, 2).unwrap();
    let mut monitor = Monitor::new(MonitorConfig::default(), Time::ZERO);
    let peers = [0, 1].map(|k| SocketAddr::from(([127, 0, 0, 1], 9000 + k)));
    let mut acks: VecDeque<(u64, usize, Vec<u8>)> = VecDeque::new();
    let mut buf = Vec::new();
    let (mut before, mut after_failure, mut recovered_ms) = (None, None, None);
    for ms in 0..1200u64 {
        let now = Time::from_millis(ms);
        while acks.front().is_some_and(|&(t, _, _)| t <= ms) {
            let (_, k, ack) = acks.pop_front().unwrap();
            let outcome = scheduler.handle_datagram(&mut source, k, now, &ack);
            assert!(matches!(
                outcome,
                AckOutcome::InSequence | AckOutcome::OutOfSequence
            ));
        }
        if source.poll_timeout().is_some_and(|t| t <= now) {
            scheduler
                .on_timer(&mut source, now, &mut buf, |data, _, paths| {
                    for k in paths.iter() {
                        if k == 1 && (BLACKHOLE.0..BLACKHOLE.1).contains(&ms) {
                            continue;
                        }
                        let mut ack = vec![0u8; 128];
                        let h = monitor
                            .handle_datagram(now, peers[k], data, &mut ack)
                            .expect("a valid update");
                        ack.truncate(h.ack_len);
                        acks.push_back((ms + RTT[k], k, ack));
                    }
                    acks.make_contiguous().sort_by_key(|a| a.0);
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        let b = scheduler.path_stats(1, now).unwrap();
        if ms == BLACKHOLE.0 {
            before = Some(source.rate());
        }
        if ms > BLACKHOLE.0 && b.overdue && after_failure.is_none() {
            after_failure = Some(source.rate());
        }
        if let (None, Some(t), true) = (recovered_ms, b.recovered_at, ms >= BLACKHOLE.1) {
            recovered_ms = Some(t.nanos_since(Time::ZERO) / 1_000_000);
        }
    }
    Run {
        before: before.unwrap(),
        after_failure: after_failure.expect("path 1 found overdue"),
        end: source.rate(),
        recovered_ms: recovered_ms.expect("path 1 came back"),
    }
}

#[test]
fn the_rate_follows_a_path_through_the_drivers_two_calls_alone() {
    let r = run(Box::new(Keep));
    eprintln!("{r:?}");
    assert_eq!(r.before, 100.0);
    // Path 1 carried half the updates (round robin): the rate loses that share (an EWMA over
    // about 16 choices, so within 1/16 of a half) when it is found overdue, in the same
    // `on_timer` call.
    assert!(
        (0.44 * 100.0..0.56 * 100.0).contains(&r.after_failure),
        "{r:?}"
    );
    // Its first ACK after the blackhole gives the share back, in `handle_datagram`.
    assert!((BLACKHOLE.1..BLACKHOLE.1 + 2 * RTT[1]).contains(&r.recovered_ms));
    assert!((r.end - 100.0).abs() < 1e-9, "{r:?}");
}

#[test]
fn fixed_and_lazy_rates_are_not_scaled_by_a_failure() {
    let fixed = run(Box::new(Fixed::new(100.0)));
    assert_eq!(
        (fixed.before, fixed.after_failure),
        (100.0, 100.0),
        "{fixed:?}"
    );
    // Lazy: one update per RTT̄ (of ACKs from both paths), before and after.
    let lazy = run(Box::new(Lazy));
    assert!(
        lazy.after_failure >= 0.95 * lazy.before,
        "{lazy:?}: a Lazy rate was scaled"
    );
}
