//! `rocketjudge bench`: how fast the judge grades, on the CPU or WebGPU backend, with llama.cpp side by
//! side. A benchmark, not a test: it prints numbers and ratios, it asserts nothing.

mod ours;
mod peak;
mod reference;
mod table;

use ours::run_ours;
use reference::run_llama_cpp;
use table::print_table;

use std::time::Instant;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_engine::backend::cpu::qmatmul;
use rocketjudge_engine::device::{self, BackendInfo, BackendOptions, GpuKernels, HostUpload, WithBackend};
use rocketjudge_engine::load::judge_from_file;
use serde_json::{json, Value};

use super::CliResult;
use super::Format;
use crate::{judges, models};

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
    /// Each operation's wall time a repetition (matmul, attention, norms, …) and the time outside
    /// every operation, on the CPU: run at several --threads, an operation that speeds up less than
    /// the others is where threads wait.
    #[arg(long)]
    op_times: bool,
    /// On the CPU (implies --op-times): how each operation's parallel work spread over the threads.
    /// Bare, on the run's own threads: per operation its tasks' work, its busiest worker's and the
    /// pool's own time (each region's wall beyond its busiest worker). `--splits P` with `--threads
    /// 1`: the work split as for P threads, every task timed on the one thread and replayed on P
    /// workers: the speed-up each operation's split allows at P, from a machine with fewer cores.
    #[arg(long, value_name = "P", num_args = 0..=1, default_missing_value = "0")]
    splits: Option<usize>,
    /// On the CPU: also run the product kernel alone, on one thread and on --threads at once (each
    /// thread its own share, nothing to wait for) on a prefill's tile from the caches, and a plain
    /// read of 256 MiB of memory (a decoded token streams its weights). The speed-ups the CPU
    /// itself gives those threads (clocks under load, threads sharing a core, memory bandwidth),
    /// against which the engine's own are read.
    #[arg(long)]
    cpu_ceiling: bool,
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
    /// WebGPU: the many-row products on cooperative matrices (the GPU's matrix units) where the
    /// adapter has them; off by default until measured on a GPU.
    #[arg(long)]
    cooperative_matrix: bool,
    /// WebGPU kernels: `auto` (software-shaped on CPU adapters), `gpu`, or `software`.
    #[arg(long, default_value_t = GpuKernels::Auto, value_parser = PossibleValuesParser::new(GpuKernels::NAMES).try_map(|s| s.parse::<GpuKernels>()))]
    kernels: GpuKernels,
    /// CPU integer kernels by name, e.g. `int8 avx2` to set them beside the best this CPU has
    /// (`int8 amx`, `int8 avx512-vnni`, `int8 avx-vnni`, `int8 avx2`, `int8 scalar`; default: the best).
    #[arg(long, value_name = "NAME")]
    cpu_kernels: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
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
    fn run<B: HostUpload>(self, mut backend: B, mut info: BackendInfo) -> Result<Measured> {
        let Bench { a, path, max } = self;
        let sweep = match &a.matmul {
            Some(shape) => Some(ours::run_matmul(&mut backend, shape, a.repeat)?),
            None => None,
        };
        let op_times = match a.splits {
            Some(p) => Some(backend.time_splits((p > 0).then_some(p)).map_err(|e| match p {
                0 => anyhow::anyhow!("--splits: {e}"),
                p => anyhow::anyhow!("--splits {p}: {e}: give --threads 1"),
            })?),
            None if a.op_times => backend.time_ops(),
            None => None,
        };
        if a.splits.is_some() {
            // Its description now says how the work is split.
            info.description = backend.describe();
        }
        if a.op_times && op_times.is_none() {
            eprintln!("--op-times: {} does not time its operations; the CPU backend does", info.description);
        }
        let t = Instant::now();
        let judge = judge_from_file(path, backend, max, &mut |_, _| {}).with_context(|| format!("cannot load {}", path.display()))?;
        let load_s = t.elapsed().as_secs_f64();
        let (ours, prefix, suffixes) = run_ours(judge, &info, a, load_s, op_times)?;
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
        allow_cooperative_matrix: a.cooperative_matrix,
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
    if a.cpu_ceiling {
        report["cpu_ceiling"] = if is_cpu(&ours) { cpu_ceiling(&options)? } else { Value::Null };
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

/// `--cpu-ceiling`: the product kernel alone on one thread and on `threads` ([`qmatmul::ceiling`]),
/// multiply-adds a second from the caches, and bytes a second read from memory.
fn cpu_ceiling(options: &BackendOptions) -> Result<Value> {
    let (threads, kernels) = (options.threads, options.cpu_kernel_choice()?);
    let c = qmatmul::ceiling(threads, kernels, 0.5);
    let side = |[one, all]: [f64; 2]| json!({"one_thread": one / 1e9, "all_threads": all / 1e9, "speedup": all / one});
    Ok(json!({"threads": threads, "kernel": qmatmul::kernel_name(kernels), "compute_gmacs": side(c.compute), "memory_gbs": side(c.memory)}))
}

pub(super) fn is_cpu(ours: &Value) -> bool {
    ours["backend"].as_str().is_some_and(|b| b.starts_with("cpu"))
}
