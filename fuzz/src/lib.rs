//! Fuzz entry points of rocketjudge: one `pub fn name(data: &[u8])` per target.
//!
//! Each function feeds untrusted bytes through the same public API the CLI, the engine and the
//! browser app use on files from anywhere, and must never panic, hang or allocate without bound;
//! errors are fine. The cargo-fuzz targets in `fuzz_targets/` are one-line wrappers, and the stable
//! test `crate/cli/tests/fuzz_regressions.rs` includes this very file (`#[path]`) to replay every
//! file under `tests/fuzz-regressions/<target>/` without a fuzzing engine. So this file depends only
//! on crates the `rocketjudge` CLI crate already has.

#![allow(dead_code)]

use std::collections::BTreeMap;

use rocketjudge_core::formats::{self, alpacaeval, arena, fastchat, jsonl, rocketeval, Benchmark, Checklist, Lined, Query, Response};
use rocketjudge_core::{prompt, score};
use rocketjudge_engine::chat::{ChatTemplate, CHATML};
use rocketjudge_engine::gguf::{Gguf, Value};
use rocketjudge_engine::load;
use rocketjudge_engine::tokenizer::{Segment, Tokenizer};

// The model manifest reader lives in the CLI binary; compile the same source here.
#[allow(unused_imports)]
#[path = "../../crate/cli/src/models/manifest.rs"]
mod models;

/// A fuzz target: its name and the function that takes one input.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name (the directory names under `tests/fuzz-regressions/` and `fuzz/corpus/`).
pub const TARGETS: &[Target] = &[
    ("gguf", gguf),
    ("tokenizer", tokenizer),
    ("chat_template", chat_template),
    ("rocketeval_queries", rocketeval_queries),
    ("rocketeval_responses", rocketeval_responses),
    ("rocketeval_judgments", rocketeval_judgments),
    ("rocketeval_scores", rocketeval_scores),
    ("fastchat_questions", fastchat_questions),
    ("fastchat_answers", fastchat_answers),
    ("fastchat_judgments", fastchat_judgments),
    ("alpacaeval", alpacaeval),
    ("arena", arena),
    ("manifest", manifest),
    ("checklist_reply", checklist_reply),
];

/// Real chat templates of the packaged judges (from their GGUF `tokenizer.chat_template`), with the
/// BOS/EOS texts their tokenizers give; Gemma 3 ships none and uses the built-in Gemma format.
const MODEL_TEMPLATES: &[(&str, &str, &str)] = &[
    (include_str!("../templates/qwen2.5.jinja"), "<|endoftext|>", "<|im_end|>"),
    (include_str!("../templates/smollm2.jinja"), "<|im_start|>", "<|im_end|>"),
];

/// GGUF reader: header, metadata values and arrays, tensor infos. Both with an unknown file length
/// (a streamed prefix) and with the prefix taken as the whole file (offsets checked against it).
pub fn gguf(data: &[u8]) {
    let _ = Gguf::parse(data, None);
    if let Ok(g) = Gguf::parse(data, Some(data.len() as u64)) {
        let _ = g.architecture();
        for v in g.metadata.values() {
            let _ = (v.as_u64(), v.as_f64(), v.as_bool(), v.as_str(), v.as_array().map(<[Value]>::len));
        }
        for t in &g.tensors {
            let _ = (t.n_elements(), t.rows_cols());
            assert!(t.offset + t.n_bytes <= data.len() as u64, "tensor `{}` accepted past the end of the file", t.name);
        }
    }
    // The loader's growing-prefix loop over the same bytes.
    let _ = load::read_header(|n| Ok(data[..n.min(data.len())].to_vec()), Some(data.len() as u64));
}

/// Tokenizer construction from GGUF metadata, then tokenizing hostile text. The input is a GGUF
/// header; whatever follows the header (from the tensor-data offset on) is the text to tokenize.
pub fn tokenizer(data: &[u8]) {
    let Ok(g) = Gguf::parse(data, None) else { return };
    let text = String::from_utf8_lossy(data.get(g.data_offset as usize..).unwrap_or_default());
    if let Ok(tk) = Tokenizer::from_gguf(&g) {
        let _ = tk.encode_plain(&text);
        let (a, b) = text.split_at(text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i));
        if let Ok(ids) = tk.encode(&[Segment { text: a, trusted: true }, Segment { text: b, trusted: false }], true) {
            for id in ids {
                assert!((id as usize) < tk.vocab_size(), "token id {id} outside a vocabulary of {}", tk.vocab_size());
            }
        }
    }
    // The whole prompt codec as the loader builds it: tokenizer, chat template, Yes/No ids.
    if let Ok(codec) = load::codec(&g) {
        let _ = codec.encode_user_message(&text);
    }
}

