//! Where a prompt becomes a probability: the [`Judge`] trait and its model-backed implementation.
//!
//! Grading one response:
//! 1. Each checklist item's full prompt (RocketEval's grading prompt, wrapped in the judge's chat
//!    template) is tokenized exactly as llama.cpp would tokenize it.
//! 2. The longest common token prefix of all items is the shared prefix; the rest of each item is
//!    its suffix. (Splitting in token space, not text space, means the batched path sees exactly the
//!    tokens a from-scratch run would.)
//! 3. The prefix runs once, in chunks, filling the KV cache. All suffixes then run in one forward:
//!    each attends to the whole prefix and causally to itself only, with positions continuing after
//!    the prefix; the last layer is computed only for each suffix's final row.
//! 4. At those rows only the Yes/No rows of the output head are evaluated:
//!    p(Yes) / (p(Yes) + p(No)) = σ(logit_yes − logit_no), no softmax over the vocabulary.
//!
//! A response too long for the context is cut (keeping its beginning) and marked in the prompt with
//! [`TRUNCATION_MARKER`]; the grade records that it was truncated.

use std::borrow::Cow;
use std::future::Future;

use rocketjudge_core::direct::DirectSettings;
use rocketjudge_core::formats::{AnswerTokens, Message, Query, Response, Role};
use rocketjudge_core::pairwise::five_point_share;
use rocketjudge_core::prompt::{
    direct_prompt_at, format_history, grading_history, grading_prompt_for, pairwise_prompt, GradingPrompt, PairwiseScale, PromptStyle,
    TRUNCATION_MARKER,
};
use serde::Serialize;

use crate::backend::Backend;
use crate::chat::ChatTemplate;
use crate::model::Model;
use crate::tokenizer::Tokenizer;
use crate::EngineError;

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

/// Prompt rendering and tokenization for one model: chat template + tokenizer + answer ids.
pub struct PromptCodec {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    pub answers: AnswerTokens,
    /// The grading prompt's wording: RocketEval's unless a flag or a probe chooses another.
    pub style: PromptStyle,
}

impl PromptCodec {
    pub fn new(tokenizer: Tokenizer, template: ChatTemplate) -> Result<Self, EngineError> {
        let (yes, no) = (single_tokens(&tokenizer, &YES)?, single_tokens(&tokenizer, &NO)?);
        for (word, set) in [("Yes", &yes), ("No", &no)] {
            let primary = tokenizer.encode_plain(word)?;
            if primary.len() != 1 || set.first() != primary.first() {
                return Err(EngineError::Unsupported(format!(
                    "this judge's tokenizer splits \"{word}\" into {} tokens; a judge needs single-token Yes and No answers",
                    primary.len()
                )));
            }
        }
        Ok(PromptCodec { tokenizer, template, answers: AnswerTokens { yes, no }, style: PromptStyle::RocketEval })
    }

    /// Token ids of a user message, wrapped in the chat template with the generation prompt.
    pub fn encode_user_message(&self, content: &str) -> Result<Vec<u32>, EngineError> {
        let rendered = self.template.render(&[Message::new(Role::User, content)], self.tokenizer.add_bos)?;
        self.tokenizer.encode(&rendered.segments(), true)
    }

    /// Tokenize every item of `prompt` and split at the longest common prefix.
    pub fn split(&self, prompt: &GradingPrompt) -> Result<(Vec<u32>, Vec<Vec<u32>>), EngineError> {
        if prompt.suffixes.is_empty() {
            return Err(EngineError::Input("the query has no checklist items to grade".into()));
        }
        let items: Vec<Vec<u32>> =
            (0..prompt.suffixes.len()).map(|i| self.encode_user_message(&prompt.item(i))).collect::<Result<_, _>>()?;
        let shortest = items.iter().map(Vec::len).min().unwrap_or(0);
        let mut lcp = 0;
        while lcp + 1 < shortest && items.iter().all(|t| t[lcp] == items[0][lcp]) {
            lcp += 1;
        }
        let prefix = items[0][..lcp].to_vec();
        Ok((prefix, items.into_iter().map(|t| t[lcp..].to_vec()).collect()))
    }

