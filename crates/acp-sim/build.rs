//! Sets `ACP_SIM_SOURCE_HASH`: a digest of the sources a simulation run depends on (this crate's,
//! `acp-core`'s and `acp-netmodel`'s `src/` trees and manifests), the part of
//! [`acp_sim::runs::VERSION`] that tells two builds apart whenever their runs could differ, so
//! a result store never serves one build's results to another.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Every file under `dir`, sorted.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let crates = here.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut hash = Sha256::new();
    for name in ["acp-sim", "acp-core", "acp-netmodel"] {
        let root = crates.join(name);
        let mut all = vec![root.join("Cargo.toml")];
        files(&root.join("src"), &mut all);
        all.sort();
        println!("cargo:rerun-if-changed={}", root.join("src").display());
        println!(
            "cargo:rerun-if-changed={}",
            root.join("Cargo.toml").display()
        );
        for path in all {
            let rel = path.strip_prefix(&crates).unwrap_or(&path);
            hash.update(rel.to_string_lossy().as_bytes());
            hash.update([0]);
            hash.update(fs::read(&path).unwrap_or_default());
            hash.update([0]);
        }
    }
    let digest: String = hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=ACP_SIM_SOURCE_HASH={digest}");
}
