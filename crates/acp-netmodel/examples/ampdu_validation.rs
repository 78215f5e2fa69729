//! Prints the 802.11ac A-MPDU downlink against the aggregation thesis's §5.2 model: mean
//! aggregation level and mean delay against the send rate, for one and two stations, with `c`
//! and `w` derived from the standard and fitted from the runs, beside the thesis's testbed
//! parameters; then eight Minstrel stations placed at random, and legacy stations.
//!
//! `cargo run --release -p acp-netmodel --example ampdu_validation [SECONDS]` (default 10
//! measured seconds per point after 1 s of warm-up; seed 1).

use std::time::Duration;

use acp_netmodel::wifi::aggregation_model::AggregationModel;
use acp_netmodel::wifi::channel::{ChannelConfig, Placement, WifiFrames};
use acp_netmodel::wifi::downlink::{DownlinkConfig, RateControl, StationConfig, Traffic};
use acp_netmodel::wifi::minstrel::MinstrelConfig;
use acp_netmodel::wifi::paced_load::{run, PacedLoad};
use acp_netmodel::wifi::phy::{edca_defaults, Mcs, PhyConfig, Standard};
use acp_netmodel::Streams;

const PACKET: u32 = 1500;

fn main() {
    let secs: f64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 10.0,
        Some(Ok(s)) if s > 0.0 => s,
        Some(_) => {
            eprintln!("usage: ampdu_validation [SECONDS > 0]");
            std::process::exit(2);
        }
    };
    let load = |rates: Vec<f64>| PacedLoad {
        rate_pps: rates,
        packet_bytes: PACKET,
        feedback: None,
        warmup: Duration::from_secs(1),
        duration: Duration::from_secs_f64(secs),
    };
    let be = edca_defaults(Standard::Ac)[1];
    for (label, mcs, thesis) in [
        ("80 MHz, 2 streams, MCS 9 (780 Mbit/s; thesis Fig. 5.3(a))", Mcs::new(9, 2, 80), None),
        (
            "80 MHz, 2 streams, MCS 7 (585 Mbit/s; thesis testbed c = 270 µs, μ_R = 585 Mbit/s)",
            Mcs::new(7, 2, 80),
            Some((270e-6, 585e6, 1)),
        ),
        (
            "80 MHz, 2 streams, MCS 9 SGI (866.7 Mbit/s; thesis testbed two stations c = 320 µs, μ_R = 850 Mbit/s)",
            Mcs::new(9, 2, 80).short_gi(),
            Some((320e-6, 850e6, 2)),
        ),
    ] {
        let phy = PhyConfig::ac(mcs);
        let counts: &[usize] = match thesis {
            Some((_, _, n)) => &[n][..],
            None => &[1, 2],
        };
        for &n in counts {
            println!("\n{label}, {n} station(s), {PACKET}-byte packets, N_max = 64, no beacons");
            let model = AggregationModel::derive(&phy, be, n, PACKET, 64);
            let theirs = thesis.map(|(c, r, _)| {
                AggregationModel::with_parameters(c, r, &phy, n, PACKET, 64)
            });
            println!(
                "derived: c = {:.1} µs, μ_R = {:.1} Mbit/s",
                model.c * 1e6,
                model.rate_bps(&phy, PACKET) / 1e6
            );
            println!(
                "{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
                "Mbit/s/sta", "μ_N sim", "μ_N (5.8)", "thesis", "wait ms", "bound ms", "delay ms", "loss"
            );
            let mut fitted = Vec::new();
            for target in [2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 56.0, 64.0] {
                let x = model.rate_for(target);
                let mut cfg = DownlinkConfig::new(
                    (0..n)
                        .map(|_| StationConfig {
                            rate: RateControl::Fixed(mcs),
                            snr_db: f64::INFINITY,
                            traffic: Traffic::Offered,
                        })
                        .collect(),
                );
                cfg.beacon_interval = None;
                let stats = run(cfg, &load(vec![x; n]), 1).expect("valid");
                let s = &stats[0];
                let mean_n = stats.iter().map(|s| s.mean_aggregation).sum::<f64>() / n as f64;
                if target <= 48.0 {
                    fitted.push((x, mean_n));
                }
                println!(
                    "{:>10.1} {:>9.2} {:>9.2} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>7.4}",
                    x * 8.0 * f64::from(PACKET) / 1e6,
                    mean_n,
                    model.mean_aggregation(x),
                    theirs.map_or("".into(), |t| format!("{:.2}", t.mean_aggregation(x))),
                    s.mean_wait.unwrap_or(f64::NAN) * 1e3,
                    model.delay_bound(x) * 1e3,
                    s.mean_delay.unwrap_or(f64::NAN) * 1e3,
                    s.loss
                );
            }
            if let Some(f) = AggregationModel::fit(&fitted, n, 64) {
                println!(
                    "fitted on μ_N ≤ 48: c = {:.1} µs, μ_R = {:.1} Mbit/s",
                    f.c * 1e6,
                    f.rate_bps(&phy, PACKET) / 1e6
                );
            }
        }
    }
    random_stations(secs);
    legacy(secs);
}

