//! Choosing and loading a judge for the commands that grade.

use std::future::Future;
use std::io::IsTerminal;

use anyhow::{Context, Result};
use rocketjudge_core::formats::{AnswerTokens, Query, Response};
use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::judge::{DigitScore, ItemGrade, Judge, ModelJudge, PreparedResponse};
use rocketjudge_engine::load::judge_from_file;
use rocketjudge_engine::EngineError;

use crate::models;

#[derive(clap::Args, Clone)]
pub struct JudgeArgs {
    /// Compute backend: `cpu`, or `webgpu` (Vulkan/Metal/DX12 natively).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "webgpu"])]
    pub backend: String,
    /// CPU threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Longest prompt per checklist item in tokens; longer responses are truncated (marked).
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: usize,
}

/// A judge on whichever backend was chosen.
pub enum AnyJudge {
    Cpu(ModelJudge<Cpu>),
}

impl Judge for AnyJudge {
    fn name(&self) -> String {
        match self {
            AnyJudge::Cpu(j) => j.name(),
        }
    }
    fn answer_tokens(&self) -> AnswerTokens {
        match self {
            AnyJudge::Cpu(j) => j.answer_tokens(),
        }
    }
    fn prepare(&self, query: &Query, response: &Response) -> Result<PreparedResponse, EngineError> {
        match self {
            AnyJudge::Cpu(j) => j.prepare(query, response),
        }
    }
    fn grade_prepared(&mut self, p: &PreparedResponse) -> impl Future<Output = Result<Vec<ItemGrade>, EngineError>> {
        async move {
            match self {
                AnyJudge::Cpu(j) => j.grade_prepared(p).await,
            }
        }
    }
}

impl AnyJudge {
    /// The Direct 0–9 baseline for one response.
    pub async fn direct_score(&mut self, query: &Query, response: &Response) -> Result<DigitScore, EngineError> {
        match self {
            AnyJudge::Cpu(j) => j.direct_score(query, response).await,
        }
    }
}

pub fn load(spec: &str, a: &JudgeArgs) -> Result<AnyJudge> {
    let path = models::resolve(spec)?;
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: u64, total: u64| {
        if tty {
            eprint!("\r\x1b[Kloading {spec}: {:.0}%", done as f64 * 100.0 / total.max(1) as f64);
        }
    };
    // Manifest models are cached as `<name>.gguf`, so the judge's name (the file stem) is the manifest name.
    let judge = match a.backend.as_str() {
        "cpu" => AnyJudge::Cpu(
            judge_from_file(&path, Cpu::new(a.threads)?, a.max_tokens, &mut progress)
                .with_context(|| format!("cannot load {}", path.display()))?,
        ),
        other => anyhow::bail!("backend `{other}` is not available in this build"),
    };
    if tty {
        eprintln!();
    }
    Ok(judge)
}
