//! The reference: llama.cpp on the same tokens, through `llama_cpp_bench.py` beside this file (its
//! best way: prefix KV kept, items on top, a pilot for its thread count, flash attention both ways).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::Args;

const LLAMA_CPP_BENCH: &str = include_str!("llama_cpp_bench.py");

/// llama.cpp on the same workload; `gpu`: all its layers offloaded (where its build has a GPU backend),
/// as our engine's WebGPU run has all of ours on the GPU.
pub(super) fn run_llama_cpp(a: &Args, model: &Path, threads: usize, gpu: bool, prefix: &[u32], suffixes: &[Vec<u32>]) -> Result<Value> {
    let dir = std::env::temp_dir().join(format!("rocketjudge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("llama_cpp_bench.py");
    std::fs::write(&script, LLAMA_CPP_BENCH)?;
    let cfg = dir.join("workload.json");
    std::fs::write(&cfg, json!({"model": model, "threads": threads, "prefix": prefix, "suffixes": suffixes, "repeat": a.repeat, "decode_tokens": a.decode_tokens, "first_token": suffixes[0][0], "scratch": a.reference_scratch, "gpu_layers": if gpu { -1 } else { 0 }, "pilot": !a.no_reference_pilot}).to_string())?;
    let out = Command::new("python3").arg(&script).arg(&cfg).output().context("cannot run python3")?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        anyhow::bail!("llama.cpp reference failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
    }
    let mut v: Value = serde_json::from_slice(&out.stdout).context("llama.cpp reference printed no JSON")?;
    let (pre, items) = (v["prefill_s"].as_f64().unwrap(), v["items_s"].as_f64().unwrap());
    v["engine"] = json!("llama.cpp");
    // The prefill figure is llama.cpp's fastest: where another setting than the workload's (the
    // fastest response) prefilled faster, the script timed the prefix under it too.
    let best_pre = v["best_prefill"]["prefill_s"].as_f64().unwrap_or(pre);
    v["prefill_tokens_per_s"] = json!(prefix.len() as f64 / best_pre);
    v["items_per_s"] = json!(suffixes.len() as f64 / (pre + items));
    v["seconds_per_response"] = json!(pre + items);
    if let Some(d) = v["decode_s"].as_f64().filter(|_| a.decode_tokens > 0) {
        v["decode_tokens_per_s"] = json!(a.decode_tokens as f64 / d);
    }
    Ok(v)
}
