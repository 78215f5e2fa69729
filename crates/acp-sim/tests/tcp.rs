//! The TCP model's mechanisms, each checked against what it must do: slow start doubles the
//! window every round trip, the third duplicate ACK (not the second) triggers a fast retransmit
//! and halves the window, the RTO backs off exponentially into a blackhole, the receive window
//! caps throughput at rwnd/RTT, data behind a lost segment waits for its retransmission, and
//! delayed ACKs halve the number of ACKs; a packet window counts short segments as Linux does,
//! updates written at will go one per segment when TCP_NOTSENT_LOWAT holds two, the RTT
//! reported is the oldest newly acknowledged segment's, BBR's bandwidth estimate survives
//! losses and BBR paces in Linux's TSO bursts, the ACP+ paper's estimate of TCP's age is the
//! RTT plus half the ACK spacing, and a saturated link clocks one delayed ACK every two full
//! segments (the inter-ACK time); a
//! tail-loss probe recovers a window's lost tail, RACK finds a lost retransmission, and a
//! timeout resends only the holes the SACK scoreboard shows. All deterministic (fixed seeds,
//! virtual time).

use std::time::Duration;

use acp_core::Time;
use acp_sim::report::SimResult;
use acp_sim::scenario::Scenario;
use acp_sim::tcp::{
    Ack, Application, CcKind, Connection, Output, Segment, Sender, TcpConfig, UpdateMode,
    WindowUnit, Wire,
};

/// One link each way between `a` and `b` (`rate`, `delay` one way), a TCP flow with `fields`.
fn one_hop(rate: &str, delay: &str, extra_link: &str, fields: &str, secs: f64) -> Scenario {
    let text = format!(
        r#"
format = 2
duration = "{secs}s"
[[link]]
from = "a"
to = "b"
rate = "{rate}"
delay = "{delay}"
queue = 100000
both_ways = false
{extra_link}
[[link]]
from = "b"
to = "a"
rate = "{rate}"
delay = "{delay}"
queue = 100000
both_ways = false
[[flow]]
name = "t"
type = "tcp"
path = ["a", "b"]
{fields}
"#
    );
    Scenario::parse(&text).unwrap()
}

fn run_logged(mut s: Scenario) -> SimResult {
    s.config.packet_log = true;
    s.build().unwrap().run()
}

/// Arrival times (s) and sequence numbers of the data segments offered to a→b.
fn segments(r: &SimResult) -> Vec<(f64, u64)> {
    r.packet_log
        .iter()
        .filter(|e| e.link == "a→b" && e.kind == "segment")
        .map(|e| (e.arrived_ns as f64 * 1e-9, e.seq))
        .collect()
}

#[test]
fn slow_start_doubles_the_window_every_round_trip() {
    // 100 ms round trip on 100 Mbit/s: a whole window leaves well within one round trip.
    for delayed_ack in ["true", "false"] {
        let s = one_hop(
            "100mbit",
            "50ms",
            "",
            &format!("delayed_ack = {delayed_ack}"),
            0.75,
        );
        let r = run_logged(s);
        let segs = segments(&r);
        let per_round: Vec<usize> = (0..6)
            .map(|k| {
                let (from, to) = (k as f64 * 0.1, (k + 1) as f64 * 0.1);
                segs.iter().filter(|(t, _)| *t >= from && *t < to).count()
            })
            .collect();
        // Initial window 10, doubling each round trip (with delayed ACKs too: an ACK of two
        // segments counts both, as in Linux).
        assert_eq!(
            per_round,
            [10, 20, 40, 80, 160, 320],
            "delayed_ack = {delayed_ack}"
        );
    }
}

fn sender(cfg: &TcpConfig) -> Sender {
    Sender::new(cfg, cfg.controller(1), Time::ZERO)
}

fn ack(n: u64) -> Ack {
    Ack::new(n, 1 << 20)
}