/// Eight stations in a 40 m square around the AP with Minstrel, 1 stream, 80 MHz.
fn random_stations(secs: f64) {
    println!("\n8 stations placed at random in a 40 × 40 m square, Minstrel (1 stream, 80 MHz), 25 Mbit/s each, 64-byte feedback every 100 ms");
    let phy = PhyConfig::ac(Mcs::new(0, 1, 80));
    let streams = Streams::new(1);
    let channel = ChannelConfig::new(40.0, 40.0);
    let placement = Placement::random(40.0, 40.0, None, 8, &streams, "random");
    let frames =
        WifiFrames::placed(phy, channel, placement.clone(), &streams, "random").expect("valid");
    let stations: Vec<StationConfig> = (1..=8)
        .map(|k| StationConfig {
            rate: RateControl::Minstrel(MinstrelConfig::new(80, 1)),
            snr_db: frames.snr_db(k),
            traffic: Traffic::Offered,
        })
        .collect();
    let x = 25e6 / (8.0 * f64::from(PACKET));
    let load = PacedLoad {
        rate_pps: vec![x; 8],
        packet_bytes: PACKET,
        feedback: Some((Duration::from_millis(100), 64)),
        warmup: Duration::from_secs(2),
        duration: Duration::from_secs_f64(secs),
    };
    let stats = run(DownlinkConfig::new(stations), &load, 1).expect("valid");
    println!(
        "{:>3} {:>7} {:>7} {:>10} {:>9} {:>8} {:>9} {:>8}",
        "sta", "dist m", "SNR dB", "MCS (share)", "μ_N", "delay ms", "Mbit/s", "loss"
    );
    let mut total = 0.0;
    for (k, s) in stats.iter().enumerate() {
        total += s.goodput_bps;
        println!(
            "{:>3} {:>7.1} {:>7.1} {:>5} ({:.2}) {:>9.2} {:>8.3} {:>9.1} {:>8.4}",
            k + 1,
            placement.distance_to_ap(k),
            frames.snr_db(k + 1),
            s.mcs.index,
            s.mcs_share,
            s.mean_aggregation,
            s.mean_delay.unwrap_or(f64::NAN) * 1e3,
            s.goodput_bps / 1e6,
            s.loss
        );
    }
    println!("sum goodput {:.1} Mbit/s", total / 1e6);
}

/// Ten stations at one AP, `k` of them legacy (saturated), the others paced at 32 packets per
/// frame's rate (80 MHz, 2 streams, MCS 9).
fn legacy(secs: f64) {
    println!(
        "\n10 stations, k legacy (saturated, N = 64), the rest paced (80 MHz, 2 streams, MCS 9)"
    );
    let mcs = Mcs::new(9, 2, 80);
    let phy = PhyConfig::ac(mcs);
    let be = edca_defaults(Standard::Ac)[1];
    let model = AggregationModel::derive(&phy, be, 10, PACKET, 64);
    let x = model.rate_for(32.0);
    println!(
        "paced rate {:.1} Mbit/s per station (model: μ_N = 32 with 10 paced stations)",
        x * 8.0 * f64::from(PACKET) / 1e6
    );
    println!(
        "{:>7} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "legacy", "sum Mbit/s", "legacy μ_N", "paced μ_N", "legacy Mb/s", "paced ms"
    );
    for k in [0usize, 2, 5, 8, 10] {
        let stations = (0..10)
            .map(|i| StationConfig {
                rate: RateControl::Fixed(mcs),
                snr_db: f64::INFINITY,
                traffic: if i < k {
                    Traffic::Saturated {
                        packet_bytes: PACKET,
                    }
                } else {
                    Traffic::Offered
                },
            })
            .collect();
        let load = PacedLoad {
            rate_pps: vec![x; 10],
            packet_bytes: PACKET,
            feedback: None,
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs_f64(secs),
        };
        let stats = run(DownlinkConfig::new(stations), &load, 1).expect("valid");
        let sum: f64 = stats.iter().map(|s| s.goodput_bps).sum();
        let mean = |v: Vec<f64>| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        println!(
            "{:>7} {:>12.1} {:>12.2} {:>12.2} {:>12.1} {:>12.3}",
            k,
            sum / 1e6,
            mean(stats[..k].iter().map(|s| s.mean_aggregation).collect()),
            mean(stats[k..].iter().map(|s| s.mean_aggregation).collect()),
            stats[..k].iter().map(|s| s.goodput_bps).sum::<f64>() / 1e6 + 0.0,
            mean(stats[k..].iter().filter_map(|s| s.mean_delay).collect()) * 1e3,
        );
    }
}
