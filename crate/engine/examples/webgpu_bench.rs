//! Throughput of the WebGPU backend: GFLOP/s of the matrix-product kernels for every weight type,
//! then of a whole prefill on a real judge model.
//!
//! ```text
//! cargo run --release -p rocketjudge-engine --features webgpu --example webgpu_bench -- \
//!     [--m 512] [--n 4096] [--k 4096] [--reps 20] [--model PATH.gguf] [--tokens 1024] [--no-f16]
//!     [--kernels auto|gpu|software]
//! ```
//!
//! Without `--model`, the prefill uses ~/.cache/rocketjudge/models/qwen2.5-coder-0.5b.gguf when it
//! exists. Timings on a software adapter (lavapipe, SwiftShader) say nothing about GPU speed.

use std::path::PathBuf;
use std::time::Instant;

use rocketjudge_engine::backend::webgpu::{KernelSet, WebGpu, WebGpuOptions};
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::gguf::TensorInfo;
use rocketjudge_engine::load::judge_from_file;
use rocketjudge_engine::quant::GgmlType;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Random blocks with small f16 scales where the format has them.
fn random_weight(seed: &mut u64, dtype: GgmlType, rows: usize, cols: usize) -> Vec<u8> {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let mut b: Vec<u8> = (0..dtype.row_bytes(cols) * rows).map(|_| next() as u8).collect();
    let scale_at: &[usize] = match dtype {
        GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
        GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4K | GgmlType::Q5K => &[0, 2],
        GgmlType::Q6K => &[208],
        GgmlType::F16 | GgmlType::BF16 | GgmlType::F32 => &[],
    };
    for blk in b.chunks_exact_mut(dtype.block_bytes()) {
        for &o in scale_at {
            blk[o..o + 2].copy_from_slice(&half::f16::from_f32(0.01).to_le_bytes());
        }
    }
    match dtype {
        GgmlType::F16 => b.chunks_exact_mut(2).for_each(|c| c[1] &= 0x3B),
        GgmlType::BF16 => b.chunks_exact_mut(2).for_each(|c| c[1] &= 0x3F),
        GgmlType::F32 => b.chunks_exact_mut(4).for_each(|c| c[3] &= 0x3F),
        _ => {}
    }
    b
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (m, n, k) = (arg(&args, "--m", 512usize), arg(&args, "--n", 4096usize), arg(&args, "--k", 4096usize));
    let reps = arg(&args, "--reps", 20usize);
    let tokens = arg(&args, "--tokens", 1024usize);
    let options = WebGpuOptions {
        allow_f16: !args.iter().any(|a| a == "--no-f16"),
        kernels: match arg(&args, "--kernels", String::from("auto")).as_str() {
            "gpu" => KernelSet::Gpu,
            "software" => KernelSet::Software,
            _ => KernelSet::Auto,
        },
        ..Default::default()
    };
    let mut gpu = pollster::block_on(WebGpu::new(options.clone())).expect("a WebGPU adapter");
    println!("{}", gpu.describe());
    println!("GEMM x[{m}×{k}] · W[{n}×{k}]ᵀ and GEMV (1 row), {reps} repetitions each");
    println!("{:<6} {:>12} {:>12} {:>14}", "type", "GEMM GFLOP/s", "GEMV GFLOP/s", "GEMV GB/s (W)");
    if args.iter().any(|a| a == "--micro") {
        let n = 1 << 22;
        let a = gpu.tensor(1024, 4096, &vec![1.0; n]).unwrap();
        let b = gpu.tensor(1024, 4096, &vec![2.0; n]).unwrap();
        drop(gpu.add(&a, &b));
        gpu.sync();
        let t = Instant::now();
        gpu.sync();
        println!("empty sync {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for _ in 0..10 {
            drop(gpu.add(&a, &b));
        }
        gpu.sync();
        let s = t.elapsed().as_secs_f64();
        println!("add 4M: {:.2} ms each, {:.2} GB/s", s * 100.0, 12.0 * n as f64 * 10.0 / s / 1e9);
        let small = gpu.tensor(1, 256, &vec![1.0; 256]).unwrap();
        let t = Instant::now();
        for _ in 0..100 {
            drop(gpu.add(&small, &small));
        }
        gpu.sync();
        println!("tiny add: {:.3} ms per dispatch", t.elapsed().as_secs_f64() * 10.0);
        return;
    }
    let mut seed = 0x1234_5678u64;
    let x: Vec<f32> = (0..m * k).map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 500.0).collect();
    for dtype in [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::BF16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q4K,
        GgmlType::Q5K,
        GgmlType::Q6K,
    ] {
        if k % dtype.block_size() != 0 {
            continue;
        }
        let bytes = random_weight(&mut seed, dtype, n, k);
        let info = TensorInfo { name: format!("{dtype:?}"), dims: vec![k as u64, n as u64], dtype, offset: 0, n_bytes: bytes.len() as u64 };
        let w = gpu.load(&info, &bytes).expect("upload");
        let xs = gpu.tensor(m, k, &x).expect("upload x");
        let x1 = gpu.tensor(1, k, &x[..k]).expect("upload x");
        let mut time = |gpu: &mut WebGpu, x: &_, rows: usize| {
            // Warm-up compiles the pipeline.
            drop(gpu.matmul(x, &w, None));
            gpu.sync();
            let t = Instant::now();
            for _ in 0..reps {
                drop(gpu.matmul(x, &w, None));
            }
            gpu.sync();
            let s = t.elapsed().as_secs_f64();
            (2.0 * rows as f64 * n as f64 * k as f64 * reps as f64 / s / 1e9, s)
        };
        let (gemm, _) = time(&mut gpu, &xs, m);
        let (gemv, s) = time(&mut gpu, &x1, 1);
        let wbytes = bytes.len() as f64 * reps as f64 / s / 1e9;
        println!("{:<6} {gemm:>12.1} {gemv:>12.1} {wbytes:>14.1}", format!("{dtype:?}"));
    }

    let model = args.iter().position(|a| a == "--model").and_then(|i| args.get(i + 1)).map(PathBuf::from).or_else(|| {
        let p = PathBuf::from(std::env::var_os("HOME")?).join(".cache/rocketjudge/models/qwen2.5-coder-0.5b.gguf");
        p.exists().then_some(p)
    });
    let Some(model) = model else {
        println!("no model for the prefill benchmark (--model PATH)");
        return;
    };
    let gpu = pollster::block_on(WebGpu::new(options)).expect("a WebGPU adapter");
    let t = Instant::now();
    let mut judge = judge_from_file(&model, gpu, tokens + 1, &mut |_, _| {}).expect("load");
    println!("\nloaded {} in {:.1}s", model.display(), t.elapsed().as_secs_f64());
    let c = judge.model.config.clone();
    let vocab = c.vocab.max(1000) as u32;
    let prompt: Vec<u32> = (0..tokens as u32).map(|i| (i * 2654435761u32) % vocab).collect();
    // Matrix FLOPs per token (every projection) plus causal attention (QKᵀ and PV).
    let (q, kv) = (c.n_head * c.head_dim, c.n_head_kv * c.head_dim);
    let per_token = 2.0 * (c.n_embd * (2 * q + 2 * kv) + 3 * c.n_embd * c.n_ff) as f64 * c.n_layer as f64;
    let attn = 2.0 * 2.0 * (tokens * tokens / 2) as f64 * q as f64 * c.n_layer as f64;
    judge.prefill(&prompt[..tokens.min(64)]).expect("warm-up");
    judge.backend.sync();
    for chunk in [512usize, tokens] {
        judge.chunk = chunk;
        let t = Instant::now();
        judge.prefill(&prompt).expect("prefill");
        judge.backend.sync();
        let s = t.elapsed().as_secs_f64();
        println!(
            "prefill of {tokens} tokens in chunks of {chunk}: {s:.3}s, {:.0} tokens/s, {:.1} GFLOP/s",
            tokens as f64 / s,
            (per_token * tokens as f64 + attn) / s / 1e9
        );
    }
}
