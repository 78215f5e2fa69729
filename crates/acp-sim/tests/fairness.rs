//! `acp reproduce fairness` in a short form asserting issue 24's multi-source target for Seek:
//! Jain's index of the ages of equal sources sharing a bottleneck ≥ 0.98, with 16 sources and
//! with sources joining and leaving; with RTTs 1 : 4, rates within a third of each other and the
//! excess ages (age less one-way propagation) as fair. One seed of the full 120 s runs (the
//! reduction is in the cases and the controller: about a second of simulation).
//!
//! Tolerances: over seeds 1–8 (`acp reproduce fairness --seed K --seeds 1 --controllers seek`)
//! Seek's index ranged 0.988–0.997 with 16 sources, 0.989–0.999 joining and leaving, the excess
//! ages' with RTTs 1 : 4 0.985–0.999 and the far/near rate ratio 0.82–1.24; so 0.98 is the
//! target itself, not a loosened one, and the ratio's bound 0.75–1.33 holds every seed seen
//! where ACP+ sits at 0.34 and Lazy at 0.26.

use acp_core::controller::ControllerKind;
use acp_sim::reproduce::fairness::TARGET_JAIN;
use acp_sim::reproduce::harness::Options;
use acp_sim::sweep::Cancel;

#[test]
fn seek_shares_a_bottleneck_fairly_among_equal_joining_and_far_sources() {
    let o = Options {
        seeds: Some(1),
        scenarios: vec!["equal-16".into(), "join-leave".into(), "rtt-1:4".into()],
        controllers: vec![ControllerKind::Seek],
        threads: 2,
        ..Options::default()
    };
    let report = acp_sim::reproduce::find("fairness")
        .unwrap()
        .run(&o, &Cancel::new(), &|_, _| {}, None)
        .unwrap();
    assert_eq!(report.rows.len(), 3);
    for row in &report.rows {
        let num = |f: &str| row[f].as_f64().unwrap_or(f64::NAN);
        if row["case"] == "rtt-1:4" {
            let ratio = num("far_over_near_rate");
            assert!((0.75..=1.0 / 0.75).contains(&ratio), "{row:?}");
            assert!(num("jain_excess_age") >= TARGET_JAIN, "{row:?}");
        } else {
            assert!(num("jain_age") >= TARGET_JAIN, "{row:?}");
        }
    }
}
