//! Where `acp monitor` sends its fresh updates: stdout (`--print-updates`), a Unix stream socket
//! (`--publish unix:PATH`) and an MQTT broker (`--publish mqtt://HOST:PORT/PREFIX`, or `mqtts://`
//! with TLS).
//!
//! Every destination is a [`Sink`] fed by one [`Drain`]: a thread that waits on the sink's own
//! latest-value [`Mailbox`], takes what is pending and hands it to the sink. The monitor's server
//! thread only offers updates to the mailboxes, so no sink can hold up an ACK: a sink that falls
//! behind (a slow terminal, a client that stops reading, a broker that is restarting) loses only
//! updates that a fresher one of the same session replaced, and the mailbox counts them. A sink
//! that is not [ready](Sink::ready) (MQTT while reconnecting) is simply not drained meanwhile.
//!
//! The JSON line of an update is the same everywhere ([`update_json`]); stdout and Unix clients
//! share one line writer ([`Lines`]), differing only in where the bytes go ([`LineOut`]).

pub mod mqtt;
pub mod mqtt_connect;
pub mod unix;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use acp_runtime::mailbox::{Mailbox, MailboxConfig, OwnedUpdate};
use acp_runtime::rows::UpdateRow;
use anyhow::Context;
use serde_json::{json, Value};

use crate::output::Reports;

/// A `--publish` destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `unix:PATH`: a Unix stream socket the monitor listens on.
    Unix(PathBuf),
    /// `mqtt://HOST[:PORT][/PREFIX]` or `mqtts://…`.
    Mqtt(mqtt::Broker),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Unix(path) => write!(f, "unix:{}", path.display()),
            Target::Mqtt(b) => b.fmt(f),
        }
    }
}

/// Parses a `--publish` value.
pub fn parse_target(s: &str) -> Result<Target, String> {
    if let Some(path) = s.strip_prefix("unix:") {
        if path.is_empty() {
            return Err("unix: needs a socket path, e.g. unix:/run/acp/acp.sock".into());
        }
        return Ok(Target::Unix(PathBuf::from(path)));
    }
    if let Some(rest) = s.strip_prefix("mqtt://") {
        return mqtt::Broker::parse(rest, false).map(Target::Mqtt);
    }
    if let Some(rest) = s.strip_prefix("mqtts://") {
        return mqtt::Broker::parse(rest, true).map(Target::Mqtt);
    }
    Err(format!(
        "'{s}' is neither unix:PATH nor mqtt[s]://HOST[:PORT][/PREFIX]"
    ))
}

/// One update as a JSON line: `type` (`update`), `time` (its arrival) and its [`UpdateRow`],
/// whose age is the age on arrival when clocks are synchronised.
pub fn update_json(u: &OwnedUpdate, synced: bool) -> Value {
    let mut line = json!({
        "type": "update",
        "time": crate::timestamp::rfc3339(u.received),
    });
    if let (Value::Object(line), Value::Object(row)) = (&mut line, json!(UpdateRow::new(u, synced)))
    {
        line.extend(row);
    }
    line
}

/// What a sink did with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// Updates it wrote or handed on.
    pub count: u64,
    /// False once the sink is gone (its reader closed): the drain then stops.
    pub open: bool,
}

/// A destination of fresh updates, driven by a [`Drain`] on its own thread.
pub trait Sink: Send + 'static {
    /// Whether it can take updates now; while it cannot, they wait in the mailbox, where fresher
    /// ones supersede them.
    fn ready(&mut self) -> bool {
        true
    }
    /// Writes or hands on `batch` (at most one update per session, oldest session first). May
    /// block: only this sink's drain waits.
    fn deliver(&mut self, batch: &[OwnedUpdate]) -> Delivered;
    /// Periodic work, at least every [`TURN`]; false ends the drain.
    fn tick(&mut self) -> bool {
        true
    }
    /// Called once when the drain ends, within about `grace`.
    fn finish(&mut self, _grace: Duration) {}
}

/// Longest wait of a drain for updates before it ticks its sink again.
pub const TURN: Duration = Duration::from_millis(100);

/// Pause of a drain while its sink is not ready.
const NOT_READY_PAUSE: Duration = Duration::from_millis(20);

/// What became of the updates offered to one sink.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Written or handed on by the sink.
    pub delivered: u64,
    /// Replaced by a fresher update of their session before the sink took them.
    pub superseded: u64,
    /// Refused by the full mailbox.
    pub dropped: u64,
    /// Waiting, or being delivered, when counted.
    pub pending: u64,
}

impl Counts {
    fn of(mailbox: &Mailbox, delivered: u64) -> Self {
        let st = mailbox.stats();
        Counts {
            delivered,
            superseded: st.superseded,
            dropped: st.dropped,
            pending: st
                .offered
                .saturating_sub(st.superseded + st.dropped + delivered),
        }
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: Counts) {
        self.delivered += other.delivered;
        self.superseded += other.superseded;
        self.dropped += other.dropped;
        self.pending += other.pending;
    }
}

