//! Where a prompt becomes a probability: the [`Judge`] trait and its model-backed implementation.
//!
//! Grading one response:
//! 1. Each checklist item's full prompt (RocketEval's grading prompt, wrapped in the judge's chat
//!    template) is tokenized exactly as llama.cpp would tokenize it.
//! 2. The longest common token prefix of all items is the shared prefix; the rest of each item is
//!    its suffix. (Splitting in token space, not text space, means the batched path sees exactly the
//!    tokens a from-scratch run would.)
//! 3. The prefix runs once, in chunks, filling the KV cache: first its query part (the instruction,
//!    the user's turns and the query, up to the first assistant-written text), then the rest. The
//!    query part stays in the cache, and the next response to the same query (the default order
//!    grades every model's answer to a query in turn) starts after it: the same chunks either way,
//!    so the same bits. All suffixes then run in one forward: each attends to the whole prefix and
//!    causally to itself only, with positions continuing after the prefix; the last layer is
//!    computed only for each suffix's final row.
//! 4. At those rows only the Yes/No rows of the output head are evaluated:
//!    p(Yes) / (p(Yes) + p(No)) = σ(logit_yes − logit_no), no softmax over the vocabulary.
//!
//! A response too long for the context is cut (keeping its beginning) and marked in the prompt with
//! [`rocketjudge_core::prompt::TRUNCATION_MARKER`]; the grade records that it was truncated.
//!
//! Files: this one has the trait and what a judge returns; `codec.rs` renders and tokenizes prompts
//! (and cuts what does not fit), `model.rs` is the model-backed judge, `any.rs` the judge on whichever
//! backend was chosen at run time, `bench.rs` the speed benchmark's workload (its text in
//! `bench_text.txt`).

use std::future::Future;

use rocketjudge_core::formats::{AnswerTokens, Query, Response};
use rocketjudge_core::prompt::PromptStyle;
use serde::Serialize;

use crate::EngineError;

mod any;
mod bench;
mod codec;
mod model;

pub use any::AnyJudge;
pub use bench::BenchWorkload;
pub use codec::PromptCodec;
pub(crate) use codec::{cut_middle, ends_within, fit_two_heads};
pub use model::ModelJudge;

/// One checklist item's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ItemGrade {
    /// The largest logit among the "Yes" tokens (RocketEval takes the best-scoring variant).
    pub logit_yes: f32,
    pub logit_no: f32,
    /// σ(logit_yes − logit_no).
    pub p_yes: f64,
}

impl ItemGrade {
    pub fn from_logits(logit_yes: f32, logit_no: f32) -> Self {
        let d = (logit_yes - logit_no) as f64;
        ItemGrade { logit_yes, logit_no, p_yes: 1.0 / (1.0 + (-d).exp()) }
    }
}

/// The tokens a response was graded from.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedResponse {
    pub prefix: Vec<u32>,
    pub suffixes: Vec<Vec<u32>>,
    /// Characters of the answer that were cut to fit (0 when it fit).
    pub truncated_chars: usize,
    /// The first tokens of `prefix` that every response to the same query shares: the instruction,
    /// the user's turns and the query, up to the first text an assistant wrote. The prefill runs them
    /// as chunks of their own, so a judge can keep their keys and values for the next response to
    /// the query and skip them there, its grades the same bits either way.
    pub shared: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseGrade {
    pub items: Vec<ItemGrade>,
    pub prefix_tokens: usize,
    pub suffix_tokens: usize,
    pub truncated_chars: usize,
}

/// Anything that grades checklist items: a real model on some backend, or a fixed-probability judge
/// for pipeline tests.
pub trait Judge {
    /// Name recorded in judgments.
    fn name(&self) -> String;
    /// Which token ids count as Yes / No.
    fn answer_tokens(&self) -> AnswerTokens;
    /// Tokenize a response's item prompts into a shared prefix and per-item suffixes.
    fn prepare(&self, query: &Query, response: &Response) -> Result<PreparedResponse, EngineError>;
    /// Grade prepared tokens. A future: on WebGPU in a browser the result can only be awaited.
    fn grade_prepared(&mut self, p: &PreparedResponse) -> impl Future<Output = Result<Vec<ItemGrade>, EngineError>>;

