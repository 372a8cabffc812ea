//! Reading, writing and checking the files the field exchanges.
//!
//! - [`rocketeval`]: RocketEval / WildBench queries, responses, checklists, judgments, scores, rankings.
//! - [`fastchat`]: FastChat MT-Bench questions, model answers and single-answer judgments.
//! - [`alpacaeval`]: AlpacaEval `model_outputs.json`.
//! - [`arena`]: Chatbot Arena battles.
//! - [`Benchmark`]: queries joined with checklists, and the consistency checks between queries,
//!   checklists and responses. Every problem is reported with file and line; nothing is dropped silently.
//! - [`check_judgments`], [`check_scores`]: the consistency checks between records of several files
//!   (one per model): one record per (session, model), one checklist length per session.

pub mod alpacaeval;
pub mod arena;
pub mod csv;
pub mod fastchat;
pub mod jsonl;
pub mod limits;
mod names;
pub mod rocketeval;
pub mod sniff;

use std::collections::HashMap;

use serde::Serialize;

pub use arena::{Battle, Winner};
pub use jsonl::Lined;
pub use names::{repeats, Names};
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
    /// The field the problem is about (`norm_probability`), empty when it is the record as a whole.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
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
        Self { severity, file: file.to_string(), line, session_id: session_id.to_string(), field: String::new(), message: message.into() }
    }
    /// The same problem, about `field` of the record.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
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
        write!(f, ": session `{}`", self.session_id)?;
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
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

/// Judgments of several files (one per model, RocketEval's layout), each with the file it came from:
/// a (session, model) judged twice is an error, and so is a session whose judgments have checklists of
/// different lengths — models compared on one query must have been graded on the same checklist. The
/// length most of the session's non-empty judgments have is taken as the checklist's, ties going to
/// the record given first (give the records that must count first, e.g. a supervised predictor's
/// training data); every other judgment, an empty one included, is an error at its file and line,
/// field `norm_probability`. (An empty list is never the checklist: no checklist is empty.)
pub fn check_judgments<'a>(records: impl IntoIterator<Item = (&'a str, &'a Lined<Judgment>)>) -> Vec<Problem> {
    check_judgment_keys(records.into_iter().map(|(file, j)| JudgmentKey {
        file,
        line: j.line,
        session_id: &j.value.session_id,
        model_test: &j.value.model_test,
        items: j.value.norm_probability.len(),
    }))
}

/// What [`check_judgments`] reads of a judgment: a reader that keeps no more of each judgment than
/// this (and its score) checks a folder in memory far below the judgments'.
#[derive(Debug, Clone, Copy)]
pub struct JudgmentKey<'a> {
    pub file: &'a str,
    pub line: usize,
    pub session_id: &'a str,
    pub model_test: &'a str,
    /// The number of items (`norm_probability`'s length).
    pub items: usize,
}

/// [`check_judgments`] on what it reads of each judgment.
pub fn check_judgment_keys<'a>(records: impl IntoIterator<Item = JudgmentKey<'a>>) -> Vec<Problem> {
    let (mut files, mut sessions, mut models) = (Names::default(), Names::default(), Names::default());
    let rows: Vec<JudgmentRow> = records
        .into_iter()
        .map(|k| JudgmentRow {
            file: files.number(k.file),
            line: k.line as u32,
            session: sessions.number(k.session_id),
            model: models.number(k.model_test),
            items: k.items as u32,
        })
        .collect();
    check_judgment_rows(&rows, &JudgmentNames { files: &files, sessions: &sessions, models: &models })
}

/// A [`JudgmentKey`] as numbers ([`Names`]): what a reader of many judgments keeps of each.
#[derive(Debug, Clone, Copy)]
pub struct JudgmentRow {
    pub file: u32,
    pub line: u32,
    pub session: u32,
    pub model: u32,
    pub items: u32,
}

/// The names [`JudgmentRow`]s number.
pub struct JudgmentNames<'a> {
    pub files: &'a Names,
    pub sessions: &'a Names,
    pub models: &'a Names,
}

/// [`check_judgments`] on judgments as numbers: one per (session, model), and on each session the
/// checklist length most of its judgments have (the first such where two lengths are as common).
pub fn check_judgment_rows(rows: &[JudgmentRow], names: &JudgmentNames) -> Vec<Problem> {
    let file = |r: &JudgmentRow| names.files.name(r.file);
    let mut problems: Vec<Problem> = repeats(rows.len(), |i| (rows[i].session, rows[i].model))
        .into_iter()
        .map(|(i, first)| {
            let (r, f) = (&rows[i], &rows[first]);
            duplicate(
                (file(r), r.line as usize),
                (file(f), f.line as usize),
                names.sessions.name(r.session),
                names.models.name(r.model),
                "judgment",
            )
        })
        .collect();
    // Per session: how many judgments have each length, and the first of them.
    let mut lengths: HashMap<u32, Vec<(u32, usize, usize)>> = HashMap::new();
    for (i, k) in rows.iter().enumerate() {
        let counts = lengths.entry(k.session).or_default();
        if k.items == 0 {
            continue;
        }
        match counts.iter_mut().find(|c| c.0 == k.items) {
            Some(c) => c.1 += 1,
            None => counts.push((k.items, 1, i)),
        }
    }
    for k in rows {
        // `max_by_key` returns the last maximum; reversed, that is the length that appeared first.
        let Some(&(len, count, first)) = lengths[&k.session].iter().rev().max_by_key(|c| c.1) else {
            continue; // every judgment of the session is empty
        };
        if k.items == len {
            continue;
        }
        let reference = &rows[first];
        let more = if count > 1 { format!(" and {} more", count - 1) } else { String::new() };
        problems.push(
            Problem::error(
                file(k),
                k.line as usize,
                names.sessions.name(k.session),
                format!(
                    "{} here but {} in the judgment of `{}` ({}){more}; models compared on one query must be graded on the same checklist",
                    items(k.items as usize),
                    items(len as usize),
                    names.models.name(reference.model),
                    place(file(k), file(reference), reference.line as usize)
                ),
            )
            .with_field("norm_probability"),
        );
    }
    problems
}

