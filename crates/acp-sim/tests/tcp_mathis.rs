//! NewReno bulk throughput under Bernoulli loss against the Mathis et al. (1997) formula.
//!
//! `BW = MSS/RTT · C/√p` with `C = √(3/2)`: the square-root law of a Reno sender whose window
//! saw-tooths between W/2 and W, one loss per cycle, growing one segment per round trip. The
//! receiver here ACKs every segment (b = 1 in Padhye et al.'s notation; delayed ACKs would make
//! it √(3/(2b)) = √(3/4)), so `C = √(3/2) ≈ 1.22`.
//!
//! The path is a fast link (100 Mbit/s: serialisation adds 0.12 ms to the 100 ms round trip and
//! no queue builds), Bernoulli loss on the data direction only, buffers that never limit the
//! window. The formula's assumptions (loss seen once per window, no timeouts) hold well at low
//! loss; at 3 % a growing share of losses hits twice in a window or leaves too few segments for
//! three duplicate ACKs and ends in a timeout, which costs throughput the formula does not
//! count, and Bernoulli loss (unlike the formula's periodic loss) makes the saw-tooth's height
//! random, which adds to the throughput (E[W] over random cycles exceeds the periodic one). The
//! 15 % tolerance covers both effects across the range; each run counts hundreds of loss
//! events, so the run-to-run spread (a few per cent) stays well inside it.

use acp_sim::scenario::Scenario;

const MSS: f64 = 1448.0;
const RTT: f64 = 0.1 + 2.0 * (1488.0 * 8.0 / 100e6) / 2.0;

fn bulk(p: f64, secs: u64, seed: u64) -> (f64, u64, u64) {
    let text = format!(
        r#"
format = 2
seed = {seed}
duration = "{secs}s"
warmup = "20s"
[[link]]
from = "a"
to = "b"
rate = "100mbit"
delay = "50ms"
queue = 100000
loss = {p}
both_ways = false
[[link]]
from = "b"
to = "a"
rate = "100mbit"
delay = "50ms"
queue = 100000
both_ways = false
[[flow]]
name = "reno"
type = "tcp"
cc = "newreno"
delayed_ack = false
send_buffer = 100000000
receive_buffer = 100000000
path = ["a", "b"]
"#
    );
    let r = Scenario::parse(&text).unwrap().build().unwrap().run();
    let f = &r.flows[0];
    let tcp = f.tcp.as_ref().unwrap();
    (f.throughput_bps, tcp.fast_retransmits, tcp.timeouts)
}

fn mathis(p: f64) -> f64 {
    MSS * 8.0 / RTT * (1.5f64).sqrt() / p.sqrt()
}

#[test]
fn newreno_follows_the_square_root_law() {
    // (loss, simulated seconds): hundreds of loss events each.
    let points = [
        (0.001, 1200),
        (0.002, 900),
        (0.005, 600),
        (0.01, 300),
        (0.02, 300),
        (0.03, 300),
    ];
    for (p, secs) in points {
        let (bps, fast_retransmits, timeouts) = bulk(p, secs, 1);
        let ratio = bps / mathis(p);
        println!(
            "p = {p}: {:.3} Mbit/s, Mathis {:.3} Mbit/s, ratio {ratio:.3}, \
             {fast_retransmits} fast retransmits, {timeouts} timeouts",
            bps / 1e6,
            mathis(p) / 1e6
        );
        assert!((ratio - 1.0).abs() < 0.15, "p = {p}: ratio {ratio:.3}");
        assert!(
            fast_retransmits > 200,
            "p = {p}: {fast_retransmits} loss events"
        );
    }
}
