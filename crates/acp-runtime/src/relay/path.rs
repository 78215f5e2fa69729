//! One direction of the relay's path: an `acp-netmodel` link and the cross traffic sharing it.
//!
//! A [`PathModel`] is pure: the relay's worker (or a test) drives it with [`Time`]s and it never
//! reads a clock or touches a socket. Call [`PathModel::arrive`] when a datagram is read,
//! [`PathModel::handle_timeout`] whenever the caller looks, then [`PathModel::poll_departure`]
//! until it returns `None`. [`PathModel::next_send`] says when to look next and be on time (a
//! real packet may leave), [`PathModel::next_change`] when to look next at all (lateness there
//! costs nothing, link time being virtual).
//!
//! Cross traffic is a Poisson flow named `cross NAME` whose arrivals draw from the stream
//! `flow cross NAME arrivals` (the simulator labels a flow's arrivals the same way): packets of
//! [`CROSS_PACKET_BYTES`] at DSCP 0, offered to the link like real ones (so they meet its loss,
//! blackholes and queue) and discarded instead of being sent when they leave. Its arrivals are
//! fed to the link in time order, interleaved with the link's own events (for each arrival `c`
//! up to now: `link.handle_timeout(c)`, then `link.arrive(c, …)`), so departure times depend only
//! on the arrival times and the seed, never on when the caller looked, and the cross traffic is
//! the same for a given seed whatever the real traffic (common random numbers).

use std::fmt;

use acp_netmodel::{Arrivals, Departure, DropReason, Link, Parcel, Process, Streams, Time};

use super::{PathConfig, CROSS_PACKET_BYTES};

/// The [`Parcel::source`] of the cross traffic (one source).
const CROSS_SOURCE: u64 = u64::MAX;

/// What occupies the link: a real datagram or a cross-traffic packet.
#[derive(Debug)]
enum Carried<P> {
    Real(P),
    Cross,
}

/// What a path counted (real packets' drops by reason; cross packets offered and dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathCounters {
    /// Real packets lost at random.
    pub dropped_loss: u64,
    /// Real packets refused by a full queue.
    pub dropped_queue: u64,
    /// Real packets dropped by an outage on arrival or departure.
    pub dropped_outage: u64,
    /// Cross packets offered to the link.
    pub cross_packets: u64,
    /// Cross packets the link dropped, for any reason.
    pub cross_dropped: u64,
}

/// One direction: a link and its cross traffic.
pub struct PathModel<P> {
    link: Link<Carried<P>>,
    cross: Option<Arrivals>,
    /// Real packets admitted and not yet out (queued, in service or propagating).
    real_inside: u64,
    counters: PathCounters,
}

impl<P> fmt::Debug for PathModel<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathModel")
            .field("link", &self.link)
            .field("real_inside", &self.real_inside)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl<P: fmt::Debug + Send + 'static> PathModel<P> {
    /// The path `name` (its link's name and random streams' label; the cross flow is
    /// `cross NAME`), started at `start`. The configuration should have passed
    /// [`PathConfig::validate`].
    pub fn new(cfg: &PathConfig, streams: &Streams, name: &str, start: Time) -> Self {
        let cross = (cfg.cross_bps > 0.0).then(|| {
            let rng = streams.stream(&format!("flow cross {name} arrivals"));
            let per_second = cfg.cross_bps / (8.0 * f64::from(CROSS_PACKET_BYTES));
            Arrivals::new(Process::Poisson, per_second, rng, start)
        });
        PathModel {
            link: Link::new(cfg.link.clone(), streams, name, start),
            cross,
            real_inside: 0,
            counters: PathCounters::default(),
        }
    }
}

