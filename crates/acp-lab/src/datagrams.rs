//! The simulator's `cross` and `updates` flows on real sockets: UDP datagrams sent at the times
//! of the network model's own arrival process, and the sink that counts them.
//!
//! A flow's arrivals are [`acp_netmodel::Arrivals`] seeded as the simulator seeds that flow
//! (its stream `flow NAME arrivals`, from its start), so the lab's packets are born at the
//! simulator's times. Each datagram is `size` bytes on the wire (IPv4 and UDP headers
//! included, as the simulator counts a packet). Cross datagrams carry zeros; an updates flow
//! sends ACP UPDATEs (`acp_core::wire`) stamped with their generation time on the run's clock,
//! which the sink shares (both run in this process), and nothing answers them: the
//! simulator's updates flows have no feedback.
//!
//! The sink counts what arrives. For an updates flow it decodes each datagram and integrates
//! the true age ([`AgeIntegral`]), counting an update only if it is fresher (a higher
//! sequence) than every one before, as the simulator does; a datagram that does not decode is
//! counted apart and dropped.

use std::io;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_core::accounting::AgeIntegral;
use acp_core::wire::{self, Update};
use acp_core::Time;
use acp_netmodel::{Arrivals, Process};
use acp_sim::engine::UDP_IP_OVERHEAD;

/// The hosts' TUN devices keep the kernel's default MTU; a larger datagram would be fragmented.
pub const MTU: u32 = 1500;

/// Session id of every updates flow's UPDATEs (each flow has its own sink).
const SESSION: u64 = 1;

/// How often the sink looks at its stop flag.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// A `cross` or `updates` flow.
#[derive(Debug, Clone)]
pub struct DatagramFlow {
    /// Status updates (age measured) rather than cross traffic.
    pub updates: bool,
    /// Bytes per datagram on the wire.
    pub size: u32,
    pub process: Process,
    /// Arrivals on the run's clock (the start of the run is [`Time::ZERO`]).
    pub arrivals: Arrivals,
}

impl DatagramFlow {
    /// Flow `name`'s datagrams of `size` bytes at the times of `arrivals` (the simulator's:
    /// [`acp_sim::flows::FlowSpec::arrivals`]).
    pub fn new(
        name: &str,
        updates: bool,
        process: Process,
        size: u32,
        arrivals: Arrivals,
    ) -> Result<Self, String> {
        let least = UDP_IP_OVERHEAD + if updates { wire::HEADER_LEN as u32 } else { 0 };
        if !(least..=MTU).contains(&size) {
            return Err(format!(
                "flow {name}: size {size} is outside {least}..={MTU} bytes (IPv4 and UDP \
                 headers{} up to the hosts' MTU)",
                if updates { " and the ACP header" } else { "" }
            ));
        }
        Ok(DatagramFlow {
            updates,
            size,
            process,
            arrivals,
        })
    }

    /// `periodic`, `poisson` or `on-off`.
    pub fn process_label(&self) -> &'static str {
        match self.process {
            Process::Periodic => "periodic",
            Process::Poisson => "poisson",
            Process::OnOff { .. } => "on-off",
        }
    }

    /// Replaces `out` with the UDP payload of datagram `seq` generated at `gen_ts` ns.
    pub fn datagram(&self, seq: u64, gen_ts: u64, out: &mut Vec<u8>) {
        let len = (self.size - UDP_IP_OVERHEAD) as usize;
        out.clear();
        out.resize(len, 0);
        if self.updates {
            let payload = vec![0; len - wire::HEADER_LEN];
            let update = Update {
                flags: 0,
                session: SESSION,
                seq,
                gen_ts,
                acked_seq: 0,
                hold_ns: 0,
                cookie: None,
                payload: &payload,
            };
            // The size was checked against the header and the MTU when the flow was built.
            let n = update.encode(out).expect("an UPDATE within the MTU");
            debug_assert_eq!(n, len);
        }
    }

    /// Sends on `socket` (connected to the sink) at each arrival, sleeping until it, until
    /// `stop` or until `finish` is raised; `t0` is the start of the run. Returns how many it sent.
    pub fn send(
        mut self,
        socket: &UdpSocket,
        t0: Instant,
        stop: Instant,
        finish: &AtomicBool,
    ) -> io::Result<u64> {
        let mut buf = Vec::with_capacity(self.size as usize);
        let mut sent = 0;
        loop {
            let at = t0 + Duration::from_nanos(self.arrivals.pop().as_nanos());
            if at >= stop || !crate::run::sleep_until(at, finish) {
                return Ok(sent);
            }
            sent += 1;
            self.datagram(sent, nanos_since(t0), &mut buf);
            socket.send(&buf)?;
        }
    }
}

fn nanos_since(t0: Instant) -> u64 {
    acp_core::time::duration_nanos(t0.elapsed())
}

/// What a sink has received, at the moment it was read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SinkReading {
    /// Datagrams counted (updates: the fresh ones), and their bytes on the wire.
    pub delivered: u64,
    pub bytes: u64,
    /// Updates flows: datagrams that did not decode as an UPDATE.
    pub undecodable: u64,
    /// Updates flows: ∫ age dt (s²) over the time age was defined (s), up to the reading.
    pub age_area: f64,
    pub age_defined: f64,
}

