//! Shared helpers of the engine's integration tests: locating the packaged models and fixtures.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use rocketjudge_core::formats::{jsonl::read_jsonl, Query, Response};

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

/// Real models are large: tests that load one take this lock so they run one at a time, each with
/// every core.
pub fn model_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}
