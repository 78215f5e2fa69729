//! Scenario files (TOML), documented in `docs/SIMULATOR.md`, examples in `scenarios/`.
//!
//! ```toml
//! name = "one bottleneck"
//! seed = 1
//! duration = "300s"
//! warmup = "30s"
//!
//! [[link]]                       # both ways unless both_ways = false
//! from = "src"
//! to = "mon"
//! rate = "1mbit"
//! delay = "10ms"
//! queue = 100                    # packets, or queue_bytes = 150000
//! service = "deterministic"      # or "exponential"
//!
//! [[flow]]
//! name = "acp"
//! type = "acp"                   # acp | updates | cross
//! controller = "acp+"            # acp+ | acp[:KAPPA] | lazy | fixed:RATE
//! path = ["src", "mon"]
//! payload = 100
//! ```

use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::units::{parse_duration, parse_rate};
use acp_core::SourceConfig;
use serde::Deserialize;
use thiserror::Error;

use crate::engine::{BuildError, Sim, SimConfig};
use crate::flows::{CrossPattern, FlowKind, FlowSpec, Process};
use crate::topology::{LinkSpec, QueueLimit, Service, Topology};

/// Why a scenario could not be loaded.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// Not valid TOML or missing/unknown keys.
    #[error("{0}")]
    Syntax(#[from] toml::de::Error),
    /// A value out of range or inconsistent.
    #[error("{0}")]
    Invalid(String),
    /// The network could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

fn invalid(msg: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid(msg.into())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkToml {
    from: String,
    to: String,
    rate: String,
    #[serde(default = "zero")]
    delay: String,
    queue: Option<usize>,
    queue_bytes: Option<u64>,
    #[serde(default)]
    service: ServiceToml,
    #[serde(default = "yes")]
    both_ways: bool,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ServiceToml {
    #[default]
    Deterministic,
    Exponential,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowToml {
    name: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    path: Vec<String>,
    #[serde(default = "zero")]
    start: String,
    stop: Option<String>,
    // acp
    controller: Option<String>,
    payload: Option<u32>,
    max_rate: Option<f64>,
    min_rate: Option<f64>,
    // updates and cross
    process: Option<String>,
    pattern: Option<String>,
    rate: Option<toml::Value>,
    size: Option<u32>,
    on: Option<String>,
    off: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    name: Option<String>,
    #[serde(default = "one")]
    seed: u64,
    duration: String,
    #[serde(default = "zero")]
    warmup: String,
    #[serde(default)]
    trace_points: usize,
    #[serde(default, rename = "link")]
    links: Vec<LinkToml>,
    #[serde(default, rename = "flow")]
    flows: Vec<FlowToml>,
}

fn zero() -> String {
    "0s".into()
}
fn yes() -> bool {
    true
}
fn one() -> u64 {
    1
}

/// A parsed scenario; [`Scenario::build`] turns it into a runnable simulation.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// Run parameters.
    pub config: SimConfig,
    links: Vec<(String, String, LinkSpec)>,
    /// The flows.
    pub flows: Vec<FlowSpec>,
}

fn duration(what: &str, s: &str) -> Result<Duration, ScenarioError> {
    parse_duration(s).map_err(|e| invalid(format!("{what}: {e}")))
}

fn rate_bps(what: &str, s: &str) -> Result<f64, ScenarioError> {
    parse_rate(s).map_err(|e| invalid(format!("{what}: {e}")))
}

fn flow(i: usize, f: &FlowToml) -> Result<FlowSpec, ScenarioError> {
    let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
    let ctx = |k: &str| format!("flow {name}: {k}");
    let need = |v: Option<&toml::Value>, k: &str| {
        v.cloned()
            .ok_or_else(|| invalid(ctx(&format!("needs `{k}`"))))
    };
    let kind = match f.kind.as_str() {
        "acp" => {
            let controller: ControllerKind = f
                .controller
                .as_deref()
                .unwrap_or("acp+")
                .parse()
                .map_err(|e: String| invalid(ctx(&e)))?;
            let mut config = SourceConfig::default();
            if let Some(m) = f.max_rate {
                config.max_rate = m;
            }
            if let Some(m) = f.min_rate {
                config.min_rate = m;
            }
            FlowKind::Acp {
                controller,
                config,
                payload: f.payload.unwrap_or(100),
            }
        }
        "updates" => {
            let rate = match need(f.rate.as_ref(), "rate (updates/s)")? {
                toml::Value::Integer(n) => n as f64,
                toml::Value::Float(x) => x,
                other => {
                    return Err(invalid(ctx(&format!(
                        "rate must be updates/s, got {other}"
                    ))))
                }
            };
            let process = match f.process.as_deref().unwrap_or("periodic") {
                "periodic" => Process::Periodic,
                "poisson" => Process::Poisson,
                p => {
                    return Err(invalid(ctx(&format!(
                        "unknown process {p:?} (periodic, poisson)"
                    ))))
                }
            };
            FlowKind::Updates {
                process,
                rate,
                size: f.size.unwrap_or(100),
            }
        }
        "cross" => {
            let rate = match need(f.rate.as_ref(), "rate (e.g. \"0.2mbit\")")? {
                toml::Value::String(s) => rate_bps(&ctx("rate"), &s)?,
                other => {
                    return Err(invalid(ctx(&format!(
                        "rate must be a string like \"0.2mbit\", got {other}"
                    ))))
                }
            };
            let pattern = match f.pattern.as_deref().unwrap_or("poisson") {
                "cbr" => CrossPattern::Cbr,
                "poisson" => CrossPattern::Poisson,
                "onoff" => CrossPattern::OnOff {
                    on: duration(&ctx("on"), f.on.as_deref().unwrap_or("1s"))?,
                    off: duration(&ctx("off"), f.off.as_deref().unwrap_or("1s"))?,
                },
                p => {
                    return Err(invalid(ctx(&format!(
                        "unknown pattern {p:?} (cbr, poisson, onoff)"
                    ))))
                }
            };
            FlowKind::Cross {
                pattern,
                rate_bps: rate,
                size: f.size.unwrap_or(1000),
            }
        }
        k => {
            return Err(invalid(ctx(&format!(
                "unknown type {k:?} (acp, updates, cross)"
            ))))
        }
    };
    Ok(FlowSpec {
        name,
        kind,
        path: f.path.clone(),
        start: duration("start", &f.start)?,
        stop: f.stop.as_deref().map(|s| duration("stop", s)).transpose()?,
    })
}

impl Scenario {
    /// Parses a scenario file's text.
    pub fn parse(text: &str) -> Result<Self, ScenarioError> {
        let t: ScenarioToml = toml::from_str(text)?;
        let config = SimConfig {
            seed: t.seed,
            duration: duration("duration", &t.duration)?,
            warmup: duration("warmup", &t.warmup)?,
            trace_points: t.trace_points,
        };
        if config.warmup >= config.duration {
            return Err(invalid("warmup must be shorter than duration"));
        }
        let mut links = Vec::new();
        for l in &t.links {
            let limit = match (l.queue, l.queue_bytes) {
                (Some(_), Some(_)) => {
                    return Err(invalid(format!(
                        "link {}→{}: give queue or queue_bytes, not both",
                        l.from, l.to
                    )))
                }
                (_, Some(b)) => QueueLimit::Bytes(b),
                (q, None) => QueueLimit::Packets(q.unwrap_or(1000)),
            };
            let spec = LinkSpec {
                rate_bps: rate_bps(&format!("link {}→{} rate", l.from, l.to), &l.rate)?,
                delay: duration(&format!("link {}→{} delay", l.from, l.to), &l.delay)?,
                limit,
                service: match l.service {
                    ServiceToml::Deterministic => Service::Deterministic,
                    ServiceToml::Exponential => Service::Exponential,
                },
            };
            links.push((l.from.clone(), l.to.clone(), spec.clone()));
            if l.both_ways {
                links.push((l.to.clone(), l.from.clone(), spec));
            }
        }
        let flows = t
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| flow(i, f))
            .collect::<Result<Vec<_>, _>>()?;
        let scenario = Scenario {
            name: t.name.unwrap_or_else(|| "scenario".into()),
            config,
            links,
            flows,
        };
        // Build once to report bad routes and links now rather than at run time.
        scenario.build()?;
        Ok(scenario)
    }

    /// A fresh simulation of this scenario.
    pub fn build(&self) -> Result<Sim, BuildError> {
        let mut topo = Topology::default();
        for (from, to, spec) in &self.links {
            topo.add_link(from, to, spec.clone())?;
        }
        Sim::new(self.config.clone(), topo, self.flows.clone())
    }

    /// Replaces every ACP flow's controller by Fixed(`rate`) and every update stream's rate by
    /// `rate`: one point of an oracle sweep.
    pub fn with_fixed_rate(&self, rate: f64) -> Scenario {
        let mut s = self.clone();
        for f in &mut s.flows {
            match &mut f.kind {
                FlowKind::Acp { controller, .. } => *controller = ControllerKind::Fixed(rate),
                FlowKind::Updates { rate: r, .. } => *r = rate,
                FlowKind::Cross { .. } => {}
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"
        seed = 3
        duration = "10s"
        warmup = "1s"
        [[link]]
        from = "a"
        to = "b"
        rate = "1mbit"
        delay = "5ms"
        queue = 20
        [[flow]]
        name = "x"
        type = "acp"
        controller = "lazy"
        path = ["a", "b"]
        [[flow]]
        type = "cross"
        pattern = "onoff"
        rate = "0.2mbit"
        path = ["a", "b"]
    "#;

    #[test]
    fn parses_and_runs() {
        let s = Scenario::parse(MINI).unwrap();
        assert_eq!(s.config.seed, 3);
        assert_eq!(s.flows.len(), 2);
        let r = s.build().unwrap().run();
        assert!(r.flows[0].age.is_some());
        assert!(r.flows[0].delivered > 100);
    }

    #[test]
    fn errors_name_the_problem() {
        let cases = [
            (MINI.replace("\"lazy\"", "\"tcp\""), "unknown controller"),
            (
                MINI.replace(
                    "path = [\"a\", \"b\"]\n        [[flow]]",
                    "path = [\"a\", \"c\"]\n        [[flow]]",
                ),
                "no link from a to c",
            ),
            (MINI.replace("\"1mbit\"", "\"fast\""), "rate"),
            (
                MINI.replace("warmup = \"1s\"", "warmup = \"20s\""),
                "warmup",
            ),
            (
                MINI.replace("queue = 20", "queue = 20\n        colour = 1"),
                "unknown field",
            ),
        ];
        for (text, needle) in cases {
            let e = Scenario::parse(&text).unwrap_err().to_string();
            assert!(e.contains(needle), "{e:?} lacks {needle:?}");
        }
    }
}
