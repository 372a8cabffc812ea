//! Shared helpers of the engine's integration tests: locating the packaged models and fixtures.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use rocketjudge_core::formats::{jsonl::read_jsonl, Query, Response};
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::generate::{GenerateSettings, StopReason};
use rocketjudge_engine::judge::{ItemGrade, ModelJudge};
use rocketjudge_engine::load::block_on;
use serde_json::Value;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cache() -> PathBuf {
    std::env::var_os("ROCKETJUDGE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/rocketjudge"))
}

/// llama.cpp's test vocabularies and the random-weight judges built on them (`fetch_llama_testdata`
/// in scripts/lib/setup.sh).
pub fn llama_testdata() -> PathBuf {
    cache().join("llama-testdata/0.3.36")
}

/// Where `rocketjudge models fetch` puts models (the test command fetches them first); the
/// random-weight judges (`random-*`) are built by `fetch_llama_testdata`.
pub fn model_path(name: &str) -> PathBuf {
    if name.starts_with("random-") {
        let p = llama_testdata().join("random").join(format!("{name}.gguf"));
        assert!(p.exists(), "{} is missing: run scripts/test.sh (fetch_llama_testdata builds it)", p.display());
        return p;
    }
    let p = cache().join("models").join(format!("{name}.gguf"));
    assert!(p.exists(), "model {} is missing: run `rocketjudge models fetch {name}` (scripts/test.sh does)", p.display());
    p
}

pub fn golden(name: &str) -> serde_json::Value {
    let p = root().join("tests/golden/engine").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// (fixture name, query, response) of the parity fixtures.
pub fn parity_fixtures() -> Vec<(String, Query, Response)> {
    let dir = root().join("tests/fixtures/parity");
    let q = std::fs::read(dir.join("queries.jsonl")).unwrap();
    let r = std::fs::read(dir.join("responses.jsonl")).unwrap();
    let queries: Vec<Query> = read_jsonl::<Query>("queries.jsonl", &q).unwrap().into_iter().map(|l| l.value).collect();
    let raw = read_jsonl::<serde_json::Value>("responses.jsonl", &r).unwrap();
    read_jsonl::<Response>("responses.jsonl", &r)
        .unwrap()
        .into_iter()
        .zip(raw)
        .map(|(l, v)| {
            let q = queries.iter().find(|q| q.session_id == l.value.session_id).unwrap().clone();
            (v.value["fixture"].as_str().unwrap().to_string(), q, l.value)
        })
        .collect()
}

/// The short parity fixture's query, its response, and another answer to the same query (the same
/// history, another text): two answers whose prompts share the query's part.
pub fn two_answers() -> (Query, Response, Response) {
    let (_, query, first) = parity_fixtures().into_iter().find(|(f, _, _)| f == "short").unwrap();
    let mut second = first.clone();
    second.output = vec!["You would be in second place, and the person you overtook is now third.".into()];
    (query, first, second)
}

/// Each item's Yes and No logits as bits, for comparisons that must be exact.
pub fn logit_bits(grades: &[ItemGrade]) -> Vec<(u32, u32)> {
    grades.iter().map(|g| (g.logit_yes.to_bits(), g.logit_no.to_bits())).collect()
}

/// Real models are large: tests that load one take this lock so they run one at a time, each with
/// every core.
pub fn model_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

fn token_ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Compare one judge's greedy continuations (at most `max_new` tokens, on `fixtures` or all) with
/// llama.cpp's in `tests/golden/engine/generate-<name>.json` (see `tests/generate.rs` for the rule);
/// returns (tokens compared, tokens equal).
pub fn check_greedy<B: Backend>(judge: &mut ModelJudge<B>, name: &str, max_new: usize, fixtures: Option<&[&str]>) -> (usize, usize) {
    let g = golden(&format!("generate-{name}.json"));
    let tol = g["reference_variation"].as_f64().unwrap();
    let (mut compared, mut equal) = (0, 0);
    for f in g["fixtures"].as_array().unwrap() {
        let fixture = f["fixture"].as_str().unwrap();
        if fixtures.is_some_and(|only| !only.contains(&fixture)) {
            continue;
        }
        let prompt = judge.codec.encode_user_message(f["user_message"].as_str().unwrap()).unwrap();
        assert_eq!(prompt, token_ids(&f["prompt"]), "{name} {fixture}: prompt token ids");
        let want = token_ids(&f["tokens"]);
        let want = &want[..want.len().min(max_new)];
        let settings = GenerateSettings { max_tokens: want.len(), ..Default::default() };
        let mut pieces = String::new();
        let got = block_on(judge.generate(&prompt, &settings, &mut |p| pieces.push_str(p))).unwrap();
        assert_eq!(pieces, got.text, "{name} {fixture}: the streamed pieces make the text");
        let eog = judge.codec.tokenizer.end_of_generation().to_vec();
        let text_tokens: Vec<u32> = want.iter().copied().filter(|t| !eog.contains(t)).collect();
        if want.len() == token_ids(&f["tokens"]).len() {
            assert_eq!(
                judge.codec.tokenizer.decode(&text_tokens),
                f["text"].as_str().unwrap(),
                "{name} {fixture}: llama.cpp's tokens decode to its text"
            );
        }
        let parted = got.tokens.iter().zip(want).position(|(a, b)| a != b);
        let same = parted.unwrap_or(want.len());
        compared += same + parted.map_or(0, |_| 1);
        equal += same;
        match parted {
            None => {
                assert_eq!(got.tokens, want, "{name} {fixture}: the continuation");
                if eog.contains(want.last().unwrap()) {
                    assert_eq!(got.stop, StopReason::EndOfGeneration);
                }
                eprintln!("{name} {fixture}: all {} tokens equal llama.cpp's", want.len());
            }
            Some(k) => {
                let (theirs, ours) = (want[k], got.tokens[k]);
                let step = f["steps"][k].as_array().unwrap();
                let llama_logit = |id: u32| step.iter().find(|c| c[0].as_u64() == Some(id as u64)).map(|c| c[1].as_f64().unwrap());
                let context: Vec<u32> = prompt.iter().chain(&want[..k]).copied().collect();
                let mine = block_on(judge.next_token_logits(&context, &[theirs, ours])).unwrap();
                let ours_gap = f64::from(mine[1] - mine[0]).abs();
                let Some(their_ours) = llama_logit(ours) else {
                    panic!("{name} {fixture} step {k}: our token {ours} is not among llama.cpp's top 5 ({step:?})");
                };
                let their_gap = (llama_logit(theirs).unwrap() - their_ours).abs();
                eprintln!(
                    "{name} {fixture}: {k} tokens equal, then a near-tie: llama.cpp {theirs} {:.4} vs {ours} {their_ours:.4}, \
                     ours {theirs} {:.4} vs {ours} {:.4} (tolerance {tol:.4})",
                    llama_logit(theirs).unwrap(),
                    mine[0],
                    mine[1]
                );
                assert!(
                    their_gap <= tol && ours_gap <= tol,
                    "{name} {fixture} step {k}: ours {ours}, llama.cpp {theirs}: llama.cpp's logits differ by {their_gap:.4}, ours by \
                     {ours_gap:.4}, more than llama.cpp's own variation {tol:.4}"
                );
            }
        }
    }
    (compared, equal)
}
