//! `acp relay`: a userspace path emulator in front of a monitor, running the `acp-netmodel`
//! network model (the simulator's) on real datagrams. Its reports show the client mappings held
//! and the datagrams of new clients refused a mapping, by reason (`--max-prefix-share` caps what
//! one network may hold).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use acp_netmodel::{Discipline, LossModel, QueueLimit, Service};
use acp_runtime::relay::{
    ClientLimits, DirectionStats, PathConfig, Refusals, Relay, RelayConfig, CROSS_PACKET_BYTES,
    TO_CLIENT, TO_TARGET,
};
use anyhow::Context;
use serde_json::{json, Value};

use crate::output::Reports;
use crate::pathargs::FromFile;
use crate::{signals, timestamp};
use crate::{RelayArgs, ServiceArg, UsageError};

/// Time between periodic reports.
const REPORT_EVERY: Duration = Duration::from_secs(5);

fn direction_json(d: &DirectionStats) -> Value {
    json!({
        "received": d.received,
        "forwarded": d.forwarded,
        "dropped_queue": d.dropped_queue,
        "dropped_loss": d.dropped_loss,
        "dropped_blackhole": d.dropped_blackhole,
        "dropped_unmapped": d.dropped_unmapped,
        "dropped_hop_limit": d.dropped_hop_limit,
        "send_errors": d.send_errors,
        "bytes_received": d.bytes_received,
        "bytes_forwarded": d.bytes_forwarded,
        "cross_packets": d.cross_packets,
        "cross_dropped": d.cross_dropped,
    })
}

fn refusals_json(r: &Refusals) -> Value {
    json!({
        "table_full": r.table_full,
        "prefix_share": r.prefix_share,
        "no_socket": r.no_socket,
    })
}

fn refusals_text(r: &Refusals) -> String {
    format!(
        "refused: table full {} prefix share {} no socket {}",
        r.table_full, r.prefix_share, r.no_socket
    )
}

/// `--max-prefix-share`: a fraction in (0, 1].
pub(crate) fn parse_client_share(s: &str) -> Result<f64, String> {
    s.parse()
        .ok()
        .filter(|share| *share > 0.0 && *share <= 1.0)
        .ok_or_else(|| "must be a fraction in (0, 1], e.g. 0.25".to_string())
}

/// The client table's bounds on one line.
fn clients_text(c: &ClientLimits) -> String {
    format!(
        "clients: at most {}, {} per network (IPv4 /24, IPv6 /48; share {}); \
         probation {:?}, idle timeout {:?}",
        c.max_clients,
        c.per_network(),
        short(c.max_share),
        c.probation,
        c.idle_timeout
    )
}

fn direction_text(name: &str, d: &DirectionStats) -> String {
    format!(
        "  {name:<9} received {} forwarded {} dropped: queue {} loss {} blackhole {} \
         hop limit {} other {}; cross {} ({} dropped)",
        d.received,
        d.forwarded,
        d.dropped_queue,
        d.dropped_loss,
        d.dropped_blackhole,
        d.dropped_hop_limit,
        d.dropped_unmapped + d.send_errors,
        d.cross_packets,
        d.cross_dropped
    )
}

/// A number with at most three decimals and no trailing zeros.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A rate in SI bit/s and in plain bit/s: "2 Mbit/s (2000000 bit/s)" (so that `mbps`, megabytes
/// per second, cannot be mistaken).
pub(crate) fn rate_text(bps: f64) -> String {
    let (v, unit) = match bps {
        b if b >= 1e9 => (b / 1e9, "Gbit/s"),
        b if b >= 1e6 => (b / 1e6, "Mbit/s"),
        b if b >= 1e3 => (b / 1e3, "kbit/s"),
        _ => return format!("{} bit/s", short(bps)),
    };
    format!("{} {unit} ({bps:.0} bit/s)", short(v))
}

fn loss_text(l: &LossModel) -> String {
    match *l {
        LossModel::None => "no loss".into(),
        LossModel::Bernoulli { p } => format!("loss {}% (Bernoulli)", short(p * 100.0)),
        LossModel::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
        } => format!(
            "Gilbert–Elliott loss p={} r={} good {} bad {} ({}% long-run)",
            short(p),
            short(r),
            short(loss_good),
            short(loss_bad),
            short(l.stationary_loss() * 100.0)
        ),
    }
}

