//! `rocketjudge bench`: how fast the judge grades, with llama.cpp side by side. A benchmark, not a
//! test: it prints numbers and ratios, it asserts nothing.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};
use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::judge::ModelJudge;
use rocketjudge_engine::load::judge_from_file;
use serde_json::{json, Value};

use super::Format;
use crate::{judges, models, CliResult};

const LLAMA_CPP_BENCH: &str = include_str!("../../../../scripts/bench/llama_cpp_bench.py");
/// Real text for the synthetic workload (a long MT-Bench answer); token content does not change speed
/// but keeps the tokenizer and attention on realistic data.
const TEXT: &str = include_str!("../../../../tests/fixtures/parity/responses.jsonl");

/// Measure grading speed: prefix tokens/s, items/s, seconds per graded response.
///
/// Workload per response: a prefix of --prefix-tokens shared by --items checklist items of
/// --suffix-tokens each. Our engine runs the prefix once and all items in one pass. When Python's
/// llama-cpp-python is importable, the same tokens run through llama.cpp in the same command (its best
/// way: prefix KV kept, items evaluated on top), and ratios are printed.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    model: String,
    #[command(flatten)]
    judge: judges::JudgeArgs,
    #[arg(long, default_value_t = 1500)]
    prefix_tokens: usize,
    #[arg(long, default_value_t = 8)]
    items: usize,
    #[arg(long, default_value_t = 40)]
    suffix_tokens: usize,
    /// Timed repetitions (the median is reported), after one warm-up.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Reference: `auto` (llama.cpp if llama-cpp-python is installed), `none`, or `llama.cpp` (required).
    #[arg(long, default_value = "auto", value_parser = ["auto", "none", "llama.cpp"])]
    reference: String,
    /// Also time llama.cpp grading each item from scratch (prefix re-run per item).
    #[arg(long)]
    reference_scratch: bool,
    /// Peak FLOP/s of the device in GFLOP/s, to report utilisation (e.g. 2 cores × 8 FMA lanes × 2 units × 2 × GHz).
    #[arg(long)]
    peak_gflops: Option<f64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn workload<B: Backend>(j: &ModelJudge<B>, a: &Args) -> Result<(Vec<u32>, Vec<Vec<u32>>)> {
    let text: String = TEXT
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["output"][0].as_str().map(String::from))
        .collect();
    let base = j.codec.tokenizer.encode_plain(&text)?;
    let need = a.prefix_tokens + a.items * a.suffix_tokens;
    let stream: Vec<u32> = base.iter().cycle().take(need).copied().collect();
    let prefix = stream[..a.prefix_tokens].to_vec();
    let suffixes = (0..a.items).map(|i| stream[a.prefix_tokens + i * a.suffix_tokens..][..a.suffix_tokens].to_vec()).collect();
    Ok((prefix, suffixes))
}

fn run_ours<B: Backend>(mut j: ModelJudge<B>, a: &Args) -> Result<(Value, Vec<u32>, Vec<Vec<u32>>)> {
    let (prefix, suffixes) = workload(&j, a)?;
    if prefix.len() + a.suffix_tokens > j.max_tokens {
        anyhow::bail!("the workload needs {} tokens but --max-tokens is {}", prefix.len() + a.suffix_tokens, j.max_tokens);
    }
    let (mut pre, mut items) = (Vec::new(), Vec::new());
    for rep in 0..=a.repeat {
        let t = Instant::now();
        j.prefill(&prefix)?;
        j.backend.sync();
        let tp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        pollster::block_on(j.grade_suffixes(prefix.len(), &suffixes))?;
        let ti = t.elapsed().as_secs_f64();
        if rep > 0 {
            pre.push(tp);
            items.push(ti);
        }
    }
    let (pre, items) = (median(pre), median(items));
    let c = &j.model.config;
    let p = prefix.len() as f64;
    let prefill_flops = c.matmul_flops_per_token() * p + c.attention_flops(p * (p + 1.0) / 2.0);
    let mut out = json!({
        "engine": "rocketjudge",
        "backend": j.backend.describe(),
        "prefill_s": pre,
        "items_s": items,
        "prefill_tokens_per_s": p / pre,
        "items_per_s": a.items as f64 / (pre + items),
        "seconds_per_response": pre + items,
        "prefill_gflops": prefill_flops / pre / 1e9,
    });
    if let Some(peak) = a.peak_gflops {
        out["prefill_fraction_of_peak"] = json!(prefill_flops / pre / 1e9 / peak);
    }
    Ok((out, prefix, suffixes))
}

