//! `rocketjudge bench`: how fast the judge grades, on the CPU or WebGPU backend, with llama.cpp side by
//! side. A benchmark, not a test: it prints numbers and ratios, it asserts nothing.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_engine::backend::cpu::qmatmul::random_weight;
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::device::{self, BackendInfo, BackendKind, BackendOptions, GpuKernels, HostUpload, WithBackend};
use rocketjudge_engine::gguf::TensorInfo;
use rocketjudge_engine::judge::{BenchWorkload, ModelJudge};
use rocketjudge_engine::load::judge_from_file;
use rocketjudge_engine::model::config::Config;
use rocketjudge_engine::quant::GgmlType;
use serde_json::{json, Value};

use super::CliResult;
use super::Format;
use crate::{judges, models};

const LLAMA_CPP_BENCH: &str = include_str!("../../../../scripts/bench/llama_cpp_bench.py");

/// Measure grading speed: prefix tokens/s, items/s, seconds per graded response, achieved FLOP/s;
/// and generation speed (decode tokens/s).
///
/// Workload per response: a prefix of --prefix-tokens shared by --items checklist items of
/// --suffix-tokens each. Our engine runs the prefix once and all items in one pass. When Python's
/// llama-cpp-python is importable, the same tokens run through llama.cpp in the same command (its best
/// way: prefix KV kept, items evaluated on top; one batch as long as the context, the prompt on the
/// same threads, the thread count chosen by a pilot, the workload run with flash attention on and off),
/// and ratios are printed.
///
/// Achieved FLOP/s count the weight products and attention (QKᵀ, PV) actually run; they are set
/// against the device's peak: given with --peak-tflops; on the CPU, computed from its cores, clock
/// and kernels (int8 kernels: the int8 peak, two 256-bit byte dot products a cycle per core; f32:
/// two 256-bit FMA units; AMD Zen and Zen+, which run 256-bit instructions as two 128-bit halves:
/// one 128-bit byte dot product and two 128-bit FMAs a cycle); on a GPU, looked up from its name
/// (NVIDIA H100 SXM and H200: 67 TFLOP/s, H100 PCIe: 51, H100/H200 NVL: 60, A100: 19.5 — FP32
/// without tensor cores, which WGSL cannot use); else reported as unknown.
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
    /// Tokens generated after the prefix, one forward each with the whole vocabulary's logits and a
    /// greedy choice (as `rocketjudge generate`; end-of-generation tokens do not stop it): decode
    /// tokens/s. 0 leaves decoding out.
    #[arg(long, default_value_t = 64)]
    decode_tokens: usize,
    /// Tokens per prefill forward (the engine's default: 512).
    #[arg(long)]
    chunk: Option<usize>,
    /// Reference: `auto` (llama.cpp if llama-cpp-python is installed), `none`, or `llama.cpp` (required).
    #[arg(long, default_value = "auto", value_parser = ["auto", "none", "llama.cpp"])]
    reference: String,
    /// Also time llama.cpp grading each item from scratch (prefix re-run per item).
    #[arg(long)]
    reference_scratch: bool,
    /// Run llama.cpp once, with --threads and flash attention off (by default a pilot on a piece of
    /// the prefix tries --threads and 1 thread, and the workload runs with the faster count, flash
    /// attention on and off: the faster response is reported, and the faster prefill).
    #[arg(long)]
    no_reference_pilot: bool,
    /// Peak of the device in T(FL)OP/s, to report utilisation. Without it: a CPU's from its cores,
    /// clock and kernels; a GPU's FP32 peak from its name; else unknown.
    #[arg(long)]
    peak_tflops: Option<f64>,
    /// Also time the matrix product of every weight type: `M,N,K` = x[M×K] · W[N×K]ᵀ, and 1 row; and
    /// the fixed cost of a wait and of one tiny op (bare `--matmul`: 512,4096,4096).
    #[arg(long, value_name = "M,N,K", num_args = 0..=1, default_missing_value = "512,4096,4096")]
    matmul: Option<String>,
    /// WebGPU: f32 workgroup tiles even where the adapter has shader-f16.
    #[arg(long)]
    no_f16: bool,
    /// WebGPU: reductions without subgroup operations even where the adapter has them.
    #[arg(long)]
    no_subgroups: bool,
    /// WebGPU kernels: `auto` (software-shaped on CPU adapters), `gpu`, or `software`.
    #[arg(long, default_value_t = GpuKernels::Auto, value_parser = PossibleValuesParser::new(GpuKernels::NAMES).try_map(|s| s.parse::<GpuKernels>()))]
    kernels: GpuKernels,
    /// CPU integer kernels by name, e.g. `int8 avx2` to set them beside the best this CPU has
    /// (`int8 avx512-vnni`, `int8 avx-vnni`, `int8 avx2`, `int8 scalar`; default: the best).
    #[arg(long, value_name = "NAME")]
    cpu_kernels: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The device's assumed peak in T(FL)OP/s and where that number comes from.
