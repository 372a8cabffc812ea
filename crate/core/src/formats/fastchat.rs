//! FastChat MT-Bench files: `question.jsonl`, `model_answer/<model>.jsonl`, `model_judgment/*_single.jsonl`.
//!
//! Each MT-Bench turn becomes one query, as RocketEval splits MT-Bench: session `"<question_id>_turn<k>"`.
//! Turn k's conversation holds the user's turns 1..k and, between them, the reference answers (the
//! question's `reference` or a reference-answer file) when known. A response's `chat_history` holds the
//! answering model's own earlier turns, which is what the model saw.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::arena::{Battle, Winner};
use super::jsonl::{read_jsonl, Lined};
use super::rocketeval::{id_string, Message, Query, Response, Role, Score};
use super::Problem;
use crate::error::FormatError;

#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    #[serde(deserialize_with = "id_string")]
    pub question_id: String,
    #[serde(default)]
    pub category: Option<String>,
    pub turns: Vec<String>,
    #[serde(default)]
    pub reference: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Answer {
    #[serde(deserialize_with = "id_string")]
    pub question_id: String,
    #[serde(default)]
    pub model_id: String,
    pub choices: Vec<Choice>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Choice {
    pub turns: Vec<String>,
}

/// One line of FastChat's `gpt-4_single.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct SingleJudgment {
    #[serde(deserialize_with = "id_string")]
    pub question_id: String,
    pub model: String,
    pub score: f64,
    pub turn: u32,
}

/// The session id of an MT-Bench turn.
pub fn session_id(question_id: &str, turn: usize) -> String {
    format!("{question_id}_turn{turn}")
}

