//! Kernel MPTCP sockets (`IPPROTO_MPTCP`, RFC 8684 in upstream Linux): the bulk sender, the
//! receiver that counts the bytes it reads, and what the kernel says of each subflow.
//!
//! An MPTCP socket is a stream socket like TCP's (`std::net::TcpStream` and `TcpListener` hold
//! it); the kernel refuses to create one where `net.mptcp.enabled = 0`, which is reported as
//! such. The subflows are read from the connection with `getsockopt(SOL_MPTCP, …)`:
//! `MPTCP_TCPINFO` (each subflow's `TCP_INFO`) and `MPTCP_SUBFLOW_ADDRS` (its addresses), both
//! an `mptcp_subflow_data` header followed by one record per subflow
//! (`include/uapi/linux/mptcp.h`), in the same order.

use std::io::{self, Read, Write};
use std::mem::size_of;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_runtime::net::set_int_option;

use crate::mptcp_flows::MptcpFlow;

/// The protocol number of MPTCP sockets.
pub const IPPROTO_MPTCP: libc::c_int = 262;

/// `getsockopt` level and names (`include/linux/socket.h`, `include/uapi/linux/mptcp.h`).
const SOL_MPTCP: libc::c_int = 284;
const MPTCP_TCPINFO: libc::c_int = 2;
const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;

/// `struct mptcp_subflow_data`: four `u32` (its own size, the number of subflows, the
/// kernel's and the caller's record size).
const SUBFLOW_DATA_LEN: usize = 16;

/// `struct mptcp_subflow_addrs`: the local and the remote address, each a union as large as
/// `sockaddr_storage`.
const ADDRS_LEN: usize = 2 * size_of::<libc::sockaddr_storage>();

/// `tcpi_state` of an established connection (`include/net/tcp_states.h`).
const TCP_ESTABLISHED: u8 = 1;

/// Most subflows read.
const MAX_SUBFLOWS: usize = 32;

/// How long a write waits for room in the send buffer before the sender looks at the clock.
const WRITE_WAIT: Duration = Duration::from_millis(20);

/// How long a read waits before the receiver looks at the stop flag.
const READ_WAIT: Duration = Duration::from_millis(50);

/// Bytes handed to each write.
const CHUNK: usize = 64 * 1024;

/// A subflow as the sender's kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubflowInfo {
    /// Its local address (which path it takes).
    pub local: Ipv4Addr,
    /// Bytes acknowledged (`tcpi_bytes_acked`).
    pub bytes_acked: u64,
    /// Data segments sent, retransmissions included (`tcpi_data_segs_out`).
    pub segments: u32,
    /// Segments retransmitted (`tcpi_total_retrans`).
    pub retransmits: u32,
    /// Retransmission timeouts (`tcpi_total_rto`).
    pub timeouts: u16,
    /// Congestion window (bytes: segments times the MSS).
    pub cwnd_bytes: u64,
    /// Smoothed RTT (s).
    pub srtt: f64,
    /// Whether it is established (`tcpi_state` is `TCP_ESTABLISHED`).
    pub established: bool,
}

/// A new MPTCP socket (blocking) of the calling thread's namespace.
fn socket() -> io::Result<OwnedFd> {
    // SAFETY: socket takes integers only; a non-negative result is a new descriptor we own.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            IPPROTO_MPTCP,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot open an MPTCP socket ({e}); is net.mptcp.enabled = 1?"),
        ));
    }
    // SAFETY: `fd` was just returned by socket and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr(addr: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*addr.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// `connect` or `bind` (`call`) on descriptor `fd` with `addr`.
