//! `--publish unix:PATH`: fresh updates as JSON lines to every client of a Unix stream socket.
//!
//! The monitor listens on `PATH`; each client that connects gets every fresh update from then on,
//! one JSON line each (the `--print-updates` form). Each client has its own [`Drain`]: its own
//! latest-value mailbox and writing thread, so a client that reads slowly, or not at all, loses
//! only its own superseded updates and holds up neither the other clients nor the monitor. The
//! [`Fanout`] sink, drained from the monitor's mailbox like any other sink, accepts clients and
//! offers each update to every client's mailbox; a client whose reading end is closed is dropped.
//!
//! A client's memory is bounded: its mailbox holds at most [`CLIENT_PENDING_BYTES`] of payload
//! (updates of further sessions are dropped and counted until the client catches up), and a
//! client that takes nothing for [`CLIENT_WRITE_TIMEOUT`] while a write waits is disconnected and
//! counted (`clients_cut_slow`): it holds at most its mailbox, the batch its writer is on and the
//! kernel's socket buffer, not the monitor's 64 MiB.
//!
//! At most [`MAX_CLIENTS`] clients are served at once (each costs a thread and a mailbox); further
//! connections are closed at once and counted. A socket file left at `PATH` by a monitor that died
//! is replaced; a live one (something accepts connections on it) or any other file is refused.
//! The file is removed at exit.

use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use acp_runtime::mailbox::{MailboxConfig, OwnedUpdate};
use serde_json::{json, Value};

use super::{Counts, Delivered, Drain, LineOut, Lines, Sink};

/// Most clients served at once.
pub const MAX_CLIENTS: usize = 64;

/// Most payload bytes waiting for one client (its mailbox's bound).
pub const CLIENT_PENDING_BYTES: usize = 1 << 20;

/// Longest a write to a client may wait with nothing taken before the client is disconnected.
pub const CLIENT_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a client's writer writes: its connection, which it cuts (and counts) when a write
/// times out.
struct ClientOut {
    stream: UnixStream,
    status: Arc<Status>,
}

impl LineOut for ClientOut {
    fn write_lines(&mut self, text: &str) -> bool {
        match self.stream.write_all(text.as_bytes()) {
            Ok(()) => true,
            Err(e) => {
                // SO_SNDTIMEO expired: the client took nothing for that long.
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) {
                    self.status.cut_slow.fetch_add(1, Ordering::Relaxed);
                    let _ = self.stream.shutdown(std::net::Shutdown::Both);
                }
                false
            }
        }
    }
}

/// Binds `path`, replacing a stale socket file but nothing else.
pub fn listen(path: &Path) -> io::Result<UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    "another process is listening on it",
                ));
            }
            std::fs::remove_file(path)?;
        }
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a file that is not a socket is in the way",
            ))
        }
        Err(_) => {}
    }
    let listener = UnixListener::bind(path)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// The counts of a Unix sink's clients, for reports.
#[derive(Default)]
pub struct Status {
    /// Clients connected now.
    clients: AtomicU64,
    /// Clients that have connected since the start.
    accepted: AtomicU64,
    /// Connections closed at once because [`MAX_CLIENTS`] were being served.
    refused: AtomicU64,
    /// Clients disconnected for taking nothing for [`CLIENT_WRITE_TIMEOUT`].
    cut_slow: AtomicU64,
    /// The clients' counts: live ones as of the latest tick, plus those gone.
    counts: Mutex<Counts>,
}

impl Status {
    /// ` (N clients, M since start; to clients: …)`, and the same as JSON fields.
    pub fn describe(&self) -> (String, Value) {
        let c = *self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let (clients, accepted, refused, cut) = (
            self.clients.load(Ordering::Relaxed),
            self.accepted.load(Ordering::Relaxed),
            self.refused.load(Ordering::Relaxed),
            self.cut_slow.load(Ordering::Relaxed),
        );
        (
            format!(
                "{clients} clients ({accepted} since start, {refused} refused, {cut} cut for not \
                 reading); to clients {} written, {} superseded, {} dropped, {} not written yet",
                c.delivered, c.superseded, c.dropped, c.pending
            ),
            json!({
                "clients": clients,
                "clients_accepted": accepted,
                "clients_refused": refused,
                "clients_cut_slow": cut,
                "client_written": c.delivered,
                "client_superseded": c.superseded,
                "client_dropped": c.dropped,
                "client_unwritten": c.pending,
            }),
        )
    }
}

