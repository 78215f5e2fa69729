//! `--metrics`: `acp monitor` and `acp source` serve Prometheus metrics over HTTP, scraped here
//! by a plain HTTP/1.1 client and checked against what the test made them see.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod common;

use common::{
    acp, hear_from_sessions_1_to_5_then_1_and_2, keygen, refused, spawn_listening, update_datagram,
    wait_within, Guarded, SpawnGuarded,
};

/// One sample of a scrape: its labels and value.
#[derive(Debug, Clone)]
struct Sample {
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A scrape, parsed: the samples of each metric name, the `# HELP` lines' names, and the type of
/// each family.
#[derive(Debug)]
struct Scrape {
    samples: BTreeMap<String, Vec<Sample>>,
    helps: Vec<String>,
    types: BTreeMap<String, String>,
}

impl Scrape {
    /// The value of `name` without labels (or the only sample); panics when absent.
    fn value(&self, name: &str) -> f64 {
        match self.samples.get(name).map(Vec::as_slice) {
            Some([one]) => one.value,
            other => panic!("{name}: {other:?}"),
        }
    }

    /// The value of the sample of `name` with label `key` = `value`, if any.
    fn labelled(&self, name: &str, key: &str, value: &str) -> Option<f64> {
        self.all(name)
            .iter()
            .find(|s| s.labels.get(key).map(String::as_str) == Some(value))
            .map(|s| s.value)
    }

    /// The names the samples of every family take (with or without a sample now): a counter's
    /// with `_total`, an info's with `_info`, as `docs/METRICS.md` lists them.
    fn names(&self) -> BTreeSet<String> {
        self.types
            .iter()
            .map(|(family, kind)| match kind.as_str() {
                "counter" => format!("{family}_total"),
                "info" => format!("{family}_info"),
                _ => family.clone(),
            })
            .collect()
    }

