//! Shared by the wall-clock integration tests of this crate.

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Held by a test for its whole run, so the tests of one binary that measure time run one at a
/// time: on a 2-core machine concurrent tests would steal each other's CPU and turn scheduling
/// delays into the delays they measure. A test that panicked does not block the others.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Puts the calling test's thread, and the threads it starts from now on (relays, sources, the
/// monitor), at `SCHED_FIFO` until the guard is dropped, ahead of whatever else keeps the machine
/// busy (other test binaries, builds): for the tests that compare controllers by the ages they
/// reach in real time, which CPU starvation otherwise decides (see `acp_runtime::realtime`).
/// Without the privilege the test runs at normal priority and says so.
#[allow(dead_code)] // Only the test binaries that measure real-time service use it.
pub fn ahead_of_other_work() -> Option<acp_runtime::realtime::RealTime> {
    acp_runtime::realtime::RealTime::raise()
        .inspect_err(|e| eprintln!("at normal priority ({e}): a busy machine may skew the ages"))
        .ok()
}
