//! A multipath ACP source in the simulator (`scenarios/lab/multipath_acp.toml`, the relay test's two
//! paths): one session over both, path B slowed at 2 s, blackholed from 4 s to 6 s, restored.
//!
//! Simulated time over loss-free links, so every run is exact and the bounds are the issue's
//! own, with no tolerance: the union's age at most the best single path's, no update lost to the
//! failure beyond those in flight on the failed path when it was found overdue (after that it
//! carries only probes, copies of updates sent on the other path), the path carrying ACKs again
//! within two of its round trips of its return.

use acp_sim::report::FlowResult;
use acp_sim::scenario::Scenario;

const SCENARIO: &str = include_str!("../../../scenarios/lab/multipath_acp.toml");
const PATHS: &str = r#"paths = [["src", "a", "mon"], ["src", "b", "mon"]]"#;
/// When path B's blackhole ends (s).
const RETURNS_AT: f64 = 6.0;

fn run(text: &str) -> FlowResult {
    Scenario::parse(text)
        .unwrap()
        .build()
        .unwrap()
        .run()
        .flows
        .into_iter()
        .next()
        .unwrap()
}

/// The example under `scheduler`.
fn multipath(scheduler: &str) -> FlowResult {
    let text = SCENARIO.replace(
        "scheduler = \"qaware\"",
        &format!("scheduler = \"{scheduler}\""),
    );
    assert!(text.contains(&format!("scheduler = \"{scheduler}\"")));
    run(&text)
}

/// The example's source over one of its paths alone (`a` or `b`).
fn single(via: &str) -> f64 {
    let text = SCENARIO
        .replace(PATHS, &format!(r#"path = ["src", "{via}", "mon"]"#))
        .lines()
        .filter(|l| !l.starts_with("scheduler"))
        .collect::<Vec<_>>()
        .join("\n");
    run(&text).age.expect("single-path age")
}

#[test]
fn qaware_rides_out_a_slowed_then_blackholed_path() {
    let best = single("a");
    let other = single("b");
    for scheduler in ["qaware", "roundrobin", "duplicate"] {
        let f = multipath(scheduler);
        let m = f.multipath.as_ref().expect("multipath counters");
        let age = f.age.unwrap();
        let b = &m.paths[1];
        eprintln!(
            "{scheduler}: age {:.2} ms (path A alone {:.2}, B alone {:.2}); lost {} (stranded \
             on B {}); B back at {:?} s, SRTT {:?}; {m:?}",
            age * 1e3,
            best * 1e3,
            other * 1e3,
            m.lost,
            b.stranded,
            b.recovered_at_s,
            b.srtt
        );
        assert!(age <= best, "{scheduler}: {age} s > path A alone {best} s");
        assert_eq!(b.failures, 1, "{scheduler}: B failed once");
        assert!(
            m.lost <= b.stranded,
            "{scheduler}: lost {} > {} in flight on B when it was found overdue",
            m.lost,
            b.stranded
        );
        let back = b.recovered_at_s.expect("B came back") - RETURNS_AT;
        let srtt = b.srtt.unwrap();
        assert!(
            (0.0..=2.0 * srtt).contains(&back),
            "{scheduler}: B back {back} s after its return, 2·SRTT = {} s",
            2.0 * srtt
        );
    }
}
