//! `examples/embedded.rs` (a monitor and a push source in one program) runs and does what it
//! says: the application receives the sensor's readings fresh and in order.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../examples/embedded.rs"]
mod embedded;

use std::time::Duration;

#[test]
fn the_embedded_example_delivers_fresh_readings_in_order() {
    let summary = embedded::run(Duration::from_millis(1500)).unwrap();
    // A reading every 5 ms for 1.5 s: about 300 on a quiet machine. The sensor thread sleeps
    // 5 ms between readings, so a machine whose cores are busy with other processes makes fewer
    // (126 at load 19 on 2 cores): 50, one every 30 ms, is far below anything seen. After ten
    // probes (one per loopback round trip) ACP+ runs near the 200/s cap, so most readings are
    // sent, the rest superseded at the source: at least a quarter arrive.
    let (readings, received) = (summary.readings, summary.received.len() as u64);
    assert!(readings >= 50, "{readings} readings");
    assert!(
        4 * received >= readings,
        "{received} of {readings} readings"
    );
    let numbers: Vec<u64> = summary
        .received
        .iter()
        .map(|u| {
            let text = std::str::from_utf8(&u.payload).unwrap();
            text.strip_prefix("n=")
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(
        *numbers.last().unwrap() + 20 >= summary.readings,
        "the latest readings arrive"
    );
    let session = summary.session.expect("the monitor saw the session");
    // Every delivered update reached the application, unless a fresher one of the session
    // replaced it in the mailbox first (the application was slow for a moment).
    let taken = summary.received.len() as u64;
    assert_eq!(session.stats.delivered, taken + summary.superseded);
    // The source heard back about all of them but those sent after the newest ACK it got (its
    // backlog), whose ACKs were on their way when it stopped: exact on loopback.
    let source = &summary.source;
    assert!(
        source.acks_in_sequence + source.backlog >= session.stats.delivered,
        "{source:?}"
    );
    // How many were on their way depends on how promptly the machine runs the monitor's thread
    // and the source's: a handful on a quiet machine, more when other processes keep the cores
    // busy. At most those of the last 0.5 s at the 200/s cap; a monitor that stopped answering
    // would leave hundreds.
    assert!(source.backlog <= 100, "{source:?}");
    let age = session.avg_age.unwrap();
    assert!(age < 0.05, "average age {age} s on loopback");
}
