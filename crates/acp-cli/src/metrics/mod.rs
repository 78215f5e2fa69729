//! `--metrics ADDR`: a Prometheus endpoint for `acp monitor` and `acp source`.
//!
//! An [`Endpoint`] serves `GET /metrics` over HTTP on its own thread ([`http`]: one epoll loop
//! with strict limits on connections, request heads and time), in OpenMetrics or the classic
//! Prometheus text as the scraper's `Accept` header asks ([`format`]), using the official Rust
//! client (`prometheus-client`) for the encoding. Nothing is counted twice: at each scrape the
//! endpoint asks the command for a [`Collector`] holding what the command has already published
//! (the monitor server's totals and, on demand, its session table; the source driver's latest
//! report), and encodes it. A scrape therefore reads published state only: the monitor's server
//! thread at most copies its session table when asked, the same on-demand copy its periodic
//! reports use (at most once per snapshot period, however many ask), and the source's driver
//! never waits for a scrape ([`Latest`]). [`monitor`] and [`source`] write the families of each
//! command; the endpoint, its own families ([`EndpointFamilies`]) and the writing helpers
//! ([`Families`]) are shared.
//!
//! The names, labels and units are documented in `docs/METRICS.md`.

pub mod format;
pub mod http;
pub mod monitor;
pub mod source;

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::TypedMetric;
use prometheus_client::registry::Unit;

use http::{ServerStats, SharedStats};

/// What a scrape reads: a fresh collector of the command's published state.
pub type Scrape = Box<dyn Fn() -> Box<dyn Collector> + Send>;

/// A running metrics endpoint; dropping it stops the server and joins its thread (which closes
/// every connection, finished or not).
pub struct Endpoint {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: mio::Waker,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Binds `addr` and serves the metrics named `PREFIX_…` that `scrape` collects, within
    /// [`http::LIMITS`]. A bad address (taken, not this host's, privileged) is a usage error
    /// reported as `--metrics`.
    pub fn start(addr: SocketAddr, prefix: &'static str, scrape: Scrape) -> anyhow::Result<Self> {
        Self::start_with(addr, prefix, scrape, http::LIMITS)
    }

