//! [`Guarded`]: a child process that cannot outlive the test that spawned it.
//!
//! A test that spawns a process and then fails unwinds past the code that would have stopped it;
//! `std::process::Child` does not kill on drop, so the process would run on (a failed test once
//! left an `acp monitor` listening). A [`Guarded`] child is sent SIGKILL and reaped when the guard
//! is dropped, whether the test ended normally or by a panic. A child the test already waited for
//! is left alone, so a test that stops its child itself (SIGTERM and a check of its summary, say)
//! is unchanged.
//!
//! The guard kills the child it holds, not the child's own children: the processes the tests
//! spawn (`acp`, mosquitto, a compiled example) do not fork helpers that outlive them.

use std::io;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, ExitStatus, Output};

/// A spawned process, killed and reaped when dropped. Dereferences to the [`Child`], so its pipes,
/// `id`, `try_wait`, `wait` and `kill` are used as usual.
#[derive(Debug)]
pub struct Guarded {
    /// `None` once [`Guarded::wait_with_output`] has taken it.
    child: Option<Child>,
}

/// Spawning into a [`Guarded`].
pub trait SpawnGuarded {
    /// Like [`Command::spawn`], but the child is killed when the guard is dropped.
    fn spawn_guarded(&mut self) -> io::Result<Guarded>;
}

impl SpawnGuarded for Command {
    fn spawn_guarded(&mut self) -> io::Result<Guarded> {
        self.spawn().map(Guarded::new)
    }
}

impl Guarded {
    /// Takes charge of `child`.
    pub fn new(child: Child) -> Guarded {
        Guarded { child: Some(child) }
    }

    /// Waits for the child to exit and collects its remaining stdout and stderr, as
    /// [`Child::wait_with_output`] does.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        let child = self.child.take().expect("the child is taken only here");
        child.wait_with_output()
    }

    /// Kills the child now (SIGKILL) and reaps it, returning how it ended; a child that had
    /// already exited is only reaped.
    pub fn kill_and_reap(&mut self) -> io::Result<ExitStatus> {
        let child = self
            .child
            .as_mut()
            .expect("the child is taken only by value");
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        // An error here means it exited meanwhile; `wait` reaps it either way.
        let _ = child.kill();
        child.wait()
    }
}

impl Deref for Guarded {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.child
            .as_ref()
            .expect("the child is taken only by value")
    }
}

impl DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut Child {
        self.child
            .as_mut()
            .expect("the child is taken only by value")
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if self.child.is_some() {
            // Nothing to report from a drop (perhaps during a panic): the kill is best effort,
            // and a child that cannot be waited for is no longer ours.
            let _ = self.kill_and_reap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_exited_is_only_reaped() {
        let mut child = Command::new("true").spawn_guarded().unwrap();
        let status = child.wait().unwrap();
        assert!(status.success());
        assert!(child.kill_and_reap().unwrap().success());
    }

    #[test]
    fn kill_and_reap_ends_a_running_child_by_sigkill() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = Command::new("sleep").arg("600").spawn_guarded().unwrap();
        let status = child.kill_and_reap().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
