//! `acp completions SHELL` and `acp manpage`: shell completion scripts (`clap_complete`) and roff
//! man pages (`clap_mangen`) generated from the same clap definition that parses the command
//! line, `--config` included, so they never fall behind a new flag or subcommand.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManpageArgs {
    /// Write acp.1 and a page per subcommand (acp-monitor.1, acp-bench-pacing.1, …) to this
    /// directory, instead of printing acp(1) on stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Prints the completion script for `a.shell`.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut crate::command(), "acp", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}

/// The pages `clap_mangen::generate_to` writes for `cmd`: its own and one per (nested)
/// subcommand that is not hidden.
fn pages(cmd: &clap::Command) -> usize {
    1 + cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(pages)
        .sum::<usize>()
}

/// Prints acp(1), or writes every page to `a.out`.
pub fn manpage(a: ManpageArgs) -> anyhow::Result<()> {
    let cmd = crate::command();
    match a.out {
        Some(dir) => {
            crate::out_dir(&dir)?;
            let pages = pages(&cmd);
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write man pages to {}", dir.display()))?;
            eprintln!("wrote {pages} man pages to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            // As `generate_to` does: `acp help` has no page of its own.
            clap_mangen::Man::new(cmd.disable_help_subcommand(true))
                .render(&mut page)
                .context("cannot render the man page")?;
            let mut out = std::io::stdout().lock();
            out.write_all(&page)?;
            out.flush()?;
        }
    }
    Ok(())
}