fn assumed_peak(info: &BackendInfo, flag: Option<f64>) -> (Option<f64>, String) {
    if let Some(p) = flag {
        return (Some(p), "given with --peak-tflops".into());
    }
    if info.kind == BackendKind::Cpu {
        let threads = info.threads.unwrap_or(1);
        return match cpu_peak(&info.kernels, threads, &CpuFacts::here()) {
            Some((p, why)) => (Some(p), why),
            None => (None, format!("unknown for {} on this CPU (pass --peak-tflops)", info.kernels)),
        };
    }
    let name = info.adapter.as_deref().unwrap_or("an unnamed adapter");
    let up = name.to_uppercase();
    let known: Option<(f64, &str)> = if up.contains("H200") && up.contains("NVL") {
        Some((60.0, "NVIDIA H200 NVL: 60 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H200") {
        Some((67.0, "NVIDIA H200 SXM: the H100 SXM's GH100 configuration, 67 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H100") && up.contains("NVL") {
        Some((60.0, "NVIDIA H100 NVL: 60 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H100") && up.contains("PCIE") {
        Some((51.0, "NVIDIA H100 PCIe: 114 SMs × 128 FP32 lanes × 2 × 1.755 GHz = 51 TFLOP/s FP32"))
    } else if up.contains("H100") {
        Some((67.0, "NVIDIA H100 SXM: 132 SMs × 128 FP32 lanes × 2 × 1.98 GHz = 67 TFLOP/s FP32"))
    } else if up.contains("A100") {
        Some((19.5, "NVIDIA A100: 19.5 TFLOP/s FP32 (datasheet)"))
    } else {
        None
    };
    match known {
        Some((p, why)) => (Some(p), format!("{why}; FP32 without tensor cores, which WGSL kernels cannot use")),
        None if info.software_adapter => (None, format!("unknown: {name} is a software adapter running on the CPU (pass --peak-tflops)")),
        None => (None, format!("unknown for {name} (pass --peak-tflops)")),
    }
}

/// What the peak of a CPU is computed from: its clock and its physical cores (Linux's
/// `/proc/cpuinfo`; `None` where it does not say), and whether its SIMD units are 128 bits wide.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuFacts {
    mhz: Option<f64>,
    cores: Option<usize>,
    /// AMD Zen and Zen+ (family 23, models below 48): 256-bit instructions run as two 128-bit
    /// halves, and the byte dot product (`vpmaddubsw`) has one unit.
    halves: bool,
}

impl CpuFacts {
    fn here() -> Self {
        Self::parse(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
    }

    fn parse(cpuinfo: &str) -> Self {
        let field = |line: &str, name: &str| line.split_once(':').filter(|(k, _)| k.trim() == name).map(|(_, v)| v.trim().to_string());
        let mhz = cpuinfo.lines().find_map(|l| field(l, "cpu MHz")).and_then(|v| v.parse::<f64>().ok()).filter(|&m| m > 0.0);
        // Physical cores: distinct (physical id, core id) pairs; SMT siblings share one.
        let (mut package, mut cores) = (String::new(), std::collections::BTreeSet::new());
        for l in cpuinfo.lines() {
            if let Some(p) = field(l, "physical id") {
                package = p;
            } else if let Some(c) = field(l, "core id") {
                cores.insert((package.clone(), c));
            }
        }
        let first = |name: &str| cpuinfo.lines().find_map(|l| field(l, name));
        let number = |name: &str| first(name).and_then(|v| v.parse::<u32>().ok());
        let halves = first("vendor_id").as_deref() == Some("AuthenticAMD")
            && number("cpu family") == Some(23)
            && number("model").is_some_and(|m| m < 48);
        CpuFacts { mhz, cores: (!cores.is_empty()).then_some(cores.len()), halves }
    }
}

/// The CPU's peak for the kernels in use, in T(FL)OP/s, and how it was computed: the cores the
/// threads occupy × operations per cycle × the clock. Integer kernels count int8 operations (a
/// product and its addition are 2, as the FLOP counts of the weight products are): two 256-bit
/// `vpdpbusd` or `vpmaddubsw` a cycle per core (64 byte products); the f32 path: two 256-bit FMA
/// units (32 FLOP a cycle). AMD Zen and Zen+ ([`CpuFacts::halves`]): one 128-bit `vpmaddubsw` a
/// cycle (16 byte products) and two 128-bit FMA units (16 FLOP), as measured on an EPYC 7001 VM
/// (docs/measurements/speed.md). Other kernels (scalar, NEON, wasm): unknown.
fn cpu_peak(kernels: &str, threads: usize, facts: &CpuFacts) -> Option<(f64, String)> {
    let (per_cycle, unit, rate, why) = match (kernels, facts.halves) {
        ("int8 avx512-vnni" | "int8 avx-vnni", _) => (128.0, "int8 ops", "TOP/s", "two 256-bit vpdpbusd a cycle, 64 byte products"),
        ("int8 avx2", false) => (128.0, "int8 ops", "TOP/s", "two 256-bit vpmaddubsw a cycle, 64 byte products"),
        ("int8 avx2", true) => (32.0, "int8 ops", "TOP/s", "AMD Zen/Zen+: one 128-bit vpmaddubsw a cycle, 16 byte products"),
        ("f32", false) if cfg!(target_arch = "x86_64") => (32.0, "FLOP", "TFLOP/s", "two 256-bit FMA units"),
        ("f32", true) if cfg!(target_arch = "x86_64") => (16.0, "FLOP", "TFLOP/s", "AMD Zen/Zen+: two 128-bit FMA units"),
        _ => return None,
    };
    let ghz = facts.mhz? / 1e3;
    let cores = facts.cores.map_or(threads, |c| threads.min(c));
    let peak = cores as f64 * per_cycle * ghz / 1e3;
    Some((peak, format!("{cores} cores × {per_cycle} {unit}/cycle ({why}) × {ghz:.2} GHz (cpu MHz in /proc/cpuinfo) = {peak:.3} {rate}")))
}

/// This process's peak resident memory so far (Linux: `VmHWM` in /proc/self/status), `None`
/// elsewhere: the model, the workload's activations and caches, and the runtime.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// FLOPs of the prefill of `p` tokens and of the pass over `items` suffixes of `s` tokens each: every
/// layer for every row except the last layer, which computes only each suffix's final row (counted
/// as such: a lower bound, the last layer's keys and values of the other rows are left out).
fn flops(c: &Config, p: f64, items: f64, s: f64) -> (f64, f64) {
    let prefill = c.matmul_flops_per_token() * p + c.attention_flops(p * (p + 1.0) / 2.0);
    let per_layer = 1.0 / c.n_layer as f64;
    let rows = items * s;
    // Each suffix row attends to the prefix and causally to its own earlier rows.
    let keys = items * (s * p + s * (s + 1.0) / 2.0);
    let last_keys = items * (p + s);
    let suffixes = c.matmul_flops_per_token() * per_layer * ((c.n_layer as f64 - 1.0) * rows + items)
        + c.attention_flops(keys) * (1.0 - per_layer)
        + c.attention_flops(last_keys) * per_layer;
    (prefill, suffixes)
}

fn run_ours<B: Backend>(
    mut j: ModelJudge<B>,
    info: &BackendInfo,
    a: &Args,
    load_s: f64,
    peak_tflops: Option<f64>,
) -> Result<(Value, Vec<u32>, Vec<Vec<u32>>)> {
    let BenchWorkload { prefix, suffixes, .. } = BenchWorkload::new(&j.codec.tokenizer, a.prefix_tokens, a.items, a.suffix_tokens)?;
    let need = prefix.len() + suffixes.iter().map(Vec::len).max().unwrap_or(0).max(a.decode_tokens);
    if need > j.max_tokens {
        anyhow::bail!("the workload needs {need} tokens but --max-tokens is {}", j.max_tokens);
    }
    if let Some(c) = a.chunk {
        j.chunk = c.max(1);
    }
    let (mut pre, mut items, mut decode) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..=a.repeat {
        let t = Instant::now();
        j.prefill(&prefix)?;
        j.backend.sync();
        let tp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        pollster::block_on(j.grade_suffixes(prefix.len(), &suffixes))?;
        let ti = t.elapsed().as_secs_f64();
        // Generation on top of the prefix (the item pass did not store its keys and values), from
        // the first item's first token.
        let t = Instant::now();
        pollster::block_on(j.decode_greedy(prefix.len(), suffixes[0][0], a.decode_tokens))?;
        let td = t.elapsed().as_secs_f64();
        if rep > 0 {
            pre.push(tp);
            items.push(ti);
            decode.push(td);
        }
    }
    let (pre, items, decode) = (median(pre), median(items), median(decode));
    let p = prefix.len() as f64;
    let (prefill_flops, suffix_flops) = flops(&j.model.config, p, a.items as f64, a.suffix_tokens as f64);
    let (prefill_gflops, gflops) = (prefill_flops / pre / 1e9, (prefill_flops + suffix_flops) / (pre + items) / 1e9);
    let (peak, peak_why) = assumed_peak(info, peak_tflops);
    Ok((
        json!({
            "engine": "rocketjudge",
            "backend": info.description,
            "load_s": load_s,
            "chunk": j.chunk,
            "prefill_s": pre,
            "items_s": items,
            "prefill_tokens_per_s": p / pre,
            "items_per_s": a.items as f64 / (pre + items),
            "decode_tokens": a.decode_tokens,
            "decode_s": decode,
            "decode_tokens_per_s": (a.decode_tokens > 0).then(|| a.decode_tokens as f64 / decode),
            "seconds_per_response": pre + items,
            "prefill_gflops": prefill_gflops,
            "gflops": gflops,
            "peak_tflops": peak,
            "peak_source": peak_why,
            "peak_rss_bytes": peak_rss_bytes(),
            "prefill_fraction_of_peak": peak.map(|pk| prefill_gflops / (pk * 1e3)),
            "fraction_of_peak": peak.map(|pk| gflops / (pk * 1e3)),
        }),
        prefix,
        suffixes,
    ))
}

// ---------------------------------------------------------------- matrix products per weight type

const TYPES: [GgmlType; 11] = GgmlType::ALL;

/// GFLOP/s of x[m×k]·W[n×k]ᵀ (GEMM) and of one row (GEMV) for every weight type, and the GEMV's
/// weight bandwidth.
fn run_matmul<B: HostUpload>(backend: &mut B, shape: &str, reps: usize) -> Result<Value> {
    let dims: Vec<usize> = shape.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>().context("--matmul takes M,N,K")?;
    let [m, n, k] = dims[..] else { anyhow::bail!("--matmul takes M,N,K, e.g. 512,4096,4096") };
    let reps = reps.max(1) * 5;
    let x: Vec<f32> = (0..m * k).map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 500.0).collect();
    let mut rows = Vec::new();
    for (seed, dtype) in TYPES.into_iter().enumerate() {
        if k % dtype.block_size() != 0 {
            continue;
        }
        let bytes = random_weight(dtype, n, k, seed as u64);
        let info = TensorInfo { name: format!("{dtype:?}"), dims: vec![k as u64, n as u64], dtype, offset: 0, n_bytes: bytes.len() as u64 };
        let w = backend.load(&info, &bytes)?;
        let xs = backend.upload(m, k, x.clone())?;
        let x1 = backend.upload(1, k, x[..k].to_vec())?;
        let time = |b: &mut B, x: &B::Tensor, r: usize| {
            // The warm-up compiles the pipeline.
            drop(b.matmul(x, &w, None));
            b.sync();
            let t = Instant::now();
            for _ in 0..reps {
                drop(b.matmul(x, &w, None));
            }
            b.sync();
            let s = t.elapsed().as_secs_f64();
            (2.0 * r as f64 * n as f64 * k as f64 * reps as f64 / s / 1e9, s)
        };
        let (gemm, _) = time(backend, &xs, m);
        let (gemv, s) = time(backend, &x1, 1);
        rows.push(json!({"type": format!("{dtype:?}"), "gemm_gflops": gemm, "gemv_gflops": gemv, "gemv_weight_gb_per_s": bytes.len() as f64 * reps as f64 / s / 1e9}));
    }
    // Fixed costs: an empty wait, and one tiny dispatch (on WebGPU a forward is ~20 dispatches per layer).
    let t = Instant::now();
    backend.sync();
    let sync_ms = t.elapsed().as_secs_f64() * 1e3;
    let small = backend.upload(1, 256, vec![1.0; 256])?;
    drop(backend.add(&small, &small));
    backend.sync();
    let t = Instant::now();
    for _ in 0..100 {
        drop(backend.add(&small, &small));
    }
    backend.sync();
    let dispatch_ms = t.elapsed().as_secs_f64() * 10.0;
    Ok(json!({"m": m, "n": n, "k": k, "repetitions": reps, "types": rows, "empty_sync_ms": sync_ms, "tiny_op_ms": dispatch_ms}))
}

// ---------------------------------------------------------------- llama.cpp

/// llama.cpp on the same workload; `gpu`: all its layers offloaded (where its build has a GPU backend),
/// as our engine's WebGPU run has all of ours on the GPU.
fn run_llama_cpp(a: &Args, model: &std::path::Path, threads: usize, gpu: bool, prefix: &[u32], suffixes: &[Vec<u32>]) -> Result<Value> {
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

/// Our engine's result, the matmul sweep, and the workload's prefix and suffixes.
type Measured = (Value, Option<Value>, Vec<u32>, Vec<Vec<u32>>);

/// Our engine on the chosen backend: the matmul sweep (if asked for), the judge's load and its workload.
struct Bench<'a> {
    a: &'a Args,
    path: &'a std::path::Path,
    max: usize,
}

impl WithBackend for Bench<'_> {
    type Output = Result<Measured>;
    fn run<B: HostUpload>(self, mut backend: B, info: BackendInfo) -> Result<Measured> {
        let Bench { a, path, max } = self;
        let sweep = match &a.matmul {
            Some(shape) => Some(run_matmul(&mut backend, shape, a.repeat)?),
            None => None,
        };
        let t = Instant::now();
        let judge = judge_from_file(path, backend, max, &mut |_, _| {}).with_context(|| format!("cannot load {}", path.display()))?;
        let load_s = t.elapsed().as_secs_f64();
        let (ours, prefix, suffixes) = run_ours(judge, &info, a, load_s, a.peak_tflops)?;
        Ok((ours, sweep, prefix, suffixes))
    }
}

pub fn run(a: Args) -> CliResult {
    let path = models::resolve(&a.model)?;
    let threads = if a.judge.device.threads == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        a.judge.device.threads
    };
    // Room for the words that cross a token target (the workload cuts text between words).
    let max = a.judge.max_tokens.max(a.prefix_tokens + a.suffix_tokens.max(a.decode_tokens) + 16);
    let options = BackendOptions {
        threads,
        allow_f16: !a.no_f16,
        allow_subgroups: !a.no_subgroups,
        kernels: a.kernels,
        cpu_kernels: a.cpu_kernels.clone(),
        ..a.judge.device.options()
    };
    let (ours, sweep, prefix, suffixes) = device::with_backend(a.judge.device.backend, &options, Bench { a: &a, path: &path, max })??;
    let reference = match a.reference.as_str() {
        "none" => None,
        r => match run_llama_cpp(&a, &path, threads, !is_cpu(&ours), &prefix, &suffixes) {
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
        "workload": {"prefix_tokens": prefix.len(), "items": a.items, "suffix_tokens": suffixes.iter().map(Vec::len).sum::<usize>() as f64 / suffixes.len() as f64, "threads": threads, "repeat": a.repeat},
        "rocketjudge": ours,
    });
    if let Some(s) = &sweep {
        report["matmul"] = s.clone();
    }
    if let Some(r) = &reference {
        report["llama_cpp"] = r.clone();
        report["ratio"] = json!({
            "prefill_tokens_per_s": ours["prefill_tokens_per_s"].as_f64().unwrap() / r["prefill_tokens_per_s"].as_f64().unwrap(),
            "speedup_seconds_per_response": r["seconds_per_response"].as_f64().unwrap() / ours["seconds_per_response"].as_f64().unwrap(),
            "decode_tokens_per_s": ours["decode_tokens_per_s"].as_f64().zip(r["decode_tokens_per_s"].as_f64()).map(|(o, l)| o / l),
        });
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print_table(&a, threads, &report),
    }
    Ok(())
}

fn is_cpu(ours: &Value) -> bool {
    ours["backend"].as_str().is_some_and(|b| b.starts_with("cpu"))
}

fn print_table(a: &Args, threads: usize, report: &Value) {
    let ours = &report["rocketjudge"];
    let f = |v: &Value, k: &str| v[k].as_f64().map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
    let mib = |v: &Value| v["peak_rss_bytes"].as_f64().map(|b| format!("{:.0}", b / 1048576.0)).unwrap_or_else(|| "–".into());
    let pct = |v: &Value, k: &str| v[k].as_f64().map(|x| format!("{:.1}%", x * 100.0)).unwrap_or_else(|| "unknown".into());
    if let Some(s) = report.get("matmul") {
        println!(
            "matrix products on {}: x[{}×{}] · W[{}×{}]ᵀ (GEMM) and 1 row (GEMV), {} repetitions each",
            ours["backend"].as_str().unwrap_or(""),
            s["m"],
            s["k"],
            s["n"],
            s["k"],
            s["repetitions"]
        );
        let rows: Vec<Vec<String>> = s["types"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                vec![t["type"].as_str().unwrap_or("").to_string(), f(t, "gemm_gflops"), f(t, "gemv_gflops"), f(t, "gemv_weight_gb_per_s")]
            })
            .collect();
        print!("{}", super::text_table(&["type", "GEMM GFLOP/s", "GEMV GFLOP/s", "GEMV GB/s (weights)"], &rows));
        println!(
            "empty sync {:.3} ms; one tiny op (add of 256 values) {:.3} ms\n",
            s["empty_sync_ms"].as_f64().unwrap_or(0.0),
            s["tiny_op_ms"].as_f64().unwrap_or(0.0)
        );
    }
    let cpu = is_cpu(ours);
    println!(
        "{} · prefix {} tokens, {} items × {:.1} tokens{}, median of {} (load {:.1}s, prefill chunks of {})",
        a.model,
        report["workload"]["prefix_tokens"],
        a.items,
        report["workload"]["suffix_tokens"].as_f64().unwrap_or(0.0),
        if cpu { format!(", {threads} threads") } else { String::new() },
        a.repeat,
        ours["load_s"].as_f64().unwrap_or(0.0),
        ours["chunk"]
    );
    println!(
        "peak: {} — {}",
        ours["peak_tflops"].as_f64().map(|p| format!("{p:.3} T(FL)OP/s")).unwrap_or_else(|| "unknown".into()),
        ours["peak_source"].as_str().unwrap_or("")
    );
    let mut rows = vec![vec![
        format!("rocketjudge ({})", ours["backend"].as_str().unwrap_or("")),
        f(ours, "prefill_tokens_per_s"),
        f(ours, "items_per_s"),
        f(ours, "seconds_per_response"),
        f(ours, "decode_tokens_per_s"),
        f(ours, "prefill_gflops"),
        f(ours, "gflops"),
        pct(ours, "fraction_of_peak"),
        mib(ours),
    ]];
    if let Some(r) = report.get("llama_cpp") {
        rows.push(vec![
            format!(
                "llama.cpp {} on {} (prefix KV reused; {})",
                r["llama_cpp_python"].as_str().unwrap_or(""),
                r["device"].as_str().unwrap_or("cpu"),
                llama_settings(&r["settings"])
            ),
            f(r, "prefill_tokens_per_s"),
            f(r, "items_per_s"),
            f(r, "seconds_per_response"),
            f(r, "decode_tokens_per_s"),
            "–".into(),
            "–".into(),
            "–".into(),
            mib(r),
        ]);
        if let Some(s) = r["scratch_s"].as_f64() {
            rows.push(vec![
                "llama.cpp (prefix re-run per item)".into(),
                "–".into(),
                format!("{:.2}", a.items as f64 / s),
                format!("{s:.2}"),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
            ]);
        }
    }
    print!(
        "{}",
        super::text_table(
            &["engine", "prefill tok/s", "items/s", "s/response", "decode tok/s", "prefill GFLOP/s", "GFLOP/s", "of peak", "peak RSS MiB"],
            &rows
        )
    );
    let r = &report["llama_cpp"];
    if let Some(pilot) = r["pilot"].as_array().filter(|p| !p.is_empty()) {
        let tried: Vec<String> = pilot
            .iter()
            .map(|p| format!("{} {:.1} tok/s", threads_phrase(&p["threads"]), p["prefix_tokens_per_s"].as_f64().unwrap_or(0.0)))
            .collect();
        println!("llama.cpp's thread count from a pilot on {} tokens of the prefix: {}", pilot[0]["tokens"], tried.join(", "));
    }
    if let Some(runs) = r["runs"].as_array().filter(|r| r.len() > 1) {
        let each: Vec<String> = runs
            .iter()
            .map(|run| {
                let (pre, items) = (run["prefill_s"].as_f64().unwrap_or(0.0), run["items_s"].as_f64().unwrap_or(0.0));
                format!(
                    "flash attention {}: prefill {:.2} tok/s, {:.2} s/response",
                    if run["settings"]["flash_attn"].as_bool().unwrap_or(false) { "on" } else { "off" },
                    report["workload"]["prefix_tokens"].as_f64().unwrap_or(0.0) / pre,
                    pre + items
                )
            })
            .collect();
        println!("llama.cpp's workload both ways — {}; its row is the faster response", each.join("; "));
    }
    if let Some(b) = r.get("best_prefill") {
        println!(
            "llama.cpp's prefill figure is from its faster prefill, {} (the rest of its row from the faster response)",
            llama_settings(&b["settings"])
        );
    }
    if let Some(r) = report.get("ratio") {
        println!(
            "ratio: prefill throughput ×{:.2} of llama.cpp; seconds per response ×{:.2} faster{}",
            r["prefill_tokens_per_s"].as_f64().unwrap(),
            r["speedup_seconds_per_response"].as_f64().unwrap(),
            r["decode_tokens_per_s"].as_f64().map(|d| format!("; decode ×{d:.2} of llama.cpp")).unwrap_or_default()
        );
    }
}

/// "2 threads, flash attention on, batch 1556 (physical 512)" from llama_cpp_bench.py's settings.
fn llama_settings(s: &Value) -> String {
    let mut out = format!(
        "{}, flash attention {}",
        threads_phrase(&s["threads"]),
        if s["flash_attn"].as_bool().unwrap_or(false) { "on" } else { "off" }
    );
    if let (Some(b), Some(u)) = (s["n_batch"].as_u64(), s["n_ubatch"].as_u64()) {
        out += &format!(", batch {b} (physical {u})");
    }
    out
}

/// "1 thread", "2 threads".
fn threads_phrase(n: &Value) -> String {
    let n = n.as_u64().unwrap_or(0);
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::{assumed_peak, cpu_peak, llama_settings, CpuFacts};
    use rocketjudge_engine::device::{BackendInfo, BackendKind};

    fn gpu(name: &str, software_adapter: bool) -> BackendInfo {
        BackendInfo {
            kind: BackendKind::WebGpu,
            description: String::new(),
            why: String::new(),
            adapter: Some(name.into()),
            vendor: None,
            device_type: None,
            software_adapter,
            threads: None,
            kernels: String::new(),
            precision: None,
            f16: false,
            subgroups: false,
        }
    }

    #[test]
    fn peaks_come_from_the_flag_or_the_gpu_name_or_are_unknown() {
        let cpu = BackendInfo { kind: BackendKind::Cpu, adapter: None, kernels: "int8 scalar".into(), ..gpu("", false) };
        assert_eq!(assumed_peak(&cpu, Some(1.5)).0, Some(1.5));
        assert_eq!(assumed_peak(&cpu, None).0, None);
        assert_eq!(assumed_peak(&gpu("NVIDIA H100 80GB HBM3", false), None).0, Some(67.0));
        assert_eq!(assumed_peak(&gpu("NVIDIA H100 PCIe", false), None).0, Some(51.0));
        assert_eq!(assumed_peak(&gpu("NVIDIA H200", false), None).0, Some(67.0));
        let (p, why) = assumed_peak(&gpu("llvmpipe (LLVM 19.1.7, 256 bits)", true), None);
        assert_eq!(p, None);
        assert!(why.contains("llvmpipe (LLVM 19.1.7, 256 bits)") && why.contains("software adapter"), "{why}");
    }

    /// A CPU's peak: the cores the threads occupy (SMT siblings share one) × the kernels' operations
    /// per cycle × the clock from /proc/cpuinfo.
    #[test]
    fn a_cpu_peak_comes_from_its_cores_clock_and_kernels() {
        // Two packages of two cores, each core with two SMT threads (8 logical CPUs).
        let mut info = String::new();
        for (p, c) in [(0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0), (1, 1), (1, 1)] {
            info += &format!("processor\t: x\ncpu MHz\t\t: 2500.000\nphysical id\t: {p}\ncore id\t\t: {c}\n\n");
        }
        let facts = CpuFacts::parse(&info);
        assert_eq!(facts, CpuFacts { mhz: Some(2500.0), cores: Some(4), halves: false });
        // 2 threads: 2 cores × 128 int8 ops × 2.5 GHz; 8 threads still occupy only 4 cores.
        assert!((cpu_peak("int8 avx512-vnni", 2, &facts).unwrap().0 - 0.64).abs() < 1e-12);
        assert!((cpu_peak("int8 avx2", 8, &facts).unwrap().0 - 1.28).abs() < 1e-12);
        if cfg!(target_arch = "x86_64") {
            let (f32_peak, why) = cpu_peak("f32", 1, &facts).unwrap();
            assert!((f32_peak - 0.08).abs() < 1e-12 && why.contains("2.50 GHz"), "{why}");
        }
        assert_eq!(cpu_peak("int8 scalar", 2, &facts), None);
        // No clock given: unknown; no core ids: the threads count as cores.
        assert_eq!(cpu_peak("int8 avx2", 2, &CpuFacts::parse("processor\t: 0\n")), None);
        let (p, _) = cpu_peak("int8 avx2", 3, &CpuFacts::parse("cpu MHz\t: 1000\n")).unwrap();
        assert!((p - 0.384).abs() < 1e-12);
    }

    /// The llama.cpp row names the settings it ran under (the batch only where they give it).
    #[test]
    fn the_reference_row_names_its_settings() {
        let s = serde_json::json!({"threads": 1, "flash_attn": true, "n_batch": 1580, "n_ubatch": 512});
        assert_eq!(llama_settings(&s), "1 thread, flash attention on, batch 1580 (physical 512)");
        assert_eq!(llama_settings(&serde_json::json!({"threads": 2, "flash_attn": false})), "2 threads, flash attention off");
    }

    /// AMD Zen and Zen+ (family 23, models below 48) run 256-bit instructions as two halves: a
    /// quarter of the int8 peak, half the f32 one. Zen 2 (model 49) and Intel keep the full peak.
    #[test]
    fn zen_and_zen_plus_have_a_128_bit_peak() {
        let info = |vendor: &str, family: u32, model: u32| {
            format!("processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\ncpu MHz\t\t: 2000.000\n")
        };
        let zen = CpuFacts::parse(&info("AuthenticAMD", 23, 1));
        assert!(zen.halves);
        assert!((cpu_peak("int8 avx2", 2, &zen).unwrap().0 - 0.128).abs() < 1e-12);
        if cfg!(target_arch = "x86_64") {
            assert!((cpu_peak("f32", 2, &zen).unwrap().0 - 0.064).abs() < 1e-12);
        }
        for (vendor, family, model) in [("AuthenticAMD", 23, 49), ("AuthenticAMD", 25, 1), ("GenuineIntel", 6, 1)] {
            let facts = CpuFacts::parse(&info(vendor, family, model));
            assert!(!facts.halves, "{vendor} family {family} model {model}");
            assert!((cpu_peak("int8 avx2", 2, &facts).unwrap().0 - 0.512).abs() < 1e-12);
        }
    }
}