/// A sink's counts.
#[derive(Debug)]
struct Counts {
    updates: bool,
    reading: SinkReading,
    freshest: u64,
    age: AgeIntegral,
}

impl Counts {
    fn new(updates: bool) -> Self {
        Counts {
            updates,
            reading: SinkReading::default(),
            freshest: 0,
            age: AgeIntegral::new(Time::ZERO),
        }
    }

    /// Datagram `d` (a UDP payload) received at `now`.
    fn receive(&mut self, d: &[u8], now: Time) {
        if self.updates {
            match Update::decode(d) {
                Err(_) => {
                    self.reading.undecodable += 1;
                    return;
                }
                Ok(u) if u.seq <= self.freshest => return,
                Ok(u) => {
                    self.freshest = u.seq;
                    self.age.reset(now, u.gen_ts);
                }
            }
        }
        self.reading.delivered += 1;
        self.reading.bytes += d.len() as u64 + u64::from(UDP_IP_OVERHEAD);
    }

    fn read(&self, now: Time) -> SinkReading {
        let defined = self.age.defined(now) as f64 * 1e-9;
        SinkReading {
            age_area: self.age.average(now).unwrap_or(0.0) * defined,
            age_defined: defined,
            ..self.reading
        }
    }
}

/// A thread receiving a flow's datagrams.
pub struct Sink {
    counts: Arc<Mutex<Counts>>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<io::Result<()>>,
    t0: Instant,
}

impl Sink {
    /// Receives on `socket`, stamping arrivals on the clock started at `t0`.
    pub fn start(socket: UdpSocket, updates: bool, t0: Instant) -> io::Result<Sink> {
        socket.set_read_timeout(Some(LOOK_EVERY))?;
        let counts = Arc::new(Mutex::new(Counts::new(updates)));
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counts.clone(), stop.clone());
        let thread = thread::Builder::new()
            .name("lab-sink".into())
            .spawn(move || {
                let mut buf = vec![0; 65_536];
                while !s.load(Ordering::Relaxed) {
                    match socket.recv(&mut buf) {
                        Ok(n) => {
                            let now = Time::from_nanos(nanos_since(t0));
                            lock(&c).receive(&buf[..n], now);
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                            ) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            })?;
        Ok(Sink {
            counts,
            stop,
            thread,
            t0,
        })
    }

    /// What it has received so far.
    pub fn read(&self) -> SinkReading {
        lock(&self.counts).read(Time::from_nanos(nanos_since(self.t0)))
    }

    /// Stops the thread.
    pub fn stop(self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| io::Error::other("a sink panicked"))?
    }
}

fn lock(c: &Mutex<Counts>) -> std::sync::MutexGuard<'_, Counts> {
    c.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(updates: bool, size: u32) -> Result<DatagramFlow, String> {
        let arrivals = Arrivals::new(
            Process::Periodic,
            10.0,
            acp_netmodel::Streams::new(1).stream("f"),
            Time::ZERO,
        );
        DatagramFlow::new("f", updates, Process::Periodic, size, arrivals)
    }

    #[test]
    fn datagrams_are_size_bytes_on_the_wire() {
        let mut buf = Vec::new();
        for (updates, size) in [(false, 28), (false, 1500), (true, 72), (true, 100)] {
            let f = flow(updates, size).unwrap();
            f.datagram(3, 1234, &mut buf);
            assert_eq!(buf.len() as u32 + UDP_IP_OVERHEAD, size);
            if updates {
                let u = Update::decode(&buf).unwrap();
                assert_eq!((u.seq, u.gen_ts), (3, 1234));
            }
        }
        for (updates, size) in [(false, 27), (false, 1501), (true, 71)] {
            let e = flow(updates, size).unwrap_err();
            assert!(e.starts_with("flow f: size") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_sink_counts_fresh_updates_and_integrates_their_age() {
        let f = flow(true, 100).unwrap();
        let mut c = Counts::new(true);
        let mut buf = Vec::new();
        let ms = Time::from_millis;
        // Update 1 generated at 0 arrives at 10 ms; update 2 (gen 20 ms) at 30 ms; a late copy
        // of update 1 at 35 ms changes nothing; garbage is counted apart.
        f.datagram(1, 0, &mut buf);
        c.receive(&buf, ms(10));
        f.datagram(2, 20_000_000, &mut buf);
        c.receive(&buf, ms(30));
        f.datagram(1, 0, &mut buf);
        c.receive(&buf, ms(35));
        c.receive(b"not an update", ms(36));
        let r = c.read(ms(40));
        assert_eq!((r.delivered, r.bytes, r.undecodable), (2, 200, 1));
        // Age rises from 10 to 30 ms over [10, 30] ms, then from 10 to 20 ms over [30, 40] ms:
        // area 0.4 + 0.15 ms·s over 30 ms defined.
        assert!((r.age_defined - 0.030).abs() < 1e-12, "{r:?}");
        assert!((r.age_area - 0.000_55).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn cross_datagrams_are_counted_whole() {
        let mut c = Counts::new(false);
        c.receive(&[0; 1472], Time::from_millis(1));
        c.receive(b"anything", Time::from_millis(2));
        let r = c.read(Time::from_millis(3));
        assert_eq!((r.delivered, r.bytes, r.undecodable), (2, 1500 + 36, 0));
        assert_eq!(r.age_defined, 0.0);
    }
}
