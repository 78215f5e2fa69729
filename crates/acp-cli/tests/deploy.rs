//! The deployment kit of `deploy/` as an operator uses it: what the systemd unit grants the
//! monitor, what the container image exposes and leaves out of its build, `--check-config`'s
//! output used as a config file, and (as root, with podman) the image built and run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::acp;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap()
}

/// The values of the lines `PREFIX…` of `text`, trimmed.
fn values<'t>(text: &'t str, prefix: &str) -> Vec<&'t str> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(str::trim)
        .collect()
}

/// The default of a monitor setting, from `--check-config`.
fn monitor_default(key: &str) -> String {
    let out = acp()
        .args(["monitor", "--listen", "127.0.0.1:0", "--check-config"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("# {key} = ")))
        .unwrap_or_else(|| panic!("no default {key} in {text}"));
    line.split("  #")
        .next()
        .unwrap()
        .trim_matches('"')
        .to_string()
}

#[test]
fn the_unit_gives_the_monitor_a_runtime_directory_and_descriptors_for_its_sessions() {
    let unit = read("deploy/acp-monitor.service");
    assert_eq!(values(&unit, "RuntimeDirectory="), ["acp"]);
    // The file system is read-only for the service: the README's socket lives in that directory.
    assert_eq!(values(&unit, "ProtectSystem="), ["strict"]);
    let readme = read("README.md");
    assert!(readme.contains("unix:/run/acp/acp.sock"), "README");
    assert!(!readme.contains("unix:/run/acp.sock"), "README");
    // A descriptor per TCP source up to the monitor's default --max-tcp-connections, plus the Unix
    // clients (64), the metrics connections (64) and its own (64).
    let limit: u64 = values(&unit, "LimitNOFILE=")[0].parse().unwrap();
    let tcp: u64 = monitor_default("max-tcp-connections").parse().unwrap();
    assert!(limit >= tcp + 3 * 64, "LimitNOFILE={limit}");
    assert_eq!(
        values(&unit, "LimitNOFILE=").len(),
        1,
        "one LimitNOFILE line"
    );
}

#[test]
fn the_image_exposes_udp_and_tcp_and_its_build_context_has_no_target_directory() {
    let container = read("deploy/Containerfile");
    let exposed: Vec<&str> = values(&container, "EXPOSE ")
        .iter()
        .flat_map(|v| v.split_whitespace())
        .collect();
    let listen = read("deploy/monitor.toml");
    let port = values(&listen, "listen = ")[0]
        .trim_matches('"')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(exposed, [format!("{port}/udp"), format!("{port}/tcp")]);
    let ignore = read(".dockerignore");
    let patterns: Vec<&str> = ignore
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    // `**/target` leaves out the workspace's, fuzz/'s and every crate's own (crates/acp-py is
    // built on its own by maturin) build directories.
    assert!(patterns.contains(&"**/target"), "{patterns:?}");
    assert!(patterns.contains(&".git"), "{patterns:?}");
}

#[test]
fn check_configs_output_read_back_is_a_valid_config_of_the_same_settings() {
    let dir = acp_testkit::Scratch::new("acp-deploy-check");
    for (command, example) in [
        ("monitor", "deploy/monitor.toml"),
        ("source", "deploy/source.toml"),
    ] {
        let example = repo(example);
        let check = |config: &Path| -> Output {
            acp()
                .args([command, "--config"])
                .arg(config)
                .arg("--check-config")
                .output()
                .unwrap()
        };
        let first = check(&example);
        assert!(first.status.success(), "{command}: {first:?}");
        let written = dir.join(format!("{command}.toml"));
        std::fs::write(&written, &first.stdout).unwrap();
        let again = check(&written);
        assert!(
            again.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
        // The same settings and defaults (their origins differ: the file's lines).
        let settings = |out: &Output| -> Vec<String> {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .skip(1)
                .map(|l| l.rsplit_once("  #").map_or(l, |(s, _)| s).to_string())
                .collect()
        };
        assert_eq!(settings(&first), settings(&again), "{command}");
    }
}

/// Why the image cannot be built and run here, or `None` when it can.
fn container_unavailable() -> Option<String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return Some("building an image needs root here (rootless podman needs subuids)".into());
    }
    let podman = |args: &[&str]| Command::new("podman").args(args).output();
    match podman(&["--version"]) {
        Err(_) => return Some("podman is not installed (apt-get install podman)".into()),
        Ok(out) if !out.status.success() => return Some("podman --version failed".into()),
        Ok(_) => {}
    }
    // The host's own root file system as the container's: whether containers start at all.
    let probe = podman(&[
        "run",
        "--rm",
        "--network",
        "none",
        "--rootfs",
        "/",
        "/bin/true",
    ])
    .unwrap();
    if !probe.status.success() {
        let err = String::from_utf8_lossy(&probe.stderr);
        return Some(format!(
            "podman cannot start a container here: {}",
            err.trim()
        ));
    }
    let container = read("deploy/Containerfile");
    for image in values(&container, "FROM ") {
        let image = image.split_whitespace().next().unwrap();
        let have = podman(&["image", "exists", image]).unwrap();
        let pulled =
            have.status.success() || podman(&["pull", "-q", image]).unwrap().status.success();
        if !pulled {
            return Some(format!(
                "the base image {image} is neither present nor pullable"
            ));
        }
    }
    None
}

#[test]
fn the_image_builds_and_runs_the_monitor_as_configured() {
    if let Some(reason) = container_unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let tag = format!("localhost/acp-test-{}", std::process::id());
    let build = Command::new("podman")
        .args(["build", "-f", "deploy/Containerfile", "-t", &tag, "."])
        .current_dir(repo(""))
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    // The image's default command with --check-config: the installed config is accepted.
    let run = Command::new("podman")
        .args(["run", "--rm", "--network", "none", &tag])
        .args([
            "monitor",
            "--config",
            "/etc/acp/monitor.toml",
            "--check-config",
        ])
        .output()
        .unwrap();
    let _ = Command::new("podman").args(["rmi", "-f", &tag]).output();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.contains("listen = \"0.0.0.0:7200\""), "{text}");
}
