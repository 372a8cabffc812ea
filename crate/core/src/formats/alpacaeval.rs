//! AlpacaEval `model_outputs.json`: a JSON array of `{instruction, output, generator}`.
//!
//! AlpacaEval has no instance ids, so the session id is derived from the instruction text
//! (`alpaca_` + the first 12 hex digits of its SHA-256): outputs of different models for the same
//! instruction meet, whatever order their files are in.

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::jsonl::parse_value;
use super::rocketeval::{Message, Query, Response, Role};
use crate::error::FormatError;

#[derive(Debug, Clone, Deserialize)]
pub struct Output {
    pub instruction: String,
    pub output: String,
    #[serde(default)]
    pub generator: String,
    #[serde(default)]
    pub dataset: Option<String>,
}

/// The session id of an AlpacaEval instruction.
pub fn session_id(instruction: &str) -> String {
    let digest = Sha256::digest(instruction.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("alpaca_{hex}")
}

/// Read `model_outputs.json` into queries (one per instruction) and responses.
pub fn read_model_outputs(file: &str, bytes: &[u8], model: &str) -> Result<(Vec<Query>, Vec<Response>), FormatError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| FormatError::new(file, 0, "", format!("invalid UTF-8 at byte {}", e.valid_up_to())))?;
    let outputs: Vec<Output> = parse_value(file, 0, text.trim_start_matches('\u{feff}'))?;
    let mut queries = Vec::with_capacity(outputs.len());
    let mut responses = Vec::with_capacity(outputs.len());
    for o in outputs {
        let sid = session_id(&o.instruction);
        queries.push(Query {
            session_id: sid.clone(),
            conversation_input: vec![Message::new(Role::User, o.instruction.clone())],
            checklist: Vec::new(),
            references: Default::default(),
            category: o.dataset.clone(),
        });
        responses.push(Response {
            session_id: sid,
            chat_history: vec![Message::new(Role::User, o.instruction)],
            output: vec![o.output],
            generator: if o.generator.is_empty() { model.to_string() } else { o.generator },
        });
    }
    Ok((queries, responses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_instruction() {
        let a = br#"[{"instruction": "Say hi", "output": "hi", "generator": "m1"}]"#;
        let (q, r) = read_model_outputs("model_outputs.json", a, "x").unwrap();
        assert_eq!(q[0].session_id, r[0].session_id);
        assert_eq!(q[0].session_id, session_id("Say hi"));
        assert_eq!(r[0].generator, "m1");
        let err = read_model_outputs("o.json", br#"[{"instruction": "x"}]"#, "m").unwrap_err();
        assert_eq!(err.field, "[0]");
        assert!(err.message.contains("missing field `output`"), "{err}");
    }
}