    /// Prepare a response, cutting its answer when the longest item exceeds `max_tokens`.
    pub fn prepare(&self, query: &Query, response: &Response, max_tokens: usize) -> Result<PreparedResponse, EngineError> {
        Ok(self.fit(query, response, max_tokens)?.0)
    }

    /// [`Self::prepare`], with the answer as the prompt holds it (whole, or cut and marked).
    fn fit<'r>(&self, query: &Query, response: &'r Response, max_tokens: usize) -> Result<(PreparedResponse, Cow<'r, str>), EngineError> {
        let answer = response.answer();
        let fits = |(p, s): &(Vec<u32>, Vec<Vec<u32>>)| p.len() + s.iter().map(Vec::len).max().unwrap_or(0) <= max_tokens;
        let whole = self.split(&grading_prompt_for(self.style, query, response, answer))?;
        let chars: Vec<usize> = answer.char_indices().map(|(i, _)| i).chain([answer.len()]).collect();
        let all = chars.len() - 1;
        if fits(&whole) {
            return Ok((PreparedResponse { prefix: whole.0, suffixes: whole.1, truncated_chars: 0 }, Cow::Borrowed(answer)));
        }
        // Binary search on the kept length (in characters) of the answer.
        let kept = longest_fit(all, |mid| {
            let s = self.split(&grading_prompt_for(self.style, query, response, &cut(answer, chars[mid])))?;
            Ok(fits(&s).then_some(s))
        })?;
        match kept {
            Some((kept, (prefix, suffixes))) => {
                Ok((PreparedResponse { prefix, suffixes, truncated_chars: all - kept }, Cow::Owned(cut(answer, chars[kept]))))
            }
            None => Err(EngineError::Input(format!(
                "even without the response the prompt exceeds the judge's context of {max_tokens} tokens (is the query or a checklist item very long?)"
            ))),
        }
    }

    /// What the judge reads for `response`, as text (see [`PromptView`]).
    pub fn explain(&self, query: &Query, response: &Response, max_tokens: usize) -> Result<PromptView, EngineError> {
        let (prepared, output) = self.fit(query, response, max_tokens)?;
        let prompt = grading_prompt_for(self.style, query, response, &output);
        let items: Vec<String> = (0..prompt.suffixes.len())
            .map(|i| Ok(self.template.render(&[Message::new(Role::User, prompt.item(i))], self.tokenizer.add_bos)?.text()))
            .collect::<Result<_, EngineError>>()?;
        let common = items[1..].iter().fold(items[0].len(), |n, other| {
            let differ = items[0][..n].char_indices().zip(other.chars()).find(|((_, a), b)| a != b);
            differ.map_or(n.min(other.len()), |((i, _), _)| i)
        });
        Ok(PromptView {
            template: self.template.name(),
            style: self.style,
            prefix: items[0][..common].to_string(),
            suffixes: items.iter().map(|t| t[common..].to_string()).collect(),
            prefix_tokens: prepared.prefix.len(),
            suffix_tokens: prepared.suffixes.iter().map(Vec::len).collect(),
            kept_chars: response.answer().chars().count() - prepared.truncated_chars,
            truncated_chars: prepared.truncated_chars,
            truncation_marker: TRUNCATION_MARKER,
        })
    }

    /// The tokens of a pairwise comparison of two answers to `query`, both cut by the same share of
    /// their length when together they do not fit `max_tokens`; and the characters cut.
    /// With `checklist`, the query's checklist guides the verdict (seed 002); `scale` picks the verdict asked for.
    pub fn pairwise_tokens(
        &self,
        query: &Query,
        a: &str,
        b: &str,
        checklist: bool,
        scale: PairwiseScale,
        max_tokens: usize,
    ) -> Result<(Vec<u32>, usize), EngineError> {
        // Earlier turns are the benchmark's own (the reference's), the same whichever response is
        // shown first: each response's own earlier turns would differ between the two.
        let history = query.history();
        let items = checklist.then_some(query.checklist.as_slice());
        fit_two(a, b, max_tokens, |a, b| self.encode_user_message(&pairwise_prompt(history, query.user_query(), a, b, items, scale)))
    }
}

