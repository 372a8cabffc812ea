//! The judge flags of the commands that grade, and loading a judge with them (the engine chooses and
//! opens the backend: `rocketjudge_engine::device`).

use std::io::IsTerminal;

use anyhow::{Context, Result};
use rocketjudge_engine::backend::cpu::Precision;
use rocketjudge_engine::device::{self, BackendChoice, BackendInfo, BackendOptions};
use rocketjudge_engine::judge::AnyJudge;

use crate::models;

#[derive(clap::Args, Clone)]
pub struct JudgeArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Longest prompt per checklist item in tokens; longer responses are truncated (marked).
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: usize,
}

/// Where a judge runs: the flags every command that loads one shares.
#[derive(clap::Args, Clone)]
pub struct DeviceArgs {
    /// Compute backend: `cpu`, `webgpu` (Vulkan/Metal/DX12 natively), or `auto` (WebGPU on a
    /// hardware adapter, else the CPU).
    #[arg(long, default_value_t = BackendChoice::Cpu, value_parser = parse_choice)]
    pub backend: BackendChoice,
    /// CPU threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// CPU weight products: `int8` (activations rounded to 8 bits per block as llama.cpp does,
    /// integer dot products) or `f32` (dequantized weights, f32 activations).
    #[arg(long, default_value = "int8", value_parser = parse_precision)]
    pub precision: Precision,
}

fn parse_choice(s: &str) -> Result<BackendChoice, String> {
    s.parse().map_err(|e: rocketjudge_core::error::UnknownName| e.to_string())
}

pub fn parse_precision(s: &str) -> Result<Precision, String> {
    match s {
        "int8" => Ok(Precision::Int8),
        "f32" => Ok(Precision::F32),
        _ => Err(format!("`{s}`: expected int8 or f32")),
    }
}

impl DeviceArgs {
    /// The backend options these flags set.
    pub fn options(&self) -> BackendOptions {
        BackendOptions { threads: self.threads, precision: self.precision, ..Default::default() }
    }
}

/// Load the judge `spec` (a manifest name or a GGUF path) on the backend the flags choose, with a
/// context of `context` tokens.
pub fn load(spec: &str, a: &DeviceArgs, context: usize) -> Result<(AnyJudge, BackendInfo)> {
    let path = models::resolve(spec)?;
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: u64, total: u64| {
        if tty {
            eprint!("\r\x1b[Kloading {spec}: {:.0}%", done as f64 * 100.0 / total.max(1) as f64);
        }
    };
    // Manifest models are cached as `<name>.gguf`, so the judge's name (the file stem) is the manifest name.
    let loaded = device::open_judge_file(&path, a.backend, &a.options(), context, &mut progress)
        .with_context(|| format!("cannot load {} on backend {}", path.display(), a.backend))?;
    if tty {
        eprintln!();
    }
    Ok(loaded)
}

/// What a run's final line adds about the prompt tokens the judge kept between the responses to
/// each query (nothing where it kept none).
pub fn kept_note(tokens: u64) -> String {
    if tokens == 0 {
        return String::new();
    }
    format!("; {tokens} prompt tokens were not run again (each query's part, kept between its responses)")
}
