//! RocketEval / WildBench records: queries, responses, checklists, judgments, scores, rankings.
//!
//! Field names follow RocketEval's data files so its outputs and ours can be mixed. Where the field
//! shapes vary between tools (an `output` that is a string or a list, a `chat_history` of strings or
//! of `{role, content}` messages, numeric or string ids) both shapes are accepted and normalised.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::jsonl::{self, Lined};
use super::limits;
use crate::error::FormatError;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self { role, content: content.into() }
    }
}

/// A benchmark instance: the conversation so far (its last message is the user query to answer),
/// the checklist that grades answers to it, and reference answers by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    #[serde(deserialize_with = "id_string")]
    pub session_id: String,
    pub conversation_input: Vec<Message>,
    #[serde(default)]
    pub checklist: Vec<String>,
    #[serde(default, deserialize_with = "references")]
    pub references: BTreeMap<String, String>,
    /// Category for per-category tables (MT-Bench `category`, WildBench `primary_tag`).
    #[serde(default, alias = "primary_tag", skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

impl Query {
    /// Refuse a query longer than [`limits::MAX_QUERY_BYTES`] or with an item longer than
    /// [`limits::MAX_ITEM_BYTES`], naming the field.
    pub fn check_limits(&self, file: &str, line: usize) -> Result<(), FormatError> {
        let messages = self.conversation_input.iter().map(|m| m.content.len()).sum::<usize>();
        let longest = || {
            let i = self.conversation_input.iter().enumerate().max_by_key(|(_, m)| m.content.len()).map_or(0, |(i, _)| i);
            format!("conversation_input[{i}].content")
        };
        limits::check_query_bytes(file, line, messages + self.references.values().map(String::len).sum::<usize>(), longest)?;
        limits::check_items(file, line, &self.checklist)
    }

    /// The user query this instance asks to answer (the last message).
    pub fn user_query(&self) -> &str {
        self.conversation_input.last().map(|m| m.content.as_str()).unwrap_or("")
    }
    /// The messages before the user query.
    pub fn history(&self) -> &[Message] {
        let n = self.conversation_input.len();
        &self.conversation_input[..n.saturating_sub(1)]
    }
    /// The reference answer the prompts that show one use: `references["gpt-4"]`, else the first.
    pub fn reference_answer(&self) -> Option<&str> {
        self.references.get("gpt-4").or_else(|| self.references.values().next()).map(String::as_str)
    }
}

/// One model's answer to one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    #[serde(deserialize_with = "id_string")]
    pub session_id: String,
    /// The conversation the model saw, ending with the user query (WildBench writes strings that
    /// alternate user/assistant; `{role, content}` objects are accepted too).
    #[serde(default, deserialize_with = "chat_history", serialize_with = "chat_history_out")]
    pub chat_history: Vec<Message>,
    /// The model's answer. RocketEval grades the first element when it is a list.
    #[serde(deserialize_with = "one_or_many")]
    pub output: Vec<String>,
    /// The model that wrote it (`model_test` in judgments).
    #[serde(default)]
    pub generator: String,
}

impl Response {
    /// The text that is graded.
    pub fn answer(&self) -> &str {
        self.output.first().map(String::as_str).unwrap_or("")
    }
}

/// A checklist for one query (RocketEval's `checklist.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checklist {
    #[serde(deserialize_with = "id_string")]
    pub session_id: String,
    pub checklist: Vec<String>,
    /// Who made it and how (generator model, prompt version, date), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

/// Which vocabulary ids the judge read as "Yes" and "No" (the first of each is the primary id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerTokens {
    pub yes: Vec<u32>,
    pub no: Vec<u32>,
}

/// A judge's grades of one response: one normalised p(Yes) per checklist item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    #[serde(deserialize_with = "id_string")]
    pub session_id: String,
    pub model_test: String,
    #[serde(default)]
    pub judge: String,
    /// p(Yes)/(p(Yes)+p(No)) per item; `null` where the item could not be graded.
    pub norm_probability: Vec<Option<f64>>,
    /// RocketEval's human-readable form of each probability, e.g. `"Yes (83.0)%"`.
    #[serde(default)]
    pub judgment: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<AnswerTokens>,
    /// The grading prompt's version (see `prompt::GRADING_PROMPT_VERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Characters of the response cut to fit the judge's context (absent when it fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_chars: Option<usize>,
    /// How the item probabilities become the score (absent: the expectation, RocketEval's mean p(Yes)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoding: Option<crate::decoding::Decoding>,
}

