//! The simulator against the lab over an emulated WiFi access (issue 20, items 2 and 6): the
//! same files run in `acp sim` and in `acp lab` (kernel TCP and the ACP runtime in namespace
//! stations, the simulator's own 802.11 medium in the emulator).
//!
//! - `scenarios/lab/wifi_acp_seek_g.toml`: an ACP+ and a Seek source on two 802.11g stations:
//!   each source's age within [`AGE_TOLERANCE`] of the lab's.
//! - `scenarios/lab/wifi_cubic_bbr_g.toml`: a CUBIC and a BBR bulk flow on two 802.11g
//!   stations: each flow's throughput and mean RTT within [`TCP_TOLERANCE`] of the lab's.
//! - `scenarios/coexistence/lab/bp_2acp_{1,5}tcp.toml`, shortened: the coexistence paper's
//!   Baseline Priority; ACP+'s age in the lab is flat across the CUBIC flows within
//!   [`FLAT_TOLERANCE`].
//!
//! The lab needs root: without it each test says why and passes. Every run's numbers are
//! printed whether or not they agree, with the load average beside them (the lab runs in real
//! time on a shared machine; its threads run at `SCHED_FIFO`, docs/LAB.md).

mod common;

use std::path::{Path, PathBuf};

use common::{acp, json_output};
use serde_json::Value;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

/// Each update flow's age (ms) in a `--json` result, by name; `field` is the side's name for
/// it (the simulator's `age_ms`, the lab's `avg_age_ms`).
fn ages(v: &Value, field: &str) -> Vec<(String, f64)> {
    v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| Some((f["name"].as_str()?.to_string(), f[field].as_f64()?)))
        .collect()
}

fn simulated(file: &Path) -> Vec<(String, f64)> {
    ages(
        &json_output(acp().args(["sim", "--json"]).arg(file)),
        "age_ms",
    )
}

fn emulated(file: &Path) -> Vec<(String, f64)> {
    ages(
        &json_output(acp().args(["lab", "--json"]).arg(file)),
        "avg_age_ms",
    )
}

/// A scratch directory for shortened files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Sim against lab, per source: the bound. Measured (docs/LAB.md): −3.0 % (ACP+) and
/// 0.0 % (Seek), load average 11; the simulator's ages move by under 1.5 % over seeds 1–4, and
/// the lab's share of the age (two TUN crossings, the kernel's stacks) is under a millisecond
/// of ~23 ms at the emulator's measured p99 lateness of 0.2 ms.
const AGE_TOLERANCE: f64 = 0.10;

/// ACP+'s lab age with 5 CUBIC flows against 1, in BP: the bound. The full 40 s runs
/// differ by 1.8 % (docs/COEXISTENCE.md); the flows' updates wait only in AC_VO and the Voice
/// tin, so the TCP count reaches them only through the medium's shared airtime. The short
/// form measures from 12 s on: ACP+ takes about 10 s to settle here, and a run measured from
/// 4 s to 20 s read the settling (two flows of one run 149 and 185 ms, a CI failure at +35 %);
/// from 12 s to 30 s four runs read 128–137 ms per flow, gaps +2.8 and +1.2 % (docs/COEXISTENCE.md).
const FLAT_TOLERANCE: f64 = 0.05;

#[test]
fn acp_and_seek_ages_over_wifi_match_the_lab() {
    if !is_root() {
        eprintln!("skipped: acp lab needs root");
        return;
    }
    let file = repo("scenarios/lab/wifi_acp_seek_g.toml");
    let (sim, lab) = (simulated(&file), emulated(&file));
    eprintln!("sim {sim:?}\nlab {lab:?}\nload {}", load_average());
    for name in ["acp+", "seek"] {
        let side = |v: &[(String, f64)]| v.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
        let (s, l) = (side(&sim).unwrap(), side(&lab).unwrap());
        let gap = (s - l) / l;
        assert!(
            gap.abs() <= AGE_TOLERANCE,
            "{name}: sim {s:.1} lab {l:.1} ms ({:+.1} %)",
            100.0 * gap
        );
    }
}

/// Sim against lab, per TCP flow, throughput and mean RTT: the bound. Measured
/// (docs/LAB.md, "WiFi: simulator against lab"): with BBR's ACK-aggregation allowance every
/// gap within 4.6 % of four lab runs; without it BBR's RTT was 36 % below the kernel's.
const TCP_TOLERANCE: f64 = 0.10;

/// Each flow's (throughput Mbit/s, mean RTT ms) in a `--json` result; `rtt` is the side's
/// name for the RTT (the simulator's `mean_rtt_ms`, the lab's `rtt_ms`).
fn tcp_flows(v: &Value, rtt: &str) -> Vec<(String, f64, f64)> {
    v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            let name = f["name"].as_str()?.to_string();
            Some((name, f["throughput_mbit_s"].as_f64()?, f[rtt].as_f64()?))
        })
        .collect()
}

#[test]
fn cubic_and_bbr_over_wifi_match_the_kernel() {
    if !is_root() {
        eprintln!("skipped: acp lab needs root");
        return;
    }
    let file = repo("scenarios/lab/wifi_cubic_bbr_g.toml");
    let sim = tcp_flows(
        &json_output(acp().args(["sim", "--json"]).arg(&file)),
        "mean_rtt_ms",
    );
    let lab = tcp_flows(
        &json_output(acp().args(["lab", "--json"]).arg(&file)),
        "rtt_ms",
    );
    eprintln!("sim {sim:?}\nlab {lab:?}\nload {}", load_average());
    let mut failures = Vec::new();
    for name in ["cubic", "bbr"] {
        let side = |v: &[(String, f64, f64)]| {
            let (_, tput, rtt) = v.iter().find(|(n, ..)| n == name).unwrap();
            (*tput, *rtt)
        };
        let ((st, sr), (lt, lr)) = (side(&sim), side(&lab));
        for (what, s, l) in [("throughput", st, lt), ("mean RTT", sr, lr)] {
            let gap = (s - l) / l;
            if gap.abs() > TCP_TOLERANCE {
                failures.push(format!(
                    "{name} {what}: sim {s:.2} lab {l:.2} ({:+.1} %)",
                    100.0 * gap
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn baseline_priority_keeps_acp_age_flat_across_cubic_flows_in_the_lab() {
    if !is_root() {
        eprintln!("skipped: acp lab needs root");
        return;
    }
    let scratch = Scratch::new("bp-flat");
    let mean_age = |tcp: usize| {
        let source = repo(&format!("scenarios/coexistence/lab/bp_2acp_{tcp}tcp.toml"));
        let file = common::shortened(&source, &scratch.0, "30s", "12s");
        let lab = emulated(&file);
        eprintln!(
            "BP, 2 ACP+, {tcp} CUBIC: lab {lab:?}; load {}",
            load_average()
        );
        let acp: Vec<f64> = lab
            .iter()
            .filter(|(n, _)| n.starts_with("acp"))
            .map(|(_, a)| *a)
            .collect();
        acp.iter().sum::<f64>() / acp.len() as f64
    };
    let (one, five) = (mean_age(1), mean_age(5));
    let gap = (five - one) / one;
    assert!(
        gap.abs() <= FLAT_TOLERANCE,
        "1 CUBIC {one:.1} ms, 5 CUBIC {five:.1} ms ({:+.1} %)",
        100.0 * gap
    );
}
