//! The QAware reproductions (`acp reproduce qaware-cbr`, `qaware-apps`) in short form, and the
//! end-to-end property behind them: QAware moves off a path whose device queue other traffic on
//! the phone fills, before that path's RTT shows it, where minSRTT keeps sending onto it.
//!
//! Both run the reproductions' own networks (thesis §2.7: two 802.11g paths, each segment
//! assigned as the application writes it), seeds 1–3.
//!
//! Tolerances: `acp reproduce qaware-cbr --seeds 3` printed QAware ahead of minSRTT by 56, 31,
//! 29 and 41 % at 1, 2, 3 and 4 Mbit/s of cross traffic (mean 31.9 % over the sweep with 0;
//! with Linux's receiver ACK decision, 28 Nov; before, 44, 40, 62 and 44 %); the test asks for
//! 15 % at each of 1–3 Mbit/s, well under the smallest gain seen, and the thesis's ≈ 40 % is the
//! mean printed beside. In `qaware-apps`' UDP part QAware's share on the loaded F1 was 0.53
//! against minSRTT's 0.89 and its throughput 4.53 ± 1.01 against 3.98 ± 0.54 Mbit/s (before:
//! 0.53 against 0.86, 4.72 ± 0.26 against 4.13 ± 0.61): the test asks for a share at least 0.15
//! lower and a throughput not lower.

use acp_sim::reproduce::harness::Options;
use acp_sim::sweep::Cancel;
use serde_json::{Map, Value};

fn rows(name: &str, part: &str) -> Vec<Map<String, Value>> {
    let o = Options {
        seeds: Some(3),
        scenarios: vec![part.into()],
        threads: 2,
        ..Options::default()
    };
    acp_sim::reproduce::find(name)
        .unwrap()
        .run(&o, &Cancel::new(), &|_, _| {}, None)
        .unwrap()
        .rows
}

fn field(rows: &[Map<String, Value>], scheduler: &str, x: f64, f: &str) -> f64 {
    rows.iter()
        .find(|r| r["scheduler"] == scheduler && r["x"].as_f64() == Some(x))
        .and_then(|r| r[f].as_f64())
        .unwrap_or_else(|| panic!("no {f} for {scheduler} at {x}: {rows:?}"))
}

#[test]
fn qaware_is_ahead_of_minsrtt_under_cross_traffic() {
    let rows = rows("qaware-cbr", "6+6 cross on F1");
    for cross in [1.0, 2.0, 3.0] {
        let q = field(&rows, "qaware", cross, "throughput_mbit_s");
        let m = field(&rows, "minsrtt", cross, "throughput_mbit_s");
        assert!(
            q > 1.15 * m,
            "{cross} Mbit/s of cross traffic: QAware {q:.2} against minSRTT {m:.2} Mbit/s"
        );
    }
}

#[test]
fn qaware_moves_off_a_path_whose_device_queue_fills() {
    let rows = rows("qaware-apps", "udp 4-8 s on F1 at 9+6");
    let share = |s| field(&rows, s, 12.0, "share_f1");
    let tp = |s| field(&rows, s, 12.0, "throughput_mbit_s");
    assert!(
        share("qaware") < share("minsrtt") - 0.15,
        "F1's share: QAware {:.3}, minSRTT {:.3}",
        share("qaware"),
        share("minsrtt")
    );
    assert!(
        tp("qaware") >= tp("minsrtt"),
        "{} < {}",
        tp("qaware"),
        tp("minsrtt")
    );
}

/// One path of 10 Mbit/s (1 ms, then 9 ms) for a multipath flow with `keys`.
fn one_path(keys: &str) -> String {
    format!(
        r#"
format = 2
seed = 1
duration = "10s"
warmup = "2s"
[[link]]
from = "phone"
to = "p0"
rate = "10mbit"
delay = "1ms"
[[link]]
from = "p0"
to = "server"
rate = "1000mbit"
delay = "9ms"
[[flow]]
name = "mp"
type = "mptcp"
paths = [["phone", "p0", "server"]]
{keys}
"#
    )
}

fn run_one(keys: &str) -> acp_sim::report::FlowResult {
    let text = one_path(keys);
    let flows = acp_sim::scenario::Scenario::parse(&text)
        .unwrap()
        .build()
        .unwrap()
        .run()
        .flows;
    flows.into_iter().next().unwrap()
}

/// A CBR application under capacity gets its rate; a file finishes in about its size over the
/// path's payload rate: 1 MB at 10 Mbit/s × 1448/1488 is 0.82 s, plus slow start's first RTTs
/// (20 ms each) — between 0.82 and 1.5 s.
#[test]
fn cbr_and_file_applications() {
    let cbr = run_one("app = \"cbr\"\nrate = \"4mbit\"");
    assert!(
        (cbr.throughput_bps / 4e6 - 1.0).abs() < 0.02,
        "{}",
        cbr.throughput_bps
    );
    let file = run_one("app = \"file\"\nsize = 1000000");
    let done = file.mptcp.unwrap().completion.expect("the file is read");
    assert!((0.82..1.5).contains(&done), "{done}");
}

#[test]
fn application_keys_are_checked() {
    for (keys, says) in [
        ("rate = \"4mbit\"", "needs app = \"cbr\""),
        ("app = \"cbr\"", "takes rate"),
        ("app = \"file\"\nrate = \"1mbit\"", "takes size"),
        ("app = \"file\"\nsize = 0", "at least one byte"),
        ("assign = \"later\"", "on-write"),
    ] {
        let err = acp_sim::scenario::Scenario::parse(&one_path(keys))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{keys}: {err}");
    }
}
