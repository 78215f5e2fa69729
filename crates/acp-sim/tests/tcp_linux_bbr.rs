//! What the sender tells BBR and what BBR does with it, each pinned to the Linux code it
//! follows: a write marks the connection application-limited only when it finds less than a
//! segment unsent and room in the window (`tcp_rate_check_app_limited`); the controller sees
//! what is in flight as `tcp_packets_in_flight` (SACKed segments out) and the losses an ACK's
//! predecessors marked during a recovery (`rs->losses`); BBR paces from its first RTT sample
//! (`bbr_init_pacing_rate_from_rtt`), takes losses off its window
//! (`bbr_set_cwnd_to_recover_or_restore`) and has the samples of ProbeRTT marked
//! application-limited (`bbr_update_min_rtt`). Deterministic: hand-made ACKs in virtual time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_core::Time;
use acp_sim::tcp::cc::bbr::{Bbr, Mode, HIGH_GAIN};
use acp_sim::tcp::cc::{AckEvent, CongestionControl, LossEvent};
use acp_sim::tcp::{Ack, Sender, TcpConfig};

const SMSS: u64 = 1000;

fn config() -> TcpConfig {
    TcpConfig {
        smss: SMSS as u32,
        delayed_ack: None,
        ..TcpConfig::default()
    }
}

fn ms(t: u64) -> Time {
    Time::from_millis(t)
}

/// Sends everything the sender will at `now`.
fn send_all(s: &mut Sender, now: Time) -> usize {
    std::iter::from_fn(|| s.poll_transmit(now)).count()
}

#[test]
fn a_write_marks_the_connection_app_limited_only_with_nothing_left_to_send() {
    let cfg = config();
    let mut s = Sender::new(&cfg, cfg.controller(1), Time::ZERO);
    // The first write finds nothing unsent and the window open.
    s.write(20 * SMSS);
    assert!(s.app_limited());
    assert_eq!(send_all(&mut s, Time::ZERO), 10, "the initial window");
    // Delivering past what was in flight then ends it.
    s.handle_ack(ms(40), Ack::new(10 * SMSS, 1 << 20));
    assert!(!s.app_limited());
    // Ten segments still unsent: the application is not what limits.
    s.write(SMSS);
    assert!(!s.app_limited());
    // Everything sent with room left in the window (20 segments after slow start's ACK).
    assert_eq!(send_all(&mut s, ms(40)), 11);
    s.write(SMSS);
    assert!(s.app_limited());
}

/// A controller that records the ACK events it hears, with a fixed window of 20 segments.
#[derive(Debug)]
struct Recorder(Arc<Mutex<Vec<AckEvent>>>);

impl CongestionControl for Recorder {
    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        self.0.lock().unwrap().push(*ack);
    }
    fn on_loss(&mut self, _now: Time, _loss: &LossEvent) {}
    fn on_recovery_end(&mut self, _now: Time) {}
    fn on_timeout(&mut self, _now: Time, _flight: u64) {}
    fn window(&self) -> u64 {
        20 * SMSS
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn phase(&self) -> &'static str {
        "recording"
    }
}

fn ack(n: u64, sack: &[(u64, u64)]) -> Ack {
    let mut a = Ack::new(n, 1 << 20);
    for (slot, &block) in a.sack.iter_mut().zip(sack) {
        *slot = Some(block);
    }
    a
}

#[test]
fn the_controller_sees_pipe_and_the_losses_found_during_recovery() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut s = Sender::new(&config(), Box::new(Recorder(events.clone())), Time::ZERO);
    s.write(10 * SMSS);
    // Segment k leaves at k ms.
    for k in 0..10 {
        assert!(s.poll_transmit(ms(k)).is_some());
    }
    // Segment 0 acknowledged, 2–4 SACKed: of the nine outstanding, six count in flight.
    // RACK then finds segment 1 lost (segment 4, sent after it, arrived 96 ms after it was
    // sent) and recovery starts: those losses are the recovery's, not the next ACK's.
    s.handle_ack(ms(100), ack(SMSS, &[(2 * SMSS, 5 * SMSS)]));
    assert_eq!(events.lock().unwrap()[0].flight, 6 * SMSS);
    assert_eq!(s.poll_transmit(ms(100)).map(|seg| seg.seq), Some(SMSS));
    // During recovery a duplicate ACK SACKs 6–9: RACK marks segment 5 lost.
    s.handle_ack(
        ms(101),
        ack(SMSS, &[(6 * SMSS, 10 * SMSS), (2 * SMSS, 5 * SMSS)]),
    );
    // The retransmission of segment 1 arrives: the next ACK brings segment 5's loss.
    s.handle_ack(ms(102), ack(5 * SMSS, &[(6 * SMSS, 10 * SMSS)]));
    let events = events.lock().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].lost, SMSS);
    assert_eq!(events[0].lost, 0);
}

/// A BBR controller for 1,448-byte segments with an initial window of ten.
fn bbr() -> Bbr {
    Bbr::new(1448, 14_480, 1)
}

fn acked(rtt_ms: u64) -> AckEvent {
    let mut a = AckEvent::new(1448);
    a.rtt = Some(Duration::from_millis(rtt_ms));
    a
}

#[test]
fn bbr_paces_startup_from_its_first_rtt_sample() {
    let mut b = bbr();
    // No RTT yet: the initial window per millisecond, at Linux's 99 %.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
    assert!(close(
        b.pacing_rate().unwrap(),
        0.99 * HIGH_GAIN * 14_480.0 / 1e-3
    ));
    // The first sample, 200 ms: the window (before this ACK grows it) per 200 ms.
    b.on_ack(ms(200), &acked(200));
    assert!(close(
        b.pacing_rate().unwrap(),
        0.99 * HIGH_GAIN * 14_480.0 / 0.2
    ));
    // Later samples do not reset it (no delivery-rate sample yet to raise it).
    b.on_ack(ms(300), &acked(100));
    assert!(close(
        b.pacing_rate().unwrap(),
        0.99 * HIGH_GAIN * 14_480.0 / 0.2
    ));
}

#[test]
fn bbr_takes_the_losses_of_a_recovery_off_its_window() {
    let mut b = bbr();
    // Recovery from six segments in flight: packet conservation at pipe + 1.
    b.on_loss(ms(0), &LossEvent::new(10 * 1448, 6 * 1448));
    assert_eq!(b.window(), 7 * 1448);
    // An ACK of one segment with two more found lost, two segments in flight: the window
    // loses the two and stays above pipe + acked (Linux: max(cwnd − losses, pipe + acked)).
    let mut a = acked(200);
    a.flight = 2 * 1448;
    a.lost = 2 * 1448;
    b.on_ack(ms(10), &a);
    assert_eq!(b.window(), 5 * 1448);
    // Without losses the window holds.
    a.lost = 0;
    b.on_ack(ms(20), &a);
    assert_eq!(b.window(), 5 * 1448);
}

#[test]
fn bbr_has_probe_rtt_samples_marked_app_limited() {
    let mut b = bbr();
    b.on_ack(ms(0), &acked(100));
    assert!(!b.app_limited());
    // RTprop is 10 s old at the next sample, which is larger: ProbeRTT.
    b.on_ack(ms(10_100), &acked(120));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    assert!(b.app_limited());
}
