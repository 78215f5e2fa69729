//! The process clock and precise waiting.
//!
//! [`now`] returns an `acp_core::Time`: nanoseconds of the monotonic clock, offset so that it reads
//! as Unix time at process start. Within a process it never jumps; across processes on one machine
//! readings agree to within microseconds, so a monitor and its sources on the same host may declare
//! their clocks synchronised and measure true age.
//!
//! Pacing needs send instants accurate to tens of microseconds, finer than a timer wheel or a
//! default `nanosleep` (which the kernel may extend by its 50 µs timer slack). [`wait_until`] sleeps
//! in the kernel until shortly before the deadline and spins for the rest; [`tighten_timer_slack`]
//! lowers the calling thread's timer slack to 1 ns.
//!
//! [`thread_cpu_time`] reads how much CPU a thread has used, which measures a server's cost per
//! datagram even on a machine whose other work takes turns on the same core.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use acp_core::Time;

/// How long before a deadline the kernel sleep ends and spinning begins.
pub const SPIN_MARGIN: Duration = Duration::from_micros(80);

fn origin() -> &'static (Instant, u64) {
    static ORIGIN: OnceLock<(Instant, u64)> = OnceLock::new();
    ORIGIN.get_or_init(|| {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        (Instant::now(), unix)
    })
}

/// The current time.
pub fn now() -> Time {
    to_time(Instant::now())
}

/// The `Time` of an `Instant`.
pub fn to_time(at: Instant) -> Time {
    let (start, unix) = *origin();
    let since = at.saturating_duration_since(start);
    Time::from_nanos(unix.saturating_add(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)))
}

/// The `Instant` of a `Time` (times before process start map to the start).
pub fn to_instant(t: Time) -> Instant {
    let (start, unix) = *origin();
    start + Duration::from_nanos(t.as_nanos().saturating_sub(unix))
}

/// Lowers this thread's timer slack to 1 ns so kernel sleeps end on time (Linux; elsewhere a
/// no-op).
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Blocks until `deadline`: a kernel sleep until [`SPIN_MARGIN`] before it, then a spin.
pub fn wait_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now + SPIN_MARGIN {
        std::thread::sleep(deadline - now - SPIN_MARGIN);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// CPU time (user and system) the thread of `handle` has used so far; `None` if the platform
/// cannot tell or the thread has ended.
pub fn thread_cpu_time<T>(handle: &std::thread::JoinHandle<T>) -> Option<Duration> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the pthread_t belongs to a thread that has not been joined (we hold its handle);
    // both out-pointers are valid for writes.
    unsafe {
        if libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut clock) != 0
            || libc::clock_gettime(clock, &mut ts) != 0
        {
            return None;
        }
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_instant_convert_both_ways() {
        let i = Instant::now() + Duration::from_millis(3);
        let back = to_instant(to_time(i));
        let diff = if back > i { back - i } else { i - back };
        assert!(diff < Duration::from_micros(1));
        assert!(now() > Time::from_secs(1_600_000_000), "reads as Unix time");
    }

    #[test]
    fn wait_until_never_returns_early() {
        tighten_timer_slack();
        for us in [0u64, 10, 100, 1000] {
            let deadline = Instant::now() + Duration::from_micros(us);
            wait_until(deadline);
            assert!(Instant::now() >= deadline);
        }
    }

    #[test]
    fn a_busy_thread_uses_cpu_time_and_a_sleeping_one_does_not() {
        let busy = std::thread::spawn(|| {
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(300) {
                std::hint::spin_loop();
            }
        });
        let idle = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(300)));
        std::thread::sleep(Duration::from_millis(250));
        let (b, i) = (thread_cpu_time(&busy), thread_cpu_time(&idle));
        busy.join().unwrap();
        idle.join().unwrap();
        // The busy thread ran for most of 250 ms unless the machine starved it; 20 ms is far
        // below that and far above what a sleeping thread uses.
        assert!(b.unwrap() > Duration::from_millis(20), "{b:?}");
        assert!(i.unwrap() < Duration::from_millis(20), "{i:?}");
    }
}
