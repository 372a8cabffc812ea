//! Our tokenizer against llama.cpp's own tokenizer tests: its `models/ggml-vocab-*.gguf` files with
//! the `.inp` texts and `.out` token ids that llama.cpp's `test-tokenizer-0` checks (no BOS, special
//! tokens not parsed), and — in `tests/golden/engine/vocab-specials.json`, from
//! `scripts/golden/vocab_golden.py` (llama-cpp-python) — texts made of special-token spellings,
//! tokenized with and without special-token parsing.
//!
//! The files come from the llama-cpp-python sdist (`fetch_llama_testdata` in scripts/lib/setup.sh,
//! which scripts/test.sh runs). Where they are missing the tests say so and pass, except under `CI`.

mod common;

use std::path::PathBuf;

use rocketjudge_engine::gguf::Gguf;
use rocketjudge_engine::tokenizer::{Segment, Tokenizer};
use rocketjudge_engine::EngineError;

/// Vocabularies whose tokenizer we do not implement: (file, what our error must name).
const UNSUPPORTED: &[(&str, &str)] = &[
    ("ggml-vocab-bert-bge.gguf", "tokenizer model `bert`"),
    ("ggml-vocab-deepseek-coder.gguf", "pre-tokenizer `deepseek-coder`"),
    ("ggml-vocab-deepseek-llm.gguf", "pre-tokenizer `deepseek-llm`"),
    ("ggml-vocab-falcon.gguf", "pre-tokenizer `falcon`"),
    ("ggml-vocab-gemma-4.gguf", "tokenizer model `gemma4`"),
    ("ggml-vocab-qwen35.gguf", "pre-tokenizer `qwen35`"),
];

fn vocab_dir() -> Option<PathBuf> {
    let dir = common::llama_testdata().join("vocabs");
    if dir.join(".complete").exists() {
        return Some(dir);
    }
    let msg = format!("llama.cpp's test vocabularies are missing in {}: run scripts/test.sh (fetch_llama_testdata)", dir.display());
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

fn load(path: &std::path::Path) -> Result<Tokenizer, EngineError> {
    let bytes = std::fs::read(path).unwrap();
    let g = Gguf::parse(&bytes, Some(bytes.len() as u64)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Tokenizer::from_gguf(&g)
}

/// llama.cpp's `test-tokenizer-0` cases of one vocabulary: (text, token ids).
fn cases(path: &std::path::Path) -> Vec<(String, Vec<u32>)> {
    let inp = std::fs::read_to_string(path.with_extension("gguf.inp")).unwrap();
    let out = std::fs::read_to_string(path.with_extension("gguf.out")).unwrap();
    let texts: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    // The .inp file ends with a separator and a newline; the .out file has one line per text.
    let texts = &texts[..texts.len() - 1];
    let ids: Vec<Vec<u32>> = out.lines().map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect()).collect();
    assert_eq!(texts.len(), ids.len(), "{}: {} texts, {} token lists", path.display(), texts.len(), ids.len());
    texts.iter().map(|t| t.to_string()).zip(ids).collect()
}

#[test]
fn llama_cpp_tokenizer_cases() {
    let Some(dir) = vocab_dir() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gguf") && p.with_extension("gguf.inp").exists())
        .collect();
    files.sort();
    let (mut checked, mut failures) = (0, Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let tk = match (load(path), UNSUPPORTED.iter().find(|(f, _)| *f == name)) {
            (Ok(tk), None) => tk,
            (Err(EngineError::Unsupported(msg)), Some((_, what))) => {
                assert!(msg.contains(what), "{name}: unsupported, but the error does not name {what}: {msg}");
                continue;
            }
            (Ok(_), Some(_)) => panic!("{name} now loads: check it against its cases and take it off UNSUPPORTED"),
            (Err(e), _) => panic!("{name}: {e}"),
        };
        for (text, want) in cases(path) {
            let got = tk.encode_plain(&text).unwrap();
            checked += 1;
            if got != want {
                failures.push(format!("{name}: {text:?}\n  llama.cpp {want:?}\n  ours      {got:?}"));
            }
        }
    }
    eprintln!("{checked} llama.cpp tokenizer cases over {} vocabularies", files.len() - UNSUPPORTED.len());
    assert!(checked > 0, "no cases were checked");
    assert!(failures.is_empty(), "{} of {checked} cases differ:\n{}", failures.len(), failures.join("\n"));
}

/// Decoding llama.cpp's token ids of each `test-tokenizer-0` case gives the case's text back (what
/// generated text is made of): byte for byte, but for the one space a SentencePiece vocabulary
/// that adds a space prefix puts before the text.
#[test]
fn decoding_llama_cpp_tokens_gives_the_text_back() {
    let Some(dir) = vocab_dir() else { return };
    let (mut checked, mut failures) = (0, Vec::new());
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.extension().is_none_or(|x| x != "gguf") || !path.with_extension("gguf.inp").exists() {
            continue;
        }
        let Ok(tk) = load(&path) else { continue };
        for (text, ids) in cases(&path) {
            let got = tk.decode(&ids);
            let got = if tk.kind == "spm" { got.strip_prefix(' ').unwrap_or(&got).to_string() } else { got };
            checked += 1;
            if got != text {
                failures.push(format!("{name}: {text:?} decoded as {got:?}"));
            }
        }
    }
    eprintln!("{checked} cases decoded");
    assert!(checked > 0, "no cases were checked");
    assert!(failures.is_empty(), "{} of {checked} cases differ:\n{}", failures.len(), failures.join("\n"));
}

/// Special-token spellings in text, with and without parsing special tokens, as llama.cpp does it:
/// which spellings are control tokens (never taken from untrusted text) and which are user-defined.
#[test]
fn special_token_spellings_match_llama_cpp() {
    let Some(dir) = vocab_dir() else { return };
    let g = common::golden("vocab-specials.json");
    let mut n = 0;
    for v in g["vocabularies"].as_array().unwrap() {
        let name = v["file"].as_str().unwrap();
        let tk = load(&dir.join(name)).unwrap();
        for c in v["cases"].as_array().unwrap() {
            let text = c["text"].as_str().unwrap();
            for (key, trusted) in [("plain", false), ("special", true)] {
                let want: Vec<u32> = c[key].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
                let got = tk.encode(&[Segment { text, trusted }], false).unwrap();
                assert_eq!(got, want, "{name}: {text:?} ({key})");
                n += 1;
            }
        }
        let eog: Vec<u32> = v["eog"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
        assert_eq!(tk.end_of_generation(), eog, "{name}: end-of-generation tokens");
    }
    assert!(n > 0);
}