/// A prompt longer than `room` tokens loses the middle: the end (the instruction and its answer cue)
/// and as much of the beginning as fits stay. The tokens cut.
pub(crate) fn cut_middle(tokens: &mut Vec<u32>, room: usize) -> usize {
    let cut = tokens.len().saturating_sub(room);
    if cut > 0 {
        tokens.drain(room / 2..room / 2 + cut);
    }
    cut
}

/// The tokens `encode` makes of two responses, both cut at the same share of their characters
/// (marked) where needed to fit `max_tokens`, and the characters cut; an error where even empty
/// responses do not fit.
pub(crate) fn fit_two(
    a: &str,
    b: &str,
    max_tokens: usize,
    encode: impl Fn(&str, &str) -> Result<Vec<u32>, EngineError>,
) -> Result<(Vec<u32>, usize), EngineError> {
    let whole = encode(a, b)?;
    if whole.len() <= max_tokens {
        return Ok((whole, 0));
    }
    let keep = |text: &str, per_mille: usize| {
        let n = text.chars().count() * per_mille / 1000;
        let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
        (cut(text, end), text.chars().count() - n)
    };
    let fitted = longest_fit(1000, |m| {
        let ((ca, la), (cb, lb)) = (keep(a, m), keep(b, m));
        let t = encode(&ca, &cb)?;
        Ok((t.len() <= max_tokens).then_some((t, la + lb)))
    })?;
    fitted.map(|(_, t)| t).ok_or_else(|| {
        EngineError::Input(format!("even without the responses the comparison exceeds the judge's context of {max_tokens} tokens"))
    })
}

/// The answer cut after byte `end`, marked as cut.
fn cut(answer: &str, end: usize) -> String {
    format!("{}{}", &answer[..end], TRUNCATION_MARKER)
}

/// The largest `k` in `0..=max` for which `try_fit(k)` gives something, with it; `try_fit` must
/// succeed for every `k` below one that succeeds (a shorter text fits whenever a longer one does).
fn longest_fit<T>(max: usize, mut try_fit: impl FnMut(usize) -> Result<Option<T>, EngineError>) -> Result<Option<(usize, T)>, EngineError> {
    let (mut lo, mut hi) = (0usize, max);
    let mut best = None;
    while lo <= hi {
        let mid = (lo + hi) / 2;
        match try_fit(mid)? {
            Some(t) => {
                best = Some((mid, t));
                lo = mid + 1;
            }
            None if mid == 0 => break,
            None => hi = mid - 1,
        }
    }
    Ok(best)
}

