//! Status updates over kernel TCP, generated at will: the baseline ACP is compared with.
//!
//! A [`TcpSource`] connects to a monitor that accepts TCP ([`crate::server::ServerConfig::tcp`])
//! and writes a fresh update, framed as in [`crate::stream`], whenever `poll()` reports the
//! socket writable:
//! the kernel's congestion control (`TCP_CONGESTION`), its send buffer and, with
//! `TCP_NOTSENT_LOWAT`, the amount of data it holds unsent decide the rate. The monitor measures
//! the true age exactly as for ACP.
//!
//! The source also keeps the ACP+ paper's estimate of TCP's age from the sender's side (§X): the
//! latest segment delivered is as old as a round trip, and segments are delivered as often as
//! ACKs arrive. Each time the kernel reports more bytes acknowledged (`TCP_INFO`, read after
//! every write and at least every millisecond), the estimated age falls to the smoothed RTT and
//! grows from there; its time average sits beside the true age so that the estimate's error is
//! known.

use std::ffi::CString;
use std::io::{self, Write};
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use acp_core::accounting::AgeIntegral;
use acp_core::wire::Update;

use crate::clock;
use crate::driver::{random_session_id, synthetic_payload, RunLimits};
use crate::net::{poll_fds, set_int_option};
use crate::stream::encode_frame;

/// Socket options of a TCP source: what a careful engineer would try.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Congestion control (`TCP_CONGESTION`): `reno`, `cubic`, `bbr`, … as the kernel offers
    /// (`net.ipv4.tcp_available_congestion_control`); the system default if `None`.
    pub congestion: Option<String>,
    /// `TCP_NODELAY`: send small writes at once instead of coalescing them (Nagle).
    pub nodelay: bool,
    /// `TCP_NOTSENT_LOWAT`: the socket takes a new update only while less than this many bytes
    /// are written but not yet sent, so updates wait in the application, where a fresher one
    /// replaces them, rather than in the kernel.
    pub notsent_lowat: Option<u32>,
    /// `SO_SNDBUF` (bytes); the kernel's autotuned default if `None`.
    pub send_buffer: Option<usize>,
}

/// What the kernel says about the connection (`TCP_INFO`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpInfo {
    /// Smoothed RTT and its variation (s).
    pub rtt: f64,
    pub rtt_var: f64,
    /// Least RTT seen (s).
    pub min_rtt: f64,
    /// Congestion window (segments) and segment size (bytes).
    pub cwnd: u32,
    pub mss: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// Retransmission timeouts over the connection's life (`tcpi_total_rto`, Linux 6.7 on;
    /// 0 from an older kernel).
    pub total_rto: u16,
    /// Bytes acknowledged.
    pub bytes_acked: u64,
    /// The kernel's delivery-rate estimate and pacing rate (bytes/s).
    pub delivery_rate: u64,
    pub pacing_rate: u64,
    /// Bytes written but not yet sent, and segments sent but not yet acknowledged.
    pub notsent_bytes: u32,
    pub unacked: u32,
    /// Slow-start threshold (segments; the kernel's "infinity" above 2³⁰ when unset).
    pub ssthresh: u32,
    /// The window the receiver last advertised (bytes).
    pub snd_wnd: u32,
    /// Segments now counted lost and now being retransmitted.
    pub lost: u32,
    pub retrans: u32,
    /// Bytes sent (retransmissions included) and retransmitted, and segments delivered.
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub delivered: u32,
    /// Time (s) the connection had data to send, and the part of it limited by the receive
    /// window and by the send buffer.
    pub busy_time: f64,
    pub rwnd_limited: f64,
    pub sndbuf_limited: f64,
    /// BBR's own state, when BBR is the congestion control in force.
    pub bbr: Option<BbrInfo>,
}

/// What Linux's BBR computes its window and pacing rate from (`TCP_CC_INFO`, `struct
/// tcp_bbr_info`): `TCP_INFO`'s `min_rtt` is the connection's least RTT over minutes, where
/// BBR's expires every 10 s, and its bandwidth estimate is reported nowhere else.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BbrInfo {
    /// The bottleneck bandwidth estimate (bytes/s).
    pub bw: u64,
    /// The round-trip propagation estimate (s).
    pub min_rtt: f64,
    /// The gains in force: pacing rate over `bw`, window over the estimated BDP.
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
}

