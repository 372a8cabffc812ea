//! Which shape a file has, from its first record: the field names of the first JSON object (a JSON
//! Lines file's first line or a JSON array's first element) or a CSV header — for readers that accept
//! several formats and pick one by its fields (a strong judge's verdicts).

use serde::de::{Deserializer as _, IgnoredAny, SeqAccess, Visitor};

use super::jsonl;
use crate::error::FormatError;

/// The 1-based line and the field names of the first record: of a JSON object (first JSONL line or
/// first array element), or of a CSV header (then the flag is true). `expected` names the shapes the
/// caller reads, for the error when the file is none of them.
pub fn first_record_keys(file: &str, bytes: &[u8], expected: &str) -> Result<Option<(usize, Vec<String>, bool)>, FormatError> {
    let lines = jsonl::lines(file, bytes)?;
    let Some(&(line, text)) = lines.first() else { return Ok(None) };
    let head = text.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with('[') {
        let text = std::str::from_utf8(bytes).map_err(|_| FormatError::new(file, 0, "", "invalid UTF-8"))?.trim_start_matches('\u{feff}');
        let mut de = serde_json::Deserializer::from_str(text);
        return match de.deserialize_seq(FirstKeys) {
            Ok(None) => Ok(None),
            // The element's line: the first `{` after the `[`.
            Ok(Some(keys)) => {
                let at = text.find('{').unwrap_or(0);
                Ok(Some((1 + text[..at].matches('\n').count(), keys, false)))
            }
            // Malformed: the array reader says where.
            Err(_) => match jsonl::read_json_or_jsonl::<IgnoredAny>(file, bytes) {
                Err(e) => Err(e),
                Ok(_) => Err(FormatError::new(file, line, "", format!("expected a JSON array of objects: {expected}"))),
            },
        };
    }
    if head.starts_with('{') {
        let record: serde_json::Map<String, serde_json::Value> = jsonl::parse_value(file, line, text)?;
        return Ok(Some((line, record.keys().cloned().collect(), false)));
    }
    if head.contains(',') {
        return Ok(Some((line, head.split(',').map(|c| c.trim().to_string()).collect(), true)));
    }
    Err(FormatError::new(file, line, "", format!("expected JSON records or a CSV header: {expected}")))
}

/// The keys of the first element of a JSON array, skipping the rest without building it.
struct FirstKeys;

impl<'de> Visitor<'de> for FirstKeys {
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let first: Option<serde_json::Map<String, serde_json::Value>> = seq.next_element()?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first.map(|m| m.keys().cloned().collect()))
    }
}
