//! A link: outage → loss → queue discipline → server → propagation (+ jitter) → outage.
//!
//! The link is driven by its caller: [`Link::arrive`] when a packet reaches it,
//! [`Link::handle_timeout`] at (or after) [`Link::poll_timeout`], then [`Link::poll_departure`]
//! until it returns `None`. A link asks to be woken only for departures, so a packet crossing it
//! costs its caller one wake-up. Calling late is harmless: the link replays what happened in between
//! at the right virtual instants (a wall-clock relay is always a little late), so departure times
//! depend only on arrival times and the seed, never on when the caller looked.
//!
//! - **Outages** (blackhole windows, and a switch the caller may flip): a packet arriving during
//!   one is dropped, and so is a packet due to leave during one.
//! - **Loss**: a [`LossModel`] drawn on arrival.
//! - **Queue**: a [`Discipline`] with a [`QueueLimit`] counting the packet in service. A
//!   discipline that drops a packet it held to admit a fresher one, or pre-empts the packet in
//!   service ([`crate::freshest`]), has it handed back by [`Link::poll_departure`] as a
//!   [`DropReason::QueueFull`] drop at the instant of the arrival.
//! - **Server**: serialisation at the rate in force when service starts, deterministic
//!   (`8·bytes/rate`) or exponential with that mean; or the delivery opportunities of a [`Trace`].
//!   An infinite rate serves instantly.
//! - **Propagation**: the delay in force when service ends, plus, with [`Jitter`], a uniform draw
//!   in `[−max, +max]` (the total never below zero). Packets leave in order unless
//!   [`Jitter::reorder`] is set: a packet whose draw would overtake waits for the one before.
//!
//! Random draws come from three streams of the link's own (`"link NAME service"`, `"… loss"`,
//! `"… jitter"`), so two links built with the same name and seed behave identically whoever
//! drives them.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use acp_core::time::secs_to_duration;

use crate::loss::{Loss, LossModel};
use crate::queue::{Discipline, Occupancy, Parcel, QueueDiscipline, QueueLimit};
use crate::rng::{Rng, Streams};
use crate::schedule::{Schedule, Trace};
use crate::Time;

/// How long a packet occupies the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Service {
    /// `8 · bytes / rate`.
    #[default]
    Deterministic,
    /// Exponential with mean `8 · bytes / rate` (M/M/1-style servers).
    Exponential,
}

/// Random extra propagation delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jitter {
    /// Each packet's delay is moved by a uniform draw in `[−max, +max]`.
    pub max: Duration,
    /// Let packets overtake each other (otherwise order is kept).
    pub reorder: bool,
}

/// Largest accepted propagation delay (plus jitter).
pub const MAX_DELAY: Duration = Duration::from_secs(3600);

/// A link's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Bits per second (`f64::INFINITY`: no serialisation). Ignored when `trace` is set.
    pub rate_bps: f64,
    /// Propagation delay.
    pub delay: Duration,
    /// What the queue holds at most, counting the packet in service.
    pub limit: QueueLimit,
    /// Service-time model.
    pub service: Service,
    /// Queue discipline.
    pub discipline: Discipline,
    /// Random loss on arrival.
    pub loss: LossModel,
    /// Delay jitter (off by default).
    pub jitter: Option<Jitter>,
    /// Rate, delay and loss over time.
    pub schedule: Option<Schedule>,
    /// Delivery opportunities instead of a rate.
    pub trace: Option<Trace>,
    /// Blackhole windows: (start from the link's start, length).
    pub outages: Vec<(Duration, Duration)>,
}

impl LinkConfig {
    /// A drop-tail link with deterministic service and nothing else.
    pub fn new(rate_bps: f64, delay: Duration, limit: QueueLimit) -> Self {
        LinkConfig {
            rate_bps,
            delay,
            limit,
            service: Service::Deterministic,
            discipline: Discipline::DropTail,
            loss: LossModel::None,
            jitter: None,
            schedule: None,
            trace: None,
            outages: Vec::new(),
        }
    }

