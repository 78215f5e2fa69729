//! The HTTP/1.1 server behind `--metrics`: one thread, non-blocking sockets on an epoll loop
//! (`mio`), request heads parsed by `httparse`, and strict limits, so that no client can grow its
//! memory, hold its threads or stop it serving others.
//!
//! - At most [`Limits::max_connections`] connections are open, one network (IPv4 /24, IPv6 /48)
//!   holding at most [`Limits::max_share`] of them: a newcomer from a network at its share may
//!   only displace that network's own idlest connection. When the table is full, a new
//!   connection displaces the one that has made no progress the longest if that one has been idle
//!   for [`Limits::evict_after`]; otherwise the newcomer is closed at once. A host opening
//!   connections faster than they age therefore fills at most its network's share, and scrapers
//!   from other networks always find room.
//! - A request head may hold [`Limits::max_head`] bytes (431 beyond) and must arrive within
//!   [`Limits::head_timeout`] of the connection; a response must make progress at least every
//!   [`Limits::idle_timeout`]. Sockets are written only when they are writable, so a client that
//!   does not read costs its connection slot and its response text, never the others' service.
//! - When `accept` fails for want of file descriptors (or memory), accepting pauses for
//!   [`Limits::accept_backoff`] while the open connections are still served; the failure is
//!   counted and logged once (the first time), and accepting resumes afterwards.
//! - One request per connection (`Connection: close`), no request bodies: a scraper needs no more.
//!
//! The command's own threads never wait for this one: it renders what they publish (see
//! [`super::Scrape`]). Renders are shared by the requests of the same format that arrive within
//! [`Limits::render_reuse`], so a flood of requests costs at most one render per format per period.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use acp_core::prefix::Prefix;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::format::{self, Format};
use super::Scrape;

/// The server's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Most of them one network (IPv4 /24, IPv6 /48) may hold, as a fraction.
    pub max_share: f64,
    /// Bytes of a request head (request line and headers).
    pub max_head: usize,
    /// Time from accepting a connection to having its whole request head.
    pub head_timeout: Duration,
    /// Longest time a response may go without any byte taken by the client.
    pub idle_timeout: Duration,
    /// How long a connection must have been idle to be displaced by a newcomer when the table is
    /// full.
    pub evict_after: Duration,
    /// Pause in accepting after `accept` failed for want of descriptors or memory.
    pub accept_backoff: Duration,
    /// How long a render is reused by later requests of the same format.
    pub render_reuse: Duration,
}

/// The limits `--metrics` serves with (documented in `docs/METRICS.md`).
pub const LIMITS: Limits = Limits {
    max_connections: 64,
    max_share: 0.25,
    max_head: 8 * 1024,
    head_timeout: Duration::from_secs(5),
    idle_timeout: Duration::from_secs(10),
    evict_after: Duration::from_secs(1),
    accept_backoff: Duration::from_millis(250),
    render_reuse: Duration::from_millis(100),
};

/// Why the server closed a connection without a complete response, or could not take one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dropped {
    /// `accept` failed: out of file descriptors or memory.
    AcceptFailed,
    /// Closed at once: the table was full of busy connections.
    TableFull,
    /// Closed at once: its network held its share, none of its connections idle enough.
    PrefixShare,
    /// Displaced, idle, by a newcomer when the table was full.
    Evicted,
    /// The request head exceeded its size limit (answered 431).
    HeadTooLarge,
    /// The request head was not valid HTTP/1.x (answered 400).
    BadRequest,
    /// No complete request head in time, or a response not read in time.
    TimedOut,
}

impl Dropped {
    /// The `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            Dropped::AcceptFailed => "accept_failed",
            Dropped::TableFull => "table_full",
            Dropped::PrefixShare => "prefix_share",
            Dropped::Evicted => "evicted",
            Dropped::HeadTooLarge => "head_too_large",
            Dropped::BadRequest => "bad_request",
            Dropped::TimedOut => "timed_out",
        }
    }
}

/// What the server has counted, read by the exposition of the endpoint's own families.
#[derive(Debug, Default, Clone)]
pub struct ServerStats {
    /// Connections dropped, by reason.
    pub dropped: BTreeMap<Dropped, u64>,
    /// Connections open now.
    pub open: usize,
}

/// The server's counters, shared with the scrape that reports them.
pub type SharedStats = Arc<Mutex<ServerStats>>;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connection `i` of the table has token `FIRST + i`.
const FIRST: usize = 2;

