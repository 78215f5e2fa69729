//! `--config FILE`: a subcommand's flags from a TOML file, for every subcommand given the option
//! by [`enable`] (`monitor` and `source`).
//!
//! The file is turned into arguments that clap parses like typed ones, so a flag added to a
//! subcommand works in its config files with no code here: each key is a long flag name, a string
//! or number becomes `--key=VALUE` (`listen = "0.0.0.0:7200"`), `true` turns a switch on
//! (`print-updates = true`; `false` leaves it off), a number sets a counted flag that many times,
//! and an array gives a repeatable flag once per element. They go before the command line's
//! arguments, and a flag on the command line replaces the file's setting of it (every value of a
//! repeatable one). Keys are checked by clap: an unknown key or a bad value is the usual
//! one-line error (exit 2), prefixed with the file and the line of the key ([`Expanded::explain`]).
//! `--check-config` validates everything, prints the effective settings as a config file (each
//! marked with where it came from) and exits without starting anything ([`effective`]); defaults
//! are written as comments, so that the output read back gives the same settings (a default such
//! as `metrics-sessions`, which needs `--metrics`, would not be valid set on its own).
//!
//! Not supported: tables and dates (no flag takes one), positional arguments, and turning off on
//! the command line a switch the file turns on. Relative paths in values are taken from the working
//! directory, as on the command line.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, ValueHint};
use toml::{Spanned, Value};

use crate::UsageError;

/// Id of `--config`.
const CONFIG: &str = "config";
/// Id of `--check-config`.
const CHECK: &str = "check_config";
/// Keys a config file may not set: the config options themselves and clap's own.
const RESERVED: [&str; 4] = ["config", "check-config", "help", "version"];

/// Gives the subcommands `names` of `cmd` the options `--config FILE` and `--check-config`.
pub fn enable(mut cmd: Command, names: &[&str]) -> Command {
    for name in names {
        cmd = cmd.mut_subcommand(name, |sub| {
            sub.arg(
                Arg::new(CONFIG)
                    .long("config")
                    .value_name("FILE")
                    .value_hint(ValueHint::FilePath)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "Read settings from this TOML file: keys are long flag names \
                         (listen = \"0.0.0.0:7200\", print-updates = true, a repeatable flag as \
                         an array); a flag on the command line overrides the file",
                    ),
            )
            .arg(
                Arg::new(CHECK)
                    .long("check-config")
                    .action(ArgAction::SetTrue)
                    .help(
                        "Validate the settings (config file and flags), print them as a config \
                         file with where each came from, and exit without starting",
                    ),
            )
        });
    }
    cmd
}

/// Where a setting of the config file is.
#[derive(Debug, Clone)]
struct Origin {
    line: usize,
}

/// The command line with a config file's settings inserted.
#[derive(Debug)]
pub struct Expanded {
    /// What clap parses: the program, the subcommand, the file's arguments, the command line's.
    pub args: Vec<OsString>,
    /// The config file, if one was given.
    file: Option<PathBuf>,
    /// The subcommand it is for.
    subcommand: String,
    /// The file's settings that were used (not overridden), by key and by the flag's long name.
    origins: BTreeMap<String, Origin>,
}

/// The subcommand `args` run and its position, if it takes `--config`. Options before it
/// (`cmd`'s own) are skipped, with the value of one that takes a value.
fn configurable<'c>(cmd: &'c Command, args: &[OsString]) -> Option<(usize, &'c Command)> {
    let mut at = 1;
    let name = loop {
        let text = args.get(at)?.to_str()?;
        let takes_value = if let Some(long) = text.strip_prefix("--") {
            !long.contains('=') && by_long(cmd, long).is_some_and(|a| a.get_action().takes_values())
        } else if let Some(shorts) = text.strip_prefix('-') {
            shorts.chars().count() == 1
                && cmd.get_arguments().any(|a| {
                    a.get_short() == shorts.chars().next() && a.get_action().takes_values()
                })
        } else {
            break text;
        };
        at += if takes_value { 2 } else { 1 };
    };
    let sub = cmd.find_subcommand(name)?;
    sub.get_arguments()
        .any(|a| a.get_id() == CONFIG)
        .then_some((at, sub))
}

/// The argument of `sub` whose long name or alias is `name`.
fn by_long<'c>(sub: &'c Command, name: &str) -> Option<&'c Arg> {
    sub.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
    })
}