#[test]
fn third_duplicate_ack_triggers_fast_retransmit_and_halves_the_window() {
    // Against a peer without SACK (with SACK, RACK decides by time).
    let cfg = TcpConfig {
        smss: 1000,
        sack: false,
        ..TcpConfig::default()
    };
    let mut s = sender(&cfg);
    let t = Time::from_millis(10);
    s.write(100_000);
    let sent: Vec<Segment> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
    assert_eq!(sent.len(), 10, "initial window of 10 segments");
    // Segment 0 is lost; segments 1.. each draw a duplicate ACK for byte 0.
    for dup in 1..=2 {
        assert_eq!(s.handle_ack(t, ack(0)), None);
        assert_eq!(
            s.poll_transmit(t),
            None,
            "duplicate ACK {dup}: no retransmission yet"
        );
        assert!(!s.in_recovery());
    }
    s.handle_ack(t, ack(0));
    assert!(s.in_recovery());
    assert_eq!(s.poll_transmit(t).map(|g| (g.seq, g.len)), Some((0, 1000)));
    // ssthresh = FlightSize / 2 = 5000; recovery starts at ssthresh + 3 SMSS.
    assert_eq!((s.cwnd(), s.window()), (5000, 8000));
    assert_eq!(s.stats().fast_retransmits, 1);
    // The retransmission fills the hole: the full ACK ends recovery at ssthresh.
    s.handle_ack(t, ack(10_000));
    assert!(!s.in_recovery());
    assert_eq!(s.window(), 5000);
}

#[test]
fn the_rto_backs_off_exponentially_into_a_blackhole() {
    // From 2 s on the data direction drops everything, for longer than the run. A 64 KiB
    // receive window keeps the queue (and so the RTO) small before that.
    let s = one_hop(
        "10mbit",
        "10ms",
        r#"outages = [{ at = "2s", duration = "1000s" }]"#,
        "receive_buffer = 65536",
        200.0,
    );
    let r = run_logged(s);
    let segs = segments(&r);
    // The first byte never acknowledged is sent again and again.
    let lost = segs.iter().find(|(t, _)| *t >= 2.0).unwrap().1;
    let first_lost = segs
        .iter()
        .filter(|(t, seq)| *t >= 2.0 && *seq <= lost)
        .map(|&(_, seq)| seq)
        .min()
        .unwrap();
    let times: Vec<f64> = segs
        .iter()
        .filter(|(t, seq)| *t >= 2.0 && *seq == first_lost)
        .map(|&(t, _)| t)
        .collect();
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.len() >= 8, "{gaps:?}");
    // The path's RTO first (at least the 200 ms minimum; the queue a 64 KiB window keeps adds
    // to SRTT and RTTVAR), then each timeout doubles the next, up to 60 s.
    assert!(gaps[0] >= 0.2 && gaps[0] < 1.0, "{gaps:?}");
    for w in gaps.windows(2) {
        let expected = (w[0] * 2.0).min(60.0);
        assert!((w[1] - expected).abs() < 1e-6, "{gaps:?}");
    }
    assert!(gaps.iter().any(|&g| (g - 60.0).abs() < 1e-6), "{gaps:?}");
    assert!(r.flows[0].tcp.as_ref().unwrap().timeouts as usize >= gaps.len());
}

#[test]
fn the_receive_window_caps_throughput_at_rwnd_per_rtt() {
    for rwnd in [16_384u64, 65_536] {
        let s = one_hop(
            "100mbit",
            "25ms",
            "",
            &format!("receive_buffer = {rwnd}\ndelayed_ack = false"),
            20.0,
        );
        let r = s.build().unwrap().run();
        let f = &r.flows[0];
        // Whole segments only: the window holds ⌊rwnd / SMSS⌋ of them.
        let window = (rwnd / 1448 * 1448) as f64;
        let rtt = 0.05 + 2.0 * 1488.0 * 8.0 / 100e6;
        let expected = window * 8.0 / rtt;
        let ratio = f.throughput_bps / expected;
        assert!((ratio - 1.0).abs() < 0.03, "rwnd {rwnd}: ratio {ratio}");
        assert!(f.throughput_bps < 0.2 * 100e6);
    }
}

/// Feeds `conn`'s data segments to its own receiver after `delay`, dropping a segment as many
/// times as its sequence number is listed in `lost`, and its ACKs back after `delay`; returns
/// the instants at which updates were delivered and their generation times.
fn times(list: &[u64], seq: u64) -> usize {
    list.iter().filter(|&&s| s == seq).count()
}

