//! `acp bench flood`: the attacks on a local monitor (`acp_runtime::flood`) and on its metrics
//! endpoint ([`crate::metrics_flood`]), one table row per attack.

use acp_runtime::flood::{self, Attack, FloodConfig, FloodResult};
use serde_json::json;

use crate::metrics_flood::{self, MetricsAttack, MetricsReport};
use crate::output::outln;
use crate::FloodArgs;

/// An attack of either kind.
#[derive(Debug, Clone, Copy)]
enum Which {
    Monitor(Attack),
    Metrics(MetricsAttack),
}

/// Every attack, in the order they run.
fn every_attack() -> Vec<Which> {
    let monitor = Attack::ALL.into_iter().map(Which::Monitor);
    monitor
        .chain(MetricsAttack::ALL.into_iter().map(Which::Metrics))
        .collect()
}

/// The attack called `name`.
fn attack_named(name: &str) -> Option<Which> {
    Attack::from_name(name)
        .map(Which::Monitor)
        .or_else(|| MetricsAttack::from_name(name).map(Which::Metrics))
}

/// The names `--attack` takes.
pub fn attack_names() -> Vec<&'static str> {
    every_attack()
        .into_iter()
        .map(|w| match w {
            Which::Monitor(a) => a.name(),
            Which::Metrics(a) => a.name(),
        })
        .collect()
}

pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn admissions_ms(r: &FloodResult) -> Vec<Option<f64>> {
    r.admissions
        .iter()
        .map(|a| a.map(|d| d.as_secs_f64() * 1e3))
        .collect()
}

fn row(r: &FloodResult) -> String {
    let worst = r.worst_admission().map_or_else(
        || "not all".to_string(),
        |d| format!("{:.0} ms", d.as_secs_f64() * 1e3),
    );
    format!(
        "{:<14} {:>9} {:>10.3} % {:>10} {:>7}/{:<6} {:>8} {:>9} {:>9} {:>9.1} → {:.1}",
        r.attack.name(),
        r.attack_sent,
        100.0 * r.established_loss(),
        worst,
        r.attacker_sessions,
        r.sessions_held,
        r.stats.cookies_sent,
        r.stats.sessions_refused,
        r.stats.malformed + r.stats.auth_failed_by.values().sum::<u64>(),
        mib(r.rss_before),
        mib(r.rss_after),
    )
}

/// Runs the chosen attacks and prints a row (or a JSON line) for each.
pub fn run(a: FloodArgs) -> anyhow::Result<()> {
    let cfg = FloodConfig {
        duration: a.duration,
        max_sessions: a.max_sessions as usize,
        hold_sessions: a.hold_sessions,
        flood_rate: a.rate,
        keys: a.psk_file,
        ..FloodConfig::default()
    };
    let attacks: Vec<Which> = match a.attack.as_deref().and_then(attack_named) {
        Some(attack) => vec![attack],
        None => every_attack(),
    };
    if !a.json {
        outln!(
            "{} established sources at {}/s each, {} newcomers per attack, {:?} per attack, table of {}{}",
            cfg.established,
            cfg.established_rate,
            cfg.newcomers,
            cfg.duration,
            cfg.max_sessions,
            if cfg.keys.is_some() { ", sealed (--psk-file)" } else { "" }
        )?;
        outln!(
            "{:<14} {:>9} {:>12} {:>10} {:>14} {:>8} {:>9} {:>9} {:>17}",
            "attack",
            "sent",
            "est. loss",
            "admission",
            "attacker/held",
            "cookies",
            "refused",
            "dropped",
            "RSS MiB"
        )?;
    }
    for attack in attacks {
        let (r, scraped) = match attack {
            Which::Monitor(attack) => (flood::run(attack, &cfg)?, None),
            Which::Metrics(attack) => {
                let (r, report) = metrics_flood::run(attack, &cfg)?;
                (r, Some(report))
            }
        };
        let after_ms = r
            .admission_after_attack
            .map(|a| a.map(|d| d.as_secs_f64() * 1e3));
        if a.json {
            let mut line = json!({
                    "attack": r.attack.name(),
                    "attack_sent": r.attack_sent,
                    "established_sent": r.established_sent,
                    "established_acked": r.established_acked,
                    "established_loss": r.established_loss(),
                    "admissions_ms": admissions_ms(&r),
                    "sessions_held": r.sessions_held,
                    "attacker_sessions": r.attacker_sessions,
                    "cookies_sent": r.stats.cookies_sent,
                    "cookies_rejected": r.stats.cookies_rejected,
                    "refused_by": r.stats.refused_by,
                    "malformed": r.stats.malformed,
                    "auth_failed_by": r.stats.auth_failed_by,
                    "tcp_updates": r.stats.stream_updates,
                    "tcp_connections_refused_prefix_share": r.tcp.map(|c| c.refused_prefix_share),
                    "victim_sent": r.victim.map(|v| v.0),
                    "victim_delivered": r.victim.map(|v| v.1),
                    "rss_before_bytes": r.rss_before,
                    "rss_after_bytes": r.rss_after,
                    "admission_after_attack_ms": after_ms,
            });
            if let Some(m) = &scraped {
                line["attacker_bytes"] = json!(m.bytes);
                line["scrapes"] = json!(m.scrapes);
                line["scrapes_ok"] = json!(m.scrapes_ok);
                line["slowest_scrape_ms"] = json!(m.slowest.as_secs_f64() * 1e3);
            }
            outln!("{line}")?;
        } else {
            outln!("{}", row(&r))?;
            if let Some((sent, delivered)) = r.victim {
                outln!(
                    "{:<14} the victim's updates delivered: {delivered} of {sent}",
                    ""
                )?;
            }
            if let Some(after) = r.admission_after_attack {
                let waited = after.map_or_else(
                    || format!("not within {:?}", flood::AFTER_ATTACK_PATIENCE),
                    |d| format!("in {:.1} s", d.as_secs_f64()),
                );
                outln!(
                    "{:<14} a newcomer starting as the attack stopped was admitted {waited}",
                    ""
                )?;
            }
            if let Some(m) = &scraped {
                outln!("{:<14} {}", "", scraper_text(m))?;
            }
        }
    }
    Ok(())
}

/// The metrics attacks' own line: the honest scraper's answers and what the attacker wrote.
fn scraper_text(m: &MetricsReport) -> String {
    format!(
        "honest scraper: {} of {} answered 200, slowest {:.0} ms; attacker: {} connections, \
         {:.1} MiB written",
        m.scrapes_ok,
        m.scrapes,
        m.slowest.as_secs_f64() * 1e3,
        m.connections,
        mib(m.bytes)
    )
}
