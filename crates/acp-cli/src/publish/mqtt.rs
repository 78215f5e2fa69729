//! `--publish mqtt://HOST[:PORT][/PREFIX]`: fresh updates and session statistics to an MQTT
//! broker.
//!
//! Each fresh update is published, retained, to `PREFIX/<session>/update` (the session id in 16
//! hex digits) as its JSON line, so a subscriber that arrives late still gets every session's
//! freshest update at once; each report (`--report-every`) publishes every session's statistics,
//! retained, to `PREFIX/<session>/stats`. QoS 0 or 1 (`--mqtt-qos`).
//!
//! The client is `rumqttc`'s synchronous one: a [`Client`] handle that queues requests, and a
//! [`Connection`] that a thread of ours iterates to drive the network and that reconnects when
//! iterated again after an error. (rumqttc runs a single-threaded tokio runtime inside that
//! thread; nothing else of ours uses async.) The sink is [ready](Sink::ready) only while the
//! connection is up, so while the broker is unreachable the updates wait in the sink's mailbox,
//! each replaced by the next of its session (counted as superseded), and the freshest of each
//! session goes out once the connection is back. Sessions are clean: requests queued or in flight
//! when a connection drops are lost, not replayed stale (with QoS 1 the broker's acknowledgements
//! are counted, so the loss shows).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acp_runtime::mailbox::OwnedUpdate;
use rumqttc::{Client, Connection, Event, MqttOptions, Packet, QoS};
use serde_json::{json, Value};

use super::{update_json, Delivered, Sink};

/// A broker and the topic prefix to publish under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port (1883 by default).
    pub port: u16,
    /// Topic prefix, without a trailing `/` (`acp` by default).
    pub prefix: String,
}

impl std::fmt::Display for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "mqtt://[{}]:{}/{}", self.host, self.port, self.prefix)
        } else {
            write!(f, "mqtt://{}:{}/{}", self.host, self.port, self.prefix)
        }
    }
}

impl Broker {
    /// Parses `HOST[:PORT][/PREFIX]` (what follows `mqtt://`).
    pub fn parse(s: &str) -> Result<Broker, String> {
        let (authority, prefix) = s.split_once('/').unwrap_or((s, ""));
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("'{authority}': no ']' after the IPv6 address"))?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("mqtt://{s}: no broker host"));
        }
        let port = match port {
            None => 1883,
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(format!("mqtt://{s}: port '{p}' is not in 1-65535")),
            },
        };
        let prefix = prefix.trim_end_matches('/');
        if prefix.contains(['+', '#', '\0']) {
            return Err(format!(
                "mqtt://{s}: a topic prefix cannot hold '+', '#' or NUL"
            ));
        }
        Ok(Broker {
            host: host.to_string(),
            port,
            prefix: if prefix.is_empty() { "acp" } else { prefix }.to_string(),
        })
    }
}

/// The QoS of `--mqtt-qos` (0 or 1).
pub fn qos(level: u8) -> QoS {
    if level == 0 {
        QoS::AtMostOnce
    } else {
        QoS::AtLeastOnce
    }
}

/// The connection's state and counts, shared by the sink, its connection thread and reports.
#[derive(Default)]
pub struct Status {
    connected: AtomicBool,
    /// Connections made (the first and every reconnection).
    connections: AtomicU64,
    /// Connection attempts or connections that failed.
    failures: AtomicU64,
    /// Publications the broker acknowledged (QoS 1).
    acknowledged: AtomicU64,
    /// Statistics publications handed to the client.
    stats_published: AtomicU64,
    stop: AtomicBool,
}

impl Status {
    /// A summary line fragment and the same as JSON fields.
    pub fn describe(&self) -> (String, Value) {
        let connected = self.connected.load(Ordering::Relaxed);
        let connections = self.connections.load(Ordering::Relaxed);
        let failures = self.failures.load(Ordering::Relaxed);
        let acked = self.acknowledged.load(Ordering::Relaxed);
        let stats = self.stats_published.load(Ordering::Relaxed);
        (
            format!(
                "{}; {connections} connections, {failures} failures; {acked} acknowledged \
                 (QoS 1); {stats} session statistics",
                if connected {
                    "connected"
                } else {
                    "not connected"
                }
            ),
            json!({
                "connected": connected,
                "connections": connections,
                "connection_failures": failures,
                "acknowledged": acked,
                "stats_published": stats,
            }),
        )
    }
}

/// Every session's statistics: (session id, JSON).
type SessionStats = Vec<(u64, String)>;

