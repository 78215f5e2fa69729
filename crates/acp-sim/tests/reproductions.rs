//! Every reproduction of the registry, through the harness as `acp reproduce` and the Python
//! package run it: each writer names a quantity as the row type does. Each reproduction runs
//! until its first run is done (the runs under way then finish, the others are skipped), so the
//! test costs a few runs per reproduction, and its rows are those of the runs done; but the
//! controllers' suite, whose rows need their scenario's oracle, runs whole (one quick scenario).

use acp_sim::reproduce::harness::{Draw, Options, Report};
use acp_sim::reproduce::{registry, write};
use acp_sim::sweep::Cancel;
use serde_json::Value;

/// A short form of every reproduction's options.
fn short() -> Options {
    Options {
        secs: Some(10),
        seeds: Some(1),
        updates: Some(1000),
        clients: vec![1],
        quick: true,
        threads: 2,
        ..Options::default()
    }
}

/// Runs `name` in its short form, cancelled once a run is done (but the controllers' suite).
fn run(name: &str) -> Report {
    let r = acp_sim::reproduce::find(name).unwrap();
    let mut o = short();
    // The controllers' suite runs whole: one quick scenario of it. The others' scenario ids are
    // their own (a name of another's is refused), and each stops after its first run anyway.
    if name == "controllers" {
        o.scenarios = vec!["dd1-s2-p5".into()];
    }
    let cancel = Cancel::new();
    let whole = name == "controllers";
    let stop = |_, _| {
        if !whole {
            cancel.cancel()
        }
    };
    r.run(&o, &cancel, &stop, None).unwrap()
}

#[test]
fn the_registry_names_each_reproduction_once() {
    let names: Vec<&str> = registry().iter().map(|r| r.name()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    for r in registry() {
        assert!(!r.about().is_empty(), "{}", r.name());
        assert!(r.check(&Options::default()).is_ok(), "{}", r.name());
    }
}

#[test]
fn csv_json_tables_and_charts_name_every_quantity_as_the_rows_do() {
    for r in registry() {
        let report = run(r.name());
        let name = r.name();
        assert!(!report.rows.is_empty(), "{name}: no row");
        let columns = report.columns();
        // CSV header == JSON row keys == the row type's fields (the Python rows are the JSON's).
        let csv = write::csv(&report);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        assert_eq!(header, columns, "{name}");
        let json = report.to_json();
        for row in json["rows"].as_array().unwrap() {
            let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
            assert_eq!(keys, columns.iter().collect::<Vec<_>>(), "{name}");
        }
        assert_eq!(csv.lines().count(), 1 + report.rows.len(), "{name}");
        let has = |field: &str| columns.iter().any(|c| c == field);
        for c in &columns {
            // Units in the names; kbps would read as the kilobytes/s of the CLI's rates.
            assert!(!c.contains("kbps") && !c.contains("mbps"), "{name}: {c}");
            if let Some(of) = c.strip_prefix("paper_") {
                // A bound the papers give instead of a value sits beside it too.
                let of = of.strip_suffix("_bound").unwrap_or(of);
                assert!(has(of), "{name}: {c} beside nothing");
            }
            if let Some(of) = c.strip_suffix("_ci95") {
                assert!(has(of), "{name}: {c} beside nothing");
            }
        }
        for s in &report.sources {
            assert!(has(s.column), "{name}: source of {}", s.column);
            assert!(!s.locator.is_empty(), "{name}: {}", s.column);
        }
        for v in &report.views {
            for c in &v.columns {
                assert!(has(c), "{name}: table column {c}");
            }
        }
        for chart in &report.charts {
            let fields = chart.series.iter().chain(chart.only.iter().map(|o| &o.0));
            for f in fields {
                assert!(has(f), "{name}: chart {} field {f}", chart.stem);
            }
            // Charts of traces draw no row field.
            if !matches!(chart.draw, Draw::Curves(_) | Draw::OverTime(..)) {
                assert!(
                    has(chart.x.0) && has(chart.y.0),
                    "{name}: chart {}",
                    chart.stem
                );
            }
            if let Draw::Bars(bars) = &chart.draw {
                assert!(bars.iter().all(|b| has(b.0)), "{name}: {}", chart.stem);
            }
        }
        // The text and markdown writers show the rows under the same names.
        let text = write::text(&report);
        let markdown = write::markdown(&report);
        for v in &report.views {
            for c in &v.columns {
                assert!(text.contains(c.as_str()), "{name}: {c} in the text");
                assert!(markdown.contains(c.as_str()), "{name}: {c} in markdown");
            }
        }
        assert!(
            report.tally.interrupted() || report.tally.done > 0,
            "{name}: {:?}",
            report.tally
        );
        assert_eq!(json["reproduction"], Value::from(name));
    }
}