/// A connection and where it stands.
struct Connection {
    stream: TcpStream,
    /// The client's network.
    network: Prefix,
    /// When it was accepted.
    opened: Instant,
    /// When it last made progress (bytes read or written).
    active: Instant,
    state: State,
}

enum State {
    /// Reading the request head.
    Reading(Vec<u8>),
    /// Writing `head` then `body`; `sent` bytes of the two, in order, are written.
    Writing {
        head: Vec<u8>,
        body: Option<Arc<[u8]>>,
        sent: usize,
    },
}

/// A response: status, extra headers and body.
struct Response {
    status: &'static str,
    content_type: &'static str,
    extra: &'static str,
    body: Arc<[u8]>,
    /// An answer to HEAD: the headers of the GET response, without its body.
    head_only: bool,
}

impl Response {
    fn text(status: &'static str, body: &str) -> Self {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            extra: "",
            body: body.as_bytes().into(),
            head_only: false,
        }
    }
}

/// The server state owned by its thread.
pub struct Server {
    poll: Poll,
    listener: TcpListener,
    limits: Limits,
    prefix: &'static str,
    scrape: Scrape,
    table: Vec<Option<Connection>>,
    stats: SharedStats,
    /// Accepting resumes at this instant, after a failure for want of resources.
    accept_paused_until: Option<Instant>,
    /// Whether the failure to accept has been logged.
    logged_accept_failure: bool,
    /// The latest render of each format, and when it was made.
    renders: Vec<(Format, Instant, Arc<[u8]>)>,
}

impl Server {
    /// A server of `listener`; returns it and the waker that [`Server::run`] ends on.
    pub fn new(
        listener: std::net::TcpListener,
        limits: Limits,
        prefix: &'static str,
        scrape: Scrape,
        stats: SharedStats,
    ) -> std::io::Result<(Self, Waker)> {
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let table = (0..limits.max_connections).map(|_| None).collect();
        let server = Server {
            poll,
            listener,
            limits,
            prefix,
            scrape,
            table,
            stats,
            accept_paused_until: None,
            logged_accept_failure: false,
            renders: Vec::new(),
        };
        Ok((server, waker))
    }

