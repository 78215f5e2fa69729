//! The applications at the two ends of a TCP connection.
//!
//! - [`Application::Bulk`]: the sender's application keeps the send buffer full (a file
//!   transfer); throughput is what matters.
//! - [`Application::Updates`]: status updates of `payload` bytes each, written into the byte
//!   stream as records (the length prefix and the generation timestamp count within `payload`).
//!   The receiving application reads the stream in order and has an update when its record's
//!   last byte arrives; the update's age counts from its generation time, which is when it was
//!   written. Updates are written either *at will*, a fresh one whenever the send buffer can
//!   take it (and, with `notsent_lowat`, only while fewer than that many bytes are written and
//!   not yet sent, as with Linux's TCP_NOTSENT_LOWAT), or at a fixed rate, one every 1/λ (an
//!   update that finds the send buffer full is skipped: a non-blocking write that fails).

/// How update records are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UpdateMode {
    /// A fresh update whenever the socket can take one.
    AtWill {
        /// Write only while fewer than this many bytes are written and not yet sent.
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
