//! Time the CPU backend's integer products of one activation row (a decoded token's) alone: MATS
//! random weights of TYPE, N × K each, enough of them together to stream from memory as decoding
//! does, each product run in turn on a pool of THREADS threads. Prints the median milliseconds of a
//! pass over them all (REPS passes), the weights' bytes a second (as repacked, and as the file holds
//! them), and a hash of the outputs' bits (the same hash, the same values).
//!
//! `cargo run --release -p rocketjudge-engine --example decode_products -- THREADS REPS` (defaults
//! 2 and 15); the shapes from the environment: TYPE=Q4K (or Q6K, Q5_0, …: `GgmlType`'s names)
//! N=8960 K=1536 (the 1.5B's `ffn_up`) MATS=32. docs/measurements/speed.md ("Multipliers at the
//! file's width") records what it measured.

use std::time::Instant;

use rocketjudge_engine::backend::cpu::qmatmul::{self, Kernels, QActs, QWeight};

fn main() {
    let arg = |i: usize, d: usize| std::env::args().nth(i).map(|t| t.parse().expect("a number")).unwrap_or(d);
    let (threads, reps) = (arg(1, 2), arg(2, 15));
    let env = |k: &str, d: usize| std::env::var(k).map(|s| s.parse().expect("a number")).unwrap_or(d);
    let (n, k, mats) = (env("N", 8960), env("K", 1536), env("MATS", 32));
    let name = std::env::var("TYPE").unwrap_or_else(|_| "Q4K".into());
    let dtype = *qmatmul::TYPES.iter().find(|t| format!("{t:?}") == name).unwrap_or_else(|| panic!("TYPE: one of {:?}", qmatmul::TYPES));
    let weights: Vec<QWeight> =
        (0..mats).map(|i| QWeight::from_gguf(dtype, n, k, &qmatmul::random_weight(dtype, n, k, i as u64)).unwrap()).collect();
    let x = qmatmul::random_acts(1, k, 99);
    let a = QActs::quantize(&x, 1, k, weights[0].act_kind());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut y = vec![0f32; n];
    let mut hash = 0u64;
    let mut times: Vec<f64> = pool.install(|| {
        for w in &weights {
            qmatmul::matmul(&a, w, &mut y, threads, Kernels::Best);
            for v in &y {
                hash = hash.wrapping_mul(31).wrapping_add(u64::from(v.to_bits()));
            }
        }
        (0..reps)
            .map(|_| {
                let t0 = Instant::now();
                for w in &weights {
                    qmatmul::matmul(&a, w, &mut y, threads, Kernels::Best);
                }
                t0.elapsed().as_secs_f64() * 1e3
            })
            .collect()
    });
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    let held: usize = weights.iter().map(QWeight::bytes).sum();
    let file = mats * n * dtype.row_bytes(k);
    println!(
        "{}",
        serde_json::json!({
            "type": name, "median_ms": ms, "min_ms": times[0],
            "held_gb_s": held as f64 / ms / 1e6, "file_gb_s": file as f64 / ms / 1e6,
            "held_per_file": held as f64 / file as f64, "bits": format!("{hash:016x}"),
        })
    );
}
