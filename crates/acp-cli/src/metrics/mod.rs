//! `--metrics ADDR`: a Prometheus endpoint for `acp monitor` and `acp source`.
//!
//! An [`Endpoint`] serves `GET /metrics` over HTTP on its own thread, in the OpenMetrics text
//! format (which Prometheus scrapes natively), using the official Rust client
//! (`prometheus-client`) for the encoding and `tiny_http` for the server. Nothing is counted
//! twice: at each scrape the endpoint asks the command for a [`Collector`] holding what the
//! command has already published (the monitor server's totals and, on demand, its session table;
//! the source driver's latest report), and encodes it. A scrape therefore reads published state
//! only: the monitor's server thread at most copies its session table when asked, the same
//! on-demand copy its periodic reports use (at most once per snapshot period, however many ask),
//! and the source's driver never waits for a scrape ([`Latest`]). Responses are written on
//! threads of their own, so a client that does not read holds up neither the endpoint nor the
//! command's shutdown. [`monitor`] and [`source`] write the families of each command; the
//! endpoint and the writing helpers ([`Families`]) are shared.
//!
//! The names, labels and units are documented in `docs/METRICS.md`.

pub mod monitor;
pub mod source;

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::{Registry, Unit};

/// The content type of the OpenMetrics text format, which Prometheus negotiates and parses.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What a scrape reads: a fresh collector of the command's published state.
pub type Scrape = Box<dyn Fn() -> Box<dyn Collector> + Send>;

