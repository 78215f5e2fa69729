//! Sealed sessions and address validation, source and monitor talking in memory: what a real
//! exchange looks like, and every forged, modified or replayed datagram refused.

use std::net::SocketAddr;
use std::time::Duration;

use acp_core::monitor::Dropped;
use acp_core::seal::{AuthError, Keyring, Psk, Secret, SessionCipher};
use acp_core::source::{AckOutcome, Phase};
use acp_core::wire::{Packet, Update, TAG_LEN};
use acp_core::{AppMode, Fixed, Monitor, MonitorConfig, Source, SourceConfig, Time};

const SESSION: u64 = 0x5EA1;

fn psk(id: u8, fill: u8) -> Psk {
    Psk {
        id,
        key: Secret([fill; 32]),
    }
}

fn peer() -> SocketAddr {
    SocketAddr::from(([192, 0, 2, 7], 4000))
}

fn sealed_monitor() -> Monitor {
    let keys = Keyring::new(vec![psk(1, 0x11), psk(2, 0x22)]).unwrap();
    Monitor::new(
        MonitorConfig {
            keys: Some(keys),
            ..MonitorConfig::default()
        },
        Time::ZERO,
    )
}

fn sealed_source(key: Psk) -> Source {
    Source::new(
        SourceConfig {
            psk: Some(key),
            ..SourceConfig::default()
        },
        Box::new(Fixed::new(50.0)),
        AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| {
            out.extend_from_slice(b"t=21")
        })),
        SESSION,
        Time::ZERO,
    )
}

/// Runs source and monitor over a lossless 10 ms path until `until`; returns every update the
/// source sent and every reply the monitor wrote, in order.
struct Exchange {
    updates: Vec<Vec<u8>>,
    replies: Vec<Vec<u8>>,
    delivered: usize,
}

fn run(src: &mut Source, mon: &mut Monitor, until: Time) -> Exchange {
    let mut ex = Exchange {
        updates: vec![],
        replies: vec![],
        delivered: 0,
    };
    let mut now = Time::ZERO;
    let mut buf = Vec::new();
    let mut reply = vec![0u8; 256];
    while now < until {
        if src.poll_transmit(now, &mut buf).is_some() {
            ex.updates.push(buf.clone());
            let at = now + Duration::from_millis(5);
            if let Ok(h) = mon.handle_datagram(at, peer(), &buf, &mut reply) {
                ex.delivered += usize::from(h.delivery.is_some());
                ex.replies.push(reply[..h.ack_len].to_vec());
                src.handle_datagram(at + Duration::from_millis(5), &reply[..h.ack_len]);
            }
        }
        now += Duration::from_millis(1);
    }
    ex
}

#[test]
fn a_sealed_session_starts_with_a_cookie_and_runs() {
    let mut src = sealed_source(psk(2, 0x22));
    let mut mon = sealed_monitor();
    let ex = run(&mut src, &mut mon, Time::from_secs(2));
    let stats = src.stats(Time::from_secs(2));
    // The first probe is answered with a sealed COOKIE; the next probe echoes it at once.
    assert!(matches!(Packet::decode(&ex.replies[0]), Ok(Packet::Cookie(c)) if c.flags != 0));
    assert_eq!(stats.cookies, 1);
    assert_eq!(stats.probes_lost, 0);
    assert_eq!(stats.phase, Phase::Running);
    assert_eq!((stats.invalid, stats.auth_failed), (0, 0));
    assert!(ex.delivered > 50, "{} delivered", ex.delivered);
    // Every update and every reply is sealed, with key id 2.
    for dg in ex.updates.iter().chain(&ex.replies) {
        assert_eq!(acp_core::seal::key_id(dg), Some(2));
    }
    // Only the probe after the COOKIE carried the cookie (it was ACKed at once).
    let with_cookie = ex
        .updates
        .iter()
        .filter(|d| matches!(Update::decode(d), Ok(u) if u.cookie.is_some()))
        .count();
    assert_eq!(with_cookie, 1);
    assert_eq!(mon.stats().sessions_created, 1);
}

