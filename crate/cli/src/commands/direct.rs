//! `rocketjudge direct`: the paper's "Direct" baseline — no checklist; the judge scores each response
//! 0–9 with one digit and the score is the expectation of its first-token digit distribution. For
//! comparing against checklist grading (quality report), not for production use.

use std::collections::{BTreeMap, HashSet};

use anyhow::{bail, Context};
use rocketjudge_core::formats::jsonl;
use serde::{Deserialize, Serialize};

use super::score::safe_file_name;
use crate::output::OutputFolder;
use crate::{inputs, judges, CliResult};

/// Score responses with the Direct 0–9 prompt (no checklist).
///
/// Writes `<out>/<model>.jsonl`: a line per response, {session_id, model_test, score, judge,
/// digits}, where `score` = Σ d·p(d) over the digits 0–9 (renormalised) and `digits` the ten
/// probabilities. Each line is on disk before the next response starts; interrupted runs resume
/// where they stopped, as `grade` does.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
}

#[derive(Serialize, Deserialize)]
struct Row {
    session_id: String,
    model_test: String,
    score: f64,
    judge: String,
    digits: [f64; 10],
}

pub fn run(a: Args) -> CliResult {
    // The Direct prompt needs no checklist: queries without one are fine here.
    let inputs = inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, true)?;
    let mut out = OutputFolder::lock(&a.io.out, None)?;
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge)?;
    let name = rocketjudge_engine::judge::Judge::name(&judge);
    let out_path = |model: &str| a.io.out.join(format!("{}.jsonl", safe_file_name(model)));
    let work = inputs.work();
    let mut done: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for w in &work {
        if done.contains_key(&w.model) {
            continue;
        }
        let path = out_path(&w.model);
        let rows = OutputFolder::resume(&path, jsonl::read_jsonl::<Row>, |r: &Row| r.session_id.clone())?;
        if let Some(r) = rows.iter().find(|r| r.value.judge != name) {
            bail!(
                "{}:{}: scored by `{}`, but this run's judge is `{name}`; use another --out folder",
                path.display(),
                r.line,
                r.value.judge
            );
        }
        done.insert(w.model.clone(), rows.into_iter().map(|r| r.value.session_id).collect());
    }
    let todo: Vec<_> = work.iter().filter(|w| !done[&w.model].contains(&w.response.session_id)).collect();
    if todo.len() < work.len() {
        eprintln!("resuming: {} of {} responses are already scored in {}", work.len() - todo.len(), work.len(), a.io.out.display());
    }
    for (n, w) in todo.iter().enumerate() {
        let d = pollster::block_on(judge.direct_score(w.query, w.response))
            .with_context(|| format!("{} on `{}`", w.model, w.response.session_id))?;
        let row = Row {
            session_id: w.response.session_id.clone(),
            model_test: w.model.clone(),
            score: d.expected,
            judge: name.clone(),
            digits: d.probabilities,
        };
        out.append(&out_path(&w.model), &jsonl::to_jsonl_line(&row))?;
        if n % 20 == 0 || n + 1 == todo.len() {
            eprintln!("[{}/{}] direct scores", n + 1 + work.len() - todo.len(), work.len());
        }
    }
    eprintln!("wrote Direct scores of {} responses to {}", todo.len(), a.io.out.display());
    Ok(())
}
