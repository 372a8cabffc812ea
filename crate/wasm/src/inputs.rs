//! Uploads read by core's parsers (queries, checklists, responses, rankings, checklist replies) and
//! the checklist-creation prompt.

use rocketjudge_core::formats::{self, alpacaeval, fastchat, jsonl, Benchmark, Lined, Problem, Query, Response};
use rocketjudge_core::prompt;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::boundary::*;

#[derive(Serialize)]
struct Parsed<T> {
    records: Vec<T>,
    problems: Vec<Problem>,
    format: &'static str,
}

/// Parse queries (RocketEval JSONL): `{records, problems}`. Malformed files throw with file, line and field.
#[wasm_bindgen(js_name = parseQueries)]
pub fn parse_queries(name: &str, bytes: &[u8]) -> Result<JsValue, JsValue> {
    let rows = formats::rocketeval::read_queries(name, bytes).map_err(err)?;
    let (b, mut problems) = Benchmark::new(name, rows);
    problems.extend(b.check_checklists(name));
    to_js(&Parsed { records: b.queries, problems, format: "rocketeval" })
}

/// Parse queries with a separate checklist file (RocketEval `checklist.jsonl`): `{records, problems}`
/// as `parseQueries`, with the file's checklists attached and the benchmark's checks (duplicates,
/// checklists without a query, queries left without a checklist).
#[wasm_bindgen(js_name = parseQueriesWithChecklists)]
pub fn parse_queries_with_checklists(name: &str, bytes: &[u8], checklist_name: &str, checklist_bytes: &[u8]) -> Result<JsValue, JsValue> {
    let rows = formats::rocketeval::read_queries(name, bytes).map_err(err)?;
    let checklists = formats::rocketeval::read_checklists(checklist_name, checklist_bytes).map_err(err)?;
    let (mut b, mut problems) = Benchmark::new(name, rows);
    problems.extend(b.attach_checklists(checklist_name, checklists));
    problems.extend(b.check_checklists(name));
    to_js(&Parsed { records: b.queries, problems, format: "rocketeval" })
}

/// Parse one model's responses, recognising the format: RocketEval JSONL, FastChat `model_answer`
/// JSONL (turns matched to the benchmark's `<id>_turn<k>` queries), or AlpacaEval `model_outputs.json`.
/// `queries` is the loaded benchmark (for FastChat and for consistency checks).
#[wasm_bindgen(js_name = parseResponses)]
pub fn parse_responses(name: &str, bytes: &[u8], queries: JsValue) -> Result<JsValue, JsValue> {
    let queries: Vec<Query> = from_js(queries, "queries")?;
    let (bench, _) = Benchmark::new(name, queries.iter().cloned().map(|value| Lined { line: 0, value }).collect());
    let model = name.rsplit(['/', '\\']).next().unwrap_or(name).trim_end_matches(".jsonl").trim_end_matches(".json").to_string();
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace()).map(|i| bytes[i]);
    if first == Some(b'[') {
        let (_, responses) = alpacaeval::read_model_outputs(name, bytes, &model).map_err(err)?;
        let rows: Vec<Lined<Response>> = responses.into_iter().enumerate().map(|(i, value)| Lined { line: i + 1, value }).collect();
        let problems = bench.check_responses(name, &rows);
        return to_js(&Parsed { records: rows.into_iter().map(|l| l.value).collect(), problems, format: "alpacaeval" });
    }
    let lines = jsonl::lines(name, bytes).map_err(err)?;
    let fastchat =
        lines.first().and_then(|(_, l)| serde_json::from_str::<serde_json::Value>(l).ok()).is_some_and(|v| v.get("choices").is_some());
    let (rows, mut problems, format) = if fastchat {
        let answers = fastchat::read_answers(name, bytes).map_err(err)?;
        let questions = fastchat::questions_from_queries(&queries);
        let (rs, p) = fastchat::responses_from_answers(name, &answers, &questions, &model);
        (rs.into_iter().map(|value| Lined { line: 0, value }).collect::<Vec<_>>(), p, "fastchat")
    } else {
        let mut rows = jsonl::read_jsonl::<Response>(name, bytes).map_err(err)?;
        for r in rows.iter_mut() {
            if r.value.generator.is_empty() {
                r.value.generator = model.clone();
            }
        }
        (rows, vec![], "rocketeval")
    };
    problems.extend(bench.check_responses(name, &rows));
    to_js(&Parsed { records: rows.into_iter().map(|l| l.value).collect(), problems, format })
}

/// Parse a ranking (`[{name|model, rating|score, lower?, upper?}]`), e.g. Chatbot Arena ratings.
#[wasm_bindgen(js_name = parseRanking)]
pub fn parse_ranking(name: &str, bytes: &[u8]) -> Result<JsValue, JsValue> {
    to_js(&formats::rocketeval::read_ranking(name, bytes).map_err(err)?)
}

/// The checklist-creation prompt for a query (to run with a strong model elsewhere).
#[wasm_bindgen(js_name = creationPrompt)]
pub fn creation_prompt(query: JsValue) -> Result<String, JsValue> {
    Ok(prompt::creation_prompt(&from_js::<Query>(query, "query")?))
}

/// The checklist creation policies a judge can write under (`JudgeHandle.writeChecklist`), default first.
#[wasm_bindgen(js_name = creationPolicies)]
pub fn creation_policies() -> Vec<String> {
    rocketjudge_core::creation::CreationPolicy::NAMES.iter().map(|s| s.to_string()).collect()
}

/// Parse a checklist creator's reply into questions (`null` when none is found).
#[wasm_bindgen(js_name = parseChecklistReply)]
pub fn parse_checklist_reply(reply: &str) -> Result<JsValue, JsValue> {
    to_js(&prompt::parse_checklist_reply(reply))
}

/// The version of the grading prompt recorded with judgments.
#[wasm_bindgen(js_name = promptVersion)]
pub fn prompt_version() -> String {
    prompt::GRADING_PROMPT_VERSION.to_string()
}

/// The grading prompt's wordings: `[{name, description, version}]`, the default first.
#[wasm_bindgen(js_name = promptStyles)]
pub fn prompt_styles() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    struct S {
        name: &'static str,
        description: &'static str,
        version: &'static str,
    }
    let styles: Vec<S> = prompt::PromptStyle::NAMES
        .iter()
        .map(|n| {
            let s: prompt::PromptStyle = n.parse().expect("a listed name parses");
            S { name: n, description: s.description(), version: s.version() }
        })
        .collect();
    to_js(&styles)
}
