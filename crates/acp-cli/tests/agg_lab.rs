//! Aggregation-level rate control on real stacks (issue 22 item 5): `acp lab` runs
//! `scenarios/lab/wifi_ac_agg32_seek.toml` — the ACP runtime's `agg:32` and Seek sources in a
//! server namespace, their monitors in namespace stations behind the emulated 802.11ac A-MPDU
//! downlink, each station's per-slot aggregation level measured by the emulator as a
//! MAC-timestamp capture would and put on its monitor's ACKs — and `acp sim` runs the same file.
//!
//! A second run has the monitors estimate their levels themselves (`acp lab
//! --aggregation-model`): each runs the frame-boundary estimator `acp estimator train` wrote on
//! the kernel's receive timestamps of its updates (`SO_TIMESTAMPNS`), and `agg:32` follows
//! that estimate; the emulator's measurement is kept in the results beside it.
//!
//! The lab needs root: without it the test says why and passes. Its numbers are printed
//! whether or not they hold, with the load average beside them (the lab runs in real time on a
//! shared machine; its threads run at `SCHED_FIFO`, docs/LAB.md).

mod common;

use std::path::PathBuf;

use acp_sim::slot_reports::{ReportedSlot, SlotSummary};
use common::{acp, json_output};
use serde_json::Value;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The scenario's path, or `None` (saying why) when the lab cannot run.
fn scenario_if_root() -> Option<PathBuf> {
    if !is_root() {
        eprintln!("skipped: acp lab needs root");
        return None;
    }
    Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(FILE),
    )
}

const FILE: &str = "scenarios/lab/wifi_ac_agg32_seek.toml";

/// The file's warm-up (s): slots ending after it are summarised.
const WARMUP_S: f64 = 15.0;

/// N_ε of the file's `agg:32`.
const TARGET: f64 = 32.0;

/// How far the mean level after the warm-up may sit from N_ε. Measured (docs/LAB.md): the
/// simulator's mean 31.98 (slot SD 0.43); the lab's 32.04 and 32.02 (slot SD 0.87 and 1.14, the
/// second beside two busy loops at load average 18): the real sources' and monitors'
/// scheduling widens single slots, and a 30-slot mean's standard error stays near 0.2. ±3 is
/// about three single-slot SDs and 10 % of N_ε, while a loop that does not hold the level fails
/// it by far (the source held at its max_rate of 6000 a second would sit near 54 by the thesis's
/// §5.2 model with the legacy frame in c; Seek sits at 1).
const LEVEL_TOLERANCE: f64 = 3.0;

/// The station's reported slots in a `--json` result's WiFi medium object.
fn summary(medium: &Value, station: &str) -> SlotSummary {
    let a = medium["aggregation"]
        .as_array()
        .expect("an A-MPDU downlink reports its stations")
        .iter()
        .find(|a| a["name"] == station)
        .unwrap_or_else(|| panic!("no station {station}"));
    let slots: Vec<ReportedSlot> = serde_json::from_value(a["reports"].clone()).unwrap();
    SlotSummary::after(&slots, WARMUP_S).unwrap_or_else(|| panic!("{station}: no slot"))
}

fn flow<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

