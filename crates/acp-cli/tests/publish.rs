//! `acp monitor --publish` and `--reuse-port` as a user runs them: fresh updates to Unix socket
//! clients and to a real MQTT broker (mosquitto, started here on a free loopback port), broker
//! restarts, TLS with a private CA, client certificates and passwords (certificates made here with
//! rcgen), the payloads checked against `docs/schemas/`, and several monitor processes sharing one
//! UDP port.
//!
//! The MQTT tests need `mosquitto` and `mosquitto_passwd` (`scripts/test-deps.sh` installs
//! them); without them they fail and say how to install them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

mod common;

use common::{
    acp, json_output, spawn_listening, wait_for, wait_within, Collected, Guarded, MonitorStderr,
    SpawnGuarded,
};

/// A scratch directory for this test.
fn scratch(name: &str) -> acp_testkit::Scratch {
    acp_testkit::Scratch::new(&format!("acp-publish-{name}"))
}

/// A running `acp monitor` with stdout (its reports and summary, as JSON lines) and stderr piped.
struct Monitor {
    child: Guarded,
    stderr: MonitorStderr,
    /// Its stdout, read as it comes: a pipe nobody reads fills with frequent reports and stops
    /// the monitor's reporting loop (and with it the session statistics it publishes).
    stdout: Option<Collected>,
    /// The address it listens on.
    addr: String,
}

impl Monitor {
    /// Starts `acp monitor --json ARGS` (with `--report-every 1h` unless ARGS set it) and waits
    /// for its listening line.
    fn start(args: &[&str]) -> Monitor {
        let mut command = acp();
        command.args(["monitor", "--json"]).args(args);
        if !args.contains(&"--report-every") {
            command.args(["--report-every", "1h"]);
        }
        command.stdout(Stdio::piped());
        let (mut child, stderr, addr) = spawn_listening(command);
        let stdout = Collected::start(child.stdout.take().unwrap());
        Monitor {
            child,
            stderr,
            stdout: Some(stdout),
            addr,
        }
    }