#[test]
fn forged_modified_and_replayed_updates_are_all_refused() {
    let mut src = sealed_source(psk(1, 0x11));
    let mut mon = sealed_monitor();
    let ex = run(&mut src, &mut mon, Time::from_secs(1));
    let delivered = mon.stats().delivered;
    let acks = mon.stats().acks;
    let later = Time::from_secs(1);
    let mut reply = vec![0u8; 256];
    let mut refused = 0;
    // Replays of every update already sent (cookie-bearing first ones included).
    for dg in &ex.updates {
        assert!(mon.handle_datagram(later, peer(), dg, &mut reply).is_err());
        refused += 1;
    }
    // Every single-bit change of the last update.
    let last = ex.updates.last().unwrap();
    for i in 0..last.len() {
        for bit in 0..8 {
            let mut bad = last.clone();
            bad[i] ^= 1 << bit;
            assert!(mon
                .handle_datagram(later, peer(), &bad, &mut reply)
                .is_err());
            refused += 1;
        }
    }
    // The next update, sealed under another pre-shared key the monitor does not hold, or
    // under a key it holds but for another session id, or not sealed at all.
    let mut forger = sealed_source(psk(1, 0x99));
    let mut buf = Vec::new();
    forger.poll_transmit(Time::ZERO, &mut buf).unwrap();
    assert_eq!(
        mon.handle_datagram(later, peer(), &buf, &mut reply),
        Err(Dropped::Auth(AuthError::BadTag))
    );
    let mut unsealed = buf[..buf.len() - TAG_LEN].to_vec();
    unsealed[4] &= 0x7f;
    unsealed[5] = 0;
    assert_eq!(
        mon.handle_datagram(later, peer(), &unsealed, &mut reply),
        Err(Dropped::Auth(AuthError::Unsealed))
    );
    refused += 2;
    let failed: u64 = mon.stats().auth_failed_by.values().sum();
    let malformed = mon.stats().malformed;
    assert_eq!(failed + malformed, refused);
    assert!(mon.stats().auth_failed_by["replayed"] >= ex.updates.len() as u64 - 1);
    assert_eq!((mon.stats().delivered, mon.stats().acks), (delivered, acks));
}

#[test]
fn forged_modified_and_replayed_replies_are_all_refused() {
    let mut src = sealed_source(psk(1, 0x11));
    let mut mon = sealed_monitor();
    let ex = run(&mut src, &mut mon, Time::from_secs(1));
    let now = Time::from_secs(1);
    // Replays of every reply already received.
    for r in &ex.replies {
        assert_ne!(src.handle_datagram(now, r), AckOutcome::InSequence);
    }
    let before = src.stats(now);
    // Every single-bit change of the last ACK.
    let last = ex.replies.last().unwrap();
    for i in 0..last.len() {
        for bit in 0..8 {
            let mut bad = last.clone();
            bad[i] ^= 1 << bit;
            assert_eq!(src.handle_datagram(now, &bad), AckOutcome::Invalid);
        }
    }
    // The same ACK unsealed, as an attacker on the path could rewrite it.
    let mut unsealed = last[..last.len() - TAG_LEN].to_vec();
    unsealed[4] &= 0x7f;
    unsealed[5] = 0;
    assert_eq!(src.handle_datagram(now, &unsealed), AckOutcome::Invalid);
    let after = src.stats(now);
    assert_eq!(after.acks_in_sequence, before.acks_in_sequence);
    assert_eq!((after.rtt, after.backlog), (before.rtt, before.backlog));
    // Each refused: as malformed, or (most) by its seal.
    assert_eq!(after.invalid - before.invalid, 8 * last.len() as u64 + 1);
    assert!(after.auth_failed - before.auth_failed > 4 * last.len() as u64);
}

#[test]
fn sealed_and_plain_ends_do_not_talk() {
    let mut plain_mon = Monitor::new(MonitorConfig::default(), Time::ZERO);
    let mut src = sealed_source(psk(1, 0x11));
    let ex = run(&mut src, &mut plain_mon, Time::from_secs(1));
    assert_eq!(ex.delivered, 0);
    assert!(
        plain_mon.stats().auth_failed_by.get("unexpected_seal") > Some(&0),
        "{:?}",
        plain_mon.stats()
    );
    let mut plain_src = Source::new(
        SourceConfig::default(),
        Box::new(Fixed::new(50.0)),
        AppMode::GenerateAtWill(Box::new(|_, _: &mut Vec<u8>| {})),
        SESSION,
        Time::ZERO,
    );
    let mut mon = sealed_monitor();
    let ex = run(&mut plain_src, &mut mon, Time::from_secs(1));
    assert_eq!(ex.delivered, 0);
    assert!(
        mon.stats().auth_failed_by.get("unsealed") > Some(&0),
        "{:?}",
        mon.stats()
    );
    assert_eq!(mon.session_count(), 0);
}

/// An update of `SESSION` with sequence `seq`, echoing `cookie`, sealed under `key`.
fn sealed_update(key: &Psk, seq: u64, cookie: Option<[u8; 12]>) -> Vec<u8> {
    let u = Update {
        flags: 0,
        session: SESSION,
        seq,
        gen_ts: 1,
        acked_seq: 0,
        hold_ns: 0,
        cookie,
        payload: b"t=21",
    };
    let mut buf = vec![0u8; 128];
    let len = u.encode(&mut buf).unwrap();
    let len = SessionCipher::new(key, SESSION)
        .seal(&mut buf, len)
        .unwrap();
    buf.truncate(len);
    buf
}

