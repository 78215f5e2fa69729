//! A monitor and a push source in one Rust program, over loopback.
//!
//! The monitor server hands each fresh update to a latest-value [`Mailbox`], which the
//! application drains at its own pace; the source runs on a thread of its own, precisely paced,
//! and a sensor thread feeds it a reading every 5 ms through a [`PushFeed`]: whenever the
//! controller says "send", the freshest reading goes, and the readings it overtook are dropped at
//! the source. The same pieces work across machines: give the source the monitor's address.
//!
//! `cargo run --example embedded` prints a few of the updates received and both sides'
//! statistics. `tests/embedded_example.rs` runs it and checks what it reports.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_core::controller::ControllerKind;
use acp_core::source::SourceStats;
use acp_core::{MonitorConfig, SourceConfig};
use acp_runtime::clock;
use acp_runtime::driver::{Payload, PushFeed, RunLimits, SourceSet, SourceSpec};
use acp_runtime::mailbox::{Mailbox, MailboxConfig, OwnedUpdate};
use acp_runtime::server::{MonitorServer, ServerConfig, SessionReport};

/// What a run saw.
pub struct Summary {
    /// Readings the sensor produced.
    pub readings: u64,
    /// Fresh updates the application took from the mailbox, in order.
    pub received: Vec<OwnedUpdate>,
    /// Updates the mailbox replaced by a fresher one before the application took them.
    pub superseded: u64,
    /// The source's final statistics.
    pub source: SourceStats,
    /// The monitor's view of the source's session.
    pub session: Option<SessionReport>,
}

/// Runs monitor, source and sensor together for `duration`.
pub fn run(duration: Duration) -> io::Result<Summary> {
    // The cloud side: a monitor on an ephemeral loopback port, fresh updates into a mailbox.
    let mailbox = Arc::new(Mailbox::new(MailboxConfig::new(1024)));
    let producer = mailbox.clone();
    let monitor_config = MonitorConfig {
        // One machine, one clock: the monitor may measure true age.
        clocks_synchronised: true,
        ..MonitorConfig::default()
    };
    let server = MonitorServer::start(
        ServerConfig::new(
            "127.0.0.1:0".parse().map_err(io::Error::other)?,
            monitor_config,
        ),
        Some(Box::new(move |d, _| {
            producer.offer_delivery(d, clock::now());
        })),
    )?;

    // The device side: one ACP+ source in push mode, no faster than the sensor.
    let mut sources = SourceSet::new(server.local_addr())?;
    let session = sources.add(SourceSpec {
        name: "sensor".into(),
        controller: ControllerKind::AcpPlus.build(),
        config: SourceConfig {
            max_rate: 200.0,
            ..SourceConfig::default()
        },
        payload: Payload::Push,
    });
    let feed = sources.push_feed(session)?;
    let stop = Arc::new(AtomicBool::new(false));
    let limits = RunLimits {
        stop: Some(stop.clone()),
        ..RunLimits::default()
    };
    let source_thread =
        std::thread::spawn(move || sources.run(&limits, Duration::from_secs(1), |_| {}));
    let sensor_stop = stop.clone();
    let sensor = std::thread::spawn(move || sense(&feed, &sensor_stop));

    // The application: take fresh updates as they come.
    let end = Instant::now() + duration;
    let (mut received, mut batch) = (Vec::new(), Vec::new());
    while Instant::now() < end {
        if mailbox.wait(Duration::from_millis(50)) {
            mailbox.take_into(&mut batch);
            received.append(&mut batch);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let readings = sensor
        .join()
        .map_err(|_| io::Error::other("sensor panicked"))?;
    let reports = source_thread
        .join()
        .map_err(|_| io::Error::other("source panicked"))??;
    let snapshot = server.stop()?;
    received.append(&mut mailbox.take());
    Ok(Summary {
        readings,
        received,
        superseded: mailbox.stats().superseded,
        source: reports[0].stats.clone(),
        session: snapshot
            .sessions
            .into_iter()
            .find(|s| s.key.session == session),
    })
}

/// A reading every 5 ms until `stop`; returns how many.
fn sense(feed: &PushFeed, stop: &AtomicBool) -> u64 {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let reading = format!("n={n} temp={:.1}", 20.0 + (n % 30) as f64 / 10.0);
        if feed.offer(reading.as_bytes()).is_err() {
            break; // the source has stopped
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    n
}

fn main() -> io::Result<()> {
    let summary = run(Duration::from_secs(3))?;
    for u in summary.received.iter().step_by(100) {
        println!(
            "seq {:>4}  {}  age {:.2} ms",
            u.seq,
            String::from_utf8_lossy(&u.payload),
            u.received.nanos_since(acp_core::Time::from_nanos(u.gen_ts)) as f64 * 1e-6
        );
    }
    let s = &summary.source;
    println!(
        "sensor: {} readings; source: sent {}, acked {}, superseded {}, rate {:.1}/s",
        summary.readings, s.sent, s.acks_in_sequence, s.dropped_stale, s.rate
    );
    if let Some(m) = &summary.session {
        println!(
            "monitor: {} delivered, average age {:.2} ms; application took {}",
            m.stats.delivered,
            m.avg_age.unwrap_or(f64::NAN) * 1e3,
            summary.received.len()
        );
    }
    Ok(())
}
