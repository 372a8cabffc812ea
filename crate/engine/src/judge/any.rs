//! A model judge on whichever backend was chosen at run time.

use rocketjudge_core::direct::DirectSettings;
use rocketjudge_core::formats::{AnswerTokens, Query, Response};
use rocketjudge_core::prompt::{PairwiseScale, PromptStyle};

use crate::EngineError;

use super::*;

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

    /// Prompt tokens the judge did not run because it kept them from the response before (each
    /// query's part of the prompt: [`ModelJudge::reused_tokens`]).
    pub fn reused_tokens(&self) -> u64 {
        each!(self, j => j.reused_tokens)
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

    /// `n` replies to `prompt` on one prefill, its first `shared` tokens kept for the next prompt
    /// (see [`ModelJudge::generate_replies`]).
    pub async fn generate_replies(
        &mut self,
        prompt: &[u32],
        shared: usize,
        settings: &crate::generate::GenerateSettings,
        n: usize,
        on_reply: &mut dyn FnMut(usize, &crate::generate::Generation),
    ) -> Result<Vec<crate::generate::Generation>, EngineError> {
        each!(self, j => j.generate_replies(prompt, shared, settings, n, on_reply).await)
    }

    /// How many of `tokens`' first tokens are the user message `head`'s (see
    /// [`crate::judge::PromptCodec::shared_tokens`]).
    pub fn shared_tokens(&self, head: &str, tokens: &[u32]) -> Result<usize, EngineError> {
        each!(self, j => j.codec.shared_tokens(head, tokens))
    }

    /// The judge's tokenizer.
    pub fn tokenizer(&self) -> &crate::tokenizer::Tokenizer {
        each!(self, j => &j.codec.tokenizer)
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
