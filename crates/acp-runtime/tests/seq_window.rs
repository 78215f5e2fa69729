//! The sequence-window attack on loopback (issue 25, item 3): one update with the session's id,
//! sent from the source's address with its sequence 60,000 ahead (inside the 65,536 a session
//! may jump) used to make all 776 of the real source's later updates stale. Unauthenticated, the
//! jump is now held until its own line confirms it and the real line goes on being delivered;
//! with pre-shared keys the forger cannot seal the jump at all, and the real source's own jumps
//! are taken at once.
//!
//! The forged update leaves from the source's own socket: what an attacker spoofing the source's
//! address would make the monitor see, without raw sockets.

mod common;

use std::sync::{Arc, Mutex};

use acp_core::seal::{Keyring, Psk, Secret, SessionCipher};
use acp_core::MonitorConfig;
use acp_runtime::server::{MonitorServer, ServerConfig};
use acp_testkit::Sender;

const SESSION: u64 = 0x5EC_0001;
/// How far the forged update runs ahead: inside `MonitorConfig::max_seq_jump` (65,536).
const AHEAD: u64 = 60_000;

fn psk(fill: u8) -> Psk {
    Psk {
        id: 1,
        key: Secret([fill; 32]),
    }
}

/// A server on loopback, and the sequences it delivered.
fn server(keys: Option<Keyring>) -> (MonitorServer, Arc<Mutex<Vec<u64>>>) {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let sink = delivered.clone();
    let monitor = MonitorConfig {
        keys,
        ..MonitorConfig::default()
    };
    let cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), monitor);
    let on_update = Box::new(move |d: &acp_core::monitor::Delivery<'_>, _: Option<u64>| {
        sink.lock().unwrap().push(d.seq);
    });
    (
        MonitorServer::start(cfg, Some(on_update)).unwrap(),
        delivered,
    )
}

/// Runs the attack: sequences 1–10, the forged jump (or `forge`'s variants), then the 776 later
/// updates, every one of which must be delivered; returns the server's final totals.
fn attack(
    keys: Option<Keyring>,
    cipher: Option<SessionCipher>,
    forge: &[Option<SessionCipher>],
) -> acp_runtime::server::Totals {
    let _serial = common::serial();
    let (server, delivered) = server(keys);
    let mut source = Sender::new(server.local_addr(), SESSION, cipher);
    for seq in 1..=10 {
        source.send(seq);
    }
    for forger in forge {
        source.send_with(10 + AHEAD, forger.as_ref());
    }
    for seq in 11..=786 {
        source.send(seq);
    }
    let snap = server.stop().unwrap();
    let later: Vec<u64> = delivered
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|&s| s > 10)
        .collect();
    assert_eq!(
        later.len(),
        776,
        "later updates delivered; {:?}",
        snap.totals
    );
    assert_eq!(later, (11..=786).collect::<Vec<_>>());
    let s = &snap.sessions[0].stats;
    assert_eq!((s.highest_seq, s.delivered), (786, 786));
    snap.totals
}

#[test]
fn unauthenticated_one_forged_jump_loses_none_of_the_later_updates() {
    let totals = attack(None, None, &[None]);
    // Held, ACKed STALE (to the real source, which ignores an ACK it did not ask for).
    assert_eq!(totals.stats.seq_jumps_held, 1);
}

#[test]
fn with_keys_a_forged_jump_is_refused_and_the_sources_own_jump_is_taken_at_once() {
    let ring = Keyring::new(vec![psk(0x11)]).unwrap();
    let own = SessionCipher::new(&psk(0x11), SESSION);
    // The forger has no key: it sends the jump unsealed, and sealed with a key of its own.
    let wrong = SessionCipher::new(&psk(0x66), SESSION);
    let totals = attack(Some(ring.clone()), Some(own.clone()), &[None, Some(wrong)]);
    let by = &totals.stats.auth_failed_by;
    assert_eq!(
        (by.get("unsealed"), by.get("bad_tag")),
        (Some(&1), Some(&1)),
        "{by:?}"
    );

    // The source's own jump (an outage) is authentic: delivered at once, not held.
    let _serial = common::serial();
    let (server, delivered) = server(Some(ring));
    let mut source = Sender::new(server.local_addr(), SESSION, Some(own));
    for seq in [1, 2, 2 + AHEAD, 3 + AHEAD] {
        source.send(seq);
    }
    let snap = server.stop().unwrap();
    assert_eq!(*delivered.lock().unwrap(), [1, 2, 2 + AHEAD, 3 + AHEAD]);
    assert_eq!(snap.totals.stats.seq_jumps_held, 0);
    let refused: u64 = snap.totals.stats.auth_failed_by.values().sum();
    assert_eq!(refused, 0);
}
