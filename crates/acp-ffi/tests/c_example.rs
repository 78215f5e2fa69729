//! The C library as a packager installs it and a C programmer uses it: `make install` (the
//! Makefile of this crate) into a temporary prefix puts the header, the static and the shared
//! library (with its SONAME and links) and `acp.pc` there; `examples/c/push_source.c`, compiled
//! with the system's C compiler and the flags `pkg-config` gives for the installed library (shared
//! and static), reports readings to an in-process monitor server on loopback: the monitor must
//! receive fresh readings from it, in order.
//!
//! Needs `make`, `cc`, `pkg-config` and `objdump` (`scripts/test-deps.sh` installs them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use acp_core::MonitorConfig;
use acp_runtime::server::{MonitorServer, ServerConfig};

/// Runs a tool the test needs, failing with the package to install when it is missing.
fn tool(program: &str, package: &str, configure: impl FnOnce(&mut Command)) -> Output {
    let mut command = Command::new(program);
    configure(&mut command);
    let out = command.output().unwrap_or_else(|e| {
        panic!("{program}: {e}; install it with `apt-get install {package}` (or run scripts/test-deps.sh as root)")
    });
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The prefix `make install` installed into, once for all tests of this file.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        // Under the target directory (Cargo's scratch space for integration tests), not /tmp:
        // nothing is left behind there, and a rerun starts from a clean prefix.
        let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-ffi-prefix");
        let _ = std::fs::remove_dir_all(&prefix);
        let crate_dir = env!("CARGO_MANIFEST_DIR");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // The libraries this test run's own build made (the test profile, every workspace
        // package with its tests: the same features), so `make`'s cargo step finds them fresh
        // instead of building the crate and its dependencies once more in another profile.
        // Without the variables Cargo sets for this test's process: build scripts watch some of
        // them (ring's reruns when CARGO_MANIFEST_DIR changes), and a value inherited from here
        // would rebuild ring and all that depends on it.
        tool("make", "make", |c| {
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy();
                if name.starts_with("CARGO_PKG_")
                    || name.starts_with("CARGO_MANIFEST_")
                    || ["OUT_DIR", "CARGO_CRATE_NAME", "CARGO_PRIMARY_PACKAGE"].contains(&&*name)
                {
                    c.env_remove(&*name);
                }
            }
            c.args(["-C", crate_dir, "install", "PROFILE=test"])
                .arg("CARGO_SELECT=--workspace --lib --tests")
                .arg(format!("PREFIX={}", prefix.display()))
                .arg(format!("CARGO={cargo}"));
        });
        prefix
    })
}

/// What `pkg-config ARGS acp` says of the installed library.
fn pkg_config(args: &[&str]) -> Vec<String> {
    let out = tool("pkg-config", "pkg-config", |c| {
        c.env("PKG_CONFIG_PATH", prefix().join("lib/pkgconfig"))
            .args(args)
            .arg("acp");
    });
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The SONAME (or NEEDED libraries) objdump finds in `file`.
fn dynamic(file: &Path, entry: &str) -> Vec<String> {
    let out = tool("objdump", "binutils", |c| {
        c.arg("-p").arg(file);
    });
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix(entry))
        .map(|v| v.trim().to_string())
        .collect()
}

/// The SONAME the library must have: `libacp.so.0.<minor>` while the major version is 0.
fn expected_soname() -> String {
    let (major, minor) = (
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
    );
    match major {
        "0" => format!("libacp.so.0.{minor}"),
        _ => format!("libacp.so.{major}"),
    }
}

#[test]
fn make_install_puts_the_header_both_libraries_their_links_and_acp_pc_in_the_prefix() {
    let lib = prefix().join("lib");
    let version = env!("CARGO_PKG_VERSION");
    assert!(prefix().join("include/acp.h").is_file());
    assert!(lib.join("libacp.a").is_file());
    let real = lib.join(format!("libacp.so.{version}"));
    assert_eq!(dynamic(&real, "SONAME"), [expected_soname()]);
    // libacp.so -> SONAME -> the versioned file.
    let link = std::fs::read_link(lib.join(expected_soname())).unwrap();
    assert_eq!(link, Path::new(&format!("libacp.so.{version}")));
    assert_eq!(
        std::fs::read_link(lib.join("libacp.so")).unwrap(),
        Path::new(&expected_soname())
    );
    assert_eq!(pkg_config(&["--modversion"]), [version]);
    assert_eq!(
        pkg_config(&["--cflags"]),
        [format!("-I{}", prefix().join("include").display())]
    );
}

/// `examples/c/push_source.c` compiled and linked with `pkg-config`'s flags for the installed
/// library: shared, or (`--static`) with its archive.
fn compile_example(link_static: bool) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = prefix().join(if link_static {
        "push_source_static"
    } else {
        "push_source"
    });
    let libs = if link_static {
        // The archive rather than the shared library of the same name, then what it needs
        // from the C library.
        let mut libs = pkg_config(&["--static", "--libs-only-L"]);
        libs.extend(["-Wl,-Bstatic", "-lacp", "-Wl,-Bdynamic"].map(String::from));
        libs.extend(
            pkg_config(&["--static", "--libs-only-l"])
                .into_iter()
                .filter(|l| l != "-lacp"),
        );
        libs
    } else {
        pkg_config(&["--libs"])
    };
    tool("cc", "gcc", |c| {
        c.arg("-std=c11")
            .args(["-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror"])
            .args(pkg_config(&["--cflags"]))
            .arg(root.join("../../examples/c/push_source.c"))
            .args(&libs)
            .arg("-o")
            .arg(&out);
    });
    let needed = dynamic(&out, "NEEDED");
    assert_eq!(
        needed.contains(&expected_soname()),
        !link_static,
        "{needed:?}"
    );
    out
}

#[test]
fn the_example_built_against_the_installed_shared_library_reports_fresh_readings() {
    let program = compile_example(false);
    reports_fresh_readings(&program);
}

#[test]
fn the_example_built_against_the_installed_static_library_reports_fresh_readings() {
    let program = compile_example(true);
    reports_fresh_readings(&program);
}

/// Runs the example `program` for 2 s against a monitor and checks what the monitor received.
fn reports_fresh_readings(program: &Path) {
    let readings = Arc::new(Mutex::new(Vec::new()));
    let sink = readings.clone();
    let config = MonitorConfig {
        clocks_synchronised: true,
        ..MonitorConfig::default()
    };
    let server = MonitorServer::start(
        ServerConfig::new("127.0.0.1:0".parse().unwrap(), config),
        Some(Box::new(move |d, _| {
            sink.lock()
                .unwrap()
                .push(String::from_utf8_lossy(d.payload).into_owned());
        })),
    )
    .unwrap();
    let output = Command::new(program)
        .env("LD_LIBRARY_PATH", prefix().join("lib"))
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
