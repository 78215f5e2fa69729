//! SIGINT/SIGTERM handling: the first signal raises a flag the commands poll to shut down
//! gracefully and print their final summary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

static RAISED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    RAISED.store(true, Ordering::SeqCst);
}

/// Installs the handlers and returns a flag that becomes true on SIGINT or SIGTERM.
pub fn shutdown_flag() -> Arc<AtomicBool> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only performs an atomic store.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
    let flag = Arc::new(AtomicBool::new(false));
    let mirror = flag.clone();
    std::thread::spawn(move || loop {
        if RAISED.load(Ordering::SeqCst) {
            mirror.store(true, Ordering::SeqCst);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    });
    flag
}
