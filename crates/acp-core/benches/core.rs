//! Hot paths of the protocol core: wire encode/decode, source per-ACK, monitor per-update.
//!
//! Targets on the development machine (2 cores): monitor per-update ≤ 100 ns, source per-ACK
//! ≤ 200 ns. Run with `cargo bench -p acp-core`.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use acp_core::wire::{Ack, Packet, Update, HEADER_LEN};
use acp_core::{
    Acp, AppMode, Controller, Monitor, MonitorConfig, Seek, Source, SourceConfig, Time,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const PAYLOAD: [u8; 64] = [0x5A; 64];

fn update(session: u64, seq: u64, gen_ts: u64) -> Vec<u8> {
    let u = Update {
        flags: 0,
        session,
        seq,
        gen_ts,
        acked_seq: seq.saturating_sub(2),
        hold_ns: 0,
        cookie: None,
        payload: &PAYLOAD,
    };
    let mut buf = vec![0u8; u.encoded_len()];
    u.encode(&mut buf).expect("fits");
    buf
}

fn wire(c: &mut Criterion) {
    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    let dg = update(7, 42, 1_000_000);
    let u = Update::decode(&dg).expect("valid");
    let mut out = [0u8; 256];
    g.bench_function("encode_update_64B", |b| {
        b.iter(|| black_box(&u).encode(&mut out))
    });
    g.bench_function("decode_update_64B", |b| {
        b.iter(|| Packet::decode(black_box(&dg)))
    });
    let a = Ack {
        flags: 0,
        session: 7,
        seq: 42,
        gen_ts: 1,
        rx_ts: 2,
        hold_ns: 0,
        feedback: &[],
    };
    let mut ack = [0u8; HEADER_LEN];
    a.encode(&mut ack).expect("fits");
    g.bench_function("encode_ack", |b| b.iter(|| black_box(&a).encode(&mut out)));
    g.bench_function("decode_ack", |b| b.iter(|| Packet::decode(black_box(&ack))));
    // Sealing: the per-datagram cost of --psk-file on each side.
    let psk = acp_core::seal::Psk {
        id: 1,
        key: acp_core::seal::Secret([7; 32]),
    };
    let cipher = acp_core::seal::SessionCipher::new(&psk, 7);
    let mut sealed = dg.clone();
    sealed.resize(dg.len() + acp_core::wire::TAG_LEN, 0);
    cipher.seal(&mut sealed, dg.len()).expect("fits");
    g.bench_function("seal_update_64B", |b| {
        b.iter(|| {
            let mut buf = sealed.clone();
            cipher.seal(black_box(&mut buf), dg.len())
        })
    });
    g.bench_function("open_update_64B", |b| {
        b.iter(|| cipher.open(black_box(&sealed)))
    });
    g.bench_function("derive_session_key", |b| {
        b.iter(|| acp_core::seal::derive(black_box(&psk), 7))
    });
    g.finish();
}

/// A source past initialisation, and the ACKs for `n` updates it then sent 1 ms apart.
fn running_source(n: usize, controller: Box<dyn Controller>) -> (Source, Vec<Vec<u8>>, Time) {
    let mode = AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| {
        out.extend_from_slice(&PAYLOAD)
    }));
    let cfg = SourceConfig {
        min_rate: 1000.0,
        max_rate: 1000.0,
        ..SourceConfig::default()
    };
    let mut src = Source::new(cfg, controller, mode, 1, Time::ZERO);
    let mut mon = Monitor::new(MonitorConfig::default(), Time::ZERO);
    let peer = SocketAddr::from(([127, 0, 0, 1], 1));
    let (mut buf, mut ack) = (Vec::new(), vec![0u8; 128]);
    let mut now = Time::ZERO;
    let rtt = Duration::from_millis(5);
    // Initialisation: stop-and-wait probes.
    for _ in 0..10 {
        src.poll_transmit(now, &mut buf).expect("probe");
        now += rtt;
        let h = mon.handle_datagram(now, peer, &buf, &mut ack).expect("ack");
        src.handle_datagram(now, &ack[..h.ack_len]);
    }
    let mut acks = Vec::with_capacity(n);
    while acks.len() < n {
        if src.poll_transmit(now, &mut buf).is_some() {
            let h = mon.handle_datagram(now, peer, &buf, &mut ack).expect("ack");
            acks.push(ack[..h.ack_len].to_vec());
        }
        now = src.poll_timeout().expect("deadline").max(now);
    }
    (src, acks, now + rtt)
}

/// Builds a fresh controller for one benchmark batch.
type MakeController = fn() -> Box<dyn Controller>;

fn source_per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("source");
    g.throughput(Throughput::Elements(1));
    let controllers: [(&str, MakeController); 2] = [
        ("per_ack_acp_plus", || Box::new(Acp::plus())),
        ("per_ack_seek", || Box::new(Seek::new())),
    ];
    for (name, controller) in controllers {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters as usize;
                while left > 0 {
                    let n = left.min(20_000);
                    let (mut src, acks, start) = running_source(n, controller());
                    let t = Instant::now();
                    for (i, a) in acks.iter().enumerate() {
                        let now = start + Duration::from_millis(i as u64);
                        black_box(src.handle_datagram(now, a));
                    }
                    total += t.elapsed();
                    left -= n;
                }
                total
            })
        });
    }
    g.finish();
}

fn monitor_per_update(c: &mut Criterion) {
    let mut g = c.benchmark_group("monitor");
    g.throughput(Throughput::Elements(1));
    for sessions in [1usize, 1000] {
        g.bench_function(format!("per_update_{sessions}_sessions"), |b| {
            // Updates round-robin over the sessions, each session's sequence increasing.
            let peers: Vec<SocketAddr> = (0..sessions)
                .map(|i| SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 5000)))
                .collect();
            b.iter_custom(|iters| {
                let mut mon = Monitor::new(
                    MonitorConfig {
                        clocks_synchronised: true,
                        ..MonitorConfig::default()
                    },
                    Time::ZERO,
                );
                let mut ack = [0u8; 128];
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    let n = (iters - done).min(20_000);
                    let batch: Vec<(SocketAddr, Vec<u8>)> = (done..done + n)
                        .map(|k| {
                            let s = (k as usize) % sessions;
                            let seq = k / sessions as u64 + 1;
                            (peers[s], update(s as u64, seq, k * 1000))
                        })
                        .collect();
                    let t = Instant::now();
                    for (k, (peer, dg)) in batch.iter().enumerate() {
                        let now = Time::from_micros(done + k as u64);
                        let _ = black_box(mon.handle_datagram(now, *peer, dg, &mut ack));
                    }
                    total += t.elapsed();
                    done += n;
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, wire, source_per_ack, monitor_per_update);
criterion_main!(benches);