/// [`drive_writing`] with the application writing throughout.
fn drive(conn: &mut Connection, until: Time, delay: Duration, lost: &[u64]) -> Vec<(Time, Time)> {
    drive_writing(conn, until, delay, lost, None)
}

/// [`drive`], the sending application stopping at `stop` (data written still goes).
fn drive_writing(
    conn: &mut Connection,
    until: Time,
    delay: Duration,
    lost: &[u64],
    stop: Option<Time>,
) -> Vec<(Time, Time)> {
    let mut in_flight: Vec<(Time, Wire)> = Vec::new();
    let mut dropped = Vec::new();
    let mut delivered = Vec::new();
    let mut now = Time::ZERO;
    while now <= until {
        let mut outputs = Vec::new();
        let due: Vec<(Time, Wire)> = in_flight
            .iter()
            .filter(|(t, _)| *t <= now)
            .copied()
            .collect();
        in_flight.retain(|(t, _)| *t > now);
        for (_, wire) in due {
            match wire {
                Wire::Data(seg) => conn.on_data(now, seg, &mut |o| outputs.push(o)),
                Wire::Ack(a) => conn.on_ack(now, a, &mut |o| outputs.push(o)),
            }
        }
        if conn.poll_timeout(now).is_some_and(|t| t <= now) {
            conn.on_timer(now, &mut |o| outputs.push(o));
        }
        if stop.is_some_and(|t| t <= now) {
            conn.stop();
        }
        for o in outputs {
            match o {
                Output::Transmit(Wire::Data(seg))
                    if times(lost, seg.seq) > times(&dropped, seg.seq) =>
                {
                    dropped.push(seg.seq);
                }
                Output::Transmit(w) => in_flight.push((now + delay, w)),
                Output::Delivered { generated, .. } => delivered.push((now, generated)),
                _ => {}
            }
        }
        now += Duration::from_micros(100);
    }
    delivered
}

#[test]
fn data_behind_a_lost_segment_waits_for_its_retransmission() {
    // 500-byte updates every 50 ms, one per segment, 20 ms one way, ACK every segment.
    let cfg = TcpConfig {
        smss: 1000,
        delayed_ack: None,
        nodelay: true,
        ..TcpConfig::default()
    };
    let app = Application::Updates {
        payload: 500,
        mode: UpdateMode::Rate(20.0),
    };
    let mut conn = Connection::new(&cfg, app, Time::ZERO, 1);
    // The 5th update (bytes 2000..2500, written at 200 ms) is lost once.
    let delivered = drive(
        &mut conn,
        Time::from_secs(2),
        Duration::from_millis(20),
        &[2000],
    );
    let generated_at = |ms: u64| Time::from_millis(ms);
    // Updates before it arrive 20 ms after their generation.
    for (at, generated) in &delivered[..4] {
        assert_eq!(*at, *generated + Duration::from_millis(20));
    }
    // The update of 250 ms arrives at 270 ms and waits. Its ACK, back at 290 ms, SACKs it:
    // RACK takes the segment sent 50 ms before it as lost once RACK.rtt (40 ms) plus the
    // reordering window (a quarter of the minimum RTT, 10 ms) has passed since that segment
    // was sent — at once, without waiting for the third duplicate ACK (390 ms). The
    // retransmission arrives at 310 ms and releases both, in order; the update of 300 ms
    // arrives after it, in order.
    let released: Vec<&(Time, Time)> = delivered
        .iter()
        .filter(|(_, g)| (200..=250).contains(&(g.as_nanos() / 1_000_000)))
        .collect();
    assert_eq!(released.len(), 2);
    for (i, (at, generated)) in released.iter().enumerate() {
        assert_eq!(*generated, generated_at(200 + 50 * i as u64));
        assert_eq!(
            *at,
            Time::from_millis(310),
            "held until the retransmission arrives"
        );
    }
    assert!(delivered.contains(&(generated_at(320), generated_at(300))));
    assert_eq!(conn.sender().stats().fast_retransmits, 1);
    // Every update was delivered once, in generation order.
    assert!(delivered.windows(2).all(|w| w[0].1 < w[1].1));
    assert_eq!(delivered.len(), generated_up_to_last(&delivered));
}