    /// Serves until `stop` is set (and the waker woken).
    pub fn run(mut self, stop: &AtomicBool) {
        let mut events = Events::with_capacity(256);
        while !stop.load(Ordering::Acquire) {
            let timeout = self.next_deadline().map(|at| {
                // Round up, so that a deadline is past when the poll returns.
                at.saturating_duration_since(Instant::now()) + Duration::from_millis(1)
            });
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                tracing::error!("metrics endpoint: cannot wait for its sockets: {e}");
                return;
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    Token(t) => self.serve(t - FIRST),
                }
            }
            let now = Instant::now();
            if self.accept_paused_until.is_some_and(|at| at <= now) {
                self.accept_paused_until = None;
                self.accept();
            }
            self.expire(now);
        }
    }

    /// The next instant something times out: a connection, or the pause in accepting.
    fn next_deadline(&self) -> Option<Instant> {
        let connections = self.table.iter().flatten().map(|c| self.deadline(c));
        connections.chain(self.accept_paused_until).min()
    }

    fn deadline(&self, c: &Connection) -> Instant {
        match c.state {
            State::Reading(_) => c.opened + self.limits.head_timeout,
            State::Writing { .. } => c.active + self.limits.idle_timeout,
        }
    }

    fn count(&self, why: Dropped) {
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        *stats.dropped.entry(why).or_default() += 1;
    }

    fn set_open(&self) {
        let open = self.table.iter().flatten().count();
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open = open;
    }

    /// Accepts every pending connection, unless accepting is paused.
    fn accept(&mut self) {
        if self.accept_paused_until.is_some() {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if out_of_resources(&e) => {
                    self.count(Dropped::AcceptFailed);
                    if !self.logged_accept_failure {
                        self.logged_accept_failure = true;
                        tracing::warn!(
                            "metrics endpoint: cannot accept a connection ({e}); pausing \
                             {:?} each time this happens (logged once, counted in \
                             {}_metrics_connections_dropped_total{{reason=\"accept_failed\"}})",
                            self.limits.accept_backoff,
                            self.prefix
                        );
                    }
                    self.accept_paused_until = Some(Instant::now() + self.limits.accept_backoff);
                    break;
                }
                // The connection failed before we took it (reset, aborted): nothing to serve.
                Err(_) => {}
            }
        }
        self.set_open();
    }

    /// The connection that has made no progress the longest among those `of` accepts, if it has
    /// been idle for [`Limits::evict_after`].
    fn evictable(&self, now: Instant, of: impl Fn(&Connection) -> bool) -> Option<usize> {
        let (i, active) = self
            .table
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().filter(|c| of(c)).map(|c| (i, c.active)))
            .min_by_key(|&(_, active)| active)?;
        (now.duration_since(active) >= self.limits.evict_after).then_some(i)
    }

    /// Puts `stream` in a free slot, displacing the longest-idle connection when none is free
    /// (its own network's when that network holds its share).
    fn admit(&mut self, mut stream: TcpStream, peer: std::net::SocketAddr) {
        let now = Instant::now();
        let network = Prefix::of(peer.ip());
        let held = self
            .table
            .iter()
            .flatten()
            .filter(|c| c.network == network)
            .count();
        let share = ((self.limits.max_share * self.limits.max_connections as f64) as usize).max(1);
        let free = self.table.iter().position(Option::is_none);
        let (slot, refusal) = if held >= share {
            (
                self.evictable(now, |c| c.network == network),
                Dropped::PrefixShare,
            )
        } else {
            (
                free.or_else(|| self.evictable(now, |_| true)),
                Dropped::TableFull,
            )
        };
        let Some(slot) = slot else {
            self.count(refusal);
            return;
        };
        if self.table[slot].is_some() {
            self.close(slot, Some(Dropped::Evicted));
        }
        let token = Token(FIRST + slot);
        if self
            .poll
            .registry()
            .register(&mut stream, token, Interest::READABLE)
            .is_err()
        {
            return;
        }
        self.table[slot] = Some(Connection {
            stream,
            network,
            opened: now,
            active: now,
            state: State::Reading(Vec::new()),
        });
    }

    /// Closes connection `i`, counting why when it ended early.
    fn close(&mut self, i: usize, why: Option<Dropped>) {
        if let Some(mut c) = self.table[i].take() {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
        if let Some(why) = why {
            self.count(why);
        }
        self.set_open();
    }

    /// Closes the connections past their deadline.
    fn expire(&mut self, now: Instant) {
        for i in 0..self.table.len() {
            let late = self.table[i]
                .as_ref()
                .is_some_and(|c| self.deadline(c) <= now);
            if late {
                self.close(i, Some(Dropped::TimedOut));
            }
        }
    }

    /// Reads or writes connection `i` as far as its socket allows.
    fn serve(&mut self, i: usize) {
        let Some(c) = self.table.get_mut(i).and_then(Option::as_mut) else {
            return;
        };
        let outcome = match &mut c.state {
            State::Reading(buf) => read_head(&mut c.stream, buf, self.limits.max_head),
            State::Writing { .. } => Progress::Wrote(write_some(c)),
        };
        match outcome {
            Progress::Read(true) => self.table[i].as_mut().unwrap().active = Instant::now(),
            Progress::Read(false) => {}
            Progress::Head(head) => {
                let response = match head {
                    Ok(request) => self.respond(&request),
                    Err(why) => {
                        self.count(why);
                        match why {
                            Dropped::HeadTooLarge => Response::text(
                                "431 Request Header Fields Too Large",
                                "request head too large\n",
                            ),
                            _ => Response::text("400 Bad Request", "bad request\n"),
                        }
                    }
                };
                self.start_writing(i, response);
            }
            Progress::Wrote(Ok(WriteState::Done)) | Progress::Closed => self.close(i, None),
            Progress::Wrote(Ok(WriteState::More(progressed))) => {
                if progressed {
                    self.table[i].as_mut().unwrap().active = Instant::now();
                }
            }
            Progress::Wrote(Err(())) => self.close(i, None),
        }
    }

    /// Switches connection `i` to writing `response`, and writes what the socket takes now.
    fn start_writing(&mut self, i: usize, response: Response) {
        let Some(c) = self.table[i].as_mut() else {
            return;
        };
        let head = format!(
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
            response.status,
            response.content_type,
            response.body.len(),
            response.extra
        );
        let body = (!response.head_only && !response.body.is_empty()).then_some(response.body);
        c.state = State::Writing {
            head: head.into_bytes(),
            body,
            sent: 0,
        };
        // Stop reading (the rest of the request is ignored); wait for room to write.
        let token = Token(FIRST + i);
        let reregistered =
            self.poll
                .registry()
                .reregister(&mut c.stream, token, Interest::WRITABLE);
        match (reregistered, write_some(c)) {
            (Ok(()), Ok(WriteState::More(_))) => {}
            _ => self.close(i, None),
        }
    }

    /// The answer to a complete request head.
    fn respond(&mut self, request: &Request) -> Response {
        let path = request
            .path
            .split_once('?')
            .map_or(&*request.path, |(p, _)| p);
        if path != "/metrics" {
            return Response::text("404 Not Found", "not found: the metrics are at /metrics\n");
        }
        let head_only = match request.method.as_str() {
            "GET" => false,
            "HEAD" => true,
            _ => {
                let mut refused =
                    Response::text("405 Method Not Allowed", "only GET and HEAD are served\n");
                refused.extra = "Allow: GET, HEAD\r\n";
                return refused;
            }
        };
        let format = Format::negotiate(request.accept.as_deref());
        match self.render(format) {
            Some(body) => Response {
                status: "200 OK",
                content_type: format.content_type(),
                extra: "",
                body,
                head_only,
            },
            None => Response::text("500 Internal Server Error", "cannot encode the metrics\n"),
        }
    }

    /// The exposition in `format`: the latest render when it is recent enough, else a new one.
    fn render(&mut self, format: Format) -> Option<Arc<[u8]>> {
        let now = Instant::now();
        let recent = self
            .renders
            .iter()
            .find(|(f, at, _)| *f == format && now.duration_since(*at) < self.limits.render_reuse);
        if let Some((_, _, text)) = recent {
            return Some(text.clone());
        }
        let stats = self
            .stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let collectors = vec![
            (self.scrape)(),
            Box::new(super::EndpointFamilies(stats)) as _,
        ];
        let text: Arc<[u8]> = format::encode(format, self.prefix, collectors)
            .ok()?
            .into_bytes()
            .into();
        self.renders.retain(|(f, _, _)| *f != format);
        self.renders.push((format, now, text.clone()));
        Some(text)
    }
}