/// One direction's interpreted configuration on one line.
fn path_text(p: &PathConfig, trace: Option<&FromFile<acp_netmodel::Trace>>) -> String {
    let l = &p.link;
    let mut parts = vec![match (trace, &l.trace) {
        (Some(file), Some(t)) => format!(
            "trace {file} ({} opportunities of {} B per {:?}, mean {})",
            t.len(),
            t.mtu,
            t.period(),
            rate_text(t.mean_rate_bps())
        ),
        _ => rate_text(l.rate_bps),
    }];
    parts.push(format!("delay {:?}", l.delay));
    if let Some(j) = l.jitter {
        let order = if j.reorder {
            "may reorder"
        } else {
            "order kept"
        };
        parts.push(format!("jitter ±{:?} ({order})", j.max));
    }
    parts.push(match l.limit {
        QueueLimit::Packets(n) => format!("queue {n} packets"),
        QueueLimit::Bytes(n) => format!("queue {n} bytes"),
    });
    if l.service == Service::Exponential {
        parts.push("exponential service".into());
    }
    match &l.discipline {
        Discipline::DropTail => {}
        Discipline::StrictPriority { classes } => {
            let classes: Vec<String> = classes
                .iter()
                .map(|c| c.iter().map(u8::to_string).collect::<Vec<_>>().join(","))
                .collect();
            parts.push(format!("strict priority {} / rest", classes.join(" / ")));
        }
        Discipline::Diffserv4 => parts
            .push("diffserv4 tins (Voice 25 %, Video 50 %, Best Effort 100 %, Bulk 6.25 %)".into()),
        Discipline::Freshest { preempt: false } => {
            parts.push("freshest update per client".into());
        }
        Discipline::Freshest { preempt: true } => {
            parts.push("freshest update, pre-emptive".into());
        }
    }
    parts.push(loss_text(&l.loss));
    for (at, len) in &l.outages {
        parts.push(format!("blackhole {at:?}+{len:?}"));
    }
    if p.cross_bps > 0.0 {
        parts.push(format!(
            "Poisson cross traffic {} in {CROSS_PACKET_BYTES} B packets",
            rate_text(p.cross_bps)
        ));
    }
    parts.join(", ")
}

/// The two directions' configurations from the arguments.
fn paths(a: &RelayArgs) -> Result<(PathConfig, PathConfig), UsageError> {
    if a.trace.is_some() && a.trace_back.is_some() && a.rate.is_some() {
        return Err(UsageError(
            "--rate is unused when both --trace and --trace-back are given".into(),
        ));
    }
    let limit = match (a.queue, a.queue_bytes) {
        (Some(n), _) => QueueLimit::Packets(usize::try_from(n).unwrap_or(usize::MAX)),
        (None, Some(b)) => QueueLimit::Bytes(b),
        // clap requires exactly one of them.
        (None, None) => return Err(UsageError("give --queue or --queue-bytes".into())),
    };
    let build = |name: &str, trace: &Option<FromFile<acp_netmodel::Trace>>| {
        let mut link = acp_netmodel::LinkConfig::new(
            // Without a trace clap has required --rate; with one the rate is unused.
            a.rate.unwrap_or(f64::INFINITY),
            a.delay,
            limit,
        );
        link.trace = trace.as_ref().map(|t| t.value.clone());
        link.service = match a.service {
            ServiceArg::Deterministic => Service::Deterministic,
            ServiceArg::Exponential => Service::Exponential,
        };
        link.discipline = a
            .priority
            .clone()
            .or_else(|| a.discipline.clone())
            .unwrap_or_default();
        link.loss = a.loss.unwrap_or_default();
        link.jitter = a.jitter;
        link.schedule = a.schedule.as_ref().map(|s| s.value.clone());
        link.outages = a.blackhole.clone();
        let path = PathConfig {
            link,
            cross_bps: a.cross.unwrap_or(0.0),
        };
        path.validate()
            .map_err(|e| UsageError(format!("{name}: {e}")))?;
        Ok(path)
    };
    Ok((
        build(TO_TARGET, &a.trace)?,
        build(TO_CLIENT, &a.trace_back)?,
    ))
}

/// The relay's counters as a report of `kind` ("report" or "summary").
fn stats_text(kind: &str, relay: &Relay, json_out: bool) -> String {
    let st = relay.stats();
    let time = timestamp::now();
    if json_out {
        let line = json!({
            "type": kind,
            "time": time,
            "clients": st.clients,
            "refused": refusals_json(&st.refused),
            "to_target": direction_json(&st.to_target),
            "to_client": direction_json(&st.to_client),
        });
        format!("{line}\n")
    } else {
        format!(
            "{time} {kind}: {} clients; {}\n{}\n{}\n",
            st.clients,
            refusals_text(&st.refused),
            direction_text("→ target", &st.to_target),
            direction_text("← target", &st.to_client)
        )
    }
}