/// Session statistics waiting to be published: the latest set replaces one not yet published.
#[derive(Clone, Default)]
pub struct StatsFeed(Arc<Mutex<Option<SessionStats>>>);

impl StatsFeed {
    /// Offers every session's statistics (session id, JSON), replacing any set not yet sent.
    pub fn offer(&self, sessions: SessionStats) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(sessions);
    }

    fn take(&self) -> Option<SessionStats> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// Pause after a failed connection attempt before the next.
const RETRY_PAUSE: Duration = Duration::from_millis(300);

/// Requests the client queues before `publish` waits for the connection thread.
const REQUEST_QUEUE: usize = 1024;

/// The MQTT sink: see the [module](self) documentation.
pub struct Publisher {
    client: Option<Client>,
    prefix: String,
    qos: QoS,
    synced: bool,
    status: Arc<Status>,
    stats: StatsFeed,
    connection: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    /// Starts connecting to `broker` (in the background: a broker that is down is retried).
    pub fn start(broker: &Broker, qos: QoS, synced: bool) -> anyhow::Result<Self> {
        let id = format!(
            "acp-monitor-{}-{}",
            std::process::id(),
            next_client_number()
        );
        let mut options = MqttOptions::new(id, broker.host.clone(), broker.port);
        options
            .set_keep_alive(Duration::from_secs(5))
            .set_clean_session(true)
            // An update's JSON line: up to 65,463 payload bytes, twice that in hex.
            .set_max_packet_size(64 << 10, 1 << 20);
        let (client, connection) = Client::new(options, REQUEST_QUEUE);
        let status = Arc::new(Status::default());
        let status_t = status.clone();
        let name = broker.to_string();
        let connection = std::thread::Builder::new()
            .name("acp-mqtt-conn".into())
            .spawn(move || drive(connection, &status_t, &name))?;
        Ok(Publisher {
            client: Some(client),
            prefix: broker.prefix.clone(),
            qos,
            synced,
            status,
            stats: StatsFeed::default(),
            connection: Some(connection),
        })
    }

    /// Its counts, readable while it runs.
    pub fn status(&self) -> Arc<Status> {
        self.status.clone()
    }

    /// Where to offer session statistics.
    pub fn stats_feed(&self) -> StatsFeed {
        self.stats.clone()
    }

    fn publish(&self, session: u64, kind: &str, payload: String) -> bool {
        let Some(client) = &self.client else {
            return false;
        };
        let topic = format!("{}/{session:016x}/{kind}", self.prefix);
        client.publish(topic, self.qos, true, payload).is_ok()
    }
}

fn next_client_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The connection thread: drives the connection, reconnecting after errors, until the client is
/// dropped (or, while the broker is unreachable, the sink is finished).
fn drive(mut connection: Connection, status: &Status, name: &str) {
    while let Ok(event) = connection.recv() {
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                status.connected.store(true, Ordering::Release);
                if status.connections.fetch_add(1, Ordering::Relaxed) > 0 {
                    eprintln!("publish {name}: reconnected");
                }
            }
            Ok(Event::Incoming(Packet::PubAck(_))) => {
                status.acknowledged.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(e) => {
                let was_connected = status.connected.swap(false, Ordering::AcqRel);
                // The end of a connection the sink is closing is no failure.
                if status.stop.load(Ordering::Acquire) {
                    return;
                }
                if was_connected {
                    eprintln!("publish {name}: connection lost ({e}); reconnecting");
                }
                status.failures.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(RETRY_PAUSE);
            }
        }
    }
}

impl Sink for Publisher {
    fn ready(&mut self) -> bool {
        self.status.connected.load(Ordering::Acquire)
    }

    fn deliver(&mut self, batch: &[OwnedUpdate]) -> Delivered {
        let mut count = 0;
        for u in batch {
            let line = update_json(u, self.synced).to_string();
            if self.publish(u.key.session, "update", line) {
                count += 1;
            }
        }
        Delivered { count, open: true }
    }

    fn tick(&mut self) -> bool {
        if self.ready() {
            if let Some(sessions) = self.stats.take() {
                for (session, json) in sessions {
                    if self.publish(session, "stats", json) {
                        self.status.stats_published.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        true
    }

    /// Disconnects: dropping the client ends the connection thread once it has sent what is
    /// queued, or at its next failed attempt if the broker is unreachable.
    fn finish(&mut self, grace: Duration) {
        self.status.stop.store(true, Ordering::Release);
        if let Some(client) = self.client.take() {
            let _ = client.try_disconnect();
        }
        if let Some(thread) = self.connection.take() {
            let deadline = std::time::Instant::now() + grace;
            while !thread.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}
