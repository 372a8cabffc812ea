//! Parity with llama.cpp on real judge models (the packaged GGUFs), and of the prefix-shared batched
//! path with from-scratch scoring in our own engine.
//!
//! Golden values: `scripts/golden/llama_golden.py` (llama-cpp-python). Token ids must be identical.
//! p(Yes) must agree within the reference's own variation: the spread of llama.cpp's p(Yes) across
//! its equally legitimate settings (scratch, prefix reuse, flash attention, f32 KV cache), and never
//! looser than 0.01 is needed.

mod common;

use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::judge::Judge;
use rocketjudge_engine::load::judge_from_file;
use serde_json::Value;

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn check_model(name: &str, check_scratch: bool) {
    let _guard = common::model_lock();
    let g = common::golden(&format!("parity-{name}.json"));
    let tol = g["reference_variation"].as_f64().unwrap().max(0.01);
    let mut judge = judge_from_file(&common::model_path(name), Cpu::new(common::threads()).unwrap(), 4096, &mut |_, _| {}).unwrap();
    assert_eq!(judge.answer_tokens().yes, ids(&g["yes_ids"]), "{name}: Yes token ids");
    assert_eq!(judge.answer_tokens().no, ids(&g["no_ids"]), "{name}: No token ids");
    let fixtures = common::parity_fixtures();
    let mut worst = 0f64;
    let mut sum = 0f64;
    let mut n = 0;
    for gf in g["fixtures"].as_array().unwrap() {
        let (_, query, response) = fixtures.iter().find(|(f, _, _)| f == gf["fixture"].as_str().unwrap()).unwrap();
        let prepared = judge.prepare(query, response).unwrap();
        assert_eq!(prepared.prefix, ids(&gf["prefix"]), "{name} {}: prefix token ids", gf["fixture"]);
        let items = gf["items"].as_array().unwrap();
        for (i, it) in items.iter().enumerate() {
            assert_eq!(prepared.suffixes[i], ids(&it["suffix"]), "{name} {}: item {i} suffix token ids", gf["fixture"]);
        }
        let grades = pollster::block_on(judge.grade_prepared(&prepared)).unwrap();
        for (i, (ours, it)) in grades.iter().zip(items).enumerate() {
            let reference = it["p_yes"].as_f64().unwrap();
            let d = (ours.p_yes - reference).abs();
            worst = worst.max(d);
            sum += d;
            n += 1;
            assert!(
                d <= tol,
                "{name} {} item {i}: p(Yes) {:.4} vs llama.cpp {reference:.4} (tolerance {tol:.4})",
                gf["fixture"],
                ours.p_yes
            );
            if check_scratch {
                let tokens: Vec<u32> = prepared.prefix.iter().chain(&prepared.suffixes[i]).copied().collect();
                let scratch = pollster::block_on(judge.grade_from_scratch(&tokens)).unwrap();
                let ds = (scratch.p_yes - ours.p_yes).abs();
                assert!(ds <= tol, "{name} {} item {i}: batched {:.4} vs from scratch {:.4}", gf["fixture"], ours.p_yes, scratch.p_yes);
            }
        }
    }
    eprintln!("{name}: {n} items, max |Δp| {worst:.4}, mean |Δp| {:.4} (tolerance {tol:.4})", sum / n as f64);
}

#[test]
fn smollm2_135m_matches_llama_cpp() {
    check_model("smollm2-135m", true);
}

#[test]
fn qwen25_coder_05b_matches_llama_cpp() {
    check_model("qwen2.5-coder-0.5b", true);
}

#[test]
fn gemma3_270m_matches_llama_cpp() {
    check_model("gemma-3-270m", true);
}

#[test]
fn qwen25_coder_15b_matches_llama_cpp() {
    check_model("qwen2.5-coder-1.5b", false);
}