/// The ids of those `variants` that are one token for `tokenizer`, without repeats.
fn single_tokens(tokenizer: &Tokenizer, variants: &[&str]) -> Result<Vec<u32>, EngineError> {
    let mut out = Vec::new();
    for v in variants {
        let t = tokenizer.encode_plain(v)?;
        if t.len() == 1 && !out.contains(&t[0]) {
            out.push(t[0]);
        }
    }
    Ok(out)
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

/// A judge backed by a model on some backend.
pub struct ModelJudge<B: Backend> {
    pub name: String,
    pub codec: PromptCodec,
    pub model: Model<B>,
    pub backend: B,
    pub(crate) caches: Vec<B::Cache>,
    /// Tokens per item prompt (prefix + suffix) at most; longer answers are truncated.
    pub max_tokens: usize,
    /// Prefix tokens per forward pass (bounds activation memory).
    pub chunk: usize,
}

impl<B: Backend> ModelJudge<B> {
    pub fn new(name: String, codec: PromptCodec, model: Model<B>, mut backend: B, max_tokens: usize) -> Result<Self, EngineError> {
        let max_tokens = max_tokens.min(model.config.context_length);
        let caches = model.new_caches(&mut backend, max_tokens)?;
        Ok(ModelJudge { name, codec, model, backend, caches, max_tokens, chunk: 512 })
    }

    /// Run the shared prefix into the KV cache, in chunks.
    pub fn prefill(&mut self, prefix: &[u32]) -> Result<(), EngineError> {
        for c in self.caches.iter_mut() {
            self.backend.truncate_cache(c, 0);
        }
        for (ci, chunk) in prefix.chunks(self.chunk.max(1)).enumerate() {
            let start = ci * self.chunk;
            let positions: Vec<u32> = (start..start + chunk.len()).map(|p| p as u32).collect();
            let segments = vec![0u32; chunk.len()];
            self.model.forward(&mut self.backend, &mut self.caches, chunk, &positions, &segments, true, None)?;
        }
        Ok(())
    }

    /// Grade suffixes against the cached prefix, all in one forward.
    pub async fn grade_suffixes(&mut self, prefix_len: usize, suffixes: &[Vec<u32>]) -> Result<Vec<ItemGrade>, EngineError> {
        let mut tokens = Vec::new();
        let mut positions = Vec::new();
        let mut segments = Vec::new();
        let mut last_rows = Vec::new();
        for (i, s) in suffixes.iter().enumerate() {
            if s.is_empty() {
                return Err(EngineError::Input(format!("checklist item {} has an empty prompt suffix", i + 1)));
            }
            for (j, &t) in s.iter().enumerate() {
                tokens.push(t);
                positions.push((prefix_len + j) as u32);
                segments.push(i as u32);
            }
            last_rows.push(tokens.len() - 1);
        }
        let hidden = self
            .model
            .forward(&mut self.backend, &mut self.caches, &tokens, &positions, &segments, false, Some(&last_rows))?
            .expect("rows were requested");
        let ids: Vec<u32> = self.codec.answers.yes.iter().chain(&self.codec.answers.no).copied().collect();
        let logits = self.model.logits(&mut self.backend, &hidden, &ids).await?;
        let ny = self.codec.answers.yes.len();
        Ok(logits
            .iter()
            .map(|l| {
                let best = |xs: &[f32]| xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                ItemGrade::from_logits(best(&l[..ny]), best(&l[ny..]))
            })
            .collect())
    }

    /// The Direct baseline for one response: the prompt of `settings` (its instruction level and scale,
    /// seed 004's — not `perplexity`, see [`Self::response_logprob`]; the query's reference answer
    /// when the settings take it and the query has one; a rubric of the user's), the digit
    /// distribution of the first answer token over the scale's digits; with `checklist` the query's checklist guides the score
    /// (seed 002).
    pub async fn direct_score(
        &mut self,
        query: &Query,
        response: &Response,
        settings: &DirectSettings,
        checklist: bool,
    ) -> Result<DigitScore, EngineError> {
        let digits: Vec<u32> = (0..10)
            .map(|d| {
                let t = self.codec.tokenizer.encode_plain(&d.to_string())?;
                if t.len() == 1 {
                    Ok(t[0])
                } else {
                    Err(EngineError::Unsupported(format!("the digit {d} is not a single token for this judge")))
                }
            })
            .collect::<Result<_, _>>()?;
        let reference = settings.with_reference().then(|| query.reference_answer()).flatten();
        let items = checklist.then_some(query.checklist.as_slice());
        let prompt = direct_prompt_at(
            settings.prompt(&response.session_id),
            &grading_history(query, response),
            query.user_query(),
            reference,
            response.answer(),
            items,
        )
        .ok_or_else(|| EngineError::Input("the perplexity score has no prompt: use response_logprob".into()))?;
        let mut tokens = self.codec.encode_user_message(&prompt)?;
        cut_middle(&mut tokens, self.max_tokens);
        let mut logits = self.next_token_logits(&tokens, &digits).await?;
        // Only the scale's digits are answers: the others get no probability.
        for (d, l) in logits.iter_mut().enumerate() {
            if !settings.scale.digits().contains(&d) {
                *l = f32::NEG_INFINITY;
            }
        }
        Ok(DigitScore::from_logits(&logits))
    }

    /// Seed 004's prompt-free score: the mean log-probability of the response's tokens under the judge,
    /// given the query as the user's turn (in the judge's chat template, the assistant's turn opened).
    /// A response longer than the context is cut to fit (`truncated_tokens`).
    pub async fn response_logprob(&mut self, query: &Query, response: &Response) -> Result<LogProb, EngineError> {
        let mut turn = format_history(&grading_history(query, response));
        if !turn.is_empty() {
            turn.push_str("\n\n");
        }
        turn.push_str(query.user_query());
        let context = self.codec.encode_user_message(&turn)?;
        let answer = self.codec.tokenizer.encode_plain(response.answer())?;
        if answer.is_empty() {
            return Err(EngineError::Input("the response is empty: it has no perplexity".into()));
        }
        let room = self.max_tokens.saturating_sub(context.len());
        if room == 0 {
            return Err(EngineError::Input(format!("the query alone fills the judge's context of {} tokens", self.max_tokens)));
        }
        let kept = answer.len().min(room);
        // Row r of the pass predicts answer token r: the pass holds the context's last token and all
        // kept answer tokens but the last.
        let (head, last) = context.split_at(context.len() - 1);
        self.prefill(head)?;
        let rows: Vec<u32> = last.iter().chain(&answer[..kept - 1]).copied().collect();
        let positions: Vec<u32> = (head.len()..head.len() + rows.len()).map(|p| p as u32).collect();
        let all: Vec<usize> = (0..rows.len()).collect();
        let hidden = self
            .model
            .forward(&mut self.backend, &mut self.caches, &rows, &positions, &vec![0; rows.len()], false, Some(&all))?
            .expect("rows were requested");
        let vocab = self.model.vocabulary();
        let mut total = 0.0f64;
        // Full-vocabulary logits a few rows at a time (each row is a vocabulary of floats).
        for chunk in all.chunks(32) {
            let x = self.backend.select_rows(&hidden, chunk);
            for (row, logits) in chunk.iter().zip(self.model.logits(&mut self.backend, &x, &vocab).await?) {
                let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
                let z: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
                total += logits[answer[*row] as usize] as f64 - max - z.ln();
            }
        }
        Ok(LogProb { mean: total / kept as f64, tokens: kept, truncated_tokens: answer.len() - kept })
    }

    /// The logits of `ids` for the token after `tokens`.
    pub async fn next_token_logits(&mut self, tokens: &[u32], ids: &[u32]) -> Result<Vec<f32>, EngineError> {
        let (prefix, last) = tokens.split_at(tokens.len() - 1);
        self.prefill(prefix)?;
        let hidden = self
            .model
            .forward(&mut self.backend, &mut self.caches, last, &[prefix.len() as u32], &[0], false, Some(&[0]))?
            .expect("rows were requested");
        Ok(self.model.logits(&mut self.backend, &hidden, ids).await?.swap_remove(0))
    }

    /// Which of two responses to `query` the judge prefers, in the order given (see
    /// [`rocketjudge_core::prompt::pairwise_prompt`]); the best logit among "A"/" A" and "B"/" B", or
    /// on the 5-point scale among "1"/" 1" … "5"/" 5" for each verdict.
    /// With `checklist`, the query's checklist guides the verdict (seed 002).
    pub async fn compare(
        &mut self,
        query: &Query,
        a: &Response,
        b: &Response,
        checklist: bool,
        scale: PairwiseScale,
    ) -> Result<PairPreference, EngineError> {
        let choices: Vec<Vec<u32>> = match scale {
            PairwiseScale::Binary => {
                [CHOICE_A, CHOICE_B].iter().map(|c| single_tokens(&self.codec.tokenizer, c)).collect::<Result<_, _>>()?
            }
            PairwiseScale::FivePoint => VERDICTS.iter().map(|c| single_tokens(&self.codec.tokenizer, c)).collect::<Result<_, _>>()?,
        };
        if choices.iter().any(Vec::is_empty) {
            return Err(EngineError::Unsupported(format!(
                "this judge's tokenizer has no single-token answer for every verdict of a {scale} comparison"
            )));
        }
        let (tokens, truncated_chars) = self.codec.pairwise_tokens(query, a.answer(), b.answer(), checklist, scale, self.max_tokens)?;
        let ids: Vec<u32> = choices.iter().flatten().copied().collect();
        let logits = self.next_token_logits(&tokens, &ids).await?;
        let mut at = 0;
        let best: Vec<f32> = choices
            .iter()
            .map(|c| {
                at += c.len();
                logits[at - c.len()..at].iter().copied().fold(f32::NEG_INFINITY, f32::max)
            })
            .collect();
        let (logit_a, logit_b) = (best[0], best[best.len() - 1]);
        if scale == PairwiseScale::Binary {
            return Ok(PairPreference {
                logit_a,
                logit_b,
                p_a: ItemGrade::from_logits(logit_a, logit_b).p_yes,
                truncated_chars,
                verdicts: None,
            });
        }
        let max = best.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f64> = best.iter().map(|l| f64::from(l - max).exp()).collect();
        let z: f64 = e.iter().sum();
        let verdicts: [f64; 5] = std::array::from_fn(|i| e[i] / z);
        Ok(PairPreference { logit_a, logit_b, p_a: five_point_share(&verdicts), truncated_chars, verdicts: Some(verdicts) })
    }

    /// Grade one item from scratch: the whole prompt in one pass, no prefix sharing (the reference
    /// path the batched one is tested against).
    pub async fn grade_from_scratch(&mut self, tokens: &[u32]) -> Result<ItemGrade, EngineError> {
        let (prefix, last) = tokens.split_at(tokens.len() - 1);
        self.prefill(prefix)?;
        Ok(self.grade_suffixes(prefix.len(), &[last.to_vec()]).await?[0])
    }
}

impl<B: Backend> Judge for ModelJudge<B> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn answer_tokens(&self) -> AnswerTokens {
        self.codec.answers.clone()
    }

    fn prepare(&self, query: &Query, response: &Response) -> Result<PreparedResponse, EngineError> {
        self.codec.prepare(query, response, self.max_tokens)
    }

    async fn grade_prepared(&mut self, p: &PreparedResponse) -> Result<Vec<ItemGrade>, EngineError> {
        self.prefill(&p.prefix)?;
        self.grade_suffixes(p.prefix.len(), &p.suffixes).await
    }
}

