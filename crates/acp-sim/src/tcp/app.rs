//! The applications at the two ends of a TCP connection.
//!
//! - [`Application::Bulk`]: the sender's application keeps the send buffer full (a file
//!   transfer); throughput is what matters.
//! - [`Application::Updates`]: status updates of `payload` bytes each, written into the byte
//!   stream as records (the length prefix and the generation timestamp count within `payload`).
//!   The receiving application reads the stream in order and has an update when its record's
//!   last byte arrives; the update's age counts from its generation time, which is when it was
//!   written. Updates are written either *at will*, a fresh one whenever the socket is writable
//!   as `poll()` reports it on Linux — the send buffer can take it and, with `notsent_lowat`
//!   (TCP_NOTSENT_LOWAT), fewer than half that many bytes are written and not yet sent
//!   (`tcp_poll`'s `notsent_bytes << 1 < lowat`; a write itself is taken up to the whole limit,
//!   but an application waiting in `poll()` is not woken before) — or at a fixed rate, one
//!   every 1/λ (an update that finds the send buffer full is skipped: a non-blocking write that
//!   fails). With `notsent_lowat` at twice the update's size, an update is written only once the
//!   one before has been sent: every update is its own segment, as in the lab.

/// How update records are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UpdateMode {
    /// A fresh update whenever the socket can take one.
    AtWill {
        /// TCP_NOTSENT_LOWAT: write only while fewer than half this many bytes are written and
        /// not yet sent (when `poll()` reports the socket writable).
        notsent_lowat: Option<u64>,
    },
    /// One update every 1/rate seconds.
    Rate(f64),
}

/// What the application at the sending end does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Application {
    /// Always has data to send.
    Bulk,
    /// Writes status updates.
    Updates {
        /// Bytes per update record.
        payload: u32,
        /// When it writes them.
        mode: UpdateMode,
    },
}

impl Application {
    /// Checks the parameters, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Application::Bulk => Ok(()),
            Application::Updates { payload: 0, .. } => {
                Err("payload must be at least 1 byte".into())
            }
            Application::Updates {
                mode: UpdateMode::Rate(r),
                ..
            } if !(r.is_finite() && r > 0.0) => Err("rate (updates/s) must be positive".into()),
            Application::Updates {
                mode:
                    UpdateMode::AtWill {
                        notsent_lowat: Some(0),
                    },
                ..
            } => Err("notsent_lowat must be at least 1 byte".into()),
            Application::Updates { .. } => Ok(()),
        }
    }
}
