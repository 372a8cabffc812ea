//! `rocketjudge direct`: the paper's "Direct" baseline — no checklist; the judge scores each response
//! 0–9 with one digit and the score is the expectation of its first-token digit distribution. For
//! comparing against checklist grading (quality report), not for production use.

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Serialize;

use super::score::safe_file_name;
use super::write_atomic;
use crate::{inputs, judges, CliResult};

/// Score responses with the Direct 0–9 prompt (no checklist).
///
/// Writes `<out>/<model>.json`: a JSON array of {session_id, model_test, score, judge, digits} where
/// `score` = Σ d·p(d) over the digits 0–9 (renormalised) and `digits` the ten probabilities.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
}

#[derive(Serialize)]
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
    let mut judge = judges::load(&a.io.model, &a.io.judge)?;
    let name = rocketjudge_engine::judge::Judge::name(&judge);
    let mut per_model: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let work = inputs.work();
    for (n, w) in work.iter().enumerate() {
        let d = pollster::block_on(judge.direct_score(w.query, w.response))
            .with_context(|| format!("{} on `{}`", w.model, w.response.session_id))?;
        per_model.entry(w.model.clone()).or_default().push(Row {
            session_id: w.response.session_id.clone(),
            model_test: w.model.clone(),
            score: d.expected,
            judge: name.clone(),
            digits: d.probabilities,
        });
        if n % 20 == 0 || n + 1 == work.len() {
            eprintln!("[{}/{}] direct scores", n + 1, work.len());
        }
    }
    for (model, rows) in &per_model {
        write_atomic(&a.io.out.join(format!("{}.json", safe_file_name(model))), &serde_json::to_string_pretty(rows)?)?;
    }
    eprintln!("wrote Direct scores of {} models to {}", per_model.len(), a.io.out.display());
    Ok(())
}
