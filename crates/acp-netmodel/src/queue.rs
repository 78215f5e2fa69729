//! Queue disciplines: what waits for a link, in which order, and what is refused.
//!
//! Every discipline implements [`QueueDiscipline`]; the link calls it when a packet arrives and
//! when its server is free, and holds the packet in service itself (a discipline may ask the
//! link to pre-empt it: [`QueueDiscipline::preempts_service`]). Limits count the packet in
//! service, as a router's buffer does (the link passes its [`Occupancy`]). A discipline may
//! drop a packet it holds to admit a newer one; the link collects those through
//! [`QueueDiscipline::take_displaced`]. New disciplines (AQMs, a shared WiFi medium's
//! per-station queues) plug in here.
//!
//! - [`DropTail`]: one FIFO; an arrival that does not fit is dropped.
//! - [`StrictPriority`]: N FIFO classes chosen by the packet's DSCP; the server always takes the
//!   head of the highest non-empty class. The limit is shared by all classes (drop-tail on the
//!   total).
//! - [`Diffserv4`]: CAKE-style Diffserv tins with bandwidth thresholds
//!   (module [`tins`](crate::tins)).
//! - [`Freshest`]: the newest update of each source only
//!   ([`crate::freshest`]).

use std::collections::VecDeque;
use std::fmt;

use crate::freshest::Freshest;
use crate::tins::Diffserv4;
use crate::Time;

/// A packet as the model sees it: the caller's opaque item, its size on the wire, its DSCP and
/// its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parcel<P> {
    /// The caller's packet (a slab index in the simulator, a datagram in the relay).
    pub item: P,
    /// Bytes on the wire, headers included (what serialisation and byte limits count).
    pub bytes: u32,
    /// Differentiated-services code point, 0–63 (0 = best effort).
    pub dscp: u8,
    /// Who sent it, as disciplines that treat sources apart see it ([`Discipline::Freshest`]):
    /// the simulator's flow index, a hash of the sender's address and port in the relay and
    /// the lab. Packets with the same value are one source.
    pub source: u64,
}

/// How much a queue holds at most, counting the packet in service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes.
    Bytes(u64),
}

impl QueueLimit {
    /// Whether `bytes` more fit beside `held`.
    pub fn admits(&self, held: Occupancy, bytes: u32) -> bool {
        match *self {
            QueueLimit::Packets(n) => held.packets < n,
            QueueLimit::Bytes(n) => held.bytes + u64::from(bytes) <= n,
        }
    }
}

/// Packets and bytes held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Packets.
    pub packets: usize,
    /// Bytes.
    pub bytes: u64,
}

impl std::ops::Add for Occupancy {
    type Output = Occupancy;
    fn add(self, o: Occupancy) -> Occupancy {
        Occupancy {
            packets: self.packets + o.packets,
            bytes: self.bytes + o.bytes,
        }
    }
}

/// A queue discipline. `now` is passed to every hook so time-based disciplines (AQMs) need no
/// clock of their own.
pub trait QueueDiscipline<P>: fmt::Debug + Send {
    /// Offers `parcel`, with `in_service` held by the server; gives it back if refused.
    fn enqueue(
        &mut self,
        now: Time,
        parcel: Parcel<P>,
        in_service: Occupancy,
    ) -> Result<(), Parcel<P>>;
    /// The next packet to serve.
    fn dequeue(&mut self, now: Time) -> Option<Parcel<P>>;
    /// What waits (not counting the packet in service).
    fn occupancy(&self) -> Occupancy;
    /// The rate the link serves at (bit/s, maybe infinite), told when the link starts and
    /// whenever it changes; disciplines that share the rate follow it.
    fn set_rate(&mut self, _rate_bps: f64) {}
    /// A packet the last [`QueueDiscipline::enqueue`] dropped to admit its arrival (call until
    /// `None`). Disciplines that never displace keep the default.
    fn take_displaced(&mut self) -> Option<Parcel<P>> {
        None
    }
    /// Whether an admitted arrival pre-empts the packet in service (which is then dropped).
    fn preempts_service(&self) -> bool {
        false
    }
}

/// Which discipline a link uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Discipline {
    /// One FIFO, drop-tail.
    #[default]
    DropTail,
    /// Strict priority: `classes[0]` lists the DSCPs of the highest class, `classes[1]` the next;
    /// every DSCP not listed goes to one more, lowest, class.
    StrictPriority {
        /// DSCPs per class, highest priority first.
        classes: Vec<Vec<u8>>,
    },
    /// CAKE's `diffserv4` tins (Bulk, Best Effort, Video, Voice) with bandwidth thresholds;
    /// each tin holds up to the link's limit. See [`crate::tins`].
    Diffserv4,
    /// Only the freshest update of each source waits ([`crate::freshest`]).
    Freshest {
        /// An arrival pre-empts the packet in service (scenario name `freshest-preempt`).
        preempt: bool,
    },
}

