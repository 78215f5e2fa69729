//! Receive traces from the simulator: a sender paces packets to one 802.11ac station through a
//! wired backhaul into the access point ([`acp_netmodel::wifi::downlink`]); the trace lists the
//! packets the station received, in order, each with its sequence number and its MAC timestamp
//! (the end of the frame that carried it: packets of one A-MPDU share it, as the thesis's
//! MAC-timestamp captures show, §4.2). Those timestamps are the ground truth the estimators
//! learn from.
//!
//! The backhaul is an Ethernet link (38 bytes of preamble, inter-frame gap, header and FCS per
//! packet) with a drop-tail FIFO, optionally shared with Poisson cross-traffic that leaves at
//! the access point (§4.5.1's middlebox: `ethtool` link rates with a matching `txqueuelen`, or
//! `iperf` cross-traffic).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use acp_netmodel::wifi::ampdu::Aggregation;
use acp_netmodel::wifi::downlink::{Downlink, DownlinkConfig, RateControl, StationConfig, Traffic};
use acp_netmodel::wifi::phy::Mcs;
use acp_netmodel::{Parcel, Streams, Time};

/// Ethernet's per-packet overhead on the wire: preamble and SFD (8), inter-frame gap (12),
/// header (14) and FCS (4).
const ETHERNET_OVERHEAD: u32 = 38;

/// How long a run goes on after the last packet reached the access point.
const DRAIN: Duration = Duration::from_secs(1);

/// The wired link in front of the access point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Backhaul {
    /// Line rate (bit/s).
    pub rate_bps: f64,
    /// Packets its FIFO holds (the one being sent included).
    pub queue: usize,
    /// Poisson cross-traffic sharing it (bit/s of IP packets of the same size; 0: none).
    pub cross_bps: f64,
}

impl Backhaul {
    /// Gigabit Ethernet with a 1000-packet queue and no cross-traffic.
    pub fn gigabit() -> Self {
        Backhaul {
            rate_bps: 1e9,
            queue: 1000,
            cross_bps: 0.0,
        }
    }
}

/// One run: what is sent and over what.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceSpec {
    /// Send rate (bit/s of IP packets).
    pub send_bps: f64,
    /// Packets sent.
    pub packets: usize,
    /// IP packet size (bytes).
    pub packet_bytes: u32,
    /// The station's fixed rate: VHT MCS index, spatial streams, channel width (MHz).
    pub mcs: (u8, u8, u16),
    /// SNR of the station's link (dB).
    pub snr_db: f64,
    /// MSDUs per MPDU: 2 aggregates up to 128 packets, the thesis's A-MSDU handsets (§4.4).
    pub msdus_per_mpdu: usize,
    /// The wired link before the access point.
    pub backhaul: Backhaul,
}

impl TraceSpec {
    /// `packets` of 1500 bytes at `send_bps` to a station at MCS 9, 2 streams, 80 MHz and
    /// 35 dB, with A-MSDUs of two packets, over gigabit Ethernet.
    pub fn new(send_bps: f64, packets: usize) -> Self {
        TraceSpec {
            send_bps,
            packets,
            packet_bytes: 1500,
            mcs: (9, 2, 80),
            snr_db: 35.0,
            msdus_per_mpdu: 2,
            backhaul: Backhaul::gigabit(),
        }
    }

    /// The most packets one frame can carry.
    pub fn max_level(&self) -> usize {
        Aggregation::default().max_mpdus * self.msdus_per_mpdu
    }
}

/// A packet the station received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rx {
    /// Its sequence number (0 for the first sent).
    pub seq: u64,
    /// The end of the frame that delivered it (ns).
    pub mac_ns: u64,
}

