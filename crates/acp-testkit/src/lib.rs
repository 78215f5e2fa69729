//! What the workspace's test suites share, so that each helper exists once.
//!
//! - [`child`]: [`Guarded`], a spawned process that is killed (SIGKILL) and reaped when its owner
//!   goes out of scope, in particular when a test fails and unwinds. Every test that spawns a
//!   process (`acp monitor`, `acp source`, a broker, …) holds it through one.
//! - [`scratch`]: [`Scratch`], a test's own temporary directory, removed when its owner goes out of
//!   scope (a failing test's too).
//! - [`sender`]: encoded UPDATE datagrams and [`Sender`], a hand-driven ACP source socket.
//! - [`wait`]: waiting for a condition with a generous deadline instead of sleeping a fixed time,
//!   which is what keeps tests passing on a machine whose cores are busy with other work.
//!
//! Not a public API: the crate is not published and is a dev-dependency only.

pub mod child;
pub mod scratch;
pub mod sender;
pub mod wait;

pub use child::{Guarded, SpawnGuarded};
pub use scratch::Scratch;
pub use sender::{update, update_datagram, Sender};
pub use wait::wait_for;
