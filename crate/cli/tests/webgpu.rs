//! `rocketjudge grade --backend webgpu` against `--backend cpu --precision f32` (the same f32
//! arithmetic: the CPU's default rounds activations to 8 bits as llama.cpp's CPU kernels do, the
//! WebGPU backend multiplies f32 activations) on the bundled MT-Bench demo: the same
//! judgments, p(Yes) within 0.01 per item. Needs a WebGPU adapter (natively Vulkan/Metal/DX12; on Linux
//! without a GPU Mesa's lavapipe) and the SmolLM2-135M judge in the model cache
//! (`rocketjudge models fetch smollm2-135m`); a missing one is a failure, never a skip.
//!
//! `cargo test --release -p rocketjudge --features webgpu --test webgpu`

#![cfg(feature = "webgpu")]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const JUDGE: &str = "smollm2-135m";
/// A short demo response (its whole model on a software adapter takes about a minute; the engine's
/// own WebGPU tests compare every packaged judge with the CPU, this checks `grade`'s wiring).
const SESSIONS: [&str; 1] = ["101_turn1"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rocketjudge(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_rocketjudge")).args(args).output().expect("run rocketjudge");
    assert!(o.status.success(), "rocketjudge {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn grade(backend: &str, responses: &Path, out: &Path) -> Vec<Value> {
    let queries = repo().join("benchmarks/mt-bench/queries.jsonl");
    rocketjudge(&[
        "grade",
        "--model",
        JUDGE,
        "--queries",
        queries.to_str().unwrap(),
        "--responses",
        responses.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        backend,
        "--precision",
        "f32",
    ]);
    let text = std::fs::read_to_string(out.join("gpt-4.jsonl")).unwrap();
    let mut rows: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    rows.sort_by_key(|j| j["session_id"].as_str().unwrap().to_string());
    rows
}

#[test]
fn grade_on_webgpu_matches_the_cpu_backend() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(repo().join("benchmarks/mt-bench/demo/gpt-4.jsonl")).unwrap();
    let picked: String = demo
        .lines()
        .filter(|l| SESSIONS.contains(&serde_json::from_str::<Value>(l).unwrap()["session_id"].as_str().unwrap()))
        .map(|l| format!("{l}\n"))
        .collect();
    let responses = dir.path().join("responses");
    std::fs::create_dir_all(&responses).unwrap();
    std::fs::write(responses.join("gpt-4.jsonl"), picked).unwrap();

    let cpu = grade("cpu", &responses, &dir.path().join("cpu"));
    let gpu = grade("webgpu", &responses, &dir.path().join("webgpu"));
    assert_eq!(cpu.len(), SESSIONS.len());
    assert_eq!(gpu.len(), SESSIONS.len());
    let mut worst = 0f64;
    for (c, g) in cpu.iter().zip(&gpu) {
        assert_eq!(c["session_id"], g["session_id"]);
        assert_eq!(c["judge"], g["judge"]);
        assert_eq!(c["tokens"], g["tokens"], "the same Yes/No token ids");
        let (pc, pg) = (c["norm_probability"].as_array().unwrap(), g["norm_probability"].as_array().unwrap());
        assert_eq!(pc.len(), pg.len());
        assert!(!pc.is_empty());
        for (i, (a, b)) in pc.iter().zip(pg).enumerate() {
            let d = (a.as_f64().unwrap() - b.as_f64().unwrap()).abs();
            worst = worst.max(d);
            assert!(d <= 0.01, "{} item {i}: CPU p(Yes) {a} vs WebGPU {b}", c["session_id"]);
        }
    }
    eprintln!("{JUDGE}: {} responses, max |Δp(Yes)| WebGPU vs CPU {worst:.5}", cpu.len());
}

#[test]
fn bench_on_webgpu_reports_throughput_and_the_assumed_peak() {
    let out = rocketjudge(&[
        "bench",
        "--model",
        JUDGE,
        "--backend",
        "webgpu",
        "--prefix-tokens",
        "128",
        "--items",
        "2",
        "--suffix-tokens",
        "16",
        "--repeat",
        "1",
        // A few generated tokens show the decode path runs; on a software adapter each costs seconds.
        "--decode-tokens",
        "2",
        "--reference",
        "none",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let ours = &v["rocketjudge"];
    assert!(ours["backend"].as_str().unwrap().starts_with("webgpu: "), "{ours}");
    for k in ["prefill_tokens_per_s", "items_per_s", "seconds_per_response", "decode_tokens_per_s", "prefill_gflops", "gflops"] {
        assert!(ours[k].as_f64().is_some_and(|x| x > 0.0 && x.is_finite()), "{k}: {ours}");
    }
    // A peak is either known with its source, or null and said to be unknown.
    let source = ours["peak_source"].as_str().unwrap();
    match ours["peak_tflops"].as_f64() {
        Some(p) => assert!(p > 0.0 && ours["fraction_of_peak"].as_f64().is_some(), "{ours}"),
        None => assert!(source.starts_with("unknown") && ours["fraction_of_peak"].is_null(), "{ours}"),
    }
}
