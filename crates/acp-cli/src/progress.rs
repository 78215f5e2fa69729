//! Progress of the long commands (`acp sweep`, `acp reproduce`) on stderr: a redrawn bar on a
//! terminal, and on anything else (a log file, a pipe, the journal) a plain log line (`tracing`
//! at level `info`, so `-q` silences it) at the start and then at most every
//! [`LINE_EVERY`], never a `\r` redraw.
//!
//! Both are the same `indicatif::ProgressBar`, so the commands report progress one way; off a
//! terminal its draw target is [`LogLines`], which turns the bar's redraws into rate-limited
//! lines.

use std::io::IsTerminal;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// Least time between two progress lines off a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

/// A progress bar over `runs` simulation runs on stderr: drawn on a terminal unless `quiet`
/// (JSON output, whose readers want no redraws around it), logged as lines elsewhere (log lines,
/// which `-q` silences).
pub fn bar(runs: u64, quiet: bool) -> ProgressBar {
    let terminal = std::io::stderr().is_terminal();
    if quiet && terminal {
        return ProgressBar::hidden();
    }
    let (target, template) = if terminal {
        (
            ProgressDrawTarget::stderr(),
            "[{bar:40}] {pos}/{len} runs, {eta} left",
        )
    } else {
        (
            ProgressDrawTarget::term_like(Box::new(LogLines::new(LINE_EVERY))),
            "progress: {pos}/{len} runs, {elapsed} elapsed, about {eta} left",
        )
    };
    ProgressBar::with_draw_target(Some(runs), target).with_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("#>."),
    )
}

/// A draw target that logs what is drawn as a line: the first drawing, then one at most every
/// `every`, and never the same line twice in a row.
#[derive(Debug)]
pub struct LogLines {
    every: Duration,
    last: Mutex<Option<(Instant, String)>>,
}

impl LogLines {
    /// Lines at most every `every`.
    pub fn new(every: Duration) -> Self {
        LogLines {
            every,
            last: Mutex::new(None),
        }
    }

    /// Whether `line`, drawn at `now`, is to be logged (and, if so, remembers it).
    fn due(&self, line: &str, now: Instant) -> bool {
        let line = line.trim();
        if line.is_empty() {
            return false;
        }
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let due = match &*last {
            None => true,
            Some((at, text)) => text != line && now.duration_since(*at) >= self.every,
        };
        if due {
            *last = Some((now, line.to_string()));
        }
        due
    }

    fn emit(&self, line: &str) {
        if self.due(line, Instant::now()) {
            tracing::info!("{}", line.trim());
        }
    }
}

impl TermLike for LogLines {
    fn width(&self) -> u16 {
        // Wide enough that the template is never cut.
        200
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.emit(s);
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.emit(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_first_then_at_most_every_period_and_never_twice_the_same() {
        let log = LogLines::new(Duration::from_secs(10));
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(log.due("progress: 0/40 runs", at(0)));
        assert!(!log.due("progress: 1/40 runs", at(3)));
        assert!(!log.due("", at(11)));
        assert!(log.due("progress: 5/40 runs", at(11)));
        assert!(!log.due("progress: 5/40 runs", at(30)));
        assert!(log.due("progress: 9/40 runs", at(30)));
    }
}