/// Runs `spec` with `seed`; the packets received, in the order the station got them.
pub fn run(spec: &TraceSpec, seed: u64) -> Result<Vec<Rx>, String> {
    if !(spec.send_bps.is_finite() && spec.send_bps > 0.0) {
        return Err(format!(
            "send rate {} bit/s must be positive",
            spec.send_bps
        ));
    }
    let b = spec.backhaul;
    if !(b.rate_bps.is_finite() && b.rate_bps > 0.0 && b.cross_bps >= 0.0) || b.queue == 0 {
        return Err("the backhaul needs a positive rate, a queue and cross-traffic ≥ 0".into());
    }
    let streams = Streams::new(seed);
    let (index, nss, width) = spec.mcs;
    let mut config = DownlinkConfig::new(vec![StationConfig {
        rate: RateControl::Fixed(Mcs::new(index, nss, width)),
        snr_db: spec.snr_db,
        traffic: Traffic::Offered,
    }]);
    config.aggregation.msdus_per_mpdu = spec.msdus_per_mpdu;
    let mut downlink: Downlink<u64> = Downlink::new(config, &streams, "estimator", Time::ZERO)?;
    let at_ap = backhaul_exits(spec, &streams);
    let mut received = Vec::with_capacity(spec.packets);
    // Beacons never stop: the run ends a second after the last packet reached the AP, long
    // after its queue (at most 1000 packets) has drained.
    let end = at_ap.iter().flatten().max().copied().unwrap_or(Time::ZERO) + DRAIN;
    let mut next = at_ap
        .iter()
        .enumerate()
        .filter_map(|(s, t)| t.map(|t| (s, t)));
    let mut pending = next.next();
    // The next arrival or medium event, until the end.
    while let Some(now) = pending
        .map(|(_, t)| t)
        .into_iter()
        .chain(downlink.poll_timeout())
        .min()
        .filter(|&t| t <= end)
    {
        downlink.handle_timeout(now);
        while let Some((seq, t)) = pending.filter(|(_, t)| *t == now) {
            let parcel = Parcel {
                item: seq as u64,
                bytes: spec.packet_bytes,
                dscp: 0,
                source: 0,
            };
            // A full AP queue drops the packet: a hole the station sees.
            let _ = downlink.enqueue(t, 0, 1, parcel);
            pending = next.next();
        }
        while let Some(outcome) = downlink.poll_delivery(now) {
            if let Ok(d) = outcome {
                received.push(Rx {
                    seq: d.parcel.item,
                    mac_ns: d.at.as_nanos(),
                });
            }
        }
    }
    Ok(received)
}

/// When each of the sender's packets leaves the backhaul into the access point (`None`:
/// dropped at the backhaul's full FIFO).
fn backhaul_exits(spec: &TraceSpec, streams: &Streams) -> Vec<Option<Time>> {
    let b = spec.backhaul;
    let wire_s = f64::from(8 * (spec.packet_bytes + ETHERNET_OVERHEAD)) / b.rate_bps;
    let gap_s = f64::from(8 * spec.packet_bytes) / spec.send_bps;
    let cross_gap_s = f64::from(8 * spec.packet_bytes) / b.cross_bps;
    let mut phase = streams.stream("estimator sender phase");
    let mut cross = streams.stream("estimator cross-traffic");
    let mut next_cross = if b.cross_bps > 0.0 {
        cross.exp(cross_gap_s)
    } else {
        f64::INFINITY
    };
    let start = phase.unit() * gap_s;
    // Departure times of the packets in the FIFO (ours and cross-traffic's), oldest first.
    let mut fifo: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
    let mut last_departure = 0.0f64;
    let mut admit = |t: f64, fifo: &mut std::collections::VecDeque<f64>| -> Option<f64> {
        while fifo.front().is_some_and(|d| *d <= t) {
            fifo.pop_front();
        }
        if fifo.len() >= b.queue {
            return None;
        }
        last_departure = last_departure.max(t) + wire_s;
        fifo.push_back(last_departure);
        Some(last_departure)
    };
    (0..spec.packets)
        .map(|k| {
            let t = start + k as f64 * gap_s;
            while next_cross <= t {
                let _ = admit(next_cross, &mut fifo);
                next_cross += cross.exp(cross_gap_s);
            }
            admit(t, &mut fifo).map(|d| Time::ZERO + Duration::from_secs_f64(d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_backhaul_limits_the_rate_and_drops_at_its_queue() {
        let spec = TraceSpec {
            backhaul: Backhaul {
                rate_bps: 100e6,
                queue: 100,
                cross_bps: 0.0,
            },
            ..TraceSpec::new(200e6, 4000)
        };
        let exits = backhaul_exits(&spec, &Streams::new(1));
        let passed: Vec<f64> = exits.iter().flatten().map(|t| t.as_secs_f64()).collect();
        // 1538 bytes on the wire per packet at 100 Mbit/s: 123.04 µs apart once backlogged,
        // so 1500/1538 of half the packets of a 200 Mbit/s sender get through, plus the 100
        // the queue holds when the sender stops.
        let spacing = (passed[passed.len() - 1] - passed[200]) / (passed.len() - 201) as f64;
        assert!((spacing - 123.04e-6).abs() < 1e-9, "{spacing}");
        let share = passed.len() as f64 / 4000.0;
        let expected = 1500.0 / 1538.0 / 2.0 + 100.0 / 4000.0;
        assert!(
            (share - expected).abs() < 0.001,
            "{share} against {expected}"
        );
    }

    #[test]
    fn frames_group_packets_at_high_load_and_not_at_low_load() {
        let level = |bps: f64| {
            let rx = run(&TraceSpec::new(bps, 6000), 7).unwrap();
            let frames = 1 + rx.windows(2).filter(|w| w[0].mac_ns != w[1].mac_ns).count();
            rx.len() as f64 / frames as f64
        };
        let (low, high) = (level(20e6), level(500e6));
        assert!(low < 1.5, "20 Mbit/s: {low} packets per frame");
        assert!(high > 8.0, "500 Mbit/s: {high} packets per frame");
    }
}