/// A source's state as of now.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpReport {
    /// The session id its updates carry.
    pub session: u64,
    /// The congestion control in force.
    pub congestion: String,
    /// Updates written whole, and bytes written (frames included).
    pub sent: u64,
    pub bytes: u64,
    /// Updates written per second since the start.
    pub rate: f64,
    /// The paper's estimate of the time-average age (s; see the module documentation), from the
    /// first acknowledgement on.
    pub est_avg_age: Option<f64>,
    /// The same estimate as a running sum: its integral (s²) over its span (s).
    pub est_age: RunningMean,
    /// The kernel's view.
    pub info: TcpInfo,
    /// The smoothed RTT (s) read at each `TCP_INFO` reading that found new bytes acknowledged,
    /// one unit of weight each.
    pub rtt_samples: RunningMean,
}

/// A running weighted sum, so that the mean over any window is the difference of two reports:
/// `(b.sum - a.sum) / (b.weight - a.weight)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunningMean {
    pub sum: f64,
    pub weight: f64,
}

impl RunningMean {
    /// The mean of what was added after `earlier`, if anything was.
    pub fn mean_since(&self, earlier: &RunningMean) -> Option<f64> {
        let weight = self.weight - earlier.weight;
        (weight > 0.0).then(|| (self.sum - earlier.sum) / weight)
    }
}

/// A TCP connection that sends fresh updates as fast as it takes them.
pub struct TcpSource {
    stream: TcpStream,
    session: u64,
    congestion: String,
    payload: usize,
    /// Updates written whole.
    sent: u64,
    /// The update being written and how much of it has gone.
    frame: Vec<u8>,
    written: usize,
    bytes: u64,
    /// The estimated age (the paper's) and the bytes acknowledged when it last reset.
    estimate: Option<AgeIntegral>,
    acked: u64,
    info: TcpInfo,
    rtt_samples: RunningMean,
}

/// Chooses the congestion control by name.
pub fn set_congestion(stream: &TcpStream, name: &str) -> io::Result<()> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: the descriptor is open; the value points to `name`'s bytes, whose length is passed.
    let r = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            c.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    Err(io::Error::new(
        e.kind(),
        format!(
            "congestion control {name:?} refused ({e}); this kernel offers: {}",
            available.trim()
        ),
    ))
}

/// Reads the TCP-level socket option `name` into `value`, a plain-old-data buffer (integers
/// only, valid for any bytes); the bytes the kernel wrote (the rest of `value` is left as it
/// was: an older kernel may write fewer).
fn tcp_option<T>(stream: &TcpStream, name: libc::c_int, value: &mut T) -> io::Result<usize> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: the descriptor is open; `value` has room for `len` bytes, which the kernel
    // updates, and every caller's `T` is plain integers.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            name,
            (value as *mut T).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}