/// Chat-template rendering with hostile message text. Layout: one selector byte, then UTF-8 text
/// split at NUL characters into messages, each starting with its role (`s`ystem, `a`ssistant, else
/// user). Selector % 5: 0 = the first part is the template source itself (a hostile model file),
/// 1 = ChatML fallback, 2 = built-in Gemma, 3.. = the packaged models' own templates. Bit 7 strips BOS.
pub fn chat_template(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.split('\0');
    let template = match sel % 5 {
        0 => ChatTemplate::for_model(parts.next(), "llama", "<s>", "</s>"),
        1 => ChatTemplate::Jinja { source: CHATML.to_string(), bos: String::new(), eos: String::new() },
        2 => ChatTemplate::for_model(None, "gemma3", "<bos>", "<eos>"),
        i => {
            let (source, bos, eos) = MODEL_TEMPLATES[(i as usize - 3) % MODEL_TEMPLATES.len()];
            ChatTemplate::Jinja { source: source.to_string(), bos: bos.to_string(), eos: eos.to_string() }
        }
    };
    let messages: Vec<formats::Message> = parts
        .map(|p| {
            let role = match p.as_bytes().first() {
                Some(b's') => formats::Role::System,
                Some(b'a') => formats::Role::Assistant,
                _ => formats::Role::User,
            };
            formats::Message::new(role, p.get(1..).unwrap_or(""))
        })
        .collect();
    let _ = template.name();
    if let Ok(r) = template.render(&messages, sel & 0x80 != 0) {
        let joined: String = r.segments().iter().map(|s| s.text).collect();
        assert_eq!(joined, r.text());
    }
}

/// RocketEval / WildBench queries and checklists (`grade`, `checklist create`, the browser app), and
/// the prompts built from them.
pub fn rocketeval_queries(data: &[u8]) {
    if let Ok(rows) = jsonl::read_jsonl::<Query>("q.jsonl", data) {
        let queries: Vec<Query> = rows.iter().map(|l| l.value.clone()).collect();
        let (mut bench, _) = Benchmark::new("q.jsonl", rows);
        let _ = bench.check_checklists("q.jsonl");
        let checklists = queries
            .iter()
            .map(|q| Lined { line: 1, value: Checklist { session_id: q.session_id.clone(), checklist: q.checklist.clone(), meta: None } })
            .collect();
        let _ = bench.attach_checklists("c.jsonl", checklists);
        for q in queries.iter().take(8) {
            let _ = prompt::creation_prompt(q);
            let r = Response {
                session_id: q.session_id.clone(),
                chat_history: Vec::new(),
                output: vec![q.user_query().into()],
                generator: "m".into(),
            };
            for style in prompt::PromptStyle::NAMES {
                let p = prompt::grading_prompt_for(style.parse().expect("a listed style"), q, &r, r.answer());
                for i in 0..p.suffixes.len().min(8) {
                    let _ = p.item(i);
                }
            }
            for scale in [prompt::PairwiseScale::Binary, prompt::PairwiseScale::FivePoint] {
                let _ = prompt::pairwise_prompt(q.history(), q.user_query(), r.answer(), q.user_query(), None, scale);
                let _ =
                    prompt::pairwise_prompt(q.history(), q.user_query(), r.answer(), q.user_query(), Some(q.checklist.as_slice()), scale);
            }
            for level in prompt::DirectInstruction::NAMES {
                let reference = q.references.values().next().map(String::as_str);
                for checklist in [None, Some(q.checklist.as_slice())] {
                    let instruction = level.parse().expect("a listed level");
                    // A rubric of the user's is text from a file too: the response's serves as one.
                    for rubric in [None, Some(r.answer())] {
                        for scale in [prompt::DirectScale::ZeroToNine, prompt::DirectScale::OneToFive] {
                            let spec = prompt::DirectPrompt { instruction, scale, rubric };
                            let _ = prompt::direct_prompt_at(spec, q.history(), q.user_query(), reference, r.answer(), checklist);
                        }
                    }
                }
            }
        }
    }
    let _ = jsonl::read_jsonl::<Checklist>("c.jsonl", data);
}