/// The disciplines chosen by name alone (scenario key `discipline`, the relay's `--discipline`);
/// strict priority is given by its classes instead.
pub const DISCIPLINE_NAMES: &[&str] = &["diffserv4", "freshest", "freshest-preempt"];

impl Discipline {
    /// The discipline called `name` (one of [`DISCIPLINE_NAMES`]).
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "diffserv4" => Ok(Discipline::Diffserv4),
            "freshest" => Ok(Discipline::Freshest { preempt: false }),
            "freshest-preempt" => Ok(Discipline::Freshest { preempt: true }),
            _ => Err(format!(
                "unknown queue discipline {name:?} (known: {})",
                DISCIPLINE_NAMES.join(", ")
            )),
        }
    }

    /// Checks DSCPs are in 0–63 and listed once.
    pub fn validate(&self) -> Result<(), String> {
        if let Discipline::StrictPriority { classes } = self {
            let mut seen = [false; 64];
            for &d in classes.iter().flatten() {
                let slot = seen
                    .get_mut(usize::from(d))
                    .ok_or_else(|| format!("DSCP {d} is out of range 0–63"))?;
                if *slot {
                    return Err(format!("DSCP {d} is listed in two priority classes"));
                }
                *slot = true;
            }
        }
        Ok(())
    }

    /// A fresh queue of this discipline.
    pub fn build<P: fmt::Debug + Send + 'static>(
        &self,
        limit: QueueLimit,
    ) -> Box<dyn QueueDiscipline<P>> {
        match self {
            Discipline::DropTail => Box::new(DropTail::new(limit)),
            Discipline::StrictPriority { classes } => Box::new(StrictPriority::new(limit, classes)),
            Discipline::Diffserv4 => Box::new(Diffserv4::new(limit)),
            Discipline::Freshest { preempt } => Box::new(Freshest::new(limit, *preempt)),
        }
    }
}

/// One FIFO, drop-tail.
#[derive(Debug)]
pub struct DropTail<P> {
    limit: QueueLimit,
    fifo: VecDeque<Parcel<P>>,
    bytes: u64,
}

