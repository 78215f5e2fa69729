//! Parsers of the path-model arguments of `acp relay` (clap value parsers): loss models, jitter,
//! priority classes, named disciplines, blackhole windows, and the schedule and trace files. Each returns the
//! `acp-netmodel` value or one line saying what is wrong; files' errors name the file and line.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use acp_netmodel::{Discipline, Jitter, LossModel, Schedule, Trace};

/// A value read from a file, with the file's name (to echo it).
#[derive(Debug, Clone)]
pub struct FromFile<T> {
    /// The file as given.
    pub path: PathBuf,
    /// What it holds.
    pub value: T,
}

impl<T> fmt::Display for FromFile<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())
    }
}

/// A probability in `[0, 1]`; `what` names it in the error.
fn probability(s: &str, what: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("{what} must be a probability between 0 and 1, got {s:?}"))
}

/// `--loss`: `P` (Bernoulli; 0 is no loss) or `ge:P,R[,LOSS_GOOD,LOSS_BAD]` (Gilbert–Elliott,
/// in-state losses 0 and 1 by default).
pub fn parse_loss(s: &str) -> Result<LossModel, String> {
    let Some(params) = s.strip_prefix("ge:") else {
        let p = probability(s, "loss")?;
        return Ok(if p == 0.0 {
            LossModel::None
        } else {
            LossModel::Bernoulli { p }
        });
    };
    let names = ["P (good→bad)", "R (bad→good)", "LOSS_GOOD", "LOSS_BAD"];
    let parts: Vec<&str> = params.split(',').collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(format!(
            "expected ge:P,R[,LOSS_GOOD,LOSS_BAD], got {s:?} ({} values)",
            parts.len()
        ));
    }
    let mut v = [0.0, 0.0, 0.0, 1.0];
    for (i, part) in parts.iter().enumerate() {
        v[i] = probability(part, names[i])?;
    }
    let model = LossModel::GilbertElliott {
        p: v[0],
        r: v[1],
        loss_good: v[2],
        loss_bad: v[3],
    };
    model.validate()?;
    Ok(model)
}

/// `--jitter`: `AMOUNT` (each delay moves uniformly within ±AMOUNT, order kept) or
/// `AMOUNT:reorder` (packets may overtake).
pub fn parse_jitter(s: &str) -> Result<Jitter, String> {
    let (amount, reorder) = match s.split_once(':') {
        None => (s, false),
        Some((amount, "reorder")) => (amount, true),
        Some((_, other)) => {
            return Err(format!(
                "expected AMOUNT or AMOUNT:reorder, got {other:?} after ':'"
            ))
        }
    };
    let max = acp_core::units::parse_duration(amount).map_err(|e| e.to_string())?;
    Ok(Jitter { max, reorder })
}