/// A sink's mailbox and the thread draining it into the sink.
pub struct Drain {
    mailbox: Arc<Mailbox>,
    delivered: Arc<AtomicU64>,
    done: mpsc::Receiver<()>,
}

impl Drain {
    /// Starts a thread named `name` that drains a new mailbox of `max_entries` (and the default
    /// bound on payload, [`MailboxConfig::new`]) into `sink` until the mailbox is closed and
    /// empty, the sink is gone, or its tick fails.
    pub fn start(name: &str, max_entries: usize, sink: impl Sink) -> anyhow::Result<Self> {
        Self::start_bounded(name, MailboxConfig::new(max_entries), sink)
    }

    /// [`Drain::start`] with a mailbox of bounds `bounds`.
    pub fn start_bounded(
        name: &str,
        bounds: MailboxConfig,
        mut sink: impl Sink,
    ) -> anyhow::Result<Self> {
        let mailbox = Arc::new(Mailbox::new(bounds));
        let delivered = Arc::new(AtomicU64::new(0));
        let (done_tx, done) = mpsc::channel();
        let (mailbox_t, delivered_t) = (mailbox.clone(), delivered.clone());
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut batch = Vec::new();
                loop {
                    if !sink.tick() {
                        break;
                    }
                    if !sink.ready() {
                        if mailbox_t.is_closed() {
                            break;
                        }
                        std::thread::sleep(NOT_READY_PAUSE);
                        continue;
                    }
                    if !mailbox_t.wait(TURN) {
                        if mailbox_t.is_closed() {
                            break;
                        }
                        continue;
                    }
                    mailbox_t.take_into(&mut batch);
                    let d = sink.deliver(&batch);
                    delivered_t.fetch_add(d.count, Ordering::Relaxed);
                    if !d.open {
                        break;
                    }
                }
                // A gone sink takes nothing more: later offers are refused at once.
                mailbox_t.close();
                sink.finish(FINISH_GRACE);
                let _ = done_tx.send(());
            })
            .with_context(|| format!("cannot start the {name} thread"))?;
        Ok(Drain {
            mailbox,
            delivered,
            done,
        })
    }

    /// The mailbox to offer updates to.
    pub fn mailbox(&self) -> &Arc<Mailbox> {
        &self.mailbox
    }

    /// Whether the drain has stopped taking updates (closed, or its sink is gone).
    pub fn is_closed(&self) -> bool {
        self.mailbox.is_closed()
    }

    /// Its counts so far.
    pub fn counts(&self) -> Counts {
        Counts::of(&self.mailbox, self.delivered.load(Ordering::Relaxed))
    }

    /// Closes the mailbox without waiting: the drain delivers what is pending and ends.
    pub fn close(&self) {
        self.mailbox.close();
    }

    /// Closes the mailbox and waits until `deadline` at most for the drain to deliver what is
    /// pending and end (a reader that does not read must not keep the monitor from exiting).
    /// Returns whether it ended, and the final counts.
    pub fn finish_by(self, deadline: Instant) -> (bool, Counts) {
        self.mailbox.close();
        let ended = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok();
        (ended, self.counts())
    }
}

/// How long a drain's sink may take to finish, and the monitor waits for a drain at exit.
pub const FINISH_GRACE: Duration = Duration::from_millis(800);

/// Where a [`Lines`] sink writes.
pub trait LineOut: Send + 'static {
    /// Writes `text` (whole lines) completely; false when the reader is gone.
    fn write_lines(&mut self, text: &str) -> bool;
}

impl LineOut for Reports {
    fn write_lines(&mut self, text: &str) -> bool {
        self.stdout(text)
    }
}

/// Bytes of JSON lines gathered before a write.
const LINES_CHUNK: usize = 64 << 10;

/// Writes each update as a JSON line ([`update_json`]) to a [`LineOut`], in writes of up to
/// 64 KiB.
pub struct Lines<W> {
    out: W,
    synced: bool,
    text: String,
}

impl<W: LineOut> Lines<W> {
    /// Lines to `out`; `synced`: add the age on arrival.
    pub fn new(out: W, synced: bool) -> Self {
        Lines {
            out,
            synced,
            text: String::new(),
        }
    }
}

