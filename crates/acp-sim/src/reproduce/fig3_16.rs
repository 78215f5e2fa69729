//! `fig3-16`: ACP (κ = 0.25, the thesis's simulation setting) and Seek against Lazy with 1 to 20
//! sources behind one 802.11g access point (thesis Fig. 3.16, §3.10): 100 m² (10 × 10 m),
//! σ = 4 dB, otherwise the network of `fig15`.

use acp_core::controller::ControllerKind;

use super::access::AccessNet;
use super::harness::Source;
use super::sources::SourcesFigure;

/// The network.
pub const NET: AccessNet = AccessNet {
    side_m: 10.0,
    shadowing_db: 4.0,
    ..super::fig15::NET
};

/// The numbers of sources (the thesis plots 1 to 20).
pub const SOURCES: [usize; 12] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 17, 20];

/// The published numbers (thesis §3.10).
pub mod paper {
    /// ACP's update rate with 1 and with 20 sources (updates/s).
    pub const ACP_RATE: [(usize, f64); 2] = [(1, 800.0), (20, 70.0)];
    /// ACP's age below Lazy's with 1 and with 2 sources (fraction); from about 5 sources on
    /// Lazy is as good as ACP.
    pub const ACP_GAIN: [(usize, f64); 2] = [(1, 0.21), (2, 0.13)];
    /// "RTT of the simulated network under light load … about 5 msec".
    pub const LIGHT_RTT_MS: f64 = 5.0;
}

/// The papers' number for `field` of `controller` with `sources` sources.
fn published(field: &str, controller: &str, sources: usize) -> Option<f64> {
    let at = |v: &[(usize, f64)]| v.iter().find(|p| p.0 == sources).map(|p| p.1);
    match (field, controller) {
        ("rate_hz", "acp(κ=0.25)") => at(&paper::ACP_RATE),
        ("age_over_lazy", "acp(κ=0.25)") => at(&paper::ACP_GAIN).map(|g| 1.0 - g),
        ("rtt_ms", _) if sources == 1 => Some(paper::LIGHT_RTT_MS),
        _ => None,
    }
}

/// The figure.
pub const FIG3_16: SourcesFigure = SourcesFigure {
    name: "fig3-16",
    about: "ACP(κ=0.25), Seek and Lazy with 1–20 sources behind one 802.11g AP (thesis Fig. 3.16)",
    figure: "thesis Fig. 3.16",
    net: NET,
    counts: &SOURCES,
    controllers: &[
        ControllerKind::Acp(0.25),
        ControllerKind::Seek,
        ControllerKind::Lazy,
    ],
    oracle: false,
    published,
    sources: &[
        Source {
            column: "paper_rate_hz",
            locator: "thesis §3.10 (ACP ≈ 800/s with one source, ≈ 70/s with 20)",
        },
        Source {
            column: "paper_age_over_lazy",
            locator: "thesis §3.10 (ACP 21 % below Lazy with one source, 13 % with two)",
        },
        Source {
            column: "paper_rtt_ms",
            locator: "thesis §3.10 (\"RTT … under light load … about 5 msec\")",
        },
    ],
    claims: &["paper (thesis §3.10): Lazy as good as ACP from about 5 sources on"],
};
