//! `--publish mqtt://HOST[:PORT][/PREFIX]` (or `mqtts://`, TLS): fresh updates and session
//! statistics to an MQTT broker.
//!
//! Each fresh update is published, retained, to `PREFIX/<session>/update` (the session id in 16
//! hex digits) as its JSON line, so a subscriber that arrives late still gets every session's
//! freshest update at once; each report (`--report-every`) publishes every session's statistics,
//! retained, to `PREFIX/<session>/stats`. When a session has expired (it is no longer in the
//! monitor's table at a report), both of its retained messages are cleared (an empty retained
//! publication), so the broker does not keep forgotten sources forever. `PREFIX/status` says,
//! retained, whether the monitor is `online`; it is also the connection's last will, so the broker
//! itself announces `offline` when the monitor dies without disconnecting. The payloads are
//! specified in `docs/OUTPUTS.md` and `docs/schemas/`. QoS 0 or 1 (`--mqtt-qos`); TLS,
//! certificates and credentials: [`super::mqtt_connect`].
//!
//! The client is `rumqttc`'s synchronous one: a [`Client`] handle that queues requests, and a
//! [`Connection`] that a thread of ours iterates to drive the network and that reconnects when
//! iterated again after an error. (rumqttc runs a single-threaded tokio runtime inside that
//! thread; nothing else of ours uses async.) The sink is [ready](Sink::ready) only while the
//! connection is up, so while the broker is unreachable the updates wait in the sink's mailbox,
//! each replaced by the next of its session (counted as superseded), and the freshest of each
//! session goes out once the connection is back. A broker that cannot be reached, refuses the
//! login or fails the TLS handshake is reported on stderr (again whenever the reason changes, and
//! at most once a minute while it lasts) and counted (`connection_failures`, and the metric
//! `acp_monitor_publish_connection_failures_total`); attempts back off from 0.3 s to 10 s.
//! Sessions are clean: requests queued or in flight when a connection drops are lost, not
//! replayed stale (with QoS 1 the broker's acknowledgements are counted, so the loss shows).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use acp_runtime::mailbox::OwnedUpdate;
use rumqttc::{
    Client, ConnectReturnCode, Connection, ConnectionError, Event, LastWill, MqttOptions, Packet,
    QoS,
};
use serde_json::{json, Value};

use super::mqtt_connect::Connect;
use super::{update_json, Delivered, Sink};

/// A broker and the topic prefix to publish under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// `mqtts://`: TLS.
    pub tls: bool,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port (1883 by default, 8883 with TLS).
    pub port: u16,
    /// Topic prefix, without a trailing `/` (`acp` by default).
    pub prefix: String,
}

impl std::fmt::Display for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        if self.host.contains(':') {
            write!(
                f,
                "{scheme}://[{}]:{}/{}",
                self.host, self.port, self.prefix
            )
        } else {
            write!(f, "{scheme}://{}:{}/{}", self.host, self.port, self.prefix)
        }
    }
}

impl Broker {
    /// Parses `HOST[:PORT][/PREFIX]`, what follows `mqtt://` (`tls` false) or `mqtts://`.
    /// Credentials in the address are refused without repeating them.
    pub fn parse(s: &str, tls: bool) -> Result<Broker, String> {
        let scheme = if tls { "mqtts" } else { "mqtt" };
        let (authority, prefix) = s.split_once('/').unwrap_or((s, ""));
        if authority.contains('@') {
            return Err(format!(
                "{scheme}://: a user name or password in the address is not accepted (it would \
                 show in process lists and logs); use --mqtt-username and --mqtt-password-file \
                 or --mqtt-password-env"
            ));
        }
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
            return Err(format!("{scheme}://{s}: no broker host"));
        }
        let port = match port {
            None if tls => 8883,
            None => 1883,
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(format!("{scheme}://{s}: port '{p}' is not in 1-65535")),
            },
        };
        let prefix = prefix.trim_end_matches('/');
        if prefix.contains(['+', '#', '\0']) {
            return Err(format!(
                "{scheme}://{s}: a topic prefix cannot hold '+', '#' or NUL"
            ));
        }
        Ok(Broker {
            tls,
            host: host.to_string(),
            port,
            prefix: if prefix.is_empty() { "acp" } else { prefix }.to_string(),
        })
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
    /// Expired sessions whose retained messages were cleared.
    sessions_cleared: AtomicU64,
    stop: AtomicBool,
}

