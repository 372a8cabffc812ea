//! Line-oriented JSON reading with errors that name the file, the line and the field.
//!
//! Inputs come from other tools and from users; every failure is a [`FormatError`], never a panic.
//! Lines are limited in length ([`MAX_LINE_BYTES`]) so a hostile file cannot make one record balloon.

use std::io::{BufRead, Read};

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
        if line == 1 && looks_like_csv(text) {
            return FormatError::new(
                file,
                line,
                "",
                "this is CSV, which is not accepted here: expected JSON Lines, one JSON object per line",
            );
        }
        let path = e.path().to_string();
        let field = if path == "." { String::new() } else { path };
        FormatError::new(file, line, field, describe(e.inner()))
    })?;
    de.end().map_err(|e| FormatError::new(file, line, "", describe(&e)))?;
    Ok(value)
}

/// A first line that is no JSON value but a row of comma- (or tab-, semicolon-) separated fields: a
/// CSV header, say, where JSON Lines were expected.
fn looks_like_csv(text: &str) -> bool {
    let t = text.trim_start();
    !t.starts_with(['{', '[', '"']) && t.contains([',', '\t', ';']) && serde_json::from_str::<serde::de::IgnoredAny>(t).is_err()
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
    read_jsonl_from(file, bytes)
}

/// [`read_jsonl`] from a stream, a line at a time: only the records are held, never the file.
pub fn read_jsonl_from<T: DeserializeOwned, R: BufRead>(file: &str, reader: R) -> Result<Vec<Lined<T>>, FormatError> {
    let mut out = Vec::new();
    each_line(file, reader, |line, text, _| {
        out.push(Lined { line, value: parse_value(file, line, text)? });
        Ok(())
    })?;
    Ok(out)
}

/// Split a JSONL file into its non-blank lines (1-based numbers), checking UTF-8 and line length.
pub fn lines<'a>(file: &str, bytes: &'a [u8]) -> Result<Vec<(usize, &'a str)>, FormatError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        if raw.len() > MAX_LINE_BYTES {
            return Err(too_long(file, i + 1, raw.len()));
        }
        if let Some(text) = line_text(file, i + 1, raw)? {
            out.push((i + 1, text));
        }
    }
    Ok(out)
}

/// Each non-blank line of a JSONL stream to `each`, read a line at a time: the file is never held
/// whole, and a line is held only up to [`MAX_LINE_BYTES`] (a longer one is measured, not stored).
/// The same rules as [`lines`]; `each` learns too whether the line ended in a newline (the last line
/// of a file still being written may not, and may end inside a character: it is given up to there).
pub fn each_line<R: BufRead>(
    file: &str,
    mut reader: R,
    mut each: impl FnMut(usize, &str, bool) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let unreadable = |line: usize, e: std::io::Error| FormatError::new(file, line, "", format!("cannot read the file ({e})"));
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let n = (&mut reader).take(MAX_LINE_BYTES as u64 + 2).read_until(b'\n', &mut buf).map_err(|e| unreadable(line, e))?;
        if n == 0 {
            break;
        }
        let ended = buf.last() == Some(&b'\n');
        if ended {
            buf.pop();
        } else if buf.len() > MAX_LINE_BYTES {
            // Measure the rest of the line without keeping it.
            let mut len = buf.len();
            loop {
                let chunk = reader.fill_buf().map_err(|e| unreadable(line, e))?;
                let Some(end) = chunk.iter().position(|&b| b == b'\n').or((!chunk.is_empty()).then_some(chunk.len())) else { break };
                let newline = end < chunk.len();
                len += end;
                reader.consume(end + usize::from(newline));
                if newline {
                    break;
                }
            }
            return Err(too_long(file, line, len));
        }
        if buf.len() > MAX_LINE_BYTES {
            return Err(too_long(file, line, buf.len()));
        }
        let mut raw = if line == 1 { buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf) } else { &buf };
        if !ended {
            // A last line cut inside a character (a writer killed mid-line) is that line cut short:
            // its reader tells a record cut short, as it does one cut between characters.
            if let Err(e) = std::str::from_utf8(raw).map_err(|e| (e.error_len(), e.valid_up_to())) {
                if e.0.is_none() {
                    raw = &raw[..e.1];
                }
            }
        }
        if let Some(text) = line_text(file, line, raw)? {
            each(line, text, ended)?;
        }
    }
    Ok(())
}

