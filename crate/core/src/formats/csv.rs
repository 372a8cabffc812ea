//! CSV output that spreadsheets open safely: every text cell that a spreadsheet would evaluate as a
//! formula (leading `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `'`, and cells with
//! separators, quotes or line breaks are quoted.

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