    /// As [`Endpoint::start`], within `limits`.
    pub fn start_with(
        addr: SocketAddr,
        prefix: &'static str,
        scrape: Scrape,
        limits: http::Limits,
    ) -> anyhow::Result<Self> {
        let listener =
            TcpListener::bind(addr).map_err(|e| crate::bind_error("--metrics", addr, e))?;
        let local = listener.local_addr()?;
        let stats = SharedStats::default();
        let (server, waker) = http::Server::new(listener, limits, prefix, scrape, stats)
            .with_context(|| format!("cannot serve metrics on {addr}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop_t = stop.clone();
        let thread = std::thread::Builder::new()
            .name("acp-metrics".into())
            .spawn(move || server.run(&stop_t))
            .context("cannot start the metrics thread")?;
        Ok(Endpoint {
            local,
            stop,
            waker,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Should waking fail, the thread still ends at its next deadline or event.
        let _ = self.waker.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The endpoint's own families, `PREFIX_metrics_…`: what its limits have cost clients.
#[derive(Debug)]
pub struct EndpointFamilies(pub ServerStats);

impl Collector for EndpointFamilies {
    fn encode(&self, encoder: DescriptorEncoder) -> std::fmt::Result {
        let mut f = Families::new(encoder);
        f.gauge(
            "metrics_connections_open",
            "Connections open to the metrics endpoint, this one included.",
            None,
            Some(self.0.open as f64),
        )?;
        let dropped: Vec<_> = self
            .0
            .dropped
            .iter()
            .map(|(k, n)| (k.label(), *n))
            .collect();
        f.counter_by_reason(
            "metrics_connections_dropped",
            "Connections to the metrics endpoint closed without an answer or refused, by reason \
             (accept_failed, table_full, evicted, head_too_large, bad_request, timed_out).",
            dropped.iter().map(|(k, n)| (k, n)),
        )
    }
}

/// A value one thread publishes and others read, where the publisher never waits: when a
/// reader holds the value (for as long as a clone takes), that publication is skipped and the
/// next one brings the reading up to date.
#[derive(Debug)]
pub struct Latest<T>(Mutex<Option<T>>);

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest(Mutex::new(None))
    }
}

impl<T: Clone> Latest<T> {
    /// Replaces the value, unless a reader holds it right now.
    pub fn publish(&self, value: T) {
        if let Ok(mut slot) = self.0.try_lock() {
            *slot = Some(value);
        }
    }

    /// The latest value published, if any.
    pub fn get(&self) -> Option<T> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Writes metric families into one scrape: the descriptor (`# HELP`, `# TYPE`, `# UNIT`) of each
/// family, then its samples. Counters get their `_total` suffix and units their `_unit` suffix
/// from the encoder, so names are given without them.
pub struct Families<'a> {
    encoder: DescriptorEncoder<'a>,
}

impl<'a> Families<'a> {
    /// Writes into `encoder`, as given to [`Collector::encode`].
    pub fn new(encoder: DescriptorEncoder<'a>) -> Self {
        Families { encoder }
    }

    /// A family of samples of one type, each with its labels; with no samples, only the
    /// descriptor is written (the family exists, with nothing to report yet).
    pub fn family<L: EncodeLabelSet, M: EncodeMetric + TypedMetric>(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        samples: impl IntoIterator<Item = (L, M)>,
    ) -> std::fmt::Result {
        let mut family = self
            .encoder
            .encode_descriptor(name, help, unit.as_ref(), M::TYPE)?;
        for (labels, metric) in samples {
            metric.encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }

    /// A counter without labels and without a unit.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) -> std::fmt::Result {
        self.counter_of(name, help, None, Some(value))
    }

    /// A counter without labels, of `unit`; only its descriptor while `value` is unknown.
    pub fn counter_of<N>(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        value: Option<N>,
    ) -> std::fmt::Result
    where
        ConstCounter<N>: EncodeMetric,
    {
        self.single(name, help, unit, value.map(ConstCounter::new))
    }

    /// A gauge without labels; only its descriptor while `value` is unknown.
    pub fn gauge(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        value: Option<f64>,
    ) -> std::fmt::Result {
        self.single(name, help, unit, value.map(ConstGauge::new))
    }

    /// An info family: one sample, valued 1, that carries `labels`.
    pub fn info(
        &mut self,
        name: &str,
        help: &str,
        labels: Vec<(&'static str, String)>,
    ) -> std::fmt::Result {
        self.single(name, help, None, Some(Info::new(labels)))
    }

    /// A family of one sample without labels; only its descriptor while `metric` is unknown.
    fn single<M: EncodeMetric + TypedMetric>(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        metric: Option<M>,
    ) -> std::fmt::Result {
        let encoder = self
            .encoder
            .encode_descriptor(name, help, unit.as_ref(), M::TYPE)?;
        match metric {
            Some(m) => m.encode(encoder),
            None => Ok(()),
        }
    }

    /// A counter per reason, labelled `reason`; reasons never seen have no sample.
    pub fn counter_by_reason<'r>(
        &mut self,
        name: &str,
        help: &str,
        counts: impl IntoIterator<Item = (&'r &'static str, &'r u64)>,
    ) -> std::fmt::Result {
        let samples = counts
            .into_iter()
            .map(|(reason, n)| ([("reason", *reason)], ConstCounter::new(*n)));
        self.family(name, help, None, samples)
    }
}

#[cfg(test)]
mod tests {
    //! The endpoint under attack, over real loopback sockets. Times are generous multiples of the
    //! limits they check (stated at each), so that the tests hold with both cores busy.

    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};

    use super::*;

    /// An exposition of `samples` gauges, about 40 bytes each.
    #[derive(Debug)]
    struct Many {
        samples: usize,
    }

    impl Collector for Many {
        fn encode(&self, encoder: DescriptorEncoder) -> std::fmt::Result {
            let samples = (0..self.samples).map(|i| ([("i", i.to_string())], ConstGauge::new(1)));
            Families::new(encoder).family("many", "Test samples.", None, samples)
        }
    }

    fn scrape_of(samples: usize) -> Scrape {
        Box::new(move || Box::new(Many { samples }) as Box<dyn Collector>)
    }

    fn endpoint(samples: usize) -> Endpoint {
        Endpoint::start("127.0.0.1:0".parse().unwrap(), "t", scrape_of(samples)).unwrap()
    }

    /// Sends `request` (its head lines, without the final blank line) and reads the whole
    /// response, waiting at most `limit`.
    fn exchange(addr: SocketAddr, request: &str, limit: Duration) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(limit)).unwrap();
        // In one write: a server that refuses the request line may close before reading more.
        let request = format!("{request}\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    fn status(response: &str) -> &str {
        response.split(' ').nth(1).unwrap_or("none")
    }

    #[test]
    fn get_and_head_of_metrics_are_answered_in_the_format_asked_for() {
        let e = endpoint(2);
        let wait = Duration::from_secs(20);
        let get = exchange(e.local_addr(), "GET /metrics HTTP/1.1", wait);
        let (head, body) = get.split_once("\r\n\r\n").unwrap();
        assert_eq!(status(&get), "200", "{get}");
        assert!(
            head.contains("\r\nContent-Type: text/plain; version=0.0.4"),
            "{head}"
        );
        assert!(
            head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())),
            "{head}"
        );
        assert!(
            body.starts_with("# HELP t_many Test samples.\n# TYPE t_many gauge\n"),
            "{body}"
        );
        assert!(!body.contains("# EOF"), "{body}");
        let om = "GET /metrics?x=1 HTTP/1.1\r\nAccept: application/openmetrics-text; version=1.0.0";
        let om = exchange(e.local_addr(), om, wait);
        assert!(om.contains("\r\nContent-Type: application/openmetrics-text; version=1.0.0"));
        assert!(
            om.contains("\nt_many{i=\"1\"} 1\n") && om.ends_with("\n# EOF\n"),
            "{om}"
        );
        let head = exchange(e.local_addr(), "HEAD /metrics HTTP/1.1", wait);
        assert_eq!(status(&head), "200");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        assert!(
            head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())),
            "{head}"
        );
        for (request, want) in [
            ("GET / HTTP/1.1", "404"),
            ("GET /metrics/ HTTP/1.1", "404"),
            ("POST /metrics HTTP/1.1", "405"),
            ("GET /metrics HTTP/9.9", "400"),
        ] {
            assert_eq!(
                status(&exchange(e.local_addr(), request, wait)),
                want,
                "{request}"
            );
        }
    }

    #[test]
    fn a_publisher_never_waits_for_a_reader() {
        let latest = Latest::default();
        assert_eq!(latest.get(), None);
        latest.publish(1);
        {
            // A reader holds the value: the publication is skipped, not waited for.
            let _held = latest.0.lock().unwrap();
            latest.publish(2);
        }
        assert_eq!(latest.get(), Some(1));
        latest.publish(3);
        assert_eq!(latest.get(), Some(3));
    }

    #[test]
    fn a_header_line_that_never_ends_is_cut_off() {
        let e = endpoint(1);
        let addr = e.local_addr();
        let mut attacker = TcpStream::connect(addr).unwrap();
        attacker
            .set_write_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        attacker
            .write_all(b"GET /metrics HTTP/1.1\r\nX-Endless: ")
            .unwrap();
        // Up to 64 MiB of one header line. The server reads 8 KiB of head, then answers 431 and
        // closes; the writes fail once the kernel has seen the close, after at most the socket
        // buffers (a few MiB on loopback), so 16 MiB is a bound that no buffering reaches.
        let chunk = vec![b'a'; 64 * 1024];
        let mut written = 0usize;
        while written < 64 << 20 {
            match attacker.write(&chunk) {
                Ok(n) => written += n,
                Err(_) => break,
            }
        }
        assert!(
            written < 16 << 20,
            "the server took {written} bytes of one header line"
        );
        // Others are served meanwhile and after.
        let ok = exchange(addr, "GET /metrics HTTP/1.1", Duration::from_secs(20));
        assert_eq!(status(&ok), "200");
        assert!(ok.contains("t_metrics_connections_dropped_total{reason=\"head_too_large\"} 1"));
    }

    #[test]
    fn a_connection_that_sends_no_request_is_closed_after_the_head_timeout() {
        let e = endpoint(1);
        let start = Instant::now();
        let mut silent = TcpStream::connect(e.local_addr()).unwrap();
        let mut dripping = TcpStream::connect(e.local_addr()).unwrap();
        silent
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        // One byte a second of a request that would be valid: the deadline counts from the
        // connection, not from the latest byte.
        let drip = std::thread::spawn(move || {
            for b in b"GET /metrics HTTP/1.1\r\nX: ".iter().cycle() {
                std::thread::sleep(Duration::from_millis(500));
                if dripping.write_all(&[*b]).is_err() {
                    return start.elapsed();
                }
            }
            unreachable!()
        });
        let mut rest = Vec::new();
        // Ended by the server: end of stream, or a reset.
        let _ = silent.read_to_end(&mut rest);
        let closed = start.elapsed();
        // The limit is 5 s; 20 s of slack for a loaded machine.
        let limit = http::LIMITS.head_timeout;
        assert!(
            closed >= limit && closed < limit + Duration::from_secs(20),
            "{closed:?}"
        );
        assert!(rest.is_empty(), "{rest:?}");
        // The dripping writer sees the close at its next writes (a reset needs one write to come
        // back, a second to fail).
        let cut = drip.join().unwrap();
        assert!(cut < limit + Duration::from_secs(25), "{cut:?}");
    }

    #[test]
    fn idle_connections_are_bounded_and_give_way_to_scrapes() {
        let e = endpoint(1);
        let addr = e.local_addr();
        let max = http::LIMITS.max_connections;
        let idle: Vec<TcpStream> = (0..3 * max)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        // Past `evict_after` (1 s), every idle connection may be displaced.
        std::thread::sleep(2 * http::LIMITS.evict_after);
        let ok = exchange(addr, "GET /metrics HTTP/1.1", Duration::from_secs(20));
        assert_eq!(status(&ok), "200", "{ok}");
        let open = ok
            .lines()
            .find_map(|l| l.strip_prefix("t_metrics_connections_open "))
            .unwrap();
        let open: f64 = open.parse().unwrap();
        assert!(open >= 1.0 && open <= max as f64, "{open}");
        assert!(
            ok.contains("t_metrics_connections_dropped_total{reason=\"evicted\"}"),
            "{ok}"
        );
        drop(idle);
    }

    /// One host opening idle connections faster than they age used to fill the table with
    /// connections none of which could be displaced yet, so that scrapes were closed at once.
    #[test]
    fn a_host_holding_idle_connections_keeps_only_its_share() {
        let e = endpoint(1);
        let addr = e.local_addr();
        let max = http::LIMITS.max_connections;
        let idle: Vec<TcpStream> = (0..3 * max)
            .map(|_| acp_runtime::flood::connect_from([127, 88, 0, 1], addr).unwrap())
            .collect();
        // At once, without waiting for any of them to age: a scrape from another network.
        let ok = exchange(addr, "GET /metrics HTTP/1.1", Duration::from_secs(20));
        assert_eq!(status(&ok), "200", "{ok}");
        let open: f64 = ok
            .lines()
            .find_map(|l| l.strip_prefix("t_metrics_connections_open "))
            .unwrap()
            .parse()
            .unwrap();
        // The host's quarter, and the scrape itself.
        assert_eq!(open, (max / 4 + 1) as f64, "{ok}");
        assert!(
            ok.contains("t_metrics_connections_dropped_total{reason=\"prefix_share\"}"),
            "{ok}"
        );
        drop(idle);
    }

    #[test]
    fn clients_that_do_not_read_get_no_one_else_refused_nor_hold_up_shutdown() {
        // Some 10 MB: more than loopback's socket buffers take while the client reads nothing.
        let e = endpoint(250_000);
        let addr = e.local_addr();
        let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        let stalled: Vec<TcpStream> = (0..8)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(request.as_bytes()).unwrap();
                s
            })
            .collect();
        // Another client is served meanwhile, in full.
        let response = exchange(addr, "GET /metrics HTTP/1.1", Duration::from_secs(30));
        assert_eq!(
            status(&response),
            "200",
            "{}",
            &response[..80.min(response.len())]
        );
        assert!(response.contains("\nt_many{i=\"249999\"} 1\n"));
        // Shutting down does not wait for the stalled clients.
        let start = Instant::now();
        drop(e);
        // Closing is immediate; 2 s allows for a loaded machine.
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        drop(stalled);
    }
}
