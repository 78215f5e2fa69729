//! A multipath ACP source in the lab (`scenarios/lab/multipath_acp.toml`, the file the
//! simulator's `multipath_acp` test runs): the runtime's multipath source over two emulated
//! paths between two namespace hosts, path B slowed at 2 s, blackholed from 4 s to 6 s and
//! restored; then the same source over path A alone. Root only: the test prints why and
//! passes without it.
//!
//! Asserted, as in the simulator: one session over both paths; updates lost at most those in
//! flight on path B when it was found overdue (`stranded`: after that it carries only probes,
//! copies of updates sent on A); B carrying ACKs again within two of its round trips of its
//! return (plus 40 ms: the emulator's clock starts a few milliseconds before the run's, and a
//! loaded host delays the first probe's ACK; the relay test allows the same); the age within
//! [`TOLERANCE`] of path A alone's. That bound guards against a source that keeps to the failed
//! path (path B alone: 424 ms through the relays, docs/MULTIPATH.md); it is not the issue's
//! "multipath age ≤ the best single path's", which the lab does not meet on the real clock
//! (docs/MULTIPATH.md, "Multipath ACP in the lab").

use std::path::Path;
use std::sync::atomic::AtomicBool;

use acp_lab::run::FlowResult;
use acp_lab::{plan, run};

// Only the privilege gate of the shared helpers is used here.
#[allow(dead_code)]
mod common;

use common::privileged;

/// When path B's blackhole ends (s from the run's start).
const RETURNS_AT: f64 = 6.0;
/// How far above path A alone's age the multipath age may lie. With `b̂` from the pairs that
/// queued (their median), fourteen runs gave 0.91–1.28 (six beside other helpers' builds, load
/// average 6–9: 0.99–1.28; eight beside two busy loops, load 6–9: 0.91–1.22), and runs with
/// `b̂` held at the links' true 13.76 ms beside two busy loops 1.09 and 1.10: what remains
/// there is Seek's rate on a loaded host, not the estimate (docs/MULTIPATH.md, "Why QAware is
/// level with path A on the real clock"). Before that fix the spread was 0.97–1.32 and the
/// bound 2. The simulator, without scheduling delay, puts the union 6.8 % below A alone (26.48
/// against 28.41 ms). 1.5 × A alone passes the spread and still fails a source that keeps
/// sending on the failed or slowed path (hundreds of ms).
const TOLERANCE: f64 = 1.5;

fn lab(text: &str) -> FlowResult {
    let p = plan::parse(text).unwrap();
    let r = run::run(&p, None, &AtomicBool::new(false)).unwrap();
    assert!(r.complete);
    r.flows.into_iter().next().unwrap()
}

#[test]
fn multipath_acp_rides_out_a_slowed_then_blackholed_path_in_the_lab() {
    if !privileged("multipath ACP in the lab") {
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/lab/multipath_acp.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let f = lab(&text);
    let m = f.multipath.as_ref().expect("multipath counters");
    let alone = text
        .replace(
            r#"paths = [["src", "a", "mon"], ["src", "b", "mon"]]"#,
            r#"path = ["src", "a", "mon"]"#,
        )
        .lines()
        .filter(|l| !l.starts_with("scheduler"))
        .collect::<Vec<_>>()
        .join("\n");
    let a = lab(&alone);
    let (age, best) = (f.avg_age.unwrap(), a.avg_age.unwrap());
    let b = &m.paths[1];
    eprintln!(
        "lab multipath {}: age {:.2} ms (path A alone {:.2}); lost {} (stranded on B {}); \
         stale {}, duplicates {}; B back at {:?} s, SRTT {:?}; {m:?}",
        m.scheduler,
        age * 1e3,
        best * 1e3,
        m.lost,
        b.stranded,
        m.stale,
        m.duplicates,
        b.recovered_at_s,
        b.srtt
    );
    // Lost: at most those in flight on B when it was found overdue (none if it never was:
    // QAware sent it nothing long enough before the return to miss an ACK, as the relay test
    // also sees; then it has nothing to recover from).
    assert!(
        m.lost <= b.stranded,
        "lost {} > {} in flight on B when it was found overdue",
        m.lost,
        b.stranded
    );
    if b.failures > 0 {
        let back = b.recovered_at_s.expect("B came back") - RETURNS_AT;
        let limit = 2.0 * b.srtt.unwrap() + 0.040;
        assert!(
            (-0.010..=limit).contains(&back),
            "B back {back} s after its return, limit {limit} s"
        );
    }
    assert!(
        age <= TOLERANCE * best,
        "multipath {age} s > {TOLERANCE} × path A alone {best} s"
    );
}
