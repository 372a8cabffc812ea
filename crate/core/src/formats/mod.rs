//! Reading, writing and checking the files the field exchanges.
//!
//! - [`rocketeval`]: RocketEval / WildBench queries, responses, checklists, judgments, scores, rankings.
//! - [`fastchat`]: FastChat MT-Bench questions, model answers and single-answer judgments.
//! - [`alpacaeval`]: AlpacaEval `model_outputs.json`.
//! - [`arena`]: Chatbot Arena battles.
//! - [`Benchmark`]: queries joined with checklists, and the consistency checks between queries,
//!   checklists and responses. Every problem is reported with file and line; nothing is dropped silently.

pub mod alpacaeval;
pub mod arena;
pub mod csv;
pub mod fastchat;
pub mod jsonl;
pub mod rocketeval;

use std::collections::HashMap;

use serde::Serialize;

pub use arena::{Battle, Winner};
pub use jsonl::Lined;
pub use rocketeval::{judgment_label, AnswerTokens, Checklist, Judgment, Message, Query, RankingEntry, Response, Role, Score};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The record cannot be used (it would be graded wrongly or not at all).
    Error,
    /// The record is usable but suspicious (an empty answer, a truncated conversation).
    Warning,
}

/// Something wrong between records: an unknown id, a duplicate, a missing checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub severity: Severity,
    pub file: String,
    /// 1-based line, 0 when not known (JSON arrays) or not applicable.
    pub line: usize,
    pub session_id: String,
    pub message: String,
}

impl Problem {
    pub fn error(file: &str, line: usize, session_id: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, file, line, session_id, message)
    }
    pub fn warning(file: &str, line: usize, session_id: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, file, line, session_id, message)
    }
    fn new(severity: Severity, file: &str, line: usize, session_id: &str, message: impl Into<String>) -> Self {
        Self { severity, file: file.to_string(), line, session_id: session_id.to_string(), message: message.into() }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}: {}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": session `{}`: {}", self.session_id, self.message)
    }
}

/// Queries with their checklists, indexed by session id.
#[derive(Debug, Clone, Default)]
pub struct Benchmark {
    pub queries: Vec<Query>,
    index: HashMap<String, usize>,
}

impl Benchmark {
    /// Index queries by session id. A repeated id is an error problem; the first occurrence is kept.
    pub fn new(file: &str, queries: Vec<Lined<Query>>) -> (Self, Vec<Problem>) {
        let mut b = Benchmark::default();
        let mut problems = Vec::new();
        let mut first_line = HashMap::new();
        for q in queries {
            let sid = q.value.session_id.clone();
            if let Some(first) = first_line.get(&sid) {
                problems.push(Problem::error(file, q.line, &sid, format!("duplicate session_id (first on line {first})")));
                continue;
            }
            first_line.insert(sid.clone(), q.line);
            if q.value.conversation_input.is_empty() {
                problems.push(Problem::error(file, q.line, &sid, "conversation_input is empty"));
            } else if q.value.conversation_input.last().map(|m| m.role) != Some(Role::User) {
                problems.push(Problem::error(file, q.line, &sid, "the last message of conversation_input must be the user's"));
            }
            b.index.insert(sid, b.queries.len());
            b.queries.push(q.value);
        }
        (b, problems)
    }

    pub fn get(&self, session_id: &str) -> Option<&Query> {
        self.index.get(session_id).map(|&i| &self.queries[i])
    }

    pub fn len(&self) -> usize {
        self.queries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Replace the queries' checklists with those of a checklist file.
    pub fn attach_checklists(&mut self, file: &str, checklists: Vec<Lined<Checklist>>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for c in checklists {
            let sid = &c.value.session_id;
            if let Some(first) = seen.get(sid) {
                problems.push(Problem::error(file, c.line, sid, format!("duplicate checklist (first on line {first})")));
                continue;
            }
            seen.insert(sid.clone(), c.line);
            match self.index.get(sid) {
                Some(&i) => self.queries[i].checklist = c.value.checklist,
                None => problems.push(Problem::error(file, c.line, sid, "checklist for a session that has no query")),
            }
        }
        problems
    }

    /// Queries that cannot be graded: no checklist, or an empty checklist item.
    pub fn check_checklists(&self, file: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        for q in &self.queries {
            if q.checklist.is_empty() {
                problems.push(Problem::error(file, 0, &q.session_id, "no checklist for this query"));
            } else if let Some(i) = q.checklist.iter().position(|c| c.trim().is_empty()) {
                problems.push(Problem::error(file, 0, &q.session_id, format!("checklist item {} is empty", i + 1)));
            }
        }
        problems
    }

    /// Responses whose session has no query, repeated sessions within one model's file, empty answers.
    pub fn check_responses(&self, file: &str, responses: &[Lined<Response>]) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
        for r in responses {
            let v = &r.value;
            if self.get(&v.session_id).is_none() {
                problems.push(Problem::error(file, r.line, &v.session_id, "response to a session that has no query"));
            }
            if let Some(first) = seen.insert((v.session_id.as_str(), v.generator.as_str()), r.line) {
                problems.push(Problem::error(
                    file,
                    r.line,
                    &v.session_id,
                    format!("duplicate response of `{}` (first on line {first})", v.generator),
                ));
            }
            if v.answer().trim().is_empty() {
                problems.push(Problem::warning(file, r.line, &v.session_id, "the answer is empty; it is graded as it is"));
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::jsonl::read_jsonl;

    #[test]
    fn every_inconsistency_is_reported() {
        let q = br#"{"session_id":"a","conversation_input":[{"role":"user","content":"x"}],"checklist":["ok?"]}
{"session_id":"b","conversation_input":[{"role":"user","content":"y"}]}
{"session_id":"a","conversation_input":[{"role":"user","content":"z"}]}
{"session_id":"c","conversation_input":[{"role":"user","content":"y"},{"role":"assistant","content":"y"}]}"#;
        let (mut b, p) = Benchmark::new("q.jsonl", read_jsonl("q.jsonl", q).unwrap());
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!((p[0].line, p[1].line), (3, 4));
        let c = br#"{"session_id":"zz","checklist":["x?"]}
{"session_id":"b","checklist":["y?"]}"#;
        let p = b.attach_checklists("c.jsonl", read_jsonl("c.jsonl", c).unwrap());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].session_id, "zz");
        let p = b.check_checklists("q.jsonl");
        assert_eq!(p.iter().map(|p| p.session_id.as_str()).collect::<Vec<_>>(), ["c"]);
        let r = br#"{"session_id":"a","output":"x","generator":"m"}
{"session_id":"nope","output":"x","generator":"m"}
{"session_id":"a","output":"  ","generator":"m"}"#;
        let p = b.check_responses("r.jsonl", &read_jsonl("r.jsonl", r).unwrap());
        let kinds: Vec<_> = p.iter().map(|p| (p.line, p.severity)).collect();
        assert_eq!(kinds, [(2, Severity::Error), (3, Severity::Error), (3, Severity::Warning)]);
    }
}