/// Runs until SIGINT/SIGTERM or until stdout is closed, printing the relay's counters every 5 s
/// and at the end.
pub fn run(a: RelayArgs) -> anyhow::Result<()> {
    let (to_target, to_client) = paths(&a)?;
    let forward = path_text(&to_target, a.trace.as_ref());
    let back = path_text(&to_client, a.trace_back.as_ref());
    let cfg = RelayConfig {
        listen: a.listen,
        target: a.to,
        to_target,
        to_client,
        seed: a.seed,
        clients: ClientLimits {
            max_share: a.max_prefix_share,
            ..ClientLimits::default()
        },
    };
    let clients = clients_text(&cfg.clients);
    let relay = Relay::start(cfg).map_err(|e| crate::listen_error(a.listen, e))?;
    eprintln!(
        "acp relay {} → {}, seed {}",
        relay.local_addr(),
        a.to,
        a.seed
    );
    if forward == back {
        eprintln!("  both ways: {forward}");
    } else {
        eprintln!("  {TO_TARGET}: {forward}");
        eprintln!("  {TO_CLIENT}: {back}");
    }
    eprintln!("  {clients}");
    if let Some(s) = &a.schedule {
        let repeat = s
            .value
            .repeat
            .map_or(String::new(), |r| format!(", repeating every {r:?}"));
        eprintln!("  schedule {s}: {} steps{repeat}", s.value.steps.len());
        for step in &s.value.steps {
            let mut set = Vec::new();
            if let Some(r) = step.rate_bps {
                set.push(format!("rate {}", rate_text(r)));
            }
            if let Some(d) = step.delay {
                set.push(format!("delay {d:?}"));
            }
            if let Some(l) = &step.loss {
                set.push(loss_text(l));
            }
            eprintln!("    at {:?}: {}", step.at, set.join(", "));
        }
    }
    let stop = signals::shutdown_flag().context("cannot install the signal handlers")?;
    let out = Reports::new(stop.clone(), false);
    let mut next = Instant::now() + REPORT_EVERY;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        if Instant::now() >= next {
            out.report(&stats_text("report", &relay, a.json));
            next += REPORT_EVERY;
        }
    }
    out.summary(&stats_text("summary", &relay, a.json));
    relay.stop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_echoed_in_bits_per_second() {
        assert_eq!(rate_text(2e6), "2 Mbit/s (2000000 bit/s)");
        // 2mbps is two megabytes per second.
        assert_eq!(rate_text(16e6), "16 Mbit/s (16000000 bit/s)");
        assert_eq!(rate_text(1.5e9), "1.5 Gbit/s (1500000000 bit/s)");
        assert_eq!(rate_text(512e3), "512 kbit/s (512000 bit/s)");
        assert_eq!(rate_text(800.0), "800 bit/s");
    }

    #[test]
    fn client_shares_outside_zero_to_one_are_refused_in_one_line() {
        assert_eq!(parse_client_share("0.25"), Ok(0.25));
        assert_eq!(parse_client_share("1"), Ok(1.0));
        for bad in ["0", "-0.1", "1.5", "nan", "inf", "a quarter", ""] {
            assert_eq!(
                parse_client_share(bad),
                Err("must be a fraction in (0, 1], e.g. 0.25".to_string()),
                "{bad}"
            );
        }
        let args = |share: &'static str| {
            "acp relay --listen 127.0.0.1:0 --to 127.0.0.1:9 --rate 1mbit --delay 1ms --queue 5"
                .split(' ')
                .chain(["--max-prefix-share", share])
        };
        let err = <crate::Cli as clap::Parser>::try_parse_from(args("0")).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        let line = err.render().to_string();
        assert!(
            line.lines().next().unwrap().contains(
                "invalid value '0' for '--max-prefix-share <FRACTION>': must be a fraction in (0, 1]"
            ),
            "{line}"
        );
        assert!(<crate::Cli as clap::Parser>::try_parse_from(args("0.5")).is_ok());
    }

    #[test]
    fn reports_show_the_client_table_and_its_refusals() {
        let r = Refusals {
            table_full: 3,
            prefix_share: 7,
            no_socket: 0,
        };
        assert_eq!(
            refusals_text(&r),
            "refused: table full 3 prefix share 7 no socket 0"
        );
        assert_eq!(
            refusals_json(&r),
            json!({"table_full": 3, "prefix_share": 7, "no_socket": 0})
        );
        assert_eq!(
            clients_text(&ClientLimits::default()),
            "clients: at most 4096, 1024 per network (IPv4 /24, IPv6 /48; share 0.25); \
             probation 2s, idle timeout 60s"
        );
    }

    #[test]
    fn losses_are_echoed_with_their_long_run_rate() {
        assert_eq!(loss_text(&LossModel::None), "no loss");
        assert_eq!(
            loss_text(&LossModel::Bernoulli { p: 0.015 }),
            "loss 1.5% (Bernoulli)"
        );
        let ge = LossModel::GilbertElliott {
            p: 0.01,
            r: 0.3,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        assert_eq!(
            loss_text(&ge),
            "Gilbert–Elliott loss p=0.01 r=0.3 good 0 bad 1 (3.226% long-run)"
        );
    }
}
