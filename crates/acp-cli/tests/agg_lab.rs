//! Aggregation-level rate control on real stacks (issue 22 item 5): `acp lab` runs
//! `scenarios/lab/wifi_ac_agg32_seek.toml` — the ACP runtime's `agg:32` and Seek sources in a
//! server namespace, their monitors in namespace stations behind the emulated 802.11ac A-MPDU
//! downlink, each station's per-slot aggregation level measured by the emulator as a
//! MAC-timestamp capture would and put on its monitor's ACKs — and `acp sim` runs the same file.
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

const FILE: &str = "scenarios/lab/wifi_ac_agg32_seek.toml";

/// The file's warm-up (s): slots ending after it are summarised.
const WARMUP_S: f64 = 15.0;

/// N_ε of the file's `agg:32`.
const TARGET: f64 = 32.0;

/// How far the mean level after the warm-up may sit from N_ε. In `acp sim` the controlled
/// station's slot levels have an SD near 0.5 MPDU and a mean within 0.1 of 32 (docs/LAB.md);
/// the lab adds the real sources' and monitors' scheduling (updates sent in bursts when a
/// thread is late, ACKs delayed), which moves single slots by a few MPDUs but not the 30-slot
/// mean by more than 1–2 (measured with two busy loops beside it, docs/LAB.md). ±3 is about
/// 10 % of N_ε and well inside the level's range of 1–64: a loop that does not hold the level
/// (open loop at max_rate saturates at 64; Seek sits at 1) fails it.
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
    if !is_root() {
        eprintln!("skipped: acp lab needs root");
        return;
    }
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(FILE);
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
