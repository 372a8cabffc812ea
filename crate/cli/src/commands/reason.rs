//! `rocketjudge reason`: chain-of-thought judging — the judge writes N replies per response (its
//! reasoning, then a score), core reads each and aggregates them (seed 000's CoT baseline, seed 003's
//! CoT vs Direct with sampled replies, seed 002's checklist-guided protocol).

use std::collections::{BTreeMap, HashSet};

use anyhow::{bail, Context};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::jsonl;
use rocketjudge_core::reasoned::{read_reasoned_scores, Aggregate, ReasonedProtocol, ReasonedScore, ReasonedSettings};

use crate::output::OutputFolder;
use crate::{inputs, judges, CliResult};

/// Score responses from the judge's written reasoning (chain of thought).
///
/// Writes `<out>/<model>.jsonl`: a line per response (core's `ReasonedScore`: session_id, model_test,
/// score, judge, prompt_version, settings, unparsed, samples — each reply's text and the score read
/// from it). A reply whose score cannot be read is kept with its text, counted in `unparsed` and
/// printed; the score aggregates the others, and a response with none readable has no score (it ranks
/// as unanswered). Each line is on disk before the next response starts; an interrupted run resumes
/// where it stopped. Rank with `rocketjudge rank --scores <out>`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
    /// `rocketeval-cot` (seed 000's CoT baseline, 1–10, the default), `feedback` / `feedback-direct`
    /// (seed 003: feedback then [RESULT] 1–5, or the score only), `reason-rating` / `checklist-guided`
    /// (seed 002: a reason, or yes / no / n/a per checklist item, then a rating 1–5).
    #[arg(long, default_value_t = ReasonedProtocol::default(), value_parser = PossibleValuesParser::new(ReasonedProtocol::NAMES).try_map(|s| s.parse::<ReasonedProtocol>()))]
    protocol: ReasonedProtocol,
    /// Replies per response (the paper's: 1 for rocketeval-cot, 5 for seed 003's, 10 for seed 002's).
    #[arg(long)]
    samples: Option<usize>,
    /// Sampling temperature; 0 is greedy (the paper's: 0 for rocketeval-cot, else 1.0).
    #[arg(long)]
    temperature: Option<f64>,
    /// How the replies' scores become one: majority, median or mean (the paper's: mean for seeds 000
    /// and 003, majority for seed 002).
    #[arg(long, value_parser = PossibleValuesParser::new(Aggregate::NAMES).try_map(|s| s.parse::<Aggregate>()))]
    aggregate: Option<Aggregate>,
    /// The most tokens one reply may have (default 512; 8 for feedback-direct).
    #[arg(long)]
    reply_tokens: Option<usize>,
    /// Reply i is sampled with seed + i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(a: Args) -> CliResult {
    let paper = ReasonedSettings::paper(a.protocol);
    let settings = ReasonedSettings {
        samples: a.samples.unwrap_or(paper.samples),
        temperature: a.temperature.unwrap_or(paper.temperature),
        aggregate: a.aggregate.unwrap_or(paper.aggregate),
        reply_tokens: a.reply_tokens.unwrap_or(paper.reply_tokens),
        seed: a.seed,
        ..paper
    }
    .checked()
    .map_err(|e| anyhow::anyhow!("--protocol {}: {e} (--samples, --temperature, --reply-tokens)", a.protocol))?;
    let inputs =
        inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, false, a.protocol.needs_checklist())
            .with_context(|| format!("`--protocol {}` lists each query's checklist (give --checklists)", a.protocol))?;
    let work = inputs.work();
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
        let rows = OutputFolder::resume(&path, read_reasoned_scores, |r: &ReasonedScore| r.session_id.clone())?;
        if let Some(r) = rows.iter().find(|r| r.value.judge != name) {
            bail!(
                "{}:{}: judged by `{}`, but this run's judge is `{name}`; use another --out folder",
                path.display(),
                r.line,
                r.value.judge
            );
        }
        if let Some(r) = rows.iter().find(|r| r.value.settings != settings) {
            bail!(
                "{}:{}: judged with other settings ({}) than this run's ({}); use another --out folder",
                path.display(),
                r.line,
                serde_json::to_string(&r.value.settings)?,
                serde_json::to_string(&settings)?
            );
        }
        done.insert(w.model.clone(), rows.into_iter().map(|r| r.value.session_id).collect());
    }
    let todo: Vec<_> = work.iter().filter(|w| !done[&w.model].contains(&w.response.session_id)).collect();
    if todo.len() < work.len() {
        eprintln!("resuming: {} of {} responses are already judged in {}", work.len() - todo.len(), work.len(), a.io.out.display());
    }
    let (mut unparsed, mut unscored, mut replies) = (0, 0, 0);
    for (n, w) in todo.iter().enumerate() {
        let ctx = || format!("{} on `{}`", w.model, w.response.session_id);
        let row = pollster::block_on(judge.reasoned(w.query, w.response, &w.model, &settings, &mut |i, s| {
            if s.score.is_none() {
                let shown: String = s.text.chars().take(300).collect();
                eprintln!("unreadable reply {} of {} ({} tokens, {}): {shown:?}", i + 1, settings.samples, s.tokens, s.stop);
            }
        }))
        .with_context(ctx)?;
        (unparsed, replies) = (unparsed + row.unparsed, replies + row.samples.len());
        unscored += usize::from(row.score.is_none());
        out.append(&out_path(&w.model), &jsonl::to_jsonl_line(&row))?;
        let score = row.score.map_or("no score".to_string(), |s| format!("{s:.2}"));
        eprintln!(
            "[{}/{}] {}: {score} ({} of {} replies read)",
            n + 1 + work.len() - todo.len(),
            work.len(),
            ctx(),
            row.samples.len() - row.unparsed,
            row.samples.len()
        );
    }
    eprintln!(
        "wrote reasoned scores of {} responses to {}: {unparsed} of {replies} replies unreadable, {unscored} responses without a score",
        todo.len(),
        a.io.out.display()
    );
    Ok(())
}
