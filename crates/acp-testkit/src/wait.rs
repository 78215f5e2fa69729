//! Waiting on a condition rather than for a fixed time.
//!
//! A fixed sleep guesses how long the program under test needs; on a machine whose cores are busy
//! with other processes the guess is wrong. Polling a condition up to a generous deadline costs
//! the quiet case nothing and still fails (with a message) if the condition never holds.

use std::time::{Duration, Instant};

/// Polls `done` every 20 ms until it holds; fails after `limit` with `what()`.
pub fn wait_for(limit: Duration, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
    let until = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < until, "after {limit:?}: {}", what());
        std::thread::sleep(Duration::from_millis(20));
    }
}