impl Status {
    /// Connection attempts or connections that failed so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// A summary line fragment and the same as JSON fields.
    pub fn describe(&self) -> (String, Value) {
        let connected = self.connected.load(Ordering::Relaxed);
        let connections = self.connections.load(Ordering::Relaxed);
        let failures = self.failures();
        let acked = self.acknowledged.load(Ordering::Relaxed);
        let stats = self.stats_published.load(Ordering::Relaxed);
        let cleared = self.sessions_cleared.load(Ordering::Relaxed);
        (
            format!(
                "{}; {connections} connections, {failures} failures; {acked} acknowledged \
                 (QoS 1); {stats} session statistics; {cleared} expired sessions cleared",
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
                "sessions_cleared": cleared,
            }),
        )
    }
}

/// Every session in the monitor's table, with its statistics as JSON, and when the table was
/// copied.
#[derive(Debug, Clone)]
pub struct SessionTable {
    /// When the session table was copied.
    pub taken: Instant,
    /// (session id, JSON) of every session.
    pub sessions: Vec<(u64, String)>,
}

/// Session statistics waiting to be published: the latest set replaces one not yet published.
#[derive(Clone, Default)]
pub struct StatsFeed(Arc<Mutex<Option<SessionTable>>>);

impl StatsFeed {
    /// Offers every session's statistics, replacing any set not yet sent.
    pub fn offer(&self, sessions: SessionTable) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(sessions);
    }

    fn take(&self) -> Option<SessionTable> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// How long before a copy of the session table an update must have been published for its
/// session's absence from the table to mean that it expired: a copy may be up to a snapshot
/// period (about 0.2 s) older than the moment it is taken, and a session published just before
/// can be missing from it while alive. Sessions expire only after seconds of silence.
const EXPIRY_SLACK: Duration = Duration::from_secs(1);

/// The sessions that have retained messages on the broker, and when each was last published.
#[derive(Debug, Default)]
struct Retained(HashMap<u64, Instant>);

impl Retained {
    fn published(&mut self, session: u64, at: Instant) {
        self.0.insert(session, at);
    }

    /// Forgets, and returns, the sessions published before `table.taken` (with
    /// [`EXPIRY_SLACK`]) that the table no longer holds: they expired.
    fn expired(&mut self, table: &SessionTable) -> Vec<u64> {
        let live: std::collections::HashSet<u64> =
            table.sessions.iter().map(|(id, _)| *id).collect();
        let before = table.taken.checked_sub(EXPIRY_SLACK);
        let mut gone: Vec<u64> = self
            .0
            .iter()
            .filter(|(id, at)| !live.contains(id) && before.is_some_and(|b| **at < b))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        for id in &gone {
            self.0.remove(id);
        }
        gone
    }
}

/// First pause after a failed connection attempt; each further failure doubles it, up to
/// [`RETRY_PAUSE_MAX`].
const RETRY_PAUSE: Duration = Duration::from_millis(300);
const RETRY_PAUSE_MAX: Duration = Duration::from_secs(10);

/// While connecting keeps failing for the same reason, the reason is repeated this often.
const REPEAT_FAILURE: Duration = Duration::from_secs(60);

/// Requests the client queues before `publish` waits for the connection thread.
const REQUEST_QUEUE: usize = 1024;

/// The payload of `PREFIX/status`.
fn status_payload(online: bool) -> String {
    json!({ "type": "status", "online": online }).to_string()
}

