//! `rocketjudge direct`: the paper's "Direct" baseline — no checklist; the judge scores each response
//! 0–9 (or 1–5) with one digit and the score is the expectation of its first-token digit distribution. For
//! comparing against checklist grading (quality report), not for production use.
//!
//! The judge-design knobs of seeds 002–004 apply here: the instruction level (`--instruction`,
//! including the prompt-free `perplexity`), the scale, the rubric (one per run or per query), the checklist in the prompt (`--checklist`, always or
//! selectively where the digit distribution is spread), and the decoding (`--decoding`).

use std::collections::{BTreeMap, HashSet};

use anyhow::{bail, Context};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::direct::{read_direct_scores, read_query_rubrics, DirectScore, DirectSettings, ReferenceUse, DEFAULT_DIRECT_K};
use rocketjudge_core::formats::{jsonl, limits};
use rocketjudge_core::pairwise::ChecklistUse;
use rocketjudge_core::prompt::{DirectInstruction, DirectScale};

use super::CliResult;
use crate::knobs::{ChecklistFlags, DecodingFlags};
use crate::output::OutputFolder;
use crate::{inputs, judges};

/// Score responses with the Direct 0–9 prompt (no checklist).
///
/// Writes `<out>/<model>.jsonl`: a line per response (core's `DirectScore`: session_id, model_test, score, judge,
/// digits, …), where `score` is the decoded digit (by default Σ d·p(d) over the digits 0–9) and `digits` the ten
/// probabilities. Each line is on disk before the next response starts; interrupted runs resume
/// where they stopped, as `grade` does.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
    /// The instruction level (seed 004): `rocketeval` (RocketEval's Direct prompt, the default),
    /// `generic` (evaluate the quality), `criteria` (MT-Bench's criteria named), `rubric` (criteria
    /// defined, score bands), `rubric-ends` (criteria defined, only the lowest and highest score
    /// described: seed 003's "Score 1 & 5"), or `perplexity` (no prompt: the response's mean token
    /// log-probability).
    #[arg(long, default_value_t = DirectInstruction::default(), value_parser = PossibleValuesParser::new(DirectInstruction::NAMES).try_map(|s| s.parse::<DirectInstruction>()))]
    instruction: DirectInstruction,
    /// The score's range: `0-9` (RocketEval's, the default) or `1-5` (the Likert scale of seeds 003
    /// and 004; not for `rocketeval` or `perplexity`). Only the scale's digits can be answered.
    #[arg(long, default_value_t = DirectScale::default(), value_parser = PossibleValuesParser::new(DirectScale::NAMES).try_map(|s| s.parse::<DirectScale>()))]
    scale: DirectScale,
    /// The query's reference answer in the prompt: `paper` (as each prompt's paper does: RocketEval's
    /// with it, seed 004's levels without; the default), `include` or `omit`. Recorded in each line.
    #[arg(long, default_value_t = ReferenceUse::CHOSEN_BY_DEFAULT, value_parser = PossibleValuesParser::new(ReferenceUse::NAMES).try_map(|s| s.parse::<ReferenceUse>()))]
    reference_answer: ReferenceUse,
    /// Seed 004's judging of one criterion the user names: the rubric section of `--instruction
    /// criteria` (e.g. "Logicality") or `rubric` (the criterion's definition and score bands) in place
    /// of the built-in one (MT-Bench's six criteria). Recorded in each line.
    #[arg(long, conflicts_with = "rubric_file")]
    rubric: Option<String>,
    /// The same, read from a UTF-8 text file.
    #[arg(long)]
    rubric_file: Option<std::path::PathBuf>,
    /// Each query's own rubric (seed 003's instance-specific rubrics): JSONL lines {session_id,
    /// rubric}. Queries without a line get --rubric (or the built-in one). Recorded in each line.
    #[arg(long)]
    rubrics: Option<std::path::PathBuf>,
    #[command(flatten)]
    checklist: ChecklistFlags,
    #[command(flatten)]
    decoding: DecodingFlags,
}

