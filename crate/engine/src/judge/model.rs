//! The judge backed by a model on some backend: grading, comparing, scoring and writing.

use rocketjudge_core::direct::DirectSettings;
use rocketjudge_core::formats::{AnswerTokens, Query, Response};
use rocketjudge_core::pairwise::five_point_share;
use rocketjudge_core::prompt::{direct_prompt_at, grading_history, perplexity_turn, PairwiseScale};

use crate::backend::Backend;
use crate::model::Model;
use crate::EngineError;

use super::codec::{cut_middle, ends_within, single_tokens};
use super::*;

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
    /// The query's tokens whose keys and values the caches hold from the last prompt (a graded
    /// response, a Direct score, a comparison or a perplexity; run as chunks of `chunk` tokens):
    /// [`Self::prefill_shared`] skips them when the next prompt begins with them. Empty when the
    /// caches hold nothing to keep.
    kept: (Vec<u32>, usize),
    /// Prefix tokens that were not run because the caches held them (what the kept query saved).
    pub reused_tokens: u64,
}

impl<B: Backend> ModelJudge<B> {
    pub fn new(name: String, codec: PromptCodec, model: Model<B>, mut backend: B, max_tokens: usize) -> Result<Self, EngineError> {
        let max_tokens = max_tokens.min(model.config.context_length);
        let caches = model.new_caches(&mut backend, max_tokens)?;
        Ok(ModelJudge { name, codec, model, backend, caches, max_tokens, chunk: 512, kept: (Vec::new(), 0), reused_tokens: 0 })
    }

    /// Run the shared prefix into the KV cache, in chunks, from scratch.
    pub fn prefill(&mut self, prefix: &[u32]) -> Result<(), EngineError> {
        self.prefill_shared(prefix, 0)
    }

    /// Run `prefix` into the KV cache: its first `shared` tokens (the query's part:
    /// [`PreparedResponse::shared`], or a one-pass prompt's) as chunks of their own, then the rest.
    /// Where the caches still hold those same tokens from the last prefill, which ran them the same
    /// way, they are not run again. Either way the rest runs in the same chunks after the same keys
    /// and values, so the grades are the same bits whatever was graded before (a resumed or sharded
    /// run's bytes do not change).
    pub(crate) fn prefill_shared(&mut self, prefix: &[u32], shared: usize) -> Result<(), EngineError> {
        let (head, rest) = prefix.split_at(shared.min(prefix.len()));
        let chunk = self.chunk.max(1);
        let keep = !head.is_empty() && self.kept.0 == head && self.kept.1 == chunk;
        let start = if keep { head.len() } else { 0 };
        for c in self.caches.iter_mut() {
            self.backend.truncate_cache(c, start);
        }
        if keep {
            self.reused_tokens += head.len() as u64;
        } else {
            // Nothing is kept until the query's chunks have run: a forward that fails leaves none.
            self.kept.0.clear();
            self.run_chunks(head, 0)?;
            self.kept = (head.to_vec(), chunk);
        }
        self.run_chunks(rest, head.len())
    }

    /// `tokens` at positions `start..` into the KV cache, `chunk` tokens a forward.
    fn run_chunks(&mut self, tokens: &[u32], start: usize) -> Result<(), EngineError> {
        let chunk = self.chunk.max(1);
        for (ci, part) in tokens.chunks(chunk).enumerate() {
            let at = start + ci * chunk;
            let positions: Vec<u32> = (at..at + part.len()).map(|p| p as u32).collect();
            let segments = vec![0u32; part.len()];
            self.model.forward(&mut self.backend, &mut self.caches, part, &positions, &segments, true, None)?;
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
            &ends_within(response.answer(), self.max_tokens, &self.codec.tokenizer)?,
            items,
        )
        .ok_or_else(|| EngineError::Input("the perplexity score has no prompt: use response_logprob".into()))?;
        let mut tokens = self.codec.encode_user_message(&prompt.text)?;
        cut_middle(&mut tokens, self.max_tokens);
        let shared = self.codec.shared_tokens(prompt.query(), &tokens)?;
        let mut logits = self.shared_next_token_logits(&tokens, shared, &digits).await?;
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
    /// A response longer than the context is cut to fit (`truncated_tokens`). The turn's query part
    /// (on turn 1 the whole turn) is kept for the next response to the query.
    pub async fn response_logprob(&mut self, query: &Query, response: &Response) -> Result<LogProb, EngineError> {
        let turn = perplexity_turn(&grading_history(query, response), query.user_query());
        let context = self.codec.encode_user_message(&turn.text)?;
        let shared = self.codec.shared_tokens(turn.query(), &context)?;
        // Only the answer's first `max_tokens` tokens can be kept: nothing beyond them is tokenized.
        let answer = self.codec.tokenizer.encode_plain(self.codec.tokenizer.head_of(response.answer(), self.max_tokens)?)?;
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
        self.prefill_shared(head, shared)?;
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
        self.shared_next_token_logits(tokens, 0, ids).await
    }

    /// [`Self::next_token_logits`] of a prompt whose first `shared` tokens are its query's, kept
    /// for the next prompt that begins with them ([`Self::prefill_shared`]).
    async fn shared_next_token_logits(&mut self, tokens: &[u32], shared: usize, ids: &[u32]) -> Result<Vec<f32>, EngineError> {
        let (prefix, last) = tokens.split_at(tokens.len() - 1);
        self.prefill_shared(prefix, shared)?;
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
        let shared = self.codec.pairwise_shared(query, scale, &tokens)?;
        let ids: Vec<u32> = choices.iter().flatten().copied().collect();
        let logits = self.shared_next_token_logits(&tokens, shared, &ids).await?;
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
        self.prefill_shared(&p.prefix, p.shared)?;
        self.grade_suffixes(p.prefix.len(), &p.suffixes).await
    }
}
