//! The writers every reproduction's [`Report`] goes through: the text tables beside the papers'
//! numbers, CSV, and markdown for the docs (JSON is [`Report::to_json`]; the charts are drawn
//! outside the simulator, from [`Report::charts`]). All of them take the field names of the
//! rows as they are, so a quantity is named the same in every format.
//!
//! A table shows the fields its [`View`] lists; a field `x` that has an
//! `x_ci95` field beside it is shown as "mean ± CI", and one with a `paper_x` field gets a
//! `paper` column after it. A row over fewer seeds than asked (an interrupted reproduction) is
//! starred.

use serde_json::{Map, Value};

use super::harness::{Report, View};

/// A number with about four significant digits; an integer as it is; null as "-".
pub fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let digits = if x == 0.0 {
                0
            } else {
                (3 - x.abs().log10().floor() as i64).clamp(0, 4) as usize
            };
            format!("{x:.digits$}")
        }
        Some(v) => v.to_string(),
    }
}

/// One CSV field: a string as it is, a number in full precision (the shortest form that reads
/// back the same: `24`, not `24.0`), null empty, else JSON.
pub fn csv_field(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(String::new, |x| x.to_string()),
        v => v.to_string(),
    }
}

/// The rows as CSV: a header of the field names, a line per row.
pub fn csv(report: &Report) -> String {
    let header = report.columns();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    crate::report::to_csv(
        &header,
        report
            .rows
            .iter()
            .map(|r| r.values().map(csv_field).collect()),
    )
}

/// A view's column headings and each row's cells.
fn grid(report: &Report, view: &View) -> (Vec<String>, Vec<Vec<String>>) {
    let has = |key: &str| {
        report
            .rows
            .iter()
            .any(|r| r.get(key).is_some_and(|v| !v.is_null()))
    };
    let mut heads = Vec::new();
    for c in &view.columns {
        heads.push(c.clone());
        if has(&format!("paper_{c}")) {
            heads.push("paper".into());
        }
    }
    let rows = report
        .rows
        .iter()
        .map(|r| {
            let mut cells = Vec::new();
            for c in &view.columns {
                let mut text = cell(r.get(c.as_str()));
                if let Some(ci) = r.get(&format!("{c}_ci95")).filter(|v| !v.is_null()) {
                    if text != "-" {
                        text = format!("{text} ± {}", cell(Some(ci)));
                    }
                }
                if short(r, report.seeds) && r.get(&format!("{c}_ci95")).is_some() {
                    text.push('*');
                }
                cells.push(text);
                if has(&format!("paper_{c}")) {
                    cells.push(cell(r.get(&format!("paper_{c}"))));
                }
            }
            cells
        })
        .collect();
    (heads, rows)
}

/// Whether `row` covers fewer seeds than asked.
fn short(row: &Map<String, Value>, seeds: usize) -> bool {
    row.get("seeds")
        .and_then(Value::as_u64)
        .is_some_and(|n| (n as usize) < seeds)
}

/// The lines that say an interrupted reproduction's results are partial (none if all its runs
/// were done).
fn interrupted(report: &Report) -> Option<String> {
    report.tally.interrupted().then(|| {
        format!(
            "interrupted: {} of {} runs done; the results below cover those runs",
            report.tally.done,
            report.tally.total()
        )
    })
}

/// The report as text: the setup, each table (columns aligned, numbers right), the published
/// numbers' sources, and the notes.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    if let Some(line) = interrupted(report) {
        out += &format!("{line}\n");
    }
    out += &format!("{}: {}\n", report.name, report.setup);
    for view in &report.views {
        let (heads, rows) = grid(report, view);
        let widths: Vec<usize> = (0..heads.len())
            .map(|k| {
                rows.iter()
                    .map(|r| r[k].chars().count())
                    .chain([heads[k].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, &w)| format!("{c:>w$}"))
                .collect();
            padded.join("  ")
        };
        out += "\n";
        if !view.title.is_empty() {
            out += &format!("{}\n", view.title);
        }
        out += &format!("{}\n", line(&heads));
        for r in &rows {
            out += &format!("{}\n", line(r));
        }
    }
    if report.rows.iter().any(|r| short(r, report.seeds)) {
        out += &format!(
            "* over fewer than {} seeds: the runs of the others were skipped\n",
            report.seeds
        );
    }
    if !report.sources.is_empty() {
        out += "\nthe papers' numbers:\n";
        for s in &report.sources {
            out += &format!("  {}: {}\n", s.column, s.locator);
        }
    }
    if !report.notes.is_empty() {
        out += "\n";
        for n in &report.notes {
            out += &format!("{n}\n");
        }
    }
    out
}

/// The report's tables as markdown, as `docs/` shows them, each with the published numbers'
/// sources under it.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    if let Some(line) = interrupted(report) {
        out += &format!("{line}\n\n");
    }
    for view in &report.views {
        let (heads, rows) = grid(report, view);
        if !view.title.is_empty() {
            out += &format!("{}:\n\n", view.title);
        }
        out += &format!("| {} |\n", heads.join(" | "));
        let rule: Vec<&str> = heads.iter().map(|_| "---:").collect();
        out += &format!("|{}|\n", rule.join("|"));
        for r in rows {
            out += &format!("| {} |\n", r.join(" | "));
        }
        out += "\n";
    }
    for s in &report.sources {
        out += &format!("- `{}`: {}\n", s.column, s.locator);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_keep_four_significant_digits() {
        assert_eq!(cell(Some(&json!(123.456))), "123.5");
        assert_eq!(cell(Some(&json!(0.012345))), "0.0123");
        assert_eq!(cell(Some(&json!(1.5))), "1.500");
        assert_eq!(cell(Some(&json!(12345.6))), "12346");
        assert_eq!(cell(Some(&json!(7))), "7");
        assert_eq!(cell(Some(&json!(0.0))), "0");
        assert_eq!(cell(Some(&Value::Null)), "-");
        assert_eq!(cell(Some(&json!("acp+"))), "acp+");
    }
}
