//! `rocketjudge reason`: chain-of-thought judging — the judge writes N replies per response (its
//! reasoning, then a score), core reads each and aggregates them (seed 000's CoT baseline, seed 003's
//! CoT vs Direct with sampled replies, seed 002's checklist-guided protocol).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::{jsonl, Winner};
use rocketjudge_core::reasoned::{
    read_reasoned_pairs, read_reasoned_scores, Aggregate, ReasonedPair, ReasonedProtocol, ReasonedScore, ReasonedSettings,
};
use rocketjudge_engine::judge::AnyJudge;

use super::pairs::{pair_key, pending, plan};
use super::CliResult;
use crate::output::OutputFolder;
use crate::output::PAIRS_FILE;
use crate::{inputs, judges};

/// Score responses from the judge's written reasoning (chain of thought).
///
/// Writes `<out>/<model>.jsonl`: a line per response (core's `ReasonedScore`: session_id, model_test,
/// score, judge, prompt_version, settings, unparsed, samples — each reply's text and the score read
/// from it). A reply whose score cannot be read is kept with its text, counted in `unparsed` and
/// printed; the score aggregates the others, and a response with none readable has no score (it ranks
/// as unanswered). Rank with `rocketjudge rank --scores <out>`.
///
/// The pairwise protocols compare every two models' responses to a query, half the replies in each
/// presentation order, into `<out>/pairs.jsonl` (core's `ReasonedPair`: the votes, the majority
/// `winner`, each reply); rank with `rocketjudge rank --battles <out>/pairs.jsonl`.
///
/// Each line is on disk before the next starts; an interrupted run resumes where it stopped.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
    /// `rocketeval-cot` (seed 000's CoT baseline, 1–10, the default), `feedback` / `feedback-direct`
    /// (seed 003: feedback then [RESULT] 1–5, or the score only), `reason-rating` / `checklist-guided`
    /// (seed 002: a reason, or yes / no / n/a per checklist item, then a rating 1–5); `pair-reason` /
    /// `pair-checklist-guided` (seed 002's pairwise prompts: which of two responses is better).
    #[arg(long, default_value_t = ReasonedProtocol::default(), value_parser = PossibleValuesParser::new(ReasonedProtocol::NAMES).try_map(|s| s.parse::<ReasonedProtocol>()))]
    protocol: ReasonedProtocol,
    /// Replies per response (the paper's: 1 for rocketeval-cot, 5 for seed 003's, 10 for seed 002's;
    /// a pair's, half in each order).
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
            .map_err(|e| {
                // The hint where a checklist is what is missing, not on every input problem.
                let checklists =
                    e.downcast_ref::<inputs::InputProblems>().is_some_and(|p| p.0.iter().any(|p| p.message.contains("checklist")));
                if checklists {
                    e.context(format!("`--protocol {}` lists each query's checklist (give --checklists)", a.protocol))
                } else {
                    e
                }
            })?;
    let work = inputs.work();
    let mut out = OutputFolder::lock(&a.io.out, None)?;
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge.device, a.io.judge.max_tokens)?;
    let name = rocketjudge_engine::judge::Judge::name(&judge);
    let made_otherwise = |judge: &str, s: &ReasonedSettings| {
        if judge != name {
            Some(format!("judged by `{judge}`, but this run's judge is `{name}`"))
        } else if *s != settings {
            let json = |s| serde_json::to_string(s).unwrap_or_default();
            Some(format!("judged with other settings ({}) than this run's ({})", json(s), json(&settings)))
        } else {
            None
        }
    };
    if settings.protocol.is_pairwise() {
        return run_pairs(&work.iter().collect::<Vec<_>>(), &mut judge, &settings, &a.io.out, &mut out, |p| {
            made_otherwise(&p.judge, &p.settings)
        });
    }
    let out_path = |model: &str| crate::output::model_path(&a.io.out, model, "jsonl");
    let mut done: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for w in &work {
        if !done.contains_key(&w.model) {
            let keys = OutputFolder::resume_same(
                &out_path(&w.model),
                read_reasoned_scores,
                |r: &ReasonedScore| r.session_id.clone(),
                |r| made_otherwise(&r.judge, &r.settings),
            )?;
            done.insert(w.model.clone(), keys);
        }
    }
    let mut todo: Vec<_> = work.iter().filter(|w| !done[&w.model].contains(&w.response.session_id)).collect();
    inputs::by_query(&work, &mut todo);
    if todo.len() < work.len() {
        eprintln!("resuming: {} of {} responses are already judged in {}", work.len() - todo.len(), work.len(), a.io.out.display());
    }
    let mut tally = Tally::default();
    for (n, w) in todo.iter().enumerate() {
        let ctx = || format!("{} on `{}`", w.model, w.response.session_id);
        let row = pollster::block_on(judge.reasoned(w.query, w.response, &w.model, &settings, &mut |i, s| {
            show_unreadable(i, &settings, s.score.is_none(), &s.text, s.tokens, &s.stop)
        }))
        .with_context(ctx)?;
        tally.add(row.unparsed, row.samples.len(), row.score.is_none());
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
        "wrote reasoned scores of {} responses to {}: {} of {} replies unreadable, {} responses without a score{}",
        todo.len(),
        a.io.out.display(),
        tally.unparsed,
        tally.replies,
        tally.unjudged,
        judges::kept_note(judge.reused_tokens())
    );
    Ok(())
}

