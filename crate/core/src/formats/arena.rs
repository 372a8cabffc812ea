//! Chatbot Arena battles: `{model_a, model_b, winner}` with winner `model_a`, `model_b` or `tie`
//! (Arena's `tie (bothbad)` reads as a tie).

use serde::{Deserialize, Serialize};

use super::jsonl::{read_json_or_jsonl, Lined};
use crate::error::FormatError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Winner {
    #[serde(rename = "model_a")]
    A,
    #[serde(rename = "model_b")]
    B,
    #[serde(rename = "tie", alias = "tie (bothbad)")]
    Tie,
}

impl Winner {
    /// The same outcome seen from the other side.
    pub fn swapped(self) -> Self {
        match self {
            Winner::A => Winner::B,
            Winner::B => Winner::A,
            Winner::Tie => Winner::Tie,
        }
    }
    /// Points for model A: 1 for a win, ½ for a tie, 0 for a loss.
    pub fn score_a(self) -> f64 {
        match self {
            Winner::A => 1.0,
            Winner::B => 0.0,
            Winner::Tie => 0.5,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Battle {
    pub model_a: String,
    pub model_b: String,
    pub winner: Winner,
    /// The query both answered (RocketEval session id), when known; an integer id is read as its digits.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::rocketeval::optional_id_string")]
    pub question_id: Option<String>,
}

pub fn read_battles(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Battle>>, FormatError> {
    let rows = read_json_or_jsonl::<Battle>(file, bytes)?;
    rows.iter().try_for_each(|r| check_battle(file, r))?;
    Ok(rows)
}

/// What every battle read must be beyond its fields' types: two models.
pub fn check_battle(file: &str, b: &Lined<Battle>) -> Result<(), FormatError> {
    if b.value.model_a == b.value.model_b {
        return Err(FormatError::new(file, b.line, "model_b", "a model cannot battle itself"));
    }
    Ok(())
}

/// Battles as Arena writes them: a JSON array.
pub fn battles_to_json(battles: &[Battle]) -> String {
    serde_json::to_string_pretty(battles).expect("battles serialize to JSON")
}

/// [`battles_to_json`]'s text written to `out` as `battles` yields them, none held.
pub fn write_battles(out: &mut dyn std::io::Write, battles: impl Iterator<Item = Battle>) -> std::io::Result<()> {
    use serde::Serializer;
    serde_json::Serializer::pretty(out).collect_seq(battles).map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bothbad() {
        let b = br#"[{"model_a":"x","model_b":"y","winner":"tie (bothbad)"},{"model_a":"x","model_b":"y","winner":"model_b"}]"#;
        let rows = read_battles("b.json", b).unwrap();
        assert_eq!(rows[0].value.winner, Winner::Tie);
        let text = battles_to_json(&rows.iter().map(|r| r.value.clone()).collect::<Vec<_>>());
        assert!(text.contains("\"winner\": \"model_b\""));
        let err = read_battles("b.json", br#"[{"model_a":"x","model_b":"y","winner":"x"}]"#).unwrap_err();
        assert_eq!(err.field, "[0].winner");
    }

    #[test]
    fn question_ids_may_be_numbers_or_absent() {
        // MT-Bench's human judgments: integer question ids, and fields of their own.
        let b = br#"[{"question_id":121,"model_a":"x","model_b":"y","winner":"tie","turn":1},{"question_id":"81_turn1","model_a":"x","model_b":"y","winner":"model_a"},{"model_a":"x","model_b":"y","winner":"model_a","question_id":null}]"#;
        let ids: Vec<_> = read_battles("b.json", b).unwrap().into_iter().map(|r| r.value.question_id).collect();
        assert_eq!(ids, [Some("121".into()), Some("81_turn1".into()), None]);
        assert!(read_battles("b.json", br#"[{"question_id":1.5,"model_a":"x","model_b":"y","winner":"tie"}]"#).is_err());
    }
}
