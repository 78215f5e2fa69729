//! `acp bench flood`: the state-exhaustion and malformed floods against a local monitor
//! (`acp_runtime::flood`), one table row per attack.

use acp_runtime::flood::{self, Attack, FloodConfig, FloodResult};
use serde_json::json;

use crate::output::outln;
use crate::FloodArgs;

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
        "{:<10} {:>9} {:>10.3} % {:>10} {:>7}/{:<6} {:>8} {:>9} {:>9} {:>9.1} → {:.1}",
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
    let attacks: Vec<Attack> = match a.attack.as_deref().and_then(Attack::from_name) {
        Some(attack) => vec![attack],
        None => Attack::ALL.to_vec(),
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
            "{:<10} {:>9} {:>12} {:>10} {:>14} {:>8} {:>9} {:>9} {:>17}",
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
        let r = flood::run(attack, &cfg)?;
        if a.json {
            outln!(
                "{}",
                json!({
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
                })
            )?;
        } else {
            outln!("{}", row(&r))?;
            if let Some((sent, delivered)) = r.victim {
                outln!(
                    "{:<10} the victim's updates delivered: {delivered} of {sent}",
                    ""
                )?;
            }
        }
    }
    Ok(())
}
