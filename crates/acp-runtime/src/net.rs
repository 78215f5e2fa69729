//! Socket plumbing shared by the monitor server, the source driver, the relay and the benchmarks:
//! address conversion, readiness waiting with nanosecond timeouts ([`poll_fds`]), batched
//! receive/send with `recvmmsg`/`sendmmsg` (Linux), DSCP marking and hop limits: [`set_dscp`] and
//! [`set_hop_limit`] set what a socket sends, [`receive_dscp`], [`receive_hop_limit`] and
//! [`recv_with_dscp`] read them from what it receives;
//! [`bind_udp`] binds with `SO_REUSEPORT` when asked; [`grow_buffers`] enlarges a socket's kernel
//! buffers so that bursts from many sources are queued rather than dropped; [`ensure_fd_limit`]
//! raises the process's descriptor limit as far as a server needs and the hard limit allows.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Largest datagram a batch slot holds: every UDP payload fits (65,507 bytes over IPv4, 65,527
/// over IPv6), so an ACP update of any size the wire format allows is received whole. Longer
/// datagrams (IPv6 jumbograms) would be truncated by the kernel and reported as such. Slots
/// cost address space, not memory: the kernel maps a page only when a datagram is written
/// into it.
pub const SLOT: usize = 65_536;

/// `SocketAddr` → `sockaddr_storage` and its length.
pub fn to_raw(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage, which is suitably aligned.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above for sockaddr_in6.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// `sockaddr_storage` → `SocketAddr`, if it holds an IPv4 or IPv6 address.
pub fn from_raw(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin = unsafe { &*(storage as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6 = unsafe { &*(storage as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Waits until one of `fds` is ready or `timeout` passes; returns the number of ready
/// descriptors (0 on timeout or signal).
pub fn poll_fds(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<usize> {
    let nfds = fds.len() as libc::nfds_t;
    #[cfg(target_os = "linux")]
    let n = {
        let ts = libc::timespec {
            tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: timeout.subsec_nanos() as libc::c_long, // below 1e9: fits
        };
        // SAFETY: `fds` is a valid, exclusively borrowed array of `nfds` pollfd structures, `ts`
        // outlives the call, and a null signal mask leaves the mask unchanged.
        unsafe { libc::ppoll(fds.as_mut_ptr(), nfds, &ts, std::ptr::null()) }
    };
    #[cfg(not(target_os = "linux"))]
    let n = {
        // poll(2) counts whole milliseconds: round up so the wake is never early.
        let ms = timeout.as_nanos().div_ceil(1_000_000);
        let ms = libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX);
        // SAFETY: `fds` is a valid, exclusively borrowed array of `nfds` pollfd structures.
        unsafe { libc::poll(fds.as_mut_ptr(), nfds, ms) }
    };
    if n < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(err);
    }
    Ok(usize::try_from(n).unwrap_or(0))
}

/// A UDP socket bound to `addr`; with `reuse_port`, `SO_REUSEPORT` is set first so that other
/// sockets with the option (in this process or another of the same user) can bind the same
/// address and share its datagrams.
pub fn bind_udp(addr: SocketAddr, reuse_port: bool) -> io::Result<UdpSocket> {
    if !reuse_port {
        return UdpSocket::bind(addr);
    }
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// Asks the kernel to stamp every datagram `socket` receives with the time it reached the
/// socket (`SO_TIMESTAMPNS`, `CLOCK_REALTIME`); [`RecvBatch::recv`] reads the stamps into
/// [`Received::kernel_ns`].
pub fn receive_kernel_timestamps(socket: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid descriptor and a c_int option value of the stated size.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Descriptors a monitor needs beside its TCP connections: its sockets, epoll, the metrics
/// endpoint and its connections, sinks, logs.
pub const RESERVED_FDS: u64 = 64;

/// The process's descriptor limit (`RLIMIT_NOFILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// The limit in force.
    pub soft: u64,
    /// How far the process may raise it.
    pub hard: u64,
}

/// Raises the soft descriptor limit to `needed` if it is lower and the hard limit allows (as far
/// as it allows otherwise); returns the limits then in force.
pub fn ensure_fd_limit(needed: u64) -> io::Result<FdLimit> {
    // SAFETY: plain old data, zero is valid; getrlimit fills it.
    let mut lim: libc::rlimit = unsafe { zeroed() };
    // SAFETY: `lim` is a valid rlimit for the call to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if (lim.rlim_cur as u64) < needed {
        let raised = libc::rlimit {
            rlim_cur: needed.min(lim.rlim_max as u64) as libc::rlim_t,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit; a refusal leaves the limit as it was.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        }
    }
    Ok(FdLimit {
        soft: lim.rlim_cur as u64,
        hard: lim.rlim_max as u64,
    })
}

/// Socket buffer sizes [`grow_buffers`] asks for.
pub const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;

/// Asks for [`SOCKET_BUFFER_BYTES`] of receive and send buffer, best effort: with
/// `CAP_NET_ADMIN` beyond `net.core.rmem_max`/`wmem_max` (`SO_RCVBUFFORCE`), otherwise up to
/// them. The default (about 208 KiB) holds only a few hundred small datagrams, so a thousand
/// sources starting at once would lose most of their first probes in the kernel. Returns the
/// receive buffer the kernel granted (it reports twice what it accounts for payload).
pub fn grow_buffers(socket: &UdpSocket) -> io::Result<usize> {
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        if set_int_option(socket, libc::SOL_SOCKET, force, SOCKET_BUFFER_BYTES).is_err() {
            // Without the capability the kernel caps the size; a smaller buffer still works.
            let _ = set_int_option(socket, libc::SOL_SOCKET, plain, SOCKET_BUFFER_BYTES);
        }
    }
    socket2::SockRef::from(socket).recv_buffer_size()
}

/// Sets an integer socket option.
pub fn set_int_option(
    socket: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the descriptor is open for the duration of the call, and the option value points to
    // a live c_int whose size is passed alongside.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Highest differentiated-services code point (six bits).
pub const MAX_DSCP: u8 = 63;

/// Marks every datagram `socket` sends with `dscp` (0–63): the upper six bits of the IPv4 TOS
/// byte (`IP_TOS`) or of the IPv6 traffic class (`IPV6_TCLASS`), by the socket's family.
pub fn set_dscp(socket: &UdpSocket, dscp: u8) -> io::Result<()> {
    if dscp > MAX_DSCP {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("DSCP {dscp} is out of range 0–{MAX_DSCP}"),
        ));
    }
    let tos = libc::c_int::from(dscp) << 2;
    match socket.local_addr()? {
        SocketAddr::V4(_) => set_int_option(socket, libc::IPPROTO_IP, libc::IP_TOS, tos),
        SocketAddr::V6(_) => set_int_option(socket, libc::IPPROTO_IPV6, libc::IPV6_TCLASS, tos),
    }
}

/// Asks the kernel to report the TOS byte or traffic class of each datagram `socket` receives, for
/// [`recv_with_dscp`]. An IPv6 socket also asks for the TOS of IPv4-mapped traffic (best effort).
pub fn receive_dscp(socket: &UdpSocket) -> io::Result<()> {
    match socket.local_addr()? {
        SocketAddr::V4(_) => set_int_option(socket, libc::IPPROTO_IP, libc::IP_RECVTOS, 1),
        SocketAddr::V6(_) => {
            let _ = set_int_option(socket, libc::IPPROTO_IP, libc::IP_RECVTOS, 1);
            set_int_option(socket, libc::IPPROTO_IPV6, libc::IPV6_RECVTCLASS, 1)
        }
    }
}

/// Sets the time to live (IPv4 `IP_TTL`) or unicast hop limit (IPv6 `IPV6_UNICAST_HOPS`) of
/// what `socket` sends: `hops` (1–255), or the system's default if `None`. An IPv6 socket also
/// sets it for IPv4-mapped traffic (best effort).
pub fn set_hop_limit(socket: &UdpSocket, hops: Option<u8>) -> io::Result<()> {
    // -1 restores the default, for both options.
    let v = hops.map_or(-1, libc::c_int::from);
    match socket.local_addr()? {
        SocketAddr::V4(_) => set_int_option(socket, libc::IPPROTO_IP, libc::IP_TTL, v),
        SocketAddr::V6(_) => {
            let _ = set_int_option(socket, libc::IPPROTO_IP, libc::IP_TTL, v);
            set_int_option(socket, libc::IPPROTO_IPV6, libc::IPV6_UNICAST_HOPS, v)
        }
    }
}

/// Asks the kernel to report the time to live or hop limit each datagram `socket` receives
/// arrived with, for [`recv_with_dscp`]. An IPv6 socket also asks for that of IPv4-mapped
/// traffic (best effort).
pub fn receive_hop_limit(socket: &UdpSocket) -> io::Result<()> {
    match socket.local_addr()? {
        SocketAddr::V4(_) => set_int_option(socket, libc::IPPROTO_IP, libc::IP_RECVTTL, 1),
        SocketAddr::V6(_) => {
            let _ = set_int_option(socket, libc::IPPROTO_IP, libc::IP_RECVTTL, 1);
            set_int_option(socket, libc::IPPROTO_IPV6, libc::IPV6_RECVHOPLIMIT, 1)
        }
    }
}

/// A UDP socket that marks what it sends with each datagram's own DSCP and hop limit, changing
/// the socket's settings only when they differ from the previous datagram's (one `setsockopt`
/// per change, none per datagram).
#[derive(Debug)]
pub struct MarkingSocket {
    socket: UdpSocket,
    dscp: u8,
    hop_limit: Option<u8>,
}

impl MarkingSocket {
    /// Wraps an unmarked socket (DSCP 0, the system's hop limit).
    pub fn new(socket: UdpSocket) -> Self {
        MarkingSocket {
            socket,
            dscp: 0,
            hop_limit: None,
        }
    }

    /// The socket.
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    fn mark(&mut self, dscp: u8, hop_limit: Option<u8>) {
        if dscp != self.dscp && set_dscp(&self.socket, dscp).is_ok() {
            self.dscp = dscp;
        }
        if hop_limit != self.hop_limit && set_hop_limit(&self.socket, hop_limit).is_ok() {
            self.hop_limit = hop_limit;
        }
    }

    /// Sends `data` marked `dscp` with `hop_limit` (`None`: the system's) on the connected
    /// socket.
    pub fn send(&mut self, data: &[u8], dscp: u8, hop_limit: Option<u8>) -> io::Result<usize> {
        self.mark(dscp, hop_limit);
        self.socket.send(data)
    }

    /// Sends `data` marked `dscp` with `hop_limit` (`None`: the system's) to `to`.
    pub fn send_to(
        &mut self,
        data: &[u8],
        to: SocketAddr,
        dscp: u8,
        hop_limit: Option<u8>,
    ) -> io::Result<usize> {
        self.mark(dscp, hop_limit);
        self.socket.send_to(data, to)
    }
}

/// A datagram read by [`recv_with_dscp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marked {
    /// Bytes received.
    pub len: usize,
    /// The sender.
    pub from: Option<SocketAddr>,
    /// Its DSCP (0 if the kernel did not report one: [`receive_dscp`] not called).
    pub dscp: u8,
    /// The time to live or hop limit it arrived with (`None` if the kernel did not report it:
    /// [`receive_hop_limit`] not called).
    pub hop_limit: Option<u8>,
}

/// Receives one datagram into `buf` with `recvmsg`, reading its DSCP from the `IP_TOS` or
/// `IPV6_TCLASS` control message and its hop limit from `IP_TTL` or `IPV6_HOPLIMIT`.
pub fn recv_with_dscp(socket: &UdpSocket, buf: &mut [u8]) -> io::Result<Marked> {
    // Room for four control messages (at most 24 bytes each on 64-bit Linux), aligned for
    // cmsghdr.
    let mut control = [0u64; 16];
    // SAFETY: plain old data, zero is valid.
    let mut addr: libc::sockaddr_storage = unsafe { zeroed() };
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: plain old data, zero is valid.
    let mut hdr: libc::msghdr = unsafe { zeroed() };
    hdr.msg_name = (&mut addr as *mut libc::sockaddr_storage).cast();
    hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    hdr.msg_iov = &mut iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = control.as_mut_ptr().cast();
    hdr.msg_controllen = size_of::<[u64; 16]>() as _;
    // SAFETY: every pointer in `hdr` refers to a live buffer of the stated length for the call.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut hdr, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut tos = 0u8;
    let mut hop_limit = None;
    // SAFETY: the kernel filled `hdr.msg_control` with `msg_controllen` bytes of well-formed
    // control messages; CMSG_FIRSTHDR/CMSG_NXTHDR stay within them, and each payload is read
    // with an unaligned read of the size its type says.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&hdr);
        while !cmsg.is_null() {
            let c = &*cmsg;
            let data = libc::CMSG_DATA(cmsg);
            match (c.cmsg_level, c.cmsg_type) {
                // Linux reports IP_TOS as one byte.
                (libc::IPPROTO_IP, libc::IP_TOS) => tos = *data,
                (libc::IPPROTO_IPV6, libc::IPV6_TCLASS) => {
                    tos = std::ptr::read_unaligned(data.cast::<libc::c_int>()) as u8;
                }
                (libc::IPPROTO_IP, libc::IP_TTL) | (libc::IPPROTO_IPV6, libc::IPV6_HOPLIMIT) => {
                    let hops = std::ptr::read_unaligned(data.cast::<libc::c_int>());
                    hop_limit = u8::try_from(hops).ok();
                }
                _ => {}
            }
            cmsg = libc::CMSG_NXTHDR(&hdr, cmsg);
        }
    }
    Ok(Marked {
        len: n as usize,
        from: from_raw(&addr),
        dscp: tos >> 2,
        hop_limit,
    })
}

/// One received datagram of a batch.
#[derive(Debug, Clone, Copy)]
pub struct Received {
    /// Index of its slot in the batch.
    pub slot: usize,
    /// Bytes received (at most [`SLOT`]).
    pub len: usize,
    /// The sender.
    pub from: Option<SocketAddr>,
    /// The datagram was longer than the slot.
    pub truncated: bool,
    /// When it reached the socket (ns since the Unix epoch), if the kernel stamped it
    /// ([`receive_kernel_timestamps`]).
    pub kernel_ns: Option<u64>,
}

/// Room for one datagram's control messages: a `SO_TIMESTAMPNS` timespec (32 bytes with its
/// header on 64-bit Linux) and one more, aligned for `cmsghdr`.
const CONTROL_WORDS: usize = 8;

/// Buffers for receiving up to `capacity` datagrams in one `recvmmsg` call.
pub struct RecvBatch {
    bufs: Vec<u8>,
    addrs: Vec<libc::sockaddr_storage>,
    iovecs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    controls: Vec<[u64; CONTROL_WORDS]>,
}

impl RecvBatch {
    /// Room for `capacity` datagrams.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        RecvBatch {
            bufs: vec![0u8; capacity * SLOT],
            // SAFETY: plain old data, zero is valid.
            addrs: vec![unsafe { zeroed() }; capacity],
            iovecs: Vec::with_capacity(capacity),
            msgs: Vec::with_capacity(capacity),
            controls: vec![[0; CONTROL_WORDS]; capacity],
        }
    }

    /// The bytes of slot `i`.
    pub fn slot(&self, r: &Received) -> &[u8] {
        &self.bufs[r.slot * SLOT..r.slot * SLOT + r.len]
    }

    /// Receives what is waiting (blocking per the socket's mode and timeout, returning once at
    /// least one datagram arrived). `Ok(empty)` on timeout.
    pub fn recv(&mut self, socket: &UdpSocket) -> io::Result<Vec<Received>> {
        let capacity = self.addrs.len();
        self.iovecs.clear();
        self.msgs.clear();
        for chunk in self.bufs.chunks_mut(SLOT).take(capacity) {
            self.iovecs.push(libc::iovec {
                iov_base: chunk.as_mut_ptr().cast(),
                iov_len: SLOT,
            });
        }
        for i in 0..capacity {
            // SAFETY: plain old data, zero is valid.
            let mut hdr: libc::msghdr = unsafe { zeroed() };
            hdr.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
            hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            hdr.msg_iov = &mut self.iovecs[i];
            hdr.msg_iovlen = 1;
            hdr.msg_control = self.controls[i].as_mut_ptr().cast();
            hdr.msg_controllen = size_of::<[u64; CONTROL_WORDS]>() as _;
            self.msgs.push(libc::mmsghdr {
                msg_hdr: hdr,
                msg_len: 0,
            });
        }
        // SAFETY: msgs points at `capacity` headers whose buffers live in self for the call.
        let n = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.msgs.as_mut_ptr(),
                capacity as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::TimedOut
                | io::ErrorKind::Interrupted => Ok(Vec::new()),
                _ => Err(e),
            };
        }
        Ok((0..n as usize)
            .map(|i| {
                let m = &self.msgs[i];
                Received {
                    slot: i,
                    len: (m.msg_len as usize).min(SLOT),
                    from: from_raw(&self.addrs[i]),
                    truncated: m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                    kernel_ns: kernel_stamp(&m.msg_hdr),
                }
            })
            .collect())
    }
}

