//! `acp relay`: a userspace path emulator in front of a monitor.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use acp_netmodel::LossModel;
use acp_runtime::relay::{DirectionStats, PathConfig, Relay, RelayConfig};
use anyhow::Context;
use serde_json::{json, Value};

fn direction_json(d: &DirectionStats) -> Value {
    json!({
        "received": d.received,
        "forwarded": d.forwarded,
        "dropped_queue": d.dropped_queue,
        "dropped_loss": d.dropped_loss,
        "dropped_blackhole": d.dropped_blackhole,
        "dropped_unmapped": d.dropped_unmapped,
        "send_errors": d.send_errors,
        "bytes_received": d.bytes_received,
        "bytes_forwarded": d.bytes_forwarded,
        "cross_packets": d.cross_packets,
        "cross_dropped": d.cross_dropped,
    })
}

fn direction_text(name: &str, d: &DirectionStats) -> String {
    format!(
        "  {name:<9} received {} forwarded {} dropped: queue {} loss {} other {}; cross {} ({} dropped)",
        d.received,
        d.forwarded,
        d.dropped_queue,
        d.dropped_loss,
        d.dropped_blackhole + d.dropped_unmapped + d.send_errors,
        d.cross_packets,
        d.cross_dropped
    )
}

use crate::signals;
use crate::RelayArgs;

/// Runs until SIGINT/SIGTERM, printing the relay's counters every 5 s and at the end.
pub fn run(a: RelayArgs) -> anyhow::Result<()> {
    let mut path = PathConfig::lossless(
        a.rate,
        a.delay,
        usize::try_from(a.queue).unwrap_or(usize::MAX),
    );
    path.link.loss = LossModel::Bernoulli { p: a.loss };
    path.cross_bps = a.cross.unwrap_or(0.0);
    let cfg = RelayConfig::symmetric(a.listen, a.to, path, a.seed);
    let relay = Relay::start(cfg).with_context(|| format!("cannot listen on {}", a.listen))?;
    eprintln!(
        "acp relay {} → {}: {:.0} bit/s, {:?} delay, queue {}, loss {}",
        relay.local_addr(),
        a.to,
        a.rate,
        a.delay,
        a.queue,
        a.loss
    );
    let stop = signals::shutdown_flag();
    let print = |kind: &str, relay: &Relay| {
        let st = relay.stats();
        if a.json {
            let line = json!({
                "type": kind,
                "clients": st.clients,
                "to_target": direction_json(&st.to_target),
                "to_client": direction_json(&st.to_client),
            });
            println!("{line}");
        } else {
            println!("{kind}: {} clients", st.clients);
            println!("{}", direction_text("→ target", &st.to_target));
            println!("{}", direction_text("← target", &st.to_client));
        }
    };
    let mut next = Instant::now() + Duration::from_secs(5);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        if Instant::now() >= next {
            print("report", &relay);
            next += Duration::from_secs(5);
        }
    }
    print("summary", &relay);
    relay.stop();
    Ok(())
}