    /// Every sample of `name` (none when absent).
    fn all(&self, name: &str) -> &[Sample] {
        self.samples.get(name).map_or(&[], Vec::as_slice)
    }
}

/// Parses `name{key="value",…} value` lines; our label values hold no quotes or escapes.
fn parse(body: &str) -> Scrape {
    let mut samples: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    let mut helps = Vec::new();
    let mut types = BTreeMap::new();
    for line in body.lines() {
        if let Some(kind) = line.strip_prefix("# TYPE ") {
            let (family, kind) = kind.split_once(' ').unwrap();
            types.insert(family.to_string(), kind.to_string());
            continue;
        }
        if let Some(help) = line.strip_prefix("# HELP ") {
            helps.push(help.split(' ').next().unwrap().to_string());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').unwrap();
                let labels = inner
                    .split("\",")
                    .map(|pair| {
                        let (k, v) = pair.split_once("=\"").unwrap();
                        (k.to_string(), v.trim_end_matches('"').to_string())
                    })
                    .collect();
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        let value = value.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
        samples
            .entry(name.to_string())
            .or_default()
            .push(Sample { labels, value });
    }
    Scrape {
        samples,
        helps,
        types,
    }
}

/// The metric names `docs/METRICS.md` documents with `prefix`: the first column of its tables.
fn documented(prefix: &str) -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/METRICS.md");
    let doc = std::fs::read_to_string(path).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_string())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

/// The `Accept` header Prometheus 2.42 sends: OpenMetrics first, the classic text second.
const ACCEPT_OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0,\
     application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// The `Accept` header of a scraper of the classic text format.
const ACCEPT_CLASSIC: &str = "text/plain;version=0.0.4";

/// `GET /metrics` from `addr` with `accept`, over a plain TCP connection; checks the response is
/// a 200 and returns its head and body.
fn fetch(addr: &str, accept: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    (head.to_string(), body.to_string())
}

/// A scrape of `addr` as Prometheus makes it; checks the response is a complete OpenMetrics
/// exposition and returns it parsed.
fn scrape(addr: &str) -> Scrape {
    let (head, body) = fetch(addr, ACCEPT_OPENMETRICS);
    assert!(
        head.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    parse(&body)
}

/// Scrapes `addr` until `ready` holds (the monitor publishes its totals every 200 ms).
fn scrape_until(addr: &str, ready: impl Fn(&Scrape) -> bool) -> Scrape {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let s = scrape(addr);
        if ready(&s) {
            return s;
        }
        assert!(Instant::now() < until, "not ready within 10 s: {s:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last word of the next line of `err`.
fn last_word(err: &mut impl BufRead) -> String {
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    line.trim().rsplit(' ').next().unwrap().to_string()
}

/// `http://ADDR/metrics` → `ADDR`.
fn host_port(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    rest.strip_suffix("/metrics").unwrap().to_string()
}

/// Starts `acp monitor --listen 127.0.0.1:0 --metrics 127.0.0.1:0 ARGS`; returns it, its UDP
/// address and its metrics address, as its first two lines on stderr name them.
fn spawn_monitor(args: &[&str]) -> (Guarded, String, String) {
    let mut command = acp();
    command
        .args(["monitor", "--listen", "127.0.0.1:0"])
        .args(["--metrics", "127.0.0.1:0"])
        .args(["--report-every", "1h"])
        .args(args)
        .stdout(Stdio::null());
    let (monitor, mut err, addr) = spawn_listening(command);
    let metrics = host_port(&last_word(&mut err));
    (monitor, addr, metrics)
}

/// Starts `acp source --to ADDR --controller fixed:100 --duration 30 --metrics 127.0.0.1:0`;
/// returns it, its first line on stderr and its metrics address.
fn spawn_source(addr: &str) -> (Guarded, String, String) {
    let mut source = acp()
        .args(["source", "--to", addr, "--controller", "fixed:100"])
        .args(["--duration", "30", "--metrics", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn_guarded()
        .unwrap();
    let mut err = BufReader::new(source.stderr.take().unwrap());
    let mut header = String::new();
    err.read_line(&mut header).unwrap();
    let metrics = host_port(&last_word(&mut err));
    (source, header, metrics)
}

/// Ends `child` as Ctrl-C does and checks it exits cleanly.
fn interrupt(mut child: Guarded) {
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    assert!(wait_within(&mut child, Duration::from_secs(10)).success());
}

#[test]
fn monitor_metrics_count_what_the_monitor_saw() {
    let (monitor, addr, metrics) = spawn_monitor(&["--clocks-synced"]);
    // Before any traffic: the totals are there, at zero.
    let s = scrape(&metrics);
    assert_eq!(s.value("acp_monitor_datagrams_received_total"), 0.0);
    assert_eq!(s.value("acp_monitor_sessions_live"), 0.0);
    const COUNT: u64 = 50;
    let started = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let source = acp()
        .args(["source", "--to", &addr, "--controller", "fixed:200"])
        .args(["--count", &COUNT.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(source.status.success());
    let summary = String::from_utf8(source.stdout).unwrap();
    let summary: serde_json::Value = serde_json::from_str(summary.lines().last().unwrap()).unwrap();
    assert_eq!(summary["sent"], COUNT);
    let session = summary["session"].as_str().unwrap().to_string();
    // Junk: one datagram too short for a header, one header-sized with the wrong magic.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    junk.send_to(b"hi", &addr).unwrap();
    junk.send_to(&[0u8; 50], &addr).unwrap();
    let s = scrape_until(&metrics, |s| {
        s.value("acp_monitor_datagrams_received_total") == (COUNT + 2) as f64
    });
    // Every update was ACKed (loopback loses nothing); the source heard at most as many ACKs
    // (it may stop before the last one comes back).
    assert_eq!(s.value("acp_monitor_acks_sent_total"), COUNT as f64);
    assert_eq!(s.value("acp_monitor_acks_unsent_total"), 0.0);
    assert!(summary["acks"].as_u64().unwrap() <= COUNT);
    assert!(summary["acks"].as_u64().unwrap() >= COUNT - 1, "{summary}");
    assert_eq!(s.value("acp_monitor_updates_delivered_total"), COUNT as f64);
    let malformed = "acp_monitor_malformed_total";
    assert_eq!(s.labelled(malformed, "reason", "truncated"), Some(1.0));
    assert_eq!(s.labelled(malformed, "reason", "bad_magic"), Some(1.0));
    assert_eq!(s.all(malformed).len(), 2, "{s:?}");
    assert_eq!(s.value("acp_monitor_sessions_live"), 1.0);
    assert_eq!(s.value("acp_monitor_sessions_created_total"), 1.0);
    assert!(s.all("acp_monitor_sessions_refused_total").is_empty());
    assert!(s.all("acp_monitor_auth_failed_total").is_empty());
    // The session's own series, labelled with its id as the source named it.
    assert_eq!(s.value("acp_monitor_sessions_listed"), 1.0);
    let of_session = |name: &str| {
        s.labelled(name, "session", &session)
            .unwrap_or_else(|| panic!("{name} of {session}: {s:?}"))
    };
    assert_eq!(
        of_session("acp_monitor_session_delivered_total"),
        COUNT as f64
    );
    assert_eq!(of_session("acp_monitor_session_stale_total"), 0.0);
    assert_eq!(of_session("acp_monitor_session_lost_total"), 0.0);
    // On one host with synchronised clocks: a positive age, the area under the age curve that
    // of an average well under a second (loopback delivers in microseconds, updates come every
    // 5 ms) over the session's span (50 updates at 200/s after a few probes: under 10 s even
    // on a loaded machine), the current age growing since the source stopped.
    let area = of_session("acp_monitor_session_age_area_square_seconds_total");
    assert!(area > 0.0 && area < 0.5 * 10.0, "{area}");
    let age = of_session("acp_monitor_session_age_seconds");
    assert!(age > 0.0, "{age}");
    let last_seen = of_session("acp_monitor_session_last_seen_timestamp_seconds");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    assert!(
        last_seen >= started.as_secs_f64() - 1.0 && last_seen <= now.as_secs_f64() + 1.0,
        "{last_seen}"
    );
    // Every family says what it is.
    for name in s.samples.keys() {
        let family = name.strip_suffix("_total").unwrap_or(name);
        assert!(s.helps.iter().any(|h| h == family), "no HELP for {name}");
    }
    // What is served is what the documentation lists, no more and no less.
    assert_eq!(s.names(), documented("acp_monitor_"));
    interrupt(monitor);
}

#[test]
fn monitor_metrics_list_at_most_n_sessions_those_silent_the_longest() {
    let hex = |sessions: &[u64]| -> Vec<String> {
        sessions.iter().map(|s| format!("{s:016x}")).collect()
    };
    for (n, listed) in [
        ("2", hex(&[3, 4])),
        ("all", hex(&[1, 2, 3, 4, 5])),
        ("0", vec![]),
    ] {
        let (monitor, addr, metrics) = spawn_monitor(&["--metrics-sessions", n]);
        // Sessions 1 to 5, then 1 and 2 again: 3, 4 and 5 are silent the longest.
        hear_from_sessions_1_to_5_then_1_and_2(&addr);
        let s = scrape_until(&metrics, |s| {
            s.value("acp_monitor_updates_delivered_total") == 7.0
        });
        assert_eq!(s.value("acp_monitor_sessions_live"), 5.0);
        assert_eq!(s.value("acp_monitor_sessions_listed"), listed.len() as f64);
        // Every per-session family holds the same bounded set of sessions.
        for family in [
            "acp_monitor_session_delivered_total",
            "acp_monitor_session_lost_total",
            "acp_monitor_session_last_seen_timestamp_seconds",
        ] {
            let mut got: Vec<String> = s
                .all(family)
                .iter()
                .map(|x| x.labels["session"].clone())
                .collect();
            got.sort();
            assert_eq!(got, listed, "--metrics-sessions {n}: {family}");
        }
        // Without --clocks-synced there is no age to report.
        assert!(s.all("acp_monitor_session_age_seconds").is_empty());
        interrupt(monitor);
    }
}

#[test]
fn a_sealed_monitor_counts_authentication_failures_by_reason() {
    let dir = acp_testkit::Scratch::new("acp-metrics-psk");
    let key = keygen(&dir, "psk");
    let (monitor, addr, metrics) = spawn_monitor(&["--psk-file", &key]);
    // Three updates with no seal at all.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for seq in 1..=3 {
        socket
            .send_to(&update_datagram(9, seq, b"x"), &addr)
            .unwrap();
    }
    let s = scrape_until(&metrics, |s| {
        s.value("acp_monitor_datagrams_received_total") == 3.0
    });
    let failed = "acp_monitor_auth_failed_total";
    assert_eq!(s.labelled(failed, "reason", "unsealed"), Some(3.0), "{s:?}");
    assert_eq!(s.all(failed).len(), 1, "{s:?}");
    // Dropped unanswered, and no session was made for them.
    assert_eq!(s.value("acp_monitor_acks_sent_total"), 0.0);
    assert_eq!(s.value("acp_monitor_sessions_created_total"), 0.0);
    assert!(s.all("acp_monitor_session_delivered_total").is_empty());
    interrupt(monitor);
}

#[test]
fn source_metrics_follow_the_source() {
    let (monitor, addr, _) = spawn_monitor(&[]);
    let (source, header, metrics) = spawn_source(&addr);
    // "acp source → ADDR controller fixed:100 session ID dscp 0"
    let session = header.split("session ").nth(1).unwrap();
    let session = session.split(' ').next().unwrap().to_string();
    let s = scrape_until(&metrics, |s| s.value("acp_source_acks_total") >= 20.0);
    let info = &s.all("acp_source_session_info")[0];
    assert_eq!(info.labels["session"], session);
    assert_eq!(info.labels["controller"], "fixed:100");
    assert_eq!(info.labels["target"], addr);
    assert_eq!(
        s.labelled("acp_source_phase", "phase", "running"),
        Some(1.0)
    );
    assert_eq!(s.labelled("acp_source_phase", "phase", "outage"), Some(0.0));
    assert_eq!(s.value("acp_source_update_rate_hertz"), 100.0);
    // Loopback: a round trip well under 100 ms, an age estimate of the order of the period.
    // The areas under the estimated age and backlog: those of an average age under 0.5 s and
    // a backlog of a few updates over the 30 s the source runs at most.
    let area = s.value("acp_source_estimated_age_area_square_seconds_total");
    assert!(area > 0.0 && area < 0.5 * 30.0, "{area}");
    let backlog = s.value("acp_source_backlog_area_seconds_total");
    assert!((0.0..10.0 * 30.0).contains(&backlog), "{backlog}");
    let rtt = s.value("acp_source_rtt_seconds");
    assert!(rtt > 0.0 && rtt < 0.1, "{rtt}");
    let age = s.value("acp_source_estimated_age_seconds");
    assert!(age > 0.0 && age < 0.5, "{age}");
    let sent = s.value("acp_source_updates_sent_total");
    assert!(sent >= s.value("acp_source_acks_total"));
    let header = acp_core::wire::HEADER_LEN as f64;
    assert!(s.value("acp_source_sent_bytes_total") >= sent * header);
    for quiet in [
        "invalid",
        "acks_stale",
        "acks_mismatched",
        "outages",
        "auth_failed",
    ] {
        assert_eq!(
            s.value(&format!("acp_source_{quiet}_total")),
            0.0,
            "{quiet}"
        );
    }
    assert_eq!(s.names(), documented("acp_source_"));
    // The next scrape sees the source further on: the driver keeps publishing.
    let later = scrape_until(&metrics, |later| {
        later.value("acp_source_updates_sent_total") > sent
    });
    assert!(later.value("acp_source_acks_total") >= s.value("acp_source_acks_total"));
    interrupt(source);
    interrupt(monitor);
}

#[test]
fn metrics_requests_other_than_get_metrics_are_refused() {
    let (monitor, _, metrics) = spawn_monitor(&[]);
    for (request, status) in [
        ("GET / HTTP/1.1", "404"),
        ("GET /metrics/x HTTP/1.1", "404"),
        ("POST /metrics HTTP/1.1", "405"),
    ] {
        let mut stream = TcpStream::connect(&metrics).unwrap();
        write!(
            stream,
            "{request}\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status}")),
            "{request}: {response}"
        );
    }
    interrupt(monitor);
}

#[test]
fn bad_metrics_arguments_are_refused_in_one_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let monitor = ["monitor", "--listen", "127.0.0.1:0"];
    let with = |extra: &[&'static str]| [&monitor[..], extra].concat();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&monitor[..], &["--metrics", &taken]].concat(),
            "Address already in use",
        ),
        (
            vec!["source", "--to", "127.0.0.1:9", "--metrics", &taken],
            "Address already in use",
        ),
        (with(&["--metrics", "localhost"]), "--metrics"),
        (with(&["--metrics-sessions", "5"]), "--metrics"),
        (
            with(&["--metrics", "127.0.0.1:0", "--metrics-sessions", "many"]),
            "a number of sessions or `all`",
        ),
    ];
    for (args, want) in cases {
        let err = refused(&args);
        assert!(err.contains(want), "{args:?}: {err}");
        if want == "Address already in use" {
            assert!(
                err.contains(&format!("--metrics {taken}")),
                "{args:?}: {err}"
            );
        }
    }
}

/// `promtool ARGS` in `dir`, with stdin `input`: its exit status and its stdout and stderr. Fails
/// with the command that installs it when it is missing (scripts/test-deps.sh installs it).
fn promtool(dir: &std::path::Path, args: &[&str], input: &str) -> (bool, String) {
    let child = std::process::Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded();
    let mut child = child.unwrap_or_else(|e| {
        panic!(
            "cannot run promtool ({e}): install it with `sudo apt-get install prometheus` \
             (or run scripts/test-deps.sh)"
        )
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The OpenMetrics exposition `body`, each sample given the timestamp `at` (seconds), as
/// Prometheus's OpenMetrics importer requires.
fn timestamped(body: &str, at: u64) -> String {
    body.lines()
        .map(|l| match l.starts_with('#') {
            true => format!("{l}\n"),
            false => format!("{l} {at}\n"),
        })
        .collect()
}

/// Both endpoints, in both formats, as Prometheus's own tools read them: the classic text
/// through `promtool check metrics` (which parses only that format, and lints names, help and
/// units), the OpenMetrics text through Prometheus's OpenMetrics parser (`promtool tsdb
/// create-blocks-from openmetrics`, which needs a timestamp on every sample).
#[test]
fn both_endpoints_pass_promtool_in_both_formats() {
    let dir = acp_testkit::Scratch::new("acp-metrics-promtool");
    let (monitor, addr, monitor_metrics) = spawn_monitor(&["--clocks-synced"]);
    let (source, _, source_metrics) = spawn_source(&addr);
    // Junk, so that the labelled families have samples too.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    junk.send_to(b"hi", &addr).unwrap();
    scrape_until(&source_metrics, |s| {
        s.value("acp_source_acks_total") >= 10.0
    });
    scrape_until(&monitor_metrics, |s| {
        s.value("acp_monitor_sessions_listed") == 1.0
            && !s.all("acp_monitor_malformed_total").is_empty()
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for metrics in [&monitor_metrics, &source_metrics] {
        let (head, classic) = fetch(metrics, ACCEPT_CLASSIC);
        assert!(
            head.contains("Content-Type: text/plain; version=0.0.4"),
            "{head}"
        );
        let (ok, out) = promtool(&dir, &["check", "metrics"], &classic);
        assert!(ok && out.trim().is_empty(), "{metrics}: {out}\n{classic}");
        // The same families, as OpenMetrics, parse as such.
        let (_, openmetrics) = fetch(metrics, ACCEPT_OPENMETRICS);
        let blocks = dir.join("blocks");
        let _ = std::fs::remove_dir_all(&blocks);
        let file = dir.join("scrape.om");
        std::fs::write(&file, timestamped(&openmetrics, now)).unwrap();
        let args = ["tsdb", "create-blocks-from", "openmetrics"];
        let paths = [file.to_str().unwrap(), blocks.to_str().unwrap()];
        let (ok, out) = promtool(&dir, &[&args[..], &paths[..]].concat(), "");
        assert!(ok, "{metrics}: {out}\n{openmetrics}");
        // Every sample was taken in: as many series as sample lines.
        let samples = openmetrics.lines().filter(|l| !l.starts_with('#')).count();
        assert!(
            out.split_whitespace().any(|w| w == samples.to_string()),
            "{samples} samples: {out}"
        );
    }
    interrupt(source);
    interrupt(monitor);
}

/// The recording and alerting rules shipped in deploy/prometheus load, and do what their test
/// file says (series written by hand, instants worked out in its comments).
#[test]
fn the_shipped_rules_pass_promtool() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/prometheus"
    ));
    let (ok, out) = promtool(dir, &["check", "rules", "acp-rules.yml"], "");
    assert!(ok, "{out}");
    let (ok, out) = promtool(dir, &["test", "rules", "acp-rules.test.yml"], "");
    assert!(ok && out.contains("SUCCESS"), "{out}");
    // Every metric the rules name is one the commands serve.
    let rules = std::fs::read_to_string(dir.join("acp-rules.yml")).unwrap();
    let served: BTreeSet<String> = documented("acp_");
    for word in rules.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        // (The one regular expression names its metrics by parts, `acp_(monitor|source)_…`.)
        if word.starts_with("acp_") && word != "acp_" {
            assert!(
                served.contains(word),
                "the rules name {word}, which docs/METRICS.md does not list"
            );
        }
    }
}

/// At the file-descriptor limit the endpoint pauses accepting, counts and logs the failure once,
/// and serves again once descriptors are free; the protocol thread answers throughout.
#[test]
fn the_metrics_endpoint_survives_the_file_descriptor_limit() {
    use std::os::unix::process::CommandExt;
    let mut command = acp();
    command
        .args(["monitor", "--listen", "127.0.0.1:0"])
        .args(["--metrics", "127.0.0.1:0", "--report-every", "1h"])
        // Without TCP sources: their listener would raise the soft limit this test lowers (to
        // what --max-tcp-connections needs, as far as the hard limit allows).
        .arg("--no-tcp")
        .stdout(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; it only lowers the child's own soft limit.
    unsafe {
        command.pre_exec(|| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            // The monitor holds 8 descriptors once started (stdio, its sockets, epoll, signal
            // pipe; `ls /proc/PID/fd`): some 30 are left for metrics connections.
            limit.rlim_cur = 40;
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let (monitor, mut err, addr) = spawn_listening(command);
    let metrics = host_port(&last_word(&mut err));
    // More connections than the monitor has descriptors for: the kernel completes them all
    // (the listen backlog), the endpoint cannot accept the later ones. They come from eight
    // networks (127.0.N.1), 13 at most from each: within each network's share of the table.
    let target: std::net::SocketAddr = metrics.parse().unwrap();
    let flood: Vec<TcpStream> = (0..100u8)
        .map(|i| acp_runtime::flood::connect_from([127, 0, i % 8, 1], target).unwrap())
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    // UDP service goes on: an update is answered.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    socket.send_to(&update_datagram(7, 1, b"x"), &addr).unwrap();
    let mut ack = [0u8; 256];
    socket.recv(&mut ack).unwrap();
    // Once the flood is gone, scrapes are served again (each failure paused accepting for
    // 250 ms; the flood's connections closed by their clients are reaped as they are read).
    drop(flood);
    let s = scrape_until(&metrics, |s| {
        s.labelled(
            "acp_monitor_metrics_connections_dropped_total",
            "reason",
            "accept_failed",
        )
        .is_some()
    });
    assert_eq!(s.value("acp_monitor_datagrams_received_total"), 1.0);
    interrupt(monitor);
    let mut log = String::new();
    err.read_to_string(&mut log).unwrap();
    assert_eq!(
        log.matches("cannot accept a connection").count(),
        1,
        "{log}"
    );
}
