//! CoDel, the Controlled Delay queue management of RFC 8289, as the per-flow half of mac80211's
//! `fq_codel` ([`super::fq`] is the other half): a queue whose packets have waited longer than
//! `target` for at least `interval` enters a dropping state and drops packets at its head at
//! intervals of `interval / √count`, until a packet leaves having waited less than `target`.
//!
//! # Model
//!
//! RFC 8289's `dequeue` and `dodequeue` (§5.4–5.5) with its control law
//! `drop_next = t + interval / √count`, the count carried over from the last dropping state
//! when that ended less than 16 intervals ago. The caller's queue is reached through a closure
//! that takes out its oldest packet and tells when it was queued and how many bytes stay
//! behind it. The RFC keeps a queue holding at most one MTU from dropping (`maxpacket`);
//! mac80211 passes the flow's backlog and, as we read `ieee80211_txq_setup_flows` and
//! `sta_info.c`, sets no `mtu` in its CoDel parameters (zero), so a flow's last packet is never
//! dropped: that is the rule here.
//!
//! # Non-goals
//!
//! ECN marking (mac80211 marks ECN-capable packets instead of dropping them; the simulator's
//! packets are not ECN-capable) and mac80211's slower parameters for stations it expects to
//! run below 6 Mbit/s (target 50 ms, interval 300 ms).

use std::time::Duration;

use crate::Time;

/// CoDel's two parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodelParams {
    /// The sojourn time tolerated (RFC 8289: `TARGET`).
    pub target: Duration,
    /// How long it must be exceeded before a drop, and the control law's base (`INTERVAL`).
    pub interval: Duration,
}

impl CodelParams {
    /// mac80211's per-station defaults (`net/mac80211/sta_info.c`): target 20 ms, interval
    /// 100 ms.
    pub const MAC80211: CodelParams = CodelParams {
        target: Duration::from_millis(20),
        interval: Duration::from_millis(100),
    };
}

/// One queue's CoDel state (RFC 8289's `first_above_time_`, `drop_next_`, `count_`,
/// `lastcount_`, `dropping_`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Codel {
    first_above: Option<Time>,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// What one [`Codel::dequeue`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeued {
    /// Packets taken out and dropped, before the one sent.
    pub dropped: u32,
    /// Whether a packet was taken out to be sent (the last one taken out).
    pub sent: bool,
}

impl Codel {
    /// Takes packets out of the queue at `now` through `pop` (the oldest packet's enqueue
    /// time and the bytes left behind it, `None` when empty) until one is to be sent, dropping
    /// those CoDel drops on the way.
    pub fn dequeue(
        &mut self,
        p: &CodelParams,
        now: Time,
        mut pop: impl FnMut() -> Option<(Time, u64)>,
    ) -> Dequeued {
        let mut dropped = 0;
        let Some(mut ok_to_drop) = self.dodequeue(p, now, &mut pop) else {
            self.dropping = false;
            return Dequeued {
                dropped,
                sent: false,
            };
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                dropped += 1;
                self.count += 1;
                match self.dodequeue(p, now, &mut pop) {
                    None => {
                        self.dropping = false;
                        return Dequeued {
                            dropped,
                            sent: false,
                        };
                    }
                    Some(false) => self.dropping = false,
                    Some(true) => self.drop_next = control_law(p, self.drop_next, self.count),
                }
            }
        } else if ok_to_drop {
            dropped += 1;
            ok_to_drop = self.dodequeue(p, now, &mut pop).is_some();
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            let recent = now.saturating_since(self.drop_next) < 16 * p.interval;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = control_law(p, now, self.count);
            self.lastcount = self.count;
            if !ok_to_drop {
                return Dequeued {
                    dropped,
                    sent: false,
                };
            }
        }
        Dequeued {
            dropped,
            sent: true,
        }
    }

    /// RFC 8289's `dodequeue`: takes out the oldest packet; whether it may be dropped (`None`:
    /// the queue was empty).
    fn dodequeue(
        &mut self,
        p: &CodelParams,
        now: Time,
        pop: &mut impl FnMut() -> Option<(Time, u64)>,
    ) -> Option<bool> {
        let Some((queued_at, left)) = pop() else {
            self.first_above = None;
            return None;
        };
        if now.saturating_since(queued_at) < p.target || left == 0 {
            self.first_above = None;
            return Some(false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + p.interval);
                Some(false)
            }
            Some(t) => Some(now >= t),
        }
    }
}

/// `t + interval / √count`.
fn control_law(p: &CodelParams, t: Time, count: u32) -> Time {
    t + p.interval.div_f64(f64::from(count.max(1)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A queue of (enqueue time, bytes) and the CoDel in front of it.
    struct Q {
        packets: VecDeque<(Time, u64)>,
        codel: Codel,
    }

    impl Q {
        fn dequeue(&mut self, now: Time) -> Dequeued {
            let packets = &mut self.packets;
            self.codel.dequeue(&CodelParams::MAC80211, now, || {
                let (at, _) = packets.pop_front()?;
                Some((at, packets.iter().map(|&(_, b)| b).sum()))
            })
        }
    }

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn a_queue_below_target_never_drops() {
        // One packet a millisecond, served 10 ms after it arrives: under the 20 ms target.
        let mut q = Q {
            packets: VecDeque::new(),
            codel: Codel::default(),
        };
        for t in 0..2000 {
            q.packets.push_back((ms(t), 100));
            if t >= 10 {
                assert_eq!(
                    q.dequeue(ms(t)),
                    Dequeued {
                        dropped: 0,
                        sent: true
                    }
                );
            }
        }
    }

    #[test]
    fn a_standing_queue_is_dropped_from_after_one_interval_then_faster() {
        // 500 packets queued at 0, served one a millisecond from 50 ms: every sojourn is above
        // the target. The first drop comes one interval after the first packet above target
        // (150 ms); the dropping state's next drops interval/√count apart from the first's
        // drop_next = 150 + 100: 250, then 250 + 100/√2 = 320.7 (at 321), then + 100/√3 =
        // 378.5 (at 379).
        let mut q = Q {
            packets: (0..500).map(|_| (ms(0), 100)).collect(),
            codel: Codel::default(),
        };
        let mut drops = Vec::new();
        for t in 50..400 {
            let d = q.dequeue(ms(t));
            assert!(d.sent);
            if d.dropped > 0 {
                drops.push((t, d.dropped));
            }
        }
        assert_eq!(drops, vec![(150, 1), (250, 1), (321, 1), (379, 1)]);
    }

    #[test]
    fn the_last_packet_is_never_dropped() {
        // Two packets that waited long: the first is not dropped (the interval has not run
        // out), and the second, at the point it would be, is the queue's last.
        let mut q = Q {
            packets: VecDeque::from([(ms(0), 100), (ms(0), 100)]),
            codel: Codel::default(),
        };
        assert_eq!(
            q.dequeue(ms(500)),
            Dequeued {
                dropped: 0,
                sent: true
            }
        );
        assert_eq!(
            q.dequeue(ms(700)),
            Dequeued {
                dropped: 0,
                sent: true
            }
        );
        assert_eq!(
            q.dequeue(ms(800)),
            Dequeued {
                dropped: 0,
                sent: false
            }
        );
    }
}