/// The MQTT sink: see the [module](self) documentation.
pub struct Publisher {
    client: Option<Client>,
    prefix: String,
    qos: QoS,
    synced: bool,
    status: Arc<Status>,
    stats: StatsFeed,
    retained: Retained,
    connection: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    /// Starts connecting to `broker` (in the background: a broker that is down is retried).
    pub fn start(broker: &Broker, connect: &Connect, synced: bool) -> anyhow::Result<Self> {
        let id = format!(
            "acp-monitor-{}-{}",
            std::process::id(),
            next_client_number()
        );
        let status_topic = format!("{}/status", broker.prefix);
        let mut options = MqttOptions::new(id, broker.host.clone(), broker.port);
        options
            .set_keep_alive(Duration::from_secs(5))
            .set_clean_session(true)
            .set_transport(connect.transport())
            .set_last_will(LastWill::new(
                &status_topic,
                status_payload(false),
                QoS::AtLeastOnce,
                true,
            ))
            // An update's JSON line: up to 65,463 payload bytes, twice that in hex.
            .set_max_packet_size(64 << 10, 1 << 20);
        if let Some((user, password)) = connect.credentials() {
            options.set_credentials(user, password);
        }
        let (client, connection) = Client::new(options, REQUEST_QUEUE);
        let status = Arc::new(Status::default());
        let status_t = status.clone();
        let online = client.clone();
        let name = broker.to_string();
        let connection = std::thread::Builder::new()
            .name("acp-mqtt-conn".into())
            .spawn(move || {
                drive(connection, &status_t, &name, || {
                    // Every (re)connection says so; the will says otherwise if we die.
                    let _ = online.try_publish(
                        &status_topic,
                        QoS::AtLeastOnce,
                        true,
                        status_payload(true),
                    );
                })
            })?;
        Ok(Publisher {
            client: Some(client),
            prefix: broker.prefix.clone(),
            qos: connect.qos,
            synced,
            status,
            stats: StatsFeed::default(),
            retained: Retained::default(),
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

    /// Publishes `payload`, retained, to `PREFIX/<session>/<kind>`; an empty payload clears the
    /// retained message.
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

/// Why a connection failed, in words (the broker's refusal by its meaning).
fn failure(e: &ConnectionError) -> String {
    let refused = |code: &ConnectReturnCode| match code {
        ConnectReturnCode::BadUserNamePassword => "bad user name or password",
        ConnectReturnCode::NotAuthorized => "not authorised",
        ConnectReturnCode::BadClientId => "client id rejected",
        ConnectReturnCode::ServiceUnavailable => "service unavailable",
        ConnectReturnCode::RefusedProtocolVersion => "MQTT 3.1.1 not supported",
        ConnectReturnCode::Success => "success",
    };
    match e {
        ConnectionError::ConnectionRefused(code) => {
            format!("the broker refused the connection: {}", refused(code))
        }
        other => other.to_string(),
    }
}

/// Whether `acp monitor` has written its listening line. Connection failures wait for it (at
/// most [`LISTENING_WAIT`]) so that stderr's first line stays the listening line, which scripts
/// and tests read the address from.
static LISTENING: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
const LISTENING_WAIT: Duration = Duration::from_secs(5);

/// Lets connection failures onto stderr: the monitor has written its listening line.
pub fn listening_line_written() {
    let (written, cond) = &LISTENING;
    *written.lock().unwrap_or_else(PoisonError::into_inner) = true;
    cond.notify_all();
}

/// Waits until [`listening_line_written`] (or [`LISTENING_WAIT`] has passed).
fn after_listening_line() {
    let (written, cond) = &LISTENING;
    let guard = written.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = cond.wait_timeout_while(guard, LISTENING_WAIT, |written| !*written);
}

/// Reports connection failures on stderr: each new reason, and the same one again at most every
/// [`REPEAT_FAILURE`].
#[derive(Default)]
struct FailureLog {
    last: Option<(String, Instant)>,
}

impl FailureLog {
    fn report(&mut self, name: &str, reason: String, retry: Duration) {
        let now = Instant::now();
        let repeat = match &self.last {
            Some((last, at)) => *last != reason || now.duration_since(*at) >= REPEAT_FAILURE,
            None => true,
        };
        if repeat {
            after_listening_line();
            eprintln!(
                "publish {name}: cannot connect: {reason}; retrying in {:.1} s",
                retry.as_secs_f64()
            );
            self.last = Some((reason, now));
        }
    }
}

/// The connection thread: drives the connection, reconnecting after errors, until the client is
/// dropped (or, while the broker is unreachable, the sink is finished). `on_connect` runs at each
/// connection.
fn drive(mut connection: Connection, status: &Status, name: &str, on_connect: impl Fn()) {
    let mut pause = RETRY_PAUSE;
    let mut log = FailureLog::default();
    while let Ok(event) = connection.recv() {
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                status.connected.store(true, Ordering::Release);
                pause = RETRY_PAUSE;
                log = FailureLog::default();
                on_connect();
                if status.connections.fetch_add(1, Ordering::Relaxed) > 0 {
                    eprintln!("publish {name}: reconnected");
                } else {
                    eprintln!("publish {name}: connected");
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
                status.failures.fetch_add(1, Ordering::Relaxed);
                if was_connected {
                    eprintln!("publish {name}: connection lost ({e}); reconnecting");
                    pause = RETRY_PAUSE;
                } else {
                    log.report(name, failure(&e), pause);
                }
                std::thread::sleep(pause);
                if !was_connected {
                    pause = (pause * 2).min(RETRY_PAUSE_MAX);
                }
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
        let now = Instant::now();
        for u in batch {
            let line = update_json(u, self.synced).to_string();
            if self.publish(u.key.session, "update", line) {
                self.retained.published(u.key.session, now);
                count += 1;
            }
        }
        Delivered { count, open: true }
    }

    fn tick(&mut self) -> bool {
        if self.ready() {
            if let Some(table) = self.stats.take() {
                let now = Instant::now();
                for (session, json) in &table.sessions {
                    if self.publish(*session, "stats", json.clone()) {
                        self.retained.published(*session, now);
                        self.status.stats_published.fetch_add(1, Ordering::Relaxed);
                    }
                }
                for session in self.retained.expired(&table) {
                    let update = self.publish(session, "update", String::new());
                    let stats = self.publish(session, "stats", String::new());
                    if update && stats {
                        self.status.sessions_cleared.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        true
    }

    /// Says `offline` and disconnects: dropping the client ends the connection thread once it has
    /// sent what is queued, or at its next failed attempt if the broker is unreachable.
    fn finish(&mut self, grace: Duration) {
        self.status.stop.store(true, Ordering::Release);
        if let Some(client) = self.client.take() {
            if self.status.connected.load(Ordering::Acquire) {
                let topic = format!("{}/status", self.prefix);
                let _ = client.try_publish(topic, QoS::AtLeastOnce, true, status_payload(false));
            }
            let _ = client.try_disconnect();
        }
        if let Some(thread) = self.connection.take() {
            let deadline = Instant::now() + grace;
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sessions_published_before_the_table_was_copied_and_missing_from_it_expire() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut retained = Retained::default();
        retained.published(1, at(10));
        retained.published(2, at(10));
        retained.published(3, at(19) + Duration::from_millis(500));
        let table = |secs, ids: &[u64]| SessionTable {
            taken: at(secs),
            sessions: ids.iter().map(|&id| (id, String::new())).collect(),
        };
        // 1 is still in the table; 3 is missing but was published within the slack (the copy
        // may predate it); 2 expired.
        assert_eq!(retained.expired(&table(20, &[1])), [2]);
        // Forgotten once cleared: not cleared twice.
        assert_eq!(retained.expired(&table(30, &[1])), [3]);
        assert!(retained.expired(&table(40, &[1])).is_empty());
        assert_eq!(retained.expired(&table(50, &[])), [1]);
    }

    #[test]
    fn refusals_are_told_by_their_meaning() {
        let e = ConnectionError::ConnectionRefused(ConnectReturnCode::BadUserNamePassword);
        assert_eq!(
            failure(&e),
            "the broker refused the connection: bad user name or password"
        );
        assert_eq!(failure(&ConnectionError::NetworkTimeout), "Network timeout");
    }
}