/// `--priority`: DSCP classes highest first, separated by `/`, the DSCPs of a class by `,`, e.g.
/// `46/34,26`; DSCPs not listed form one more, lowest, class.
pub fn parse_priority(s: &str) -> Result<Discipline, String> {
    let classes = s
        .split('/')
        .map(|class| {
            class
                .split(',')
                .map(|d| {
                    d.trim()
                        .parse::<u8>()
                        .ok()
                        .filter(|d| *d <= 63)
                        .ok_or_else(|| format!("expected DSCPs 0–63, got {d:?}"))
                })
                .collect::<Result<Vec<u8>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()?;
    let discipline = Discipline::StrictPriority { classes };
    discipline.validate()?;
    Ok(discipline)
}

/// `--discipline`: a queue discipline by name (`diffserv4`).
pub fn parse_discipline(s: &str) -> Result<Discipline, String> {
    Discipline::from_name(s.trim())
}

/// `--blackhole`: `AT+DURATION` from the relay's start, e.g. `8s+3s`.
pub fn parse_blackhole(s: &str) -> Result<(Duration, Duration), String> {
    let (at, len) = s
        .split_once('+')
        .ok_or_else(|| format!("expected AT+DURATION such as 8s+3s, got {s:?}"))?;
    let parse = |v: &str| acp_core::units::parse_duration(v).map_err(|e| e.to_string());
    let (at, len) = (parse(at)?, parse(len)?);
    if len.is_zero() {
        return Err(format!("a blackhole must last longer than zero, got {s:?}"));
    }
    Ok((at, len))
}

/// Reads a file for a value parser: the error names the file.
fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// `--schedule FILE`: a TOML schedule (see `acp_sim::spec`).
pub fn read_schedule(path: &str) -> Result<FromFile<Schedule>, String> {
    let value = acp_sim::spec::parse_schedule(&read(path)?).map_err(|e| format!("{path}: {e}"))?;
    Ok(FromFile {
        path: path.into(),
        value,
    })
}

/// `--trace FILE`, `--trace-back FILE`: a Mahimahi packet-delivery trace.
pub fn read_trace(path: &str) -> Result<FromFile<Trace>, String> {
    let value = Trace::parse(&read(path)?).map_err(|e| match e.line {
        0 => format!("{path}: {}", e.message),
        _ => format!("{path}: {e}"),
    })?;
    Ok(FromFile {
        path: path.into(),
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_testkit::Scratch;

    #[test]
    fn loss_models() {
        assert_eq!(parse_loss("0.02"), Ok(LossModel::Bernoulli { p: 0.02 }));
        assert_eq!(parse_loss("0"), Ok(LossModel::None));
        assert_eq!(
            parse_loss("ge:0.01,0.3"),
            Ok(LossModel::GilbertElliott {
                p: 0.01,
                r: 0.3,
                loss_good: 0.0,
                loss_bad: 1.0
            })
        );
        assert_eq!(
            parse_loss("ge:0.01,0.3,0.001,0.8"),
            Ok(LossModel::GilbertElliott {
                p: 0.01,
                r: 0.3,
                loss_good: 0.001,
                loss_bad: 0.8
            })
        );
        assert!(parse_loss("1.5")
            .unwrap_err()
            .contains("loss must be a probability"));
        assert!(parse_loss("ge:0.01").unwrap_err().contains("1 values"));
        assert!(parse_loss("ge:0.1,0.2,0.3,0.4,0.5").is_err());
        assert!(parse_loss("ge:0.1,x").unwrap_err().contains("R (bad→good)"));
        assert!(parse_loss("ge:0,0").unwrap_err().contains("p + r > 0"));
        assert!(parse_loss("gilbert:0.1,0.2").is_err());
    }

    #[test]
    fn jitter() {
        let ms = Duration::from_millis;
        assert_eq!(
            parse_jitter("5ms"),
            Ok(Jitter {
                max: ms(5),
                reorder: false
            })
        );
        assert_eq!(
            parse_jitter("2.5ms:reorder"),
            Ok(Jitter {
                max: Duration::from_micros(2500),
                reorder: true
            })
        );
        assert!(parse_jitter("5ms:shuffle")
            .unwrap_err()
            .contains("\"shuffle\""));
        assert!(parse_jitter("5 parsecs").is_err());
    }

    #[test]
    fn disciplines_by_name() {
        assert_eq!(parse_discipline("diffserv4"), Ok(Discipline::Diffserv4));
        assert!(parse_discipline("fifo").unwrap_err().contains("diffserv4"));
    }

    #[test]
    fn priority_classes() {
        assert_eq!(
            parse_priority("46/34,26"),
            Ok(Discipline::StrictPriority {
                classes: vec![vec![46], vec![34, 26]]
            })
        );
        assert_eq!(
            parse_priority("46"),
            Ok(Discipline::StrictPriority {
                classes: vec![vec![46]]
            })
        );
        assert!(parse_priority("64").unwrap_err().contains("0–63"));
        assert!(parse_priority("46//0").is_err());
        assert!(parse_priority("46/46")
            .unwrap_err()
            .contains("two priority classes"));
    }

    #[test]
    fn blackholes() {
        assert_eq!(
            parse_blackhole("8s+3s"),
            Ok((Duration::from_secs(8), Duration::from_secs(3)))
        );
        assert_eq!(
            parse_blackhole("0s+500ms"),
            Ok((Duration::ZERO, Duration::from_millis(500)))
        );
        assert!(parse_blackhole("8s").unwrap_err().contains("AT+DURATION"));
        assert!(parse_blackhole("8s+0s")
            .unwrap_err()
            .contains("longer than zero"));
        assert!(parse_blackhole("soon+3s").is_err());
    }

    #[test]
    fn files_name_themselves_and_the_line_in_errors() {
        let scratch = Scratch::new("acp-pathargs");
        let file = |name: &str, text: &str| scratch.file(name, text).to_string_lossy().into_owned();
        let good = file("good.toml", "[[step]]\nat = \"0s\"\nrate = \"1mbit\"\n");
        let s = read_schedule(&good).unwrap();
        assert_eq!(s.value.steps[0].rate_bps, Some(1e6));
        assert_eq!(s.to_string(), good);

        let bad = file("bad.toml", "[[step]]\nat = \"0s\"\nrte = \"1mbit\"\n");
        let e = read_schedule(&bad).unwrap_err();
        assert!(e.starts_with(&format!("{bad}: line 3")), "{e}");

        let trace = file("good.trace", "1\n2\n2\n4\n");
        assert_eq!(read_trace(&trace).unwrap().value.len(), 4);
        let bad = file("bad.trace", "1\n2\nlots\n");
        assert_eq!(
            read_trace(&bad).unwrap_err(),
            format!("{bad}: line 3: expected a whole number of milliseconds, got \"lots\"")
        );
        let empty = file("empty.trace", "\n");
        assert_eq!(
            read_trace(&empty).unwrap_err(),
            format!("{empty}: the trace has no timestamps")
        );
        let missing = read_trace("/nonexistent/acp.trace").unwrap_err();
        assert!(missing.starts_with("/nonexistent/acp.trace: "), "{missing}");
        assert_eq!(missing.lines().count(), 1);
    }
}