impl<P> DropTail<P> {
    /// An empty queue.
    pub fn new(limit: QueueLimit) -> Self {
        DropTail {
            limit,
            fifo: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P: fmt::Debug + Send> QueueDiscipline<P> for DropTail<P> {
    fn enqueue(
        &mut self,
        _now: Time,
        parcel: Parcel<P>,
        in_service: Occupancy,
    ) -> Result<(), Parcel<P>> {
        if !self
            .limit
            .admits(self.occupancy() + in_service, parcel.bytes)
        {
            return Err(parcel);
        }
        self.bytes += u64::from(parcel.bytes);
        self.fifo.push_back(parcel);
        Ok(())
    }

    fn dequeue(&mut self, _now: Time) -> Option<Parcel<P>> {
        let p = self.fifo.pop_front()?;
        self.bytes -= u64::from(p.bytes);
        Some(p)
    }

    fn occupancy(&self) -> Occupancy {
        Occupancy {
            packets: self.fifo.len(),
            bytes: self.bytes,
        }
    }
}

/// Strict priority over FIFO classes chosen by DSCP, non-pre-emptive, one shared limit.
#[derive(Debug)]
pub struct StrictPriority<P> {
    limit: QueueLimit,
    class_of: [u8; 64],
    classes: Vec<VecDeque<Parcel<P>>>,
    held: Occupancy,
}

impl<P> StrictPriority<P> {
    /// `classes[i]` lists the DSCPs of class `i` (0 highest); the rest form the lowest class.
    pub fn new(limit: QueueLimit, classes: &[Vec<u8>]) -> Self {
        let lowest = u8::try_from(classes.len()).unwrap_or(u8::MAX);
        let mut class_of = [lowest; 64];
        for (i, dscps) in classes.iter().enumerate() {
            for &d in dscps {
                if let Some(slot) = class_of.get_mut(usize::from(d)) {
                    *slot = u8::try_from(i).unwrap_or(u8::MAX);
                }
            }
        }
        StrictPriority {
            limit,
            class_of,
            classes: (0..=classes.len()).map(|_| VecDeque::new()).collect(),
            held: Occupancy::default(),
        }
    }

    /// The class (0 = highest) of a DSCP.
    pub fn class_of(&self, dscp: u8) -> usize {
        usize::from(self.class_of[usize::from(dscp & 63)])
    }
}

impl<P: fmt::Debug + Send> QueueDiscipline<P> for StrictPriority<P> {
    fn enqueue(
        &mut self,
        _now: Time,
        parcel: Parcel<P>,
        in_service: Occupancy,
    ) -> Result<(), Parcel<P>> {
        if !self.limit.admits(self.held + in_service, parcel.bytes) {
            return Err(parcel);
        }
        let class = self.class_of(parcel.dscp).min(self.classes.len() - 1);
        self.held.packets += 1;
        self.held.bytes += u64::from(parcel.bytes);
        self.classes[class].push_back(parcel);
        Ok(())
    }

    fn dequeue(&mut self, _now: Time) -> Option<Parcel<P>> {
        let p = self.classes.iter_mut().find_map(|q| q.pop_front())?;
        self.held.packets -= 1;
        self.held.bytes -= u64::from(p.bytes);
        Some(p)
    }

    fn occupancy(&self) -> Occupancy {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parcel(item: u32, bytes: u32, dscp: u8) -> Parcel<u32> {
        Parcel {
            item,
            bytes,
            dscp,
            source: 0,
        }
    }

    fn drain(q: &mut dyn QueueDiscipline<u32>) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue(Time::ZERO).map(|p| p.item)).collect()
    }

    #[test]
    fn drop_tail_is_fifo_and_counts_the_packet_in_service() {
        let mut q = Discipline::DropTail.build::<u32>(QueueLimit::Packets(3));
        let one = Occupancy {
            packets: 1,
            bytes: 100,
        };
        assert!(q.enqueue(Time::ZERO, parcel(1, 100, 0), one).is_ok());
        assert!(q.enqueue(Time::ZERO, parcel(2, 100, 0), one).is_ok());
        let refused = q.enqueue(Time::ZERO, parcel(3, 100, 0), one);
        assert_eq!(refused.map_err(|p| p.item), Err(3));
        assert_eq!(q.occupancy().bytes, 200);
        assert_eq!(drain(q.as_mut()), [1, 2]);

        let mut q = Discipline::DropTail.build::<u32>(QueueLimit::Bytes(250));
        let idle = Occupancy::default();
        assert!(q.enqueue(Time::ZERO, parcel(1, 200, 0), idle).is_ok());
        assert!(q.enqueue(Time::ZERO, parcel(2, 60, 0), idle).is_err());
        assert!(q.enqueue(Time::ZERO, parcel(3, 50, 0), idle).is_ok());
    }

    #[test]
    fn strict_priority_serves_classes_in_order_fifo_within() {
        let d = Discipline::StrictPriority {
            classes: vec![vec![46], vec![34, 26]],
        };
        assert!(d.validate().is_ok());
        let mut q = d.build::<u32>(QueueLimit::Packets(100));
        let idle = Occupancy::default();
        for (item, dscp) in [(1, 0), (2, 34), (3, 46), (4, 0), (5, 26), (6, 46)] {
            assert!(q.enqueue(Time::ZERO, parcel(item, 10, dscp), idle).is_ok());
        }
        assert_eq!(drain(q.as_mut()), [3, 6, 2, 5, 1, 4]);
        assert_eq!(q.occupancy(), Occupancy::default());
    }

    #[test]
    fn strict_priority_limit_is_shared() {
        let d = Discipline::StrictPriority {
            classes: vec![vec![46]],
        };
        let mut q = d.build::<u32>(QueueLimit::Packets(2));
        let idle = Occupancy::default();
        assert!(q.enqueue(Time::ZERO, parcel(1, 10, 0), idle).is_ok());
        assert!(q.enqueue(Time::ZERO, parcel(2, 10, 0), idle).is_ok());
        assert!(q.enqueue(Time::ZERO, parcel(3, 10, 46), idle).is_err());
    }

    #[test]
    fn disciplines_by_name() {
        assert_eq!(
            Discipline::from_name("diffserv4"),
            Ok(Discipline::Diffserv4)
        );
        for name in DISCIPLINE_NAMES {
            assert!(Discipline::from_name(name).is_ok(), "{name}");
        }
        assert_eq!(
            Discipline::from_name("freshest-preempt"),
            Ok(Discipline::Freshest { preempt: true })
        );
        let unknown = Discipline::from_name("fresh").unwrap_err();
        assert!(unknown.contains("\"fresh\"") && unknown.contains("freshest-preempt"));
    }

    #[test]
    fn validation_names_bad_dscps() {
        let twice = Discipline::StrictPriority {
            classes: vec![vec![46], vec![46]],
        };
        assert!(twice.validate().unwrap_err().contains("two"));
        let big = Discipline::StrictPriority {
            classes: vec![vec![64]],
        };
        assert!(big.validate().unwrap_err().contains("64"));
    }
}