pub fn read_questions(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Question>>, FormatError> {
    let rows = read_jsonl::<Question>(file, bytes)?;
    for r in &rows {
        if r.value.turns.is_empty() {
            return Err(FormatError::new(file, r.line, "turns", "expected at least one turn"));
        }
    }
    Ok(rows)
}

/// Questions → one query per turn. `references` (answers of a reference model, e.g. GPT-4's, keyed by
/// question id) fill `references["gpt-4"]` and the assistant turns of the history when a question
/// has no `reference` of its own.
pub fn queries_from_questions(questions: &[Lined<Question>], references: &BTreeMap<String, Vec<String>>) -> Vec<Query> {
    let mut out = Vec::new();
    for q in questions.iter().map(|l| &l.value) {
        let refs = q.reference.as_ref().or_else(|| references.get(&q.question_id));
        for (k, user) in q.turns.iter().enumerate() {
            let mut conv = Vec::new();
            for (j, earlier) in q.turns[..k].iter().enumerate() {
                conv.push(Message::new(Role::User, earlier.clone()));
                let answer = refs.and_then(|r| r.get(j)).cloned().unwrap_or_default();
                conv.push(Message::new(Role::Assistant, answer));
            }
            conv.push(Message::new(Role::User, user.clone()));
            let mut references = BTreeMap::new();
            if let Some(r) = refs.and_then(|r| r.get(k)) {
                references.insert("gpt-4".to_string(), r.clone());
            }
            out.push(Query {
                session_id: session_id(&q.question_id, k + 1),
                conversation_input: conv,
                checklist: Vec::new(),
                references,
                category: q.category.clone(),
            });
        }
    }
    out
}

/// Read a `model_answer/<model>.jsonl` file as one `Answer` per question (first choice kept).
pub fn read_answers(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Answer>>, FormatError> {
    let rows = read_jsonl::<Answer>(file, bytes)?;
    for r in &rows {
        if r.value.choices.is_empty() {
            return Err(FormatError::new(file, r.line, "choices", "expected at least one choice"));
        }
    }
    Ok(rows)
}

/// Answers by question id (first choice), e.g. to use a model's answers as references.
pub fn answer_turns(answers: &[Lined<Answer>]) -> BTreeMap<String, Vec<String>> {
    answers.iter().map(|a| (a.value.question_id.clone(), a.value.choices[0].turns.clone())).collect()
}

/// Answers → one response per turn, with the model's own earlier turns as chat history.
/// `model` names the generator when the file's `model_id` is empty. An answer to an unknown question
/// or with more turns than the question is reported, not dropped silently.
pub fn responses_from_answers(
    file: &str,
    answers: &[Lined<Answer>],
    questions: &[Lined<Question>],
    model: &str,
) -> (Vec<Response>, Vec<Problem>) {
    let by_id: BTreeMap<&str, &Question> = questions.iter().map(|q| (q.value.question_id.as_str(), &q.value)).collect();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for a in answers {
        let Some(q) = by_id.get(a.value.question_id.as_str()) else {
            problems.push(Problem::error(file, a.line, &a.value.question_id, "answer to a question that is not in question.jsonl"));
            continue;
        };
        let turns = &a.value.choices[0].turns;
        if turns.len() != q.turns.len() {
            problems.push(Problem::warning(
                file,
                a.line,
                &a.value.question_id,
                format!("{} answer turns for a question of {} turns", turns.len(), q.turns.len()),
            ));
        }
        let generator = if a.value.model_id.is_empty() { model } else { a.value.model_id.as_str() };
        let mut history = Vec::new();
        for (k, answer) in turns.iter().enumerate().take(q.turns.len()) {
            history.push(Message::new(Role::User, q.turns[k].clone()));
            out.push(Response {
                session_id: session_id(&q.question_id, k + 1),
                chat_history: history.clone(),
                output: vec![answer.clone()],
                generator: generator.to_string(),
            });
            history.push(Message::new(Role::Assistant, answer.clone()));
        }
    }
    (out, problems)
}

/// Single-answer judgments → scores (labels). FastChat writes score −1 when GPT-4's reply could not be
/// parsed; such lines are reported as problems and left out. Every score keeps its line.
pub fn scores_from_single_judgments(file: &str, bytes: &[u8]) -> Result<(Vec<Lined<Score>>, Vec<Problem>), FormatError> {
    let rows = read_jsonl::<SingleJudgment>(file, bytes)?;
    let mut scores = Vec::new();
    let mut problems = Vec::new();
    for r in rows {
        let j = r.value;
        if !j.score.is_finite() || j.score < 0.0 {
            problems.push(
                Problem::warning(file, r.line, &j.question_id, format!("judgment has no valid score ({})", j.score)).with_field("score"),
            );
            continue;
        }
        if j.turn == 0 {
            return Err(FormatError::new(file, r.line, "turn", "expected a turn number starting at 1"));
        }
        scores.push(Lined {
            line: r.line,
            value: Score {
                session_id: session_id(&j.question_id, j.turn as usize),
                model_test: j.model,
                score: j.score,
                judge: Some("gpt-4".to_string()),
            },
        });
    }
    Ok((scores, problems))
}

/// Rebuild FastChat questions from queries split per turn (`<id>_turn<k>`): the user messages of each
/// question's last turn. Lets FastChat answer files be read against a RocketEval-format benchmark.
pub fn questions_from_queries(queries: &[Query]) -> Vec<Lined<Question>> {
    let mut by_id: BTreeMap<String, (usize, &Query)> = BTreeMap::new();
    for q in queries {
        if let Some((id, turn)) = q.session_id.rsplit_once("_turn") {
            if let Ok(t) = turn.parse::<usize>() {
                let e = by_id.entry(id.to_string()).or_insert((t, q));
                if t > e.0 {
                    *e = (t, q);
                }
            }
        }
    }
    by_id
        .into_iter()
        .map(|(id, (_, q))| Lined {
            line: 0,
            value: Question {
                question_id: id,
                category: q.category.clone(),
                turns: q.conversation_input.iter().filter(|m| m.role == Role::User).map(|m| m.content.clone()).collect(),
                reference: None,
            },
        })
        .collect()
}

/// One line of FastChat's `gpt-4_pair.jsonl`.
#[derive(Debug, Deserialize)]
struct PairJudgmentLine {
    #[serde(deserialize_with = "id_string")]
    question_id: String,
    model_1: String,
    model_2: String,
    /// The verdict with model_1 shown first, in model terms: `model_1`, `model_2`, `tie` or `error`.
    g1_winner: String,
    /// The verdict with the order swapped (model_2 shown first), mapped back to model terms.
    g2_winner: String,
    turn: u32,
}

/// FastChat pair judgments → battles with FastChat's verdict (`show_result.py`): a win only when both
/// orders name the same winner, a tie otherwise; lines with an `error` verdict are left out (warning).
pub fn battles_from_pair_judgments(file: &str, bytes: &[u8]) -> Result<(Vec<Battle>, Vec<Problem>), FormatError> {
    let mut battles = Vec::new();
    let mut problems = Vec::new();
    for r in read_jsonl::<PairJudgmentLine>(file, bytes)? {
        let j = r.value;
        let verdict = |field: &str, v: &str| match v {
            "model_1" => Ok(Some(Winner::A)),
            "model_2" => Ok(Some(Winner::B)),
            "tie" => Ok(Some(Winner::Tie)),
            "error" => Ok(None),
            _ => Err(FormatError::new(file, r.line, field, format!("expected model_1, model_2, tie or error, found `{v}`"))),
        };
        let (g1, g2) = (verdict("g1_winner", &j.g1_winner)?, verdict("g2_winner", &j.g2_winner)?);
        if j.turn == 0 {
            return Err(FormatError::new(file, r.line, "turn", "expected a turn number starting at 1"));
        }
        if j.model_1 == j.model_2 {
            return Err(FormatError::new(file, r.line, "model_2", "a model cannot be compared with itself"));
        }
        let (Some(g1), Some(g2)) = (g1, g2) else {
            let field = if g1.is_none() { "g1_winner" } else { "g2_winner" };
            problems.push(Problem::warning(file, r.line, &j.question_id, "the judge's verdict is `error`; left out").with_field(field));
            continue;
        };
        let winner = if g1 == g2 { g1 } else { Winner::Tie };
        battles.push(Battle {
            model_a: j.model_1,
            model_b: j.model_2,
            winner,
            question_id: Some(session_id(&j.question_id, j.turn as usize)),
        });
    }
    Ok((battles, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &[u8] = br#"{"question_id": 101, "category": "reasoning", "turns": ["Q1?", "Q2?"], "reference": ["R1", "R2"]}
{"question_id": 81, "category": "writing", "turns": ["Write.", "Rewrite."]}
"#;

    #[test]
    fn turns_become_queries() {
        let qs = read_questions("question.jsonl", Q).unwrap();
        let queries = queries_from_questions(&qs, &BTreeMap::new());
        assert_eq!(queries.len(), 4);
        assert_eq!(queries[1].session_id, "101_turn2");
        assert_eq!(queries[1].conversation_input.len(), 3);
        assert_eq!(queries[1].conversation_input[1].content, "R1");
        assert_eq!(queries[1].references["gpt-4"], "R2");
        assert!(queries[2].references.is_empty());
    }

    #[test]
    fn answers_keep_own_history() {
        let qs = read_questions("question.jsonl", Q).unwrap();
        let ans = br#"{"question_id": 101, "model_id": "m", "choices": [{"index": 0, "turns": ["A1", "A2"]}]}
{"question_id": 999, "model_id": "m", "choices": [{"index": 0, "turns": ["x"]}]}"#;
        let answers = read_answers("m.jsonl", ans).unwrap();
        let (rs, problems) = responses_from_answers("m.jsonl", &answers, &qs, "m");
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[1].chat_history.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Q1?", "A1", "Q2?"]);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, 2);
    }

    #[test]
    fn judgments_skip_failed_scores_loudly() {
        let j = br#"{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": 7, "turn": 1}
{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": -1, "turn": 2}"#;
        let (s, p) = scores_from_single_judgments("j", j).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].value.session_id.as_str(), s[0].line), ("81_turn1", 1));
        assert_eq!(p.len(), 1);
    }
}
