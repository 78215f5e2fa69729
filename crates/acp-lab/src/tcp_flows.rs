//! `[[flow]]` tables of `type = "tcp"`: kernel TCP connections, which the simulator's scenario
//! parser does not read (yet). Their field names follow the simulator's TCP flow type (`cc`,
//! `app`, `payload`, `nodelay`, `notsent_lowat`, `rcvbuf`, with the common `name`, `path`,
//! `start`, `stop`).
//!
//! [`split`] reads them and returns the scenario text with each of these tables blanked out
//! (spaces, newlines kept), so the simulator's parser reads the rest and its errors keep naming
//! the right lines.

use std::time::Duration;

use acp_sim::spec::Dur;
use serde::Deserialize;

/// What a TCP flow's application writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpApp {
    /// A fresh update (of `payload` bytes, framed as ACP updates) whenever the socket takes one;
    /// the monitor measures its age.
    #[default]
    Updates,
    /// Data as fast as the socket takes it: the largest frames, back to back.
    Bulk,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TcpToml {
    name: Option<String>,
    path: Vec<String>,
    start: Option<Dur>,
    stop: Option<Dur>,
    cc: Option<String>,
    #[serde(default)]
    app: TcpApp,
    payload: Option<u32>,
    #[serde(default)]
    nodelay: bool,
    notsent_lowat: Option<u32>,
    rcvbuf: Option<usize>,
}

/// A TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlow {
    pub name: String,
    /// Node names from the sender to the receiver.
    pub path: Vec<String>,
    pub start: Duration,
    pub stop: Option<Duration>,
    /// Congestion control (`TCP_CONGESTION`); the system default if `None`.
    pub cc: Option<String>,
    pub app: TcpApp,
    /// Payload bytes per update (`updates`: 100 by default; `bulk`: the largest frame).
    pub payload: Option<u32>,
    pub nodelay: bool,
    pub notsent_lowat: Option<u32>,
    /// The receiver's `SO_RCVBUF` (it bounds the window); autotuned if `None`.
    pub rcvbuf: Option<usize>,
}

#[derive(Deserialize)]
struct Flows {
    #[serde(default, rename = "flow")]
    flows: Vec<toml::Spanned<toml::Table>>,
}

/// The TCP flows of a scenario, and its text without them. Text that is not TOML is returned
/// as it is, for the simulator's parser to explain.
pub fn split(text: &str) -> Result<(String, Vec<TcpFlow>), String> {
    let Ok(parsed) = toml::from_str::<Flows>(text) else {
        return Ok((text.to_string(), Vec::new()));
    };
    let mut rest = text.as_bytes().to_vec();
    let mut flows = Vec::new();
    for (i, spanned) in parsed.flows.into_iter().enumerate() {
        let span = spanned.span();
        let mut table = spanned.into_inner();
        if table.get("type").and_then(toml::Value::as_str) != Some("tcp") {
            continue;
        }
        table.remove("type");
        let line = text[..span.start].matches('\n').count() + 1;
        let t: TcpToml = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                format!("line {line}: [[flow]] (tcp): {}", e.message().trim())
            })?;
        if t.payload == Some(0) {
            return Err(format!(
                "line {line}: [[flow]] (tcp): payload must be positive"
            ));
        }
        for b in &mut rest[span] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        flows.push(TcpFlow {
            name: t.name.unwrap_or_else(|| format!("flow{i}")),
            path: t.path,
            start: t.start.map_or(Duration::ZERO, |d| d.0),
            stop: t.stop.map(|d| d.0),
            cc: t.cc,
            app: t.app,
            payload: t.payload,
            nodelay: t.nodelay,
            notsent_lowat: t.notsent_lowat,
            rcvbuf: t.rcvbuf,
        });
    }
    // Only whole tables (ASCII headers and keys through their last value) were blanked.
    let rest = String::from_utf8(rest).map_err(|e| e.to_string())?;
    Ok((rest, flows))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "format = 2\n\
        [[flow]]\ntype = \"tcp\"\nname = \"t\"\ncc = \"bbr\"\napp = \"bulk\"\npath = [\"a\", \"b\"]\n\
        [[flow]]\ntype = \"acp\"\npath = [\"a\", \"b\"]\n";

    #[test]
    fn tcp_tables_are_read_and_blanked_keeping_lines() {
        let (rest, flows) = split(TEXT).unwrap();
        assert_eq!(flows.len(), 1);
        let f = &flows[0];
        assert_eq!(
            (f.name.as_str(), f.cc.as_deref(), f.app),
            ("t", Some("bbr"), TcpApp::Bulk)
        );
        assert_eq!(rest.lines().count(), TEXT.lines().count());
        assert!(!rest.contains("tcp") && rest.contains("type = \"acp\""));
    }

    #[test]
    fn errors_name_the_line() {
        let bad = TEXT.replace("cc = \"bbr\"", "colour = 1");
        let e = split(&bad).unwrap_err();
        assert!(
            e.starts_with("line 2: [[flow]] (tcp): unknown field `colour`"),
            "{e}"
        );
    }
}
