//! Multipath TCP end to end (issue 21 item 1): a connection over two paths carries about the
//! sum of their capacities; minSRTT fills the fast path first; QAware moves off a path whose
//! device queue other traffic keeps full; BLEST and ECF stall less than minSRTT on the receive
//! buffer when one path is much slower; LIA takes no more than one TCP from a shared bottleneck
//! (RFC 6356 goal 2); a small receive buffer shows the head-of-line stall. Fixed seeds; every
//! bound is stated beside the property it checks.

use acp_sim::report::{FlowResult, MptcpCounters};
use acp_sim::scenario::Scenario;

/// Payload share of a full segment's bytes on the link (1448 of 1488).
const GOODPUT: f64 = 1448.0 / 1488.0;

/// Two paths `phone → p0 → server` and `phone → p1 → server`; each path's first link (the
/// device) has rate `rates[k]` Mbit/s, 1 ms and a 100-packet queue, its second link the rest of
/// the one-way delay `delays[k]` ms at 1 Gbit/s. `flow` is the mptcp flow's extra keys,
/// `extra` more links and flows.
fn two_paths(rates: [f64; 2], delays: [u64; 2], flow: &str, extra: &str, secs: u64) -> String {
    let mut links = String::new();
    for k in 0..2 {
        links += &format!(
            r#"
[[link]]
from = "phone"
to = "p{k}"
rate = "{}mbit"
delay = "1ms"
queue = 100
[[link]]
from = "p{k}"
to = "server"
rate = "1000mbit"
delay = "{}ms"
"#,
            rates[k],
            delays[k] - 1
        );
    }
    format!(
        r#"
format = 2
seed = 1
duration = "{secs}s"
warmup = "{}s"
{links}
[[flow]]
name = "mp"
type = "mptcp"
paths = [["phone", "p0", "server"], ["phone", "p1", "server"]]
{flow}
{extra}
"#,
        secs / 5
    )
}

fn run(text: &str) -> Vec<FlowResult> {
    Scenario::parse(text).unwrap().build().unwrap().run().flows
}

fn mp(flows: &[FlowResult]) -> (&FlowResult, &MptcpCounters) {
    let f = flows.iter().find(|f| f.name == "mp").unwrap();
    (f, f.mptcp.as_ref().unwrap())
}

/// Two equal 10 Mbit/s paths: the connection carries the sum of their payload capacities within
/// 5 % (slow start and the warm-up's end cost a little), half on each, under every scheduler.
#[test]
fn two_equal_paths_carry_the_sum_of_their_capacities() {
    let capacity = 2.0 * 10e6 * GOODPUT;
    for s in [
        "minsrtt",
        "round-robin",
        "qaware",
        "ecf",
        "blest",
        "linux-default",
    ] {
        let flows = run(&two_paths(
            [10.0, 10.0],
            [10, 10],
            &format!("scheduler = \"{s}\""),
            "",
            10,
        ));
        let (f, m) = mp(&flows);
        assert!(
            f.throughput_bps > 0.95 * capacity && f.throughput_bps <= capacity * 1.001,
            "{s}: {} of {capacity}",
            f.throughput_bps
        );
        for sub in &m.subflows {
            assert!((sub.share - 0.5).abs() < 0.05, "{s}: {:?}", m.subflows);
        }
    }
}

/// One-way delays 5 and 50 ms, a 64 kB receive buffer: the fast path's window alone fills the
/// connection window, so minSRTT (and ECF and BLEST, which fall back to it) never needs the
/// slow path (over 95 % on the fast one) while round-robin puts every other segment on the slow
/// path and, waiting for it, carries much less.
#[test]
fn minsrtt_fills_the_fast_path_first() {
    let flow = |s: &str| format!("scheduler = \"{s}\"\nreceive_buffer = 65536");
    let flows = run(&two_paths([10.0, 10.0], [5, 50], &flow("minsrtt"), "", 10));
    let (fast_first, m) = mp(&flows);
    assert!(m.subflows[0].share > 0.95, "{:?}", m.subflows);
    let flows = run(&two_paths(
        [10.0, 10.0],
        [5, 50],
        &flow("round-robin"),
        "",
        10,
    ));
    let (rr, r) = mp(&flows);
    assert!(r.subflows[1].share > 0.3, "{:?}", r.subflows);
    assert!(rr.throughput_bps < 0.8 * fast_first.throughput_bps);
}

/// A 10 Mbit/s, 10 ms path beside a 2 Mbit/s, 100 ms one under a 128 kB receive buffer. Schedulers
/// that weigh the slow path's delay (ECF, BLEST) keep to the fast path and carry its full rate
/// (over 95 % of it); round-robin and the Linux default model (linger time, no RTT) send onto
/// the slow path, the fast path's segments wait in the receive buffer behind its late ones
/// (head-of-line blocking: tens of kB held out of order) and the connection carries under half.
#[test]
fn ecf_and_blest_avoid_head_of_line_blocking_on_a_much_slower_path() {
    let fast = 10e6 * GOODPUT;
    let flow = |s: &str| format!("scheduler = \"{s}\"\nreceive_buffer = 131072");
    for s in ["ecf", "blest", "minsrtt"] {
        let flows = run(&two_paths([10.0, 2.0], [10, 100], &flow(s), "", 10));
        let (f, _) = mp(&flows);
        assert!(f.throughput_bps > 0.95 * fast, "{s}: {}", f.throughput_bps);
    }
    for s in ["round-robin", "linux-default"] {
        let flows = run(&two_paths([10.0, 2.0], [10, 100], &flow(s), "", 10));
        let (f, m) = mp(&flows);
        assert!(f.throughput_bps < 0.5 * fast, "{s}: {}", f.throughput_bps);
        assert!(m.max_held > 32_768, "{s}: {}", m.max_held);
    }
}

