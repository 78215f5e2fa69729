//! A guarded child does not survive its test's failure, seen from outside: after the test's
//! thread has panicked, its pid names no process. An unguarded child spawned beside it is the
//! control: it is still running, which is what the guard prevents (and shows the check can fail).

use std::process::{Child, Command};
use std::sync::mpsc;

use acp_testkit::SpawnGuarded;

/// Whether a process with this pid exists (a zombie counts: it has not been reaped).
fn exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the pid exists and may be signalled.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[test]
fn a_failing_test_kills_and_reaps_its_guarded_child() {
    let (tx, rx) = mpsc::channel::<(u32, Child)>();
    // The "test": spawns a long-running child under a guard, and one without, then fails.
    let failed = std::thread::spawn(move || {
        let guarded = Command::new("sleep").arg("600").spawn_guarded().unwrap();
        let unguarded = Command::new("sleep").arg("600").spawn().unwrap();
        assert!(exists(guarded.id()));
        tx.send((guarded.id(), unguarded)).unwrap();
        panic!("the test fails with its child running");
    })
    .join();
    assert!(failed.is_err(), "the thread panicked");
    let (guarded_pid, mut unguarded) = rx.recv().unwrap();
    assert!(
        !exists(guarded_pid),
        "the guarded child {guarded_pid} outlived its test"
    );
    // The control: without a guard the child runs on after the panic.
    assert!(
        exists(unguarded.id()),
        "the unguarded child is still running"
    );
    unguarded.kill().unwrap();
    unguarded.wait().unwrap();
}

#[test]
fn a_passing_test_kills_its_guarded_child_too() {
    let pid = {
        let child = Command::new("sleep").arg("600").spawn_guarded().unwrap();
        child.id()
    };
    assert!(!exists(pid), "the guarded child {pid} outlived its scope");
}
