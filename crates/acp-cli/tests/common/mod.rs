//! What the tests of the `acp` binary share: running it, and the datagrams they send it.
#![allow(dead_code)] // Each test file uses some of these.

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

// Each test file uses some of these.
#[allow(unused_imports)]
pub use acp_testkit::{update_datagram, wait_for, Guarded, SpawnGuarded};

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

/// A child's output pipe read to its end by a thread, so that the test can look at what has come
/// so far (waiting for a line with [`wait_for`] rather than sleeping) without blocking.
pub struct Collected {
    text: Arc<Mutex<String>>,
    thread: JoinHandle<()>,
}

impl Collected {
    /// Reads `pipe` line by line until its end.
    pub fn start(pipe: impl Read + Send + 'static) -> Collected {
        let text = Arc::new(Mutex::new(String::new()));
        let sink = text.clone();
        let thread = std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Collected { text, thread }
    }

    /// What has come so far.
    pub fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Everything, once the pipe has closed (the child has exited).
    pub fn finish(self) -> String {
        self.thread.join().unwrap();
        std::mem::take(&mut *self.text.lock().unwrap())
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

/// A monitor's stderr after its listening line: the lines it wrote before that one (a publisher
/// may say "connected" first), then the rest as it comes.
pub type MonitorStderr = BufReader<std::io::Chain<std::io::Cursor<Vec<u8>>, ChildStderr>>;

/// Spawns `command` (an `acp monitor`) with stderr piped and waits for the stderr line "acp
/// monitor listening on ADDR". Returns the child (killed if the test fails), its stderr without
/// that line ([`MonitorStderr`]: lines another thread wrote before it, such as a publisher's
/// "connected" under load, are kept), and ADDR.
pub fn spawn_listening(mut command: Command) -> (Guarded, MonitorStderr, String) {
    let mut child = command.stderr(Stdio::piped()).spawn_guarded().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut before = Vec::new();
    let mut line = String::new();
    let addr = loop {
        line.clear();
        let read = err.read_line(&mut line).unwrap();
        assert!(
            read > 0,
            "the monitor ended before listening: {}",
            String::from_utf8_lossy(&before)
        );
        match line.trim().strip_prefix("acp monitor listening on ") {
            Some(addr) => break addr.to_string(),
            None => before.extend_from_slice(line.as_bytes()),
        }
    };
    // What the BufReader read past the listening line stays in its buffer: keep it too.
    before.extend_from_slice(err.buffer());
    let rest = std::io::Cursor::new(before).chain(err.into_inner());
    (child, BufReader::new(rest), addr)
}

/// Starts `acp monitor ARGS` with stdout and stderr piped: [`spawn_listening`].
pub fn spawn_monitor(args: &[&str]) -> (Guarded, MonitorStderr, String) {
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

/// The scenario file `source` with its `duration` and `warmup` lines replaced, written into
/// `dir` under the same name (shorter runs of the example files).
pub fn shortened(
    source: &std::path::Path,
    dir: &std::path::Path,
    duration: &str,
    warmup: &str,
) -> std::path::PathBuf {
    let text = std::fs::read_to_string(source).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("duration =") {
                format!("duration = \"{duration}\"\n")
            } else if l.starts_with("warmup =") {
                format!("warmup = \"{warmup}\"\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let file = dir.join(source.file_name().unwrap());
    std::fs::write(&file, text).unwrap();
    file
}