/// RocketEval / WildBench responses, checked against a benchmark.
pub fn rocketeval_responses(data: &[u8]) {
    let Ok(rows) = jsonl::read_jsonl::<Response>("r.jsonl", data) else { return };
    let queries = rows
        .iter()
        .take(4)
        .map(|r| Lined {
            line: r.line,
            value: Query {
                session_id: r.value.session_id.clone(),
                conversation_input: r.value.chat_history.clone(),
                checklist: vec!["Is it right?".into()],
                references: BTreeMap::new(),
                category: None,
            },
        })
        .collect();
    let (bench, _) = Benchmark::new("q.jsonl", queries);
    let _ = bench.check_responses("r.jsonl", &rows);
    for r in rows.iter().take(4) {
        if let Some(q) = bench.get(&r.value.session_id) {
            let _ = prompt::grading_history(q, &r.value);
            let _ = prompt::grading_prompt_for(prompt::PromptStyle::default(), q, &r.value, r.value.answer());
        }
    }
}

/// Judgments (`grade` output, re-read by `score`, `rank`, `meta` and when resuming), then scores.
pub fn rocketeval_judgments(data: &[u8]) {
    if let Ok(rows) = rocketeval::read_judgments("j.jsonl", data) {
        let _ = score::scores_from_judgments("j.jsonl", &rows, None);
    }
}

/// Score files and ranking files (JSON arrays or JSONL).
pub fn rocketeval_scores(data: &[u8]) {
    let _ = rocketeval::read_scores("s.json", data);
    let _ = rocketeval::read_ranking("r.json", data);
}

/// FastChat MT-Bench `question.jsonl` (and reference answers), turned into queries and back.
pub fn fastchat_questions(data: &[u8]) {
    let Ok(qs) = fastchat::read_questions("question.jsonl", data) else { return };
    let queries = fastchat::queries_from_questions(&qs, &BTreeMap::new());
    let _ = fastchat::questions_from_queries(&queries);
    if let Ok(refs) = fastchat::read_answers("reference.jsonl", data) {
        let _ = fastchat::queries_from_questions(&qs, &fastchat::answer_turns(&refs));
    }
}

/// FastChat model answers, joined with a fixed question file.
pub fn fastchat_answers(data: &[u8]) {
    const QUESTIONS: &[u8] = br#"{"question_id": 81, "category": "writing", "turns": ["Write.", "Rewrite."]}
{"question_id": 101, "category": "reasoning", "turns": ["Q1?", "Q2?"], "reference": ["R1", "R2"]}
{"question_id": "x", "turns": ["One turn."]}"#;
    let Ok(answers) = fastchat::read_answers("model.jsonl", data) else { return };
    let questions = fastchat::read_questions("question.jsonl", QUESTIONS).expect("fixed questions parse");
    let _ = fastchat::answer_turns(&answers);
    let _ = fastchat::responses_from_answers("model.jsonl", &answers, &questions, "model");
}

/// FastChat single-answer judgments (`gpt-4_single.jsonl`) as labels.
pub fn fastchat_judgments(data: &[u8]) {
    let _ = fastchat::scores_from_single_judgments("gpt-4_single.jsonl", data);
}

/// AlpacaEval `model_outputs.json`.
pub fn alpacaeval(data: &[u8]) {
    if let Ok((queries, responses)) = alpacaeval::read_model_outputs("model_outputs.json", data, "model") {
        let (bench, _) = Benchmark::new("model_outputs.json", queries.into_iter().map(|value| Lined { line: 0, value }).collect());
        let rows: Vec<_> = responses.into_iter().map(|value| Lined { line: 0, value }).collect();
        let _ = bench.check_responses("model_outputs.json", &rows);
    }
}

/// Chatbot Arena battles (JSON array or JSONL).
pub fn arena(data: &[u8]) {
    if let Ok(rows) = arena::read_battles("battles.json", data) {
        let battles: Vec<_> = rows.into_iter().map(|l| l.value).collect();
        let _ = arena::battles_to_json(&battles);
    }
}

/// The model manifest (`models/manifest.json`) with the CLI's own types.
pub fn manifest(data: &[u8]) {
    if let Ok(m) = serde_json::from_slice::<models::Manifest>(data) {
        for e in &m.models {
            let _ = (e.name.len(), e.source.pypi.len());
        }
    }
}

/// The checklist creator's reply parser (`checklist create`, the browser app).
pub fn checklist_reply(data: &[u8]) {
    let reply = String::from_utf8_lossy(data);
    if let Some(items) = prompt::parse_checklist_reply(&reply) {
        assert!(!items.is_empty());
        for q in &items {
            assert!(q.ends_with('?'), "item {q:?} does not end with a question mark");
        }
    }
}
