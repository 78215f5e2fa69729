//! The monitor server: one UDP socket, many sources.
//!
//! A thread receives datagrams in batches (`recvmmsg`), passes each to the sans-IO
//! [`acp_core::Monitor`], hands fresh updates to the application's callback, and returns the ACKs
//! in batches (`sendmmsg`). Malformed datagrams are counted and dropped by the monitor. Every
//! `snapshot_every` the thread publishes a [`Snapshot`] of per-session statistics that other
//! threads read without disturbing it; [`MonitorServer::stop`] ends the thread and returns the final
//! snapshot.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use acp_core::monitor::{Delivery, MonitorStats, SessionKey, SessionStats};
use acp_core::{Monitor, MonitorConfig, Time};

use crate::clock;
use crate::net::{RecvBatch, SendBatch};

/// Called for every fresh update, on the server thread.
pub type OnUpdate = Box<dyn FnMut(&Delivery<'_>) + Send>;

/// Server parameters.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind (IPv4 or IPv6; port 0 picks one).
    pub listen: SocketAddr,
    /// The monitor's own parameters.
    pub monitor: MonitorConfig,
    /// Datagrams per `recvmmsg`/`sendmmsg` call.
    pub batch: usize,
    /// How often the snapshot is refreshed.
    pub snapshot_every: Duration,
}

impl ServerConfig {
    /// Defaults for `listen`: 64-datagram batches, snapshot every 200 ms.
    pub fn new(listen: SocketAddr, monitor: MonitorConfig) -> Self {
        ServerConfig {
            listen,
            monitor,
            batch: 64,
            snapshot_every: Duration::from_millis(200),
        }
    }
}

/// One session as seen at snapshot time.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// Peer and session id.
    pub key: SessionKey,
    /// The monitor's statistics.
    pub stats: SessionStats,
    /// True time-average age from the first to the latest update received (s), when clocks are
    /// declared synchronised. (Measured to the latest arrival rather than to the snapshot, so a
    /// source that has finished is not charged for the time since it stopped.)
    pub avg_age: Option<f64>,
}

/// The server's state at one instant.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// When it was taken.
    pub at: Time,
    /// Monitor-wide counters.
    pub stats: MonitorStats,
    /// Datagrams longer than a receive slot, dropped unread (none can be, short of IPv6
    /// jumbograms: a slot holds the largest UDP payload).
    pub truncated: u64,
    /// ACKs the kernel took to send (`stats.acks` counts those the monitor wrote).
    pub acks_sent: u64,
    /// Sessions, ordered by key.
    pub sessions: Vec<SessionReport>,
}

/// A running monitor server.
pub struct MonitorServer {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Snapshot>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// What the server counts beside the monitor.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    truncated: u64,
    acks_sent: u64,
}

fn snapshot(monitor: &Monitor, counters: Counters, now: Time) -> Snapshot {
    let mut sessions: Vec<SessionReport> = monitor
        .sessions()
        .map(|(key, stats)| SessionReport {
            key: *key,
            avg_age: stats.avg_age(stats.last_seen),
            stats: stats.clone(),
        })
        .collect();
    sessions.sort_by_key(|s| s.key);
    Snapshot {
        at: now,
        stats: monitor.stats().clone(),
        truncated: counters.truncated,
        acks_sent: counters.acks_sent,
        sessions,
    }
}

impl MonitorServer {
    /// Binds and starts serving; `on_update` receives every fresh update.
    pub fn start(cfg: ServerConfig, mut on_update: Option<OnUpdate>) -> io::Result<Self> {
        let socket = UdpSocket::bind(cfg.listen)?;
        socket.set_read_timeout(Some(Duration::from_millis(20)))?;
        let local = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Snapshot::default()));
        let (stop_t, shared_t) = (stop.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name("acp-monitor".into())
            .spawn(move || -> io::Result<()> {
                let mut monitor = Monitor::new(cfg.monitor.clone(), clock::now());
                let mut rx = RecvBatch::new(cfg.batch);
                let mut tx = SendBatch::new(cfg.batch);
                let mut counters = Counters::default();
                let mut next_snapshot = clock::now();
                let publish = |monitor: &Monitor, counters, now| {
                    *shared_t.lock().unwrap_or_else(PoisonError::into_inner) =
                        snapshot(monitor, counters, now);
                };
                while !stop_t.load(Ordering::Relaxed) {
                    let received = rx.recv(&socket)?;
                    let now = clock::now();
                    for r in &received {
                        let Some(peer) = r.from else { continue };
                        if r.truncated {
                            // Its length field cannot be checked against what was cut off.
                            counters.truncated += 1;
                            continue;
                        }
                        let data = rx.slot(r);
                        if let Ok(h) = monitor.handle_datagram(now, peer, data, tx.next_slot()) {
                            tx.push(h.ack_len, &peer);
                            if let (Some(d), Some(cb)) = (h.delivery, on_update.as_mut()) {
                                cb(&d);
                            }
                        }
                        if tx.is_full() {
                            counters.acks_sent += tx.flush(&socket)? as u64;
                        }
                    }
                    counters.acks_sent += tx.flush(&socket)? as u64;
                    monitor.handle_timeout(now);
                    while monitor.poll_event().is_some() {}
                    if now >= next_snapshot {
                        publish(&monitor, counters, now);
                        next_snapshot = now + cfg.snapshot_every;
                    }
                }
                publish(&monitor, counters, clock::now());
                Ok(())
            })?;
        Ok(MonitorServer {
            local,
            stop,
            shared,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The latest published snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the server and returns its final snapshot.
    pub fn stop(mut self) -> io::Result<Snapshot> {
        self.shutdown()?;
        Ok(self.snapshot())
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("monitor thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for MonitorServer {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