/// The congestion control in force.
fn congestion(stream: &TcpStream) -> io::Result<String> {
    let mut buf = [0u8; 32];
    let len = tcp_option(stream, libc::TCP_CONGESTION, &mut buf)?;
    let name = &buf[..len.min(buf.len())];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Reads `TCP_INFO`, and BBR's `TCP_CC_INFO` if `bbr` (the kernel's reply is a union whose
/// member only the congestion control's name tells).
fn tcp_info(stream: &TcpStream, bbr: bool) -> io::Result<TcpInfo> {
    // SAFETY: plain old data, zero is valid.
    let mut raw: libc::tcp_info = unsafe { zeroed() };
    // An older kernel fills fewer bytes; the rest stays zero.
    tcp_option(stream, libc::TCP_INFO, &mut raw)?;
    let us = |v: u32| f64::from(v) * 1e-6;
    Ok(TcpInfo {
        rtt: us(raw.tcpi_rtt),
        rtt_var: us(raw.tcpi_rttvar),
        min_rtt: us(raw.tcpi_min_rtt),
        cwnd: raw.tcpi_snd_cwnd,
        mss: raw.tcpi_snd_mss,
        total_retrans: raw.tcpi_total_retrans,
        total_rto: raw.tcpi_total_rto,
        bytes_acked: raw.tcpi_bytes_acked,
        delivery_rate: raw.tcpi_delivery_rate,
        pacing_rate: raw.tcpi_pacing_rate,
        notsent_bytes: raw.tcpi_notsent_bytes,
        unacked: raw.tcpi_unacked,
        ssthresh: raw.tcpi_snd_ssthresh,
        snd_wnd: raw.tcpi_snd_wnd,
        lost: raw.tcpi_lost,
        retrans: raw.tcpi_retrans,
        bytes_sent: raw.tcpi_bytes_sent,
        bytes_retrans: raw.tcpi_bytes_retrans,
        delivered: raw.tcpi_delivered,
        busy_time: raw.tcpi_busy_time as f64 * 1e-6,
        rwnd_limited: raw.tcpi_rwnd_limited as f64 * 1e-6,
        sndbuf_limited: raw.tcpi_sndbuf_limited as f64 * 1e-6,
        bbr: if bbr { bbr_info(stream)? } else { None },
    })
}

/// Reads BBR's `struct tcp_bbr_info` (five `u32`s: bandwidth low and high words, `min_rtt` in
/// µs, the gains in 1/256ths); `None` if the kernel returned fewer bytes.
fn bbr_info(stream: &TcpStream) -> io::Result<Option<BbrInfo>> {
    let mut raw = [0u32; 5];
    if tcp_option(stream, libc::TCP_CC_INFO, &mut raw)? < size_of_val(&raw) {
        return Ok(None);
    }
    let [bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain] = raw;
    Ok(Some(BbrInfo {
        bw: u64::from(bw_hi) << 32 | u64::from(bw_lo),
        min_rtt: f64::from(min_rtt) * 1e-6,
        pacing_gain: f64::from(pacing_gain) / 256.0,
        cwnd_gain: f64::from(cwnd_gain) / 256.0,
    }))
}

impl TcpSource {
    /// Connects to `target` (within `timeout`) with `options`; updates will carry `payload`
    /// bytes. Fails with the kernel's list of congestion controls if it refuses the one asked.
    pub fn connect(
        target: SocketAddr,
        options: &TcpOptions,
        payload: usize,
        timeout: Duration,
    ) -> io::Result<Self> {
        let stream = TcpStream::connect_timeout(&target, timeout)?;
        if let Some(name) = &options.congestion {
            set_congestion(&stream, name)?;
        }
        stream.set_nodelay(options.nodelay)?;
        if let Some(bytes) = options.notsent_lowat {
            let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
            set_int_option(&stream, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, v)?;
        }
        if let Some(bytes) = options.send_buffer {
            socket2::SockRef::from(&stream).set_send_buffer_size(bytes)?;
        }
        stream.set_nonblocking(true)?;
        Ok(TcpSource {
            congestion: congestion(&stream)?,
            stream,
            session: random_session_id(),
            payload,
            sent: 0,
            frame: Vec::new(),
            written: 0,
            bytes: 0,
            estimate: None,
            acked: 0,
            info: TcpInfo::default(),
            rtt_samples: RunningMean::default(),
        })
    }

    /// The report as of now, `elapsed` after the start.
    pub fn report(&self, elapsed: Duration) -> TcpReport {
        let now = clock::now();
        TcpReport {
            session: self.session,
            congestion: self.congestion.clone(),
            sent: self.sent(),
            bytes: self.bytes,
            rate: self.sent() as f64 / elapsed.as_secs_f64().max(1e-9),
            est_avg_age: self.estimate.as_ref().and_then(|e| e.average(now)),
            est_age: self
                .estimate
                .as_ref()
                .map_or_else(RunningMean::default, |e| {
                    let span = e.defined(now) as f64 * 1e-9;
                    RunningMean {
                        sum: e.average(now).unwrap_or(0.0) * span,
                        weight: span,
                    }
                }),
            info: self.info,
            rtt_samples: self.rtt_samples,
        }
    }

    /// Updates written whole.
    fn sent(&self) -> u64 {
        self.sent + u64::from(!self.frame.is_empty() && self.written == self.frame.len())
    }

    /// Readies the update to write: the rest of one partly written, or else a fresh one (an
    /// update none of which has gone yet is replaced by a fresher one under the same sequence).
    fn refill(&mut self) {
        let complete = !self.frame.is_empty() && self.written == self.frame.len();
        if complete {
            self.sent += 1;
        } else if self.written > 0 {
            return;
        }
        let seq = self.sent + 1;
        let now = clock::now();
        let mut payload = Vec::with_capacity(self.payload);
        synthetic_payload(seq, self.payload, &mut payload);
        let update = Update {
            flags: 0,
            session: self.session,
            seq,
            gen_ts: now.as_nanos(),
            acked_seq: 0,
            hold_ns: 0,
            cookie: None,
            payload: &payload,
        };
        self.frame.clear();
        self.written = 0;
        encode_frame(&update, &mut self.frame);
    }

    /// Offers the socket the update to write (the rest of one partly written, or a fresh one);
    /// the kernel takes what its send buffer (or, with `TCP_NOTSENT_LOWAT`, its unsent limit)
    /// has room for, possibly nothing.
    fn write(&mut self) -> io::Result<()> {
        self.refill();
        loop {
            match self.stream.write(&self.frame[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written += n;
                    self.bytes += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads `TCP_INFO`; new bytes acknowledged reset the estimated age to the smoothed RTT and
    /// add the smoothed RTT to the RTT readings.
    fn sample(&mut self) -> io::Result<()> {
        self.info = tcp_info(&self.stream, self.congestion == "bbr")?;
        if self.info.bytes_acked > self.acked && self.info.rtt > 0.0 {
            self.acked = self.info.bytes_acked;
            self.rtt_samples.sum += self.info.rtt;
            self.rtt_samples.weight += 1.0;
            let now = clock::now();
            let delivered = now.as_nanos().saturating_sub((self.info.rtt * 1e9) as u64);
            self.estimate
                .get_or_insert_with(|| AgeIntegral::new(now))
                .reset(now, delivered);
        }
        Ok(())
    }

    /// Sends until a limit of `limits` is reached (`count` counts updates written whole),
    /// calling `tick` every `tick_every` with the report (at most once per `tick_every`: ticks
    /// missed while the thread was held up are skipped); returns the final report.
    pub fn run(
        &mut self,
        limits: &RunLimits,
        tick_every: Duration,
        mut tick: impl FnMut(&TcpReport),
    ) -> io::Result<TcpReport> {
        let start = Instant::now();
        let end = limits.duration.map(|d| start + d);
        let mut next_tick = start + tick_every;
        let mut fds = [libc::pollfd {
            fd: self.stream.as_raw_fd(),
            events: libc::POLLOUT,
            revents: libc::POLLOUT,
        }];
        loop {
            let now = Instant::now();
            let stopped = limits
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
            let counted = limits.count.is_some_and(|c| self.sent() >= c);
            if stopped || counted || end.is_some_and(|e| now >= e) {
                break;
            }
            if now >= next_tick {
                tick(&self.report(now - start));
                // Ticks missed while the thread was held up are skipped, not made up in a burst.
                next_tick += tick_every;
                if next_tick <= now {
                    next_tick = now + tick_every;
                }
            }
            // Only when poll() says so: with TCP_NOTSENT_LOWAT the kernel takes a write while
            // less than the limit is unsent but reports the socket writable only under half of
            // it, and an application driven by poll() writes then.
            if fds[0].revents & libc::POLLOUT != 0 {
                self.write()?;
            }
            self.sample()?;
            // Wake when the socket takes more (at once if it still does), or within a
            // millisecond to read TCP_INFO again.
            let wait = next_tick
                .min(end.unwrap_or(next_tick))
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(1));
            poll_fds(&mut fds, wait)?;
        }
        Ok(self.report(start.elapsed()))
    }
}
