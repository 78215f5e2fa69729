//! The emulator between two namespaces: delay and loss as the link model says. Root only: the
//! tests print why and pass without it.

use std::time::Duration;

use acp_lab::emulator::{Emulator, LinkSpec, Route};
use acp_lab::hosts::{self, Host};
use acp_netmodel::LossModel;
use acp_runtime::relay::PathConfig;
use acp_sim::topology::Hop;

mod common;

use common::{echo_rtts, privileged, socket};

/// Hosts a and b joined both ways by a link of `path`; the emulator runs until dropped.
fn pair(path: PathConfig, seed: u64) -> (Host, Host, Emulator) {
    let (a, pa) = hosts::create("a", 0).unwrap();
    let (b, pb) = hosts::create("b", 1).unwrap();
    let links = [
        LinkSpec {
            name: "a→b".into(),
            path: path.clone(),
        },
        LinkSpec {
            name: "b→a".into(),
            path,
        },
    ];
    let routes = [
        Route {
            from: 0,
            to: 1,
            hops: vec![Hop::Link(0)],
        },
        Route {
            from: 1,
            to: 0,
            hops: vec![Hop::Link(1)],
        },
    ];
    let emu = Emulator::start(vec![pa, pb], &links, &[], &routes, seed).unwrap();
    (a, b, emu)
}

#[test]
fn a_round_trip_over_a_20ms_link_takes_40ms_plus_serialisation() {
    if !privileged("round trip") {
        return;
    }
    let (a, b, emu) = pair(PathConfig::lossless(2e6, Duration::from_millis(20), 100), 1);
    let rtts = echo_rtts(&a, &b, 222, 20);
    let stats = emu.stop();
    // 250 B on the wire at 2 Mbit/s is 1 ms each way, plus 20 ms of propagation: 42 ms, which
    // the emulator never beats. What it adds is the lateness of its threads and this one, tens of
    // µs on a quiet machine; a machine busy with other processes delays some exchanges by several
    // ms, so the median, not the slowest, is held to 2 ms of lateness.
    assert!(rtts[0] >= Duration::from_millis(42), "{rtts:?}");
    assert!(rtts[rtts.len() / 2] < Duration::from_millis(44), "{rtts:?}");
    assert_eq!(stats.forwarded, 40, "{stats:?}");
}

#[test]
fn a_one_percent_loss_link_loses_about_one_percent() {
    if !privileged("loss") {
        return;
    }
    let mut path = PathConfig::lossless(100e6, Duration::from_millis(1), 10_000);
    path.link.loss = LossModel::Bernoulli { p: 0.01 };
    let (a, b, emu) = pair(path, 7);
    let (sa, sb) = (socket(&a), socket(&b));
    // The receiver stops once nothing has come for 2 s: far longer than a loaded machine holds
    // the emulator's threads back, so it does not stop before the last packet.
    sb.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let to = sb.local_addr().unwrap();
    let sent = 20_000u64;
    let receiver = std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        let mut n = 0u64;
        while sb.recv(&mut buf).is_ok() {
            n += 1;
        }
        n
    });
    // 10 packets a millisecond: far below what the emulator and the link carry, so the link's
    // random loss is the only loss.
    for k in 0..sent / 10 {
        for _ in 0..10 {
            sa.send_to(&k.to_be_bytes(), to).unwrap();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let received = receiver.join().unwrap();
    let stats = emu.stop();
    let link = &stats.links[0];
    assert_eq!(link.offered, sent, "{stats:?}");
    assert_eq!(sent - received, link.dropped_loss, "only the model dropped");
    // Binomial(20000, 0.01): mean 200, sd 14; 60 is over four sd.
    assert!(link.dropped_loss.abs_diff(200) < 60, "{stats:?}");
}