#[test]
fn sack_recovery_resends_every_loss_of_a_window_in_one_round_trip() {
    // A bulk flow, 1000-byte segments, 20 ms one way: five segments of one window lost.
    let cfg = TcpConfig {
        smss: 1000,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut conn = Connection::new(&cfg, Application::Bulk, Time::ZERO, 1);
    let lost = [20_000, 22_000, 24_000, 26_000, 28_000];
    drive(
        &mut conn,
        Time::from_millis(400),
        Duration::from_millis(20),
        &lost,
    );
    let s = conn.sender().stats();
    // One fast retransmit starts recovery; SACK finds the other four lost (three SACKed
    // segments above each) and resends them in the same round trip (NewReno would resend one
    // per round trip): no timeout, no retransmission beyond the five lost.
    assert_eq!(s.fast_retransmits, 1);
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmits, 5);
    assert!(conn.sender().una() > 100_000, "{}", conn.sender().una());
}

/// Updates are generated every 50 ms from 0: how many up to the last one delivered.
fn generated_up_to_last(delivered: &[(Time, Time)]) -> usize {
    delivered
        .last()
        .map_or(0, |(_, g)| (g.as_nanos() / 50_000_000) as usize + 1)
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let acks = |delayed: &str| {
        let s = one_hop(
            "10mbit",
            "10ms",
            "",
            &format!("delayed_ack = {delayed}"),
            10.0,
        );
        let r = s.build().unwrap().run();
        let tcp = r.flows[0].tcp.clone().unwrap();
        (tcp.acks_sent, tcp.segments_received)
    };
    let (every, segments) = acks("false");
    assert_eq!(every, segments, "one ACK per segment");
    let (delayed, segments) = acks("true");
    let ratio = delayed as f64 / segments as f64;
    assert!(
        (ratio - 0.5).abs() < 0.01,
        "{delayed} ACKs for {segments} segments"
    );
}

#[test]
fn the_papers_age_estimate_is_the_rtt_plus_half_the_ack_spacing() {
    // One 500-byte update every 100 ms, each its own segment (TCP_NODELAY) and each ACKed at
    // once, on 1 Mbit/s and 50 ms each way: a segment of 540 bytes takes 4.32 ms, an ACK of
    // 40 bytes 0.32 ms. The paper's estimate resets the age to the RTT (104.64 ms) at every
    // ACK, 100 ms apart: RTT + 50 ms. The true age at the receiver resets to the one-way delay
    // (54.32 ms) at every delivery: 104.32 ms. The run's end at 20 s cuts the last sawtooth
    // short, so the exact averages are those of sawtooths starting at the first reset.
    let s = one_hop(
        "1mbit",
        "50ms",
        "",
        "app = \"updates\"\npayload = 500\nrate = 10\nnodelay = true\ndelayed_ack = false",
        20.0,
    );
    let f = &s.build().unwrap().run().flows[0];
    // Mean age (ms) from the first reset at `first` s to 20 s, resets every 0.1 s to `first`.
    let sawtooth = |first: f64| {
        let (period, span) = (0.1, 20.0 - first);
        let full = (span / period).floor();
        let rest = span - full * period;
        let area =
            full * (first * period + period * period / 2.0) + first * rest + rest * rest / 2.0;
        area / span * 1e3
    };
    let (est, age) = (f.est_age.unwrap() * 1e3, f.age.unwrap() * 1e3);
    assert!((est - sawtooth(0.10464)).abs() < 1e-6, "estimate {est} ms");
    assert!((age - sawtooth(0.05432)).abs() < 1e-6, "true age {age} ms");
    assert!((est - 154.64).abs() < 0.1 && (age - 104.32).abs() < 0.1);
    assert!((f.mean_rtt.unwrap() * 1e3 - 104.64).abs() < 1e-6);
    // The ACKs that reset the estimate come one per update, 100 ms apart; each segment carries
    // one 500-byte update.
    assert!((f.inter_ack.unwrap() * 1e3 - 100.0).abs() < 1e-6);
    assert_eq!(f.segment_bytes, Some(500.0));
}