/// A model judge on whichever backend was chosen at run time (the CLI's `--backend`, the page's
/// WebGPU-or-CPU choice). One per process, so the size difference between the variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyJudge {
    Cpu(ModelJudge<crate::backend::cpu::Cpu>),
    #[cfg(feature = "webgpu")]
    WebGpu(ModelJudge<crate::backend::webgpu::WebGpu>),
}

/// Run the same expression on whichever judge is inside.
macro_rules! each {
    ($judge:expr, $j:ident => $e:expr) => {
        match $judge {
            AnyJudge::Cpu($j) => $e,
            #[cfg(feature = "webgpu")]
            AnyJudge::WebGpu($j) => $e,
        }
    };
}

impl Judge for AnyJudge {
    fn name(&self) -> String {
        each!(self, j => j.name())
    }
    fn answer_tokens(&self) -> AnswerTokens {
        each!(self, j => j.answer_tokens())
    }
    fn prepare(&self, query: &Query, response: &Response) -> Result<PreparedResponse, EngineError> {
        each!(self, j => j.prepare(query, response))
    }
    async fn grade_prepared(&mut self, p: &PreparedResponse) -> Result<Vec<ItemGrade>, EngineError> {
        each!(self, j => j.grade_prepared(p).await)
    }
}

impl AnyJudge {
    /// The Direct 0–9 score of one response (see [`ModelJudge::direct_score`]).
    pub async fn direct_score(
        &mut self,
        query: &Query,
        response: &Response,
        settings: &DirectSettings,
        checklist: bool,
    ) -> Result<DigitScore, EngineError> {
        each!(self, j => j.direct_score(query, response, settings, checklist).await)
    }