    /// Sends SIGTERM, waits (at most 10 s) and returns its final JSON summary and what it wrote to
    /// stderr after the listening line.
    fn stop(mut self) -> (Value, String) {
        // SAFETY: sending a signal to our own child process.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let status = wait_within(&mut self.child, Duration::from_secs(10));
        let (mut out, mut rest) = (String::new(), String::new());
        self.stderr.read_to_string(&mut rest).unwrap();
        out.push_str(&self.stdout.take().unwrap().finish());
        assert!(status.success(), "{status:?}: {rest}");
        let summary: Value = serde_json::from_str(out.lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{e}: {out}{rest}"));
        assert_eq!(summary["type"], "summary", "{out}");
        (summary, rest)
    }
}

/// `acp source --to ADDR --json ARGS` in the background.
fn source(addr: &str, args: &[&str]) -> Guarded {
    acp()
        .args(["source", "--to", addr, "--json"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded()
        .unwrap()
}

/// A finished source's JSON summary.
fn source_summary(out: Output) -> Value {
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "summary", "{text}");
    last
}

/// A finished source's session id and JSON summary, checking that no sink held up an ACK.
///
/// Exact: every update up to the newest acknowledged one was acknowledged, in order (`acks` +
/// `backlog` = `sent`, where `backlog` counts the updates sent after the newest ACK). Bounded with
/// a tolerance: those last updates, whose ACKs were still on their way when the source stopped
/// (it stops the moment it has sent its last update). How many depends on how promptly the
/// monitor's thread and the source run, which a loaded machine decides: 997 of 1,000 were
/// acknowledged at load 8–10 on 2 cores. The bound allows the updates of the last 0.5 s at the
/// source's rate. A sink that held up the protocol thread stalls it once a client's socket buffer
/// is full, tens of updates in, and leaves the rest (hundreds) unacknowledged.
fn all_acked(child: Guarded) -> (String, Value) {
    let summary = source_summary(child.wait_with_output().unwrap());
    let (sent, acks, backlog) = (
        count(&summary, "sent"),
        count(&summary, "acks"),
        count(&summary, "backlog"),
    );
    assert_eq!(acks + backlog, sent, "{summary}");
    let rate = summary["rate_hz"].as_f64().unwrap_or(0.0);
    let in_flight = (rate * 0.5).ceil() as u64 + 1;
    assert!(
        backlog <= in_flight,
        "more than {in_flight} unacknowledged: {summary}"
    );
    (summary["session"].as_str().unwrap().to_string(), summary)
}

/// The `publish` entry of a monitor summary.
fn sink(summary: &Value) -> &Value {
    &summary["publish"][0]
}

fn count(v: &Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field} in {v}"))
}

#[test]
fn unix_socket_clients_each_get_the_fresh_updates_and_one_that_never_reads_holds_up_nothing() {
    let dir = scratch("unix");
    let path = dir.join("acp.sock");
    let target = format!("unix:{}", path.display());
    let monitor = Monitor::start(&["--listen", "127.0.0.1:0", "--publish", &target]);
    let addr = monitor.addr.clone();
    assert!(
        path.exists(),
        "the socket file is there once the monitor listens"
    );
    // One client never reads; another reads everything.
    let idle = UnixStream::connect(&path).unwrap();
    let reader = UnixStream::connect(&path).unwrap();
    let lines: Arc<Mutex<Vec<Value>>> = Arc::default();
    let reading = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                lines
                    .lock()
                    .unwrap()
                    .push(serde_json::from_str(&line).unwrap());
            }
        })
    };
    // The fanout accepts clients at its next tick (at most 100 ms).
    std::thread::sleep(Duration::from_millis(300));
    // Two sources with 2,000-byte payloads (over 4 KB of JSON each): 2,000 updates, far more
    // than the idle client's socket buffer holds.
    const COUNT: u64 = 1000;
    let sources: Vec<Guarded> = (0..2)
        .map(|_| {
            source(
                &addr,
                &[
                    "--controller",
                    "fixed:500",
                    "--count",
                    &COUNT.to_string(),
                    "--payload-size",
                    "2000",
                ],
            )
        })
        .collect();
    let sessions: BTreeSet<String> = sources.into_iter().map(|s| all_acked(s).0).collect();
    // The reader gets each session's updates in order, ending with its last one.
    let last_seqs = || {
        let mut last = BTreeMap::new();
        for l in lines.lock().unwrap().iter() {
            let prev = last.insert(
                l["session"].as_str().unwrap().to_string(),
                l["seq"].as_u64().unwrap(),
            );
            assert!(prev < l["seq"].as_u64(), "out of order: {l}");
        }
        last
    };
    wait_for(
        Duration::from_secs(10),
        || last_seqs().values().filter(|&&s| s == COUNT).count() == 2,
        || format!("reader saw {:?}", last_seqs()),
    );
    assert_eq!(
        last_seqs().keys().cloned().collect::<BTreeSet<_>>(),
        sessions
    );
    let (summary, rest) = monitor.stop();
    reading.join().unwrap();
    drop(idle);
    assert_eq!(count(&summary, "delivered"), 2 * COUNT, "{rest}");
    assert_eq!(count(&summary, "acks"), 2 * COUNT, "{rest}");
    let unix = sink(&summary);
    assert_eq!(unix["sink"], target);
    assert_eq!(count(unix, "clients_accepted"), 2, "{unix}");
    // Both clients together: the reader wrote every line it got, the idle one's updates were
    // mostly superseded in its own mailbox while its socket was full.
    assert!(count(unix, "client_superseded") > COUNT, "{unix}");
    assert!(count(unix, "client_written") >= lines.lock().unwrap().len() as u64);
    assert!(!path.exists(), "the socket file is removed at exit");
    // A live socket file is refused, in one line.
    let _holder = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let out = acp()
        .args(["monitor", "--listen", "127.0.0.1:0", "--publish", &target])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("another process is listening"), "{err}");
}

