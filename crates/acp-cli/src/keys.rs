//! Pre-shared keys on the command line: `acp keygen` writes a key line, `--psk-file` reads a
//! key file (`docs/PROTOCOL.md`, "Authentication").

use std::os::unix::fs::PermissionsExt;
use std::sync::Mutex;

use acp_core::seal::{Keyring, Psk, Secret};

use crate::KeygenArgs;

/// Key files that others may read, found while the arguments were parsed (before logging is set
/// up); [`log_exposed_files`] warns about them.
static EXPOSED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `--psk-file PATH`: the keyring in the file. Notes the file if others may read it.
pub fn parse_psk_file(path: &str) -> Result<Keyring, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let ring = Keyring::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            if let Ok(mut exposed) = EXPOSED.lock() {
                exposed.push(path.to_string());
            }
        }
    }
    Ok(ring)
}

/// Logs a warning for each key file others may read.
pub fn log_exposed_files() {
    let exposed = EXPOSED.lock().map(|mut e| std::mem::take(&mut *e));
    for path in exposed.unwrap_or_default() {
        tracing::warn!("{path} is readable by other users; `chmod 600 {path}`");
    }
}

/// `acp keygen`: prints a fresh key line for a key file.
pub fn run(a: KeygenArgs) -> anyhow::Result<()> {
    let psk = Psk {
        id: a.id,
        key: Secret::random(),
    };
    crate::output::outln!("{}", Keyring::line(&psk))?;
    Ok(())
}
