//! The two exposition formats a scraper can ask for, chosen by its `Accept` header: OpenMetrics
//! 1.0.0 (what Prometheus asks for first) and the classic Prometheus text format 0.0.4 (what
//! `promtool check metrics`, older scrapers and plain `curl` read).
//!
//! `prometheus-client` writes OpenMetrics only; the classic text is derived from it line by line,
//! as the two formats differ only in the descriptors: a counter family `x` (samples `x_total`) is
//! described as `x_total`, an info family `x` (sample `x_info`) becomes the gauge `x_info`, and
//! the `# UNIT` lines and the closing `# EOF` have no classic equivalent. Samples and label
//! escaping are the same in both.

use prometheus_client::collector::Collector;
use prometheus_client::registry::Registry;

/// An exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics text 1.0.0.
    OpenMetrics,
    /// The Prometheus text format 0.0.4.
    Classic,
}

impl Format {
    /// The `Content-Type` of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Classic => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// The format an `Accept` header prefers: the media range of highest quality among
    /// OpenMetrics (any version we can answer: 1.0.0, 0.0.1 or none named) and the classic text
    /// (`text/plain`, `text/*`, `*/*`), the earlier one on a tie. Without a header, or when it names
    /// neither, the classic text, as Prometheus's own clients answer.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let mut best: Option<(f32, Format)> = None;
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let (mut quality, mut version) = (1.0f32, None);
            for param in parts {
                let Some((key, value)) = param.split_once('=') else {
                    continue;
                };
                match key.trim().to_ascii_lowercase().as_str() {
                    "q" => quality = value.trim().parse().unwrap_or(0.0),
                    "version" => version = Some(value.trim().to_string()),
                    _ => {}
                }
            }
            let format = match (media.as_str(), version.as_deref()) {
                ("application/openmetrics-text", None | Some("1.0.0" | "0.0.1")) => {
                    Format::OpenMetrics
                }
                ("text/plain", None | Some("0.0.4")) | ("text/*" | "*/*", _) => Format::Classic,
                _ => continue,
            };
            if quality > 0.0 && best.is_none_or(|(q, _)| quality > q) {
                best = Some((quality, format));
            }
        }
        best.map_or(Format::Classic, |(_, format)| format)
    }
}

/// The exposition of `collectors` in `format`, every name prefixed with `prefix_`.
pub fn encode(
    format: Format,
    prefix: &'static str,
    collectors: Vec<Box<dyn Collector>>,
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::with_prefix(prefix);
    for collector in collectors {
        registry.register_collector(collector);
    }
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    Ok(match format {
        Format::OpenMetrics => text,
        Format::Classic => classic(&text),
    })
}

/// The classic text of an OpenMetrics exposition written by `prometheus-client` (each family's
/// `# HELP` line first, then `# TYPE`, then the optional `# UNIT`, then its samples).
fn classic(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<&str> = None;
    let mut counter: Option<String> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = Some(rest.split_once(' ').map_or("", |(_, text)| text));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            let (name, kind) = match kind {
                "counter" => (format!("{family}_total"), "counter"),
                "info" => (format!("{family}_info"), "gauge"),
                "gauge" | "histogram" | "summary" => (family.to_string(), kind),
                _ => (family.to_string(), "untyped"),
            };
            counter = (kind == "counter").then(|| format!("{family}_created"));
            if let Some(text) = help.take() {
                out.push_str(&format!("# HELP {name} {text}\n"));
            }
            out.push_str(&format!("# TYPE {name} {kind}\n"));
        } else if line.starts_with('#') {
            // `# UNIT` and `# EOF`: OpenMetrics only.
        } else if counter
            .as_deref()
            .is_some_and(|created| line.starts_with(created))
        {
            // A counter's creation time: OpenMetrics only.
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_header_chooses_the_format() {
        use Format::{Classic, OpenMetrics};
        // What Prometheus 2.42 sends, and what it sends with scrape_protocols set to the classic text.
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), OpenMetrics);
        let classic_first = "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5";
        assert_eq!(Format::negotiate(Some(classic_first)), Classic);
        assert_eq!(Format::negotiate(None), Classic);
        assert_eq!(Format::negotiate(Some("*/*")), Classic);
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text")),
            OpenMetrics
        );
        // A version we do not write, a refused range, junk: the classic text.
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text; version=2.0.0")),
            Classic
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text;q=0, text/plain;q=0.1")),
            Classic
        );
        assert_eq!(Format::negotiate(Some(";;,=,q=x")), Classic);
        // Case does not matter; a tie goes to the range named first.
        assert_eq!(
            Format::negotiate(Some(
                "Application/OpenMetrics-Text; Q=0.5, text/plain; q=0.5"
            )),
            OpenMetrics
        );
    }

    #[test]
    fn the_classic_text_describes_counters_and_infos_by_their_sample_names() {
        let openmetrics = "# HELP t_sent_bytes Bytes sent.\n# TYPE t_sent_bytes counter\n\
             # UNIT t_sent_bytes bytes\nt_sent_bytes_total 3\nt_sent_bytes_created 1.5\n\
             # HELP t_session The session.\n# TYPE t_session info\nt_session_info{id=\"a\\\"b\"} 1\n\
             # HELP t_age_seconds Age.\n# TYPE t_age_seconds gauge\n# UNIT t_age_seconds seconds\n\
             t_age_seconds 0.5\n# EOF\n";
        assert_eq!(
            classic(openmetrics),
            "# HELP t_sent_bytes_total Bytes sent.\n# TYPE t_sent_bytes_total counter\n\
             t_sent_bytes_total 3\n\
             # HELP t_session_info The session.\n# TYPE t_session_info gauge\n\
             t_session_info{id=\"a\\\"b\"} 1\n\
             # HELP t_age_seconds Age.\n# TYPE t_age_seconds gauge\nt_age_seconds 0.5\n"
        );
    }
}
