//! `acp source --controller agg:…` against `acp monitor --aggregation-from FILE` on loopback: the
//! source's PI controller (Algorithm 1) follows the synthetic aggregation levels the monitor
//! reports in its ACKs.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{acp, spawn_monitor, wait_within};

/// Slots of 1 s (at least the controller's Δ = 0.5 s, so every slot is used exactly once): two of
/// level 32 while the source starts, three of 36, then 32 for good. With `agg:32,0.1,0.5`
/// (K = 0.1 Mbit/s per MPDU = 8.33 updates/s) and the rate capped at 500 updates/s — below
/// one update per RTT on loopback even with both cores busy (an RTT under 2 ms) — the source
/// starts at 500 and each level-36 slot takes 4·8.33 = 33.3 updates/s off: 500 − 100 = 400.
/// The rule is exact and each slot counts once whatever the timing, so the tolerance is only
/// floating point (0.01 updates/s).
#[test]
fn pi_controller_follows_the_levels_the_monitor_reports() {
    let dir = acp_testkit::Scratch::new("aggctl-cli");
    let levels = dir.join("levels.txt");
    std::fs::write(
        &levels,
        "# synthetic\n32\n32\n36\n36 433.3\n36 433.3 1.5\n32\n",
    )
    .unwrap();
    let (mut monitor, _err, addr) = spawn_monitor(&[
        "--listen",
        "127.0.0.1:0",
        "--aggregation-from",
        levels.to_str().unwrap(),
        "--aggregation-slot",
        "1000",
    ]);
    let source = acp()
        .args(["source", "--to", &addr, "--controller", "agg:32,0.1,0.5"])
        .args(["--max-rate", "500", "--duration", "8s", "--json"])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(source.status.success(), "{source:?}");
    let text = String::from_utf8(source.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "summary", "{text}");
    assert_eq!(last["controller"], "agg:32,0.1,0.5", "{last}");
    let rate = last["rate_hz"].as_f64().unwrap();
    assert!((rate - 400.0).abs() < 0.01, "rate {rate}: {text}");
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(monitor.id() as i32, libc::SIGTERM);
    }
    assert!(wait_within(&mut monitor, Duration::from_secs(10)).success());
}

#[test]
fn a_missing_levels_file_is_a_usage_error() {
    let out = acp()
        .args(["monitor", "--listen", "127.0.0.1:0"])
        .args(["--aggregation-from", "/nonexistent/levels.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/levels.txt"), "{err}");
}
