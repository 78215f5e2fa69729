//! TUN devices and the interface settings a lab host needs, through `ioctl`s (no `ip` command).
//!
//! A [`Tun`] is created `IFF_TUN | IFF_NO_PI` (bare IP packets, no packet-information header)
//! and not persistent: it disappears when its descriptor closes. [`Tun::create`] and
//! [`configure`] act on the namespace of the calling thread (run them inside
//! [`crate::netns::Namespace::enter`]).

use std::ffi::CStr;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::mem::zeroed;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// The name of every host's TUN device (each in its own namespace).
pub const TUN_NAME: &CStr = c"acp0";

/// An open TUN device: each read returns one IP packet sent by its namespace, each write
/// delivers one to it.
#[derive(Debug)]
pub struct Tun {
    file: File,
}

/// An `ifreq` naming `name`.
fn ifreq(name: &CStr) -> libc::ifreq {
    // SAFETY: ifreq is plain data (arrays, integers and a union of them); all zeros is valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.to_bytes()) {
        *dst = *src as libc::c_char;
    }
    req
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Tun {
    /// Creates the device `name` (non-blocking) in the calling thread's namespace.
    pub fn create(name: &CStr) -> io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/net/tun")
            .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
        let mut req = ifreq(name);
        req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is, for the call's duration.
        check(unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req) })?;
        Ok(Tun { file })
    }

    /// Reads one packet; `WouldBlock` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.file).read(buf)
    }

    /// Delivers one packet to the device's namespace.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        (&self.file).write(packet).map(|_| ())
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// An `AF_INET` socket of the calling thread's namespace, to configure its interfaces with.
fn control_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket takes integers only; a non-negative result is a new descriptor we own.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(fd)?;
    // SAFETY: `fd` was just returned by socket and is owned by nobody else.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

fn sockaddr(addr: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(addr).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size (16 bytes) and sockaddr is plain
    // data; the kernel reads the address as a sockaddr_in by its family.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// Sets `request` on interface `name` with `fill` writing the `ifreq`'s value.
fn set(
    sock: &OwnedFd,
    name: &CStr,
    request: libc::c_ulong,
    fill: impl FnOnce(&mut libc::ifreq),
) -> io::Result<()> {
    let mut req = ifreq(name);
    fill(&mut req);
    // SAFETY: every request passed here reads an ifreq, which `req` is, for the call's duration.
    check(unsafe { libc::ioctl(sock.as_raw_fd(), request as _, &mut req) })
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", name.to_string_lossy())))
}

/// Brings interface `name` up.
pub fn bring_up(name: &CStr) -> io::Result<()> {
    let sock = control_socket()?;
    let mut req = ifreq(name);
    // SAFETY: SIOCGIFFLAGS writes the flags into the ifreq `req`.
    check(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) })?;
    // SAFETY: SIOCGIFFLAGS has just set the union's flags member.
    let flags = unsafe { req.ifr_ifru.ifru_flags } | (libc::IFF_UP | libc::IFF_RUNNING) as i16;
    set(&sock, name, libc::SIOCSIFFLAGS, |r| {
        r.ifr_ifru.ifru_flags = flags
    })
}

/// Gives interface `name` the address `addr/prefix` (the kernel adds the route to the prefix
/// through it) and brings it up.
pub fn configure(name: &CStr, addr: Ipv4Addr, prefix: u8) -> io::Result<()> {
    let sock = control_socket()?;
    let mask = Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0));
    set(&sock, name, libc::SIOCSIFADDR, |r| {
        r.ifr_ifru.ifru_addr = sockaddr(addr)
    })?;
    set(&sock, name, libc::SIOCSIFNETMASK, |r| {
        r.ifr_ifru.ifru_netmask = sockaddr(mask)
    })?;
    bring_up(name)
}