#[test]
fn agg32_holds_the_level_near_n_eps_on_real_stacks_beside_seek() {
    let Some(file) = scenario_if_root() else {
        return;
    };
    let sim = json_output(acp().args(["sim", "--json"]).arg(&file));
    let lab = json_output(acp().args(["lab", "--json"]).arg(&file));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let sim_medium = &sim["wifi"][0];
    let lab_medium = &lab["wifi"][0]["medium"];
    for (side, v, medium, age) in [
        ("sim", &sim, sim_medium, "age_ms"),
        ("lab", &lab, lab_medium, "avg_age_ms"),
    ] {
        for (name, station) in [("agg32", "sta#2"), ("seek", "sta#3")] {
            let s = summary(medium, station);
            eprintln!(
                "{side} {name}: age {:.2} ms, {:.2} Mbit/s, level {:.2} (SD {:.2}), delay at the \
                 AP {:.3} ms over {} slots; load {load}",
                flow(v, name)[age].as_f64().unwrap_or(f64::NAN),
                flow(v, name)["throughput_mbit_s"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                s.mean_level,
                s.sd_level,
                s.delay_ms,
                s.slots
            );
        }
    }
    for (side, medium) in [("sim", sim_medium), ("lab", lab_medium)] {
        let agg = summary(medium, "sta#2");
        assert!(
            (agg.mean_level - TARGET).abs() <= LEVEL_TOLERANCE,
            "{side}: agg:32's level {:.2}, not within {LEVEL_TOLERANCE} of {TARGET}",
            agg.mean_level
        );
        // 30 s with a 15 s warm-up and 500 ms slots: about 30 slots after it.
        assert!(agg.slots >= 25, "{side}: {} slots", agg.slots);
        // Seek keeps its station's queue short: frames of a packet or two.
        let seek = summary(medium, "sta#3");
        assert!(
            seek.mean_level < 4.0,
            "{side}: Seek's level {:.2}",
            seek.mean_level
        );
    }
    let rate = |v: &Value, name: &str| flow(v, name)["throughput_mbit_s"].as_f64().unwrap();
    assert!(
        rate(&lab, "agg32") > 10.0 * rate(&lab, "seek"),
        "agg:32 {:.2} Mbit/s, Seek {:.2}",
        rate(&lab, "agg32"),
        rate(&lab, "seek")
    );
}

/// `flow`'s estimated slots ending after the warm-up: (slots, mean level).
fn estimated(flow: &Value) -> (usize, f64) {
    let slots: Vec<f64> = flow["estimated_aggregation"]
        .as_array()
        .expect("a monitor that estimates reports its slots")
        .iter()
        .filter(|s| s["t_s"].as_f64().unwrap() > WARMUP_S)
        .map(|s| s["level"].as_f64().unwrap())
        .collect();
    let mean = slots.iter().sum::<f64>() / slots.len().max(1) as f64;
    (slots.len(), mean)
}

#[test]
fn agg32_holds_the_level_on_the_monitors_own_estimate_from_kernel_timestamps() {
    let Some(file) = scenario_if_root() else {
        return;
    };
    let model = std::env::temp_dir().join(format!("acp-agg-lab-model-{}.json", std::process::id()));
    // The model is trained with the trainer's defaults (the handset-like NAPI model, 20,000 packets
    // per trace). The lab's stamps lie outside that training set's range on both sides: the
    // emulator hands an A-MPDU's packets to the station's TUN device back to back (0–5 µs apart
    // against 8–28 µs), and its frame gaps are ≥ 5 ms (the legacy station's frames between agg32's)
    // against hundreds of µs. The features cap every gap at the top of the training set's
    // (`gap_cap_us`), so the frame gaps read as the widest of training instead of being
    // extrapolated: before the cap, models trained on 3000 and 6000 packets per trace split the
    // frames into about three or not depending on the packet count (docs/AGGREGATION.md, "The
    // transfer"); with it 3000, 6000 and 20,000 packets estimated 32.1, 32.0 and 31.8 in the lab.
    let trained = acp()
        .args(["estimator", "train", "--out"])
        .arg(&model)
        .args(["--svm-samples", "0", "--sweep", "20", "--level-secs", "0"])
        .args([
            "--bottleneck-packets",
            "2000",
            "--n-sweep",
            "5",
            "--p-sweep",
            "100",
        ])
        .output()
        .unwrap();
    assert!(
        trained.status.success(),
        "{}",
        String::from_utf8_lossy(&trained.stderr)
    );
    let lab = json_output(
        acp()
            .args(["lab", "--json", "--aggregation-model"])
            .arg(&model)
            .arg(&file),
    );
    let _ = std::fs::remove_file(&model);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let medium = &lab["wifi"][0]["medium"];
    for (name, station) in [("agg32", "sta#2"), ("seek", "sta#3")] {
        let s = summary(medium, station);
        let (slots, level) = estimated(flow(&lab, name));
        eprintln!(
            "lab, estimated {name}: age {:.2} ms, {:.2} Mbit/s, level {:.2} (SD {:.2}) measured, \
             {level:.2} estimated over {slots} slots, delay at the AP {:.3} ms; load {load}",
            flow(&lab, name)["avg_age_ms"].as_f64().unwrap_or(f64::NAN),
            flow(&lab, name)["throughput_mbit_s"]
                .as_f64()
                .unwrap_or(f64::NAN),
            s.mean_level,
            s.sd_level,
            s.delay_ms
        );
    }
    // The loop holds what the monitor estimates at N_ε, and the estimate is the true level:
    // the measured level (the emulator's, a MAC capture's) sits within the measured-level
    // run's tolerance of N_ε.
    let (slots, level) = estimated(flow(&lab, "agg32"));
    assert!(slots >= 25, "{slots} estimated slots");
    assert!(
        (level - TARGET).abs() <= LEVEL_TOLERANCE,
        "estimated level {level:.2}"
    );
    let agg = summary(medium, "sta#2");
    assert!(
        (agg.mean_level - TARGET).abs() <= LEVEL_TOLERANCE,
        "agg:32 on its estimate: measured level {:.2}, not within {LEVEL_TOLERANCE} of {TARGET}",
        agg.mean_level
    );
    let seek = summary(medium, "sta#3");
    assert!(seek.mean_level < 4.0, "Seek's level {:.2}", seek.mean_level);
}
