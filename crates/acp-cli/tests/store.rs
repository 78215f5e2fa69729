//! `--store DIR`: a study run again takes its runs from the result store and prints the same
//! output; a store of another simulator version is refused.

use std::process::{Command, Output};

fn acp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acp"))
        .args(args)
        .env("RUST_LOG", "info")
        .output()
        .expect("acp runs")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_stored_study_prints_the_same_and_another_versions_store_is_refused() {
    let dir = acp_testkit::Scratch::new("acp-cli-store");
    let store = dir.join("store");
    let db = store.join("runs.sqlite");
    let mm1 = format!("{}/../../scenarios/mm1.toml", env!("CARGO_MANIFEST_DIR"));
    let sweep = |store: Option<&std::path::Path>| {
        let mut args = vec![
            "sweep", &mm1, "--rates", "0.3,0.6", "--seeds", "2", "--seed", "4", "--json",
        ];
        if let Some(s) = store {
            args.extend(["--store", s.to_str().unwrap()]);
        }
        acp(&args)
    };
    let first = sweep(Some(&store));
    let again = sweep(Some(&store));
    assert_eq!(stdout(&first), stdout(&again));
    assert_eq!(stdout(&first), stdout(&sweep(None)));
    // The second time every run came from the store: it held the 4 when it opened.
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(log.contains("4 runs held"), "{log}");
    // A reproduction's runs go to the same store, beside the sweep's.
    let out = dir.join("out");
    let dd1 = |extra: &[&str]| {
        let mut args = vec!["reproduce", "dd1", "--seeds", "1", "--secs", "10", "--out"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        acp(&args)
    };
    assert_eq!(
        stdout(&dd1(&["--store", store.to_str().unwrap()])),
        stdout(&dd1(&[]))
    );
    let count = |db: &rusqlite::Connection| -> i64 {
        db.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap()
    };
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&conn), 4 + 40);
    // Marked as another version's: refused, with both versions named, and left as it was.
    conn.execute(
        "UPDATE meta SET value = '0.0.1+old' WHERE name = 'version'",
        [],
    )
    .unwrap();
    let refused = sweep(Some(&store));
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("version 0.0.1+old") && err.contains("give another --store"),
        "{err}"
    );
    assert_eq!(count(&conn), 44);
    drop(conn);
}