    /// The response's mean token log-probability under the judge (seed 004's perplexity score).
    pub async fn response_logprob(&mut self, query: &Query, response: &Response) -> Result<LogProb, EngineError> {
        each!(self, j => j.response_logprob(query, response).await)
    }

    /// Which of two responses the judge prefers, in the order given (with the checklist to guide it),
    /// on the verdict scale `scale`.
    pub async fn compare(
        &mut self,
        query: &Query,
        a: &Response,
        b: &Response,
        checklist: bool,
        scale: PairwiseScale,
    ) -> Result<PairPreference, EngineError> {
        each!(self, j => j.compare(query, a, b, checklist, scale).await)
    }

    /// What the judge reads for a response in the wording `style`, as text.
    pub fn explain(&mut self, style: PromptStyle, query: &Query, response: &Response) -> Result<PromptView, EngineError> {
        let before = self.prompt_style();
        self.set_prompt_style(style);
        let view = each!(self, j => j.codec.explain(query, response, j.max_tokens));
        self.set_prompt_style(before);
        view
    }

    /// Grade one response in the wording `style` (a probe), leaving the judge's own wording as it was.
    pub async fn grade_styled(&mut self, style: PromptStyle, query: &Query, response: &Response) -> Result<ResponseGrade, EngineError> {
        let before = self.prompt_style();
        self.set_prompt_style(style);
        let grade = self.grade(query, response).await;
        self.set_prompt_style(before);
        grade
    }

