//! A latest-value mailbox between the monitor server and a slower consumer.
//!
//! The monitor server's thread must never wait for whoever consumes the updates it delivers (a
//! terminal, a pipe, a network sink): a stalled consumer would stop it from answering every
//! source. A [`Mailbox`] decouples the two. The producer [offers](Mailbox::offer) each fresh
//! update; the mailbox keeps, per session, only the freshest one not yet taken, so a consumer
//! that falls behind loses intermediate updates (counted as *superseded*) but never makes the
//! producer wait or the memory grow: the mailbox holds at most `max_entries` updates (one per
//! session) and `max_bytes` of payload, and refuses (counts as *dropped*) what does not fit.
//!
//! A consumer [takes](Mailbox::take_into) everything pending at once, as owned
//! [`OwnedUpdate`]s, and may [wait](Mailbox::wait) until something is pending. Both sides only
//! hold the mailbox's lock for O(1) work (an insertion, or swapping two buffers), so the
//! producer is never held up for long, however slow the consumer is.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use acp_runtime::mailbox::{Mailbox, MailboxConfig};
//!
//! let mailbox = Arc::new(Mailbox::new(MailboxConfig::new(10_000)));
//! // Producer: e.g. the monitor server's `on_update` callback.
//! let producer = mailbox.clone();
//! let on_update = move |d: &acp_core::monitor::Delivery<'_>| {
//!     producer.offer_delivery(d, acp_runtime::clock::now());
//! };
//! # let _ = on_update;
//! // Consumer thread.
//! let mut batch = Vec::new();
//! while !mailbox.is_closed() {
//!     if mailbox.wait(Duration::from_millis(100)) {
//!         mailbox.take_into(&mut batch);
//!         for u in &batch {
//!             println!("{:?} seq {}", u.key, u.seq);
//!         }
//!     }
//! #   mailbox.close();
//! }
//! ```

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use acp_core::monitor::{Delivery, SessionKey};
use acp_core::Time;

/// A fresh update, copied out of the receive buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedUpdate {
    /// Its session.
    pub key: SessionKey,
    /// Sequence number.
    pub seq: u64,
    /// Generation time, ns on the source's clock.
    pub gen_ts: u64,
    /// Whether it was an initialisation probe.
    pub probe: bool,
    /// Application payload.
    pub payload: Vec<u8>,
    /// When the monitor received it.
    pub received: Time,
}

impl OwnedUpdate {
    /// Copies a delivery received at `received`.
    pub fn from_delivery(d: &Delivery<'_>, received: Time) -> Self {
        OwnedUpdate {
            key: d.key,
            seq: d.seq,
            gen_ts: d.gen_ts,
            probe: d.probe,
            payload: d.payload.to_vec(),
            received,
        }
    }
}

/// Bounds of a [`Mailbox`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxConfig {
    /// Most updates pending at once (one per session): the monitor's `max_sessions` is enough
    /// for every live session.
    pub max_entries: usize,
    /// Most payload bytes pending at once.
    pub max_bytes: usize,
}

impl MailboxConfig {
    /// `max_entries` updates and 64 MiB of payload.
    pub fn new(max_entries: usize) -> Self {
        MailboxConfig {
            max_entries,
            max_bytes: 64 << 20,
        }
    }
}

/// What became of an offered update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Pending; its session had nothing pending.
    Queued,
    /// Pending in place of its session's previous pending update, which is discarded.
    Superseded,
    /// Refused: a new session while `max_entries` are pending, or a payload that would take the
    /// pending bytes over `max_bytes`. A session's previous pending update, if any, stays.
    Dropped,
    /// Refused: the mailbox is closed.
    Closed,
}

/// Counters of a [`Mailbox`], since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MailboxStats {
    /// Updates offered while open.
    pub offered: u64,
    /// Pending updates replaced by a fresher one of their session before being taken.
    pub superseded: u64,
    /// Updates refused for lack of room.
    pub dropped: u64,
    /// Updates taken by the consumer.
    pub taken: u64,
    /// Updates pending now.
    pub pending: usize,
    /// Payload bytes pending now.
    pub pending_bytes: usize,
}

struct State {
    /// Pending updates, in the order their sessions became pending.
    pending: Vec<OwnedUpdate>,
    /// Where each session's pending update is in `pending`.
    index: HashMap<SessionKey, usize>,
    /// An empty index to swap in when the consumer takes the pending updates.
    spare_index: Option<HashMap<SessionKey, usize>>,
    stats: MailboxStats,
    closed: bool,
}

/// Holds, per session, the freshest update the consumer has not taken yet. See the
/// [module](self) documentation.
pub struct Mailbox {
    cfg: MailboxConfig,
    state: Mutex<State>,
    ready: Condvar,
}

