//! Line-oriented JSON reading with errors that name the file, the line and the field.
//!
//! Inputs come from other tools and from users; every failure is a [`FormatError`], never a panic.
//! Lines are limited in length ([`MAX_LINE_BYTES`]) so a hostile file cannot make one record balloon.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::FormatError;

/// The longest line accepted in a JSONL file (a generous bound: WildBench's longest record is ~200 KB).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// One parsed record and the 1-based line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Lined<T> {
    pub line: usize,
    pub value: T,
}

/// Parse one JSON value, turning serde's error into a [`FormatError`] that names the field path.
pub fn parse_value<T: DeserializeOwned>(file: &str, line: usize, text: &str) -> Result<T, FormatError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { String::new() } else { path };
        FormatError::new(file, line, field, describe(e.inner()))
    })?;
    de.end().map_err(|e| FormatError::new(file, line, "", describe(&e)))?;
    Ok(value)
}

fn describe(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match e.classify() {
        Category::Syntax | Category::Eof => format!("invalid JSON ({e})"),
        _ => {
            // serde's messages carry " at line 1 column 57" for the inner position; the line is ours.
            let msg = e.to_string();
            match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            }
        }
    }
}

/// Read every non-blank line of a JSONL file as a `T`.
///
/// Fails on the first bad line: invalid UTF-8, a line over [`MAX_LINE_BYTES`], invalid JSON, or a
/// record that does not have the expected fields. A UTF-8 byte-order mark at the start is skipped.
pub fn read_jsonl<T: DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<Vec<Lined<T>>, FormatError> {
    let mut out = Vec::new();
    for (line, text) in lines(file, bytes)? {
        out.push(Lined { line, value: parse_value(file, line, text)? });
    }
    Ok(out)
}

/// Split a JSONL file into its non-blank lines (1-based numbers), checking UTF-8 and line length.
pub fn lines<'a>(file: &str, bytes: &'a [u8]) -> Result<Vec<(usize, &'a str)>, FormatError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        if raw.len() > MAX_LINE_BYTES {
            return Err(FormatError::new(
                file,
                line,
                "",
                format!("line is {} bytes long; the limit is {} bytes", raw.len(), MAX_LINE_BYTES),
            ));
        }
        let text = std::str::from_utf8(raw)
            .map_err(|e| FormatError::new(file, line, "", format!("invalid UTF-8 at byte {} of the line", e.valid_up_to())))?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        out.push((line, text));
    }
    Ok(out)
}

/// Read a file that is either a JSON array of records or JSONL (RocketEval writes score files as
/// arrays, most other tools write JSONL). Line numbers of array elements are not tracked (0).
pub fn read_json_or_jsonl<T: DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<Vec<Lined<T>>, FormatError> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    if start.map(|i| bytes[i]) == Some(b'[') {
        let text =
            std::str::from_utf8(bytes).map_err(|e| FormatError::new(file, 0, "", format!("invalid UTF-8 at byte {}", e.valid_up_to())))?;
        let text = text.trim_start_matches('\u{feff}');
        let values: Vec<T> = parse_value(file, 0, text)?;
        return Ok(values.into_iter().map(|value| Lined { line: 0, value }).collect());
    }
    read_jsonl(file, bytes)
}

/// Serialize records as JSONL (one compact JSON object per line, each line ending in `\n`).
pub fn to_jsonl<T: Serialize>(records: &[T]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&to_jsonl_line(r));
    }
    out
}

/// One record as a JSONL line, newline included.
pub fn to_jsonl_line<T: Serialize>(record: &T) -> String {
    // Serializing plain data structs to JSON cannot fail (no maps with non-string keys, no I/O).
    let mut s = serde_json::to_string(record).expect("records serialize to JSON");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Rec {
        id: String,
        xs: Vec<f64>,
    }

    #[test]
    fn names_line_and_field() {
        let data = b"{\"id\":\"a\",\"xs\":[1]}\n\n{\"id\":\"b\",\"xs\":[1,\"x\"]}\n";
        let err = read_jsonl::<Rec>("f.jsonl", data).unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(err.field, "xs[1]");
        assert!(err.to_string().starts_with("f.jsonl:3: field `xs[1]`"), "{err}");
    }

    #[test]
    fn missing_field_and_bad_json() {
        let err = read_jsonl::<Rec>("f", b"{\"id\":\"a\"}").unwrap_err();
        assert!(err.message.contains("missing field `xs`"), "{err}");
        let err = read_jsonl::<Rec>("f", b"{\"id\":").unwrap_err();
        assert!(err.message.contains("invalid JSON"), "{err}");
        let err = read_jsonl::<Rec>("f", b"{\"id\":\"a\",\"xs\":[]} trailing").unwrap_err();
        assert!(err.message.contains("invalid JSON"), "{err}");
    }

    #[test]
    fn invalid_utf8_and_crlf_and_bom() {
        let err = read_jsonl::<Rec>("f", b"{\"id\":\"\xff\",\"xs\":[]}").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("UTF-8"));
        let ok = read_jsonl::<Rec>("f", b"\xEF\xBB\xBF{\"id\":\"a\",\"xs\":[2]}\r\n").unwrap();
        assert_eq!(ok[0].value, Rec { id: "a".into(), xs: vec![2.0] });
    }

    #[test]
    fn array_or_lines() {
        let a = read_json_or_jsonl::<Rec>("f", b" [{\"id\":\"a\",\"xs\":[]}]").unwrap();
        let b = read_json_or_jsonl::<Rec>("f", b"{\"id\":\"a\",\"xs\":[]}\n").unwrap();
        assert_eq!(a[0].value, b[0].value);
    }
}