    fn grade(&mut self, query: &Query, response: &Response) -> impl Future<Output = Result<ResponseGrade, EngineError>> {
        async move {
            let p = self.prepare(query, response)?;
            let items = self.grade_prepared(&p).await?;
            Ok(ResponseGrade {
                items,
                prefix_tokens: p.prefix.len(),
                suffix_tokens: p.suffixes.iter().map(Vec::len).sum(),
                truncated_chars: p.truncated_chars,
            })
        }
    }
}

/// The variants whose best logit counts as the answer (RocketEval strips and capitalises the decoded
/// top tokens, so " yes" and "YES" count as Yes). Only single-token variants are used.
const YES: [&str; 6] = ["Yes", " Yes", "yes", " yes", "YES", " YES"];
const NO: [&str; 6] = ["No", " No", "no", " no", "NO", " NO"];
/// The answers of a pairwise comparison.
const CHOICE_A: [&str; 2] = ["A", " A"];
const CHOICE_B: [&str; 2] = ["B", " B"];
/// The answers of a 5-point comparison, "1" (the first shown much better) to "5".
const VERDICTS: [[&str; 2]; 5] = [["1", " 1"], ["2", " 2"], ["3", " 3"], ["4", " 4"], ["5", " 5"]];

/// Which of two responses the judge prefers, read from its first answer token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairPreference {
    pub logit_a: f32,
    pub logit_b: f32,
    /// p(A) / (p(A) + p(B)) = σ(logit_a − logit_b): the first-shown response is better; on the
    /// 5-point scale the verdicts' [`five_point_share`](rocketjudge_core::pairwise::five_point_share).
    pub p_a: f64,
    /// Characters cut from the two responses together to fit the context (0 when both fit).
    pub truncated_chars: usize,
    /// 5-point scale: the distribution over the verdicts "1" to "5" (`logit_a`/`logit_b` are then
    /// the logits of "1" and "5").
    pub verdicts: Option<[f64; 5]>,
}

/// What the judge reads for one response, as text: each item's whole prompt in the chat template,
/// split where the items begin to differ (the part read once), the response cut as grading cuts it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptView {
    pub template: &'static str,
    pub style: PromptStyle,
    pub prefix: String,
    pub suffixes: Vec<String>,
    pub prefix_tokens: usize,
    pub suffix_tokens: Vec<usize>,
    /// Characters of the response the judge saw, and the ones cut after them.
    pub kept_chars: usize,
    pub truncated_chars: usize,
    /// What marks the cut in the prompt text (present only when `truncated_chars` > 0).
    pub truncation_marker: &'static str,
}

/// The paper's "Direct" baseline: the judge answers the 0–9 scoring prompt with one digit; the
/// score is read from the first token's distribution over the ten digits (renormalised), as
/// G-Eval does: `expected = Σ d·p(d)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DigitScore {
    pub probabilities: [f64; 10],
    pub expected: f64,
    pub argmax: u8,
}

impl DigitScore {
    pub fn from_logits(logits: &[f32]) -> Self {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let e: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp()).collect();
        let z: f64 = e.iter().sum();
        let mut probabilities = [0.0; 10];
        for (d, v) in e.iter().enumerate() {
            probabilities[d] = v / z;
        }
        let expected = probabilities.iter().enumerate().map(|(d, p)| d as f64 * p).sum();
        let argmax = (0..10).max_by(|&a, &b| probabilities[a].total_cmp(&probabilities[b])).unwrap() as u8;
        DigitScore { probabilities, expected, argmax }
    }
}

/// Seed 004's perplexity score of a response: the mean natural-log probability per token (the log of
/// the inverse perplexity; higher is more expected by the judge).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LogProb {
    pub mean: f64,
    pub tokens: usize,
    pub truncated_tokens: usize,
}

#[cfg(test)]
mod tests;
