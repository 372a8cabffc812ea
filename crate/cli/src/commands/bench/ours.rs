//! Our engine on the bench workload (prefill, items, decode; the median of the repetitions) and the
//! sweep of matrix products per weight type.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use rocketjudge_engine::backend::cpu::qmatmul::{amx_status, random_weight};
use rocketjudge_engine::backend::optimes::OpTimes;
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::device::{BackendInfo, BackendKind, HostUpload};
use rocketjudge_engine::gguf::TensorInfo;
use rocketjudge_engine::judge::{BenchWorkload, ModelJudge};
use rocketjudge_engine::quant::GgmlType;
use serde_json::{json, Value};

use super::peak::{assumed_peak, flops, peak_rss_bytes};
use super::Args;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(super) fn run_ours<B: Backend>(
    mut j: ModelJudge<B>,
    info: &BackendInfo,
    a: &Args,
    load_s: f64,
    op_times: Option<Arc<OpTimes>>,
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
        if let (1, Some(t)) = (rep, &op_times) {
            // The operations' times of the timed repetitions only, as the figures below.
            t.reset();
        }
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
    let timed_s: f64 = pre.iter().chain(&items).chain(&decode).sum();
    let (pre, items, decode) = (median(pre), median(items), median(decode));
    let p = prefix.len() as f64;
    let (prefill_flops, suffix_flops) = flops(&j.model.config, p, a.items as f64, a.suffix_tokens as f64);
    let (prefill_gflops, gflops) = (prefill_flops / pre / 1e9, (prefill_flops + suffix_flops) / (pre + items) / 1e9);
    let (peak, peak_why) = assumed_peak(info, a.peak_tflops);
    let op_times = op_times.map(|t| op_times_json(&t, a.repeat as f64, timed_s / a.repeat as f64, a.splits));
    Ok((
        json!({
            "op_times": op_times,
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
            "amx": amx_line(info),
            "prefill_fraction_of_peak": peak.map(|pk| prefill_gflops / (pk * 1e3)),
            "fraction_of_peak": peak.map(|pk| gflops / (pk * 1e3)),
        }),
        prefix,
        suffixes,
    ))
}

/// On a CPU with Intel AMX (the matrix units), whether the CPU backend's products of many rows
/// take them, or why not; None elsewhere or on another backend.
fn amx_line(info: &BackendInfo) -> Option<String> {
    if info.kind != BackendKind::Cpu {
        return None;
    }
    amx_status().map(|s| match s {
        Ok(()) if info.kernels == "int8 amx" => "the products of 4 rows or more run on the tiles".to_string(),
        Ok(()) => format!("present, not used: the kernels are {}", info.kernels),
        Err(why) => format!("present, not used: {why}"),
    })
}

/// Each operation's calls and seconds a repetition, its share of a repetition's wall time, and the
/// time outside every operation (the serial glue between them: the model's own steps, allocation).
/// With `--splits` (`splits`: `Some(0)` on the run's threads, `Some(P)` replayed on P), each
/// operation's parallel steps too, and `bound_s`: its time had each step taken only its busiest
/// worker's (the rest of the operation, serial, unchanged); the repetition's likewise, without the
/// time the timing took (`instrument_s`, neither an operation's nor outside them).
fn op_times_json(times: &OpTimes, repetitions: f64, wall_s: f64, splits: Option<usize>) -> Value {
    let ops = times.snapshot();
    let inside: f64 = ops.iter().map(|t| t.seconds).sum::<f64>() / repetitions;
    let instrument: f64 = ops.iter().map(|t| t.split.timing_s).sum::<f64>() / repetitions;
    let outside = wall_s - inside - instrument;
    let mut saved = 0.0;
    let rows: Vec<Value> = ops
        .iter()
        .map(|t| {
            let s = t.seconds / repetitions;
            let mut row = json!({"op": t.op.name(), "calls": t.calls as f64 / repetitions, "seconds": s, "share": s / wall_s});
            if splits.is_some() {
                let sp = &t.split;
                let (wall, busiest) = (sp.wall_s / repetitions, sp.busiest_s / repetitions);
                saved += wall - busiest;
                row["splits"] = json!({
                    "regions": sp.regions as f64 / repetitions,
                    "tasks": sp.tasks as f64 / repetitions,
                    "wall_s": wall,
                    "work_s": sp.work_s / repetitions,
                    "busiest_s": busiest,
                    "bound_s": s - wall + busiest,
                });
            }
            row
        })
        .collect();
    let mut v = json!({"wall_s": wall_s, "ops": rows, "outside_s": outside, "outside_share": outside / wall_s});
    if let Some(p) = splits {
        v["splits"] = json!({"split_as": (p > 0).then_some(p), "instrument_s": instrument, "bound_s": wall_s - instrument - saved});
    }
    v
}

// ---------------------------------------------------------------- matrix products per weight type

const TYPES: [GgmlType; 11] = GgmlType::ALL;

/// GFLOP/s of x[m×k]·W[n×k]ᵀ (GEMM) and of one row (GEMV) for every weight type, and the GEMV's
/// weight bandwidth.
pub(super) fn run_matmul<B: HostUpload>(backend: &mut B, shape: &str, reps: usize) -> Result<Value> {
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
