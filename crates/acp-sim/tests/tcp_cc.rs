//! The congestion controls' defining behaviour: CUBIC's window follows `W(t) = C(t − K)³ +
//! W_max`, BBR leaves Startup and paces at the bottleneck's rate (and follows it when it
//! changes), Vegas keeps α–β segments queued, YeAH grows like Scalable TCP without a queue and
//! backs off by less than half on a loss; every controller survives a lossy path and a seed
//! fully determines its run.

use std::time::Duration;

use acp_core::Time;
use acp_sim::report::FlowResult;
use acp_sim::scenario::Scenario;
use acp_sim::tcp::cc::cubic::{Cubic, BETA, C};
use acp_sim::tcp::cc::yeah::Yeah;
use acp_sim::tcp::cc::{AckEvent, CongestionControl, LossEvent};
use acp_sim::tcp::CcKind;

/// A bulk flow with `cc` over one bottleneck link each way; `extra` adds link settings.
fn bulk(cc: CcKind, rate: &str, delay: &str, extra: &str, flow: &str, secs: u64) -> FlowResult {
    let text = format!(
        r#"
format = 2
duration = "{secs}s"
warmup = "{}s"
[[link]]
from = "a"
to = "b"
rate = "{rate}"
delay = "{delay}"
queue = 1000
{extra}
[[flow]]
name = "t"
type = "tcp"
cc = "{cc}"
path = ["a", "b"]
{flow}
"#,
        secs / 4
    );
    let r = Scenario::parse(&text).unwrap().build().unwrap().run();
    r.flows[0].clone()
}

/// ACKs a window's worth of bytes per RTT in 1 ms steps for `secs`, calling `check` each step.
fn feed(
    cc: &mut dyn CongestionControl,
    rtt: Duration,
    base_rtt: Duration,
    secs: f64,
    mut check: impl FnMut(f64, &dyn CongestionControl),
) {
    let step = Duration::from_millis(1);
    let steps = (secs / step.as_secs_f64()) as u64;
    let per_rtt = rtt.as_secs_f64() / step.as_secs_f64();
    let mut carry = 0.0;
    for k in 1..=steps {
        let now = Time::ZERO + step * k as u32;
        carry += cc.window() as f64 / per_rtt;
        let acked = carry.floor() as u64;
        carry -= acked as f64;
        let mut ack = AckEvent::new(acked);
        ack.rtt = Some(rtt);
        ack.min_rtt = Some(base_rtt);
        ack.round_start = k % per_rtt as u64 == 0;
        cc.on_ack(now, &ack);
        check(now.as_secs_f64(), cc);
    }
}

#[test]
fn cubic_window_follows_the_cubic_function() {
    // W_max = 1000 segments at a 100 ms RTT: K ≈ 9.1 s, and Reno's estimate (0.53 segments
    // per round trip) stays below the cubic throughout, so CUBIC's own curve rules: concave
    // up to W_max, a plateau around K, convex beyond.
    let smss = 1000;
    let w_max = 1000.0;
    let mut cubic = Cubic::new(smss, 1000 * smss);
    cubic.on_loss(Time::ZERO, &LossEvent::new(1000 * smss, 1000 * smss));
    assert_eq!(cubic.window(), 700 * smss, "β = 0.7");
    assert_eq!(cubic.w_max(), w_max);
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    let rtt = Duration::from_millis(100);
    let mut worst: f64 = 0.0;
    let mut at_k = 0.0;
    feed(&mut cubic, rtt, rtt, k + 5.0, |t, cc| {
        // The epoch began at the first ACK (1 ms).
        let w = C * (t - 0.001 - k).powi(3) + w_max;
        let cwnd = cc.window() as f64 / smss as f64;
        if t > 0.5 {
            worst = worst.max((cwnd - w).abs());
        }
        if (t - k).abs() < 0.0005 {
            at_k = cwnd;
        }
    });
    // Aiming at W(t + RTT), a window growing by (target − cwnd)/cwnd per segment acknowledged
    // reaches each target in about one round trip, so it tracks W(t) itself, to a fraction of
    // a segment (measured: under 0.1); one segment is the tolerance.
    assert!(worst < 1.0, "worst deviation {worst:.2} segments");
    assert!((at_k - w_max).abs() < 1.0, "{at_k} at K");
    assert!(
        cubic.window() as f64 / smss as f64 > w_max + 40.0,
        "convex beyond K"
    );
}