/// The `--config` value among the command line's arguments `rest`; `None` if it is absent,
/// given twice or without a value (clap then reports the misuse).
fn config_path(rest: &[OsString]) -> Option<PathBuf> {
    let mut found = Vec::new();
    let mut tokens = rest.iter().take_while(|t| *t != "--");
    while let Some(token) = tokens.next() {
        let Some(text) = token.to_str() else { continue };
        if text == "--config" {
            found.push(PathBuf::from(tokens.next()?));
        } else if let Some(path) = text.strip_prefix("--config=") {
            found.push(PathBuf::from(path));
        }
    }
    match found.len() {
        1 => found.pop(),
        _ => None,
    }
}

/// The ids of the arguments of `sub` that the command line's arguments `rest` set.
fn given_ids(sub: &Command, rest: &[OsString]) -> HashSet<String> {
    let mut ids = HashSet::new();
    for token in rest.iter().take_while(|t| *t != "--") {
        let Some(text) = token.to_str() else { continue };
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if let Some(arg) = by_long(sub, name) {
                ids.insert(arg.get_id().to_string());
            }
        } else if let Some(shorts) = text.strip_prefix('-') {
            // A cluster of short flags; the first that takes a value takes the rest.
            for c in shorts.chars() {
                let Some(arg) = sub.get_arguments().find(|a| a.get_short() == Some(c)) else {
                    break;
                };
                ids.insert(arg.get_id().to_string());
                if arg.get_action().takes_values() {
                    break;
                }
            }
        }
    }
    ids
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The arguments one setting `key = value` stands for; `arg` is the flag the key names, if any
/// (an unknown key is passed on for clap to refuse).
fn setting_args(key: &str, value: &Value, arg: Option<&Arg>) -> Result<Vec<String>, String> {
    let action = arg.map(Arg::get_action);
    let scalar = |v: &Value| -> Result<Vec<String>, String> {
        Ok(match (v, action) {
            (Value::Boolean(true), Some(a)) if !a.takes_values() => vec![format!("--{key}")],
            (Value::Boolean(false), Some(a)) if !a.takes_values() => Vec::new(),
            (Value::Integer(n), Some(ArgAction::Count)) => {
                let n = usize::try_from(*n).map_err(|_| "a count cannot be negative")?;
                vec![format!("--{key}"); n]
            }
            // An unknown key: let clap name it.
            (Value::Boolean(_), None) => vec![format!("--{key}")],
            (Value::String(s), _) => vec![format!("--{key}={s}")],
            (Value::Integer(n), _) => vec![format!("--{key}={n}")],
            (Value::Float(x), _) => vec![format!("--{key}={x}")],
            (Value::Boolean(b), _) => vec![format!("--{key}={b}")],
            (Value::Datetime(_), _) => return Err("a date is not a flag value".into()),
            (Value::Array(_), _) => return Err("arrays do not nest".into()),
            (Value::Table(_), _) => return Err("a table is not a flag value".into()),
        })
    };
    match value {
        Value::Array(items) => items.iter().try_fold(Vec::new(), |mut all, item| {
            all.extend(scalar(item)?);
            Ok(all)
        }),
        v => scalar(v),
    }
}

/// Largest config file read: a few dozen settings take a few KiB, and a larger file is a mistake
/// (or an attempt to make the monitor read a huge file and echo it back).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of `file`, refused if it holds more than [`MAX_CONFIG_BYTES`] (no more is read).
fn read_capped(file: &std::path::Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(file)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} KiB, the most a config file may hold",
                MAX_CONFIG_BYTES >> 10
            ),
        ));
    }
    Ok(text)
}