    /// Checks every parameter; the message names the one out of range.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps.is_nan() || self.rate_bps <= 0.0 {
            return Err(format!("rate {} bit/s must be positive", self.rate_bps));
        }
        if self.delay > MAX_DELAY {
            return Err(format!("delay {:?} exceeds {MAX_DELAY:?}", self.delay));
        }
        if matches!(self.limit, QueueLimit::Packets(0) | QueueLimit::Bytes(0)) {
            return Err("queue limit must be positive".into());
        }
        self.discipline.validate()?;
        self.loss.validate()?;
        if let Some(j) = self.jitter {
            if j.max > MAX_DELAY {
                return Err(format!("jitter {:?} exceeds {MAX_DELAY:?}", j.max));
            }
        }
        if let Some(s) = &self.schedule {
            s.validate().map_err(|e| format!("schedule: {e}"))?;
            if self.trace.is_some() && s.steps.iter().any(|s| s.rate_bps.is_some()) {
                return Err("a trace sets the rate; the schedule may not".into());
            }
        }
        if self.outages.iter().any(|&(_, len)| len.is_zero()) {
            return Err("an outage must last longer than zero".into());
        }
        Ok(())
    }
}

/// Why a packet did not get through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The link was in an outage when it arrived or was due to leave.
    Outage,
    /// Random loss.
    Loss,
    /// The queue was full (or, with [`Discipline::Freshest`], a fresher update displaced it).
    QueueFull,
}

/// A packet the link dropped, given back to the caller.
#[derive(Debug, PartialEq, Eq)]
pub struct Dropped<P> {
    /// Why.
    pub reason: DropReason,
    /// The packet.
    pub parcel: Parcel<P>,
    /// When its service ended, if it was dropped after service (an outage as it was due to leave).
    pub served_at: Option<Time>,
}

/// A packet leaving the link.
#[derive(Debug, PartialEq, Eq)]
pub struct Departure<P> {
    /// When it reaches the far end.
    pub at: Time,
    /// When its service ended (it left the queue).
    pub served_at: Time,
    /// The packet.
    pub parcel: Parcel<P>,
}

/// What happened to an arrival.
pub type Admission<P> = Result<(), Dropped<P>>;

/// Counters of one link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets offered.
    pub arrived: u64,
    /// Dropped by random loss.
    pub lost: u64,
    /// Dropped because the queue was full, or displaced (waiting or in service) by a fresher
    /// update.
    pub dropped_queue: u64,
    /// Dropped by an outage (on arrival or departure).
    pub dropped_outage: u64,
    /// Packets whose service ended.
    pub served: u64,
    /// Bytes whose service ended.
    pub bytes_served: u64,
    /// Total service time of the packets served (ns).
    pub busy_ns: u64,
    /// Packets handed out by [`Link::poll_departure`].
    pub departed: u64,
}

#[derive(Debug)]
struct InService<P> {
    parcel: Parcel<P>,
    started: Time,
    ends: Time,
}

/// A running link.
pub struct Link<P> {
    cfg: LinkConfig,
    start: Time,
    rate_bps: f64,
    delay: Duration,
    loss: Loss,
    service_rng: Rng,
    jitter_rng: Rng,
    queue: Box<dyn QueueDiscipline<P>>,
    serving: Option<InService<P>>,
    next_step: u64,
    /// Next unused trace opportunity, and the bytes left of the one used last (at that time).
    next_opportunity: u64,
    credit: (Time, u32),
    line: VecDeque<Departure<P>>,
    /// Packets the discipline dropped for fresher ones, and when.
    displaced: VecDeque<(Time, Parcel<P>)>,
    last_out: Time,
    down: bool,
    counters: LinkCounters,
}

impl<P> fmt::Debug for Link<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("cfg", &self.cfg)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl<P: fmt::Debug + Send + 'static> Link<P> {
    /// A link called `name` (its random streams' label), started at `start`. The configuration
    /// should have passed [`LinkConfig::validate`].
    pub fn new(cfg: LinkConfig, streams: &Streams, name: &str, start: Time) -> Self {
        let stream = |what: &str| streams.stream(&format!("link {name} {what}"));
        let mut link = Link {
            rate_bps: cfg.rate_bps,
            delay: cfg.delay,
            loss: Loss::new(cfg.loss, stream("loss")),
            service_rng: stream("service"),
            jitter_rng: stream("jitter"),
            queue: cfg.discipline.build(cfg.limit),
            serving: None,
            next_step: 0,
            next_opportunity: 0,
            credit: (Time::ZERO, 0),
            line: VecDeque::new(),
            displaced: VecDeque::new(),
            last_out: Time::ZERO,
            down: false,
            counters: LinkCounters::default(),
            start,
            cfg,
        };
        let rate = link
            .cfg
            .trace
            .as_ref()
            .map_or(link.rate_bps, Trace::mean_rate_bps);
        link.queue.set_rate(rate);
        link.apply_schedule(start);
        link
    }
}

