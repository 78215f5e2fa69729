//! The one loop that drives a sans-IO endpoint when its timer fires.
//!
//! The call order is written down here once: take every datagram the endpoint has due
//! (`poll_transmit` until it returns nothing), hand each to `send`, run its timers
//! (`handle_timeout`), and ask when it next wants to be woken (`poll_timeout`). The simulator
//! and the runtime's source driver both call [`on_timer`]; a future TCP model implements
//! [`Endpoint`] and is driven the same way.

use acp_core::source::Transmit;
use acp_core::{Source, Time};

/// A sans-IO endpoint with a timer.
pub trait Endpoint {
    /// Writes the next datagram due at `now` into `buf` (cleared first), if any.
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit>;
    /// Runs the timers due at `now`.
    fn handle_timeout(&mut self, now: Time);
    /// When the endpoint next needs [`on_timer`].
    fn poll_timeout(&self) -> Option<Time>;
}

impl Endpoint for Source {
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit> {
        Source::poll_transmit(self, now, buf)
    }
    fn handle_timeout(&mut self, now: Time) {
        Source::handle_timeout(self, now)
    }
    fn poll_timeout(&self) -> Option<Time> {
        Source::poll_timeout(self)
    }
}

/// Hands every datagram `endpoint` has due at `now` to `send`, runs its timers, and returns when
/// to call again (`None`: only a received datagram can wake it). The first error of `send` stops
/// the loop and is returned; the endpoint's timers have not run then.
pub fn on_timer<E: Endpoint + ?Sized, X>(
    endpoint: &mut E,
    now: Time,
    buf: &mut Vec<u8>,
    mut send: impl FnMut(&[u8], Transmit) -> Result<(), X>,
) -> Result<Option<Time>, X> {
    while let Some(tx) = endpoint.poll_transmit(now, buf) {
        send(&buf[..tx.len], tx)?;
    }
    endpoint.handle_timeout(now);
    Ok(endpoint.poll_timeout())
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_core::{AppMode, Fixed, SourceConfig};
    use std::convert::Infallible;

    #[test]
    fn sends_what_is_due_and_returns_the_next_deadline() {
        let mode = AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| out.push(7)));
        let mut src = Source::new(
            SourceConfig::default(),
            Box::new(Fixed::new(100.0)),
            mode,
            1,
            Time::ZERO,
        );
        let mut buf = Vec::new();
        let mut sent = Vec::new();
        let next = on_timer(&mut src, Time::ZERO, &mut buf, |d, tx| {
            sent.push((d.len(), tx.probe));
            Ok::<(), Infallible>(())
        });
        // The first probe goes at once; the source then waits for its ACK or timeout.
        assert_eq!(sent.len(), 1);
        assert!(sent[0].1);
        let next = next.unwrap_or(None).expect("a probe timeout is pending");
        assert!(next > Time::ZERO);
        // Nothing more is due before that deadline.
        let again = on_timer(&mut src, Time::from_millis(1), &mut buf, |_, _| Err("sent"));
        assert_eq!(again, Ok(Some(next)));
    }
}