struct Client {
    drain: Drain,
    /// To unblock a writer stuck on a client that does not read, at exit.
    stream: UnixStream,
}

/// The Unix socket sink: see the [module](self) documentation.
pub struct Fanout {
    listener: UnixListener,
    path: PathBuf,
    clients: Vec<Client>,
    /// Counts of the clients that have gone.
    gone: Counts,
    max_entries: usize,
    max_clients: usize,
    write_timeout: Duration,
    synced: bool,
    status: Arc<Status>,
}

impl Fanout {
    /// Serves clients of `listener` (bound at `path`), each with a mailbox of `max_entries`.
    pub fn new(listener: UnixListener, path: PathBuf, max_entries: usize, synced: bool) -> Self {
        Fanout {
            listener,
            path,
            clients: Vec::new(),
            gone: Counts::default(),
            max_entries,
            max_clients: MAX_CLIENTS,
            write_timeout: CLIENT_WRITE_TIMEOUT,
            synced,
            status: Arc::new(Status::default()),
        }
    }

    /// Its counts, readable while it runs.
    pub fn status(&self) -> Arc<Status> {
        self.status.clone()
    }

    fn accept(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors and the like: try again next tick.
                Err(_) => return,
            };
            if self.clients.len() >= self.max_clients {
                self.status.refused.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let bounds = MailboxConfig {
                max_entries: self.max_entries,
                max_bytes: CLIENT_PENDING_BYTES,
            };
            let started = stream
                .set_nonblocking(false)
                .and_then(|()| stream.set_write_timeout(Some(self.write_timeout)))
                .and_then(|()| stream.try_clone())
                .map_err(anyhow::Error::from)
                .and_then(|stream| {
                    let out = ClientOut {
                        stream,
                        status: self.status.clone(),
                    };
                    Drain::start_bounded("acp-unix-client", bounds, Lines::new(out, self.synced))
                });
            if let Ok(drain) = started {
                self.clients.push(Client { drain, stream });
                self.status.accepted.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Drops the clients that are gone and refreshes the status.
    fn refresh(&mut self) {
        let gone = &mut self.gone;
        self.clients.retain(|c| {
            if c.drain.is_closed() {
                gone.add(c.drain.counts());
                return false;
            }
            true
        });
        let mut counts = self.gone;
        for c in &self.clients {
            counts.add(c.drain.counts());
        }
        *self
            .status
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = counts;
        self.status
            .clients
            .store(self.clients.len() as u64, Ordering::Relaxed);
    }
}

impl Sink for Fanout {
    fn deliver(&mut self, batch: &[OwnedUpdate]) -> Delivered {
        for c in &self.clients {
            for u in batch {
                c.drain.mailbox().offer(u.clone());
            }
        }
        Delivered {
            count: batch.len() as u64,
            open: true,
        }
    }

    fn tick(&mut self) -> bool {
        self.accept();
        self.refresh();
        true
    }

    /// Lets every client's writer deliver what is pending within `grace`, then cuts the
    /// connections of those still writing (clients that do not read).
    fn finish(&mut self, grace: Duration) {
        let deadline = Instant::now() + grace;
        for c in &self.clients {
            c.drain.close();
        }
        let mut counts = self.gone;
        for c in self.clients.drain(..) {
            let (ended, n) = c.drain.finish_by(deadline);
            if !ended {
                let _ = c.stream.shutdown(std::net::Shutdown::Both);
            }
            counts.add(n);
        }
        *self
            .status
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = counts;
        self.status.clients.store(0, Ordering::Relaxed);
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader};

    use super::*;

    fn update(seq: u64) -> OwnedUpdate {
        OwnedUpdate {
            key: acp_core::monitor::SessionKey {
                peer: "127.0.0.1:9".parse().unwrap(),
                session: 5,
            },
            seq,
            gen_ts: seq,
            probe: false,
            payload: b"x".to_vec(),
            received: acp_core::Time::from_nanos(seq),
        }
    }

    #[test]
    fn clients_beyond_the_limit_are_refused_and_gone_clients_are_dropped() {
        let dir = acp_testkit::Scratch::new("acp-unix-sink");
        let path = dir.join("s.sock");
        let listener = listen(&path).unwrap();
        let mut fanout = Fanout::new(listener, path.clone(), 16, false);
        fanout.max_clients = 1;
        let status = fanout.status();
        let first = UnixStream::connect(&path).unwrap();
        let second = UnixStream::connect(&path).unwrap();
        assert!(fanout.tick());
        assert_eq!(status.describe().1["clients"], 1);
        assert_eq!(status.describe().1["clients_refused"], 1);
        // The refused one is closed: it reads end of file.
        let mut line = String::new();
        assert_eq!(BufReader::new(&second).read_line(&mut line).unwrap(), 0);
        // The served one gets each update as a JSON line.
        fanout.deliver(&[update(1)]);
        let mut reader = BufReader::new(first.try_clone().unwrap());
        reader.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (v["seq"].as_u64(), v["session"].as_str()),
            (Some(1), Some("0000000000000005"))
        );
        // Once it hangs up, its writer fails at the next update and the client is dropped,
        // making room for another.
        drop((reader, first));
        let until = Instant::now() + Duration::from_secs(10);
        let mut seq = 2;
        while status.describe().1["clients"] != 0 {
            assert!(Instant::now() < until, "the gone client is still served");
            fanout.deliver(&[update(seq)]);
            seq += 1;
            std::thread::sleep(Duration::from_millis(10));
            fanout.tick();
        }
        let _third = UnixStream::connect(&path).unwrap();
        fanout.tick();
        assert_eq!(status.describe().1["clients_accepted"], 2);
        fanout.finish(Duration::from_secs(1));
        assert!(!path.exists());
    }

    /// A client that never read used to pin up to the monitor's 64 MiB of pending payload (and
    /// its thread) for as long as it stayed connected.
    #[test]
    fn a_client_that_never_reads_holds_a_bounded_buffer_and_is_cut() {
        let dir = acp_testkit::Scratch::new("acp-unix-slow");
        let path = dir.join("s.sock");
        let listener = listen(&path).unwrap();
        let mut fanout = Fanout::new(listener, path.clone(), 10_000, false);
        fanout.write_timeout = Duration::from_millis(300);
        let status = fanout.status();
        let _silent = UnixStream::connect(&path).unwrap();
        fanout.tick();
        // 200 sessions of 60 kB each: 12 MB offered to a client that takes nothing.
        let big = |session: u64| {
            let mut u = update(1);
            u.key.session = session;
            u.payload = vec![b'p'; 60_000];
            u
        };
        let batch: Vec<OwnedUpdate> = (1..=200).map(big).collect();
        fanout.deliver(&batch);
        let mailbox = fanout.clients[0].drain.mailbox().stats();
        assert!(
            mailbox.pending_bytes <= CLIENT_PENDING_BYTES,
            "{} bytes pending",
            mailbox.pending_bytes
        );
        assert!(mailbox.dropped > 0, "{mailbox:?}");
        // Its writer waits on the full socket, then gives up: the client is cut and counted.
        let until = Instant::now() + Duration::from_secs(20);
        while status.describe().1["clients"] != 0 {
            assert!(Instant::now() < until, "the silent client is still served");
            fanout.deliver(&batch[..1]);
            std::thread::sleep(Duration::from_millis(20));
            fanout.tick();
        }
        assert_eq!(status.describe().1["clients_cut_slow"], 1);
        fanout.finish(Duration::from_secs(1));
    }
}
