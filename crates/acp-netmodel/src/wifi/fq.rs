//! Flow queueing within one of the access point's per-station queues, as Linux's mac80211 does it
//! (the scheduling half of its `fq_codel` per TXQ, `include/net/fq_impl.h`): packets are kept per
//! flow, flows that have just become backlogged are served before the others (new-flow
//! priority), and the flows take turns by deficit round robin over bytes.
//!
//! # Model
//!
//! A flow is a [`crate::queue::Parcel::source`] (mac80211 hashes the 5-tuple into 4096 buckets;
//! here flows never share one). Each flow holds its packets in arrival order, a deficit and its
//! place in one of two lists:
//!
//! - **Enqueue.** A packet joins its flow; a flow on neither list gets a deficit of one quantum
//!   and goes to the tail of the *new* list.
//! - **Dequeue.** Look at the head of the new list, or of the old list if the new one is empty.
//!   A head with a deficit ≤ 0 gets one more quantum and moves to the tail of the old list;
//!   look again. A head with no packet leaves its list (from the new list it moves to the old
//!   one instead while the old one holds flows: the forced pass that stops a stream of new
//!   flows starving the old ones); look again. Otherwise its oldest packet goes and its deficit
//!   drops by the packet's bytes.
//! - **Drops.** When the queue is full, the flow holding the most bytes loses its oldest packet
//!   (mac80211's `fq_find_fattest_flow` and a drop at its head).
//!
//! - **CoDel** (with [`FlowQueueing::with_codel`], mac80211's `fq_codel`): the flow picked
//!   hands out its packet through its own [`Codel`], which may first drop packets at the flow's
//!   head that waited too long; the deficit is charged for the packet sent only.
//!
//! So a sparse flow — one packet now and then, each finding its flow empty and off the lists
//! — is served next, ahead of a backlogged flow, and waits at most for the packet in service.
//!
//! # Non-goals
//!
//! Hash collisions, memory limits and the per-TID tins of a station (the medium has one queue
//! per access category).
//!
//! This module keeps only the bookkeeping (which flow goes next, how many bytes each holds); the
//! packets themselves stay in the medium's queue.

use std::collections::{HashMap, VecDeque};

use super::codel::{Codel, CodelParams};
use crate::Time;

/// mac80211's quantum (`fq->quantum`, bytes).
pub const QUANTUM: u32 = 300;

/// One flow's state.
#[derive(Debug, Clone, Default)]
struct Flow {
    /// Bytes of its waiting packets and when each was queued, oldest first.
    waiting: VecDeque<(u32, Time)>,
    /// Their sum.
    bytes: u64,
    deficit: i64,
    /// On the new or the old list.
    listed: bool,
    /// Its CoDel state (used with [`FlowQueueing::with_codel`]).
    codel: Codel,
}

impl Flow {
    /// Takes out its oldest packet; its bytes.
    fn pop(&mut self) -> Option<u32> {
        let (bytes, _) = self.waiting.pop_front()?;
        self.bytes -= u64::from(bytes);
        Some(bytes)
    }
}

/// The flows of one queue and the two lists of deficit round robin.
#[derive(Debug, Clone)]
pub struct FlowQueueing {
    quantum: i64,
    flows: HashMap<u64, Flow>,
    new_flows: VecDeque<u64>,
    old_flows: VecDeque<u64>,
    codel: Option<CodelParams>,
}

/// What one [`FlowQueueing::dequeue`] picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// The flow whose oldest packet goes next.
    pub flow: u64,
    /// Packets of that flow CoDel dropped first (its oldest, before the one that goes).
    pub dropped: u32,
}

impl Default for FlowQueueing {
    fn default() -> Self {
        FlowQueueing::new(QUANTUM)
    }
}

impl FlowQueueing {
    /// No flow yet; flows earn `quantum` bytes (at least 1) per turn.
    pub fn new(quantum: u32) -> Self {
        FlowQueueing {
            quantum: i64::from(quantum.max(1)),
            flows: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            codel: None,
        }
    }

    /// Likewise, each flow's packets handed out through CoDel with `params`.
    pub fn with_codel(quantum: u32, params: CodelParams) -> Self {
        FlowQueueing {
            codel: Some(params),
            ..FlowQueueing::new(quantum)
        }
    }

