//! What the tests of the `acp` binary share: running it, and the datagrams they send it.
#![allow(dead_code)] // Each test file uses some of these.

use std::process::{Child, Command, ExitStatus};
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
