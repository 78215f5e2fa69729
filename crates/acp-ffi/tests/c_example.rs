//! `examples/c/push_source.c`, compiled with the system's C compiler against this crate's static
//! library and the checked-in header, reports readings to an in-process monitor server on
//! loopback: the monitor must receive fresh readings from it, in order.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_core::MonitorConfig;
use acp_runtime::server::{MonitorServer, ServerConfig};

/// The directory cargo put this crate's libraries in when it built them for this test: the
/// test's own (`target/<profile>/deps`).
fn artifact_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().to_path_buf()
}

fn compile_example() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = artifact_dir().join("libacp_ffi.a");
    assert!(lib.exists(), "{} was not built", lib.display());
    let out = artifact_dir().join("push_source_example");
    let compiled = Command::new("cc")
        .arg("-std=c11")
        .args(["-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("../../examples/c/push_source.c"))
        .arg(&lib)
        // What Rust's standard library needs from the C library on Linux.
        .args([
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ])
        .arg("-o")
        .arg(&out)
        .output()
        .expect("a C compiler `cc` (scripts/test-deps.sh installs gcc)");
    assert!(
        compiled.status.success(),
        "compiling push_source.c failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    out
}

#[test]
fn the_c_example_reports_fresh_readings_to_a_monitor() {
    let program = compile_example();
    let readings = Arc::new(Mutex::new(Vec::new()));
    let sink = readings.clone();
    let config = MonitorConfig {
        clocks_synchronised: true,
        ..MonitorConfig::default()
    };
    let server = MonitorServer::start(
        ServerConfig::new("127.0.0.1:0".parse().unwrap(), config),
        Some(Box::new(move |d| {
            sink.lock()
                .unwrap()
                .push(String::from_utf8_lossy(d.payload).into_owned());
        })),
    )
    .unwrap();
    let output = Command::new(&program)
        .arg(server.local_addr().to_string())
        .arg("2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::thread::sleep(Duration::from_millis(50));
    let snapshot = server.stop().unwrap();
    let readings = readings.lock().unwrap();

    // 2 s of readings every 10 ms: about 200 taken; after ten probes (one per loopback round trip)
    // ACP+ sends most of them, capped at the sensing rate.
    let numbers: Vec<u32> = readings
        .iter()
        .map(|r| {
            let rest = r.strip_prefix("reading ").expect(r);
            rest.split(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(
        numbers.len() >= 50,
        "{} readings: {numbers:?}",
        numbers.len()
    );
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(*numbers.last().unwrap() >= 150, "{numbers:?}");

    // The program's own view agrees with the monitor's.
    assert_eq!(snapshot.sessions.len(), 1);
    let session = &snapshot.sessions[0];
    let expected = format!("session={:016x} phase=1 ", session.key.session);
    assert!(stdout.starts_with(&expected), "{stdout}");
    assert_eq!(session.stats.delivered, numbers.len() as u64);
    // Readings are at most 10 ms old when sent; on loopback they arrive well within 50 ms.
    let age = session.avg_age.unwrap();
    assert!(age < 0.05, "average age {age} s");
}