fn too_long(file: &str, line: usize, len: usize) -> FormatError {
    FormatError::new(file, line, "", format!("line is {len} bytes long; the limit is {MAX_LINE_BYTES} bytes"))
}

/// A line's text without its `\r`, `None` when blank; invalid UTF-8 is an error naming the field.
fn line_text<'a>(file: &str, line: usize, raw: &'a [u8]) -> Result<Option<&'a str>, FormatError> {
    let text = std::str::from_utf8(raw).map_err(|e| invalid_utf8(file, line, raw, 0, e.valid_up_to()))?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    Ok(Some(text).filter(|t| !t.trim().is_empty()))
}

/// A JSONL file's first non-blank line as JSON, if it is JSON: what the readers that recognise a
/// file by its fields look at.
pub fn first_record(bytes: &[u8]) -> Option<serde_json::Value> {
    let first = bytes.split(|&b| b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace))?;
    serde_json::from_slice(first).ok()
}

/// Read a file that is either a JSON array of records or JSONL (RocketEval writes score files as
/// arrays, most other tools write JSONL). An array element's line is the line it starts on; an error
/// names the line serde stopped at (else the element's), and the field path from the element's index.
pub fn read_json_or_jsonl<T: DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<Vec<Lined<T>>, FormatError> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    if start.map(|i| bytes[i]) != Some(b'[') {
        return read_jsonl(file, bytes);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        invalid_utf8(file, line, bytes, line_start, at)
    })?;
    let text = text.trim_start_matches('\u{feff}');
    let lines = array_element_lines(text);
    let mut de = serde_json::Deserializer::from_str(text);
    let values: Vec<T> = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| {
            let path = e.path().to_string();
            let element = match e.path().iter().next() {
                Some(serde_path_to_error::Segment::Seq { index }) => lines.get(*index).copied(),
                _ => None,
            };
            let line = if e.inner().line() > 0 { e.inner().line() } else { element.unwrap_or(0) };
            FormatError::new(file, line, if path == "." { String::new() } else { path }, describe(e.inner()))
        })
        .and_then(|v| de.end().map(|()| v).map_err(|e| FormatError::new(file, e.line(), "", describe(&e))))?;
    Ok(values.into_iter().enumerate().map(|(i, value)| Lined { line: lines.get(i).copied().unwrap_or(0), value }).collect())
}

/// Each record of a JSON array or a JSONL stream to `each`, in order. JSONL is read a line at a time
/// ([`each_line`]), never whole; an array (its first byte `[`) is read whole, as
/// [`read_json_or_jsonl`] reads it.
pub fn each_record<T: DeserializeOwned, R: BufRead>(
    file: &str,
    mut reader: R,
    mut each: impl FnMut(Lined<T>) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let unreadable = |e: std::io::Error| FormatError::new(file, 0, "", format!("cannot read the file ({e})"));
    let peek = reader.fill_buf().map_err(unreadable)?;
    let first = peek.iter().find(|&&b| !b.is_ascii_whitespace() && !matches!(b, 0xEF | 0xBB | 0xBF));
    // A first buffer of blanks only is read whole too: what follows decides.
    if first == Some(&b'[') || (first.is_none() && !peek.is_empty()) {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map_err(unreadable)?;
        return read_json_or_jsonl(file, &bytes)?.into_iter().try_for_each(each);
    }
    each_line(file, reader, |line, text, _| each(Lined { line, value: parse_value(file, line, text)? }))
}

/// Invalid UTF-8 at byte `at` of `bytes` (valid before it), on the line starting at byte `line_start`:
/// the error names the field whose text holds the bad byte, found by scanning the valid part.
fn invalid_utf8(file: &str, line: usize, bytes: &[u8], line_start: usize, at: usize) -> FormatError {
    let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    FormatError::new(file, line, field_at_end(valid), format!("invalid UTF-8 at byte {} of the line", at - line_start))
}