#[test]
fn a_saturated_link_clocks_one_delayed_ack_every_two_segments() {
    // Bulk NewReno with room to queue: once the 10 Mbit/s link is busy, full 1,448-byte
    // segments (1,488 bytes on the wire) leave it 1.1904 ms apart and the receiver ACKs every
    // second one, so the sender's ACKs of new data are 2.3808 ms apart.
    let text = r#"
format = 2
duration = "10s"
warmup = "5s"
[[link]]
from = "a"
to = "b"
rate = "10mbit"
delay = "20ms"
queue = 100000
[[flow]]
type = "tcp"
path = ["a", "b"]
"#;
    let f = &Scenario::parse(text).unwrap().build().unwrap().run().flows[0];
    assert_eq!(f.segment_bytes, Some(1448.0));
    let gap = f.inter_ack.unwrap() * 1e3;
    assert!((gap - 2.3808).abs() < 1e-3, "{gap} ms between ACKs");
}

#[test]
fn congestion_controls_parse_by_name() {
    assert_eq!("newreno".parse::<CcKind>(), Ok(CcKind::NewReno));
    assert_eq!("Reno".parse::<CcKind>(), Ok(CcKind::NewReno));
    assert!("hybla".parse::<CcKind>().is_err());
}

#[test]
fn a_packet_window_counts_short_segments_as_linux_does() {
    // 536-byte writes, each sent before the next: a window of 10 takes 10 of them counted in
    // packets, 27 counted in bytes (27 · 536 ≤ 10 · 1448 < 28 · 536).
    for (window, expected) in [(WindowUnit::Packets, 10), (WindowUnit::Bytes, 27)] {
        let cfg = TcpConfig {
            nodelay: true,
            window,
            ..TcpConfig::default()
        };
        let mut s = sender(&cfg);
        let mut sent = 0;
        loop {
            s.write(536);
            match s.poll_transmit(Time::ZERO) {
                Some(seg) => {
                    assert_eq!(seg.len, 536);
                    sent += 1;
                }
                None => break,
            }
        }
        assert_eq!(sent, expected, "{window:?}");
        assert_eq!(s.cwnd(), 10 * 1448, "{window:?}: the window in bytes");
    }
}

#[test]
fn updates_at_will_go_one_per_segment_when_notsent_lowat_holds_two() {
    // poll() wakes the writer while under half of notsent_lowat is unsent: with 1072 bytes
    // (two updates) an update is written only once the one before has left, so every segment
    // carries one; with 2144 two wait together while the window is full and share a segment.
    for (lowat, shared) in [(1072, false), (2144, true)] {
        let fields = format!(
            "app = \"updates\"\npayload = 536\nnotsent_lowat = {lowat}\nnodelay = true\n\
             window = \"packets\""
        );
        let r = run_logged(one_hop("10mbit", "20ms", "", &fields, 1.0));
        let sizes: Vec<u32> = r
            .packet_log
            .iter()
            .filter(|e| e.link == "a→b" && e.kind == "segment")
            .map(|e| e.bytes)
            .collect();
        assert!(sizes.len() > 1000, "{lowat}: {} segments", sizes.len());
        assert!(sizes.iter().all(|&b| b == 576 || b == 1112), "{lowat}");
        assert_eq!(sizes.contains(&1112), shared, "notsent_lowat {lowat}");
    }
}

#[test]
fn the_reported_rtt_is_the_oldest_newly_acknowledged_segments() {
    let cfg = TcpConfig {
        smss: 1000,
        ..TcpConfig::default()
    };
    let mut s = sender(&cfg);
    s.write(2000);
    assert!(s.poll_transmit(Time::ZERO).is_some());
    assert!(s.poll_transmit(Time::from_millis(5)).is_some());
    // One ACK covers both: the report takes the older's RTT (Linux's seq_rtt_us, what its
    // smoothed RTT averages), the estimator the newer's (ca_rtt_us).
    let at = Time::from_millis(45);
    assert_eq!(s.handle_ack(at, ack(2000)), Some(Duration::from_millis(45)));
    assert_eq!(s.rto().srtt(), Some(Duration::from_millis(40)));
}