#[test]
fn bad_publish_targets_are_refused_in_one_line() {
    for (bad, says) in [
        ("tcp://127.0.0.1:1883", "neither unix:PATH nor mqtt[s]://"),
        ("mqtt://127.0.0.1:0/acp", "not in 1-65535"),
        ("mqtt://127.0.0.1/acp/#", "cannot hold"),
        ("unix:", "needs a socket path"),
    ] {
        let out = acp()
            .args(["monitor", "--listen", "127.0.0.1:0", "--publish", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
    }
    let out = acp()
        .args(["monitor", "--listen", "127.0.0.1:0", "--mqtt-qos", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A program of the mosquitto package (`mosquitto`, `mosquitto_passwd`), or a failure naming the
/// package to install.
fn mosquitto_program(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the MQTT tests need {name}: install it with \
                 `apt-get install mosquitto mosquitto-clients` (or run scripts/test-deps.sh as root)"
            )
        })
}

fn mosquitto() -> PathBuf {
    mosquitto_program("mosquitto")
}

/// A free loopback TCP port.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The user and password the secure listener accepts.
const MQTT_USER: &str = "acp-monitor";
const MQTT_PASSWORD: &str = "correct horse battery staple";

/// The files of a TLS listener, made by [`Broker::start_secure`].
struct Secure {
    port: u16,
    ca: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    password_file: PathBuf,
}

/// Writes `text` to `dir/name`, readable by all (mosquitto started as root reads its files as
/// the user `mosquitto`), and returns the path.
fn write_public(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, each with its key, as PEM
/// files in `dir`: (ca, server cert, server key, client cert, client key).
fn certificates(dir: &Path) -> [PathBuf; 5] {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "acp test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf = |names: Vec<String>, purpose: ExtendedKeyUsagePurpose, cn: &str| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![purpose];
        let cert = params.signed_by(&key, &ca).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server, server_key) = leaf(
        vec!["127.0.0.1".into(), "localhost".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
        "127.0.0.1",
    );
    let (client, client_key) = leaf(
        Vec::new(),
        ExtendedKeyUsagePurpose::ClientAuth,
        "acp-monitor",
    );
    [
        write_public(dir, "ca.pem", &ca.pem()),
        write_public(dir, "server.pem", &server),
        write_public(dir, "server.key", &server_key),
        write_public(dir, "client.pem", &client),
        write_public(dir, "client.key", &client_key),
    ]
}

/// A mosquitto broker on a loopback port, for anonymous clients, without persistence; with
/// [`Broker::start_secure`] also a TLS listener that wants a client certificate and a password.
struct Broker {
    child: Guarded,
    port: u16,
    config: PathBuf,
    secure: Option<Secure>,
}

impl Broker {
    fn start(dir: &Path) -> Broker {
        let port = free_port();
        let config = dir.join("mosquitto.conf");
        std::fs::write(
            &config,
            format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"),
        )
        .unwrap();
        Broker::run(config, port, None)
    }

    /// A broker with an anonymous plain listener (for the test's subscribers) and a TLS one
    /// (certificates from [`certificates`], client certificate required, user [`MQTT_USER`]).
    fn start_secure(dir: &Path) -> Broker {
        let [ca, server, server_key, client_cert, client_key] = certificates(dir);
        let passwd = write_public(dir, "passwd", "");
        let status = Command::new(mosquitto_program("mosquitto_passwd"))
            .args(["-b"])
            .arg(&passwd)
            .args([MQTT_USER, MQTT_PASSWORD])
            .status()
            .unwrap();
        assert!(status.success(), "mosquitto_passwd: {status:?}");
        write_public(dir, "passwd", &std::fs::read_to_string(&passwd).unwrap());
        let password_file = dir.join("mqtt-password");
        std::fs::write(&password_file, format!("{MQTT_PASSWORD}\n")).unwrap();
        let (port, tls_port) = (free_port(), free_port());
        let config = dir.join("mosquitto.conf");
        std::fs::write(
            &config,
            format!(
                "per_listener_settings true\npersistence false\n\
                 listener {port} 127.0.0.1\nallow_anonymous true\n\
                 listener {tls_port} 127.0.0.1\nallow_anonymous false\n\
                 password_file {}\ncafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate true\n",
                passwd.display(),
                ca.display(),
                server.display(),
                server_key.display()
            ),
        )
        .unwrap();
        let secure = Secure {
            port: tls_port,
            ca,
            client_cert,
            client_key,
            password_file,
        };
        Broker::run(config, port, Some(secure))
    }

    /// The options that make `acp monitor` log in to the TLS listener with `password_file`.
    fn secure_args(&self, password_file: &Path) -> Vec<String> {
        let s = self.secure.as_ref().unwrap();
        [
            "--publish".to_string(),
            format!("mqtts://127.0.0.1:{}/acp", s.port),
            "--mqtt-ca".into(),
            s.ca.display().to_string(),
            "--mqtt-cert".into(),
            s.client_cert.display().to_string(),
            "--mqtt-key".into(),
            s.client_key.display().to_string(),
            "--mqtt-username".into(),
            MQTT_USER.into(),
            "--mqtt-password-file".into(),
            password_file.display().to_string(),
        ]
        .into()
    }

    fn run(config: PathBuf, port: u16, secure: Option<Secure>) -> Broker {
        let child = Command::new(mosquitto())
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn_guarded()
            .unwrap();
        for p in [Some(port), secure.as_ref().map(|s| s.port)]
            .into_iter()
            .flatten()
        {
            wait_for(
                Duration::from_secs(10),
                || TcpStream::connect(("127.0.0.1", p)).is_ok(),
                || format!("mosquitto is not listening on port {p}"),
            );
        }
        Broker {
            child,
            port,
            config,
            secure,
        }
    }

    /// Kills the broker (losing its retained messages) and starts it again on the same port.
    fn restart(mut self) -> Broker {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let (config, port, secure) = (self.config.clone(), self.port, self.secure.take());
        std::mem::forget(self);
        Broker::run(config, port, secure)
    }

    fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}/acp", self.port)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A message a subscriber received; an empty payload (a retained message cleared) is `null`.
#[derive(Debug, Clone)]
struct Message {
    topic: String,
    retained: bool,
    body: Value,
}

/// A subscriber to `acp/#`, collecting what it receives.
struct Subscriber {
    messages: Arc<Mutex<Vec<Message>>>,
    client: Client,
}

impl Subscriber {
    fn start(broker: &Broker) -> Subscriber {
        let id = format!("acp-test-{}-{:?}", std::process::id(), Instant::now());
        let mut options = MqttOptions::new(id, "127.0.0.1", broker.port);
        options.set_max_packet_size(1 << 20, 1 << 20);
        let (client, mut connection) = Client::new(options, 16);
        client.subscribe("acp/#", QoS::AtLeastOnce).unwrap();
        let messages: Arc<Mutex<Vec<Message>>> = Arc::default();
        let (messages_t, subscribed) = (messages.clone(), Arc::new(Mutex::new(false)));
        let subscribed_t = subscribed.clone();
        std::thread::spawn(move || {
            for event in connection.iter() {
                match event {
                    Ok(Event::Incoming(Packet::SubAck(_))) => *subscribed_t.lock().unwrap() = true,
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        messages_t.lock().unwrap().push(Message {
                            topic: p.topic.clone(),
                            retained: p.retain,
                            body: match p.payload.is_empty() {
                                true => Value::Null,
                                false => serde_json::from_slice(&p.payload).unwrap(),
                            },
                        })
                    }
                    Ok(_) => {}
                    // The test's broker went away: this subscriber is done.
                    Err(_) => break,
                }
            }
        });
        wait_for(
            Duration::from_secs(10),
            || *subscribed.lock().unwrap(),
            || "no SUBACK from the broker".into(),
        );
        Subscriber { messages, client }
    }

    fn messages(&self) -> Vec<Message> {
        self.messages.lock().unwrap().clone()
    }

    /// The highest sequence number received per session on `…/update` topics.
    fn latest(&self) -> BTreeMap<String, u64> {
        let mut latest = BTreeMap::new();
        for m in self.messages() {
            if m.topic.ends_with("/update") && !m.body.is_null() {
                let session = m.body["session"].as_str().unwrap().to_string();
                assert_eq!(m.topic, format!("acp/{session}/update"));
                let seq = m.body["seq"].as_u64().unwrap();
                let e = latest.entry(session).or_insert(0);
                *e = seq.max(*e);
            }
        }
        latest
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let _ = self.client.try_disconnect();
    }
}

#[test]
fn mqtt_gets_retained_fresh_updates_and_stats_and_publishing_resumes_after_a_broker_restart() {
    let dir = scratch("mqtt");
    let broker = Broker::start(&dir);
    let url = broker.url();
    let monitor = Monitor::start(&[
        "--listen",
        "127.0.0.1:0",
        "--publish",
        &url,
        "--mqtt-qos",
        "1",
        "--report-every",
        "300ms",
    ]);
    let addr = monitor.addr.clone();
    // Three sources, 8 s each at 50 updates/s.
    const COUNT: u64 = 400;
    let sources: Vec<Guarded> = (0..3)
        .map(|_| {
            source(
                &addr,
                &["--controller", "fixed:50", "--count", &COUNT.to_string()],
            )
        })
        .collect();
    // A subscriber arriving after the first updates gets each session's latest at once, retained.
    // The first updates have been published once a scout subscriber has seen them.
    let scout = Subscriber::start(&broker);
    wait_for(
        Duration::from_secs(10),
        || scout.latest().len() == 3,
        || format!("{:?}", scout.latest()),
    );
    drop(scout);
    let early = Subscriber::start(&broker);
    wait_for(
        Duration::from_secs(5),
        || early.latest().len() == 3,
        || format!("{:?}", early.latest()),
    );
    let messages = early.messages();
    let mut first = BTreeMap::new();
    for m in &messages {
        first.entry(m.topic.clone()).or_insert(m.retained);
    }
    assert!(
        first
            .iter()
            .filter(|(t, _)| t.ends_with("/update"))
            .all(|(_, &r)| r),
        "each session's first message is its retained latest update: {first:?}"
    );
    // Each report publishes every session's statistics.
    wait_for(
        Duration::from_secs(5),
        || {
            early
                .messages()
                .iter()
                .filter(|m| m.topic.ends_with("/stats"))
                .count()
                >= 3
        },
        || "no session statistics".into(),
    );
    let stats = early
        .messages()
        .into_iter()
        .find(|m| m.topic.ends_with("/stats"))
        .unwrap();
    assert_eq!(
        stats.topic,
        format!("acp/{}/stats", stats.body["session"].as_str().unwrap())
    );
    assert!(
        stats.body["delivered"].as_u64().unwrap() > 0,
        "{:?}",
        stats.body
    );
    // The broker dies and comes back, empty (no persistence).
    let before = early.latest();
    drop(early);
    let broker = broker.restart();
    let late = Subscriber::start(&broker);
    // Publishing resumes: every session's updates, newer than those seen before the restart.
    wait_for(
        Duration::from_secs(10),
        || {
            let now = late.latest();
            now.len() == 3 && now.iter().all(|(s, seq)| *seq > before[s])
        },
        || format!("before the restart {before:?}, after {:?}", late.latest()),
    );
    let sessions: BTreeSet<String> = sources.into_iter().map(|s| all_acked(s).0).collect();
    assert_eq!(
        late.latest().keys().cloned().collect::<BTreeSet<_>>(),
        sessions
    );
    // Each session's last update is published, and retained: a new subscriber gets it.
    wait_for(
        Duration::from_secs(5),
        || late.latest().values().all(|&s| s == COUNT),
        || format!("{:?}", late.latest()),
    );
    let last = Subscriber::start(&broker);
    wait_for(
        Duration::from_secs(5),
        || last.latest().len() == 3,
        || format!("{:?}", last.latest()),
    );
    assert!(
        last.latest().values().all(|&s| s == COUNT),
        "{:?}",
        last.latest()
    );
    let (summary, rest) = monitor.stop();
    assert_eq!(count(&summary, "acks"), 3 * COUNT, "{rest}");
    let mqtt = sink(&summary);
    assert_eq!(mqtt["sink"], url);
    assert!(count(mqtt, "connections") >= 2, "reconnected: {mqtt}");
    assert!(count(mqtt, "connection_failures") >= 1, "{mqtt}");
    assert!(count(mqtt, "acknowledged") > 0, "{mqtt}");
    // Every update was published, superseded while the broker was away, or (handed to the
    // client just as the connection dropped) lost with it.
    assert!(
        count(mqtt, "taken") + count(mqtt, "superseded") >= 3 * COUNT - 3,
        "{mqtt}"
    );
    assert!(
        count(mqtt, "superseded") > 0,
        "updates wait in the mailbox meanwhile: {mqtt}"
    );
    assert!(rest.contains("reconnected"), "{rest}");
}

/// The schema `docs/schemas/NAME.schema.json`, compiled.
fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks `body` against `validator`, failing with every violation.
fn conforms(validator: &jsonschema::Validator, what: &str, body: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what} {body}: {errors:?}");
}

/// The newest message on `topic`, if any.
fn newest(messages: &[Message], topic: &str) -> Option<Value> {
    messages
        .iter()
        .rev()
        .find(|m| m.topic == topic)
        .map(|m| m.body.clone())
}

#[test]
fn mqtts_with_a_private_ca_client_certificate_and_password_publishes_what_the_schemas_say() {
    let dir = scratch("mqtts");
    let broker = Broker::start_secure(&dir);
    let watcher = Subscriber::start(&broker);
    let secure = broker.secure_args(&broker.secure.as_ref().unwrap().password_file);
    let mut args: Vec<&str> = secure.iter().map(String::as_str).collect();
    args.extend([
        "--listen",
        "127.0.0.1:0",
        "--mqtt-qos",
        "1",
        "--report-every",
        "300ms",
        "--clocks-synced",
    ]);
    let monitor = Monitor::start(&args);
    // One source with text payloads (stdin lines), one with synthetic ones.
    let mut text_source = acp()
        .args([
            "source",
            "--to",
            &monitor.addr,
            "--json",
            "--push",
            "--controller",
            "fixed:50",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = text_source.stdin.as_ref().unwrap();
        for i in 0..20 {
            writeln!(stdin, "temperature {i}").unwrap();
            std::thread::sleep(Duration::from_millis(25));
        }
    }
    let binary_source = source(
        &monitor.addr,
        &[
            "--controller",
            "fixed:50",
            "--count",
            "40",
            "--payload-size",
            "8",
        ],
    );
    all_acked(binary_source);
    drop(text_source.stdin.take());
    let (text_session, _) = all_acked(text_source);
    wait_for(
        Duration::from_secs(10),
        || {
            let m = watcher.messages();
            let stats = m.iter().filter(|m| m.topic.ends_with("/stats")).count();
            watcher.latest().len() == 2 && stats >= 2
        },
        || format!("{:?}", watcher.messages()),
    );
    let (update, stats, status) = (
        schema("mqtt-update"),
        schema("mqtt-stats"),
        schema("mqtt-status"),
    );
    let messages = watcher.messages();
    for m in &messages {
        let kind = m.topic.rsplit('/').next().unwrap();
        let validator = match kind {
            "update" => &update,
            "stats" => &stats,
            "status" => &status,
            other => panic!("unexpected topic {other}: {}", m.topic),
        };
        conforms(validator, &m.topic, &m.body);
        if kind == "update" {
            assert!(m.body["age_ms"].is_number(), "{}", m.body);
        }
    }
    let text = newest(&messages, &format!("acp/{text_session}/update")).unwrap();
    assert_eq!(text["payload"], "temperature 19", "{text}");
    assert_eq!(
        newest(&messages, "acp/status"),
        Some(serde_json::json!({"type": "status", "online": true}))
    );
    let (summary, rest) = monitor.stop();
    let mqtt = sink(&summary);
    assert_eq!(count(mqtt, "connection_failures"), 0, "{mqtt}: {rest}");
    assert!(count(mqtt, "acknowledged") > 0, "{mqtt}");
    assert!(rest.contains("connected"), "{rest}");
    assert!(!rest.contains(MQTT_PASSWORD), "{rest}");
    // Stopping says so, retained.
    wait_for(
        Duration::from_secs(5),
        || {
            newest(&watcher.messages(), "acp/status")
                == Some(serde_json::json!({"type": "status", "online": false}))
        },
        || format!("{:?}", newest(&watcher.messages(), "acp/status")),
    );
}

/// Reads `monitor`'s stderr up to the metrics line and returns the metrics address.
fn metrics_addr(monitor: &mut Monitor) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            monitor.stderr.read_line(&mut line).unwrap() > 0,
            "no metrics line"
        );
        if let Some(rest) = line.trim().strip_prefix("acp monitor metrics on http://") {
            return rest.trim_end_matches("/metrics").to_string();
        }
    }
}

