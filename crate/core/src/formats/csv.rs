//! CSV output that spreadsheets open safely: every text cell that a spreadsheet would evaluate as a
//! formula (leading `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `'`, and cells with
//! separators, quotes or line breaks are quoted. And CSV input: a scores file.

use super::jsonl;
use super::{Lined, Score};
use crate::error::FormatError;

/// One text cell, neutralised and quoted as needed.
pub fn text_cell(s: &str) -> String {
    let neutral = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{s}") } else { s.to_string() };
    if neutral.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", neutral.replace('"', "\"\""))
    } else {
        neutral
    }
}

/// A number cell (never neutralised: `-0.5` is a number, not a formula). Empty for NaN or missing.
pub fn number_cell(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

/// A scores CSV with the header `session_id,model_test,score` (any column order, more columns
/// ignored; no quoted fields).
pub fn read_scores_csv(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Score>>, FormatError> {
    let lines = jsonl::lines(file, bytes)?;
    let (hline, header) = lines[0];
    let names: Vec<&str> = header.trim_start_matches('\u{feff}').split(',').map(str::trim).collect();
    let col = |name: &str| {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            FormatError::new(file, hline, name, format!("the CSV header has no `{name}` column; expected session_id,model_test,score"))
        })
    };
    let (cs, cm, cv) = (col("session_id")?, col("model_test")?, col("score")?);
    let mut out = Vec::new();
    for &(line, text) in &lines[1..] {
        let cells: Vec<&str> = text.split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            return Err(FormatError::new(
                file,
                line,
                "",
                format!("{} cells where the header has {} (quoted fields are not supported)", cells.len(), names.len()),
            ));
        }
        let score: f64 = cells[cv]
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| FormatError::new(file, line, "score", format!("expected a finite number, found `{}`", cells[cv])))?;
        if cells[cs].is_empty() || cells[cm].is_empty() {
            let field = if cells[cs].is_empty() { "session_id" } else { "model_test" };
            return Err(FormatError::new(file, line, field, "expected a non-empty name"));
        }
        out.push(Lined { line, value: Score { session_id: cells[cs].into(), model_test: cells[cm].into(), score, judge: None } });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised() {
        assert_eq!(text_cell("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
        assert_eq!(text_cell("+1"), "'+1");
        assert_eq!(text_cell("@sum"), "'@sum");
        assert_eq!(text_cell("gpt-4"), "gpt-4");
        assert_eq!(text_cell("a,b"), "\"a,b\"");
        assert_eq!(number_cell(Some(-0.5)), "-0.5");
        assert_eq!(number_cell(None), "");
    }
}