/// The `SO_TIMESTAMPNS` stamp among `hdr`'s control messages (ns since the Unix epoch).
fn kernel_stamp(hdr: &libc::msghdr) -> Option<u64> {
    // SAFETY: the kernel filled `hdr.msg_control` with `msg_controllen` bytes of well-formed
    // control messages; CMSG_FIRSTHDR/CMSG_NXTHDR stay within them, and the timespec is read
    // unaligned.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(hdr);
        while !cmsg.is_null() {
            let c = &*cmsg;
            if (c.cmsg_level, c.cmsg_type) == (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS) {
                let t = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                let secs = u64::try_from(t.tv_sec).ok()?;
                let nanos = u64::try_from(t.tv_nsec).ok()?;
                return secs.checked_mul(1_000_000_000)?.checked_add(nanos);
            }
            cmsg = libc::CMSG_NXTHDR(hdr, cmsg);
        }
    }
    None
}

/// Datagrams queued for one `sendmmsg` call.
pub struct SendBatch {
    bufs: Vec<u8>,
    lens: Vec<usize>,
    addrs: Vec<(libc::sockaddr_storage, libc::socklen_t)>,
    capacity: usize,
}

impl SendBatch {
    /// Room for `capacity` datagrams of up to [`SLOT`] bytes.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        SendBatch {
            bufs: vec![0u8; capacity * SLOT],
            lens: Vec::with_capacity(capacity),
            addrs: Vec::with_capacity(capacity),
            capacity,
        }
    }

    /// Whether no more datagrams fit.
    pub fn is_full(&self) -> bool {
        self.lens.len() >= self.capacity
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The buffer of the next slot, to be filled and then committed with [`SendBatch::push`].
    pub fn next_slot(&mut self) -> &mut [u8] {
        let i = self.lens.len().min(self.capacity - 1);
        &mut self.bufs[i * SLOT..(i + 1) * SLOT]
    }

    /// Commits `len` bytes written to [`SendBatch::next_slot`], addressed to `to`.
    pub fn push(&mut self, len: usize, to: &SocketAddr) {
        if !self.is_full() {
            self.lens.push(len.min(SLOT));
            self.addrs.push(to_raw(to));
        }
    }

    /// Sends everything queued; returns how many datagrams the kernel accepted. The batch is
    /// empty afterwards (datagrams the kernel refused are dropped, as UDP would).
    pub fn flush(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        let n = self.lens.len();
        if n == 0 {
            return Ok(0);
        }
        let mut iovecs: Vec<libc::iovec> = self
            .lens
            .iter()
            .enumerate()
            .map(|(i, &len)| libc::iovec {
                iov_base: self.bufs[i * SLOT..].as_mut_ptr().cast(),
                iov_len: len,
            })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = (0..n)
            .map(|i| {
                // SAFETY: plain old data, zero is valid.
                let mut hdr: libc::msghdr = unsafe { zeroed() };
                hdr.msg_name = (&mut self.addrs[i].0 as *mut libc::sockaddr_storage).cast();
                hdr.msg_namelen = self.addrs[i].1;
                hdr.msg_iov = &mut iovecs[i];
                hdr.msg_iovlen = 1;
                libc::mmsghdr {
                    msg_hdr: hdr,
                    msg_len: 0,
                }
            })
            .collect();
        let mut sent = 0usize;
        let mut refused = 0usize;
        while sent < n {
            // SAFETY: msgs[sent..] are valid headers whose buffers outlive the call.
            let r = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    msgs[sent..].as_mut_ptr(),
                    (n - sent) as libc::c_uint,
                    0,
                )
            };
            if r <= 0 {
                // Skip the datagram the kernel refused (e.g. unreachable peer) and go on.
                sent += 1;
                refused += 1;
                continue;
            }
            sent += r as usize;
        }
        self.lens.clear();
        self.addrs.clear();
        Ok(n - refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_through_sockaddr() {
        for a in ["127.0.0.1:4000", "[::1]:5000", "[fe80::1%2]:7"] {
            let addr: SocketAddr = a.parse().unwrap();
            let (raw, _) = to_raw(&addr);
            assert_eq!(from_raw(&raw), Some(addr));
        }
    }

    #[test]
    fn dscp_marks_and_hop_limits_survive_loopback_both_families() {
        for ip in ["127.0.0.1", "::1"] {
            let addr = SocketAddr::new(ip.parse().unwrap(), 0);
            let tx = UdpSocket::bind(addr).unwrap();
            let rx = UdpSocket::bind(addr).unwrap();
            rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            receive_dscp(&rx).unwrap();
            receive_hop_limit(&rx).unwrap();
            let mut buf = [0u8; 64];
            // Loopback has no router: a datagram arrives with the hop limit it left with.
            for (dscp, hops) in [(46, 1), (0, 64), (63, 255), (10, 7)] {
                set_dscp(&tx, dscp).unwrap();
                set_hop_limit(&tx, Some(hops)).unwrap();
                tx.send_to(b"hello", rx.local_addr().unwrap()).unwrap();
                let got = recv_with_dscp(&rx, &mut buf).unwrap();
                assert_eq!(
                    got,
                    Marked {
                        len: 5,
                        from: Some(tx.local_addr().unwrap()),
                        dscp,
                        hop_limit: Some(hops),
                    },
                    "{ip}"
                );
            }
        }
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(set_dscp(&tx, 64).is_err());
    }

    #[test]
    fn buffers_grow_as_far_as_the_kernel_allows() {
        let read = |name: &str| -> usize {
            std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = socket2::SockRef::from(&socket).recv_buffer_size().unwrap();
        let granted = grow_buffers(&socket).unwrap();
        // The kernel doubles what it is asked for; without CAP_NET_ADMIN it first caps the
        // request at rmem_max, with it (root, as in CI) it grants the whole request.
        let asked = SOCKET_BUFFER_BYTES as usize;
        let capped = 2 * asked.min(read("rmem_max"));
        assert!(
            granted == capped || granted == 2 * asked,
            "granted {granted}, was {before}, capped {capped}"
        );
        assert!(granted >= before);
    }

    #[test]
    fn batches_carry_datagrams_both_ways() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut out = SendBatch::new(8);
        for i in 0..5u8 {
            out.next_slot()[..3].copy_from_slice(&[i, i, i]);
            out.push(3, &b.local_addr().unwrap());
        }
        assert_eq!(out.flush(&a).unwrap(), 5);
        let mut batch = RecvBatch::new(8);
        let mut got = vec![];
        while got.len() < 5 {
            for r in batch.recv(&b).unwrap() {
                assert_eq!(r.from, Some(a.local_addr().unwrap()));
                got.push(batch.slot(&r).to_vec());
            }
        }
        assert_eq!(got[4], [4, 4, 4]);
    }

    #[test]
    fn kernel_timestamps_are_read_only_when_asked_for() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let (plain, stamped) = (
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            UdpSocket::bind("127.0.0.1:0").unwrap(),
        );
        receive_kernel_timestamps(&stamped).unwrap();
        let mut batch = RecvBatch::new(4);
        for b in [&plain, &stamped] {
            b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            a.send_to(&[1, 2, 3], b.local_addr().unwrap()).unwrap();
        }
        let since_epoch = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        };
        let before = since_epoch();
        let got = |b: &UdpSocket, batch: &mut RecvBatch| loop {
            if let Some(r) = batch.recv(b).unwrap().first().copied() {
                break r;
            }
        };
        assert_eq!(got(&plain, &mut batch).kernel_ns, None);
        let stamp = got(&stamped, &mut batch).kernel_ns.expect("a kernel stamp");
        // Sent before `before` was read, received before now: the realtime clock's stamp lies
        // within the two seconds the reads may take (a clock step would move both).
        assert!(
            stamp <= since_epoch() && stamp + 2_000_000_000 >= before,
            "{stamp} {before}"
        );
    }

    #[test]
    fn a_refused_datagram_is_not_counted_as_sent() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut out = SendBatch::new(4);
        out.push(3, &b.local_addr().unwrap());
        // An IPv6 destination from an IPv4 socket: refused by the kernel, nothing leaves.
        out.push(3, &"[::1]:9".parse().unwrap());
        out.push(3, &b.local_addr().unwrap());
        assert_eq!(out.flush(&a).unwrap(), 2);
        assert!(out.is_empty());
    }

    #[test]
    fn the_largest_udp_datagram_arrives_whole() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let big: Vec<u8> = (0..65_507u32).map(|i| i as u8).collect();
        a.send_to(&big, b.local_addr().unwrap()).unwrap();
        let mut batch = RecvBatch::new(2);
        let got = loop {
            if let Some(r) = batch.recv(&b).unwrap().first().copied() {
                break r;
            }
        };
        assert!(!got.truncated);
        assert_eq!(batch.slot(&got), &big[..]);
    }
}
