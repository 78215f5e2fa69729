//! `examples/embedded.rs` (a monitor and a push source in one program) runs and does what it
//! says: the application receives the sensor's readings fresh and in order.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../examples/embedded.rs"]
mod embedded;

use std::time::Duration;

#[test]
fn the_embedded_example_delivers_fresh_readings_in_order() {
    let summary = embedded::run(Duration::from_millis(1500)).unwrap();
    // A reading every 5 ms for 1.5 s: about 300. After ten probes (one per loopback round trip)
    // ACP+ runs near the 200/s cap, so most readings are sent, the rest superseded at the source.
    assert!(summary.readings >= 150, "{}", summary.readings);
    assert!(summary.received.len() >= 100, "{}", summary.received.len());
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
    // replaced it in the mailbox first (the application was slow for a moment); the source heard
    // back about nearly all of them.
    let taken = summary.received.len() as u64;
    assert_eq!(session.stats.delivered, taken + summary.superseded);
    assert!(summary.source.acks_in_sequence + 5 >= session.stats.delivered);
    let age = session.avg_age.unwrap();
    assert!(age < 0.05, "average age {age} s on loopback");
}
