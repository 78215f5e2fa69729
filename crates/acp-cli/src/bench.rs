//! `acp bench`: pacing precision and monitor throughput (one server, or several sharing a port).
//!
//! On SIGINT or SIGTERM the pacing and monitor benchmarks stop early and print what they
//! measured: pacing ends the rate under way, the monitor benchmark finishes its round under way
//! (and says it was interrupted), the latency measurement ends at once.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use acp_runtime::bench;
use acp_sim::reproduce::fig7::queue_chain;
use acp_sim::scenario::Scenario;
use serde_json::json;

use crate::output::outln;
use crate::signals;
use crate::BenchCommand;

/// Runs one benchmark and prints its figures.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Sim { json } => sim(json)?,
        BenchCommand::Flood(a) => crate::flood::run(a)?,
        BenchCommand::Lab { duration, json } => lab(duration, json)?,
        BenchCommand::Pacing { duration, json } => {
            let stop = signals::shutdown_flag()?;
            for rate in [1_000.0, 10_000.0] {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let r = bench::pacing(rate, duration, Some(stop.clone()))?;
                if json {
                    outln!(
                        "{}",
                        json!({"rate_hz": r.rate, "samples": r.samples, "p50_us": r.p50_us,
                               "p99_us": r.p99_us, "max_us": r.max_us})
                    )?;
                } else if r.samples == 0 {
                    outln!("pacing at {:>6} updates/s: no samples", r.rate)?;
                } else {
                    outln!(
                        "pacing at {:>6} updates/s: {} sends, |error| p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                        r.rate, r.samples, r.p50_us, r.p99_us, r.max_us
                    )?;
                }
            }
        }
        BenchCommand::Monitor {
            duration,
            rounds,
            sessions,
            window,
            workers: Some(workers),
            json,
            ..
        } => {
            let r = bench::monitor_workers(
                workers as usize,
                sessions,
                window as usize,
                duration,
                rounds as usize,
            )?;
            let one = bench::median(r.iter().map(|x| x.one.replies_per_sec));
            let many = bench::median(r.iter().map(|x| x.many.replies_per_sec));
            let ratio = bench::median(r.iter().map(bench::WorkersRound::ratio));
            if json {
                let per_round: Vec<_> = r
                    .iter()
                    .map(|x| {
                        json!({"one_acks_per_sec": x.one.replies_per_sec,
                               "workers_acks_per_sec": x.many.replies_per_sec,
                               "acks_by_worker": x.acks_by_worker,
                               "ratio": x.ratio()})
                    })
                    .collect();
                outln!(
                    "{}",
                    json!({"workers": workers, "sessions": sessions, "window": window,
                           "load_sockets": bench::WORKER_LOAD_SOCKETS, "rounds": per_round,
                           "one_acks_per_sec": one, "workers_acks_per_sec": many,
                           "ratio": ratio})
                )?;
            } else {
                outln!(
                    "load: {sessions} synthetic sources from {} source ports, {window} datagrams in \
                     flight, one generator thread (CPU 1); the servers on CPU 0; {rounds} rounds of \
                     {:.1} s each",
                    bench::WORKER_LOAD_SOCKETS,
                    duration.as_secs_f64()
                )?;
                for (i, x) in r.iter().enumerate() {
                    let shares: Vec<String> =
                        x.acks_by_worker.iter().map(|n| n.to_string()).collect();
                    outln!(
                        "  round {}: 1 server {:>7.0} ACKs/s, {workers} workers {:>7.0} ACKs/s \
                         (ACKs by worker {}), {}",
                        i + 1,
                        x.one.replies_per_sec,
                        x.many.replies_per_sec,
                        shares.join(" / "),
                        percent(x.ratio())
                    )?;
                }
                outln!("medians:")?;
                outln!("  {:<56}{one:>9.0} ACKs/s", "1 monitor server:")?;
                outln!(
                    "  {:<56}{many:>9.0} ACKs/s",
                    format!("{workers} servers on one port (SO_REUSEPORT):")
                )?;
                outln!(
                    "  {:<56}{:>11}",
                    "workers / one (median of the rounds' ratios):",
                    percent(ratio)
                )?;
            }
        }
        BenchCommand::Monitor {
            duration,
            sessions,
            latency: true,
            rate,
            read_sessions_every,
            list_sessions,
            json,
            ..
        } => {
            let stop = signals::shutdown_flag()?;
            let reads = read_sessions_every.map(|every| bench::SessionReads {
                every,
                listed: list_sessions,
            });
            let r = bench::monitor_latency(sessions, rate, duration, reads, &stop)?;
            let us = |x: f64| x.is_finite().then_some(x);
            if json {
                outln!(
                    "{}",
                    json!({"sessions": r.sessions, "rate_hz": r.rate, "sent": r.sent,
                           "replies": r.replies, "p50_us": us(r.p50_us), "p99_us": us(r.p99_us),
                           "p999_us": us(r.p999_us), "max_us": us(r.max_us),
                           "session_reads": r.session_reads,
                           "rss_before_bytes": r.rss_before, "rss_held_bytes": r.rss_held,
                           "rss_end_bytes": r.rss_end,
                           "rss_per_session_bytes": us(r.bytes_per_session(r.rss_held)),
                           "rss_per_session_end_bytes": us(r.bytes_per_session(r.rss_end))})
                )?;
            } else if r.replies == 0 {
                outln!("reply latency: no samples ({} sent)", r.sent)?;
            } else {
                outln!(
                    "reply latency with {} live sessions, {:.0} updates/s for {:.1} s{}:",
                    r.sessions,
                    r.rate,
                    // Less than --duration if interrupted.
                    (r.sent as f64 / r.rate).min(duration.as_secs_f64()),
                    reads.map_or_else(String::new, |d| format!(
                        ", {} read every {:?} ({} reads)",
                        if d.listed == usize::MAX {
                            "the session list".to_string()
                        } else {
                            format!("the {} sessions silent the longest", d.listed)
                        },
                        d.every,
                        r.session_reads
                    ))
                )?;
                outln!(
                    "  {} ACKs for {} updates; p50 {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs, max {:.0} µs",
                    r.replies, r.sent, r.p50_us, r.p99_us, r.p999_us, r.max_us
                )?;
            }
            if !json {
                outln!(
                    "resident memory: {:.1} MiB before the server, {:.1} MiB with the sessions \
                     established ({:.0} B per session), {:.1} MiB at the end ({:.0} B per session)",
                    crate::flood::mib(r.rss_before),
                    crate::flood::mib(r.rss_held),
                    r.bytes_per_session(r.rss_held),
                    crate::flood::mib(r.rss_end),
                    r.bytes_per_session(r.rss_end)
                )?;
            }
        }
        BenchCommand::Monitor {
            duration,
            rounds,
            sessions,
            window,
            psk_file,
            latency: false,
            json,
            ..
        } => {
            let stop = signals::shutdown_flag()?;
            let r = bench::monitor(
                sessions,
                window as usize,
                duration,
                rounds as usize,
                psk_file.as_ref(),
                &stop,
            )?;
            let sealed = r.median(|x| x.sealed.as_ref().map_or(f64::NAN, |s| s.replies_per_sec));
            let sealed_ratio = r.median(bench::MonitorRound::sealed_ratio);
            let sealed_cpu = r.median(|x| {
                x.sealed
                    .as_ref()
                    .map_or(f64::NAN, |s| s.server_cpu_ns_per_reply)
            });
            let sealed_capacity_ratio = r.median(bench::MonitorRound::sealed_capacity_ratio);
            let echo_cpu = r.median(|x| x.echo.server_cpu_ns_per_reply);
            let monitor_cpu = r.median(|x| x.monitor.server_cpu_ns_per_reply);
            let echo = r.median(|x| x.echo.replies_per_sec);
            let acks = r.median(|x| x.monitor.replies_per_sec);
            let handled = r.median(|x| x.monitor_handled_per_sec);
            let ratio = r.median(bench::MonitorRound::ratio);
            if json {
                let per_round: Vec<_> = r
                    .rounds
                    .iter()
                    .map(|x| {
                        json!({"echo_replies_per_sec": x.echo.replies_per_sec,
                               "echo_cpu_ns_per_reply": x.echo.server_cpu_ns_per_reply,
                               "monitor_acks_per_sec": x.monitor.replies_per_sec,
                               "monitor_cpu_ns_per_ack": x.monitor.server_cpu_ns_per_reply,
                               "ratio": x.ratio(),
                               "sealed_acks_per_sec": x.sealed.as_ref().map(|s| s.replies_per_sec),
                               "sealed_cpu_ns_per_ack": x.sealed.as_ref().map(|s| s.server_cpu_ns_per_reply),
                               "sealed_ratio": x.sealed.as_ref().map(|_| x.sealed_ratio()),
                               "sealed_capacity_ratio": x.sealed.as_ref().map(|_| x.sealed_capacity_ratio())})
                    })
                    .collect();
                outln!(
                    "{}",
                    json!({"sessions": sessions, "window": window, "rounds": per_round,
                           "monitor_acks_per_sec": acks, "monitor_handled_per_sec": handled,
                           "echo_replies_per_sec": echo, "ratio": ratio,
                           "echo_cpu_ns_per_reply": echo_cpu, "monitor_cpu_ns_per_ack": monitor_cpu,
                           "sealed_acks_per_sec": psk_file.is_some().then_some(sealed),
                           "sealed_ratio": psk_file.is_some().then_some(sealed_ratio),
                           "sealed_cpu_ns_per_ack": psk_file.is_some().then_some(sealed_cpu),
                           "sealed_capacity_ratio": psk_file.is_some().then_some(sealed_capacity_ratio)})
                )?;
            } else {
                outln!(
                    "load: {sessions} synthetic sources, {window} datagrams in flight, one generator thread; \
                     {} rounds of {:.1} s per server{}",
                    r.rounds.len(),
                    duration.as_secs_f64(),
                    if (r.rounds.len() as u64) < rounds { " (interrupted)" } else { "" }
                )?;
                for (i, x) in r.rounds.iter().enumerate() {
                    let sealed = x.sealed.as_ref().map_or_else(String::new, |s| {
                        format!(
                            ", sealed {:>7.0}/s {} ({} of unauthenticated, {} per core)",
                            s.replies_per_sec,
                            cpu(s.server_cpu_ns_per_reply),
                            percent(x.sealed_ratio()),
                            percent(x.sealed_capacity_ratio())
                        )
                    });
                    outln!(
                        "  round {}: echo {:>7.0}/s {}, monitor {:>7.0}/s {}, monitor / echo {}{sealed}",
                        i + 1,
                        x.echo.replies_per_sec,
                        cpu(x.echo.server_cpu_ns_per_reply),
                        x.monitor.replies_per_sec,
                        cpu(x.monitor.server_cpu_ns_per_reply),
                        percent(x.ratio())
                    )?;
                }
                outln!("medians:")?;
                outln!(
                    "  {:<56}{echo:>9.0} replies/s",
                    "batched UDP echo (recvmmsg/sendmmsg, 20-byte replies):"
                )?;
                outln!(
                    "  {:<56}{acks:>9.0} ACKs/s ({handled:.0} updates/s handled)",
                    "acp monitor server:"
                )?;
                outln!(
                    "  {:<56}{:>11}  /  {:>11}",
                    "server CPU per reply, echo / monitor:",
                    cpu(echo_cpu),
                    cpu(monitor_cpu)
                )?;
                outln!(
                    "  {:<56}{:>11}",
                    "monitor / echo (median of the rounds' ratios):",
                    percent(ratio)
                )?;
                if psk_file.is_some() {
                    outln!(
                        "  {:<56}{sealed:>9.0} ACKs/s",
                        "acp monitor server, sealed (--psk-file):"
                    )?;
                    outln!(
                        "  {:<56}{:>11}",
                        "sealed / unauthenticated (median of the rounds):",
                        percent(sealed_ratio)
                    )?;
                    outln!(
                        "  {:<56}{:>11}",
                        "monitor CPU per sealed ACK:",
                        cpu(sealed_cpu)
                    )?;
                    outln!(
                        "  {:<56}{:>11}",
                        "sealed / unauthenticated per core (from CPU per ACK):",
                        percent(sealed_capacity_ratio)
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// CPU time per reply in µs, or "(cpu ?)" where it could not be read.
fn cpu(ns: f64) -> String {
    if ns.is_finite() {
        format!("({:.2} µs cpu)", ns / 1000.0)
    } else {
        "(cpu ?)".into()
    }
}

/// A ratio as a percentage, or "no samples" when there was nothing to divide (0 / 0 is NaN; in
/// JSON it becomes null).
fn percent(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{:.1} %", ratio * 100.0)
    } else {
        "no samples".into()
    }
}

/// The 48-source, six-hop scenario shipped in `scenarios/`.
const SIX_HOPS_48: &str = include_str!("../../../scenarios/six_hops_48.toml");

/// 48 sources behind one 802.11g access point, then five hops (`scenarios/wifi_48.toml`).
const WIFI_48: &str = include_str!("../../../scenarios/wifi_48.toml");

fn sim(json_out: bool) -> anyhow::Result<()> {
    // An M/M/1 queue at ρ = 0.8, 2 million updates, on this thread only; then the 48-source
    // scenario. Events/s depends on how finely the engine splits work into events (a link is
    // woken once per packet since the shared network model); packet-hops/s (packets served by a
    // link, per second of wall time) does not, and compares engines fairly.
    let t = Instant::now();
    let mm1 = queue_chain(0.8, &[1.0], 2_000_000, 1);
    let mm1_wall = t.elapsed().as_secs_f64();
    let scenario = Scenario::parse(SIX_HOPS_48)?;
    let t = Instant::now();
    let big = scenario.build()?.run();
    let big_wall = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let wifi = Scenario::parse(WIFI_48)?.build()?.run();
    let wifi_wall = t.elapsed().as_secs_f64();
    // Packets served by a link or delivered across a WiFi medium.
    let hops = |r: &acp_sim::report::SimResult| {
        r.links.iter().map(|l| l.served).sum::<u64>()
            + r.wifi.iter().map(|w| w.successes).sum::<u64>()
    };
    let rate = |n: u64, wall: f64| n as f64 / wall;
    if json_out {
        outln!(
            "{}",
            json!({"mm1_events": mm1.events, "mm1_events_per_sec": rate(mm1.events, mm1_wall),
                   "mm1_packet_hops": hops(&mm1), "mm1_wall_s": mm1_wall,
                   "mm1_packet_hops_per_sec": rate(hops(&mm1), mm1_wall),
                   "six_hops_48_events": big.events, "six_hops_48_wall_s": big_wall,
                   "six_hops_48_events_per_sec": rate(big.events, big_wall),
                   "six_hops_48_packet_hops": hops(&big),
                   "six_hops_48_packet_hops_per_sec": rate(hops(&big), big_wall),
                   "wifi_48_events": wifi.events, "wifi_48_wall_s": wifi_wall,
                   "wifi_48_events_per_sec": rate(wifi.events, wifi_wall)})
        )?;
    } else {
        for (what, r, wall) in [
            ("M/M/1, 2M updates (one core)", &mm1, mm1_wall),
            ("48 ACP+ sources, 6 hops, 300 simulated s", &big, big_wall),
            (
                "48 ACP+ sources on 802.11g WiFi + 5 hops, 300 s",
                &wifi,
                wifi_wall,
            ),
        ] {
            outln!(
                "{what}: {:.2} s; {} events = {:.2} M events/s; {} packet-hops = {:.2} M packet-hops/s",
                wall,
                r.events,
                rate(r.events, wall) / 1e6,
                hops(r),
                rate(hops(r), wall) / 1e6
            )?;
        }
    }
    Ok(())
}

/// `acp bench lab`: the emulator's throughput ceiling and delay accuracy.
fn lab(duration: Duration, json: bool) -> anyhow::Result<()> {
    acp_lab::privilege::check()?;
    for size in [100, 1400] {
        let c = acp_lab::bench::ceiling(size, duration)?;
        if json {
            outln!(
                "{}",
                json!({"packet_bytes": c.packet_bytes, "offered_pps": c.offered_pps,
                       "received_pps": c.received_pps, "received_mbit_s": c.received_bps / 1e6})
            )?;
        } else {
            outln!(
                "lab ceiling {} B: offered {:.0} packets/s, forwarded {:.0} packets/s = {:.1} Mbit/s",
                c.packet_bytes,
                c.offered_pps,
                c.received_pps,
                c.received_bps / 1e6
            )?;
        }
    }
    let a = acp_lab::bench::delay_accuracy(1000)?;
    if json {
        outln!(
            "{}",
            json!({"probes": a.probes, "min_us": a.min_us, "median_us": a.median_us,
                   "p99_us": a.p99_us, "max_us": a.max_us})
        )?;
    } else {
        outln!(
            "lab delay error over a 20 ms link ({} probes): min {:.1} µs, median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            a.probes, a.min_us, a.median_us, a.p99_us, a.max_us
        )?;
    }
    for stations in LAB_WIFI_STATIONS {
        let w = acp_lab::bench::wifi_realtime(stations, duration)?;
        let t = w.timing;
        if json {
            outln!(
                "{}",
                json!({"stations": w.stations, "offered_fps": w.offered_fps,
                       "delivered_fps": w.delivered_fps, "frames": t.frames,
                       "late_p50_us": t.p50_us, "late_p99_us": t.p99_us, "late_max_us": t.max_us})
            )?;
        } else {
            outln!(
                "lab wifi 802.11g 54 Mbit/s, {} stations saturated: offered {:.0} frames/s, delivered {:.0} frames/s; frame timing error p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                w.stations, w.offered_fps, w.delivered_fps, t.p50_us, t.p99_us, t.max_us
            )?;
        }
    }
    Ok(())
}

/// Cell sizes `acp bench lab` saturates.
const LAB_WIFI_STATIONS: [usize; 3] = [2, 8, 32];
