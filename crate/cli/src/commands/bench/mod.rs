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
            Some(shape) => Some(ours::run_matmul(&mut backend, shape, a.repeat)?),
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

pub(super) fn is_cpu(ours: &Value) -> bool {
    ours["backend"].as_str().is_some_and(|b| b.starts_with("cpu"))
}

#[cfg(test)]
mod tests {
    use super::peak::{assumed_peak, cpu_peak, CpuFacts};
    use super::table::llama_settings;
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