pub fn run(a: Args) -> CliResult {
    let decoding = a.decoding.chosen()?;
    let (checklist, k) = a.checklist.rule(ChecklistUse::Never, DEFAULT_DIRECT_K)?;
    // Core refuses what means nothing (perplexity has no prompt for a checklist, no answer to decode).
    let rubric = match &a.rubric_file {
        Some(f) => {
            let text = String::from_utf8(inputs::read(f)?).map_err(|_| anyhow::anyhow!("{}: the rubric is not UTF-8 text", f.display()))?;
            limits::check_rubric(&f.display().to_string(), 0, "--rubric-file", &text)?;
            if text.trim().is_empty() {
                return Err(
                    rocketjudge_core::FormatError::new(&f.display().to_string(), 0, "--rubric-file", "the rubric file is empty").into()
                );
            }
            Some(text)
        }
        None => {
            if let Some(r) = &a.rubric {
                limits::check_rubric("the command line", 0, "--rubric", r)?;
            }
            a.rubric.clone()
        }
    };
    // The Direct prompt needs no checklist: queries without one are fine here.
    let inputs =
        inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, true, checklist != ChecklistUse::Never)?;
    let work = inputs.work();
    // Each query's own rubric where --rubrics gives one.
    let mut rubrics = BTreeMap::new();
    if let Some(f) = &a.rubrics {
        let name = f.display().to_string();
        let queries: HashSet<&str> = work.iter().map(|w| w.response.session_id.as_str()).collect();
        let rows = read_query_rubrics(&name, &inputs::read(f)?)?;
        if rows.is_empty() {
            return Err(inputs::no_records(&[&name], "rubrics"));
        }
        for r in rows {
            if !queries.contains(r.value.session_id.as_str()) {
                bail!("{name}:{}: session_id: no response answers a query `{}` in this run", r.line, r.value.session_id);
            }
            rubrics.insert(r.value.session_id, r.value.rubric);
        }
    }
    let settings = DirectSettings {
        instruction: a.instruction,
        scale: a.scale,
        rubric,
        rubrics,
        reference: a.reference_answer,
        checklist,
        k,
        decoding,
    }
    .checked()
    .map_err(|e| {
        anyhow::anyhow!("--instruction {}: {e} (--scale, --checklist, --reference-answer, --rubric, --rubrics, --decoding)", a.instruction)
    })?;
    let mut out = OutputFolder::lock(&a.io.out, None)?;
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge.device, a.io.judge.max_tokens)?;
    let name = rocketjudge_engine::judge::Judge::name(&judge);
    let out_path = |model: &str| crate::output::model_path(&a.io.out, model, "jsonl");
    let mut done: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for w in &work {
        if done.contains_key(&w.model) {
            continue;
        }
        let path = out_path(&w.model);
        let keys = OutputFolder::resume_same(
            &path,
            read_direct_scores,
            |r: &DirectScore| r.session_id.clone(),
            |r| made_otherwise(r, &name, &settings),
        )?;
        done.insert(w.model.clone(), keys);
    }
    let mut todo: Vec<_> = work.iter().filter(|w| !done[&w.model].contains(&w.response.session_id)).collect();
    inputs::by_query(&work, &mut todo);
    if todo.len() < work.len() {
        eprintln!("resuming: {} of {} responses are already scored in {}", work.len() - todo.len(), work.len(), a.io.out.display());
    }
    let (mut guided_count, mut skipped) = (0, 0);
    for (n, w) in todo.iter().enumerate() {
        let ctx = || format!("{} on `{}`", w.model, w.response.session_id);
        let Some(row) = pollster::block_on(judge.direct(w.query, w.response, &w.model, &settings)).with_context(ctx)? else {
            // No tokens, no perplexity: the response gets no score (ranked as unanswered), and the run goes on.
            eprintln!("warning: {}: the response is empty; it has no perplexity and gets no score", ctx());
            skipped += 1;
            continue;
        };
        guided_count += usize::from(row.checklist);
        out.append(&out_path(&w.model), &jsonl::to_jsonl_line(&row))?;
        if n % 20 == 0 || n + 1 == todo.len() {
            eprintln!("[{}/{}] direct scores", n + 1 + work.len() - todo.len(), work.len());
        }
    }
    if checklist == ChecklistUse::Selective {
        eprintln!("the checklist was in the prompt for {guided_count} of {} responses (spread ≥ {})", todo.len(), k.unwrap_or_default());
    }
    eprintln!(
        "wrote Direct scores of {} responses to {}{}",
        todo.len() - skipped,
        a.io.out.display(),
        judges::kept_note(judge.reused_tokens())
    );
    Ok(())
}

/// How `r` was made otherwise than this run makes its lines (another judge, other settings), if it was.
fn made_otherwise(r: &DirectScore, judge: &str, settings: &DirectSettings) -> Option<String> {
    if r.judge != judge {
        return Some(format!("scored by `{}`, but this run's judge is `{judge}`", r.judge));
    }
    (!settings.made(r)).then(|| {
        let reference = if r.reference == Some(false) { "omitted" } else { "included" };
        format!(
            "scored with other settings (prompt `{}` on {}{}, reference answer {reference}, --checklist {}, decoding `{}`) than this run's",
            r.prompt_version.as_deref().unwrap_or(DirectInstruction::RocketEval.version()),
            r.scale.unwrap_or_default(),
            r.rubric.as_ref().map(|t| format!(" with the rubric {t:?}")).unwrap_or_default(),
            r.checklist_use.unwrap_or_default(),
            r.decoding.unwrap_or_default().label()
        )
    })
}