fn run_llama_cpp(a: &Args, model: &std::path::Path, threads: usize, prefix: &[u32], suffixes: &[Vec<u32>]) -> Result<Value> {
    let dir = std::env::temp_dir().join(format!("rocketjudge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("llama_cpp_bench.py");
    std::fs::write(&script, LLAMA_CPP_BENCH)?;
    let cfg = dir.join("workload.json");
    std::fs::write(&cfg, json!({"model": model, "threads": threads, "prefix": prefix, "suffixes": suffixes, "repeat": a.repeat, "scratch": a.reference_scratch}).to_string())?;
    let out = Command::new("python3").arg(&script).arg(&cfg).output().context("cannot run python3")?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        anyhow::bail!("llama.cpp reference failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
    }
    let mut v: Value = serde_json::from_slice(&out.stdout).context("llama.cpp reference printed no JSON")?;
    let (pre, items) = (v["prefill_s"].as_f64().unwrap(), v["items_s"].as_f64().unwrap());
    v["engine"] = json!("llama.cpp");
    v["prefill_tokens_per_s"] = json!(prefix.len() as f64 / pre);
    v["items_per_s"] = json!(suffixes.len() as f64 / (pre + items));
    v["seconds_per_response"] = json!(pre + items);
    Ok(v)
}

pub fn run(a: Args) -> CliResult {
    let path = models::resolve(&a.model)?;
    let threads = if a.judge.threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { a.judge.threads };
    let max = a.judge.max_tokens.max(a.prefix_tokens + a.suffix_tokens + 1);
    let (ours, prefix, suffixes) = match a.judge.backend.as_str() {
        "cpu" => run_ours(judge_from_file(&path, Cpu::new(threads)?, max, &mut |_, _| {})?, &a)?,
        other => anyhow::bail!("backend `{other}` is not available in this build"),
    };
    let reference = match a.reference.as_str() {
        "none" => None,
        r => match run_llama_cpp(&a, &path, threads, &prefix, &suffixes) {
            Ok(v) => Some(v),
            Err(e) if r == "auto" => {
                eprintln!("note: no llama.cpp reference ({e:#}); install it with `pip install llama-cpp-python`");
                None
            }
            Err(e) => return Err(e),
        },
    };
    let mut report = json!({
        "model": a.model,
        "workload": {"prefix_tokens": a.prefix_tokens, "items": a.items, "suffix_tokens": a.suffix_tokens, "threads": threads, "repeat": a.repeat},
        "rocketjudge": ours,
    });
    if let Some(r) = &reference {
        report["llama_cpp"] = r.clone();
        report["ratio"] = json!({
            "prefill_tokens_per_s": ours["prefill_tokens_per_s"].as_f64().unwrap() / r["prefill_tokens_per_s"].as_f64().unwrap(),
            "speedup_seconds_per_response": r["seconds_per_response"].as_f64().unwrap() / ours["seconds_per_response"].as_f64().unwrap(),
        });
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => {
            println!(
                "{} · prefix {} tokens, {} items × {} tokens, {} threads, median of {}",
                a.model, a.prefix_tokens, a.items, a.suffix_tokens, threads, a.repeat
            );
            let f = |v: &Value, k: &str| v[k].as_f64().map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
            let mut rows = vec![vec![
                format!("rocketjudge ({})", ours["backend"].as_str().unwrap_or("")),
                f(&ours, "prefill_tokens_per_s"),
                f(&ours, "items_per_s"),
                f(&ours, "seconds_per_response"),
                f(&ours, "prefill_gflops"),
            ]];
            if let Some(r) = &reference {
                rows.push(vec![
                    format!("llama.cpp {} (prefix KV reused)", r["llama_cpp_python"].as_str().unwrap_or("")),
                    f(r, "prefill_tokens_per_s"),
                    f(r, "items_per_s"),
                    f(r, "seconds_per_response"),
                    "–".into(),
                ]);
                if let Some(s) = r["scratch_s"].as_f64() {
                    rows.push(vec![
                        "llama.cpp (prefix re-run per item)".into(),
                        "–".into(),
                        format!("{:.2}", a.items as f64 / s),
                        format!("{s:.2}"),
                        "–".into(),
                    ]);
                }
            }
            print!("{}", super::text_table(&["engine", "prefill tok/s", "items/s", "s/response", "prefill GFLOP/s"], &rows));
            if let Some(r) = report.get("ratio") {
                println!(
                    "ratio: prefill throughput ×{:.2} of llama.cpp; seconds per response ×{:.2} faster",
                    r["prefill_tokens_per_s"].as_f64().unwrap(),
                    r["speedup_seconds_per_response"].as_f64().unwrap()
                );
            }
        }
    }
    Ok(())
}
