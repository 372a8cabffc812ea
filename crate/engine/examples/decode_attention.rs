//! Time the CPU backend's attention of one decoded token alone: one query row against a cache of
//! PREFIX random keys and values in each of LAYERS layers (a token's attention visits every layer's
//! cache once, so with many layers it reads them from memory, as decoding does). Prints the median
//! milliseconds a token over REPS timings of TOKENS tokens, and a hash of the outputs' bits (the same
//! hash, the same values).
//!
//! `cargo run --release -p rocketjudge-engine --example decode_attention -- THREADS PREFIX TOKENS REPS`
//! (defaults 2 1500 16 8); the shapes from the environment, the 1.5B's by default: LAYERS=28 HD=128
//! NHEAD=12 NKV=2 (the 0.5B: LAYERS=24 HD=64 NHEAD=14 NKV=2). docs/measurements/speed.md
//! ("The attention of a decoded token") records what it measured.

use std::time::Instant;

use rocketjudge_engine::backend::cpu::{Cpu, Tensor};
use rocketjudge_engine::backend::{AttnLayout, AttnParams, Backend};

fn main() {
    let arg = |i: usize, d: usize| std::env::args().nth(i).map(|t| t.parse().expect("a number")).unwrap_or(d);
    let (threads, prefix, tokens, reps) = (arg(1, 2), arg(2, 1500), arg(3, 16), arg(4, 8));
    let env = |k: &str, d: usize| std::env::var(k).map(|s| s.parse().expect("a number")).unwrap_or(d);
    let (layers, hd, n_head, n_kv) = (env("LAYERS", 28), env("HD", 128), env("NHEAD", 12), env("NKV", 2));
    let kv_dim = n_kv * hd;
    let mut seed = 7u64;
    let mut rand = |n: usize, scale: f32| -> Vec<f32> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
            })
            .collect()
    };
    let mut cpu = Cpu::new(threads).unwrap();
    let caches: Vec<_> = (0..layers)
        .map(|_| {
            let mut c = cpu.new_cache(prefix + 1, kv_dim).unwrap();
            let t = |data| Tensor { rows: prefix, cols: kv_dim, data };
            cpu.append_cache(&mut c, &t(rand(prefix * kv_dim, 1.5)), &t(rand(prefix * kv_dim, 1.0))).unwrap();
            c
        })
        .collect();
    let p = AttnParams {
        n_head,
        n_head_kv: n_kv,
        head_dim: hd,
        scale: 1.0 / (hd as f32).sqrt(),
        scale_q_first: false,
        softcap: None,
        window: None,
    };
    let q = Tensor { rows: 1, cols: n_head * hd, data: rand(n_head * hd, 3.0) };
    let (k, v) = (Tensor { rows: 1, cols: kv_dim, data: rand(kv_dim, 1.5) }, Tensor { rows: 1, cols: kv_dim, data: rand(kv_dim, 1.0) });
    let layout = AttnLayout { positions: vec![prefix as u32], segments: vec![0], query_rows: vec![0] };
    let mut hash = 0u64;
    for c in &caches {
        for x in cpu.attention(&q, &k, &v, c, &layout, &p).data {
            hash = hash.wrapping_mul(31).wrapping_add(u64::from(x.to_bits()));
        }
    }
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..tokens {
                for c in &caches {
                    std::hint::black_box(cpu.attention(&q, &k, &v, c, &layout, &p));
                }
            }
            t0.elapsed().as_secs_f64() * 1e3 / tokens as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{}", serde_json::json!({"median_ms": times[times.len() / 2], "min_ms": times[0], "bits": format!("{hash:016x}")}));
}
