//! Age-aware queueing: a discipline that keeps only the freshest update of each source.
//!
//! Status updates lose their value as soon as a newer one of the same source exists, so a queue
//! holding two of them wastes service on the older. [`Freshest`] gives each source
//! ([`Parcel::source`]) a waiting room of one:
//!
//! - **Without pre-emption** (`freshest`): an arrival whose source already has a packet waiting
//!   replaces it, taking its place in line (the source keeps its turn, with fresher content);
//!   the replaced packet is dropped and handed back through
//!   [`QueueDiscipline::take_displaced`]. Sources are served in the order their waiting packets
//!   took their places. The packet in service is never interrupted. With one source this is the
//!   M/M/1/2* system of M. Costa, M. Codreanu and A. Ephremides, "On the age of information in
//!   status update systems with packet management", IEEE Trans. IT 62(4), 2016.
//! - **With pre-emption** (`freshest-preempt`): every admitted arrival, whatever its source,
//!   pre-empts the packet in service, which is dropped; the newest update on the link is always
//!   the one being sent, so nothing ever waits. This is the multi-source LCFS queue with
//!   pre-emption in service of R. D. Yates and S. K. Kaul, "The age of information: real-time
//!   status updating by multiple sources", IEEE Trans. IT 65(3), 2019 (their M/M/1*), whose
//!   per-source age is `(1/μ)(1 + ρ)/ρ_i`.
//!
//! The queue limit still applies to the total held (the packet in service counted): an arrival
//! of a new source that does not fit is refused; a replacement that would not fit is refused
//! and its predecessor stays.
//!
//! Every packet on the link is treated as an update of its source: a bulk flow sharing the link
//! keeps one packet waiting at most, so put this discipline where status updates travel alone
//! (or on their own class of a strict-priority parent, when one exists).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::SocketAddr;

use crate::queue::{Occupancy, Parcel, QueueDiscipline, QueueLimit};
use crate::Time;

/// The [`Parcel::source`] of packets sent from `addr` (address and port), as the relay and the
/// lab key them: a hash with fixed keys, so the same sender gets the same key in every run.
pub fn source_of(addr: SocketAddr) -> u64 {
    let mut h = DefaultHasher::new();
    addr.hash(&mut h);
    h.finish()
}

/// The freshest update of each source, in line by the place each source took.
#[derive(Debug)]
pub struct Freshest<P> {
    limit: QueueLimit,
    preempt: bool,
    /// Waiting packets by their place in line.
    line: BTreeMap<u64, Parcel<P>>,
    /// Each source's place in `line`.
    place_of: HashMap<u64, u64>,
    /// The next place to hand out.
    next_place: u64,
    held: Occupancy,
    displaced: VecDeque<Parcel<P>>,
}

impl<P> Freshest<P> {
    /// An empty queue; `preempt`: arrivals pre-empt the packet in service.
    pub fn new(limit: QueueLimit, preempt: bool) -> Self {
        Freshest {
            limit,
            preempt,
            line: BTreeMap::new(),
            place_of: HashMap::new(),
            next_place: 0,
            held: Occupancy::default(),
            displaced: VecDeque::new(),
        }
    }

    fn remove_bytes(&mut self, bytes: u32) {
        self.held.packets -= 1;
        self.held.bytes -= u64::from(bytes);
    }
}

impl<P: fmt::Debug + Send> QueueDiscipline<P> for Freshest<P> {
    fn enqueue(
        &mut self,
        _now: Time,
        parcel: Parcel<P>,
        in_service: Occupancy,
    ) -> Result<(), Parcel<P>> {
        let waiting = self.place_of.get(&parcel.source).copied();
        let predecessor = waiting.and_then(|place| self.line.get(&place));
        let without = predecessor.map_or(self.held, |old| Occupancy {
            packets: self.held.packets - 1,
            bytes: self.held.bytes - u64::from(old.bytes),
        });
        if !self.limit.admits(without + in_service, parcel.bytes) {
            return Err(parcel);
        }
        let place = waiting.unwrap_or_else(|| {
            let place = self.next_place;
            self.next_place += 1;
            self.place_of.insert(parcel.source, place);
            place
        });
        self.held.packets += 1;
        self.held.bytes += u64::from(parcel.bytes);
        if let Some(old) = self.line.insert(place, parcel) {
            self.remove_bytes(old.bytes);
            self.displaced.push_back(old);
        }
        Ok(())
    }