/// The value of the sample `name` (no labels) in a scrape of `addr`.
fn sample(addr: &str, name: &str) -> f64 {
    use std::io::Write;
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

#[test]
fn a_refusing_an_untrusted_or_an_absent_broker_is_reported_on_stderr_and_in_the_metrics() {
    let dir = scratch("mqtt-refused");
    let broker = Broker::start_secure(&dir);
    let wrong = dir.join("wrong-password");
    std::fs::write(&wrong, "not the password\n").unwrap();
    let secure = broker.secure_args(&wrong);
    let secure: Vec<&str> = secure.iter().map(String::as_str).collect();
    let tls_url = secure[1].to_string();
    // Nothing listens on a port just freed.
    let absent = format!("mqtt://127.0.0.1:{}/acp", free_port());
    let mut args = secure.clone();
    args.extend([
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
        "--publish",
        &absent,
    ]);
    let mut refused = Monitor::start(&args);
    let metrics = metrics_addr(&mut refused);
    wait_for(
        Duration::from_secs(10),
        || sample(&metrics, "acp_monitor_publish_connection_failures_total") >= 4.0,
        || "the failures are not counted".into(),
    );
    // The same options without --mqtt-ca: the system's roots do not know the test's CA.
    let mut untrusted_args: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < secure.len() {
        if secure[i] == "--mqtt-ca" {
            i += 2;
            continue;
        }
        untrusted_args.push(secure[i]);
        i += 1;
    }
    untrusted_args.extend(["--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"]);
    let mut untrusted = Monitor::start(&untrusted_args);
    // Until it has tried and failed, rather than for a fixed time (a loaded machine is slow).
    let untrusted_metrics = metrics_addr(&mut untrusted);
    wait_for(
        Duration::from_secs(10),
        || {
            sample(
                &untrusted_metrics,
                "acp_monitor_publish_connection_failures_total",
            ) >= 1.0
        },
        || "the untrusted broker's failure is not counted".into(),
    );
    let (summary, refused_err) = refused.stop();
    let (_, untrusted_err) = untrusted.stop();
    for err in [&refused_err, &untrusted_err] {
        assert!(!err.contains("not the password"), "{err}");
    }
    // One line per broker and reason, not one per attempt.
    let says = |err: &str, url: &str, what: &str| {
        err.lines()
            .filter(|l| {
                l.starts_with(&format!("publish {url}: cannot connect: ")) && l.contains(what)
            })
            .count()
    };
    assert_eq!(
        says(&refused_err, &tls_url, "the broker refused the connection"),
        1,
        "{refused_err}"
    );
    assert_eq!(
        says(&refused_err, &absent, "Connection refused"),
        1,
        "{refused_err}"
    );
    assert_eq!(
        says(&untrusted_err, &tls_url, "UnknownIssuer"),
        1,
        "{untrusted_err}"
    );
    let sinks = summary["publish"].as_array().unwrap();
    assert!(
        sinks
            .iter()
            .all(|s| count(s, "connection_failures") >= 2 && s["connected"] == false),
        "{sinks:?}"
    );
    // --check-config names the password's file, never the password.
    let mut check = secure.clone();
    check.extend(["--listen", "127.0.0.1:0", "--check-config"]);
    let out = acp().arg("monitor").args(&check).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("mqtt-password-file = \"{}\"", wrong.display())),
        "{text}"
    );
    assert!(!text.contains("not the password"), "{text}");
    // Bad TLS and login settings are refused at start, in one line.
    for (bad, says) in [
        (
            vec!["--publish", &absent, "--mqtt-ca", "/nonexistent.pem"],
            "applies to mqtts:// brokers only",
        ),
        (
            vec!["--publish", &tls_url, "--mqtt-ca", "/nonexistent.pem"],
            "--mqtt-ca /nonexistent.pem: ",
        ),
        (
            vec!["--publish", &tls_url, "--mqtt-username", "u"],
            "needs --mqtt-password-file",
        ),
        (
            vec!["--publish", "mqtts://u:secret@127.0.0.1/acp"],
            "not accepted",
        ),
    ] {
        let mut line = bad.clone();
        line.extend(["--listen", "127.0.0.1:0"]);
        let out = acp().arg("monitor").args(&line).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{line:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{line:?}: {err}");
        assert!(err.contains(says), "{line:?}: {err}");
    }
}