/// Inserts the settings of the `--config` file, if `args` (a whole command line, program first)
/// run a subcommand that takes one and give it. An unreadable file, invalid TOML, a reserved key
/// or a value no flag takes is refused here; clap checks the rest.
pub fn expand(cmd: &Command, args: Vec<OsString>) -> Result<Expanded, UsageError> {
    let unchanged = |args| Expanded {
        args,
        file: None,
        subcommand: String::new(),
        origins: BTreeMap::new(),
    };
    let Some((at, sub)) = configurable(cmd, &args) else {
        return Ok(unchanged(args));
    };
    let rest = at + 1;
    let Some(file) = config_path(&args[rest..]) else {
        return Ok(unchanged(args));
    };
    let shown = file.display();
    let text = read_capped(&file).map_err(|e| UsageError(format!("--config {shown}: {e}")))?;
    let table: BTreeMap<Spanned<String>, Spanned<Value>> = toml::from_str(&text).map_err(|e| {
        let place = e.span().map_or_else(String::new, |span| {
            format!(":{}", line_of(&text, span.start))
        });
        // toml's message may take several lines; keep it on one.
        let message: Vec<&str> = e.message().lines().map(str::trim).collect();
        UsageError(format!("{shown}{place}: {}", message.join("; ")))
    })?;
    let mut settings: Vec<_> = table.into_iter().collect();
    settings.sort_by_key(|(key, _)| key.span().start);
    let given = given_ids(sub, &args[rest..]);
    let mut from_file = Vec::new();
    let mut origins = BTreeMap::new();
    for (key, value) in settings {
        let origin = Origin {
            line: line_of(&text, key.span().start),
        };
        let at = format!("{shown}:{}", origin.line);
        let key = key.into_inner();
        let flag_name = !key.is_empty()
            && !key.starts_with('-')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !flag_name {
            return Err(UsageError(format!("{at}: key '{key}' is not a flag name")));
        }
        if RESERVED.contains(&key.as_str()) {
            return Err(UsageError(format!(
                "{at}: key '{key}' cannot be set in a config file"
            )));
        }
        let arg = by_long(sub, &key);
        if arg.is_some_and(|a| given.contains(a.get_id().as_str())) {
            continue;
        }
        let expanded = setting_args(&key, value.get_ref(), arg)
            .map_err(|e| UsageError(format!("{at}: key '{key}': {e}")))?;
        from_file.extend(expanded.into_iter().map(OsString::from));
        if let Some(long) = arg.and_then(Arg::get_long) {
            origins.insert(long.to_string(), origin.clone());
        }
        origins.insert(key, origin);
    }
    let mut all = args[..rest].to_vec();
    all.extend(from_file);
    all.extend_from_slice(&args[rest..]);
    Ok(Expanded {
        args: all,
        file: Some(file),
        subcommand: sub.get_name().to_string(),
        origins,
    })
}

impl Expanded {
    /// The one-line message for clap's error `e` when the argument it is about came from the
    /// config file (`FILE:LINE: …`); `None` for an error about the command line.
    pub fn explain(&self, e: &clap::Error, line: &str) -> Option<String> {
        let file = self.file.as_ref()?;
        let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
            return None;
        };
        let name = arg.strip_prefix("--")?.split([' ', '=']).next()?;
        let origin = self.origins.get(name)?;
        let at = format!("{}:{}", file.display(), origin.line);
        let sub = &self.subcommand;
        if e.kind() == ErrorKind::UnknownArgument {
            let tip = match e.get(ContextKind::SuggestedArg) {
                Some(ContextValue::String(s)) => {
                    format!(" (did you mean '{}'?)", s.trim_start_matches('-'))
                }
                _ => String::new(),
            };
            return Some(format!("{at}: unknown key '{name}' for `acp {sub}`{tip}"));
        }
        let what = line.strip_prefix("error: ").unwrap_or(line);
        Some(format!("{at}: key '{name}': {what}"))
    }
}

