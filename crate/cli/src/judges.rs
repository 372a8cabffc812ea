//! Choosing and loading a judge for the commands that grade.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use rocketjudge_engine::backend::cpu::{Cpu, Precision};
#[cfg(feature = "webgpu")]
use rocketjudge_engine::backend::webgpu::{WebGpu, WebGpuOptions};
use rocketjudge_engine::judge::AnyJudge;
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
    /// CPU weight products: `int8` (activations rounded to 8 bits per block as llama.cpp does,
    /// integer dot products) or `f32` (dequantized weights, f32 activations).
    #[arg(long, default_value = "int8", value_parser = parse_precision)]
    pub precision: Precision,
}

pub fn parse_precision(s: &str) -> Result<Precision, String> {
    match s {
        "int8" => Ok(Precision::Int8),
        "f32" => Ok(Precision::F32),
        _ => Err(format!("`{s}`: expected int8 or f32")),
    }
}

/// The error for a backend this binary was built without.
pub fn unavailable(backend: &str) -> anyhow::Error {
    if backend == "webgpu" {
        anyhow::anyhow!(
            "backend `webgpu` is not available: this build lacks the WebGPU backend (rebuild with \
             `cargo build --release -p rocketjudge --features webgpu`)"
        )
    } else {
        anyhow::anyhow!("backend `{backend}` is not available in this build")
    }
}

/// Open the WebGPU device (Vulkan, Metal or DX12; Mesa's lavapipe on a Linux machine without a GPU).
#[cfg(feature = "webgpu")]
pub fn webgpu(options: WebGpuOptions) -> Result<WebGpu> {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // Some Vulkan loaders complain without it; none of them needs a real one. Set before any
        // thread exists.
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    Ok(pollster::block_on(WebGpu::new(options))?)
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
            judge_from_file(&path, Cpu::with_precision(a.threads, a.precision)?, a.max_tokens, &mut progress)
                .with_context(|| format!("cannot load {}", path.display()))?,
        ),
        #[cfg(feature = "webgpu")]
        "webgpu" => AnyJudge::WebGpu(
            judge_from_file(&path, webgpu(WebGpuOptions::default())?, a.max_tokens, &mut progress)
                .with_context(|| format!("cannot load {} on WebGPU", path.display()))?,
        ),
        other => return Err(unavailable(other)),
    };
    if tty {
        eprintln!();
    }
    Ok(judge)
}