#[test]
fn expired_sessions_retained_messages_are_cleared_and_a_dead_monitors_will_says_offline() {
    let dir = scratch("mqtt-expiry");
    let broker = Broker::start(&dir);
    let url = broker.url();
    let watcher = Subscriber::start(&broker);
    let mut monitor = Monitor::start(&[
        "--listen",
        "127.0.0.1:0",
        "--publish",
        &url,
        "--report-every",
        "500ms",
    ]);
    let (session, _) = all_acked(source(
        &monitor.addr,
        &["--controller", "fixed:50", "--count", "20"],
    ));
    let (update, stats) = (
        format!("acp/{session}/update"),
        format!("acp/{session}/stats"),
    );
    wait_for(
        Duration::from_secs(5),
        || newest(&watcher.messages(), &stats).is_some(),
        || format!("{:?}", watcher.messages()),
    );
    // The monitor forgets a session after 30 s of silence (MonitorConfig::idle_timeout); at the
    // next report both of its retained messages are cleared.
    wait_for(
        Duration::from_secs(45),
        || {
            let m = watcher.messages();
            newest(&m, &update) == Some(Value::Null) && newest(&m, &stats) == Some(Value::Null)
        },
        || format!("{:?}", newest(&watcher.messages(), &update)),
    );
    // A subscriber arriving now gets no retained message of the session, only the status.
    let late = Subscriber::start(&broker);
    // The broker sends the retained messages matching a subscription at once: once the status has
    // come, so has any other.
    wait_for(
        Duration::from_secs(10),
        || newest(&late.messages(), "acp/status").is_some(),
        || format!("{:?}", late.messages()),
    );
    let topics: BTreeSet<String> = late.messages().into_iter().map(|m| m.topic).collect();
    assert_eq!(topics, BTreeSet::from(["acp/status".to_string()]));
    // Killed, the monitor cannot say goodbye: the broker publishes its last will.
    monitor.child.kill().unwrap();
    monitor.child.wait().unwrap();
    wait_for(
        Duration::from_secs(10),
        || {
            newest(&late.messages(), "acp/status")
                == Some(serde_json::json!({"type": "status", "online": false}))
        },
        || format!("{:?}", late.messages()),
    );
}