/// A running metrics endpoint; dropping it stops the server and joins its thread (responses still
/// being written finish on their own threads).
pub struct Endpoint {
    server: Arc<tiny_http::Server>,
    local: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Binds `addr` and serves the metrics named `PREFIX_…` that `scrape` collects. A bad
    /// address (taken, not this host's, privileged) is a usage error reported as `--metrics`.
    pub fn start(addr: SocketAddr, prefix: &'static str, scrape: Scrape) -> anyhow::Result<Self> {
        let listener =
            TcpListener::bind(addr).map_err(|e| crate::bind_error("--metrics", addr, e))?;
        let local = listener.local_addr()?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| anyhow::anyhow!("cannot serve metrics on {addr}: {e}"))?;
        let server = Arc::new(server);
        let server_t = server.clone();
        let thread = std::thread::Builder::new()
            .name("acp-metrics".into())
            .spawn(move || {
                let writers = Arc::new(AtomicUsize::new(0));
                // Ends when `Drop` unblocks the server.
                for request in server_t.incoming_requests() {
                    let response = respond(request.method(), request.url(), prefix, &scrape);
                    send(request, response, &writers);
                }
            })
            .context("cannot start the metrics thread")?;
        Ok(Endpoint {
            server,
            local,
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
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Responses being written at once, at most: each holds a thread and its text until the client
/// has read it.
const MAX_WRITERS: usize = 4;

/// Writes `response` on a thread of its own, so that a client that does not read it (a large
/// exposition fills the socket buffer) holds up neither the next scrape nor the command's
/// shutdown, which joins only the endpoint's thread. Beyond [`MAX_WRITERS`] such clients, the
/// request gets a short 503 instead.
fn send(
    request: tiny_http::Request,
    response: tiny_http::Response<std::io::Cursor<Vec<u8>>>,
    writers: &Arc<AtomicUsize>,
) {
    if writers.fetch_add(1, Ordering::AcqRel) >= MAX_WRITERS {
        writers.fetch_sub(1, Ordering::AcqRel);
        let busy = tiny_http::Response::from_string("too many scrapes in progress\n");
        // Small enough for any socket buffer. A client that went away is no error of ours.
        let _ = request.respond(busy.with_status_code(503));
        return;
    }
    let writers_t = writers.clone();
    let spawned = std::thread::Builder::new()
        .name("acp-metrics-write".into())
        .spawn(move || {
            let _ = request.respond(response);
            writers_t.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        writers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The answer to one request: the exposition for `GET /metrics` (and `HEAD`), 404 for any other
/// path, 405 for any other method.
fn respond(
    method: &tiny_http::Method,
    url: &str,
    prefix: &'static str,
    scrape: &Scrape,
) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    use tiny_http::{Method, Response};
    let path = url.split_once('?').map_or(url, |(path, _)| path);
    if path != "/metrics" {
        return Response::from_string("not found: the metrics are at /metrics\n")
            .with_status_code(404);
    }
    if !matches!(method, Method::Get | Method::Head) {
        return Response::from_string("only GET and HEAD are served\n").with_status_code(405);
    }
    match render(prefix, scrape()) {
        Ok(text) => {
            // The length is known: send it, rather than chunks, whatever the size.
            let mut response = Response::from_string(text).with_chunked_threshold(usize::MAX);
            if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", CONTENT_TYPE) {
                response.add_header(header);
            }
            response
        }
        Err(_) => Response::from_string("cannot encode the metrics\n").with_status_code(500),
    }
}

/// The OpenMetrics text of `collector`, every name prefixed with `prefix_`.
pub fn render(
    prefix: &'static str,
    collector: Box<dyn Collector>,
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::with_prefix(prefix);
    registry.register_collector(collector);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    Ok(text)
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

    /// A counter without labels.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) -> std::fmt::Result {
        let counter = ConstCounter::new(value);
        let metric = self
            .encoder
            .encode_descriptor(name, help, None, counter.metric_type())?;
        counter.encode(metric)
    }

    /// A gauge without labels; only its descriptor while `value` is unknown.
    pub fn gauge(
        &mut self,
        name: &str,
        help: &str,
        unit: Option<Unit>,
        value: Option<f64>,
    ) -> std::fmt::Result {
        let metric =
            self.encoder
                .encode_descriptor(name, help, unit.as_ref(), MetricType::Gauge)?;
        match value {
            Some(v) => ConstGauge::new(v).encode(metric),
            None => Ok(()),
        }
    }

    /// An info family: one sample, valued 1, that carries `labels`.
    pub fn info(
        &mut self,
        name: &str,
        help: &str,
        labels: Vec<(&'static str, String)>,
    ) -> std::fmt::Result {
        let info = Info::new(labels);
        let metric = self
            .encoder
            .encode_descriptor(name, help, None, info.metric_type())?;
        info.encode(metric)
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

    #[test]
    fn only_get_and_head_of_metrics_are_answered_with_the_exposition() {
        use tiny_http::Method;
        let scrape = scrape_of(1);
        let status =
            |method: &Method, url: &str| respond(method, url, "t", &scrape).status_code().0;
        assert_eq!(status(&Method::Get, "/metrics"), 200);
        assert_eq!(status(&Method::Head, "/metrics"), 200);
        assert_eq!(status(&Method::Get, "/metrics?name[]=x"), 200);
        assert_eq!(status(&Method::Get, "/"), 404);
        assert_eq!(status(&Method::Get, "/metrics/"), 404);
        assert_eq!(status(&Method::Post, "/metrics"), 405);
        let text = render("t", Box::new(Many { samples: 2 })).unwrap();
        assert_eq!(
            text,
            "# HELP t_many Test samples.\n# TYPE t_many gauge\nt_many{i=\"0\"} 1\n\
             t_many{i=\"1\"} 1\n# EOF\n"
        );
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
    fn a_client_that_does_not_read_holds_up_neither_scrapes_nor_shutdown() {
        // Some 25 MB: more than the socket buffers take while the client reads nothing.
        let endpoint =
            Endpoint::start("127.0.0.1:0".parse().unwrap(), "t", scrape_of(1_000_000)).unwrap();
        let addr = endpoint.local_addr();
        let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        let mut stalled = TcpStream::connect(addr).unwrap();
        stalled.write_all(request.as_bytes()).unwrap();
        // Another client is served meanwhile, in full.
        let mut reader = TcpStream::connect(addr).unwrap();
        reader
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let close = request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
        reader.write_all(close.as_bytes()).unwrap();
        let mut response = String::new();
        reader.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{}", &response[..80]);
        assert!(
            response.contains("\r\nContent-Length: "),
            "{}",
            &response[..200]
        );
        assert!(response.ends_with("t_many{i=\"999999\"} 1\n# EOF\n"));
        // Shutting down does not wait for the stalled client.
        let start = Instant::now();
        drop(endpoint);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        drop(stalled);
    }
}
