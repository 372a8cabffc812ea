//! What several CLI test files share: the repository root, the SmolLM2 test judge, and small input
//! sets cut from the bundled MT-Bench demo.

#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The packaged test judge.
pub const MODEL: &str = "smollm2-135m";

/// Three models, short answers.
pub const THREE_MODELS: &[(&str, &[&str])] = &[
    ("gpt-4", &["101_turn1", "111_turn1", "131_turn1"]),
    ("llama-13b", &["111_turn1", "91_turn1", "101_turn1"]),
    ("vicuna-13b-v1.3", &["101_turn1", "111_turn1", "131_turn1"]),
];

/// The same three models on two queries (101 and 131: six responses, ~60 % of THREE_MODELS's
/// tokens), for the tests that grade their inputs many times over.
pub const THREE_MODELS_TWO_QUERIES: &[(&str, &[&str])] =
    &[("gpt-4", &["101_turn1", "131_turn1"]), ("llama-13b", &["101_turn1", "131_turn1"]), ("vicuna-13b-v1.3", &["101_turn1", "131_turn1"])];

/// The three models' answers to 101 alone (three different answers), for the test that grades its
/// inputs sixteen times over.
pub const THREE_MODELS_ONE_QUERY: &[(&str, &[&str])] =
    &[("gpt-4", &["101_turn1"]), ("llama-13b", &["101_turn1"]), ("vicuna-13b-v1.3", &["101_turn1"])];

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fetched test judge's GGUF.
pub fn model_path() -> PathBuf {
    packaged_model(MODEL)
}

/// The cached GGUF of the packaged judge `name` (scripts/test.sh fetches them all first).
pub fn packaged_model(name: &str) -> PathBuf {
    let cache = std::env::var_os("ROCKETJUDGE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/rocketjudge"));
    let p = cache.join("models").join(format!("{name}.gguf"));
    assert!(p.exists(), "model {} is missing: run `rocketjudge models fetch {name}` (scripts/test.sh does)", p.display());
    p
}

/// The test judge, the inputs and the output folder, as `grade`, `direct` and `submit.sh` take them.
pub fn judge_inputs<'c>(c: &'c mut Command, queries: &Path, responses: &Path, out: &Path) -> &'c mut Command {
    c.arg("--model").arg(model_path()).arg("--queries").arg(queries).arg("--responses").arg(responses).arg("--out").arg(out)
}

/// Queries and responses of `subset` (model, session ids), written into `dir` from the bundled
/// benchmark: `dir/queries.jsonl` and `dir/responses/<model>.jsonl`.
pub fn inputs(dir: &Path, subset: &[(&str, &[&str])]) -> (PathBuf, PathBuf) {
    let bench = root().join("benchmarks/mt-bench");
    let wanted: HashSet<&str> = subset.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
    let sid = |line: &str| serde_json::from_str::<Value>(line).unwrap()["session_id"].as_str().unwrap().to_string();
    let queries: String = std::fs::read_to_string(bench.join("queries.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| wanted.contains(sid(l).as_str()))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(queries.lines().count(), wanted.len());
    let q = dir.join("queries.jsonl");
    std::fs::write(&q, queries).unwrap();
    let r = dir.join("responses");
    std::fs::create_dir(&r).unwrap();
    for (model, ids) in subset {
        let text: String = std::fs::read_to_string(bench.join("demo").join(format!("{model}.jsonl")))
            .unwrap()
            .lines()
            .filter(|l| ids.contains(&sid(l).as_str()))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(text.lines().count(), ids.len());
        std::fs::write(r.join(format!("{model}.jsonl")), text).unwrap();
    }
    (q, r)
}

/// The `.jsonl` files of a folder, by name, with their bytes.
pub fn jsonl_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}