impl<P> PathModel<P> {
    /// A real packet of `bytes` on the wire, marked `dscp`, from `source` (see [`Parcel::source`])
    /// arrives at `now`; a dropped one is counted and the reason returned. A packet the link's
    /// discipline displaces for this one is counted when [`PathModel::poll_departure`] meets it.
    pub fn arrive(
        &mut self,
        now: Time,
        item: P,
        bytes: u32,
        dscp: u8,
        source: u64,
    ) -> Result<(), DropReason> {
        self.handle_timeout(now);
        let parcel = Parcel {
            item: Carried::Real(item),
            bytes,
            dscp,
            source,
        };
        match self.link.arrive(now, parcel) {
            Ok(()) => {
                self.real_inside += 1;
                Ok(())
            }
            Err(d) => {
                self.count_drop(&d.parcel.item, d.reason);
                Err(d.reason)
            }
        }
    }

    /// Plays every cross arrival and link event up to `now`, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(cross) = &mut self.cross {
            while cross.next_at() <= now {
                let at = cross.pop();
                self.link.handle_timeout(at);
                self.counters.cross_packets += 1;
                let parcel = Parcel {
                    item: Carried::Cross,
                    bytes: CROSS_PACKET_BYTES,
                    dscp: 0,
                    source: CROSS_SOURCE,
                };
                if self.link.arrive(at, parcel).is_err() {
                    self.counters.cross_dropped += 1;
                }
            }
        }
        self.link.handle_timeout(now);
    }

    /// The next real packet that has reached the far end by `now` (call
    /// [`PathModel::handle_timeout`] first). Cross packets leaving are discarded, and packets
    /// dropped as they were due to leave are counted.
    pub fn poll_departure(&mut self, now: Time) -> Option<Departure<P>> {
        loop {
            let (item, dropped) = match self.link.poll_departure(now)? {
                Ok(Departure {
                    at,
                    served_at,
                    parcel,
                }) => match parcel.item {
                    Carried::Real(item) => {
                        self.real_inside -= 1;
                        let parcel = Parcel {
                            item,
                            bytes: parcel.bytes,
                            dscp: parcel.dscp,
                            source: parcel.source,
                        };
                        return Some(Departure {
                            at,
                            served_at,
                            parcel,
                        });
                    }
                    Carried::Cross => continue,
                },
                Err(d) => (d.parcel.item, d.reason),
            };
            if matches!(item, Carried::Real(_)) {
                self.real_inside -= 1;
            }
            self.count_drop(&item, dropped);
        }
    }

    /// When to look again and be on time: while a real packet is in the link, the link's next
    /// event (a departure, or a service end that a departure may follow at once); `None` while
    /// the link carries only cross traffic, whose departures need no precision.
    pub fn next_send(&self) -> Option<Time> {
        if self.real_inside > 0 {
            self.link.poll_timeout()
        } else {
            None
        }
    }

    /// When the model next changes by itself: a link event or a cross arrival.
    pub fn next_change(&self) -> Option<Time> {
        earliest(
            self.link.poll_timeout(),
            self.cross.as_ref().map(Arrivals::next_at),
        )
    }

    /// Turns the blackhole switch on or off (on top of the configured windows).
    pub fn set_down(&mut self, down: bool) {
        self.link.set_down(down);
    }

    /// Whether an arrival at `t` would be dropped by a blackhole.
    pub fn is_down(&self, t: Time) -> bool {
        self.link.is_down(t)
    }

    /// What was counted since the last call (and resets the counts).
    pub fn take_counters(&mut self) -> PathCounters {
        std::mem::take(&mut self.counters)
    }

    fn count_drop(&mut self, item: &Carried<P>, reason: DropReason) {
        let c = &mut self.counters;
        match (item, reason) {
            (Carried::Cross, _) => c.cross_dropped += 1,
            (Carried::Real(_), DropReason::Loss) => c.dropped_loss += 1,
            (Carried::Real(_), DropReason::QueueFull) => c.dropped_queue += 1,
            (Carried::Real(_), DropReason::Outage) => c.dropped_outage += 1,
        }
    }
}