impl Mailbox {
    /// An empty, open mailbox.
    pub fn new(cfg: MailboxConfig) -> Self {
        Mailbox {
            cfg,
            state: Mutex::new(State {
                pending: Vec::new(),
                index: HashMap::new(),
                spare_index: None,
                stats: MailboxStats::default(),
                closed: false,
            }),
            ready: Condvar::new(),
        }
    }

    /// Its bounds.
    pub fn config(&self) -> MailboxConfig {
        self.cfg
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Offers `update` as the freshest of its session: it replaces the session's pending update,
    /// if any. Updates of a session must be offered in order (the monitor delivers only updates
    /// fresher than every earlier one). Never waits for the consumer.
    pub fn offer(&self, update: OwnedUpdate) -> Offer {
        let (outcome, discarded) = {
            let mut st = self.lock();
            if st.closed {
                return Offer::Closed;
            }
            st.stats.offered += 1;
            let bytes = update.payload.len();
            match st.index.get(&update.key).copied() {
                Some(i) => {
                    let grown = st.stats.pending_bytes - st.pending[i].payload.len() + bytes;
                    if grown > self.cfg.max_bytes {
                        st.stats.dropped += 1;
                        (Offer::Dropped, Some(update))
                    } else {
                        st.stats.pending_bytes = grown;
                        st.stats.superseded += 1;
                        let old = std::mem::replace(&mut st.pending[i], update);
                        (Offer::Superseded, Some(old))
                    }
                }
                None => {
                    if st.pending.len() >= self.cfg.max_entries
                        || st.stats.pending_bytes + bytes > self.cfg.max_bytes
                    {
                        st.stats.dropped += 1;
                        (Offer::Dropped, Some(update))
                    } else {
                        let i = st.pending.len();
                        st.index.insert(update.key, i);
                        st.pending.push(update);
                        st.stats.pending += 1;
                        st.stats.pending_bytes += bytes;
                        (Offer::Queued, None)
                    }
                }
            }
        };
        // Freed outside the lock.
        drop(discarded);
        if outcome == Offer::Queued {
            self.ready.notify_one();
        }
        outcome
    }

    /// [`offer`](Mailbox::offer)s a copy of the delivery `d`, received at `received`.
    pub fn offer_delivery(&self, d: &Delivery<'_>, received: Time) -> Offer {
        self.offer(OwnedUpdate::from_delivery(d, received))
    }

    /// Moves every pending update into `out` (emptied first), in the order their sessions became
    /// pending, and leaves the mailbox empty. Does not wait for anything but the lock; reusing
    /// `out` from one call to the next saves allocations on both sides.
    pub fn take_into(&self, out: &mut Vec<OwnedUpdate>) {
        out.clear();
        let mut index = {
            let mut st = self.lock();
            let fresh = st.spare_index.take().unwrap_or_default();
            std::mem::swap(&mut st.pending, out);
            st.stats.taken += out.len() as u64;
            st.stats.pending = 0;
            st.stats.pending_bytes = 0;
            std::mem::replace(&mut st.index, fresh)
        };
        // Emptied outside the lock, then kept for the next call.
        index.clear();
        self.lock().spare_index = Some(index);
    }

    /// Every pending update, as [`take_into`](Mailbox::take_into) a new vector.
    pub fn take(&self) -> Vec<OwnedUpdate> {
        let mut out = Vec::new();
        self.take_into(&mut out);
        out
    }

    /// Waits until an update is pending, the mailbox is closed, or `timeout` passes; returns
    /// whether an update is pending.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        while st.pending.is_empty() && !st.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = self
                .ready
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        !st.pending.is_empty()
    }