/// The same two paths under round-robin: with a 4 MB receive buffer the slow path's late
/// segments do not hold the fast one back (the connection carries over 80 % of the sum of the
/// paths); with 128 kB the held bytes close the window and it carries under half of that.
#[test]
fn a_small_receive_buffer_shows_the_head_of_line_stall() {
    let sum = 12e6 * GOODPUT;
    let flow = |rb: u64| format!("scheduler = \"round-robin\"\nreceive_buffer = {rb}");
    let flows = run(&two_paths([10.0, 2.0], [10, 100], &flow(4 << 20), "", 10));
    let (large, _) = mp(&flows);
    let flows = run(&two_paths([10.0, 2.0], [10, 100], &flow(128 << 10), "", 10));
    let (small, m) = mp(&flows);
    assert!(large.throughput_bps > 0.8 * sum, "{}", large.throughput_bps);
    assert!(small.throughput_bps < 0.5 * large.throughput_bps);
    assert!(m.stalled > 1.0, "{m:?}");
}

/// RFC 6356 goal 2: two subflows through one 10 Mbit/s bottleneck beside one NewReno flow. LIA's
/// subflows together take at most 15 % more than the single flow (the RFC aims at no more than
/// one TCP; losses are not shared out exactly evenly over 60 s); two uncoupled NewReno
/// subflows take at least 30 % more, so the bound can fail.
#[test]
fn lia_takes_no_more_than_one_tcp_from_a_shared_bottleneck() {
    let text = |coupling: &str| {
        format!(
            r#"
format = 2
seed = 1
duration = "65s"
warmup = "5s"
[[link]]
from = "phone"
to = "p0"
rate = "100mbit"
delay = "1ms"
[[link]]
from = "phone"
to = "p1"
rate = "100mbit"
delay = "1ms"
[[link]]
from = "p0"
to = "b"
rate = "100mbit"
delay = "1ms"
[[link]]
from = "p1"
to = "b"
rate = "100mbit"
delay = "1ms"
[[link]]
from = "other"
to = "b"
rate = "100mbit"
delay = "2ms"
[[link]]
from = "b"
to = "server"
rate = "10mbit"
delay = "10ms"
queue = 60
[[flow]]
name = "mp"
type = "mptcp"
scheduler = "minsrtt"
coupling = "{coupling}"
paths = [["phone", "p0", "b", "server"], ["phone", "p1", "b", "server"]]
[[flow]]
name = "tcp"
type = "tcp"
path = ["other", "b", "server"]
"#
        )
    };
    let share = |coupling: &str| {
        let flows = run(&text(coupling));
        let (m, _) = mp(&flows);
        let tcp = flows.iter().find(|f| f.name == "tcp").unwrap();
        m.throughput_bps / tcp.throughput_bps
    };
    let lia = share("lia");
    let uncoupled = share("none");
    assert!(lia < 1.15, "LIA / TCP = {lia}");
    assert!(uncoupled > 1.3, "uncoupled / TCP = {uncoupled}");
}

/// `qaware-testbed`'s 40/160 ms paths (600 and 200 Mbit/s shaped hops, 20 and 80 ms one way) with
/// each NIC at its hop's rate, so that the backlog waits in the device queue QAware reads; a
/// 20 MB file under `scheduler` and `assign`.
fn testbed_shaped(scheduler: &str, assign: &str) -> String {
    let mut t = String::from("format = 2\nseed = 1\nduration = \"4s\"\nwarmup = \"0s\"\n");
    for (k, (mbit, delay_ms)) in [(600, 20), (200, 80)].into_iter().enumerate() {
        let nic = format!("nic{}", k + 1);
        t.push_str(&format!(
            "[[link]]\nfrom = \"client\"\nto = \"{nic}\"\nrate = \"{mbit}mbit\"\ndelay = \"10us\"\nqueue = 1000\n\
             [[link]]\nfrom = \"{nic}\"\nto = \"server\"\nrate = \"{mbit}mbit\"\ndelay = \"{delay_ms}ms\"\nqueue = 1000\n"
        ));
    }
    t.push_str(&format!(
        "[[flow]]\ntype = \"mptcp\"\nname = \"mp\"\n\
         paths = [[\"client\", \"nic1\", \"server\"], [\"client\", \"nic2\", \"server\"]]\n\
         scheduler = \"{scheduler}\"\nassign = \"{assign}\"\napp = \"file\"\nsize = 20000000\n\
         cc = \"newreno\"\ncoupling = \"lia\"\nsend_buffer = 4194304\nreceive_buffer = 6291456\n"
    ));
    t
}

/// Why `qaware-testbed` gives QAware minSRTT's result at 40/160 ms (docs/MULTIPATH.md): not
/// device queues left empty, since with the backlog in them the runs are still identical
/// under Linux's window rule; under `on-write`, where every segment is assigned as it is
/// written, the two differ (QAware put 0.882 of the bytes on path 0 against minSRTT's 1.000 in
/// the run that found this: the test asks for 0.05 between them).
#[test]
fn on_the_testbed_paths_the_window_rule_leaves_qaware_and_minsrtt_one_choice() {
    let result = |scheduler: &str, assign: &str| {
        let flows = run(&testbed_shaped(scheduler, assign));
        let (_, m) = mp(&flows);
        (m.completion.expect("the file is read"), m.subflows[0].share)
    };
    assert_eq!(
        result("qaware", "window"),
        result("minsrtt", "window"),
        "Linux's window rule"
    );
    let (q, m) = (result("qaware", "on-write"), result("minsrtt", "on-write"));
    assert!(q.1 < m.1 - 0.05, "on-write: QAware {q:?}, minSRTT {m:?}");
}
