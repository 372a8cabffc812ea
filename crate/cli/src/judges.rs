//! Choosing and loading a judge for the commands that grade.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::judge::Judge;
use rocketjudge_engine::load::judge_from_file;

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

pub fn load(spec: &str, a: &JudgeArgs) -> Result<Box<dyn Judge>> {
    let path = models::resolve(spec)?;
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: u64, total: u64| {
        if tty {
            eprint!(
                "\r\x1b[Kloading {spec}: {:.0}%",
                done as f64 * 100.0 / total.max(1) as f64
            );
        }
    };
    // Manifest models are cached as `<name>.gguf`, so the judge's name (the file stem) is the manifest name.
    let judge: Box<dyn Judge> = match a.backend.as_str() {
        "cpu" => {
            let j = judge_from_file(&path, Cpu::new(a.threads)?, a.max_tokens, &mut progress)
                .with_context(|| format!("cannot load {}", path.display()))?;
            Box::new(j)
        }
        other => anyhow::bail!("backend `{other}` is not available in this build"),
    };
    if tty {
        eprintln!();
    }
    Ok(judge)
}
