//! The simulator against the lab over an emulated WiFi access (issue 20, items 2 and 6): the
//! same files run in `acp sim` and in `acp lab` (kernel TCP and the ACP runtime in namespace
//! stations, the simulator's own 802.11 medium in the emulator).
//!
//! - `scenarios/lab/wifi_acp_seek_g.toml`: an ACP+ and a Seek source on two 802.11g stations:
//!   each source's age within [`AGE_TOLERANCE`] of the lab's.
//! - `scenarios/lab/wifi_cubic_bbr_g.toml`: a CUBIC and a BBR bulk flow on two 802.11g
//!   stations: each flow's throughput and mean RTT within [`TCP_TOLERANCE`] of the lab's.
//! - `scenarios/coexistence/lab/bp_2acp_{1,5}tcp.toml`, shortened and with five ACP+ flows (the
//!   paper's flat BP is stated for five): the coexistence paper's Baseline Priority. The
//!   median age is flat across the CUBIC flows within [`FLAT_TOLERANCE`] in the simulator, and
//!   within guards against the host's load in the lab ([`LAB_RTT_GUARD`], [`LAB_AGE_GUARD`]).
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

/// The ACP+ flows' median age with 5 CUBIC flows against 1, in BP, in the simulator: the
/// issue's 5 %. The updates wait only in AC_VO and the Voice tin, so the TCP count reaches them
/// only through the medium's shared airtime (the short form, seed 1: 125.5–131.5 ms per flow
/// with 1 and with 5 CUBIC flows).
const FLAT_TOLERANCE: f64 = 0.05;

/// The same in the lab, where the host's load moves it: the median round trip within
/// [`LAB_RTT_GUARD`] and the median age within [`LAB_AGE_GUARD`]. Guards, not the 5 %:
/// on a quiet host the lab is flat within 3 % (the full 40 s runs: 1.8 %), but on a loaded one
/// ACP+ sources beside five kernel CUBIC flows slow down (4–21 updates/s against 23–31) and
/// some round trips lengthen; over ten runs at load 3.7–9.4 the median age moved by −7.0 to
/// +25.6 % and, where measured, the median RTT by −2.8 to +5.5 % (docs/COEXISTENCE.md; the
/// cause is open). Without the
/// marking the updates would wait behind CUBIC's queue: seconds, not tens of percent.
const LAB_RTT_GUARD: f64 = 0.10;
const LAB_AGE_GUARD: f64 = 0.40;

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
    // Each side's median over the ACP+ flows of (age, RTT), in ms, for the file with `tcp`
    // CUBIC flows.
    let medians = |tcp: usize, side: &str| {
        let source = repo(&format!("scenarios/coexistence/lab/bp_2acp_{tcp}tcp.toml"));
        // ACP+ settles in about 10 s here: measured from 4 s, the settling made a fresh-clone
        // CI run read +35 %.
        let file = common::shortened(&source, &scratch.0, "30s", "12s");
        let text = std::fs::read_to_string(&file).unwrap();
        let five = text.replace("name = \"acp\"\ncount = 2\n", "name = \"acp\"\ncount = 5\n");
        assert_ne!(five, text, "{}: no ACP flow of count 2", source.display());
        std::fs::write(&file, five).unwrap();
        let v = json_output(acp().args([side, "--json"]).arg(&file));
        let of = |field: &str| {
            let mut x: Vec<f64> = ages(&v, field)
                .into_iter()
                .filter(|(n, _)| n.starts_with("acp"))
                .map(|(_, a)| a)
                .collect();
            assert_eq!(x.len(), 5, "{field}: {x:?}");
            x.sort_by(f64::total_cmp);
            eprintln!("{side}: BP, 5 ACP+, {tcp} CUBIC: {field} {x:.1?}");
            x[2]
        };
        let age = if side == "sim" {
            "age_ms"
        } else {
            "avg_age_ms"
        };
        let m = (of(age), of("rtt_ms"));
        eprintln!("load {}", load_average());
        m
    };
    let gap = |one: f64, five: f64| (five - one) / one;
    let check = |what: &str, one: f64, five: f64, bound: f64| {
        assert!(
            gap(one, five).abs() <= bound,
            "{what}: 1 CUBIC {one:.1} ms, 5 CUBIC {five:.1} ms ({:+.1} %, bound {:.0} %)",
            100.0 * gap(one, five),
            100.0 * bound
        );
    };
    let ((age1, _), (age5, _)) = (medians(1, "sim"), medians(5, "sim"));
    check("simulated age", age1, age5, FLAT_TOLERANCE);
    let ((age1, rtt1), (age5, rtt5)) = (medians(1, "lab"), medians(5, "lab"));
    check("lab RTT", rtt1, rtt5, LAB_RTT_GUARD);
    check("lab age", age1, age5, LAB_AGE_GUARD);
}