impl<P> Link<P> {
    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// The counters.
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// Packets held (waiting and in service).
    pub fn occupancy(&self) -> Occupancy {
        self.queue.occupancy() + self.in_service()
    }

    /// Turns the caller's outage switch on or off (on top of the configured windows).
    pub fn set_down(&mut self, down: bool) {
        self.down = down;
    }

    /// Whether the link is in an outage at `t`.
    pub fn is_down(&self, t: Time) -> bool {
        self.down
            || self.cfg.outages.iter().any(|&(from, len)| {
                let a = self.start + from;
                t >= a && t < a + len
            })
    }

    /// A packet arrives at `now`. Dropped packets are given back.
    pub fn arrive(&mut self, now: Time, parcel: Parcel<P>) -> Admission<P> {
        self.handle_timeout(now);
        self.counters.arrived += 1;
        let verdict = if self.is_down(now) {
            self.counters.dropped_outage += 1;
            Err((DropReason::Outage, parcel))
        } else if self.loss.lose() {
            self.counters.lost += 1;
            Err((DropReason::Loss, parcel))
        } else {
            // Pre-empt only for an arrival that the emptied server will take.
            let fits = self.cfg.limit.admits(self.queue.occupancy(), parcel.bytes);
            if fits && self.queue.preempts_service() {
                self.preempt(now);
            }
            let held = self.in_service();
            let verdict = self.queue.enqueue(now, parcel, held);
            while let Some(old) = self.queue.take_displaced() {
                self.counters.dropped_queue += 1;
                self.displaced.push_back((now, old));
            }
            verdict.map_err(|parcel| {
                self.counters.dropped_queue += 1;
                (DropReason::QueueFull, parcel)
            })
        };
        match verdict {
            Ok(()) => {
                self.start_service(now);
                Ok(())
            }
            Err((reason, parcel)) => Err(Dropped {
                reason,
                parcel,
                served_at: None,
            }),
        }
    }

