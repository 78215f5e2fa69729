//! Pre-shared keys on the command line: `acp keygen` writes a key line, `--psk-file` reads a
//! key file (`docs/PROTOCOL.md`, "Authentication").

use std::os::unix::fs::PermissionsExt;

use acp_core::seal::{Keyring, Psk, Secret};

use crate::KeygenArgs;

/// `--psk-file PATH`: the keyring in the file. Warns on stderr if others may read it.
pub fn parse_psk_file(path: &str) -> Result<Keyring, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let ring = Keyring::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!("warning: {path} is readable by other users; `chmod 600 {path}`");
        }
    }
    Ok(ring)
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