impl<W: LineOut> Sink for Lines<W> {
    fn deliver(&mut self, batch: &[OwnedUpdate]) -> Delivered {
        let mut delivered = Delivered {
            count: 0,
            open: true,
        };
        let mut lines = 0;
        for (i, u) in batch.iter().enumerate() {
            self.text += &update_json(u, self.synced).to_string();
            self.text.push('\n');
            lines += 1;
            if self.text.len() >= LINES_CHUNK || i + 1 == batch.len() {
                let written = self.out.write_lines(&self.text);
                self.text.clear();
                if !written {
                    delivered.open = false;
                    break;
                }
                delivered.count += lines;
                lines = 0;
            }
        }
        delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_targets_parse_or_say_what_is_wrong() {
        assert_eq!(
            parse_target("unix:/tmp/a.sock"),
            Ok(Target::Unix("/tmp/a.sock".into()))
        );
        let Ok(Target::Mqtt(b)) = parse_target("mqtt://127.0.0.1:1884/plant/acp") else {
            panic!()
        };
        assert_eq!(
            (b.host.as_str(), b.port, b.prefix.as_str()),
            ("127.0.0.1", 1884, "plant/acp")
        );
        let Ok(Target::Mqtt(b)) = parse_target("mqtt://[::1]") else {
            panic!()
        };
        assert_eq!(
            (b.host.as_str(), b.port, b.prefix.as_str()),
            ("::1", 1883, "acp")
        );
        assert_eq!(b.to_string(), "mqtt://[::1]:1883/acp");
        let Ok(Target::Mqtt(b)) = parse_target("mqtts://broker.example.net/site") else {
            panic!()
        };
        assert_eq!((b.tls, b.port), (true, 8883));
        assert_eq!(b.to_string(), "mqtts://broker.example.net:8883/site");
        // Credentials in the address are refused, and not repeated.
        let err = parse_target("mqtts://acp:hunter2@broker:8883/site").unwrap_err();
        assert!(
            !err.contains("hunter2") && err.contains("--mqtt-password-file"),
            "{err}"
        );
        for bad in [
            "unix:",
            "tcp://x",
            "mqtt://",
            "mqtt://:1883/a",
            "mqtt://h:0/a",
            "mqtt://h:99999/a",
            "mqtt://h:x/a",
            "mqtt://h/a/#",
            "mqtt://h/a+",
            "mqtt://[::1/a",
        ] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }

    struct Collect(Arc<std::sync::Mutex<String>>, usize);

    impl LineOut for Collect {
        fn write_lines(&mut self, text: &str) -> bool {
            if self.1 == 0 {
                return false;
            }
            self.1 -= 1;
            self.0.lock().unwrap().push_str(text);
            true
        }
    }

    fn update(session: u64, seq: u64) -> OwnedUpdate {
        OwnedUpdate {
            key: acp_core::monitor::SessionKey {
                peer: "127.0.0.1:9".parse().unwrap(),
                session,
            },
            seq,
            gen_ts: 1_000_000,
            probe: false,
            payload: vec![0xff, seq as u8],
            received: acp_core::Time::from_nanos(3_500_000),
        }
    }

    #[test]
    fn lines_writes_one_json_object_per_update_and_stops_when_the_reader_is_gone() {
        let text = Arc::new(std::sync::Mutex::new(String::new()));
        let mut lines = Lines::new(Collect(text.clone(), 1), true);
        let d = lines.deliver(&[update(1, 7), update(2, 8)]);
        assert_eq!(
            d,
            Delivered {
                count: 2,
                open: true
            }
        );
        let got: Vec<Value> = text
            .lock()
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["session"], "0000000000000001");
        assert_eq!(got[1]["seq"], 8);
        assert_eq!(got[1]["payload_hex"], "ff08");
        assert_eq!(got[1]["payload"], Value::Null);
        assert_eq!(got[0]["type"], "update");
        assert_eq!(got[0]["age_ms"], 2.5);
        // The second write fails: nothing counted, the sink reports itself gone.
        let d = lines.deliver(&[update(1, 9)]);
        assert_eq!(
            d,
            Delivered {
                count: 0,
                open: false
            }
        );
    }

    /// A sink that blocks until released, to show the drain's mailbox absorbing the wait.
    struct Gate(mpsc::Receiver<()>, Arc<AtomicU64>);

    impl Sink for Gate {
        fn deliver(&mut self, batch: &[OwnedUpdate]) -> Delivered {
            let _ = self.0.recv();
            self.1.fetch_add(batch.len() as u64, Ordering::Relaxed);
            Delivered {
                count: batch.len() as u64,
                open: true,
            }
        }
    }

    #[test]
    fn a_blocked_sink_loses_only_superseded_updates_and_never_blocks_offers() {
        let (release, gate) = mpsc::channel();
        let seen = Arc::new(AtomicU64::new(0));
        let drain = Drain::start("test-drain", 16, Gate(gate, seen.clone())).unwrap();
        drain.mailbox().offer(update(1, 1));
        // The drain takes it and blocks in the sink; offers go on, each returning at once.
        while drain.mailbox().stats().taken == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        for seq in 2..=1000 {
            drain.mailbox().offer(update(1 + seq % 2, seq));
        }
        release.send(()).unwrap();
        release.send(()).unwrap();
        let (ended, counts) = drain.finish_by(Instant::now() + Duration::from_secs(10));
        assert!(ended);
        // The first, then the freshest of each session; the rest superseded.
        assert_eq!(seen.load(Ordering::Relaxed), 3);
        assert_eq!(
            counts,
            Counts {
                delivered: 3,
                superseded: 997,
                dropped: 0,
                pending: 0
            }
        );
    }
}