#[test]
fn bbr_leaves_startup_and_paces_at_the_bottleneck_rate() {
    // 10 Mbit/s carries 10e6/8 · 1448/1488 bytes of payload per second.
    let payload_rate = |mbit: f64| mbit * 1e6 * 1448.0 / 1488.0;
    let early = bulk(CcKind::Bbr, "10mbit", "20ms", "", "", 2);
    let tcp = early.tcp.clone().unwrap();
    assert_ne!(
        tcp.phase, "startup",
        "startup exits within 2 s (50 round trips)"
    );
    // The rate halves at 20 s: the windowed maximum forgets the old rate within 10 rounds.
    let halved = bulk(
        CcKind::Bbr,
        "10mbit",
        "20ms",
        r#"schedule = { step = [{ at = "20s", rate = "5mbit" }] }"#,
        "",
        40,
    );
    let tcp = halved.tcp.clone().unwrap();
    assert!(
        tcp.phase == "probe_bw" || tcp.phase == "probe_rtt",
        "{}",
        tcp.phase
    );
    let pacing = tcp.pacing_rate_bps.unwrap();
    // The pacing gain cycles between 3/4 and 5/4 of the estimate.
    let ratio = pacing / payload_rate(5.0);
    assert!(
        (0.7..=1.3).contains(&ratio),
        "pacing at {ratio:.3} × the bottleneck"
    );
    // It uses the link: over the measured 30 s (10 at 10 Mbit/s, 20 at 5 Mbit/s).
    let capacity = (10.0 * payload_rate(10.0) + 20.0 * payload_rate(5.0)) / 30.0;
    assert!(
        halved.throughput_bps > 0.9 * capacity,
        "{}",
        halved.throughput_bps
    );
    // And keeps the queue short: RTT well under the 1000-packet queue's seconds of delay.
    assert!(halved.mean_rtt.unwrap() < 0.1, "{:?}", halved.mean_rtt);
}

#[test]
fn vegas_keeps_alpha_to_beta_segments_queued() {
    let f = bulk(
        CcKind::Vegas,
        "10mbit",
        "20ms",
        "",
        "delayed_ack = false",
        40,
    );
    // Packets per second through the link and the RTT without a queue (propagation both ways,
    // a segment's and an ACK's serialisation).
    let packets_per_s = 10e6 / (1488.0 * 8.0);
    let base = 0.04 + 1488.0 * 8.0 / 10e6 + 40.0 * 8.0 / 10e6;
    let queued = (f.mean_rtt.unwrap() - base) * packets_per_s;
    assert!((1.5..=4.5).contains(&queued), "{queued:.2} segments queued");
    assert!(
        f.throughput_bps > 0.95 * 10e6 * 1448.0 / 1488.0,
        "{}",
        f.throughput_bps
    );
}

#[test]
fn yeah_grows_like_scalable_tcp_without_a_queue_and_backs_off_gently() {
    let smss = 1000;
    let mut yeah = Yeah::new(smss, 200 * smss);
    // A loss without a queue takes an eighth (δ = 3), not half.
    yeah.on_loss(Time::ZERO, &LossEvent::new(200 * smss, 200 * smss));
    assert_eq!(yeah.window(), 175 * smss);
    let start = yeah.window();
    assert!(yeah.fast_mode());
    // No queue: one segment per min(cwnd, 100) acknowledged, 1 % per round trip at 100+.
    let rtt = Duration::from_millis(50);
    feed(&mut yeah, rtt, rtt, 1.0, |_, _| {});
    let rounds = 20.0;
    let grown = yeah.window() as f64 / start as f64;
    let expected = (1.0f64 + 1.0 / 100.0).powf(rounds);
    assert!(
        (grown / expected - 1.0).abs() < 0.02,
        "×{grown:.4}, expected ×{expected:.4}"
    );
    let before = yeah.window() / smss;
    let w = yeah.window();
    yeah.on_loss(Time::ZERO, &LossEvent::new(w, w));
    assert_eq!(yeah.window() / smss, before - (before >> 3));
    // A standing queue (RTT 1.5 × the base) turns it to slow (Reno) mode.
    feed(&mut yeah, rtt * 3 / 2, rtt, 0.5, |_, _| {});
    assert!(!yeah.fast_mode());
}

#[test]
fn every_controller_runs_a_lossy_path_deterministically() {
    for cc in CcKind::ALL {
        let run = || {
            bulk(
                cc,
                "10mbit",
                "20ms",
                "loss = 0.01",
                "receive_buffer = 262144",
                20,
            )
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{cc}: the seed determines the run");
        let tcp = a.tcp.unwrap();
        assert!(tcp.fast_retransmits > 10, "{cc}: {tcp:?}");
        assert!(a.throughput_bps > 0.5e6, "{cc}: {}", a.throughput_bps);
        assert_eq!(cc.to_string().parse::<CcKind>(), Ok(cc));
    }
}
