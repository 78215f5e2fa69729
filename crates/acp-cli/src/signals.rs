//! SIGINT/SIGTERM handling: a signal raises a flag that the commands poll to shut down
//! gracefully and print their final results. `signal-hook` installs the handlers, which only
//! store to the flag (async-signal-safe).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};

/// Installs the handlers and returns a flag that becomes true on SIGINT or SIGTERM.
pub fn shutdown_flag() -> std::io::Result<Arc<AtomicBool>> {
    let raised = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, raised.clone())?;
    }
    Ok(raised)
}
