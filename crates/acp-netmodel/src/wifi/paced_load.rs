//! Paced downlink load on a [`Downlink`], measured as the aggregation thesis measures it (§5.2):
//! a sender paces packets to each station at a constant rate, and each station sends a small
//! feedback packet back at a fixed interval.
//!
//! [`run`] drives the downlink over a warm-up and a measured window and reports, per station,
//! the mean aggregation level (packets per A-MPDU, retransmission frames included, as a
//! receiver's MAC timestamps count them), the mean delay from the AP's queue to the end of the
//! frame that delivered the packet, the goodput, the losses, and the rate most used.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use super::downlink::{Downlink, DownlinkConfig, Traffic};
use super::phy::Mcs;
use crate::queue::Parcel;
use crate::rng::Streams;
use crate::Time;

/// What is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct PacedLoad {
    /// Packets per second to each station (`[k − 1]` for station `k`; ignored for a legacy
    /// station, whose queue is never empty).
    pub rate_pps: Vec<f64>,
    /// Bytes per packet (an IP packet).
    pub packet_bytes: u32,
    /// Feedback: every station sends a packet of `.1` bytes to the AP every `.0`.
    pub feedback: Option<(Duration, u32)>,
    /// Not measured.
    pub warmup: Duration,
    /// Measured, after the warm-up.
    pub duration: Duration,
}

/// One station's measurements over the measured window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StationStats {
    /// A-MPDUs that started in the window.
    pub frames: u64,
    /// Packets per A-MPDU.
    pub mean_aggregation: f64,
    /// Mean delay of the packets sent in the window and delivered, from reaching the AP to the
    /// end of the frame that delivered them (s); `None` for a legacy station.
    pub mean_delay: Option<f64>,
    /// The part of it before that frame started: the wait at the AP, the delay the §5.2 model
    /// bounds (s); `None` for a legacy station.
    pub mean_wait: Option<f64>,
    /// Delivered payload bit/s over the window.
    pub goodput_bps: f64,
    /// Fraction of the packets sent in the window that were dropped (queue or retry limit).
    pub loss: f64,
    /// The MCS of most of its frames.
    pub mcs: Mcs,
    /// Fraction of its frames at that MCS.
    pub mcs_share: f64,
}

/// A packet in flight: its station and when it reached the AP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    station: usize,
    at: Time,
}

#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    delivered: u64,
    dropped: u64,
    delay_s: f64,
    wait_s: f64,
    frames: u64,
    packets: u64,
    received_packets: u64,
    by_mcs: HashMap<Mcs, u64>,
}