/// The field path (`conversation_input[0].content`) at the end of `prefix`, the start of a JSON
/// text cut short; empty outside any field (or where the prefix is not JSON).
fn field_at_end(prefix: &str) -> String {
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    // Inside a string: whether it is a key, the key so far, and whether the last byte was a backslash.
    let mut string: Option<(bool, String, bool)> = None;
    for c in prefix.chars() {
        if let Some((is_key, key, escaped)) = &mut string {
            match c {
                _ if *escaped => {
                    *escaped = false;
                    key.push(c);
                }
                '\\' => *escaped = true,
                '"' => {
                    if let (true, Some(Frame::Object(k))) = (*is_key, stack.last_mut()) {
                        *k = Some(std::mem::take(key));
                    }
                    string = None;
                }
                _ => key.push(c),
            }
            continue;
        }
        match (c, stack.last_mut()) {
            ('"', top) => string = Some((matches!(top, Some(Frame::Object(None))), String::new(), false)),
            ('{', _) => stack.push(Frame::Object(None)),
            ('[', _) => stack.push(Frame::Array(0)),
            ('}' | ']', _) => {
                stack.pop();
            }
            (',', Some(Frame::Object(k))) => *k = None,
            (',', Some(Frame::Array(i))) => *i += 1,
            _ => {}
        }
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(k)) if path.is_empty() => path.push_str(k),
            Frame::Object(Some(k)) => {
                path.push('.');
                path.push_str(k);
            }
            Frame::Object(None) => break,
            Frame::Array(i) => path.push_str(&format!("[{i}]")),
        }
    }
    path
}