    /// A packet of `bytes` joins `flow` at `now`.
    pub fn enqueue(&mut self, flow: u64, bytes: u32, now: Time) {
        let f = self.flows.entry(flow).or_default();
        f.waiting.push_back((bytes, now));
        f.bytes += u64::from(bytes);
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new_flows.push_back(flow);
        }
    }

    /// The flow whose oldest packet goes next at `now` (taken out, with the packets CoDel
    /// dropped before it), or `None` when nothing waits.
    pub fn dequeue(&mut self, now: Time) -> Option<Served> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new {
                self.new_flows.front()
            } else {
                self.old_flows.front()
            };
            let id = *head?;
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            list.pop_front();
            let f = self.flows.get_mut(&id)?;
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                self.old_flows.push_back(id);
                continue;
            }
            let (dropped, sent) = match &self.codel {
                None => (0, f.pop()),
                Some(params) => {
                    let Flow {
                        waiting,
                        bytes,
                        codel,
                        ..
                    } = f;
                    let mut last = None;
                    let d = codel.dequeue(params, now, || {
                        let (b, at) = waiting.pop_front()?;
                        *bytes -= u64::from(b);
                        last = Some(b);
                        Some((at, *bytes))
                    });
                    (d.dropped, last.filter(|_| d.sent))
                }
            };
            let Some(bytes) = sent else {
                if from_new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(id);
                } else {
                    self.flows.remove(&id);
                }
                debug_assert_eq!(dropped, 0, "CoDel never drops a flow's last packet");
                continue;
            };
            f.deficit -= i64::from(bytes);
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            list.push_front(id);
            return Some(Served { flow: id, dropped });
        }
    }

    /// Bytes `flow` holds waiting.
    pub fn bytes(&self, flow: u64) -> u64 {
        self.flows.get(&flow).map_or(0, |f| f.bytes)
    }

    /// The flow holding the most bytes and how many (the lowest id among equals; `None` when
    /// nothing waits).
    pub fn fattest(&self) -> Option<(u64, u64)> {
        self.flows
            .iter()
            .filter(|(_, f)| f.bytes > 0)
            .map(|(&id, f)| (id, f.bytes))
            .max_by_key(|&(id, b)| (b, std::cmp::Reverse(id)))
    }

    /// Takes out `flow`'s oldest waiting packet; its bytes, or `None` if it holds none.
    pub fn drop_oldest(&mut self, flow: u64) -> Option<u32> {
        self.flows.get_mut(&flow)?.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flow served next at time zero (so CoDel, if any, never drops).
    fn next(fq: &mut FlowQueueing) -> Option<u64> {
        fq.dequeue(Time::ZERO).map(|s| s.flow)
    }

    /// Dequeues until empty; the flows in service order.
    fn drain(fq: &mut FlowQueueing) -> Vec<u64> {
        std::iter::from_fn(|| next(fq)).collect()
    }

    #[test]
    fn a_new_flow_goes_ahead_of_a_backlogged_one() {
        let mut fq = FlowQueueing::default();
        for _ in 0..10 {
            fq.enqueue(1, 1500, Time::ZERO);
        }
        assert_eq!(next(&mut fq), Some(1));
        fq.enqueue(2, 100, Time::ZERO);
        // Flow 1 used its quantum on its first packet; flow 2 is new and goes next.
        assert_eq!(next(&mut fq), Some(2));
        assert_eq!(drain(&mut fq), vec![1; 9]);
    }

    #[test]
    fn backlogged_flows_share_bytes_not_packets() {
        // Flow 1 sends 1500-byte packets, flow 2 300-byte ones: by deficit round robin each
        // gets the same bytes over a long backlog, so flow 2 sends five packets per one of flow
        // 1's.
        let mut fq = FlowQueueing::default();
        for _ in 0..100 {
            fq.enqueue(1, 1500, Time::ZERO);
        }
        for _ in 0..500 {
            fq.enqueue(2, 300, Time::ZERO);
        }
        let order: Vec<u64> = (0..300).map_while(|_| next(&mut fq)).collect();
        let ones = order.iter().filter(|&&f| f == 1).count() as u64;
        let twos = order.iter().filter(|&&f| f == 2).count() as u64;
        let (b1, b2) = (ones * 1500, twos * 300);
        // Within one packet of each flow's bytes (a turn may overdraw by one packet).
        assert!(b1.abs_diff(b2) <= 1800, "bytes {b1} against {b2}");
    }

    #[test]
    fn the_fattest_flow_loses_its_oldest_packet() {
        let mut fq = FlowQueueing::default();
        fq.enqueue(1, 100, Time::ZERO);
        fq.enqueue(2, 1000, Time::ZERO);
        fq.enqueue(2, 10, Time::ZERO);
        assert_eq!(fq.fattest(), Some((2, 1010)));
        assert_eq!(fq.drop_oldest(2), Some(1000));
        assert_eq!(fq.bytes(2), 10);
        assert_eq!(fq.fattest(), Some((1, 100)));
        assert_eq!(drain(&mut fq), vec![1, 2]);
        assert_eq!(fq.fattest(), None);
        assert_eq!(fq.drop_oldest(3), None);
    }
}
