//! `acp monitor --aggregation-from FILE|-`: per-slot aggregation levels measured outside ACP
//! (e.g. from a MAC-timestamp capture) put into the monitor's ACKs as FEEDBACK_AGGREGATION
//! reports.
//!
//! One line per slot: `LEVEL [PHY_MBPS [DELAY_MS]]` — the mean MPDUs per frame (≥ 1), and
//! optionally the mean PHY rate (Mbit/s) and the mean delay at the access point (ms). Blank lines
//! and lines starting with `#` are skipped; a line that does not parse is skipped with a warning
//! naming its number. A line is reported no sooner than one slot after the previous one, so a
//! file is replayed at one line per slot and a live pipe at its own pace; after the last line the
//! last report stays on the ACKs (controllers use each slot once). Each report counts as one
//! frame. The monitor keeps the rule that an ACK is never larger than its update, so reports
//! ride only on updates with at least 21 bytes of payload.

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_core::wire::{AggregationReport, FEEDBACK_AGGREGATION};
use acp_runtime::server::FeedbackCell;
use anyhow::Context;

/// Parses one line into the report of slot `slot`; `Ok(None)` for blank and comment lines.
fn parse_line(line: &str, slot: u32, slot_ms: u16) -> Result<Option<AggregationReport>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let mut fields = line.split_whitespace();
    let mut number = |what: &str, min: f64| -> Result<Option<f64>, String> {
        fields
            .next()
            .map(|f| {
                f.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= min)
                    .ok_or_else(|| format!("{what} must be a number ≥ {min}, got {f:?}"))
            })
            .transpose()
    };
    let level = number("LEVEL", 1.0)?.ok_or("empty line")?;
    let phy_mbps = number("PHY_MBPS", 0.0)?.unwrap_or(0.0);
    let delay_ms = number("DELAY_MS", 0.0)?.unwrap_or(0.0);
    if fields.next().is_some() {
        return Err("expected LEVEL [PHY_MBPS [DELAY_MS]]".into());
    }
    Ok(Some(AggregationReport {
        slot,
        slot_ms,
        frames: 1,
        level_256: AggregationReport::level_field(level),
        phy_kbps: (phy_mbps * 1e3).round().min(f64::from(u32::MAX)) as u32,
        delay_us: (delay_ms * 1e3).round().min(f64::from(u32::MAX)) as u32,
    }))
}

/// Opens `from` (`-` is stdin) and starts the thread that feeds `cell`, one line per slot.
pub fn start(from: &Path, slot_ms: u16, cell: Arc<FeedbackCell>) -> anyhow::Result<()> {
    let input: Box<dyn BufRead + Send> = if from == Path::new("-") {
        Box::new(BufReader::new(io::stdin()))
    } else {
        let file = std::fs::File::open(from)
            .with_context(|| format!("cannot open --aggregation-from {}", from.display()))?;
        Box::new(BufReader::new(file))
    };
    let name: PathBuf = from.to_owned();
    std::thread::Builder::new()
        .name("acp-aggregation".into())
        .spawn(move || feed(input, &name, slot_ms, &cell))?;
    Ok(())
}

fn feed(input: Box<dyn BufRead + Send>, name: &Path, slot_ms: u16, cell: &FeedbackCell) {
    let slot_len = Duration::from_millis(u64::from(slot_ms));
    let mut slot = 0u32;
    let mut next = Instant::now();
    for (n, line) in input.lines().enumerate() {
        let Ok(line) = line else {
            eprintln!("acp monitor: reading {}: stopped", name.display());
            return;
        };
        match parse_line(&line, slot, slot_ms) {
            Ok(None) => {}
            Ok(Some(report)) => {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                cell.set(FEEDBACK_AGGREGATION, report.encode().to_vec());
                next = Instant::now() + slot_len;
                slot = slot.wrapping_add(1);
            }
            Err(e) => eprintln!(
                "acp monitor: {} line {}: {e}; skipped",
                name.display(),
                n + 1
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_reports() {
        let r = parse_line("  31.5 433.3 1.25 ", 7, 500).unwrap().unwrap();
        assert_eq!((r.slot, r.slot_ms, r.frames), (7, 500, 1));
        assert_eq!(r.level(), 31.5);
        assert_eq!((r.phy_kbps, r.delay_us), (433_300, 1_250));
        let bare = parse_line("12", 0, 1000).unwrap().unwrap();
        assert_eq!((bare.phy_rate(), bare.delay()), (None, None));
        assert_eq!(parse_line("# comment", 0, 1), Ok(None));
        assert_eq!(parse_line("", 0, 1), Ok(None));
        for bad in ["0.5", "x", "32 -1", "32 400 1 9", "nan"] {
            assert!(parse_line(bad, 0, 1).is_err(), "{bad}");
        }
    }
}
