//! Every example scenario in `scenarios/` parses, builds and runs (shortened), and runs are
//! reproducible byte for byte.

use std::path::PathBuf;
use std::time::Duration;

use acp_sim::scenario::Scenario;

fn examples() -> Vec<(PathBuf, Scenario)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, s)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_example_runs() {
    let all = examples();
    assert!(all.len() >= 3);
    for (path, mut s) in all {
        // A short run: the warm-up's share of the scenario's own duration.
        let d = s.config.duration.min(Duration::from_secs(20));
        s.config.warmup = d / 10;
        s.config.duration = d;
        let r = s.build().unwrap().run();
        assert!(r.events > 0, "{}", path.display());
        assert!(
            r.flows.iter().any(|f| f.delivered > 0),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_seed_determines_the_output_byte_for_byte() {
    let (_, mut s) = examples()
        .into_iter()
        .find(|(p, _)| p.ends_with("bottleneck.toml"))
        .unwrap();
    s.config.duration = Duration::from_secs(30);
    let a = s.build().unwrap().run().to_json();
    let b = s.build().unwrap().run().to_json();
    assert_eq!(a, b);
    s.config.seed += 1;
    let c = s.build().unwrap().run().to_json();
    assert_ne!(a, c, "another seed gives another run");
}
