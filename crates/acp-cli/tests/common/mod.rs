//! What the tests of the `acp` binary share: running it, and the datagrams they send it.
#![allow(dead_code)] // Each test file uses some of these.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The `acp` binary under test.
pub fn acp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_acp"))
}

/// Waits for `child` at most `limit`; kills it and fails if it is still running.
pub fn wait_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `acp ARGS` and checks it fails as a bad argument does: exit 2, one line on stderr
/// starting with "error: ", nothing on stdout. Returns the line.
pub fn refused(args: &[&str]) -> String {
    let out = acp().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    err
}

/// The datagram of an UPDATE of `session` with sequence `seq` carrying `payload`.
pub fn update_datagram(session: u64, seq: u64, payload: &[u8]) -> Vec<u8> {
    let u = acp_core::wire::Update {
        flags: 0,
        session,
        seq,
        gen_ts: seq,
        acked_seq: seq - 1,
        hold_ns: 0,
        cookie: None,
        payload,
    };
    let mut buf = vec![0u8; u.encoded_len()];
    let n = u.encode(&mut buf).unwrap();
    buf.truncate(n);
    buf
}

/// A fresh key file from `acp keygen`, in the test's own directory.
pub fn keygen(dir: &std::path::Path, name: &str) -> String {
    let out = acp().arg("keygen").output().unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let (id, hex) = line.trim().split_once(' ').expect("ID HEX");
    assert_eq!(id, "1");
    assert!(
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{line}"
    );
    let path = dir.join(name);
    std::fs::write(&path, line).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    path.to_str().unwrap().to_string()
}

/// Spawns `command` (an `acp monitor`) with stderr piped and waits for its first stderr line,
/// "acp monitor listening on ADDR". Returns the child, its stderr after that line, and ADDR.
pub fn spawn_listening(mut command: Command) -> (Child, BufReader<ChildStderr>, String) {
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("acp monitor listening on ")
        .unwrap_or_else(|| panic!("not the listening line: {first}"))
        .to_string();
    (child, err, addr)
}

/// Starts `acp monitor ARGS` with stdout and stderr piped: [`spawn_listening`].
pub fn spawn_monitor(args: &[&str]) -> (Child, BufReader<ChildStderr>, String) {
    let mut command = acp();
    command.arg("monitor").args(args).stdout(Stdio::piped());
    spawn_listening(command)
}

/// Sends the monitor at `addr` UPDATEs of sessions 1 to 5, then of sessions 1 and 2 again, each
/// answered (within 10 s) before the next is sent, so that the monitor sees them in this order:
/// afterwards 3, 4 and 5 are the sessions silent the longest, and 7 updates were delivered.
pub fn hear_from_sessions_1_to_5_then_1_and_2(addr: &str) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 256];
    let mut send = |session: u64, seq: u64| {
        socket.send(&update_datagram(session, seq, b"x")).unwrap();
        // Answered before the next one is sent: the sessions are seen in this order.
        socket.recv(&mut buf).unwrap();
    };
    for session in 1..=5 {
        send(session, 1);
    }
    send(1, 2);
    send(2, 2);
}

/// Runs `command` to its end, checks it succeeded (failing with its stderr if not), and returns
/// its stdout parsed as one JSON value.
pub fn json_output(command: &mut Command) -> serde_json::Value {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