    /// When [`Link::poll_departure`] may next have something: the next departure. Service ends
    /// need no wake-up of their own (they are replayed by the next call), so on a link without
    /// jitter or schedule the packet in service is woken for at its own departure,
    /// `max(end + delay, last departure)`; with jitter or a schedule, whose delay is only known
    /// at the end of service, at the end of its service.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        let serving = self.serving.as_ref().map(|s| {
            if self.cfg.jitter.is_some() || self.cfg.schedule.is_some() {
                s.ends
            } else {
                (s.ends + self.delay).max(self.last_out)
            }
        });
        let leaving = [
            self.line.front().map(|d| d.at),
            self.displaced.front().map(|d| d.0),
        ]
        .into_iter()
        .flatten()
        .min();
        match (serving, leaving) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Plays every service end up to `now`, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        while let Some(ends) = self.serving.as_ref().map(|s| s.ends) {
            if ends > now {
                break;
            }
            self.apply_schedule(ends);
            if let Some(done) = self.serving.take() {
                self.finish(done);
            }
            self.start_service(ends);
        }
        self.apply_schedule(now);
    }

    /// The next packet that has reached the far end by `now` (call [`Link::handle_timeout`]
    /// first), or one dropped by an outage as it was due to leave.
    pub fn poll_departure(&mut self, now: Time) -> Option<Result<Departure<P>, Dropped<P>>> {
        if self.displaced.front().is_some_and(|d| d.0 <= now) {
            let (_, parcel) = self.displaced.pop_front()?;
            return Some(Err(Dropped {
                reason: DropReason::QueueFull,
                parcel,
                served_at: None,
            }));
        }
        if self.line.front()?.at > now {
            return None;
        }
        let d = self.line.pop_front()?;
        if self.is_down(d.at) {
            self.counters.dropped_outage += 1;
            return Some(Err(Dropped {
                reason: DropReason::Outage,
                parcel: d.parcel,
                served_at: Some(d.served_at),
            }));
        }
        self.counters.departed += 1;
        Some(Ok(d))
    }

    /// Packets served and still propagating, in departure order.
    pub fn propagating(&self) -> impl Iterator<Item = &Departure<P>> {
        self.line.iter()
    }

    fn in_service(&self) -> Occupancy {
        self.serving
            .as_ref()
            .map_or(Occupancy::default(), |s| Occupancy {
                packets: 1,
                bytes: u64::from(s.parcel.bytes),
            })
    }

    /// Applies the schedule's steps up to `t`.
    #[inline]
    fn apply_schedule(&mut self, t: Time) {
        if self.cfg.schedule.is_some() {
            self.apply_steps(t);
        }
    }

    fn apply_steps(&mut self, t: Time) {
        let Some(schedule) = &self.cfg.schedule else {
            return;
        };
        while let Some(at) = schedule.time_of(self.next_step, self.start) {
            if at > t {
                break;
            }
            let step = schedule.step(self.next_step);
            if let Some(r) = step.rate_bps {
                self.rate_bps = r;
                self.queue.set_rate(r);
            }
            if let Some(d) = step.delay {
                self.delay = d;
            }
            if let Some(l) = step.loss {
                self.loss.set_model(l);
            }
            self.next_step += 1;
        }
    }

    /// Drops the packet in service at `now` for an arrival that pre-empts it; the server's time
    /// so far counts as busy.
    fn preempt(&mut self, now: Time) {
        if let Some(done) = self.serving.take() {
            self.counters.dropped_queue += 1;
            self.counters.busy_ns += now.nanos_since(done.started);
            self.displaced.push_back((now, done.parcel));
        }
    }

    /// Starts serving the next packet at `t` if the server is free.
    fn start_service(&mut self, t: Time) {
        if self.serving.is_some() {
            return;
        }
        let Some(parcel) = self.queue.dequeue(t) else {
            return;
        };
        let ends = self.service_end(t, parcel.bytes);
        self.serving = Some(InService {
            parcel,
            started: t,
            ends,
        });
    }

    fn service_end(&mut self, t: Time, bytes: u32) -> Time {
        if let Some(trace) = &self.cfg.trace {
            return Self::trace_end(
                trace,
                self.start,
                t,
                bytes,
                &mut self.next_opportunity,
                &mut self.credit,
            );
        }
        if self.rate_bps.is_infinite() {
            return t;
        }
        let mean = 8.0 * f64::from(bytes) / self.rate_bps;
        let secs = match self.cfg.service {
            Service::Deterministic => mean,
            Service::Exponential => self.service_rng.exp(mean),
        };
        t + secs_to_duration(secs)
    }

    /// When a packet of `bytes` starting service at `t` has been carried by the trace's
    /// opportunities (using first what is left of an opportunity at `t` itself).
    fn trace_end(
        trace: &Trace,
        start: Time,
        t: Time,
        bytes: u32,
        next: &mut u64,
        credit: &mut (Time, u32),
    ) -> Time {
        let mut need = bytes;
        if credit.0 == t && credit.1 > 0 {
            let used = need.min(credit.1);
            credit.1 -= used;
            need -= used;
            if need == 0 {
                return t;
            }
        }
        let mut k = (*next).max(trace.first_at_or_after(t.nanos_since(start)));
        loop {
            let at = Time::from_nanos(start.as_nanos().saturating_add(trace.offset_of(k)));
            k += 1;
            if need <= trace.mtu {
                *next = k;
                *credit = (at, trace.mtu - need);
                return at;
            }
            need -= trace.mtu;
        }
    }

    /// A packet's service ended: it starts propagating.
    fn finish(&mut self, done: InService<P>) {
        let c = &mut self.counters;
        c.served += 1;
        c.bytes_served += u64::from(done.parcel.bytes);
        c.busy_ns += done.ends.nanos_since(done.started);
        let mut delay = self.delay;
        let mut reorder = false;
        if let Some(j) = self.cfg.jitter {
            let max = j.max.as_secs_f64();
            let moved = self.delay.as_secs_f64() + self.jitter_rng.uniform(-max, max);
            delay = secs_to_duration(moved);
            reorder = j.reorder;
        }
        let mut at = done.ends + delay;
        let departure = |at| Departure {
            at,
            served_at: done.ends,
            parcel: done.parcel,
        };
        if reorder {
            // Keep the line sorted by departure time, first come first out among equals.
            let pos = self.line.partition_point(|d| d.at <= at);
            self.line.insert(pos, departure(at));
        } else {
            at = at.max(self.last_out);
            self.last_out = at;
            self.line.push_back(departure(at));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn parcel(item: u32, bytes: u32) -> Parcel<u32> {
        Parcel {
            item,
            bytes,
            dscp: 0,
            source: 0,
        }
    }

    fn link(cfg: LinkConfig) -> Link<u32> {
        assert_eq!(cfg.validate(), Ok(()));
        Link::new(cfg, &Streams::new(1), "a→b", Time::ZERO)
    }

    fn basic(rate: f64, delay_ms: u64, queue: usize) -> LinkConfig {
        LinkConfig::new(
            rate,
            Duration::from_millis(delay_ms),
            QueueLimit::Packets(queue),
        )
    }

    /// Drives the link as an event loop would: arrivals at their times, wake-ups at
    /// `poll_timeout`, and returns (item, departure time) of everything delivered.
    pub(crate) fn run(l: &mut Link<u32>, arrivals: &[(Time, Parcel<u32>)]) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        let mut pending: VecDeque<_> = arrivals.iter().cloned().collect();
        loop {
            let next_arrival = pending.front().map(|(t, _)| *t);
            let wake = l.poll_timeout();
            let now = match (next_arrival, wake) {
                (Some(a), Some(w)) => a.min(w),
                (a, w) => match a.or(w) {
                    Some(t) => t,
                    None => return out,
                },
            };
            l.handle_timeout(now);
            while let Some(d) = l.poll_departure(now) {
                if let Ok(d) = d {
                    out.push((d.parcel.item, d.at));
                }
            }
            if next_arrival == Some(now) {
                if let Some((t, p)) = pending.pop_front() {
                    let _ = l.arrive(t, p);
                }
            }
        }
    }

    #[test]
    fn serialisation_then_delay_at_the_link_rate() {
        // 125 B = 1000 bit at 1 Mbit/s = 1 ms each, then 5 ms.
        let mut l = link(basic(1e6, 5, 100));
        let arrivals: Vec<_> = (0..4).map(|i| (Time::ZERO, parcel(i, 125))).collect();
        let out = run(&mut l, &arrivals);
        assert_eq!(out, [(0, ms(6)), (1, ms(7)), (2, ms(8)), (3, ms(9))]);
        assert_eq!(l.counters().busy_ns, 4_000_000);
    }

    #[test]
    fn queue_limit_counts_the_packet_in_service() {
        let mut l = link(basic(1e6, 0, 3));
        let verdicts: Vec<_> = (0..5)
            .map(|i| l.arrive(Time::ZERO, parcel(i, 125)).map_err(|d| d.reason))
            .collect();
        assert_eq!(
            verdicts,
            [
                Ok(()),
                Ok(()),
                Ok(()),
                Err(DropReason::QueueFull),
                Err(DropReason::QueueFull)
            ]
        );
        // When the first finishes (1 ms) a slot frees.
        assert!(l.arrive(ms(1), parcel(5, 125)).is_ok());
    }

    #[test]
    fn late_callers_get_the_same_departures() {
        // A wall-clock caller that looks only every 7 ms sees the same departure times.
        let mut a = link(basic(1e6, 3, 100));
        let mut b = link(basic(1e6, 3, 100));
        let arrivals: Vec<_> = (0..20)
            .map(|i| (ms(i / 2), parcel(i as u32, 250)))
            .collect();
        let exact = run(&mut a, &arrivals);
        let mut late = Vec::new();
        let mut now = Time::ZERO;
        let mut it = arrivals.iter().peekable();
        while late.len() < exact.len() {
            while let Some((t, p)) = it.next_if(|(t, _)| *t <= now) {
                let _ = b.arrive(*t, p.clone());
            }
            b.handle_timeout(now);
            while let Some(Ok(d)) = b.poll_departure(now) {
                late.push((d.parcel.item, d.at));
            }
            now += Duration::from_millis(7);
        }
        assert_eq!(exact, late);
    }

    #[test]
    fn exponential_service_has_its_mean() {
        let mut l = link(LinkConfig {
            service: Service::Exponential,
            ..basic(1e6, 0, 1_000_000)
        });
        let n = 100_000u32;
        for i in 0..n {
            let _ = l.arrive(Time::ZERO, parcel(i, 125));
        }
        l.handle_timeout(Time::MAX);
        let mean = l.counters().busy_ns as f64 / f64::from(n) * 1e-9;
        // Mean of 10⁵ exponentials of mean 1 ms: standard error 3.2 µs; ±15 µs is ~5σ.
        assert!((mean - 1e-3).abs() < 15e-6, "{mean}");
    }

    #[test]
    fn strict_priority_is_not_preemptive() {
        let mut l = link(LinkConfig {
            discipline: Discipline::StrictPriority {
                classes: vec![vec![46]],
            },
            ..basic(1e6, 0, 100)
        });
        let hi = |item| Parcel {
            item,
            bytes: 125,
            dscp: 46,
            source: 0,
        };
        let arrivals = [
            (ms(0), parcel(1, 125)),
            (Time::from_micros(100), parcel(2, 125)),
            (Time::from_micros(200), hi(3)),
        ];
        let order: Vec<u32> = run(&mut l, &arrivals).into_iter().map(|(i, _)| i).collect();
        assert_eq!(order, [1, 3, 2]);
    }

    #[test]
    fn outages_drop_on_arrival_and_on_departure() {
        let mut l = link(LinkConfig {
            outages: vec![(Duration::from_millis(10), Duration::from_millis(5))],
            ..basic(1e6, 8, 100)
        });
        // Leaves at 1 + 8 = 9 ms: before the outage. Arrives at 4: leaves at 13, inside it.
        // Arrives at 12: inside. Arrives at 15: after (the window is half-open).
        let arrivals = [
            (ms(0), parcel(1, 125)),
            (ms(4), parcel(2, 125)),
            (ms(12), parcel(3, 125)),
            (ms(15), parcel(4, 125)),
        ];
        let out = run(&mut l, &arrivals);
        assert_eq!(out, [(1, ms(9)), (4, ms(24))]);
        assert_eq!(l.counters().dropped_outage, 2);
        l.set_down(true);
        assert!(l.arrive(ms(100), parcel(5, 125)).is_err());
    }

    #[test]
    fn jitter_keeps_order_unless_asked() {
        let jittered = |reorder| {
            let mut l = link(LinkConfig {
                jitter: Some(Jitter {
                    max: Duration::from_millis(10),
                    reorder,
                }),
                ..basic(f64::INFINITY, 20, 10_000)
            });
            let arrivals: Vec<_> = (0..2000)
                .map(|i| (Time::from_micros(100 * i), parcel(i as u32, 100)))
                .collect();
            run(&mut l, &arrivals)
        };
        let in_order = jittered(false);
        assert!(in_order
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let reordered = jittered(true);
        assert_eq!(reordered.len(), 2000);
        assert!(
            reordered.windows(2).all(|w| w[0].1 <= w[1].1),
            "sorted by time"
        );
        assert!(
            reordered.windows(2).any(|w| w[0].0 > w[1].0),
            "some overtook"
        );
        // Each delay is 20 ms ± 10 ms.
        for (i, at) in &reordered {
            let d = at.nanos_since(Time::from_micros(100 * u64::from(*i)));
            assert!((10_000_000..=30_000_000).contains(&d), "{d}");
        }
    }

    #[test]
    fn schedule_changes_rate_delay_and_loss() {
        use crate::schedule::Step;
        let mut l = link(LinkConfig {
            schedule: Some(Schedule {
                steps: vec![
                    Step {
                        at: Duration::from_millis(10),
                        rate_bps: Some(2e6),
                        delay: Some(Duration::from_millis(1)),
                        ..Step::default()
                    },
                    Step {
                        at: Duration::from_millis(20),
                        loss: Some(LossModel::Bernoulli { p: 1.0 }),
                        ..Step::default()
                    },
                ],
                repeat: None,
            }),
            ..basic(1e6, 5, 100)
        });
        let arrivals = [
            (ms(0), parcel(1, 125)),  // 1 ms at 1 Mbit/s, + 5 ms
            (ms(10), parcel(2, 125)), // 0.5 ms at 2 Mbit/s, + 1 ms
            (ms(20), parcel(3, 125)), // lost
        ];
        let out = run(&mut l, &arrivals);
        assert_eq!(out, [(1, ms(6)), (2, Time::from_micros(11_500))]);
        assert_eq!(l.counters().lost, 1);
    }

    #[test]
    fn trace_delivers_exactly_its_opportunities() {
        // Opportunities at 1, 1, 3 and 5 ms, looping every 5 ms; MTU-sized packets, one each.
        let trace = Trace::parse("1\n1\n3\n5\n").unwrap();
        let mut l = link(LinkConfig {
            trace: Some(trace.clone()),
            ..basic(1.0, 0, 10_000)
        });
        let arrivals: Vec<_> = (0..40).map(|i| (Time::ZERO, parcel(i, 1500))).collect();
        let out = run(&mut l, &arrivals);
        let want: Vec<Time> = (0..40)
            .map(|k| Time::from_nanos(trace.offset_of(k)))
            .collect();
        assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), want);

        // Small packets share an opportunity's bytes; an idle link wastes them.
        let mut l = link(LinkConfig {
            trace: Some(trace),
            ..basic(1.0, 0, 10_000)
        });
        let arrivals = [
            (ms(0), parcel(1, 1000)),
            (ms(0), parcel(2, 500)),
            (ms(0), parcel(3, 600)),
            (Time::from_micros(3_500), parcel(4, 100)),
        ];
        let out = run(&mut l, &arrivals);
        // 1 and 2 share the first 1 ms opportunity, 3 takes the second; 4 waits for 5 ms.
        assert_eq!(out, [(1, ms(1)), (2, ms(1)), (3, ms(1)), (4, ms(5))]);
    }

    #[test]
    fn freshest_hands_back_what_a_fresher_update_displaced() {
        let mut l = link(LinkConfig {
            discipline: Discipline::Freshest { preempt: false },
            ..basic(1e6, 0, 100)
        });
        let of = |item, source| Parcel {
            source,
            ..parcel(item, 125)
        };
        // 1 is in service until 1 ms; 2 and 4 of source 5 wait in turn, 4 replacing 2 at 0.3 ms;
        // 3 of source 6 waits behind.
        for (t, p) in [
            (0, of(1, 5)),
            (100, of(2, 5)),
            (200, of(3, 6)),
            (300, of(4, 5)),
        ] {
            assert!(l.arrive(Time::from_micros(t), p).is_ok());
        }
        assert_eq!(l.poll_timeout(), Some(Time::from_micros(300)));
        let dropped = l.poll_departure(Time::from_micros(300));
        assert!(
            matches!(dropped, Some(Err(Dropped { reason: DropReason::QueueFull, ref parcel, served_at: None })) if parcel.item == 2)
        );
        let out = run(&mut l, &[]);
        assert_eq!(out, [(1, ms(1)), (4, ms(2)), (3, ms(3))]);
        assert_eq!(l.counters().dropped_queue, 1);
    }

    #[test]
    fn freshest_preempt_drops_the_packet_in_service() {
        let mut l = link(LinkConfig {
            discipline: Discipline::Freshest { preempt: true },
            ..basic(1e6, 0, 100)
        });
        let arrivals = [
            (ms(0), parcel(1, 125)),
            (Time::from_micros(400), parcel(2, 125)),
            (Time::from_micros(900), parcel(3, 125)),
            (ms(3), parcel(4, 125)),
        ];
        // 1 and 2 are pre-empted; 3 is served in full from 0.9 ms, 4 alone from 3 ms.
        let out = run(&mut l, &arrivals);
        assert_eq!(out, [(3, Time::from_micros(1900)), (4, ms(4))]);
        let c = l.counters();
        assert_eq!((c.dropped_queue, c.served), (2, 2));
        // Busy: 0.4 + 0.5 ms pre-empted, then two whole services.
        assert_eq!(c.busy_ns, 2_900_000);
    }
}
