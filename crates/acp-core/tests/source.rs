//! The source state machine driven by hand: every datagram and every instant is chosen by the test.

use std::net::SocketAddr;
use std::time::Duration;

use acp_core::source::{AckOutcome, Phase};
use acp_core::wire::{Ack, Update, HEADER_LEN};
use acp_core::{AppMode, Fixed, Monitor, MonitorConfig, Source, SourceConfig, Time};

const SESSION: u64 = 0xABCD;

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

fn at_will(payload: &'static [u8]) -> AppMode {
    AppMode::GenerateAtWill(Box::new(move |_, out: &mut Vec<u8>| {
        out.extend_from_slice(payload)
    }))
}

fn source(mode: AppMode, rate: f64) -> Source {
    Source::new(
        SourceConfig::default(),
        Box::new(Fixed::new(rate)),
        mode,
        SESSION,
        Time::ZERO,
    )
}

/// Answers `update` as a real monitor would, at `now`.
struct Echo {
    monitor: Monitor,
    peer: SocketAddr,
}

impl Echo {
    fn new() -> Self {
        Echo {
            monitor: Monitor::new(MonitorConfig::default(), Time::ZERO),
            peer: SocketAddr::from(([127, 0, 0, 1], 9)),
        }
    }

    fn ack(&mut self, now: Time, update: &[u8]) -> Vec<u8> {
        let mut buf = vec![0u8; 128];
        let h = self
            .monitor
            .handle_datagram(now, self.peer, update, &mut buf)
            .expect("valid update");
        buf.truncate(h.ack_len);
        buf
    }
}

/// Runs the 10 probes with a 20 ms RTT; returns the time initialisation ended.
fn initialise(src: &mut Source, echo: &mut Echo) -> Time {
    let mut now = Time::ZERO;
    let mut buf = Vec::new();
    for i in 0..10 {
        src.push(now, b"probe"); // ignored in generate-at-will mode
        let tx = src.poll_transmit(now, &mut buf).expect("probe due");
        assert!(tx.probe, "probe {i}");
        assert!(src.poll_transmit(now, &mut buf).is_none(), "stop and wait");
        now += Duration::from_millis(20);
        let ack = echo.ack(now, &buf);
        assert_eq!(src.handle_datagram(now, &ack), AckOutcome::InSequence);
    }
    assert_eq!(src.phase(), Phase::Running);
    now
}