fn sack(n: u64, start: u64, end: u64) -> Ack {
    let mut a = ack(n);
    a.sack[0] = Some((start, end));
    a
}

#[test]
fn a_sack_of_data_sent_before_the_heads_retransmission_restarts_the_timer() {
    // Linux (`tcp_clean_rtx_queue`): when the earliest sent of the segments an ACK newly
    // SACKs (never retransmitted) was sent before the first unacknowledged one was last sent,
    // the timer restarts: the retransmission's ACK cannot be due before that data's.
    let ms = Time::from_millis;
    let cfg = TcpConfig {
        smss: 1000,
        ..TcpConfig::default()
    };
    let mut s = sender(&cfg);
    s.write(4000);
    for i in 0..4 {
        assert!(s.poll_transmit(ms(i)).is_some());
    }
    s.handle_ack(ms(200), ack(1000));
    assert_eq!(s.rto().srtt(), Some(Duration::from_millis(200)));
    // Segment 1 is lost: the SACK of segment 2 starts RACK's wait and leaves the timer, as
    // segment 2 was sent after segment 1.
    s.handle_ack(ms(210), sack(1000, 2000, 3000));
    let reo = s.poll_timeout(ms(210)).unwrap();
    assert!(reo < ms(200) + s.rto().rto());
    s.handle_timeout(reo);
    assert!(s.in_recovery());
    assert_eq!(
        s.poll_transmit(reo).map(|g| (g.seq, g.len)),
        Some((1000, 1000))
    );
    // The timer restarted with the retransmission of the first unacknowledged segment.
    assert_eq!(s.poll_timeout(reo), Some(reo + s.rto().rto()));
    // The SACK of segment 3, sent at 3 ms, before that retransmission: the timer restarts
    // from this ACK.
    let now = reo + Duration::from_millis(20);
    s.handle_ack(now, sack(1000, 2000, 4000));
    assert_eq!(s.poll_timeout(now), Some(now + s.rto().rto()));
    assert_eq!(s.rto().srtt(), Some(Duration::from_millis(200)));
}

#[test]
fn bbr_keeps_its_bandwidth_estimate_at_the_link_rate_through_losses() {
    // 2 % random loss on 10 Mbit/s: SACK recoveries. What the receiver held beyond a hole
    // counts as delivered when SACKed, not again when the hole fills, so BBR's pacing rate stays within its 5/4 probing
    // gain of the link's payload rate (9.73 Mbit/s at 1,448 of 1,488 bytes); counted twice,
    // such bytes made rate samples of several times the link's rate.
    for window in ["bytes", "packets"] {
        let fields = format!("cc = \"bbr\"\nwindow = \"{window}\"");
        let s = one_hop("10mbit", "20ms", "loss = 0.02", &fields, 10.0);
        let r = s.build().unwrap().run();
        let tcp = r.flows[0].tcp.clone().unwrap();
        let pacing = tcp.pacing_rate_bps.unwrap() / 1e6;
        assert!(tcp.retransmits > 50, "{window}: losses were recovered");
        assert!(
            pacing < 1.25 * 9.73 * 1.01,
            "{window}: pacing {pacing:.2} Mbit/s"
        );
    }
}

