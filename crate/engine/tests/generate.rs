//! Greedy generation against llama.cpp on the packaged judges: the same prompt tokens, then the same
//! continuation token for token (up to 64 tokens or the end of generation) on the parity fixtures'
//! queries in each model's chat template. Golden values: `scripts/golden/generate_golden.py`.
//!
//! Two greedy runs part where the top two logits nearly tie: llama.cpp parts from itself there too
//! (with flash attention or an f32 KV cache its continuations differ after 0–37 tokens). So a
//! continuation may part from llama.cpp's at one step only if that step is a near-tie in both
//! engines: the logits of the two candidates (llama.cpp's token and ours) differ by at most the
//! reference's own variation (the largest change of a top-two logit gap across llama.cpp's
//! settings) in llama.cpp's logits and in ours (ours from one pass over the whole context, which can
//! order a near-tie differently from the generation's token-by-token passes). After that the two
//! texts continue differently, and the comparison of that fixture ends. The text of llama.cpp's tokens, decoded by our tokenizer, is
//! llama.cpp's text.

mod common;

use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::generate::{GenerateSettings, StopReason};
use rocketjudge_engine::load::{block_on, judge_from_file};

fn check_model(name: &str) {
    let _guard = common::model_lock();
    let cpu = Cpu::new(common::threads()).unwrap();
    let mut judge = judge_from_file(&common::model_path(name), cpu, 4096, &mut |_, _| {}).unwrap();
    let (compared, equal) = common::check_greedy(&mut judge, name, usize::MAX, None);
    eprintln!("{name}: {equal} of {compared} compared tokens equal llama.cpp's");
}

#[test]
fn smollm2_135m_continues_as_llama_cpp() {
    check_model("smollm2-135m");
}

#[test]
fn qwen25_coder_05b_continues_as_llama_cpp() {
    check_model("qwen2.5-coder-0.5b");
}

#[test]
fn gemma3_270m_continues_as_llama_cpp() {
    check_model("gemma-3-270m");
}

#[test]
fn qwen25_coder_15b_continues_as_llama_cpp() {
    check_model("qwen2.5-coder-1.5b");
}

/// Sampling is reproducible from its seed, stops where it is told, and the context bounds it.
#[test]
fn sampled_generation_is_reproducible_and_stops_where_told() {
    let _guard = common::model_lock();
    let cpu = Cpu::new(common::threads()).unwrap();
    let mut judge = judge_from_file(&common::model_path("smollm2-135m"), cpu, 128, &mut |_, _| {}).unwrap();
    let prompt = judge.codec.encode_user_message("Write a short poem about the sea.").unwrap();
    let mut run = |settings: &GenerateSettings| block_on(judge.generate(&prompt, settings, &mut |_| {})).unwrap();
    let sampled = GenerateSettings { max_tokens: 24, temperature: 0.9, top_p: 0.95, seed: 11, ..Default::default() };
    let (a, b) = (run(&sampled), run(&sampled));
    assert_eq!(a, b, "the same seed gives the same tokens");
    let c = run(&GenerateSettings { seed: 12, ..sampled.clone() });
    assert_ne!(a.tokens, c.tokens, "another seed, another text");
    // A stop string taken from the greedy text ends it just before.
    let greedy = run(&GenerateSettings { max_tokens: 24, ..Default::default() });
    let word = greedy.text.split_whitespace().nth(3).expect("four words of greedy text").to_string();
    let cut = run(&GenerateSettings { max_tokens: 24, stop: vec![word.clone()], ..Default::default() });
    assert_eq!(cut.stop, StopReason::StopString);
    assert_eq!(cut.text, greedy.text[..greedy.text.find(&word).unwrap()], "the text ends before {word:?}");
    // A context of 128 tokens holds the prompt and what fits after it: sampled until one run fills it.
    let runs: Vec<_> =
        (1..=8).map(|seed| run(&GenerateSettings { max_tokens: 1000, temperature: 1.0, seed, ..Default::default() })).collect();
    for r in &runs {
        assert!(r.prompt_tokens + r.tokens.len() <= 128, "{} + {} tokens in a context of 128", r.prompt_tokens, r.tokens.len());
    }
    let full = runs.iter().find(|r| r.stop == StopReason::ContextFull).expect("one of 8 sampled runs fills the context");
    assert_eq!(full.prompt_tokens + full.tokens.len(), 128);
}

/// N replies on one prefill are the replies N separate generations give (reply i with seed + i): the
/// KV cache is cut back to the prompt between them, on the CPU engine and on WebGPU alike.
#[test]
fn replies_on_one_prefill_equal_separate_generations() {
    let _guard = common::model_lock();
    let cpu = Cpu::new(common::threads()).unwrap();
    let mut judge = judge_from_file(&common::model_path("smollm2-135m"), cpu, 512, &mut |_, _| {}).unwrap();
    let prompt = judge.codec.encode_user_message("Is a whale a fish? Explain briefly.").unwrap();
    let settings = GenerateSettings { max_tokens: 20, temperature: 1.0, seed: 40, ..Default::default() };
    let mut seen = Vec::new();
    let replies = block_on(judge.generate_replies(&prompt, 0, &settings, 3, &mut |i, g| seen.push((i, g.text.clone())))).unwrap();
    assert_eq!(
        seen,
        replies.iter().enumerate().map(|(i, g)| (i, g.text.clone())).collect::<Vec<_>>(),
        "each reply is reported once, in order"
    );
    for (i, reply) in replies.iter().enumerate() {
        let alone = block_on(judge.generate(&prompt, &GenerateSettings { seed: 40 + i as u64, ..settings.clone() }, &mut |_| {})).unwrap();
        assert_eq!(reply, &alone, "reply {i}");
    }
    assert!(replies[0].tokens != replies[1].tokens || replies[1].tokens != replies[2].tokens, "three seeds, not one text");
}