/// The earlier of two optional instants.
pub(super) fn earliest<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_netmodel::{Jitter, LossModel, Service};
    use std::time::Duration;

    const NAME: &str = "client→target";

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn model(cfg: &PathConfig, seed: u64) -> PathModel<u32> {
        assert_eq!(cfg.validate(), Ok(()));
        PathModel::new(cfg, &Streams::new(seed), NAME, Time::ZERO)
    }

    fn path(rate_bps: f64, delay_ms: u64, queue: usize) -> PathConfig {
        PathConfig::lossless(rate_bps, Duration::from_millis(delay_ms), queue)
    }

    /// Feeds `arrivals` (time, item, bytes) and looks at the model at `looks` (plus each arrival),
    /// as a wall-clock caller would; returns (item, departure time) of every real departure.
    fn drive(
        m: &mut PathModel<u32>,
        arrivals: &[(Time, u32, u32)],
        looks: impl Iterator<Item = Time>,
    ) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        let mut pending = arrivals.iter().peekable();
        for now in looks {
            while let Some(&(t, item, bytes)) = pending.next_if(|a| a.0 <= now) {
                let _ = m.arrive(t, item, bytes, 0, 0);
            }
            m.handle_timeout(now);
            while let Some(d) = m.poll_departure(now) {
                out.push((d.parcel.item, d.at));
            }
        }
        out
    }

    /// Looks exactly when the model asks (its next change or send, or the next arrival).
    fn exact(m: &mut PathModel<u32>, arrivals: &[(Time, u32, u32)], end: Time) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        let mut pending = arrivals.iter().peekable();
        let mut now = Time::ZERO;
        while now <= end {
            while let Some(&(t, item, bytes)) = pending.next_if(|a| a.0 <= now) {
                let _ = m.arrive(t, item, bytes, 0, 0);
            }
            m.handle_timeout(now);
            while let Some(d) = m.poll_departure(now) {
                out.push((d.parcel.item, d.at));
            }
            let next = earliest(m.next_change(), m.next_send());
            let next = earliest(next, pending.peek().map(|a| a.0));
            match next {
                Some(t) => now = t.max(now + Duration::from_nanos(1)),
                None => break,
            }
        }
        out
    }

    #[test]
    fn freshest_counts_what_fresher_datagrams_displace() {
        let mut cfg = path(1e6, 0, 100);
        cfg.link.discipline = acp_netmodel::Discipline::Freshest { preempt: false };
        let mut m = model(&cfg, 1);
        // 125 B take 1 ms. Client 1's first datagram is sent; its next two wait in turn, the
        // third replacing the second; client 2's waits behind.
        for (t, item, source) in [(0, 1, 1), (100, 2, 1), (200, 3, 2), (300, 4, 1)] {
            assert_eq!(m.arrive(Time::from_micros(t), item, 125, 0, source), Ok(()));
        }
        let mut out = Vec::new();
        while let Some(t) = m.next_send() {
            m.handle_timeout(t);
            while let Some(d) = m.poll_departure(t) {
                out.push((d.parcel.item, d.parcel.source, d.at));
            }
        }
        assert_eq!(out, [(1, 1, ms(1)), (4, 1, ms(2)), (3, 2, ms(3))]);
        assert_eq!(m.take_counters().dropped_queue, 1);
        assert_eq!(m.next_send(), None, "nothing real left inside");
    }

    #[test]
    fn a_lone_packet_takes_serialisation_plus_delay() {
        let mut m = model(&path(2e6, 20, 10), 1);
        // 500 B = 4000 bits at 2 Mbit/s = 2 ms, then 20 ms.
        assert_eq!(m.arrive(Time::ZERO, 1, 500, 0, 0), Ok(()));
        m.handle_timeout(ms(2));
        assert_eq!(m.next_send(), Some(ms(22)));
        assert!(m.poll_departure(Time::from_micros(21_999)).is_none());
        let d = m.poll_departure(ms(22)).expect("due");
        assert_eq!((d.parcel.item, d.at, d.served_at), (1, ms(22), ms(2)));
    }

    #[test]
    fn departures_do_not_depend_on_when_the_caller_looks() {
        // Everything random at once: cross traffic, Gilbert–Elliott loss, exponential service,
        // jitter with reordering. A caller looking every 100 µs, one looking every 7 ms and one
        // looking exactly at each event see the same departures at the same instants.
        let mut cfg = PathConfig {
            cross_bps: 3e6,
            ..path(8e6, 5, 30)
        };
        cfg.link.service = Service::Exponential;
        cfg.link.loss = LossModel::GilbertElliott {
            p: 0.05,
            r: 0.3,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        cfg.link.jitter = Some(Jitter {
            max: Duration::from_millis(2),
            reorder: true,
        });
        // 650 B on average every ms (5.2 Mbit/s) beside 3 Mbit/s of cross traffic on 8 Mbit/s:
        // a queue builds at times and sometimes overflows.
        let arrivals: Vec<(Time, u32, u32)> = (0..1000)
            .map(|i| (ms(u64::from(i)), i, 200 + (i % 7) * 150))
            .collect();
        let end = ms(1100);
        let every = |step_us: u64| (0..).map(move |k| Time::from_micros(k * step_us));
        let fine = drive(
            &mut model(&cfg, 9),
            &arrivals,
            every(100).take_while(|t| *t <= end),
        );
        let coarse = drive(
            &mut model(&cfg, 9),
            &arrivals,
            every(7000).take_while(|t| *t <= end),
        );
        let at_events = exact(&mut model(&cfg, 9), &arrivals, end);
        // About 14 % lost (Gilbert–Elliott p / (p + r)), a few more to the queue.
        assert!(fine.len() > 600, "{} delivered", fine.len());
        assert_eq!(fine, coarse);
        assert_eq!(fine, at_events);
        assert!(
            fine.windows(2).any(|w| w[0].0 > w[1].0),
            "jitter reordered some"
        );
    }

    /// The cross arrivals a model has generated by `t`, and its next one.
    fn cross_state(m: &PathModel<u32>) -> (u64, Option<Time>) {
        (
            m.counters.cross_packets,
            m.cross.as_ref().map(Arrivals::next_at),
        )
    }

    #[test]
    fn cross_traffic_is_the_same_for_a_seed_whatever_the_real_traffic() {
        let cfg = PathConfig {
            cross_bps: 2e6,
            ..path(4e6, 3, 20)
        };
        let mut quiet = model(&cfg, 5);
        let mut busy = model(&cfg, 5);
        // The stream the simulator would use for a flow named "cross client→target".
        let mut reference = Arrivals::new(
            Process::Poisson,
            2e6 / 8000.0,
            Streams::new(5).stream("flow cross client→target arrivals"),
            Time::ZERO,
        );
        let mut expected = 0u64;
        for k in 1..=200u32 {
            let now = ms(u64::from(k) * 5);
            // The busy model also carries a saturating real flow (dropped and queued packets
            // alike), which changes what the cross packets meet but not when they arrive.
            for j in 0..10 {
                let _ = busy.arrive(now, k * 10 + j, 1200, 0, 0);
            }
            quiet.handle_timeout(now);
            busy.handle_timeout(now);
            while reference.next_at() <= now {
                reference.pop();
                expected += 1;
            }
            assert_eq!(cross_state(&quiet), (expected, Some(reference.next_at())));
            assert_eq!(cross_state(&busy), cross_state(&quiet));
        }
        // 1 s at 250 packets/s: Poisson with mean 250, sd 16.
        assert!((150..350).contains(&expected), "{expected}");
        let (q, b) = (quiet.take_counters(), busy.take_counters());
        assert_eq!(q.cross_dropped, 0, "a 2 Mbit/s flow alone fits in 4 Mbit/s");
        assert!(b.cross_dropped > 0 && b.dropped_queue > 0, "{b:?}");
        // A different seed gives different cross traffic.
        let mut other = model(&cfg, 6);
        other.handle_timeout(ms(1000));
        assert_ne!(cross_state(&other), cross_state(&quiet));
    }

    #[test]
    fn cross_packets_are_never_delivered_and_delay_real_ones() {
        let cfg = PathConfig {
            cross_bps: 1e6,
            ..path(2e6, 0, 1000)
        };
        let mut m = model(&cfg, 3);
        let first = m.cross.as_ref().map(Arrivals::next_at).expect("cross on");
        // A real packet arriving with the first cross packet waits for its 4 ms of service
        // (1000 B at 2 Mbit/s), then takes 1 ms (250 B).
        assert_eq!(m.arrive(first, 7, 250, 0, 0), Ok(()));
        m.handle_timeout(first + Duration::from_millis(5));
        let d = m
            .poll_departure(first + Duration::from_millis(5))
            .expect("left");
        assert_eq!((d.parcel.item, d.at), (7, first + Duration::from_millis(5)));
        // Over 10 s only the real packet came out; about 1250 cross packets went through.
        m.handle_timeout(ms(10_000));
        assert!(m.poll_departure(ms(10_000)).is_none());
        let c = m.take_counters();
        assert!((1100..1400).contains(&c.cross_packets), "{c:?}");
        assert_eq!(c.cross_dropped, 0);
    }

    #[test]
    fn fifo_shares_a_saturated_link_in_proportion_to_offered_rates() {
        // A flow offering 0.75 of a 20 Mbit/s link against 0.5 of Poisson cross traffic, all in
        // 1000 B packets, through a queue that never fills: over a window where the link is
        // always busy the flow gets 0.75 / (0.75 + 0.5) = 0.6 of it.
        let cfg = PathConfig {
            cross_bps: 10e6,
            ..path(20e6, 0, 100_000)
        };
        let gap_ns = 533_333; // 15 Mbit/s
        let arrivals: Vec<(Time, u32, u32)> = (0..3750)
            .map(|i| (Time::from_nanos(gap_ns * u64::from(i)), i, 1000))
            .collect();
        let mut m = model(&cfg, 11);
        let out = exact(&mut m, &arrivals, ms(2000));
        let (a, b) = (ms(250), ms(1750));
        let n = out.iter().filter(|(_, t)| *t >= a && *t < b).count();
        let share = n as f64 * 8000.0 / 1.5 / 20e6;
        // About 1875 cross packets in the window: Poisson noise of 2.3 % on their share.
        assert!((share - 0.6).abs() < 0.03, "share {share}");
        assert_eq!(m.take_counters().cross_dropped, 0);
    }

    #[test]
    fn drops_are_counted_by_reason_for_real_packets_only() {
        // Bernoulli loss 0.3 on a slow link with cross traffic and a small queue.
        let mut cfg = PathConfig {
            cross_bps: 1e6,
            ..path(1e6, 1, 4)
        };
        cfg.link.loss = LossModel::Bernoulli { p: 0.3 };
        let mut m = model(&cfg, 11);
        let mut returned = PathCounters::default();
        let n = 20_000u32;
        for i in 0..n {
            match m.arrive(Time::from_micros(500 * u64::from(i)), i, 125, 0, 0) {
                Ok(()) => {}
                Err(DropReason::Loss) => returned.dropped_loss += 1,
                Err(DropReason::QueueFull) => returned.dropped_queue += 1,
                Err(DropReason::Outage) => returned.dropped_outage += 1,
            }
        }
        let end = ms(20_000);
        m.handle_timeout(end);
        let mut delivered = 0u64;
        while m.poll_departure(end).is_some() {
            delivered += 1;
        }
        let c = m.take_counters();
        assert_eq!(
            (c.dropped_loss, c.dropped_queue, c.dropped_outage),
            (returned.dropped_loss, returned.dropped_queue, 0)
        );
        assert_eq!(delivered + c.dropped_loss + c.dropped_queue, u64::from(n));
        // Loss is drawn before the queue: Binomial(20000, 0.3) has sd 65; ±300 is over 4 sd.
        assert!(c.dropped_loss.abs_diff(6000) < 300, "{c:?}");
        // Cross packets meet the same loss: about 0.3 of the ~2500 offered, plus queue drops.
        assert!(c.cross_dropped * 10 > c.cross_packets * 2, "{c:?}");
        assert_eq!(m.take_counters(), PathCounters::default(), "taken");
    }

    #[test]
    fn the_blackhole_switch_drops_arrivals_and_departures() {
        let mut m = model(&path(1e6, 10, 100), 1);
        assert_eq!(m.arrive(ms(0), 1, 125, 0, 0), Ok(()));
        m.set_down(true);
        assert!(m.is_down(ms(1)));
        assert_eq!(m.arrive(ms(1), 2, 125, 0, 0), Err(DropReason::Outage));
        m.handle_timeout(ms(20));
        assert!(
            m.poll_departure(ms(20)).is_none(),
            "in flight, dropped on leaving"
        );
        m.set_down(false);
        assert_eq!(m.arrive(ms(30), 3, 125, 0, 0), Ok(()));
        m.handle_timeout(ms(41));
        assert_eq!(m.poll_departure(ms(41)).map(|d| d.parcel.item), Some(3));
        assert_eq!(m.take_counters().dropped_outage, 2);
    }

    #[test]
    fn only_real_packets_make_deadlines_to_be_on_time_for() {
        // Cross traffic alone: the model changes, but nothing needs a precise wake-up.
        let cfg = PathConfig {
            cross_bps: 1e6,
            ..path(1e6, 5, 100)
        };
        let mut m = model(&cfg, 2);
        m.handle_timeout(ms(100));
        assert!(m.next_change().is_some());
        assert_eq!(m.next_send(), None);
        // A real packet inside: the link's next event, whatever it is, until the packet is out.
        let t = ms(100);
        assert_eq!(m.arrive(t, 1, 125, 0, 0), Ok(()));
        let mut sent = None;
        let mut now = t;
        while sent.is_none() {
            now = m.next_send().expect("a real packet is inside");
            m.handle_timeout(now);
            sent = m.poll_departure(now).map(|d| d.at);
        }
        assert_eq!(sent, Some(now), "looked exactly at its departure");
        assert_eq!(m.next_send(), None);
        // Dropped on departure by the blackhole: out too.
        assert_eq!(m.arrive(now, 2, 125, 0, 0), Ok(()));
        m.set_down(true);
        m.handle_timeout(now + Duration::from_secs(1));
        assert!(m.poll_departure(now + Duration::from_secs(1)).is_none());
        assert_eq!(m.next_send(), None);
    }

    #[test]
    fn invalid_cross_rates_are_refused() {
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let cfg = PathConfig {
                cross_bps: bad,
                ..path(1e6, 1, 10)
            };
            assert!(cfg.validate().is_err(), "{bad}");
        }
        assert!(path(0.0, 1, 10).validate().is_err());
        assert!(path(1e6, 1, 0).validate().is_err());
    }

    #[test]
    fn link_rates_outside_the_supported_range_are_refused() {
        assert_eq!(
            path(999.0, 1, 10).validate(),
            Err("rate 999 bit/s must be in [1000, 100000000000]".into())
        );
        assert!(path(1.5e11, 1, 10).validate().is_err());
        assert_eq!(path(1e3, 1, 10).validate(), Ok(()));
        assert_eq!(path(1e11, 1, 10).validate(), Ok(()));
        let mut slow_step = path(1e6, 1, 10);
        slow_step.link.schedule = Some(acp_netmodel::Schedule {
            steps: vec![acp_netmodel::schedule::Step {
                at: Duration::from_secs(1),
                rate_bps: Some(0.5),
                ..Default::default()
            }],
            repeat: None,
        });
        assert!(slow_step.validate().is_err());
    }
}