    /// The grading prompt's wording for the next grades.
    pub fn set_prompt_style(&mut self, style: PromptStyle) {
        each!(self, j => j.codec.style = style)
    }

    pub fn prompt_style(&self) -> PromptStyle {
        each!(self, j => j.codec.style)
    }

    /// The token ids of a prompt to continue: `text` as the user's message in the judge's chat
    /// template (with the assistant's turn opened) when `chat`, else as it is (the beginning-of-text
    /// token added when the model wants one; special-token spellings in it are those tokens).
    pub fn prompt_tokens(&self, text: &str, chat: bool) -> Result<Vec<u32>, EngineError> {
        each!(self, j => if chat {
            j.codec.encode_user_message(text)
        } else {
            j.codec.tokenizer.encode(&[crate::tokenizer::Segment { text, trusted: true }], true)
        })
    }

    /// Continue `prompt` (see [`ModelJudge::generate`]).
    pub async fn generate(
        &mut self,
        prompt: &[u32],
        settings: &crate::generate::GenerateSettings,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<crate::generate::Generation, EngineError> {
        each!(self, j => j.generate(prompt, settings, on_token).await)
    }

    /// `n` replies to `prompt` on one prefill (see [`ModelJudge::generate_replies`]).
    pub async fn generate_replies(
        &mut self,
        prompt: &[u32],
        settings: &crate::generate::GenerateSettings,
        n: usize,
        on_reply: &mut dyn FnMut(usize, &crate::generate::Generation),
    ) -> Result<Vec<crate::generate::Generation>, EngineError> {
        each!(self, j => j.generate_replies(prompt, settings, n, on_reply).await)
    }

    /// The judge's context in tokens (prompt and reply together).
    pub fn context_tokens(&self) -> usize {
        each!(self, j => j.max_tokens)
    }

    /// The benchmark workload in this judge's tokens.
    pub fn bench_workload(&self, prefix_tokens: usize, items: usize, suffix_tokens: usize) -> Result<BenchWorkload, EngineError> {
        each!(self, j => BenchWorkload::new(&j.codec.tokenizer, prefix_tokens, items, suffix_tokens))
    }

    /// The benchmark's prefix step: the prefix into the KV cache, then the logits of one more token,
    /// so that the call returns when the work is done (WebGPU's only wait is a read-back) — as a
    /// completion of the prefix with one generated token does in llama.cpp.
    pub async fn bench_prefix(&mut self, prefix: &[u32]) -> Result<(), EngineError> {
        let last = *prefix.last().ok_or_else(|| EngineError::Input("the benchmark prefix is empty".into()))?;
        each!(self, j => {
            j.prefill(prefix)?;
            j.grade_suffixes(prefix.len(), &[vec![last]]).await.map(drop)
        })
    }

    /// The benchmark's item step: every suffix on top of the cached prefix, in one pass.
    pub async fn bench_items(&mut self, prefix_len: usize, suffixes: &[Vec<u32>]) -> Result<Vec<ItemGrade>, EngineError> {
        each!(self, j => j.grade_suffixes(prefix_len, suffixes).await)
    }

    /// The benchmark's decode step: `n` tokens generated greedily on top of the cached prefix of
    /// `prefix_len` tokens, from `first` (as [`ModelJudge::generate`] does, end-of-generation tokens
    /// not stopping it).
    pub async fn bench_decode(&mut self, prefix_len: usize, first: u32, n: usize) -> Result<(), EngineError> {
        each!(self, j => j.decode_greedy(prefix_len, first, n).await)
    }

    /// Destroy the GPU device, as a driver reset would lose it, so that every later grade fails with
    /// "GPU device lost" (for testing that path). Returns false, doing nothing, on the CPU.
    pub fn lose_device(&mut self) -> bool {
        match self {
            AnyJudge::Cpu(_) => false,
            #[cfg(feature = "webgpu")]
            AnyJudge::WebGpu(j) => {
                j.backend.destroy_device();
                true
            }
        }
    }
}

/// A judge that answers every item with the same probability: for testing the pipeline around the
/// engine (resume, files, ranking), never for demonstrating grading.
pub struct FixedJudge {
    pub p_yes: f64,
}

impl Judge for FixedJudge {
    fn name(&self) -> String {
        format!("fixed-{}", self.p_yes)
    }
    fn answer_tokens(&self) -> AnswerTokens {
        AnswerTokens { yes: vec![1], no: vec![0] }
    }
    fn prepare(&self, query: &Query, response: &Response) -> Result<PreparedResponse, EngineError> {
        let _ = response;
        Ok(PreparedResponse { prefix: vec![], suffixes: vec![vec![0]; query.checklist.len()], truncated_chars: 0 })
    }
    async fn grade_prepared(&mut self, p: &PreparedResponse) -> Result<Vec<ItemGrade>, EngineError> {
        let l = (self.p_yes / (1.0 - self.p_yes)).ln() as f32;
        Ok(p.suffixes.iter().map(|_| ItemGrade { logit_yes: l, logit_no: 0.0, p_yes: self.p_yes }).collect())
    }
}

/// The speed benchmark's workload, the same for `rocketjudge bench` and the browser's benchmark page:
/// one graded response, a shared prefix and `items` checklist-item suffixes, as text and as this
/// judge's tokens. The text is real (long MT-Bench answers, repeated to length), cut between words so
/// that prefix and suffix tokenize the same apart as joined: an engine given the text (wllama takes
/// text prompts) sees the same tokens. Content does not change the speed, but keeps the tokenizer and
/// attention on realistic data.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchWorkload {
    pub prefix: Vec<u32>,
    pub suffixes: Vec<Vec<u32>>,
    pub prefix_text: String,
    pub suffix_texts: Vec<String>,
}

