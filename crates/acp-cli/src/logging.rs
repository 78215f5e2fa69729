//! Logs: diagnostics (what the program is doing or had to skip, as opposed to its results) go
//! through `tracing` to stderr, as text or JSON lines, each with an RFC 3339 UTC timestamp.
//!
//! The level: `info` by default; each `-v` one more (`debug`, `trace`), each `-q` one less
//! (`warn`, `error`, nothing). Without `-v` or `-q`, `RUST_LOG` (an `EnvFilter` directive such as
//! `acp_runtime=debug`) chooses instead, when set. Results (tables, reports, JSON outputs)
//! never go through here: `docs/OUTPUTS.md` describes them.

use std::io::IsTerminal;

use clap::{ArgAction, Args, ValueEnum};
use tracing_subscriber::fmt::time::UtcTime;
use tracing_subscriber::EnvFilter;

use crate::UsageError;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per event (`timestamp`, `level`, `fields`, `target`).
    Json,
}

/// The logging flags, accepted by every subcommand.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// More log detail on stderr (-v debug, -vv trace); overrides RUST_LOG.
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,
    /// Less log detail on stderr (-q warnings and errors, -qq errors, -qqq none); overrides
    /// RUST_LOG.
    #[arg(short, long, action = ArgAction::Count, global = true, conflicts_with = "verbose")]
    quiet: u8,
    /// Log lines as text or JSON (stderr).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
}

/// The level the flags choose, if they choose one.
fn level(a: &LogArgs) -> Option<&'static str> {
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    const INFO: i32 = 3;
    if a.verbose == 0 && a.quiet == 0 {
        return None;
    }
    let i = (INFO + i32::from(a.verbose) - i32::from(a.quiet)).clamp(0, LEVELS.len() as i32 - 1);
    Some(LEVELS[i as usize])
}

/// The filter: the flags' level, else `RUST_LOG`, else `info`. A malformed `RUST_LOG` is a bad
/// argument.
fn filter(a: &LogArgs) -> Result<EnvFilter, UsageError> {
    if let Some(level) = level(a) {
        return Ok(EnvFilter::new(level));
    }
    match std::env::var(EnvFilter::DEFAULT_ENV) {
        Ok(spec) if !spec.trim().is_empty() => {
            EnvFilter::try_new(&spec).map_err(|e| UsageError(format!("RUST_LOG={spec:?}: {e}")))
        }
        _ => Ok(EnvFilter::new("info")),
    }
}

/// Installs the subscriber for the whole process.
pub fn init(a: &LogArgs) -> Result<(), UsageError> {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(a)?)
        .with_writer(std::io::stderr)
        .with_timer(UtcTime::new(crate::timestamp::FORMAT));
    let installed = match a.log_format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_target(false)
            .try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
    installed.map_err(|e| UsageError(format!("cannot set up logging: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(verbose: u8, quiet: u8) -> LogArgs {
        LogArgs {
            verbose,
            quiet,
            log_format: LogFormat::Text,
        }
    }

    #[test]
    fn flags_step_the_level_from_info() {
        assert_eq!(level(&args(0, 0)), None);
        assert_eq!(level(&args(1, 0)), Some("debug"));
        assert_eq!(level(&args(2, 0)), Some("trace"));
        assert_eq!(level(&args(9, 0)), Some("trace"));
        assert_eq!(level(&args(0, 1)), Some("warn"));
        assert_eq!(level(&args(0, 2)), Some("error"));
        assert_eq!(level(&args(0, 3)), Some("off"));
        assert_eq!(level(&args(0, 9)), Some("off"));
    }
}
