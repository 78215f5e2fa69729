//! Shared by the wall-clock integration tests of this crate.

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Held by a test for its whole run, so the tests of one binary that measure time run one at a
/// time: on a 2-core machine concurrent tests would steal each other's CPU and turn scheduling
/// delays into the delays they measure. A test that panicked does not block the others.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
