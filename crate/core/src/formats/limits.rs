//! How long a field that a judge reads whole may be. A query, a checklist item and a rubric go
//! into every prompt as they are (only a response is cut to the judge's context, and marked), so
//! one far longer than any judge's context can never be graded: such a field is refused when it is
//! read, with its file, line and field, instead of being copied into every prompt and output line.
//! The limits are far above what a context holds (Qwen2.5's 32,768 tokens are about 130 kB of
//! English) and above every public benchmark's longest (WildBench's longest record is ~200 kB).

use crate::error::FormatError;

/// A query: its conversation and reference answers together, in bytes.
pub const MAX_QUERY_BYTES: usize = 512 << 10;
/// One checklist item, in bytes.
pub const MAX_ITEM_BYTES: usize = 8 << 10;
/// A rubric (`direct --rubric`, `--rubric-file`, a line of `--rubrics`), in bytes.
pub const MAX_RUBRIC_BYTES: usize = 64 << 10;

fn too_long(file: &str, line: usize, field: impl Into<String>, what: &str, len: usize, max: usize) -> FormatError {
    FormatError::new(
        file,
        line,
        field,
        format!("{what} is {len} bytes long; at most {max} bytes are read (a judge's whole context holds far less)"),
    )
}

/// Refuse a query whose texts (its messages and reference answers) are `len` bytes together, more
/// than [`MAX_QUERY_BYTES`]; `longest` names the field of its longest message
/// (`rocketeval::Query::check_limits` measures them).
pub fn check_query_bytes(file: &str, line: usize, len: usize, longest: impl FnOnce() -> String) -> Result<(), FormatError> {
    if len > MAX_QUERY_BYTES {
        return Err(too_long(file, line, longest(), "the query", len, MAX_QUERY_BYTES));
    }
    Ok(())
}

/// Refuse a checklist item longer than [`MAX_ITEM_BYTES`].
pub fn check_items(file: &str, line: usize, items: &[String]) -> Result<(), FormatError> {
    match items.iter().position(|i| i.len() > MAX_ITEM_BYTES) {
        Some(k) => Err(too_long(file, line, format!("checklist[{k}]"), "the checklist item", items[k].len(), MAX_ITEM_BYTES)),
        None => Ok(()),
    }
}

/// Refuse a rubric longer than [`MAX_RUBRIC_BYTES`]; `field` names where it was given.
pub fn check_rubric(file: &str, line: usize, field: &str, rubric: &str) -> Result<(), FormatError> {
    if rubric.len() > MAX_RUBRIC_BYTES {
        return Err(too_long(file, line, field, "the rubric", rubric.len(), MAX_RUBRIC_BYTES));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_exact_and_names_the_field() {
        // A query's limits through the query: `rocketeval`'s tests.
        assert!(check_rubric("r.txt", 0, "--rubric-file", &"r".repeat(MAX_RUBRIC_BYTES)).is_ok());
        let e = check_rubric("r.txt", 0, "--rubric-file", &"r".repeat(MAX_RUBRIC_BYTES + 1)).unwrap_err().to_string();
        assert!(e.starts_with("r.txt: field `--rubric-file`: the rubric is 65537 bytes long"), "{e}");
    }
}