    /// Refuses further offers and wakes a waiting consumer; what is pending can still be taken.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Whether [`close`](Mailbox::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Its counters.
    pub fn stats(&self) -> MailboxStats {
        self.lock().stats
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn update(session: u64, seq: u64, payload: &[u8]) -> OwnedUpdate {
        OwnedUpdate {
            key: SessionKey {
                peer: "127.0.0.1:9".parse().unwrap(),
                session,
            },
            seq,
            gen_ts: seq * 1000,
            probe: false,
            payload: payload.to_vec(),
            received: Time::from_nanos(seq),
        }
    }

    fn seqs(updates: &[OwnedUpdate]) -> Vec<(u64, u64)> {
        updates.iter().map(|u| (u.key.session, u.seq)).collect()
    }

    #[test]
    fn a_fresher_update_replaces_the_pending_one_of_its_session() {
        let m = Mailbox::new(MailboxConfig::new(10));
        assert_eq!(m.offer(update(1, 1, b"a")), Offer::Queued);
        assert_eq!(m.offer(update(2, 1, b"b")), Offer::Queued);
        assert_eq!(m.offer(update(1, 2, b"c")), Offer::Superseded);
        assert_eq!(m.offer(update(1, 3, b"dd")), Offer::Superseded);
        let st = m.stats();
        assert_eq!((st.offered, st.superseded, st.pending), (4, 2, 2));
        assert_eq!(st.pending_bytes, 3);
        let got = m.take();
        // Session 1 keeps its place (it became pending first) with its freshest update.
        assert_eq!(seqs(&got), [(1, 3), (2, 1)]);
        assert_eq!(got[0].payload, b"dd");
        assert!(m.take().is_empty(), "taking empties the mailbox");
        // After a take, a session's next update is pending again, not superseding.
        assert_eq!(m.offer(update(1, 4, b"e")), Offer::Queued);
        let st = m.stats();
        assert_eq!((st.taken, st.pending, st.pending_bytes), (2, 1, 1));
    }

    #[test]
    fn it_holds_at_most_max_entries_and_max_bytes() {
        let m = Mailbox::new(MailboxConfig {
            max_entries: 2,
            max_bytes: 10,
        });
        assert_eq!(m.offer(update(1, 1, b"1234")), Offer::Queued);
        assert_eq!(m.offer(update(2, 1, b"1234")), Offer::Queued);
        // A third session does not fit; known sessions still do.
        assert_eq!(m.offer(update(3, 1, b"")), Offer::Dropped);
        assert_eq!(m.offer(update(2, 2, b"123456")), Offer::Superseded);
        // 4 + 7 bytes would exceed 10: refused, and the pending update stays.
        assert_eq!(m.offer(update(2, 3, b"1234567")), Offer::Dropped);
        let st = m.stats();
        assert_eq!((st.pending, st.pending_bytes), (2, 10));
        assert_eq!((st.offered, st.superseded, st.dropped), (5, 1, 2));
        assert_eq!(seqs(&m.take()), [(1, 1), (2, 2)]);
        // Room again once taken.
        assert_eq!(m.offer(update(3, 2, b"1234567")), Offer::Queued);
        assert_eq!(m.offer(update(4, 1, b"1234")), Offer::Dropped, "bytes");
        // Nothing is accepted, or counted, once closed.
        m.close();
        assert_eq!(m.offer(update(3, 3, b"")), Offer::Closed);
        assert_eq!(m.stats().offered, 7);
        assert_eq!(seqs(&m.take()), [(3, 2)], "pending updates outlive close");
    }

    #[test]
    fn take_into_reuses_the_callers_buffer() {
        let m = Mailbox::new(MailboxConfig::new(100));
        let mut buf = Vec::new();
        for round in 1..=3u64 {
            for s in 0..50 {
                m.offer(update(s, round, b"x"));
            }
            m.take_into(&mut buf);
            assert_eq!(buf.len(), 50);
            assert!(buf.iter().all(|u| u.seq == round));
        }
        m.take_into(&mut buf);
        assert!(buf.is_empty(), "emptied first");
    }

    #[test]
    fn an_offer_or_close_wakes_a_waiting_consumer() {
        let m = Arc::new(Mailbox::new(MailboxConfig::new(10)));
        // Nothing pending: the wait times out.
        assert!(!m.wait(Duration::from_millis(1)));
        let consumer = {
            let m = m.clone();
            std::thread::spawn(move || {
                // Returns when the offer arrives (an hour would fail the test by its timeout).
                assert!(m.wait(Duration::from_secs(3600)));
                let got = m.take();
                assert!(!m.wait(Duration::from_secs(3600)), "woken by close");
                got
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        m.offer(update(7, 1, b"hi"));
        // Let the consumer take it before closing (it may also see both at once).
        while m.stats().taken == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        m.close();
        let got = consumer.join().unwrap();
        assert_eq!(seqs(&got), [(7, 1)]);
        assert!(m.is_closed());
    }

    #[test]
    fn the_producer_never_waits_for_a_consumer_that_does_not_take() {
        let m = Mailbox::new(MailboxConfig::new(4));
        // Far more offers than fit, with no consumer at all: each returns at once.
        for seq in 1..=10_000u64 {
            m.offer(update(seq % 8, seq, b"payload"));
        }
        let st = m.stats();
        assert_eq!(st.pending, 4);
        assert_eq!(st.offered, 10_000);
        assert_eq!(st.superseded + st.dropped + st.pending as u64, 10_000);
        // The four pending are the freshest of their sessions.
        let got = m.take();
        assert_eq!(seqs(&got), [(1, 9993), (2, 9994), (3, 9995), (4, 9996)]);
    }
}