/// The cookie a sealed monitor answers a first update with, at `now`.
fn cookie_for(mon: &mut Monitor, key: &Psk, now: Time) -> [u8; 12] {
    let mut reply = vec![0u8; 256];
    let update = sealed_update(key, 1, None);
    let h = mon
        .handle_datagram(now, peer(), &update, &mut reply)
        .unwrap();
    match Packet::decode(&reply[..h.ack_len]) {
        Ok(Packet::Cookie(c)) => c.cookie,
        other => panic!("expected a COOKIE, got {other:?}"),
    }
}

/// Fuzzer finding: sequence 0 with a valid cookie opened a session that then refused it as
/// replayed, holding a table slot for nothing. It is refused before it gets state.
#[test]
fn a_sealed_session_cannot_start_at_sequence_zero() {
    let mut mon = sealed_monitor();
    let key = psk(1, 0x11);
    let cookie = cookie_for(&mut mon, &key, Time::ZERO);
    let mut reply = vec![0u8; 256];
    assert_eq!(
        mon.handle_datagram(
            Time::ZERO,
            peer(),
            &sealed_update(&key, 0, Some(cookie)),
            &mut reply
        ),
        Err(Dropped::Replayed)
    );
    assert_eq!(mon.stats().sessions_created, 0);
    assert_eq!(mon.stats().auth_failed_by["replayed"], 1);
}

/// Fuzzer finding: a sealed session admitted by its cookie-bearing first update was forgotten
/// after the 2 s probation while the cookie stayed valid for up to 20 s, so a replay of that
/// update reopened the session and delivered it again. Sealed sessions are not on probation.
#[test]
fn a_replayed_first_update_cannot_reopen_a_quiet_sealed_session() {
    let mut mon = sealed_monitor();
    let key = psk(1, 0x11);
    let cookie = cookie_for(&mut mon, &key, Time::ZERO);
    let first = sealed_update(&key, 2, Some(cookie));
    let mut reply = vec![0u8; 256];
    let h = mon
        .handle_datagram(Time::from_millis(10), peer(), &first, &mut reply)
        .unwrap();
    assert!(h.delivery.is_some());
    // Past the probation of an unsealed one-shot session, well within the cookie's life.
    let later = Time::from_secs(3);
    mon.handle_timeout(later);
    assert_eq!(mon.stats().sessions_expired, 0);
    assert_eq!(
        mon.handle_datagram(later, peer(), &first, &mut reply),
        Err(Dropped::Replayed)
    );
    assert_eq!(
        (mon.stats().sessions_created, mon.stats().delivered),
        (1, 1)
    );
    // The idle timeout still applies.
    mon.handle_timeout(Time::from_secs(31));
    assert_eq!(mon.stats().sessions_expired, 1);
}

/// Fuzzer finding: a sequence 64 ahead of the highest pushed the old highest out of the replay
/// window, so its replay got a (STALE) ACK instead of being refused.
#[test]
fn a_jump_of_64_keeps_the_old_highest_in_the_replay_window() {
    let mut mon = sealed_monitor();
    let key = psk(1, 0x11);
    let cookie = cookie_for(&mut mon, &key, Time::ZERO);
    let mut reply = vec![0u8; 256];
    let at = Time::from_millis(10);
    let old = sealed_update(&key, 2, Some(cookie));
    for dg in [old.clone(), sealed_update(&key, 66, None)] {
        mon.handle_datagram(at, peer(), &dg, &mut reply).unwrap();
    }
    assert_eq!(
        mon.handle_datagram(at, peer(), &old, &mut reply),
        Err(Dropped::Replayed)
    );
    // A sequence inside the jump was never received: it is late, not a replay.
    let late = sealed_update(&key, 3, None);
    let h = mon.handle_datagram(at, peer(), &late, &mut reply).unwrap();
    assert!(h.delivery.is_none());
}

/// Fuzzer finding: sealed ACKs get strictly increasing rx times, `last + 1` at least, which
/// overflowed after an ACK at the end of time. It saturates.
#[test]
fn sealed_rx_times_saturate_at_the_end_of_time() {
    let mut mon = sealed_monitor();
    let key = psk(1, 0x11);
    let cookie = cookie_for(&mut mon, &key, Time::ZERO);
    let mut reply = vec![0u8; 256];
    let first = sealed_update(&key, 2, Some(cookie));
    mon.handle_datagram(Time::from_millis(10), peer(), &first, &mut reply)
        .unwrap();
    for seq in [3, 4] {
        let update = sealed_update(&key, seq, None);
        let h = mon
            .handle_datagram(Time::MAX, peer(), &update, &mut reply)
            .unwrap();
        match Packet::decode(&reply[..h.ack_len]) {
            Ok(Packet::Ack(a)) => assert_eq!(a.rx_ts, u64::MAX),
            other => panic!("expected an ACK, got {other:?}"),
        }
    }
}