/// With `--check-config`: the settings of the subcommand `matches` ran, as a config file (TOML)
/// that gives the same settings, each marked with where it came from; a default is a comment
/// (`# key = value  # default`), since setting it explicitly would change nothing but could break
/// a rule (a flag that needs another). `None` without it.
pub fn effective(cmd: &Command, matches: &ArgMatches, expanded: &Expanded) -> Option<String> {
    let (name, sub_matches) = matches.subcommand()?;
    if !sub_matches
        .try_get_one::<bool>(CHECK)
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false)
    {
        return None;
    }
    let sub = cmd.find_subcommand(name)?;
    let mut out = format!("# acp {name}: effective settings");
    if let Some(file) = &expanded.file {
        let _ = write!(out, " from {} and the command line", file.display());
    }
    out.push('\n');
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if RESERVED.contains(&long) || arg.is_positional() {
            continue;
        }
        let whence = match sub_matches.value_source(id) {
            Some(ValueSource::DefaultValue) => "default".to_string(),
            Some(ValueSource::EnvVariable) => "environment".to_string(),
            Some(_) => match (&expanded.file, expanded.origins.get(long)) {
                (Some(file), Some(origin)) => format!("{}:{}", file.display(), origin.line),
                _ => "command line".to_string(),
            },
            None => {
                let _ = writeln!(out, "# {long}: not set");
                continue;
            }
        };
        let value = match arg.get_action() {
            ArgAction::Count => Value::Integer(i64::from(sub_matches.get_count(id))),
            a if !a.takes_values() => Value::Boolean(sub_matches.get_flag(id)),
            _ => {
                let raw: Vec<Value> = sub_matches
                    .get_raw(id)
                    .into_iter()
                    .flatten()
                    .map(|v| Value::String(v.to_string_lossy().into_owned()))
                    .collect();
                match <[Value; 1]>::try_from(raw) {
                    Ok([one]) if !matches!(arg.get_action(), ArgAction::Append) => one,
                    Ok(one) => Value::Array(one.into()),
                    Err(many) => Value::Array(many),
                }
            }
        };
        let comment = if whence == "default" { "# " } else { "" };
        let _ = writeln!(out, "{comment}{long} = {value}  # {whence}");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_testkit::Scratch;
    use clap::Parser;

    /// A subcommand with one flag of each kind.
    #[derive(Debug, Parser)]
    struct Tool {
        /// A global option with a value, as before the subcommand.
        #[arg(long, short, global = true)]
        log: Option<String>,
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Sub {
        Run {
            #[arg(long)]
            listen: String,
            #[arg(long, default_value_t = 5)]
            every: u32,
            #[arg(long)]
            loud: bool,
            #[arg(long, action = ArgAction::Count)]
            verbose: u8,
            #[arg(long)]
            tag: Vec<String>,
        },
        Other,
    }

    fn command() -> Command {
        enable(<Tool as clap::CommandFactory>::command(), &["run"])
    }

    fn expand_with(file: &str, cli: &[&str]) -> Result<Expanded, UsageError> {
        let mut args: Vec<OsString> = ["tool", "run", "--config", file].map(OsString::from).into();
        args.extend(cli.iter().map(OsString::from));
        expand(&command(), args)
    }

    fn strings(e: &Expanded) -> Vec<String> {
        e.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn every_kind_of_value_becomes_arguments_in_file_order() {
        let dir = Scratch::new("acp-config");
        let file = dir.file(
            "kinds.toml",
            "tag = [\"a\", \"b c\"]\nlisten = \"0.0.0.0:1\"\nloud = true\nverbose = 2\nevery = 7\n",
        );
        let e = expand_with(file.to_str().unwrap(), &[]).unwrap();
        let f = file.to_str().unwrap();
        assert_eq!(
            strings(&e),
            [
                "tool",
                "run",
                "--tag=a",
                "--tag=b c",
                "--listen=0.0.0.0:1",
                "--loud",
                "--verbose",
                "--verbose",
                "--every=7",
                "--config",
                f
            ]
        );
        let m = command().try_get_matches_from(&e.args).unwrap();
        let (_, run) = m.subcommand().unwrap();
        assert_eq!(run.get_one::<String>("listen").unwrap(), "0.0.0.0:1");
        assert_eq!(run.get_count("verbose"), 2);
    }

    #[test]
    fn the_command_line_replaces_the_files_setting() {
        let dir = Scratch::new("acp-config");
        let file = dir.file(
            "override.toml",
            "tag = [\"a\", \"b\"]\nlisten = \"x\"\nloud = false\n",
        );
        let e = expand_with(file.to_str().unwrap(), &["--tag", "c", "--listen=y"]).unwrap();
        let m = command().try_get_matches_from(&e.args).unwrap();
        let (_, run) = m.subcommand().unwrap();
        let tags: Vec<&String> = run.get_many("tag").unwrap().collect();
        assert_eq!(tags, ["c"]);
        assert_eq!(run.get_one::<String>("listen").unwrap(), "y");
        assert!(!run.get_flag("loud"));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = Scratch::new("acp-config");
        let file = dir.file("bad.toml", "listen = \"x\"\n\nlisten-to = \"y\"\n");
        let f = file.display().to_string();
        let e = expand_with(&f, &[]).unwrap();
        let err = command().try_get_matches_from(&e.args).unwrap_err();
        let msg = e.explain(&err, "error: whatever").unwrap();
        assert_eq!(
            msg,
            format!("{f}:3: unknown key 'listen-to' for `acp run` (did you mean 'listen'?)")
        );

        std::fs::write(&file, "listen = \"x\"\nevery = \"often\"\n").unwrap();
        let e = expand_with(&f, &[]).unwrap();
        let err = command().try_get_matches_from(&e.args).unwrap_err();
        let msg = e.explain(&err, "error: invalid value 'often'").unwrap();
        assert_eq!(msg, format!("{f}:2: key 'every': invalid value 'often'"));
        // The same mistake on the command line is not the file's.
        let e = expand_with(&f, &["--every", "often"]).unwrap();
        let err = command().try_get_matches_from(&e.args).unwrap_err();
        assert!(e.explain(&err, "error: x").is_none());

        for (text, want) in [
            ("listen = [[1]]", ":1: key 'listen': arrays do not nest"),
            (
                "[listen]\nx = 1",
                ":1: key 'listen': a table is not a flag value",
            ),
            (
                "\nconfig = \"other.toml\"",
                ":2: key 'config' cannot be set in a config file",
            ),
            ("\"--every\" = 3", ":1: key '--every' is not a flag name"),
            (
                "listen = \"x\"\nlisten 3",
                ":2: key with no value, expected `=`",
            ),
            (
                "verbose = -1",
                ":1: key 'verbose': a count cannot be negative",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let err = expand_with(&f, &[]).unwrap_err().0;
            assert_eq!(err, format!("{f}{want}"), "{text}");
        }
        std::fs::remove_file(&file).unwrap();
        let err = expand_with(&f, &[]).unwrap_err().0;
        assert!(err.starts_with(&format!("--config {f}: ")), "{err}");
    }

    #[test]
    fn options_before_the_subcommand_are_skipped() {
        let dir = Scratch::new("acp-config");
        let file = dir.file("global.toml", "listen = \"z\"\n");
        let f = file.to_str().unwrap();
        for before in [
            &["--log", "run"][..],
            &["--log=run"],
            &["-l", "run"],
            &["-lrun"],
        ] {
            let mut args = vec!["tool"];
            args.extend_from_slice(before);
            args.extend(["run", "--config", f]);
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            let e = expand(&command(), args).unwrap();
            let m = command().try_get_matches_from(&e.args).unwrap();
            let (_, run) = m.subcommand().unwrap();
            assert_eq!(run.get_one::<String>("listen").unwrap(), "z", "{before:?}");
            assert_eq!(m.get_one::<String>("log").unwrap(), "run", "{before:?}");
        }
    }

    #[test]
    fn other_commands_and_lines_without_config_are_left_alone() {
        for args in [
            &["tool", "other"][..],
            &["tool", "run", "--listen", "x"],
            &["tool"],
        ] {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            assert_eq!(expand(&command(), args.clone()).unwrap().args, args);
        }
    }

    #[test]
    fn check_config_prints_a_config_file_of_the_same_settings() {
        let dir = Scratch::new("acp-config");
        let file = dir.file(
            "check.toml",
            "listen = \"0.0.0.0:1\"\ntag = [\"a\"]\nverbose = 1\n",
        );
        let f = file.display().to_string();
        let e = expand_with(&f, &["--check-config", "--every", "9"]).unwrap();
        let m = command().try_get_matches_from(&e.args).unwrap();
        let text = effective(&command(), &m, &e).unwrap();
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                format!("listen = \"0.0.0.0:1\"  # {f}:1"),
                "every = \"9\"  # command line".into(),
                "# loud = false  # default".into(),
                format!("verbose = 1  # {f}:3"),
                format!("tag = [\"a\"]  # {f}:2"),
            ]
        );
        // Read back, it gives the same settings.
        std::fs::write(&file, &text).unwrap();
        let again = expand_with(&f, &["--check-config"]).unwrap();
        let m = command().try_get_matches_from(&again.args).unwrap();
        let text2 = effective(&command(), &m, &again).unwrap();
        let settings = |t: &str| -> Vec<String> {
            t.lines()
                .skip(1)
                .map(|l| l.split("  #").next().unwrap().to_string())
                .collect()
        };
        assert_eq!(settings(&text), settings(&text2));
    }
}
