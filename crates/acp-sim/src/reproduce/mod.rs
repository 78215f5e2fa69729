//! Reproductions of the ACP+ paper's results, each a function returning its table's rows.
//!
//! - [`fig7`]: age against update rate for three M/M/1 queues and two M/M/1 queues in tandem,
//!   simulation points against the analytic curves.
//! - [`dd1`]: the D/D/1 "virtual path" of `docs/ALGORITHMS.md` §8, whose optimum is known
//!   exactly.
//! - [`table1`]: the six-hop networks Net A–E of Table I with 0.2 Mbit/s of other traffic from
//!   the client (or on every hop, `table1-per-hop`): the oracle's per-node backlog (Fig. 8) and the age of ACP+, ACP (κ = 0.25) and Lazy as a
//!   ratio to the oracle's.
//! - [`fig15`], [`fig3_16`], [`fig3_15`]: the multi-source results behind a shared 802.11 access
//!   point (Fig. 15, thesis Figs. 3.15 and 3.16), over [`access`] and [`sources`].
//! - [`controllers`]: our evaluation suite, every controller of a list against the fixed-rate
//!   oracle on 36 scenarios.
//! - [`core_tcp`]: §XI-A, ACP+, Lazy and bulk TCP over a long core path, one at a time.
//! - [`tcp_updates`]: §III, status updates over TCP against UDP (Fig. 2) and small payloads
//!   over TCP (Fig. 4).
//! - [`contention`]: §XI-B, TCP clients (CUBIC, Vegas, BBR) against ACP+ sources sharing one
//!   WiFi access, 1 to 80 clients.
//! - [`orbit`]: §VIII, ACP+ and Seek sources on the ORBIT testbed's WiFi access and the
//!   Internet path behind it, 1 to 80 sources at 6, 12 and 24 Mbit/s (Figs. 12–13).
//! - [`thesis_3_9`]: the thesis's §3.9, ACP against Lazy over a 30-hop Internet path.
//! - [`thesis_3_10`]: the thesis's §3.10, 20 ACP sources with the point-to-point rate swept.
//! - [`fairness`]: Jain's fairness of age among sources sharing a bottleneck (equal, joining and
//!   leaving, RTTs 1 : 4).
//! - [`coexistence`]: the coexistence paper's §V-A, ACP+ and Seek beside TCP CUBIC flows under
//!   its three configurations ([`coexistence_net`]: Baseline Priority, Multiaccess Priority,
//!   Best Effort); [`no_tcp`]: its §V-B, ACP alone on 6 Mbit/s against ACP beside TCP.
//! - [`aggregation`]: the aggregation thesis's Figs. 4.8, 4.10, 4.15 and the age comparison on an
//!   802.11ac downlink, over [`agg_net`].
//! - [`agg_dynamics`]: the same thesis's controller dynamics on one station: Figs. 4.5–4.6, 4.7
//!   and 5.7–5.11.
//! - [`qaware`]: the thesis's ch. 2, the QAware multipath scheduler against minSRTT, ECF,
//!   DAPS and BLEST (`qaware-cbr`, `qaware-loss`, `qaware-apps`, `qaware-testbed`).
//! - [`access`]: the access network of every multi-source reproduction (Fig. 14's five hops or
//!   a long Internet path); [`per_source`]: the per-source means of a run over it.
//!
//! Each takes a [`Cancel`](crate::sweep::Cancel) handle for all its runs: once it is cancelled, the runs not yet started
//! are skipped and the results cover the runs done (rows or points with no run left out, cells
//! whose run was skipped `None`).

pub mod access;
pub mod agg_dynamics;
pub mod agg_net;
pub mod aggregation;
pub mod coexistence;
pub mod coexistence_net;
pub mod contention;
pub mod controllers;
pub mod core_tcp;
pub mod dd1;
pub mod fairness;
pub mod fig15;
pub mod fig2;
pub mod fig3_15;
pub mod fig3_16;
pub mod fig4;
pub mod fig7;
pub mod harness;
pub mod no_tcp;
pub mod orbit;
pub mod per_source;
pub mod qaware;
pub mod random_paths;
pub mod sources;
pub mod table1;
pub mod tcp_updates;
pub mod thesis_3_10;
pub mod thesis_3_9;
pub mod write;

use harness::Reproduction;

/// Every reproduction, in the order `acp reproduce` lists them.
pub fn registry() -> Vec<&'static dyn Reproduction> {
    vec![
        &fig2::Fig2,
        &fig4::Fig4,
        &fig7::Fig7,
        &table1::TABLE1_FROM_CLIENT,
        &table1::TABLE1_PER_HOP,
        &dd1::Dd1,
        &fig15::FIG15,
        &fig3_16::FIG3_16,
        &fig3_15::FIG3_15,
        &fig3_15::FIG3_15_POISSON,
        &contention::ContentionTcp,
        &controllers::Controllers,
        &core_tcp::CoreTcp,
        &orbit::Orbit,
        &thesis_3_9::Thesis3_9,
        &thesis_3_10::Thesis3_10,
        &fairness::Fairness,
        &coexistence::CoexistenceRepro,
        &no_tcp::NoTcp,
        &aggregation::FIG4_8,
        &aggregation::FIG4_9,
        &aggregation::FIG4_10,
        &aggregation::FIG4_15,
        &aggregation::AGE,
        &agg_dynamics::FIG4_5,
        &agg_dynamics::FIG4_7,
        &agg_dynamics::FIG5_7,
        &qaware::QAWARE_CBR,
        &qaware::QAWARE_LOSS,
        &qaware::QAWARE_APPS,
        &qaware::QAWARE_TESTBED,
    ]
}

/// The reproduction called `name`.
pub fn find(name: &str) -> Option<&'static dyn Reproduction> {
    registry().into_iter().find(|r| r.name() == name)
}
