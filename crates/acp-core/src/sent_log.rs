//! The source's memory of what it sent: for each recent sequence, the generation timestamp and
//! hold time its update carried, so that an ACK is believed only if it echoes them exactly.
//!
//! A ring indexed by sequence. It holds at least every unacknowledged sequence: when a send
//! would overwrite one, the ring doubles, up to [`MAX_ENTRIES`] (24 bytes each). Its memory
//! therefore follows the backlog the controller actually keeps, from 1.5 KiB up to 1.5 MiB.

/// Most sequences remembered; ACKs of sequences further behind are unverifiable.
pub const MAX_ENTRIES: usize = 1 << 16;

/// Sequences remembered from the start.
const INITIAL_ENTRIES: usize = 64;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Entry {
    /// 0: empty.
    seq: u64,
    gen_ts: u64,
    hold_ns: u32,
}

/// What an ACK's echo says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// The sequence was sent with exactly these timestamps.
    Matches,
    /// The sequence was sent with other timestamps: not an ACK of our update.
    Differs,
    /// The sequence is too far behind to be remembered.
    Forgotten,
}

/// The last sent sequences and their echoed fields.
#[derive(Debug, Clone)]
pub struct SentLog {
    slots: Vec<Entry>,
}

impl Default for SentLog {
    fn default() -> Self {
        SentLog {
            slots: vec![Entry::default(); INITIAL_ENTRIES],
        }
    }
}

impl SentLog {
    /// Remembers that `seq` left with `gen_ts` and `hold_ns`; `acked` is the highest sequence
    /// acknowledged so far, so that every sequence after it stays remembered.
    pub fn record(&mut self, seq: u64, gen_ts: u64, hold_ns: u32, acked: u64) {
        let unacked = seq.saturating_sub(acked);
        while unacked > self.slots.len() as u64 && self.slots.len() < MAX_ENTRIES {
            self.grow();
        }
        let i = self.index(seq);
        self.slots[i] = Entry {
            seq,
            gen_ts,
            hold_ns,
        };
    }

    /// Checks an ACK of `seq` echoing `gen_ts` and `hold_ns`.
    pub fn check(&self, seq: u64, gen_ts: u64, hold_ns: u32) -> Echo {
        self.compare(seq, gen_ts, Some(hold_ns))
    }

    /// Checks a COOKIE of `seq` echoing `gen_ts` (a COOKIE carries no hold time).
    pub fn check_generation(&self, seq: u64, gen_ts: u64) -> Echo {
        self.compare(seq, gen_ts, None)
    }

    fn compare(&self, seq: u64, gen_ts: u64, hold_ns: Option<u32>) -> Echo {
        let e = self.slots[self.index(seq)];
        if e.seq != seq {
            Echo::Forgotten
        } else if e.gen_ts == gen_ts && hold_ns.is_none_or(|h| h == e.hold_ns) {
            Echo::Matches
        } else {
            Echo::Differs
        }
    }

    /// Sequences it can hold.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn index(&self, seq: u64) -> usize {
        (seq % self.slots.len() as u64) as usize
    }

    fn grow(&mut self) {
        let doubled = vec![Entry::default(); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        for e in old.into_iter().filter(|e| e.seq != 0) {
            let i = self.index(e.seq);
            self.slots[i] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_matches_only_what_was_sent() {
        let mut log = SentLog::default();
        log.record(1, 1_000, 5, 0);
        log.record(2, 2_000, 0, 0);
        assert_eq!(log.check(1, 1_000, 5), Echo::Matches);
        assert_eq!(log.check(2, 2_000, 0), Echo::Matches);
        assert_eq!(log.check(2, 2_001, 0), Echo::Differs);
        assert_eq!(log.check(1, 1_000, 6), Echo::Differs);
        assert_eq!(log.check(3, 3_000, 0), Echo::Forgotten);
    }

    #[test]
    fn acknowledged_sequences_make_room_and_unacknowledged_ones_grow_the_ring() {
        let mut log = SentLog::default();
        // Everything acknowledged as it goes: the ring never grows, old entries are reused.
        for seq in 1..=1_000 {
            log.record(seq, seq * 10, 0, seq - 1);
        }
        assert_eq!(log.capacity(), INITIAL_ENTRIES);
        assert_eq!(log.check(1_000, 10_000, 0), Echo::Matches);
        assert_eq!(log.check(900, 9_000, 0), Echo::Forgotten);
        // 300 in flight: every one of them is still verifiable.
        for seq in 1_001..=1_300 {
            log.record(seq, seq * 10, 0, 1_000);
        }
        assert!(log.capacity() >= 300);
        assert!((1_001..=1_300).all(|s| log.check(s, s * 10, 0) == Echo::Matches));
    }

    #[test]
    fn the_ring_stops_growing_at_its_bound() {
        let mut log = SentLog::default();
        let n = MAX_ENTRIES as u64 + 10;
        for seq in 1..=n {
            log.record(seq, seq, 0, 0);
        }
        assert_eq!(log.capacity(), MAX_ENTRIES);
        assert_eq!(log.check(n, n, 0), Echo::Matches);
        assert_eq!(log.check(1, 1, 0), Echo::Forgotten);
    }
}
