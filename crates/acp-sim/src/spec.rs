//! TOML forms of network-model parameters, shared by scenario files and the relay's
//! `--schedule` file.
//!
//! - [`Rate`] and [`Dur`]: quantities written as strings with a unit (`"2mbit"`, `"30ms"`),
//!   parsed by [`acp_core::units`]; a bad one is reported by `toml` with its line and key.
//! - [`LossToml`]: a loss model, either a bare probability (Bernoulli) or a table tagged by
//!   `model`: `{ model = "bernoulli", p = 0.01 }` or
//!   `{ model = "gilbert-elliott", p = 0.01, r = 0.3, loss_good = 0.0, loss_bad = 1.0 }`
//!   (`loss_good` defaults to 0 and `loss_bad` to 1, the plain Gilbert channel).
//! - [`ScheduleToml`] and [`StepToml`]: a piecewise schedule of rate, delay and loss.
//!
//! ```toml
//! repeat = "20s"          # optional: loop with this period
//!
//! [[step]]
//! at = "0s"
//! rate = "2mbit"
//!
//! [[step]]
//! at = "5s"
//! rate = "1mbit"
//! delay = "30ms"
//! loss = { model = "gilbert-elliott", p = 0.01, r = 0.3 }
//! ```
//!
//! Unknown keys are errors. Probabilities are checked while reading, so an out-of-range one is
//! reported at its line; the order of steps and their place within `repeat` are checked by
//! [`ScheduleToml::to_schedule`], whose errors name the step by number.

use std::fmt;
use std::time::Duration;

use acp_core::units::{parse_duration, parse_rate};
use acp_netmodel::{LossModel, Schedule, Step};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A rate in bits per second, written with a unit: `"2mbit"`, `"500kbit"` (`"kbps"` is kilobytes
/// per second, as in `tc`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate(pub f64);

/// A duration written with a unit: `"30ms"`, `"1.5s"`, `"2m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Duration);

/// Reads a string with `parse`, naming `what` was expected when the value is not a string.
struct UnitVisitor<T> {
    what: &'static str,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for UnitVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(UnitVisitor {
            what: "a rate with a unit, such as \"2mbit\"",
            parse: |s| parse_rate(s).map(Rate).map_err(|e| e.to_string()),
        })
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(UnitVisitor {
            what: "a duration with a unit, such as \"30ms\"",
            parse: |s| parse_duration(s).map(Dur).map_err(|e| e.to_string()),
        })
    }
}

/// A loss model: a bare number is a Bernoulli probability, a table names its `model`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossToml(pub LossModel);

/// The table form of [`LossToml`]: the model's fields, with Gilbert's defaults.
#[derive(Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
enum LossTable {
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

impl LossToml {
    /// The model.
    pub fn to_model(&self) -> LossModel {
        self.0
    }
}

struct LossVisitor;

impl<'de> Visitor<'de> for LossVisitor {
    type Value = LossToml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a loss probability or a table with model = \"bernoulli\" | \"gilbert-elliott\"",
        )
    }

    fn visit_f64<E: de::Error>(self, p: f64) -> Result<LossToml, E> {
        Ok(LossToml(LossModel::Bernoulli { p }))
    }

    fn visit_i64<E: de::Error>(self, p: i64) -> Result<LossToml, E> {
        // 0 and 1 are probabilities too; out-of-range values are refused by the range check.
        self.visit_f64(p as f64)
    }

    fn visit_u64<E: de::Error>(self, p: u64) -> Result<LossToml, E> {
        self.visit_f64(p as f64)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<LossToml, A::Error> {
        let table = LossTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(LossToml(match table {
            LossTable::Bernoulli { p } => LossModel::Bernoulli { p },
            LossTable::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            },
        }))
    }
}

impl<'de> Deserialize<'de> for LossToml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let loss = d.deserialize_any(LossVisitor)?;
        loss.to_model().validate().map_err(de::Error::custom)?;
        Ok(loss)
    }
}

/// One `[[step]]` of a schedule: from `at` on, the parameters given change.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepToml {
    /// When, from the link's start (within one period when the schedule repeats).
    pub at: Dur,
    /// New rate.
    pub rate: Option<Rate>,
    /// New propagation delay.
    pub delay: Option<Dur>,
    /// New loss model.
    pub loss: Option<LossToml>,
}

/// A schedule: its steps and, optionally, the period it loops with.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleToml {
    /// Loop with this period.
    pub repeat: Option<Dur>,
    /// The steps, in time order (`[[step]]` tables).
    #[serde(rename = "step")]
    pub steps: Vec<StepToml>,
}

impl ScheduleToml {
    /// The schedule, checked with [`Schedule::validate`].
    pub fn to_schedule(&self) -> Result<Schedule, String> {
        let schedule = Schedule {
            steps: self
                .steps
                .iter()
                .map(|s| Step {
                    at: s.at.0,
                    rate_bps: s.rate.map(|r| r.0),
                    delay: s.delay.map(|d| d.0),
                    loss: s.loss.as_ref().map(LossToml::to_model),
                })
                .collect(),
            repeat: self.repeat.map(|r| r.0),
        };
        schedule.validate()?;
        Ok(schedule)
    }
}

