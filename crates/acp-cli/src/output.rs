//! Standard output that never panics.
//!
//! `println!` panics when stdout is closed (`acp sim … | head -1`). Every command writes its
//! results through [`out!`] and [`outln!`] instead, which return the write's `io::Result`:
//!
//! - one-shot commands (`sim`, `sweep`, `reproduce`, `bench`, `demo`) pass the error up with
//!   `?`, and `main` ends quietly with status 0 when it is a closed stdout ([`is_closed`]), as
//!   `git` and `rg` do;
//! - long-running commands (`monitor`, `source`, `relay`) write through [`Reports`]: a closed
//!   stdout raises their shutdown flag, so they stop as on SIGTERM and write their final summary
//!   to stderr.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::timestamp;

/// Writes `args` to stdout and flushes, so that a closed stdout shows at the first write.
pub fn write_fmt(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)?;
    out.flush()
}

/// `print!` returning `io::Result<()>` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!($($arg)*))
    };
}

/// `println!` returning `io::Result<()>` instead of panicking.
macro_rules! outln {
    () => {
        $crate::output::write_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};

/// Whether `e` is, or was caused by, a write to a closed pipe (the reader of stdout went away).
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Output of a long-running command. A failed write to stdout raises the command's shutdown
/// flag (the one SIGINT and SIGTERM raise) instead of failing; the final summary then goes to
/// stderr.
#[derive(Clone)]
pub struct Reports {
    stop: Arc<AtomicBool>,
    to_stderr: bool,
}

impl Reports {
    /// Reports to stdout, or to stderr when `to_stderr` (stdout carries something else);
    /// `stop` is the command's shutdown flag.
    pub fn new(stop: Arc<AtomicBool>, to_stderr: bool) -> Self {
        Reports { stop, to_stderr }
    }

    /// Writes `text` to stdout; if that fails, asks the command to shut down and returns false.
    pub fn stdout(&self, text: &str) -> bool {
        let written = out!("{text}").is_ok();
        if !written {
            self.stop.store(true, Ordering::SeqCst);
        }
        written
    }

    /// A periodic report.
    pub fn report(&self, text: &str) {
        if self.to_stderr {
            stderr(text);
        } else {
            self.stdout(text);
        }
    }

    /// The final summary: where the reports went, or to stderr once stdout is closed.
    pub fn summary(&self, text: &str) {
        if self.to_stderr || out!("{text}").is_err() {
            stderr(text);
        }
    }
}

/// Turns a source's reports into lines, as JSON (`--json`) or as text, each stamped with the
/// wall-clock time and the seconds since the source started.
pub struct ReportLines<R> {
    start: Instant,
    json: bool,
    as_json: fn(&str, &str, f64, &R) -> Value,
    as_text: fn(&str, &str, f64, &R) -> String,
}

impl<R> ReportLines<R> {
    /// Lines from now on; `as_json` and `as_text` get the report's kind ("status", "summary"),
    /// the wall-clock time, the seconds elapsed and the report.
    pub fn new(
        json: bool,
        as_json: fn(&str, &str, f64, &R) -> Value,
        as_text: fn(&str, &str, f64, &R) -> String,
    ) -> Self {
        ReportLines {
            start: Instant::now(),
            json,
            as_json,
            as_text,
        }
    }

    /// Time since the lines started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// One line per report, each ending in a newline.
    pub fn lines(&self, kind: &str, reports: &[R]) -> String {
        let (t, time) = (self.elapsed().as_secs_f64(), timestamp::now());
        let line = |r| match self.json {
            true => (self.as_json)(kind, &time, t, r).to_string(),
            false => (self.as_text)(kind, &time, t, r),
        };
        reports.iter().map(|r| line(r) + "\n").collect()
    }
}

/// Best effort: when stderr is closed too, nothing is left to tell.
fn stderr(text: &str) {
    let _ = io::stderr().write_all(text.as_bytes());
}