/// The 1-based line on which each element of the top-level JSON array `text` starts (for valid JSON;
/// in invalid JSON the elements before the error are found).
fn array_element_lines(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut line, mut depth, mut in_string, mut escaped, mut expect_element) = (1, 0usize, false, false, false);
    for b in text.bytes() {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if b.is_ascii_whitespace() {
            continue;
        }
        if expect_element && depth == 1 && b != b']' {
            out.push(line);
        }
        expect_element = false;
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                expect_element = depth == 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => expect_element = depth == 1,
            _ => {}
        }
    }
    out
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
    fn a_csv_file_is_named_as_csv() {
        for csv in [&b"model,score\na,1\n"[..], b"session_id\tscore\n", b"a;b\n"] {
            let err = read_jsonl::<Rec>("r.csv", csv).unwrap_err();
            assert!(err.message.starts_with("this is CSV, which is not accepted here"), "{err}");
        }
        // Not CSV: a JSON line with a comma, a record of the wrong shape, a later line.
        assert!(!read_jsonl::<Rec>("f", b"{\"id\":1,\"xs\":[]}").unwrap_err().message.contains("CSV"));
        assert!(!read_jsonl::<Rec>("f", b"{\"id\":\"a\",\"xs\":[]}\nx,y\n").unwrap_err().message.contains("CSV"));
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

    /// The streaming reader and the whole-file one see the same lines and fail the same way; a stream
    /// is read through a small buffer so lines cross its refills.
    #[test]
    fn each_line_reads_as_lines_does() {
        let streamed = |bytes: &[u8]| {
            let mut seen = Vec::new();
            each_line("f", std::io::BufReader::with_capacity(3, bytes), |line, text, ended| {
                seen.push((line, text.to_string(), ended));
                Ok(())
            })
            .map(|()| seen)
        };
        for bytes in [
            &b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"[..],
            b"",
            b"\n\n",
            b"x\n\xEF\xBB\xBFy\n",
            b"{\"id\":\"a\"}\n{\"x\":\"\xff\"}\n",
        ] {
            let whole = lines("f", bytes).map(|v| v.into_iter().map(|(l, t)| (l, t.to_string())).collect::<Vec<_>>());
            let stream = streamed(bytes).map(|v| v.into_iter().map(|(l, t, _)| (l, t)).collect::<Vec<_>>());
            assert_eq!(stream, whole, "{}", String::from_utf8_lossy(bytes));
        }
        let ends: Vec<bool> = streamed(b"1\n2").unwrap().into_iter().map(|(_, _, e)| e).collect();
        assert_eq!(ends, [true, false]);
        // A last line cut inside a character is given as far as it goes; a bad byte there is an error.
        assert_eq!(streamed(b"1\n\"\xC3").unwrap()[1], (2, "\"".to_string(), false));
        assert!(streamed(b"1\n\"\xFF").is_err());
        // A line over the limit is measured, not kept, and named with its length; so is the last one.
        let mut long = vec![b'x'; MAX_LINE_BYTES + 5];
        long.extend_from_slice(b"\n{}\n");
        let err = streamed(&long).unwrap_err();
        assert_eq!(
            (err.line, err.message.clone()),
            (1, format!("line is {} bytes long; the limit is {MAX_LINE_BYTES} bytes", MAX_LINE_BYTES + 5))
        );
        let err = streamed(&long[..MAX_LINE_BYTES + 1]).unwrap_err();
        assert!(err.message.starts_with(&format!("line is {} bytes", MAX_LINE_BYTES + 1)), "{err}");
        assert_eq!(streamed(&long[..MAX_LINE_BYTES]).unwrap().len(), 1);
    }

    #[test]
    fn invalid_utf8_and_crlf_and_bom() {
        let err = read_jsonl::<Rec>("f", b"{\"id\":\"\xff\",\"xs\":[]}").unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (1, "id"));
        assert!(err.message.contains("UTF-8"));
        let err = read_jsonl::<Rec>("f", b"{\"id\":\"a\",\"xs\":[]}\n{\"x\":{\"y\":[1,{\"z\":\"\\\",]\xff\"}]}}").unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (2, "x.y[1].z"));
        let err = read_jsonl::<Rec>("f", b"{\"i\xffd\":1}").unwrap_err();
        assert_eq!(err.field, "");
        let ok = read_jsonl::<Rec>("f", b"\xEF\xBB\xBF{\"id\":\"a\",\"xs\":[2]}\r\n").unwrap();
        assert_eq!(ok[0].value, Rec { id: "a".into(), xs: vec![2.0] });
    }

    #[test]
    fn array_or_lines() {
        let a = read_json_or_jsonl::<Rec>("f", b" [{\"id\":\"a\",\"xs\":[]}]").unwrap();
        let b = read_json_or_jsonl::<Rec>("f", b"{\"id\":\"a\",\"xs\":[]}\n").unwrap();
        assert_eq!(a[0].value, b[0].value);
        assert_eq!((a[0].line, b[0].line), (1, 1));
    }

    #[test]
    fn array_elements_have_lines() {
        // Pretty-printed, as RocketEval and `rocketjudge score` write score files; strings with brackets,
        // commas and escaped quotes do not confuse the element scan.
        let pretty = "\u{feff}[\n  {\n    \"id\": \"a,[\\\"]{\",\n    \"xs\": [1, 2]\n  },\n\n  {\"id\": \"b\", \"xs\": []}, {\"id\": \"c\", \"xs\": [3]}\n]\n";
        let rows = read_json_or_jsonl::<Rec>("f", pretty.as_bytes()).unwrap();
        assert_eq!(rows.iter().map(|r| (r.value.id.as_str(), r.line)).collect::<Vec<_>>(), [("a,[\"]{", 2), ("b", 7), ("c", 7)]);
        assert!(read_json_or_jsonl::<Rec>("f", b"[\n]").unwrap().is_empty());
        // A wrong type names the line serde stopped at and the element's index.
        let err = read_json_or_jsonl::<Rec>("f", b"[\n{\"id\":\"a\",\"xs\":[]},\n{\"id\":\"b\",\n \"xs\":[\"x\"]}\n]").unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (4, "[1].xs[0]"), "{err}");
        // A missing field: serde names the end of the element.
        let err = read_json_or_jsonl::<Rec>("f", b"[{\"id\":\"a\",\"xs\":[]},\n {\"id\":\"b\"}]").unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (2, "[1]"), "{err}");
        let err = read_json_or_jsonl::<Rec>("f", b"[{\"id\":\"a\",\"xs\":[]},\n\n {\"id\":\"b\" \"xs\":[]}]").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.message.contains("invalid JSON"), "{err}");
        let err = read_json_or_jsonl::<Rec>("f", b"[\n{\"id\":\"a\",\"xs\":[]}]\n,").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        let err = read_json_or_jsonl::<Rec>("f", b"[\n{\"id\":\"\xff\",\"xs\":[]}]").unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (2, "[0].id"), "{err}");
        assert!(err.message.contains("invalid UTF-8 at byte 7 of the line"), "{err}");
    }
}