/// Parses a schedule file (a [`ScheduleToml`] document). The error is one line, naming the line
/// of the offending value when `toml` knows it.
pub fn parse_schedule(text: &str) -> Result<Schedule, String> {
    let spec: ScheduleToml = toml::from_str(text).map_err(|e| describe_toml_error(text, &e))?;
    spec.to_schedule()
}

/// A `toml` error on one line: `line L, column C (KEY): message`, the key named when the error
/// is in the value of a `KEY = value` line (the crate's own rendering spans several lines,
/// quoting the source).
pub fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else {
        return message;
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.len() - line_start + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    match line_text.find('=') {
        Some(eq) if eq < column - 1 => {
            let key = line_text[..eq].trim();
            format!("line {line}, column {column} ({key}): {message}")
        }
        _ => format!("line {line}, column {column}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn reads_a_schedule_with_every_kind_of_step() {
        let s = parse_schedule(
            r#"
repeat = "20s"

[[step]]
at = "0s"
rate = "2mbit"
delay = "30ms"

[[step]]
at = "5s"
rate = "500kbit"
loss = 0.01

[[step]]
at = "10s"
loss = { model = "gilbert-elliott", p = 0.01, r = 0.3 }

[[step]]
at = "15s"
loss = { model = "bernoulli", p = 0 }
"#,
        )
        .unwrap();
        assert_eq!(s.repeat, Some(Duration::from_secs(20)));
        assert_eq!(
            s.steps,
            [
                Step {
                    at: Duration::ZERO,
                    rate_bps: Some(2e6),
                    delay: Some(ms(30)),
                    loss: None,
                },
                Step {
                    at: Duration::from_secs(5),
                    rate_bps: Some(5e5),
                    delay: None,
                    loss: Some(LossModel::Bernoulli { p: 0.01 }),
                },
                Step {
                    at: Duration::from_secs(10),
                    rate_bps: None,
                    delay: None,
                    loss: Some(LossModel::GilbertElliott {
                        p: 0.01,
                        r: 0.3,
                        loss_good: 0.0,
                        loss_bad: 1.0,
                    }),
                },
                Step {
                    at: Duration::from_secs(15),
                    rate_bps: None,
                    delay: None,
                    loss: Some(LossModel::Bernoulli { p: 0.0 }),
                },
            ]
        );
    }

    /// The error of `text`, which must be refused.
    fn error(text: &str) -> String {
        parse_schedule(text).expect_err("refused")
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let e = error("[[step]]\nat = \"1s\"\nrate = \"2 furlongs\"\n");
        assert!(e.starts_with("line 3, column 8 (rate):"), "{e}");
        assert!(e.contains("unknown unit \"furlongs\""), "{e}");

        let e = error("[[step]]\nat = \"1s\"\nrat = \"2mbit\"\n");
        assert!(e.starts_with("line 3, column 1:"), "{e}");
        assert!(e.contains("unknown field `rat`"), "{e}");

        let e = error("[[step]]\nat = \"1s\"\nloss = 1.5\n");
        assert!(e.starts_with("line 3,"), "{e}");
        assert!(e.contains("probability"), "{e}");

        let e = error("[[step]]\nat = \"1s\"\n\nloss = { model = \"gilbert\", p = 0.1 }\n");
        assert!(e.starts_with("line 4, column 18 (loss):"), "{e}");
        assert!(e.contains("gilbert-elliott"), "{e}");

        let e = error("[[step]]\nat = \"1s\"\nloss = { model = \"gilbert-elliott\", p = 0.1 }\n");
        assert!(e.contains("missing field `r`"), "{e}");

        let e = error("[[step]]\nat = \"1s\"\nloss = { model = \"bernoulli\", p = 0.1, r = 2 }\n");
        assert!(e.contains("unknown field `r`"), "{e}");

        let e = error("[[step]]\nat = 5\n");
        assert!(
            e.starts_with("line 2, column 6 (at):") && e.contains("\"30ms\""),
            "{e}"
        );

        let e = error("repeat = \"10s\"\n");
        assert!(e.contains("missing field `step`"), "{e}");

        // Checks over the whole schedule name the step.
        let e = error("[[step]]\nat = \"2s\"\n[[step]]\nat = \"1s\"\n");
        assert!(e.contains("step 2"), "{e}");
        let e = error("repeat = \"1s\"\n[[step]]\nat = \"2s\"\n");
        assert!(e.contains("step 1") && e.contains("repeat"), "{e}");
    }

    #[test]
    fn loss_forms_and_their_models() {
        #[derive(Deserialize)]
        struct L {
            loss: LossToml,
        }
        let read = |s: &str| toml::from_str::<L>(s).map(|l| l.loss.to_model());
        assert_eq!(
            read("loss = 0.25").unwrap(),
            LossModel::Bernoulli { p: 0.25 }
        );
        assert_eq!(read("loss = 1").unwrap(), LossModel::Bernoulli { p: 1.0 });
        assert_eq!(
            read("loss = { model = \"gilbert-elliott\", p = 0.1, r = 0.2, loss_good = 0.01, loss_bad = 0.5 }")
                .unwrap(),
            LossModel::GilbertElliott {
                p: 0.1,
                r: 0.2,
                loss_good: 0.01,
                loss_bad: 0.5
            }
        );
        assert!(read("loss = -0.1").is_err());
        assert!(read("loss = \"0.1\"").is_err());
        assert!(read("loss = { model = \"gilbert-elliott\", p = 0, r = 0 }").is_err());
    }
}