const BENCH_TEXT: &str = include_str!("../../../tests/fixtures/parity/responses.jsonl");

impl BenchWorkload {
    /// At least `prefix_tokens` (and `suffix_tokens` per item) tokens, the fewest words that give them.
    pub fn new(tokenizer: &Tokenizer, prefix_tokens: usize, items: usize, suffix_tokens: usize) -> Result<Self, EngineError> {
        if prefix_tokens == 0 || items == 0 || suffix_tokens == 0 {
            return Err(EngineError::Input("the benchmark needs a prefix, at least one item and at least one token per item".into()));
        }
        let answers: Vec<serde_json::Value> = BENCH_TEXT.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        // Words with their leading space; every word is at least one token, so this many suffice.
        let words: Vec<String> = answers
            .iter()
            .filter_map(|v| v["output"][0].as_str())
            .flat_map(str::split_whitespace)
            .cycle()
            .take(prefix_tokens + items * suffix_tokens)
            .map(|w| format!(" {w}"))
            .collect();
        let mut at = 0;
        let mut take = |target: usize| -> Result<(String, Vec<u32>), EngineError> {
            // The fewest words from `at` whose text has `target` tokens (binary search: the count grows
            // with the words).
            let text = |k: usize| words[at..at + k].concat();
            let (mut lo, mut hi) = (1, target.min(words.len() - at));
            while lo < hi {
                let mid = (lo + hi) / 2;
                if tokenizer.encode_plain(&text(mid))?.len() >= target {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            let t = text(lo);
            at += lo;
            let ids = tokenizer.encode_plain(&t)?;
            Ok((t, ids))
        };
        let (prefix_text, prefix) = take(prefix_tokens)?;
        let (suffix_texts, suffixes) = (0..items).map(|_| take(suffix_tokens)).collect::<Result<Vec<_>, _>>()?.into_iter().unzip();
        Ok(BenchWorkload { prefix, suffixes, prefix_text, suffix_texts })
    }
}

#[cfg(test)]
mod tests;