#[test]
fn initialisation_sets_rtt_from_probes_and_fixed_rate_paces_exactly() {
    let mut src = source(at_will(b"x"), 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    let stats = src.stats(t0);
    assert_eq!(stats.probes_sent, 10);
    assert!((stats.rtt.unwrap() - 0.020).abs() < 1e-12);
    // Fixed(100): one update every 10 ms from the end of initialisation.
    let mut buf = Vec::new();
    let mut sends = vec![];
    let mut now = t0;
    while now < t0 + Duration::from_millis(100) {
        if let Some(tx) = src.poll_transmit(now, &mut buf) {
            assert!(!tx.probe);
            sends.push(now.nanos_since(t0) / 1_000_000);
        }
        now = src
            .poll_timeout()
            .unwrap()
            .max(now + Duration::from_nanos(1));
    }
    assert_eq!(sends, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
}

#[test]
fn generator_is_asked_for_a_fresh_payload_at_each_send() {
    let mut src = Source::new(
        SourceConfig::default(),
        Box::new(Fixed::new(10.0)),
        AppMode::GenerateAtWill(Box::new(|now: Time, out: &mut Vec<u8>| {
            out.extend_from_slice(&now.as_nanos().to_be_bytes())
        })),
        SESSION,
        Time::ZERO,
    );
    let mut buf = Vec::new();
    src.poll_transmit(ms(3), &mut buf).unwrap();
    let u = Update::decode(&buf).unwrap();
    assert_eq!(u.payload, &ms(3).as_nanos().to_be_bytes());
    assert_eq!((u.gen_ts, u.hold_ns, u.seq), (ms(3).as_nanos(), 0, 1));
}

#[test]
fn push_mode_keeps_only_the_freshest_unsent_update() {
    let mut src = source(AppMode::Push, 100.0);
    let mut buf = Vec::new();
    // Nothing to send until the application offers something.
    assert!(src.poll_transmit(ms(0), &mut buf).is_none());
    assert_eq!(src.poll_timeout(), None);
    src.push(ms(1), b"old");
    src.push(ms(2), b"older-but-replaced");
    src.push(ms(4), b"fresh");
    let tx = src.poll_transmit(ms(5), &mut buf).unwrap();
    let u = Update::decode(&buf[..tx.len]).unwrap();
    assert_eq!(u.payload, b"fresh");
    assert_eq!(u.gen_ts, ms(4).as_nanos());
    assert_eq!(u.hold_ns, 1_000_000);
    assert_eq!(src.stats(ms(5)).dropped_stale, 2);
    // Sent once, not again.
    assert!(src.poll_transmit(ms(6), &mut buf).is_none());
}

#[test]
fn rtt_is_measured_from_transmission_not_generation() {
    let mut src = source(AppMode::Push, 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    let mut buf = Vec::new();
    src.push(t0, b"a");
    let sent = t0 + Duration::from_millis(7);
    src.poll_transmit(sent, &mut buf).unwrap();
    let ack = echo.ack(sent + Duration::from_millis(10), &buf);
    let now = sent + Duration::from_millis(20);
    assert_eq!(src.handle_datagram(now, &ack), AckOutcome::InSequence);
    let s = src.stats(now);
    // RTT̄ was 20 ms from the probes; a 20 ms sample leaves it there (a sample taken from the
    // generation time, 27 ms, would move it to 21.4 ms). Estimated age counts from generation.
    assert!((s.rtt.unwrap() - 0.020).abs() < 1e-12, "{:?}", s.rtt);
    assert!((s.age.unwrap() - 0.027).abs() < 1e-12);
}

#[test]
fn invalid_and_out_of_sequence_acks_are_counted_and_ignored() {
    let mut src = source(at_will(b"p"), 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    let mut buf = Vec::new();
    let mut sent = vec![];
    let mut now = t0;
    for _ in 0..3 {
        src.poll_transmit(now, &mut buf).unwrap();
        sent.push(buf.clone());
        now = src.poll_timeout().unwrap();
    }
    let ack3 = echo.ack(now, &sent[2]);
    let ack2 = echo.ack(now, &sent[1]);
    assert_eq!(src.handle_datagram(now, &ack3), AckOutcome::InSequence);
    let before = src.stats(now);
    assert_eq!(src.handle_datagram(now, &ack2), AckOutcome::OutOfSequence);
    let after = src.stats(now);
    assert_eq!(after.acks_out_of_sequence, 1);
    assert_eq!(
        (after.rtt, after.z, after.backlog),
        (before.rtt, before.z, before.backlog)
    );

    let forge = |session: u64, seq: u64, gen_ts: u64| {
        let a = Ack {
            flags: 0,
            session,
            seq,
            gen_ts,
            rx_ts: 0,
            hold_ns: 0,
            feedback: &[],
        };
        let mut b = vec![0u8; HEADER_LEN];
        a.encode(&mut b).unwrap();
        b
    };
    let sent_seq = 13; // 10 probes + 3 updates
    for bad in [
        forge(SESSION + 1, sent_seq, 0),        // another session
        forge(SESSION, sent_seq + 1, 0),        // never sent
        forge(SESSION, sent_seq, u64::MAX - 5), // generated in the future
        sent[0].clone(),                        // an UPDATE, not an ACK
        b"\x00\x01garbage".to_vec(),            // not ACP
    ] {
        assert_eq!(src.handle_datagram(now, &bad), AckOutcome::Invalid);
    }
    assert_eq!(src.stats(now).invalid, 5);
    assert_eq!(src.stats(now).backlog, 0);
}

#[test]
fn unanswered_probes_repeat_once_per_timeout_forever() {
    let mut src = source(at_will(b"p"), 100.0);
    let mut buf = Vec::new();
    let mut now = Time::ZERO;
    let mut probes = 0;
    while now <= Time::from_secs(30) {
        if src.poll_transmit(now, &mut buf).is_some() {
            probes += 1;
        }
        now = src
            .poll_timeout()
            .expect("a source always has a next deadline");
    }
    // One probe per 1 s timeout: t = 0, 1, …, 30.
    assert_eq!(probes, 31);
    assert_eq!(src.phase(), Phase::Probing);
    assert_eq!(src.stats(now).probes_lost, 30);
}

#[test]
fn outage_drops_to_the_floor_rate_and_ack_restores_the_rate() {
    let mut src = source(at_will(b"p"), 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    let mut buf = Vec::new();
    let mut now = t0;
    let mut sends = vec![];
    let mut last = Vec::new();
    // No ACKs at all for 5 s.
    while now < t0 + Duration::from_secs(5) {
        if src.poll_transmit(now, &mut buf).is_some() {
            sends.push(now);
            last = buf.clone();
        }
        src.handle_timeout(now);
        now = src.poll_timeout().unwrap();
    }
    assert_eq!(src.phase(), Phase::Outage);
    assert_eq!(src.stats(now).outages, 1);
    // Outage declared after max(0.5 s, 4·RTT̄, 3/λ) = 0.5 s of silence (the last ACK came at
    // t0): 50 updates at 100/s, then one every 0.5 s (floor 2/s).
    let gaps: Vec<u64> = sends
        .windows(2)
        .map(|w| w[1].nanos_since(w[0]) / 1_000_000)
        .collect();
    assert!(gaps[..49].iter().all(|&g| g == 10), "{gaps:?}");
    assert!(gaps[50..].iter().all(|&g| g == 500), "{gaps:?}");
    assert!(sends.len() >= 50 + 8);
    // An ACK for the latest update ends the outage and restores 100/s.
    let ack = echo.ack(now, &last);
    assert_eq!(src.handle_datagram(now, &ack), AckOutcome::InSequence);
    assert_eq!(src.phase(), Phase::Running);
    assert_eq!(src.rate(), 100.0);
    assert_eq!(src.stats(now).backlog, 0);
}

/// A controller that records the receiver feedback it is given (the hook a WiFi aggregation
/// controller will use) and otherwise behaves like Fixed.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(u8, Vec<u8>)>>>;

#[derive(Debug, Default)]
struct Recorder {
    seen: Seen,
}

impl acp_core::Controller for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn on_epoch(
        &mut self,
        _: &acp_core::controller::EpochSummary,
        est: &acp_core::controller::Estimates,
    ) -> f64 {
        est.rate
    }
    fn epoch_length(&self, _: &acp_core::controller::Estimates) -> f64 {
        1.0
    }
    fn on_feedback(&mut self, item: &acp_core::wire::FeedbackItem<'_>) {
        self.seen
            .lock()
            .unwrap()
            .push((item.kind, item.value.to_vec()));
    }
}

#[test]
fn receiver_feedback_reaches_the_controller() {
    use acp_core::wire::{AggregationReport, FeedbackItem, FEEDBACK_AGGREGATION};
    let recorder = Recorder::default();
    let seen = recorder.seen.clone();
    let mut src = Source::new(
        SourceConfig::default(),
        Box::new(recorder),
        at_will(b"payload-long-enough-for-three-feedback-elements"),
        SESSION,
        Time::ZERO,
    );
    let report = AggregationReport {
        slot: 3,
        slot_ms: 500,
        frames: 12,
        level_256: 24 * 256,
        phy_kbps: 0,
        delay_us: 0,
    }
    .encode();
    let mut echo = Echo::new();
    // An unknown kind passes through; an aggregation report too short for version 1 is counted
    // and dropped; a well-formed one reaches the controller.
    echo.monitor
        .set_feedback(&[
            FeedbackItem {
                kind: 9,
                value: &[0, 24],
            },
            FeedbackItem {
                kind: FEEDBACK_AGGREGATION,
                value: &[0, 24],
            },
            FeedbackItem {
                kind: FEEDBACK_AGGREGATION,
                value: &report,
            },
        ])
        .unwrap();
    let t0 = initialise(&mut src, &mut echo);
    let mut buf = Vec::new();
    src.poll_transmit(t0, &mut buf).unwrap();
    let ack = echo.ack(t0 + Duration::from_millis(5), &buf);
    let before = src.stats(t0).feedback_malformed;
    src.handle_datagram(t0 + Duration::from_millis(5), &ack);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.last().unwrap(), &(1, report.to_vec()));
    assert_eq!(seen[seen.len() - 2], (9, vec![0, 24]));
    assert!(!seen.contains(&(1, vec![0, 24])));
    assert_eq!(src.stats(t0).feedback_malformed, before + 1);
}

#[test]
fn an_idle_push_source_is_not_in_an_outage() {
    let mut src = source(AppMode::Push, 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    // Nothing offered for 10 s: no sends, nothing outstanding, no outage.
    src.handle_timeout(t0 + Duration::from_secs(10));
    assert_eq!(src.phase(), Phase::Running);
    // A fresh update after the pause is sent at once and its ACK is in time.
    let now = t0 + Duration::from_secs(10);
    src.push(now, b"late news");
    let mut buf = Vec::new();
    assert!(src.poll_transmit(now, &mut buf).is_some());
    src.handle_timeout(now + Duration::from_millis(100));
    assert_eq!(src.phase(), Phase::Running);
    // But an update that stays unanswered for 0.5 s is an outage.
    src.handle_timeout(now + Duration::from_millis(500));
    assert_eq!(src.phase(), Phase::Outage);
}

#[test]
fn acks_that_do_not_echo_what_was_sent_are_rejected() {
    // The attack: an on-path host that knows the session id answers every update at once with
    // made-up timestamps ("immediate" ACKs shrink RTT̄ and push the rate up; backdated ones
    // inflate it). Only an ACK echoing the sequence's own gen_ts and hold may count.
    let mut src = source(at_will(b"p"), 100.0);
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    let mut buf = Vec::new();
    src.poll_transmit(t0, &mut buf).unwrap();
    let update = buf.clone();
    let seq = src.stats(t0).sent;
    let real = echo.ack(t0 + Duration::from_millis(10), &update);
    let before = src.stats(t0);
    let now = t0 + Duration::from_millis(1);
    for gen_ts in [now.as_nanos(), t0.as_nanos() / 2] {
        let forged = Ack {
            flags: 0,
            session: SESSION,
            seq,
            gen_ts,
            rx_ts: now.as_nanos(),
            hold_ns: 0,
            feedback: &[],
        };
        let mut bytes = vec![0u8; HEADER_LEN];
        forged.encode(&mut bytes).unwrap();
        assert_eq!(src.handle_datagram(now, &bytes), AckOutcome::Invalid);
    }
    let after = src.stats(now);
    assert_eq!((after.acks_mismatched, after.invalid), (2, 2));
    assert_eq!(after.acks_in_sequence, before.acks_in_sequence);
    assert_eq!((after.rtt, after.backlog), (before.rtt, 1));
    // The real ACK still counts.
    let later = t0 + Duration::from_millis(20);
    assert_eq!(src.handle_datagram(later, &real), AckOutcome::InSequence);
    assert_eq!(src.stats(later).backlog, 0);
}

/// Runs at 1/s until the first epoch ends, then asks for 100/s.
#[derive(Debug)]
struct Raiser;

impl acp_core::Controller for Raiser {
    fn name(&self) -> String {
        "raiser".into()
    }
    fn initial_rate(&mut self, _: &acp_core::controller::Estimates) -> f64 {
        1.0
    }
    fn on_epoch(
        &mut self,
        _: &acp_core::controller::EpochSummary,
        _: &acp_core::controller::Estimates,
    ) -> f64 {
        100.0
    }
    fn epoch_length(&self, _: &acp_core::controller::Estimates) -> f64 {
        2.0
    }
}

/// Fuzzer finding (`fuzz/regressions/source-late-outage`): silence is an outage after
/// max(0.5 s, 4·RTT̄, 3/λ). At 1/s that is 3 s; an epoch that raises λ to 100/s 2 s into the
/// silence cuts it to 0.5 s, so the outage is due at once. The source used to check the deadline
/// only before ending the epoch, and `poll_timeout` then named an instant already past.
#[test]
fn an_epoch_that_raises_the_rate_enters_a_due_outage_at_once() {
    let mut src = Source::new(
        SourceConfig::default(),
        Box::new(Raiser),
        at_will(b"p"),
        SESSION,
        Time::ZERO,
    );
    let mut echo = Echo::new();
    let t0 = initialise(&mut src, &mut echo);
    assert_eq!(src.rate(), 1.0);
    let mut buf = Vec::new();
    let mut now = t0;
    loop {
        // `handle_timeout` alone, as a runtime calls it when its timer fires (`poll_transmit`
        // calls it too, and a second call used to hide the bug).
        src.handle_timeout(now);
        if src.stats(now).epochs == 1 {
            break;
        }
        src.poll_transmit(now, &mut buf);
        let next = src.poll_timeout().unwrap();
        assert!(next >= now, "timer in the past: {next:?} at {now:?}");
        now = next;
    }
    assert!(src.poll_timeout().unwrap() > now);
    // The one update (at t0 + 0.98 s) was never ACKed: at t0 + 2 s the epoch raised the rate
    // and found the shortened outage already due.
    assert_eq!(now, t0 + Duration::from_secs(2));
    assert_eq!(src.phase(), Phase::Outage);
    assert_eq!(src.stats(now).outages, 1);
}

#[test]
fn check_rates_accepts_ordered_positive_ranges_only() {
    let with = |min_rate, max_rate| SourceConfig {
        min_rate,
        max_rate,
        ..SourceConfig::default()
    };
    assert_eq!(SourceConfig::default().check_rates(), Ok(()));
    assert_eq!(with(5.0, 5.0).check_rates(), Ok(()));
    for (min, max) in [
        (0.0, 1.0),
        (-1.0, 1.0),
        (2.0, 1.0),
        (f64::NAN, 1.0),
        (1.0, f64::INFINITY),
    ] {
        let err = with(min, max).check_rates().unwrap_err();
        assert!(err.contains("0 < min_rate <= max_rate"), "{err}");
    }
}
