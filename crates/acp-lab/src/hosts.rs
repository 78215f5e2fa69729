//! Lab hosts: one network namespace each, with `lo` up and a TUN device [`TUN_NAME`] holding the
//! host's address in [`NETWORK`]`/`[`PREFIX`], so that every other host is reached through the
//! device, that is through the emulator.

use std::io;
use std::net::Ipv4Addr;
use std::sync::Arc;

use crate::emulator::Port;
use crate::netns::Namespace;
use crate::tun::{self, Tun, TUN_NAME};

/// The network all hosts are addressed in: host `k` (from 0) is `10.77.0.(k + 1)`.
pub const NETWORK: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 0);

/// Its prefix length.
pub const PREFIX: u8 = 24;

/// Most hosts a lab holds.
pub const MAX_HOSTS: usize = 254;

/// A host: its scenario name, address and namespace.
#[derive(Debug, Clone)]
pub struct Host {
    pub name: String,
    pub addr: Ipv4Addr,
    pub ns: Arc<Namespace>,
}

/// The address of host `index`.
pub fn address(index: usize) -> Ipv4Addr {
    let k = u32::try_from(index + 1)
        .unwrap_or(u32::MAX)
        .min(MAX_HOSTS as u32);
    Ipv4Addr::from(u32::from(NETWORK) + k)
}

/// Sets the host's `net.ipv4.tcp_rmem` (a setting of its namespace): the receive buffer of its
/// TCP sockets starts at `default` bytes and autotuning grows it up to `max`.
pub fn set_tcp_rmem(host: &Host, default: usize, max: usize) -> io::Result<()> {
    let min = TCP_RMEM_MIN.min(default);
    host.ns.enter(|| {
        std::fs::write(
            "/proc/sys/net/ipv4/tcp_rmem",
            format!("{min} {default} {max}\n"),
        )
    })
}

/// The least receive buffer under memory pressure (Linux's default, one page).
const TCP_RMEM_MIN: usize = 4096;

/// Creates host `index` called `name`: its namespace, `lo` and its TUN device, whose other end
/// is returned for the emulator.
pub fn create(name: &str, index: usize) -> io::Result<(Host, Port)> {
    let ns = Namespace::new()?;
    let addr = address(index);
    let tun = ns.enter(|| {
        tun::bring_up(c"lo")?;
        let tun = Tun::create(TUN_NAME)?;
        tun::configure(TUN_NAME, addr, PREFIX)?;
        Ok(tun)
    })?;
    let host = Host {
        name: name.to_string(),
        addr,
        ns: Arc::new(ns),
    };
    Ok((host, Port { tun, addr }))
}