/// Scores (or labels) of several files, each with the file it came from: a (session, model) scored
/// twice is an error at the second record.
pub fn check_scores<'a>(records: impl IntoIterator<Item = (&'a str, &'a Lined<Score>)>) -> Vec<Problem> {
    duplicates(records.into_iter().map(|(f, s)| (f, s.line, s.value.session_id.as_str(), s.value.model_test.as_str())), "score")
}

/// Records (file, line, session, model) that repeat an earlier (session, model).
fn duplicates<'a>(records: impl Iterator<Item = (&'a str, usize, &'a str, &'a str)>, what: &str) -> Vec<Problem> {
    let records: Vec<_> = records.collect();
    repeats(records.len(), |i| (records[i].2, records[i].3))
        .into_iter()
        .map(|(i, first)| {
            let ((file, line, session, model), f) = (records[i], records[first]);
            duplicate((file, line), (f.0, f.1), session, model, what)
        })
        .collect()
}

/// The record at `here` (file, line) repeats the (session, model) of the one at `first`.
pub fn duplicate(here: (&str, usize), first: (&str, usize), session: &str, model: &str, what: &str) -> Problem {
    let (file, line) = here;
    Problem::error(
        file,
        line,
        session,
        format!("a second {what} of `{model}` on this session (the first: {})", place(file, first.0, first.1)),
    )
    .with_field("session_id")
}

/// Where another record is, as seen from a record of `here`: "line 3", or "FILE, line 3".
fn place(here: &str, file: &str, line: usize) -> String {
    match (file == here, line) {
        (true, 0) => "this file".to_string(),
        (true, l) => format!("line {l}"),
        (false, 0) => file.to_string(),
        (false, l) => format!("{file}, line {l}"),
    }
}

fn items(n: usize) -> String {
    if n == 1 {
        "1 item".to_string()
    } else {
        format!("{n} items")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::jsonl::read_jsonl;

    #[test]
    fn judgments_across_files() {
        let j = |sid: &str, model: &str, n: usize| {
            format!(r#"{{"session_id":"{sid}","model_test":"{model}","norm_probability":{:?}}}"#, vec![0.5; n])
        };
        let read = |lines: &[String]| rocketeval::read_judgments("x", lines.join("\n").as_bytes()).unwrap();
        let a = read(&[j("q1", "a", 2), j("q2", "a", 3), j("q3", "a", 1)]);
        let b = read(&[j("q1", "b", 2), j("q2", "b", 2), j("q3", "b", 0), j("q1", "b", 2)]);
        let c = read(&[j("q1", "c", 2), j("q2", "c", 2), j("q3", "c", 0)]);
        let files = [("a.jsonl", &a), ("b.jsonl", &b), ("c.jsonl", &c)];
        let records = || files.iter().flat_map(|(f, rows)| rows.iter().map(move |r| (*f, r)));
        let p = check_judgments(records());
        let at: Vec<_> = p.iter().map(|p| (p.file.as_str(), p.line, p.field.as_str())).collect();
        // b's second q1; a's q2 (3 items where two models have 2); the empty q3 lists (q3 has 1 item).
        assert_eq!(
            at,
            [
                ("b.jsonl", 4, "session_id"),
                ("a.jsonl", 2, "norm_probability"),
                ("b.jsonl", 3, "norm_probability"),
                ("c.jsonl", 3, "norm_probability")
            ]
        );
        assert!(p[0].to_string().ends_with("a second judgment of `b` on this session (the first: line 1)"), "{}", p[0]);
        assert!(p[1].message.starts_with("3 items here but 2 items in the judgment of `b` (b.jsonl, line 2) and 1 more;"), "{}", p[1]);
        assert!(p[2].message.starts_with("0 items here but 1 item in the judgment of `a` (a.jsonl, line 3);"), "{}", p[2]);
        // A tie goes to the record given first.
        let two = [("a.jsonl", &a), ("c.jsonl", &c)];
        let first = |files: &[(&'static str, &Vec<Lined<Judgment>>)]| {
            let p = check_judgments(files.iter().flat_map(|(f, rows)| rows.iter().map(move |r| (*f, r))));
            p.iter().filter(|p| p.session_id == "q2").map(|p| p.file.clone()).collect::<Vec<_>>()
        };
        assert_eq!(first(&two), ["c.jsonl"]);
        assert_eq!(first(&[two[1], two[0]]), ["a.jsonl"]);
        // Scores: a response scored twice, across files.
        let s = |text: &str| rocketeval::read_scores("x", text.as_bytes()).unwrap();
        let (s1, s2) =
            (s(r#"{"session_id":"q","model_test":"m","score":1}"#), s("[\n{\"session_id\":\"q\",\"model_test\":\"m\",\"score\":2}]"));
        let p = check_scores([("s1", &s1[0]), ("s2", &s2[0])]);
        assert_eq!((p.len(), p[0].file.as_str(), p[0].line), (1, "s2", 2));
        assert!(p[0].message.ends_with("(the first: s1, line 1)"), "{}", p[0]);
    }

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