/// A pairwise protocol: every two models' responses to a query, each pair's replies half in each
/// order, into `<out>/pairs.jsonl` (resumed as every run is).
fn run_pairs(
    work: &[&inputs::Work],
    judge: &mut AnyJudge,
    settings: &ReasonedSettings,
    out_dir: &Path,
    out: &mut OutputFolder,
    made_otherwise: impl Fn(&ReasonedPair) -> Option<String>,
) -> CliResult {
    let path = out_dir.join(PAIRS_FILE);
    let done = OutputFolder::resume_same(
        &path,
        read_reasoned_pairs,
        |p: &ReasonedPair| pair_key(&p.session_id, &p.model_a, &p.model_b),
        made_otherwise,
    )?;
    let pairs = plan(work, None)?;
    let todo = pending(&pairs, &done);
    if todo.len() < pairs.len() {
        eprintln!("resuming: {} of {} pairs are already judged in {}", pairs.len() - todo.len(), pairs.len(), path.display());
    }
    let mut tally = Tally::default();
    for (n, (a, b)) in todo.iter().enumerate() {
        let ctx = || format!("{} vs {} on `{}`", a.model, b.model, a.response.session_id);
        let row =
            pollster::block_on(judge.reasoned_pair(a.query, (&a.model, a.response), (&b.model, b.response), settings, &mut |i, s| {
                show_unreadable(i, settings, s.vote.is_none(), &s.text, s.tokens, &s.stop)
            }))
            .with_context(ctx)?;
        tally.add(row.unparsed, row.samples.len(), row.winner.is_none());
        out.append(&path, &jsonl::to_jsonl_line(&row))?;
        let verdict = match row.winner {
            Some(Winner::A) => a.model.as_str(),
            Some(Winner::B) => b.model.as_str(),
            Some(Winner::Tie) => "a tie",
            None => "no verdict",
        };
        eprintln!(
            "[{}/{}] {}: {verdict} ({} : {} votes, {} of {} replies read)",
            n + 1 + pairs.len() - todo.len(),
            pairs.len(),
            ctx(),
            row.votes_a,
            row.votes_b,
            row.samples.len() - row.unparsed,
            row.samples.len()
        );
    }
    eprintln!(
        "wrote the verdicts of {} pairs to {}: {} of {} replies unreadable, {} pairs without a verdict{}",
        todo.len(),
        path.display(),
        tally.unparsed,
        tally.replies,
        tally.unjudged,
        judges::kept_note(judge.reused_tokens())
    );
    Ok(())
}

/// Replies unreadable, replies, and records without a score or verdict.
#[derive(Default)]
struct Tally {
    unparsed: usize,
    replies: usize,
    unjudged: usize,
}

impl Tally {
    fn add(&mut self, unparsed: usize, replies: usize, unjudged: bool) {
        (self.unparsed, self.replies, self.unjudged) =
            (self.unparsed + unparsed, self.replies + replies, self.unjudged + usize::from(unjudged));
    }
}

/// Print reply `i` where it could not be read (its first 300 characters).
fn show_unreadable(i: usize, settings: &ReasonedSettings, unreadable: bool, text: &str, tokens: usize, stop: &str) {
    if unreadable {
        let shown: String = text.chars().take(300).collect();
        eprintln!("unreadable reply {} of {} ({tokens} tokens, {stop}): {shown:?}", i + 1, settings.samples);
    }
}
