//! Network namespaces held only by file descriptors.
//!
//! A [`Namespace`] is created by a short-lived thread that calls `unshare(CLONE_NEWNET)` (a
//! network namespace is a per-thread attribute) and opens `/proc/thread-self/ns/net`; that
//! descriptor is then the only reference besides the sockets and devices living in it. Nothing
//! is mounted under `/run/netns` (unlike `ip netns add`), so when the process ends, however it
//! ends (`SIGKILL` included), the kernel frees the namespace and everything in it.
//!
//! [`Namespace::enter`] runs a closure on a thread moved into the namespace: sockets it opens
//! and devices it creates belong to the namespace for their whole life, whichever thread uses
//! them later.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

/// A network namespace, alive while this value (or anything created in it) is.
#[derive(Debug)]
pub struct Namespace {
    fd: OwnedFd,
}

fn thread_result<T>(r: std::thread::Result<io::Result<T>>) -> io::Result<T> {
    r.map_err(|_| io::Error::other("a namespace thread panicked"))?
}

impl Namespace {
    /// A new network namespace holding only `lo` (down).
    pub fn new() -> io::Result<Self> {
        thread_result(
            std::thread::spawn(|| {
                // SAFETY: unshare takes flags only; CLONE_NEWNET moves the calling thread alone.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                let fd = File::open("/proc/thread-self/ns/net")?.into();
                Ok(Namespace { fd })
            })
            .join(),
        )
    }

    /// Runs `f` on a thread inside the namespace and returns its result.
    pub fn enter<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        let fd = self.fd.as_raw_fd();
        std::thread::scope(|s| {
            thread_result(
                s.spawn(move || {
                    // SAFETY: `fd` is an open namespace descriptor borrowed from `self`, which
                    // outlives this scoped thread; setns moves only the calling thread.
                    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    f()
                })
                .join(),
            )
        })
    }

    /// The namespace's inode number: `net:[INODE]` in `/proc/PID/ns/net` and `/proc/PID/fd/*`.
    pub fn inode(&self) -> io::Result<u64> {
        Ok(File::from(self.fd.try_clone()?).metadata()?.ino())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_is_distinct_and_entered_threads_see_it() {
        if crate::privilege::check().is_err() {
            eprintln!("skipped: creating a network namespace needs root");
            return;
        }
        let ns = Namespace::new().unwrap();
        let own = std::fs::metadata("/proc/thread-self/ns/net").unwrap().ino();
        assert_ne!(ns.inode().unwrap(), own);
        let inside = ns
            .enter(|| Ok(std::fs::metadata("/proc/thread-self/ns/net")?.ino()))
            .unwrap();
        assert_eq!(inside, ns.inode().unwrap());
        assert_eq!(
            std::fs::metadata("/proc/thread-self/ns/net").unwrap().ino(),
            own,
            "the caller stays where it was"
        );
    }
}
