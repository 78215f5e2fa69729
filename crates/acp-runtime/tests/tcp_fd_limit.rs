//! The monitor at the file-descriptor limit (issue 25, item 1): with connections waiting and no
//! descriptor to accept them with, the server used to wake at once again and again (its listener
//! stayed readable) and spin a core. It now pauses accepting, counts, and takes the waiting
//! connections once descriptors are free again. In a binary of its own: it lowers the process's
//! descriptor limit.

use std::time::{Duration, Instant};

use acp_core::MonitorConfig;
use acp_runtime::server::{MonitorServer, ServerConfig, TcpConfig};

fn open_descriptors() -> u64 {
    let entries: Vec<_> = std::fs::read_dir("/proc/self/fd").unwrap().collect();
    // Less the directory handle that listed them.
    entries.len() as u64 - 1
}

fn set_soft_limit(soft: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for getrlimit to fill, then to pass back changed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = soft as libc::rlim_t;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
}

/// A spinning server thread would use most of a core for the second it is watched, at least
/// 300 ms even if other processes kept it to a third of one; a paused one wakes about ten times
/// (every 100 ms) and uses well under 100 ms. CPU time is not stretched by a busy machine.
#[test]
fn out_of_descriptors_the_server_pauses_accepting_instead_of_spinning() {
    let monitor = MonitorConfig {
        max_prefix_share: 1.0,
        ..MonitorConfig::default()
    };
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), monitor);
    cfg.tcp = Some(TcpConfig {
        max_connections: 64,
        ..TcpConfig::default()
    });
    let server = MonitorServer::start(cfg, None).unwrap();
    let to: socket2::SockAddr = server.local_addr().into();
    // The clients' sockets exist before the limit is lowered; connecting needs no new descriptor.
    let clients: Vec<socket2::Socket> = (0..16)
        .map(|_| socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap())
        .collect();
    let before = open_descriptors();
    set_soft_limit(before + 2);
    for c in &clients {
        c.connect(&to).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let cpu = server.cpu_time().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let spent = server.cpu_time().unwrap() - cpu;
    let c = server.totals().streams.unwrap();
    set_soft_limit(before + 64);
    assert!(
        spent < Duration::from_millis(100),
        "{spent:?} of CPU in 1 s"
    );
    // The two or three descriptors left were taken; the other connections wait.
    assert!(c.open < 8, "{c:?}");
    // About one failed accept per 100 ms pause; far fewer than a spinning loop's.
    assert!((5..=20).contains(&c.fd_exhausted), "{c:?}");
    // Descriptors free again: the waiting connections are taken.
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.totals().streams.unwrap().open < 16 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.totals().streams.unwrap().open, 16);
}