fn with_address(
    fd: libc::c_int,
    addr: SocketAddrV4,
    call: unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
) -> io::Result<()> {
    let sa = sockaddr(addr);
    // SAFETY: `call` is connect or bind, which read a sockaddr of the given length: `sa`, a
    // sockaddr_in that outlives the call.
    check(unsafe {
        call(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn int(bytes: usize) -> libc::c_int {
    libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX)
}

/// Opens an MPTCP connection to `to` with `flow`'s congestion control and send buffer, within
/// `timeout`. Call it inside the sending host's namespace.
pub fn connect(to: SocketAddrV4, flow: &MptcpFlow, timeout: Duration) -> io::Result<TcpStream> {
    let fd = socket()?;
    set_int_option(
        &fd,
        libc::SOL_SOCKET,
        libc::SO_SNDBUFFORCE,
        int(flow.send_buffer),
    )?;
    let stream = TcpStream::from(fd);
    acp_runtime::tcp_source::set_congestion(&stream, &flow.cc)?;
    // A blocking connect gives up after the send timeout.
    stream.set_write_timeout(Some(timeout))?;
    with_address(stream.as_raw_fd(), to, libc::connect)
        .map_err(|e| io::Error::new(e.kind(), format!("MPTCP connection to {to}: {e}")))?;
    stream.set_write_timeout(Some(WRITE_WAIT))?;
    Ok(stream)
}

/// Listens for MPTCP connections on `at` with a receive buffer of `receive_buffer` bytes
/// (`SO_RCVBUFFORCE`: autotuning off, beyond `net.core.rmem_max`). Call it inside the
/// receiving host's namespace.
pub fn listen(at: SocketAddrV4, receive_buffer: usize) -> io::Result<TcpListener> {
    let fd = socket()?;
    set_int_option(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    set_int_option(
        &fd,
        libc::SOL_SOCKET,
        libc::SO_RCVBUFFORCE,
        int(receive_buffer),
    )?;
    with_address(fd.as_raw_fd(), at, libc::bind)?;
    // SAFETY: listen takes a descriptor we own and an integer.
    check(unsafe { libc::listen(fd.as_raw_fd(), 4) })?;
    let listener = TcpListener::from(fd);
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Reads one `getsockopt(SOL_MPTCP, name)` answer of records of `record` bytes: the records
/// the kernel filled (at most [`MAX_SUBFLOWS`]).
fn subflow_records(
    stream: &TcpStream,
    name: libc::c_int,
    record: usize,
) -> io::Result<Vec<Vec<u8>>> {
    let mut buf = vec![0u8; SUBFLOW_DATA_LEN + MAX_SUBFLOWS * record];
    buf[0..4].copy_from_slice(&(SUBFLOW_DATA_LEN as u32).to_ne_bytes());
    buf[12..16].copy_from_slice(&(record as u32).to_ne_bytes());
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the descriptor is open; `buf` has room for `len` bytes, which the kernel updates.
    check(unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            SOL_MPTCP,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    let word = |i: usize| u32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    let (count, size_user) = (word(4) as usize, word(12) as usize);
    let size = size_user.min(record);
    Ok((0..count.min(MAX_SUBFLOWS))
        .map(|i| {
            let at = SUBFLOW_DATA_LEN + i * size_user;
            let mut r = vec![0u8; record];
            let end = (at + size).min(len as usize).max(at);
            r[..end - at].copy_from_slice(&buf[at..end]);
            r
        })
        .collect())
}

/// Each subflow of the connection `stream` (an MPTCP socket), as its kernel reports it.
pub fn subflows(stream: &TcpStream) -> io::Result<Vec<SubflowInfo>> {
    let infos = subflow_records(stream, MPTCP_TCPINFO, size_of::<libc::tcp_info>())?;
    let addrs = subflow_records(stream, MPTCP_SUBFLOW_ADDRS, ADDRS_LEN)?;
    Ok(infos
        .iter()
        .zip(&addrs)
        .map(|(info, addr)| {
            // SAFETY: `info` holds size_of::<tcp_info>() bytes (zeros where the kernel wrote
            // fewer), and tcp_info is plain integers, valid for any bytes; read unaligned.
            let t: libc::tcp_info = unsafe { std::ptr::read_unaligned(info.as_ptr().cast()) };
            // SAFETY: likewise for the local address, a sockaddr_in at the record's start.
            let local: libc::sockaddr_in =
                unsafe { std::ptr::read_unaligned(addr.as_ptr().cast()) };
            SubflowInfo {
                local: Ipv4Addr::from(u32::from_be(local.sin_addr.s_addr)),
                bytes_acked: t.tcpi_bytes_acked,
                segments: t.tcpi_data_segs_out,
                retransmits: t.tcpi_total_retrans,
                timeouts: t.tcpi_total_rto,
                cwnd_bytes: u64::from(t.tcpi_snd_cwnd) * u64::from(t.tcpi_snd_mss),
                srtt: f64::from(t.tcpi_rtt) * 1e-6,
                established: t.tcpi_state == TCP_ESTABLISHED,
            }
        })
        .collect())
}

/// Whether a read or write only timed out (or was interrupted) and may be tried again.
fn waited(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// What the sender read of its subflows: at the start of the measured window (none if the
/// flow started after it) and at its end.
#[derive(Debug, Clone, Default)]
pub struct SenderReport {
    pub at_warmup: Vec<SubflowInfo>,
    pub at_end: Vec<SubflowInfo>,
}

/// How long a connection's subflows may take to come up when the measured window starts
/// with the flow (no warm-up left to come up in).
pub const SUBFLOW_TIMEOUT: Duration = Duration::from_secs(5);

/// Writes bulk data on `stream` until `stop_at` or until `finish` is raised, reading its
/// subflows at `measure_from` (or at once, if later) and at the end.
///
/// The window is read only once all `paths` subflows are established: a path whose subflow
/// the kernel's path manager opens late carries nothing before it, and a reading without it
/// would credit the first path with the whole window. Until then the sender writes on and
/// looks again every write; if they are not all up by `measure_from` (or, for a flow that
/// starts inside the window, [`SUBFLOW_TIMEOUT`] after its start, its reading then late), it
/// fails, naming how many came up.
pub fn send_bulk(
    mut stream: TcpStream,
    paths: usize,
    measure_from: Instant,
    stop_at: Instant,
    finish: &AtomicBool,
) -> io::Result<SenderReport> {
    let chunk = vec![0u8; CHUNK];
    let mut at_warmup = None;
    let start = Instant::now();
    let give_up = if measure_from > start {
        measure_from
    } else {
        start + SUBFLOW_TIMEOUT
    };
    let mut all_up = false;
    loop {
        let now = Instant::now();
        if now >= stop_at || finish.load(Ordering::Relaxed) {
            break;
        }
        if !all_up {
            let up = subflows(&stream)?.iter().filter(|s| s.established).count();
            all_up = up >= paths;
            if !all_up && now >= give_up {
                return Err(io::Error::other(format!(
                    "{up} of {paths} MPTCP subflows established by the measured window (the \
                     kernel's path manager opened no subflow on the other paths; `ip mptcp \
                     endpoint show` in the sending host)"
                )));
            }
        }
        if all_up && at_warmup.is_none() && now >= measure_from {
            at_warmup = Some(subflows(&stream)?);
        }
        match stream.write(&chunk) {
            Ok(_) => {}
            Err(e) if waited(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(SenderReport {
        at_warmup: at_warmup.unwrap_or_default(),
        at_end: subflows(&stream)?,
    })
}

/// The receiving end: accepts one connection and counts the bytes read from it until the run's
/// end (bytes that arrive after it are read and not counted, so that a reading at the end is
/// the window's).
pub struct Receiver {
    bytes: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: JoinHandle<io::Result<()>>,
}

impl Receiver {
    /// Starts accepting on `listener`; counting stops when `finish` is raised.
    pub fn start(listener: TcpListener, finish: Arc<AtomicBool>) -> io::Result<Receiver> {
        let bytes = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let (count, stop) = (bytes.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("lab-mptcp-receiver".into())
            .spawn(move || {
                let mut stream = loop {
                    match listener.accept() {
                        Ok((s, _)) => break s,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            if stop.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Err(e) => return Err(e),
                    }
                };
                stream.set_nonblocking(false)?;
                stream.set_read_timeout(Some(READ_WAIT))?;
                let mut buf = vec![0u8; CHUNK];
                while !stop.load(Ordering::Relaxed) {
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) if !finish.load(Ordering::Relaxed) => {
                            count.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Ok(_) => {}
                        Err(e) if waited(&e) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            })?;
        Ok(Receiver {
            bytes,
            done,
            thread,
        })
    }

    /// Bytes read so far (up to the run's end).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Stops reading and closes the connection.
    pub fn stop(self) -> io::Result<()> {
        self.done.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| io::Error::other("the MPTCP receiver panicked"))?
    }
}