impl Judgment {
    pub fn new(session_id: &str, model_test: &str, judge: &str, probs: Vec<Option<f64>>) -> Self {
        let judgment = probs.iter().map(|p| judgment_label(*p)).collect();
        Self {
            session_id: session_id.to_string(),
            model_test: model_test.to_string(),
            judge: judge.to_string(),
            norm_probability: probs,
            judgment,
            tokens: None,
            prompt_version: None,
            truncated_chars: None,
            decoding: None,
        }
    }

    /// The record of a response a judge has just graded: its items' p(Yes), the judge's Yes/No token ids,
    /// the version of the grading prompt's wording (`prompt::PromptStyle::version`), and the characters
    /// cut to fit the context (0: none).
    /// The CLI's `grade` and the browser's worker store exactly this.
    pub fn from_grade(
        session_id: &str,
        model_test: &str,
        judge: &str,
        p_yes: impl IntoIterator<Item = f64>,
        tokens: AnswerTokens,
        truncated_chars: usize,
        prompt_version: &str,
    ) -> Self {
        let mut j = Self::new(session_id, model_test, judge, p_yes.into_iter().map(Some).collect());
        j.tokens = Some(tokens);
        j.prompt_version = Some(prompt_version.to_string());
        j.truncated_chars = (truncated_chars > 0).then_some(truncated_chars);
        j
    }

    /// Check what serde cannot: probabilities in [0, 1] and `judgment` as long as `norm_probability`.
    pub fn validate(&self, file: &str, line: usize) -> Result<(), FormatError> {
        for (i, p) in self.norm_probability.iter().enumerate() {
            if let Some(p) = p {
                if !(0.0..=1.0).contains(p) {
                    return Err(FormatError::new(
                        file,
                        line,
                        format!("norm_probability[{i}]"),
                        format!("expected a probability in [0, 1] or null, found {p}"),
                    ));
                }
            }
        }
        if !self.judgment.is_empty() && self.judgment.len() != self.norm_probability.len() {
            return Err(FormatError::new(
                file,
                line,
                "judgment",
                format!(
                    "has {} entries but norm_probability has {}; they must be the same length",
                    self.judgment.len(),
                    self.norm_probability.len()
                ),
            ));
        }
        if self.session_id.is_empty() {
            return Err(FormatError::new(file, line, "session_id", "must not be empty"));
        }
        Ok(())
    }
}

/// RocketEval's label for a normalised probability (`tools/utils.py::get_judgment`), kept byte-for-byte.
pub fn judgment_label(p: Option<f64>) -> String {
    match p {
        Some(p) if !p.is_nan() && (p - 0.5).abs() >= 1e-3 => {
            let word = if p > 0.5 { "Yes" } else { "No" };
            format!("{word} ({:.1})%", p * 100.0)
        }
        _ => "Unsure".to_string(),
    }
}

/// A response's score (1–10 for RocketEval scores, whatever scale a label file uses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    #[serde(deserialize_with = "id_string")]
    pub session_id: String,
    pub model_test: String,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
}

/// One row of a ranking file. Accepts RocketEval's `{name, rating, lower, upper}` and our
/// `{model, score, lower, upper, rank}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingEntry {
    #[serde(alias = "model")]
    pub name: String,
    #[serde(alias = "score")]
    pub rating: f64,
    #[serde(default)]
    pub lower: Option<f64>,
    #[serde(default)]
    pub upper: Option<f64>,
}

/// Read records and check each with `validate`, keeping the line of every record.
pub fn read_validated<T, F>(file: &str, bytes: &[u8], validate: F) -> Result<Vec<Lined<T>>, FormatError>
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T, &str, usize) -> Result<(), FormatError>,
{
    read_validated_from(file, bytes, validate)
}

/// [`read_validated`] from a stream, a line at a time (only the records are held, never the file).
pub fn read_validated_from<T, F, R>(file: &str, reader: R, validate: F) -> Result<Vec<Lined<T>>, FormatError>
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T, &str, usize) -> Result<(), FormatError>,
    R: std::io::BufRead,
{
    let mut rows = Vec::new();
    each_validated(file, reader, validate, |r| rows.push(r))?;
    Ok(rows)
}

/// Each record of a JSONL stream to `each`, read a line at a time, as the `read_*` functions read a
/// file: a malformed line is the error whatever comes before it, then the first record that fails
/// `validate` (from that one on, `each` sees no more while the remaining lines are parsed).
pub fn each_validated<T, F, R>(file: &str, reader: R, validate: F, mut each: impl FnMut(Lined<T>)) -> Result<(), FormatError>
where
    T: serde::de::DeserializeOwned,
    F: Fn(&T, &str, usize) -> Result<(), FormatError>,
    R: std::io::BufRead,
{
    let mut invalid = None;
    jsonl::each_line(file, reader, |line, text, _| {
        let value: T = jsonl::parse_value(file, line, text)?;
        if invalid.is_none() {
            match validate(&value, file, line) {
                Ok(()) => each(Lined { line, value }),
                Err(e) => invalid = Some(e),
            }
        }
        Ok(())
    })?;
    invalid.map_or(Ok(()), Err)
}