#[test]
fn two_monitors_share_a_port_each_source_served_by_exactly_one_and_all_reach_the_broker() {
    let dir = scratch("reuseport");
    let broker = Broker::start(&dir);
    let url = broker.url();
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let args = ["--listen", &addr, "--reuse-port", "--publish", &url];
    let workers = [Monitor::start(&args), Monitor::start(&args)];
    // Without --reuse-port the port is taken.
    let out = acp().args(["monitor", "--listen", &addr]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // 40 sources, each on its own ephemeral port: 2 s at 20 updates/s.
    const SOURCES: usize = 40;
    const COUNT: u64 = 40;
    let sources: Vec<Guarded> = (0..SOURCES)
        .map(|_| {
            source(
                &addr,
                &["--controller", "fixed:20", "--count", &COUNT.to_string()],
            )
        })
        .collect();
    let sessions: BTreeSet<String> = sources.into_iter().map(|s| all_acked(s).0).collect();
    assert_eq!(sessions.len(), SOURCES);
    // Every session's last update reached the broker, retained.
    let subscriber = Subscriber::start(&broker);
    wait_for(
        Duration::from_secs(5),
        || {
            subscriber.latest().len() == SOURCES
                && subscriber.latest().values().all(|&s| s == COUNT)
        },
        || format!("{:?}", subscriber.latest()),
    );
    let latest = subscriber.latest();
    assert_eq!(latest.keys().cloned().collect::<BTreeSet<_>>(), sessions);
    assert!(latest.values().all(|&s| s == COUNT), "{latest:?}");
    // Each session was served by exactly one worker, all of its updates.
    let mut served = BTreeMap::new();
    for (i, w) in workers.into_iter().enumerate() {
        let (summary, rest) = w.stop();
        let list = summary["sessions"].as_array().unwrap();
        assert!(!list.is_empty(), "worker {i} served nobody: {rest}");
        for s in list {
            let session = s["session"].as_str().unwrap().to_string();
            assert_eq!(s["delivered"], COUNT, "{s}");
            assert!(served.insert(session, i).is_none(), "served twice: {s}");
        }
    }
    assert_eq!(served.keys().cloned().collect::<BTreeSet<_>>(), sessions);
}

#[test]
fn bench_monitor_workers_compares_servers_sharing_a_port_with_one() {
    let v = json_output(acp().args([
        "bench",
        "monitor",
        "--workers",
        "2",
        "--duration",
        "300ms",
        "--rounds",
        "1",
        "--sessions",
        "64",
        "--json",
    ]));
    assert_eq!(v["workers"], 2);
    let round = &v["rounds"][0];
    let acks: Vec<u64> = round["acks_by_worker"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    // The kernel spread the generator's 16 source ports over both workers.
    assert_eq!(acks.len(), 2);
    assert!(acks.iter().all(|&n| n > 0), "{v}");
    assert!(v["one_acks_per_sec"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["ratio"].as_f64().unwrap() > 0.0, "{v}");
    // Not with --latency.
    let out = acp()
        .args(["bench", "monitor", "--workers", "2", "--latency"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
