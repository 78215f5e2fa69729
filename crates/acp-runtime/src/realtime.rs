//! Real-time scheduling for a run over real sockets: the threads a run starts (relays or the
//! lab's emulator, sources, monitors) inherit the policy of the thread that starts them, so
//! raising that thread to `SCHED_FIFO` before the run puts the whole run ahead of other work on
//! the machine. On a machine busy with builds, delays of a few milliseconds in releasing packets
//! and in the kernel's ACK processing otherwise skew what the run measures: bulk BBR's mean RTT
//! in the lab over 10 Mbit/s, 20 ms measured 92–95 ms at normal priority and 48 ms under
//! `SCHED_FIFO` with the load average at 6.5 (docs/LAB.md); an experiment's ACP+ source over a
//! relay measured an age of 107–132 ms against Lazy's 61–64 ms at normal priority with the load
//! average at 18, and 23 ms against 34 ms under `SCHED_FIFO`. The kernel's real-time throttling
//! (`sched_rt_runtime_us`) still leaves other processes their share. The run's threads share one
//! priority, so none preempts another; they spin at most a fraction of a millisecond before a
//! deadline and otherwise sleep, which lets the others run.

use std::io;

/// The `SCHED_FIFO` priority of a run: the lowest tenth of the range, above every normal
/// thread and below the kernel's own real-time threads.
const PRIORITY: libc::c_int = 10;

/// The calling thread at `SCHED_FIFO` until dropped, when it returns to the normal policy.
#[derive(Debug)]
#[must_use = "the priority falls back when the guard is dropped"]
pub struct RealTime(());

fn set(policy: libc::c_int, priority: libc::c_int) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `param` outlives the call.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl RealTime {
    /// Raises the calling thread (and the threads it starts from now on); fails if the kernel
    /// refuses (no `CAP_SYS_NICE`, or no real-time budget in the process's cgroup).
    pub fn raise() -> io::Result<Self> {
        set(libc::SCHED_FIFO, PRIORITY).map(|()| RealTime(()))
    }
}

impl Drop for RealTime {
    fn drop(&mut self) {
        // Returning to the normal policy is always permitted.
        let _ = set(libc::SCHED_OTHER, 0);
    }
}