/// Read a queries JSONL file, refusing a query or checklist item too long to judge ([`super::limits`]).
pub fn read_queries(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Query>>, FormatError> {
    read_queries_from(file, bytes)
}

/// [`read_queries`] from a stream, a line at a time.
pub fn read_queries_from(file: &str, reader: impl std::io::BufRead) -> Result<Vec<Lined<Query>>, FormatError> {
    read_validated_from(file, reader, |q: &Query, f, l| q.check_limits(f, l))
}

/// Read a checklists JSONL file (`checklist.jsonl`), refusing an item too long to judge.
pub fn read_checklists(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Checklist>>, FormatError> {
    read_checklists_from(file, bytes)
}

/// [`read_checklists`] from a stream, a line at a time.
pub fn read_checklists_from(file: &str, reader: impl std::io::BufRead) -> Result<Vec<Lined<Checklist>>, FormatError> {
    read_validated_from(file, reader, |c: &Checklist, f, l| limits::check_items(f, l, &c.checklist))
}

/// Read a judgments JSONL file, validating every record.
pub fn read_judgments(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Judgment>>, FormatError> {
    read_validated(file, bytes, |j: &Judgment, f, l| j.validate(f, l))
}

/// Read a score file (JSON array, as RocketEval writes it, or JSONL), rejecting non-finite scores.
pub fn read_scores(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Score>>, FormatError> {
    let rows = jsonl::read_json_or_jsonl::<Score>(file, bytes)?;
    rows.iter().try_for_each(|r| check_score(file, r))?;
    Ok(rows)
}

/// What every score read must be beyond its fields' types: a finite number.
pub fn check_score(file: &str, s: &Lined<Score>) -> Result<(), FormatError> {
    if !s.value.score.is_finite() {
        return Err(FormatError::new(file, s.line, "score", "expected a finite number"));
    }
    Ok(())
}

/// Read a ranking file: a JSON array of entries.
pub fn read_ranking(file: &str, bytes: &[u8]) -> Result<Vec<RankingEntry>, FormatError> {
    let rows = jsonl::read_json_or_jsonl::<RankingEntry>(file, bytes)?;
    let mut out = Vec::with_capacity(rows.len());
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, r) in rows.into_iter().enumerate() {
        let e = r.value;
        let finite = e.rating.is_finite() && e.lower.is_none_or(f64::is_finite) && e.upper.is_none_or(f64::is_finite);
        if !finite {
            return Err(FormatError::new(file, r.line, format!("[{i}]"), "ratings and bounds must be finite numbers"));
        }
        if let (Some(lo), Some(hi)) = (e.lower, e.upper) {
            if lo > hi {
                return Err(FormatError::new(
                    file,
                    r.line,
                    format!("[{i}].lower"),
                    format!("the interval's lower bound {lo} is above its upper bound {hi}"),
                ));
            }
        }
        if let Some(first) = seen.insert(e.name.clone(), r.line) {
            return Err(FormatError::new(
                file,
                r.line,
                format!("[{i}].name"),
                format!("the model `{}` is listed twice (first on line {first}); a ranking names each model once", e.name),
            ));
        }
        out.push(e);
    }
    if out.is_empty() {
        return Err(FormatError::new(file, 0, "", "the ranking is empty"));
    }
    Ok(out)
}

// ---- serde helpers for the shapes other tools write ----

/// Ids may be strings or integers (FastChat's `question_id`); both become strings.
/// An optional id, a string or an integer (MT-Bench's human judgments number their questions).
pub(crate) fn optional_id_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    struct Id(#[serde(deserialize_with = "id_string")] String);
    Ok(Option::<Id>::deserialize(d)?.map(|i| i.0))
}

pub(crate) fn id_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        S(String),
        I(i64),
    }
    match Id::deserialize(d).map_err(|_| serde::de::Error::custom("expected a string or integer id"))? {
        Id::S(s) => Ok(s),
        Id::I(i) => Ok(i.to_string()),
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    match OneOrMany::deserialize(d).map_err(|_| serde::de::Error::custom("expected a string or a list of strings"))? {
        OneOrMany::One(s) => Ok(vec![s]),
        OneOrMany::Many(v) if v.is_empty() => Err(serde::de::Error::custom("expected at least one output")),
        OneOrMany::Many(v) => Ok(v),
    }
}

fn references<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let raw = Option::<BTreeMap<String, Option<String>>>::deserialize(d)?;
    Ok(raw.unwrap_or_default().into_iter().filter_map(|(k, v)| v.map(|v| (k, v))).collect())
}

fn chat_history<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Message>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Turn {
        Text(String),
        Msg(Message),
    }
    let turns = Option::<Vec<Turn>>::deserialize(d)
        .map_err(|_| serde::de::Error::custom("expected a list of strings or of {role, content} messages"))?
        .unwrap_or_default();
    Ok(turns
        .into_iter()
        .enumerate()
        .map(|(i, t)| match t {
            Turn::Text(s) => Message::new(if i % 2 == 0 { Role::User } else { Role::Assistant }, s),
            Turn::Msg(m) => m,
        })
        .collect())
}