#[test]
fn bbr_paces_in_bursts_of_a_millisecond_at_its_rate_at_least_two_segments() {
    // Linux sizes a TSO/GSO burst at about a millisecond of the pacing rate, at least two
    // segments, sends its segments back to back and paces burst by burst. After Startup (from
    // 2 s) at 10 Mbit/s (1,448-byte segments: 1.2 kB in a millisecond) every burst is two
    // segments and the next waits for their 2,896 bytes at the pacing rate: at least 1.92 ms
    // (the 5/4 phase: 1.25 × 0.99 × 9.73 Mbit/s of payload), where single segments would go
    // 0.96 ms apart; at 100 Mbit/s, 8 segments (a millisecond at 99 % of 97.3 Mbit/s is 12 kB)
    // and never more than 11 (gain 1.25).
    // (At 100 Mbit/s 5 ms each way, so that the default 1 MB receive buffer holds two BDPs.)
    for (rate, delay, most, usual) in [("10mbit", "20ms", 2, 2), ("100mbit", "5ms", 11, 8)] {
        let s = one_hop(rate, delay, "", "cc = \"bbr\"\nwindow = \"packets\"", 6.0);
        let sent: Vec<(f64, u64)> = segments(&run_logged(s))
            .into_iter()
            .filter(|&(t, _)| t > 2.0)
            .collect();
        let mut bursts: Vec<(f64, usize)> = Vec::new();
        for &(t, _) in &sent {
            match bursts.last_mut() {
                Some((at, n)) if *at == t => *n += 1,
                _ => bursts.push((t, 1)),
            }
        }
        let largest = bursts.iter().map(|b| b.1).max().unwrap();
        let of_usual = bursts.iter().filter(|b| b.1 == usual).count();
        assert!(
            largest <= most && of_usual * 2 > bursts.len(),
            "{rate}: largest burst {largest}, {of_usual} of {} bursts of {usual}",
            bursts.len()
        );
        if rate == "10mbit" {
            let gaps = bursts.windows(2).map(|w| w[1].0 - w[0].0);
            let least = gaps.fold(f64::MAX, f64::min);
            assert!(least > 1.9e-3, "{rate}: bursts {least:.6} s apart");
        }
    }
}

/// A bulk connection of 1000-byte segments that ACKs every segment; `bytes` of send buffer.
fn bulk(bytes: u64) -> Connection {
    let cfg = TcpConfig {
        smss: 1000,
        delayed_ack: None,
        send_buffer: bytes,
        ..TcpConfig::default()
    };
    Connection::new(&cfg, Application::Bulk, Time::ZERO, 1)
}

/// Drives a connection that writes 10 000 bytes at once and no more (one initial window of
/// ten 1000-byte segments) for 4 s, 20 ms each way, losing `lost`.
fn ten_segments(lost: &[u64]) -> Connection {
    let mut conn = bulk(10_000);
    let (until, delay) = (Time::from_secs(4), Duration::from_millis(20));
    drive_writing(&mut conn, until, delay, lost, Some(Time::ZERO));
    conn
}

#[test]
fn a_tail_loss_probe_recovers_the_last_segments_without_a_timeout() {
    // Ten segments, the last three lost: no duplicate ACK comes back for them. 2·SRTT after the
    // last ACK (SRTT 40 ms) the probe resends the highest segment; its ACK SACKs it, RACK marks
    // the two below lost and fast recovery resends them.
    let conn = ten_segments(&[7000, 8000, 9000]);
    let s = conn.sender().stats();
    assert_eq!(conn.sender().una(), 10_000);
    assert_eq!((s.timeouts, s.probes, s.retransmits), (0, 1, 3));
    assert_eq!(s.fast_retransmits, 1);
    assert_eq!(conn.receiver().stats().duplicates, 0);
}

#[test]
fn rack_finds_a_lost_retransmission_without_a_timeout() {
    // Segment 20 000 is lost, and so is its first retransmission; the bulk flow keeps sending
    // new data, whose SACKs show RACK that the retransmission, sent before them, is lost too.
    let mut conn = bulk(1 << 20);
    drive(
        &mut conn,
        Time::from_millis(600),
        Duration::from_millis(20),
        &[20_000, 20_000],
    );
    let s = conn.sender().stats();
    assert_eq!((s.timeouts, s.fast_retransmits, s.retransmits), (0, 1, 2));
    assert!(conn.sender().una() > 100_000, "{}", conn.sender().una());
}

#[test]
fn a_timeout_keeps_the_sack_scoreboard_and_resends_only_the_holes() {
    // Ten segments, all in the initial window; the first is lost three times (the original,
    // RACK's retransmission and the first timeout's). With nothing sent after RACK's
    // retransmission no SACK can show it lost: the RTO does, then again after backing off
    // (no RTT sample yet, as the first segment is the one lost: 1 s, then 2 s). The receiver
    // holds the nine others, SACKed: each timeout resends only the hole (go-back-N would
    // resend all ten), so nothing arrives twice.
    let conn = ten_segments(&[0, 0, 0]);
    let s = conn.sender().stats();
    assert_eq!(conn.sender().una(), 10_000);
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 2, 3));
    assert_eq!(conn.receiver().stats().duplicates, 0);
}
