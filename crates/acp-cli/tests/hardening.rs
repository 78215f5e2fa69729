//! Regressions of issue 25's smaller defects in the `acp` binary, each reproduced as found: a
//! TCP source whose connection is reset, run-time arguments that ran forever or did nothing, and
//! config files of any size.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

use common::{acp, refused, wait_within, SpawnGuarded};

/// A reset connection used to end `acp source --transport tcp` with status 0 and no summary:
/// the broken pipe on the socket passed for a closed stdout.
#[test]
fn a_tcp_source_whose_connection_is_reset_prints_its_summary_and_fails() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut child = acp()
        .args(["source", "--transport", "tcp", "--to", &addr])
        .args(["--duration", "60s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded()
        .unwrap();
    let (mut conn, _) = listener.accept().unwrap();
    // Take some updates, then close with the rest unread: the kernel answers with a reset.
    let mut buf = vec![0u8; 4096];
    let mut taken = 0;
    while taken < 1000 {
        taken += conn.read(&mut buf).unwrap();
    }
    drop(conn);
    let status = wait_within(&mut child, Duration::from_secs(20));
    let output = child.wait_with_output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(status.code(), Some(1), "stdout: {out}\nstderr: {err}");
    let summary: serde_json::Value = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("no summary in {out}"));
    assert!(summary["sent"].as_u64().unwrap() >= 1, "{summary}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(&format!("the monitor at {addr} reset the connection")),
        "{err}"
    );
}

/// Each used to run forever (port 0), do nothing and exit 0 (a zero duration), or fail with
/// status 1 (a missing scenario): all are bad arguments.
#[test]
fn run_arguments_that_cannot_work_are_refused_with_status_2() {
    let relay = "relay --listen 127.0.0.1:0 --to 127.0.0.1:0 --rate 1mbit --delay 1ms --queue 5";
    let missing = "/nonexistent/acp-scenario.toml";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["source", "--to", "127.0.0.1:0"], "port 0"),
        (
            vec!["source", "--transport", "tcp", "--to", "localhost:0"],
            "port 0",
        ),
        (relay.split(' ').collect(), "port 0"),
        (
            vec!["source", "--to", "127.0.0.1:9", "--duration", "0"],
            "longer than zero",
        ),
        (
            vec!["source", "--to", "127.0.0.1:9", "--duration", "0ms"],
            "longer than zero",
        ),
        (vec!["demo", "--duration", "0s"], "longer than zero"),
        (vec!["lab", "--duration", "0", missing], "longer than zero"),
        (vec!["sim", "--duration", "0", missing], "longer than zero"),
        (
            vec!["bench", "pacing", "--duration", "0"],
            "longer than zero",
        ),
        (
            vec!["bench", "monitor", "--duration", "0"],
            "longer than zero",
        ),
        (vec!["bench", "lab", "--duration", "0"], "longer than zero"),
        (
            vec!["bench", "flood", "--duration", "0"],
            "longer than zero",
        ),
        (
            vec![
                "bench",
                "monitor",
                "--latency",
                "--read-sessions-every",
                "0",
            ],
            "longer than zero",
        ),
        (vec!["sim", missing], "No such file"),
        (vec!["sweep", missing, "--rates", "10"], "No such file"),
        (vec!["lab", missing], "No such file"),
        (vec!["sim", "/tmp"], "not a file"),
    ];
    for (args, want) in cases {
        let err = refused(&args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A config file of any size used to be read whole, and a bad value in it echoed whole on the
/// error line (200 MB in the issue).
#[test]
fn config_files_are_capped_and_bad_values_are_not_echoed_whole() {
    let dir = acp_testkit::Scratch::new("acp-hardening");
    // Under the cap, a 900 kB bad value: one short line naming the key and the value's size.
    let value = "x".repeat(900_000);
    let bad = dir.join("bad-value.toml");
    std::fs::write(&bad, format!("listen = \"{value}\"\n")).unwrap();
    let err = refused(&["monitor", "--config", bad.to_str().unwrap()]);
    assert!(err.len() < 1000, "{} bytes", err.len());
    assert!(err.contains("key 'listen'"), "{err}");
    assert!(err.contains("bytes)"), "{err}");
    // Over the cap: refused before it is parsed, naming the cap.
    let huge = dir.join("huge.toml");
    let mut text = String::from("# padding\n").repeat(120_000);
    text += "listen = \"127.0.0.1:0\"\n";
    std::fs::write(&huge, text).unwrap();
    let err = refused(&["monitor", "--config", huge.to_str().unwrap()]);
    assert!(err.contains("larger than 1024 KiB"), "{err}");
}