fn chat_history_out<S: Serializer>(h: &[Message], s: S) -> Result<S::Ok, S::Error> {
    // WildBench's shape: alternating strings. Fall back to message objects when roles do not alternate.
    let alternating = h.iter().enumerate().all(|(i, m)| m.role == if i % 2 == 0 { Role::User } else { Role::Assistant });
    if alternating {
        s.collect_seq(h.iter().map(|m| &m.content))
    } else {
        s.collect_seq(h.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::jsonl::read_jsonl;

    #[test]
    fn a_query_over_its_limits_is_refused_naming_the_field() {
        let query = |content: usize, item: usize| {
            let q = serde_json::json!({"session_id": "a", "conversation_input": [{"role": "user", "content": "x".repeat(content)}], "checklist": ["ok?", "y".repeat(item)]});
            read_jsonl::<Query>("q.jsonl", format!("{q}\n").as_bytes()).unwrap().remove(0).value
        };
        assert!(query(limits::MAX_QUERY_BYTES, limits::MAX_ITEM_BYTES).check_limits("q.jsonl", 1).is_ok());
        let e = query(limits::MAX_QUERY_BYTES + 1, 1).check_limits("q.jsonl", 3).unwrap_err().to_string();
        assert!(e.starts_with("q.jsonl:3: field `conversation_input[0].content`: the query is 524289 bytes long"), "{e}");
        let e = query(10, limits::MAX_ITEM_BYTES + 1).check_limits("q.jsonl", 3).unwrap_err().to_string();
        assert!(e.starts_with("q.jsonl:3: field `checklist[1]`: the checklist item is 8193 bytes long"), "{e}");
    }

    #[test]
    fn response_shapes() {
        let a = read_jsonl::<Response>("r", br#"{"session_id": 81, "chat_history": ["q1", "a1", "q2"], "output": "x", "generator": "m"}"#)
            .unwrap();
        let r = &a[0].value;
        assert_eq!(r.session_id, "81");
        assert_eq!(r.chat_history[1], Message::new(Role::Assistant, "a1"));
        assert_eq!(r.answer(), "x");
        let back: serde_json::Value = serde_json::to_value(r).unwrap();
        assert_eq!(back["chat_history"][2], "q2");
        let err = read_jsonl::<Response>("r", br#"{"session_id": "a", "output": []}"#).unwrap_err();
        assert_eq!(err.field, "output");
    }

    #[test]
    fn role_must_be_known() {
        let err = read_jsonl::<Query>("q", br#"{"session_id":"a","conversation_input":[{"role":"bot","content":"x"}]}"#).unwrap_err();
        assert_eq!(err.field, "conversation_input[0].role");
        assert!(err.message.contains("unknown variant `bot`"), "{err}");
    }

    #[test]
    fn judgment_validation() {
        let bad = br#"{"session_id":"a","model_test":"m","norm_probability":[0.2, 1.5],"judgment":["No","Yes"]}"#;
        let err = read_judgments("j", bad).unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (1, "norm_probability[1]"));
        let uneven = br#"{"session_id":"a","model_test":"m","norm_probability":[0.2, null],"judgment":["No"]}"#;
        assert_eq!(read_judgments("j", uneven).unwrap_err().field, "judgment");
    }

    #[test]
    fn labels_match_rocketeval() {
        assert_eq!(judgment_label(Some(0.8304)), "Yes (83.0)%");
        assert_eq!(judgment_label(Some(0.1)), "No (10.0)%");
        assert_eq!(judgment_label(Some(0.5004)), "Unsure");
        assert_eq!(judgment_label(None), "Unsure");
    }
}