/// Runs `load` on a downlink of `config` with `seed` (each station's pacing starts at a random
/// phase, stream `"paced NAME station K phase"`).
pub fn run(
    config: DownlinkConfig,
    load: &PacedLoad,
    seed: u64,
) -> Result<Vec<StationStats>, String> {
    let n = config.stations.len();
    if load.rate_pps.len() != n {
        return Err(format!("{} rates for {n} stations", load.rate_pps.len()));
    }
    if let Some(bad) = load.rate_pps.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(format!("rate {bad} packets/s must be finite and positive"));
    }
    let streams = Streams::new(seed);
    let legacy: Vec<bool> = config
        .stations
        .iter()
        .map(|s| matches!(s.traffic, Traffic::Saturated { .. }))
        .collect();
    let mut dl: Downlink<Stamp> = Downlink::new(config, &streams, "paced", Time::ZERO)?;
    let gaps: Vec<Duration> = load
        .rate_pps
        .iter()
        .map(|r| Duration::from_secs_f64(1.0 / r))
        .collect();
    let mut next_packet: Vec<Option<Time>> = (0..n)
        .map(|i| {
            let mut rng = streams.stream(&format!("paced station {} phase", i + 1));
            (!legacy[i]).then(|| Time::ZERO + gaps[i].mul_f64(rng.unit()))
        })
        .collect();
    let mut next_feedback: Vec<Option<Time>> = (0..n)
        .map(|i| {
            load.feedback.map(|(every, _)| {
                let mut rng = streams.stream(&format!("paced station {} feedback", i + 1));
                Time::ZERO + every.mul_f64(rng.unit())
            })
        })
        .collect();
    let start = Time::ZERO + load.warmup;
    let end = start + load.duration;
    let mut tally: Vec<Tally> = (0..n).map(|_| Tally::default()).collect();
    // Per station, (end, start) of its recent frames: a delivery at `end` came in that frame.
    let mut recent: Vec<VecDeque<(Time, Time)>> = vec![VecDeque::new(); n];
    loop {
        let arrivals = next_packet
            .iter()
            .chain(&next_feedback)
            .flatten()
            .min()
            .copied();
        let Some(now) = arrivals.into_iter().chain(dl.poll_timeout()).min() else {
            break;
        };
        if now > end {
            break;
        }
        dl.handle_timeout(now);
        for i in 0..n {
            if next_packet[i] == Some(now) {
                next_packet[i] = Some(now + gaps[i]);
                let parcel = Parcel {
                    item: Stamp {
                        station: i,
                        at: now,
                    },
                    bytes: load.packet_bytes,
                    dscp: 0,
                    source: i as u64,
                };
                let measured = now >= start;
                tally[i].sent += u64::from(measured);
                if dl.enqueue(now, 0, i + 1, parcel).is_err() {
                    tally[i].dropped += u64::from(measured);
                }
            }
            if next_feedback[i] == Some(now) {
                if let Some((every, bytes)) = load.feedback {
                    next_feedback[i] = Some(now + every);
                    let parcel = Parcel {
                        item: Stamp {
                            station: i,
                            at: now,
                        },
                        bytes,
                        dscp: 0,
                        source: i as u64,
                    };
                    // A full uplink queue just loses a report.
                    let _ = dl.enqueue(now, i + 1, 0, parcel);
                }
            }
        }
        for f in dl.take_frames() {
            recent[f.station - 1].push_back((f.end, f.start));
            if f.start >= start && f.end <= end {
                let t = &mut tally[f.station - 1];
                t.frames += 1;
                t.packets += f.packets as u64;
                t.received_packets += f.received as u64;
                *t.by_mcs.entry(f.mcs).or_default() += 1;
            }
        }
        while let Some(outcome) = dl.poll_delivery(now) {
            let (item, delivered_at) = match outcome {
                Ok(d) if d.to != 0 => (d.parcel.item, Some(d.at)),
                Ok(_) => continue,
                Err(d) => (d.parcel.item, None),
            };
            if item.at < start {
                continue;
            }
            let t = &mut tally[item.station];
            match delivered_at {
                Some(at) => {
                    let frames = &mut recent[item.station];
                    while frames.front().is_some_and(|(e, _)| *e < at) {
                        frames.pop_front();
                    }
                    let began = frames.front().map_or(at, |(_, s)| *s);
                    t.delivered += 1;
                    t.delay_s += (at - item.at).as_secs_f64();
                    t.wait_s += began.saturating_since(item.at).as_secs_f64();
                }
                None => t.dropped += 1,
            }
        }
    }
    let secs = load.duration.as_secs_f64();
    Ok(tally
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let (mcs, most) = t
                .by_mcs
                .iter()
                .max_by_key(|(m, c)| (**c, m.index, m.spatial_streams))
                .map_or((Mcs::new(0, 1, 20), 0), |(m, c)| (*m, *c));
            let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            let bytes = if legacy[i] {
                t.received_packets
            } else {
                t.delivered
            };
            StationStats {
                frames: t.frames,
                mean_aggregation: per(t.packets, t.frames),
                mean_delay: (!legacy[i] && t.delivered > 0).then(|| t.delay_s / t.delivered as f64),
                mean_wait: (!legacy[i] && t.delivered > 0).then(|| t.wait_s / t.delivered as f64),
                goodput_bps: 8.0 * f64::from(load.packet_bytes) * bytes as f64 / secs,
                loss: per(t.dropped, t.sent),
                mcs,
                mcs_share: per(most, t.frames),
            }
        })
        .collect())
}