/// A request head, as far as the server needs it.
struct Request {
    method: String,
    path: String,
    accept: Option<String>,
}

/// What one readiness event achieved.
enum Progress {
    /// Bytes read (true) or none yet (false); the head is not complete.
    Read(bool),
    /// The request head is complete (or broke a rule).
    Head(Result<Request, Dropped>),
    /// The response was written, or more remains.
    Wrote(Result<WriteState, ()>),
    /// The client closed or reset the connection.
    Closed,
}

enum WriteState {
    /// Everything written.
    Done,
    /// More remains; whether any byte was written now.
    More(bool),
}

/// Whether `accept` failed for want of descriptors or memory (rather than for one connection).
fn out_of_resources(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Reads what `stream` holds into `buf`, up to `max` bytes in all, and parses the head once it
/// is complete.
fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Progress {
    let mut chunk = [0u8; 2048];
    let mut progressed = false;
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Progress::Closed,
            Ok(n) => {
                progressed = true;
                buf.extend_from_slice(&chunk[..n]);
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut parsed = httparse::Request::new(&mut headers);
                match parsed.parse(buf) {
                    Ok(httparse::Status::Complete(_)) => {
                        let accept = parsed
                            .headers
                            .iter()
                            .find(|h| h.name.eq_ignore_ascii_case("accept"))
                            .map(|h| String::from_utf8_lossy(h.value).into_owned());
                        return Progress::Head(Ok(Request {
                            method: parsed.method.unwrap_or("").to_string(),
                            path: parsed.path.unwrap_or("").to_string(),
                            accept,
                        }));
                    }
                    Ok(httparse::Status::Partial) if buf.len() <= max => {}
                    Ok(httparse::Status::Partial) => {
                        return Progress::Head(Err(Dropped::HeadTooLarge))
                    }
                    Err(httparse::Error::TooManyHeaders) => {
                        return Progress::Head(Err(Dropped::HeadTooLarge))
                    }
                    Err(_) => return Progress::Head(Err(Dropped::BadRequest)),
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Progress::Read(progressed),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Progress::Closed,
        }
    }
}

/// Writes as much of connection `c`'s response as its socket takes.
fn write_some(c: &mut Connection) -> Result<WriteState, ()> {
    let State::Writing { head, body, sent } = &mut c.state else {
        return Ok(WriteState::More(false));
    };
    let body: &[u8] = body.as_deref().unwrap_or(&[]);
    let total = head.len() + body.len();
    let mut progressed = false;
    while *sent < total {
        let rest = match *sent < head.len() {
            true => &head[*sent..],
            false => &body[*sent - head.len()..],
        };
        match c.stream.write(rest) {
            Ok(0) => return Err(()),
            Ok(n) => {
                *sent += n;
                progressed = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(WriteState::More(progressed)),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(()),
        }
    }
    let _ = c.stream.flush();
    Ok(WriteState::Done)
}