    fn dequeue(&mut self, _now: Time) -> Option<Parcel<P>> {
        let (_, p) = self.line.pop_first()?;
        self.place_of.remove(&p.source);
        self.remove_bytes(p.bytes);
        Some(p)
    }

    fn occupancy(&self) -> Occupancy {
        self.held
    }

    fn take_displaced(&mut self) -> Option<Parcel<P>> {
        self.displaced.pop_front()
    }

    fn preempts_service(&self) -> bool {
        self.preempt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(item: u32, source: u64) -> Parcel<u32> {
        Parcel {
            item,
            bytes: 100,
            dscp: 0,
            source,
        }
    }

    fn drain(q: &mut Freshest<u32>) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue(Time::ZERO).map(|p| p.item)).collect()
    }

    fn displaced(q: &mut Freshest<u32>) -> Vec<u32> {
        std::iter::from_fn(|| q.take_displaced().map(|p| p.item)).collect()
    }

    #[test]
    fn each_source_keeps_its_newest_in_its_place() {
        let mut q = Freshest::new(QueueLimit::Packets(100), false);
        let idle = Occupancy::default();
        // Sources 7, 8, 9 take places in that order; 7 and 9 are refreshed twice and once.
        for (item, source) in [(1, 7), (2, 8), (3, 7), (4, 9), (5, 7), (6, 9)] {
            assert!(q.enqueue(Time::ZERO, update(item, source), idle).is_ok());
        }
        assert_eq!(displaced(&mut q), [1, 3, 4]);
        assert_eq!(
            q.occupancy(),
            Occupancy {
                packets: 3,
                bytes: 300
            }
        );
        assert_eq!(drain(&mut q), [5, 2, 6]);
        assert_eq!(q.occupancy(), Occupancy::default());
        // A source served is a new source again: it goes to the back.
        for (item, source) in [(10, 7), (11, 8), (12, 7)] {
            assert!(q.enqueue(Time::ZERO, update(item, source), idle).is_ok());
        }
        assert_eq!(drain(&mut q), [12, 11]);
        assert!(!q.preempts_service());
        assert!(Freshest::<u32>::new(QueueLimit::Packets(1), true).preempts_service());
    }

    #[test]
    fn the_limit_counts_the_packet_in_service() {
        let mut q = Freshest::new(QueueLimit::Packets(2), false);
        let busy = Occupancy {
            packets: 1,
            bytes: 100,
        };
        assert!(q.enqueue(Time::ZERO, update(1, 1), busy).is_ok());
        // A second source does not fit beside the one in service and the one waiting…
        let refused = q.enqueue(Time::ZERO, update(2, 2), busy);
        assert_eq!(refused.map_err(|p| p.item), Err(2));
        // …but a fresher update of the first replaces its predecessor.
        assert!(q.enqueue(Time::ZERO, update(3, 1), busy).is_ok());
        assert_eq!(displaced(&mut q), [1]);

        // In bytes: a larger replacement that does not fit is refused, the old one stays.
        let mut q = Freshest::new(QueueLimit::Bytes(250), false);
        let idle = Occupancy::default();
        assert!(q.enqueue(Time::ZERO, update(1, 1), idle).is_ok());
        let big = Parcel {
            bytes: 300,
            ..update(2, 1)
        };
        assert!(q.enqueue(Time::ZERO, big, idle).is_err());
        assert!(displaced(&mut q).is_empty());
        assert_eq!(drain(&mut q), [1]);
    }
}
