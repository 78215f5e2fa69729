//! `fig15`: ACP+ (and Seek beside it) against Lazy with 1, 6, 12, 24 and 48 sources behind one
//! 802.11g access point, and the best fixed rate for one source (ACP+ paper §IX, Fig. 15;
//! thesis Figs. 3.20–3.21 and §3.13). 20 × 20 m², σ = 12 dB, WiFi at 12 Mbit/s, five 6 Mbit/s
//! hops without propagation delay, 560-byte updates (the size the papers' RTTs imply; they state
//! none for their simulations, `docs/ALGORITHMS.md` §6; `--payload 1024` runs the size of their
//! real-world experiments). `docs/SIMULATOR.md` compares the results with the papers' and
//! explains the differences.

use acp_core::controller::ControllerKind;

use super::access::{AccessNet, Backhaul};
use super::harness::Source;
use super::sources::SourcesFigure;

/// The network.
pub const NET: AccessNet = AccessNet {
    backhaul: Backhaul::Fig14,
    hop_delay_ms: 0.0,
    side_m: 20.0,
    shadowing_db: 12.0,
    wifi_mbit: 12.0,
    p2p_mbit: 6.0,
    payload: PAYLOAD,
    ap_per_station: false,
    whole_medium: false,
};

/// The update payload (bytes): what Lazy's unloaded RTT of 5.5 ms (thesis §3.13) implies over
/// this network with our 72 bytes of headers; an inference, not a stated size.
pub const PAYLOAD: u32 = 560;

/// The numbers of sources.
pub const SOURCES: [usize; 5] = [1, 6, 12, 24, 48];

/// The published numbers.
pub mod paper {
    /// Fig. 15b / thesis Fig. 3.20b: ACP+'s backlog per source at 1, 6, 12, 24, 48 sources.
    pub const ACP_PLUS_BACKLOG: [f64; 5] = [3.23, 1.39, 0.91, 0.57, 0.34];
    /// Thesis Fig. 3.20c: ACP+'s average RTT (ms).
    pub const ACP_PLUS_RTT_MS: [f64; 5] = [5.5, 7.1, 7.9, 9.0, 10.4];
    /// Thesis Fig. 3.20c: Lazy's average RTT (ms).
    pub const LAZY_RTT_MS: [f64; 5] = [5.5, 6.3, 11.8, 26.3, 61.1];
    /// Thesis Fig. 3.21: one ACP+ source's throughput (Mbit/s).
    pub const ONE_SOURCE_MBIT: f64 = 2.25;
    /// Thesis §3.13: one ACP+ source's age (ms), RTT 5.5 ms + half its send period of
    /// 1/587 s: the source's estimate, not the monitor's age.
    pub const ONE_SOURCE_EST_AGE_MS: f64 = 6.3;
    /// Thesis §3.13: the empirically best age (ms).
    pub const BEST_AGE_MS: f64 = 5.69;
    /// §IX: an ideal round-robin, contention-free schedule keeps six updates in transit in all,
    /// "1/2, 1/4, 1/8" per source at 12, 24, 48 sources.
    pub const ROUND_ROBIN_IN_TRANSIT: f64 = 6.0;
    /// §IX: Jain's fairness of age at 6 and at 48 sources.
    pub const JAIN: [(usize, f64); 2] = [(6, 0.99), (48, 0.89)];
}

/// The papers' number for `field` of `controller` with `sources` sources.
fn published(field: &str, controller: &str, sources: usize) -> Option<f64> {
    let at = |v: &[f64]| SOURCES.iter().position(|&n| n == sources).map(|k| v[k]);
    match (field, controller, sources) {
        ("est_age_ms", "acp+", 1) => Some(paper::ONE_SOURCE_EST_AGE_MS),
        ("age_ms", "oracle", 1) => Some(paper::BEST_AGE_MS),
        ("round_robin_backlog", _, n) => Some(paper::ROUND_ROBIN_IN_TRANSIT / n as f64),
        ("backlog", "acp+", _) => at(&paper::ACP_PLUS_BACKLOG),
        ("backlog", "lazy", _) => Some(1.0),
        ("rtt_ms", "acp+", _) => at(&paper::ACP_PLUS_RTT_MS),
        ("rtt_ms", "lazy", _) => at(&paper::LAZY_RTT_MS),
        ("throughput_mbit_s", "acp+", 1) => Some(paper::ONE_SOURCE_MBIT),
        ("jain", "acp+", n) => paper::JAIN.iter().find(|p| p.0 == n).map(|p| p.1),
        _ => None,
    }
}

/// The figure.
pub const FIG15: SourcesFigure = SourcesFigure {
    name: "fig15",
    about: "ACP+, Seek and Lazy with 1–48 sources behind one 802.11g AP (Fig. 15, thesis Figs. 3.20–3.21)",
    figure: "Fig. 15 (thesis Figs. 3.20–3.21)",
    net: NET,
    counts: &SOURCES,
    controllers: &[ControllerKind::AcpPlus, ControllerKind::Seek, ControllerKind::Lazy],
    oracle: true,
    published,
    sources: &[
        Source {
            column: "paper_age_ms",
            locator: "thesis §3.13 (the best fixed rate 5.69 ms)",
        },
        Source {
            column: "paper_est_age_ms",
            locator: "thesis §3.13 (one ACP+ source 6.3 ms = its RTT 5.5 ms + half of 1/587 s: the source's estimate)",
        },
        Source {
            column: "round_robin_backlog",
            locator: "ACP+ paper §IX (round-robin: 6 in transit for one source, 1, 1/2, 1/4, 1/8 per source at 6–48)",
        },
        Source {
            column: "paper_backlog",
            locator: "ACP+ paper §IX, Fig. 15b; thesis Fig. 3.20b (ACP+); Lazy ≈ 1 throughout",
        },
        Source {
            column: "paper_rtt_ms",
            locator: "thesis Fig. 3.20c",
        },
        Source {
            column: "paper_throughput_mbit_s",
            locator: "thesis Fig. 3.21",
        },
        Source {
            column: "paper_jain",
            locator: "ACP+ paper §IX (0.99 at 6 sources, 0.89 at 48)",
        },
    ],
    claims: &[],
};
