//! One name and one unit per quantity (docs/OUTPUTS.md): for `acp sim`, `acp sweep`, `acp demo`,
//! `acp monitor` (its session reports and `--print-updates` lines) and `acp source`, every CSV
//! column and every text table heading or `field=value` is a field of the JSON, and no output
//! names a bit rate with the command line's byte-rate units (`kbps`, `mbps`, `bps`). The
//! reproductions are checked alike in `crates/acp-sim/tests/reproductions.rs`.

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value};

mod common;

use common::{acp, json_output, spawn_monitor, update_datagram, wait_within};

fn scenario_path(name: &str) -> String {
    format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Every key of `v`, recursively (lists' objects included), with the fields beside them.
fn all_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                all_keys(x, out);
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| all_keys(x, out)),
        _ => {}
    }
}

/// No field is named in the command line's byte-rate units.
fn no_byte_rate_names(what: &str, v: &Value) {
    let mut keys = Vec::new();
    all_keys(v, &mut keys);
    for k in keys {
        assert!(
            !k.contains("kbps") && !k.contains("mbps") && !k.ends_with("_bps"),
            "{what}: {k}"
        );
    }
}

/// The fields of an object that hold one value (what a CSV column can hold).
fn single_fields(row: &Map<String, Value>) -> Vec<&str> {
    row.iter()
        .filter(|(_, v)| !v.is_array() && !v.is_object())
        .map(|(k, _)| k.as_str())
        .collect()
}

/// The words of the first line of `text` that starts with `first` (a table's heading).
fn heading<'a>(text: &'a str, first: &str) -> Vec<&'a str> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(first))
        .unwrap_or_else(|| panic!("no heading {first}: {text}"))
        .split_whitespace()
        .collect()
}

fn assert_subset(what: &str, names: &[&str], row: &Map<String, Value>) {
    for n in names {
        assert!(
            row.contains_key(*n),
            "{what}: {n} is no JSON field of {row:?}"
        );
    }
}

fn stdout(command: &mut std::process::Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sim_csv_table_and_json_name_each_flow_field_alike() {
    let file = scenario_path("bottleneck.toml");
    let v = json_output(acp().args(["sim", &file, "--json"]));
    no_byte_rate_names("sim", &v);
    let flow = v["flows"][0].as_object().unwrap();
    let dir = acp_testkit::Scratch::new("acp-names-sim");
    let text = stdout(acp().args(["sim", &file, "--out"]).arg(&dir));
    let csv = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header, single_fields(flow));
    assert_subset("sim table", &heading(&text, "name"), flow);
    for want in ["send_rate_hz", "throughput_mbit_s", "mean_rtt_ms"] {
        assert!(header.contains(&want), "{want}: {header:?}");
    }
}

#[test]
fn sweep_csv_table_and_json_name_each_point_field_alike() {
    let file = scenario_path("bottleneck.toml");
    let args = ["sweep", &file, "--rates", "50,100,200"];
    let v = json_output(acp().args(args).arg("--json"));
    no_byte_rate_names("sweep", &v);
    let point = v["points"][0].as_object().unwrap();
    let best = v["best"].as_object().unwrap();
    for (k, _) in point {
        assert!(best.contains_key(k), "best lacks {k}: {best:?}");
    }
    let dir = acp_testkit::Scratch::new("acp-names-sweep");
    let text = stdout(acp().args(args).arg("--out").arg(&dir));
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header, single_fields(point));
    assert_subset("sweep table", &heading(&text, "rate_hz"), point);
}

#[test]
fn demo_table_and_json_name_each_round_field_alike() {
    let args = ["demo", "--duration", "1", "--controllers", "fixed:50"];
    let v = json_output(acp().args(args).arg("--json"));
    no_byte_rate_names("demo", &v);
    let round = v["controllers"][0].as_object().unwrap();
    let text = stdout(acp().args(args));
    let final_table = &text[text.find("final").unwrap()..];
    assert_subset("demo table", &heading(final_table, "controller"), round);
}

/// A monitor with `--print-updates` (and `--json` when `json`), sent three updates of one
/// session, the last not UTF-8; returns its stdout (the update lines) and stderr (the reports).
fn monitor_run(json: bool) -> (String, String) {
    let mut args = vec![
        "--listen",
        "127.0.0.1:0",
        "--print-updates",
        "--clocks-synced",
    ];
    if json {
        args.push("--json");
    }
    let (mut child, mut err, addr) = spawn_monitor(&args);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(&addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 256];
    let mut printed = BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    for (seq, payload) in [(1, &b"21.5"[..]), (2, b"21.6"), (3, b"\xff\x00")] {
        socket.send(&update_datagram(7, seq, payload)).unwrap();
        socket.recv(&mut buf).unwrap();
        // Each update's line before the next update: the printer keeps only the freshest of
        // the updates it has not printed yet, so sending on at once may supersede one on a busy
        // machine.
        printed.read_line(&mut out).unwrap();
    }
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = wait_within(&mut child, Duration::from_secs(10));
    assert!(status.success());
    printed.read_to_string(&mut out).unwrap();
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    (out, rest)
}

#[test]
fn monitor_updates_carry_a_type_and_one_payload_encoding_and_reports_name_sessions_alike() {
    let (updates, reports) = monitor_run(true);
    let lines: Vec<Value> = updates
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{updates}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    for l in &lines {
        assert_eq!(l["type"], "update", "{l}");
        // Text or not, every update of the session has the same fields.
        assert_eq!(keys(l), keys(&lines[0]), "{l}");
        assert_eq!(l["session"], "0000000000000007");
    }
    assert_eq!(
        (&lines[0]["payload"], &lines[0]["payload_hex"]),
        (&"21.5".into(), &"32312e35".into())
    );
    assert_eq!(
        (&lines[2]["payload"], &lines[2]["payload_hex"]),
        (&Value::Null, &"ff00".into())
    );
    let summary: Value = reports
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("no summary: {reports}"));
    no_byte_rate_names("monitor", &summary);
    let session = summary["sessions"][0].as_object().unwrap().clone();
    let (_, text) = monitor_run(false);
    assert_subset("monitor sessions", &heading(&text, "peer"), &session);
}

#[test]
fn source_status_text_names_the_json_fields() {
    let (mut monitor, _err, addr) = spawn_monitor(&["--listen", "127.0.0.1:0"]);
    let args = ["source", "--to", &addr, "--count", "20"];
    let out = stdout(acp().args(args).arg("--json").stderr(Stdio::null()));
    let summary: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["type"] == "summary")
        .unwrap();
    no_byte_rate_names("source", &summary);
    let fields = summary.as_object().unwrap();
    assert!(["probing", "running", "outage"].contains(&fields["phase"].as_str().unwrap()));
    assert_eq!(fields["session"].as_str().unwrap().len(), 16);
    let text = stdout(acp().args(args).stderr(Stdio::null()));
    let line = text.lines().find(|l| l.contains(" summary ")).unwrap();
    let names: Vec<&str> = line
        .split_whitespace()
        .filter_map(|w| w.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(names.len() > 10, "{line}");
    assert_subset("source text", &names, fields);
    let _ = monitor.kill();
    let _ = monitor.wait();
}
