//! `rocketjudge grade`: a judge model grades every response against its query's checklist.
//!
//! Output: one RocketEval judgments JSONL per responding model in --out, a line per response,
//! durable before the next starts; a run with the same arguments resumes, and one run at a time
//! writes a folder (see `crate::output`). The --trace file is written before each judgment line; on
//! resume it loses its torn tail and the lines of the responses about to be graded again (rewritten
//! atomically), so it too ends as an uninterrupted run's.

mod grading;
mod resume;

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::pairwise::{ChecklistUse, PairSettings, DEFAULT_PAIRWISE_K};
use rocketjudge_core::prompt::{PairwiseScale, PromptStyle};
use rocketjudge_core::resume::GradingSettings;
use rocketjudge_core::schedule::{Order, Schedule, DEFAULT_ORDER_SEED};
use rocketjudge_core::settle::{Pace, SettleRule, DEFAULT_MIN_QUERIES};
use rocketjudge_engine::judge::Judge;

use super::pairs;
use super::CliResult;
use crate::knobs::{ChecklistFlags, DecodingFlags};
use crate::live::Live;
use crate::output::{reorder_lines, OutputFolder};
use crate::shard::{Shard, ShardRecord};
use crate::{inputs, judges};
use grading::{Graded, Grading, OrderRecord};
use resume::{resume_trace, Resumed};

/// Grade responses with a local judge model.
///
/// Reads queries (RocketEval JSONL with `checklist`, or add --checklists), and RocketEval responses
/// (files or folders; the model is each record's `generator`, else the file name). Writes
/// `<out>/<model>.jsonl`: one judgment per response with `norm_probability` and `judgment` per item,
/// the judge's name and the Yes/No token ids it read. Interrupted runs resume where they stopped.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    io: inputs::GradingArgs,
    /// Grade only share I of N (0-based, `I/N`): every N-th response from the I-th, for parallel runs
    /// (a Slurm array, a Kubernetes Indexed Job). A finished shard writes a completion record beside
    /// its files; `rocketjudge merge` checks all N and writes what one unsharded run would have.
    #[arg(long, value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// Write one JSON line per graded item with the exact token ids fed to the model.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Grade the valid responses even when some inputs have problems (they are listed either way).
    #[arg(long)]
    allow_problems: bool,
    /// The grading prompt's wording: RocketEval's (the default), the same instruction reworded, less
    /// instruction (`minimal`) or more (`criteria`: what a Yes requires). Recorded in every judgment
    /// (`prompt_version`); a folder holds one wording.
    #[arg(long, default_value_t = PromptStyle::default(), value_parser = PossibleValuesParser::new(PromptStyle::NAMES).try_map(|s| s.parse::<PromptStyle>()))]
    prompt: PromptStyle,
    /// The evaluation type (seed 001): `pointwise` grades each response against its checklist;
    /// `pairwise` compares every two models' responses to a query, in both orders, into
    /// `<out>/pairs.jsonl` (with --reference, each model with the reference's response only);
    /// `pairwise-5point` does so on Arena-Hard's 5-point scale (seed 001).
    #[arg(long = "type", value_enum, default_value_t = EvalType::Pointwise)]
    eval_type: EvalType,
    /// Pairwise against a reference system: the model every other model is compared with.
    #[arg(long)]
    reference: Option<String>,
    #[command(flatten)]
    checklist: ChecklistFlags,
    #[command(flatten)]
    decoding: DecodingFlags,
    /// The order responses are graded in. `interleaved` (the default): the queries in a seeded random
    /// order, stratified by category, every model's response to a query before the next query, so a
    /// partial run ranks every model; `model`: model by model, in file order; `adaptive`: interleaved
    /// until every model has a few grades, then the pairs still too close to call first. A finished
    /// run's files are the same whatever the order.
    #[arg(long, value_parser = PossibleValuesParser::new(Order::NAMES).try_map(|s| s.parse::<Order>()))]
    order: Option<Order>,
    /// The seed of the interleaved query order.
    #[arg(long, default_value_t = DEFAULT_ORDER_SEED)]
    order_seed: u64,
    /// Stop once the ranking is settled: every adjacent pair of the live leaderboard ordered the same
    /// way in at least LEVEL of the bootstrap replicates (default 0.95), on at least 10 shared
    /// queries. What is left stays pending: the same command without --until grades it.
    #[arg(long, value_name = "settled[:LEVEL]", value_parser = |s: &str| SettleRule::parse_until(s).map_err(|e| e.to_string()))]
    until: Option<SettleRule>,
    /// The fewest queries two models must share before the live leaderboard counts their order as
    /// separated (--until and the adaptive order).
    #[arg(long, default_value_t = DEFAULT_MIN_QUERIES)]
    min_queries: usize,
}

/// Seed 001's evaluation types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalType {
    Pointwise,
    Pairwise,
    /// Pairwise on Arena-Hard's 5-point scale (A much better … B much better), converted to win
    /// shares as seed 001 does.
    #[value(name = "pairwise-5point")]
    Pairwise5Point,
}

/// What the flags ask for, checked together.
struct Plan {
    pairwise: bool,
    checklist: ChecklistUse,
    k: Option<f64>,
    decoding: Option<Decoding>,
    order: Order,
}

impl Plan {
    fn check(a: &Args) -> Result<Self> {
        let decoding = a.decoding.chosen()?;
        let pairwise = a.eval_type != EvalType::Pointwise;
        let (checklist, k) = a.checklist.rule(if pairwise { ChecklistUse::Never } else { ChecklistUse::Always }, DEFAULT_PAIRWISE_K)?;
        if !pairwise {
            if a.reference.is_some() {
                bail!("--reference applies to --type pairwise (pointwise grading scores each response on its own)");
            }
            if checklist != ChecklistUse::Always {
                bail!("pointwise grading is checklist grading; for scores without a checklist (or selective use) run `rocketjudge direct --checklist {checklist}`");
            }
        } else if a.prompt != PromptStyle::default() {
            bail!("--prompt words the checklist-grading prompt; --type pairwise uses the comparison prompt");
        } else if a.shard.is_some() || a.trace.is_some() {
            bail!("--shard and --trace apply to pointwise grading");
        } else if a.order.is_some() || a.until.is_some() {
            bail!("--order and --until apply to pointwise grading (a pairwise run compares query by query)");
        }
        let order = a.order.unwrap_or_default();
        if a.shard.is_some() && (a.until.is_some() || order == Order::Adaptive) {
            bail!("--until and --order adaptive need the whole run's ranking, which a shard does not see; use them without --shard");
        }
        Ok(Plan { pairwise, checklist, k, decoding, order })
    }

    /// Plain comparisons need no checklist: queries without one are fine then (as for `direct`).
    fn needs_checklists(&self) -> bool {
        !(self.pairwise && self.checklist == ChecklistUse::Never)
    }
}

/// `grade`: plan (the flags, the inputs, this shard's work), resume (what the folder holds already),
/// the grading loop, finish (files in order, the shard's record).
pub fn run(a: Args) -> CliResult {
    let plan = Plan::check(&a)?;
    let inputs =
        inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, a.allow_problems, plan.needs_checklists())?;
    let all_work = inputs.work();
    let work = shard_of(a.shard, &all_work);
    let mut out = OutputFolder::lock(&a.io.out, a.shard.map(|s| s.tag()).as_deref())?;
    if let Some(s) = a.shard {
        ShardRecord::clear(s, &a.io.out)?;
    }
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge.device, a.io.judge.max_tokens)?;
    if plan.pairwise {
        let scale = if a.eval_type == EvalType::Pairwise5Point { PairwiseScale::FivePoint } else { PairwiseScale::Binary };
        let settings =
            PairSettings { scale, checklist: plan.checklist, k: plan.k, reference: a.reference.clone(), decoding: plan.decoding };
        return pairs::run(&work, &mut judge, &settings, &a.io.out, &mut out);
    }
    judge.set_prompt_style(a.prompt);
    let judge_name = judge.name();
    let path_of = |model: &str| judgments_path(&a, model);
    let settings = GradingSettings { judge: judge_name.clone(), prompt_version: a.prompt.version().to_string(), decoding: plan.decoding };
    let resumed = Resumed::read(&work, &settings, path_of)?;
    let todo = resumed.todo(&work);
    let rule = SettleRule { min_queries: a.min_queries, ..a.until.unwrap_or_default() }.checked()?;
    let mut live = Live::new(&work, resumed.judgments.values().flatten(), rule)?;
    let schedule = Schedule::new(&live.jobs, plan.order, a.order_seed, live.rule.min_queries);
    if todo.len() < work.len() {
        eprintln!("resuming: {} of {} responses are already graded in {}", work.len() - todo.len(), work.len(), a.io.out.display());
    }
    let order = plan.order;
    let seed = if order == Order::Model { String::new() } else { format!(" (seed {})", a.order_seed) };
    eprintln!("{} responses to grade, {order} order{seed}", todo.len());
    let trace = match &a.trace {
        Some(p) => {
            resume_trace(p, &todo.iter().map(|w| (w.model.as_str(), w.response.session_id.as_str())).collect())?;
            Some(OpenOptions::new().create(true).append(true).open(p).with_context(|| format!("cannot open {}", p.display()))?)
        }
        None => None,
    };
    // The order this run grades in, a line per response (a shard's order is its own, not recorded).
    let record = match a.shard {
        Some(_) => None,
        None => Some(OrderRecord::open(&a.io.out, &format!("order {order}, seed {}, {} responses to grade", a.order_seed, todo.len()))?),
    };
    let mut done = resumed.done;
    let grading = Grading {
        work: &work,
        judge: &mut judge,
        judge_name: &judge_name,
        prompt: a.prompt,
        decoding: plan.decoding,
        out: &mut out,
        path_of: &path_of,
        trace,
        record,
        until: a.until.is_some(),
    };
    let graded = grading.run(&schedule, &mut live, &mut done, todo.len())?;
    finish(&a, &work, &all_work, &judge_name, &live, &done, &graded)
}

/// The responses this run grades: all, or with --shard every N-th from the I-th.
fn shard_of<'w, 'a>(shard: Option<Shard>, all_work: &'w [inputs::Work<'a>]) -> Vec<&'w inputs::Work<'a>> {
    match shard {
        Some(s) => {
            let mine: Vec<_> = all_work.iter().enumerate().filter(|(k, _)| s.owns(*k)).map(|(_, w)| w).collect();
            eprintln!("shard {}/{}: {} of {} responses", s.index, s.count, mine.len(), all_work.len());
            mine
        }
        None => all_work.iter().collect(),
    }
}

/// A model's judgments file in --out (a shard's own name with --shard).
fn judgments_path(a: &Args, model: &str) -> PathBuf {
    match a.shard {
        Some(s) => s.judgments_file(&a.io.out, model),
        None => crate::output::model_path(&a.io.out, model, "jsonl"),
    }
}

/// After the loop: what was graded, why a run settled early stops, and for a finished run each
/// model's file in file order (whatever order it was graded in) and a shard's completion record.
fn finish(
    a: &Args,
    work: &[&inputs::Work],
    all_work: &[inputs::Work],
    judge_name: &str,
    live: &Live,
    done: &[bool],
    graded: &Graded,
) -> CliResult {
    if graded.truncated > 0 {
        eprintln!(
            "note: {} responses were longer than the judge's context and were truncated (marked in the prompt and in `truncated_chars`)",
            graded.truncated
        );
    }
    eprintln!(
        "graded {} responses ({} items) in {:.1} s into {}{}",
        graded.responses,
        graded.items,
        graded.secs,
        a.io.out.display(),
        crate::judges::kept_note(graded.kept_tokens)
    );
    if graded.settled_early {
        let left = done.iter().filter(|d| !**d).count();
        let pace = Pace { secs_per_response: None, elapsed: Some(graded.secs) };
        let s = live.standing.as_ref().map(|s| s.sentence(pace)).unwrap_or_default();
        eprintln!("stopped: {s}; {left} responses left pending (the same command without --until grades them)");
        return Ok(());
    }
    for (model, rows) in work.iter().fold(BTreeMap::<&str, Vec<&str>>::new(), |mut m, w| {
        m.entry(w.model.as_str()).or_default().push(w.response.session_id.as_str());
        m
    }) {
        reorder_lines(&judgments_path(a, model), &rows, session_of)?;
    }
    if let Some(s) = a.shard {
        let j = &a.io.judge;
        let settings =
            format!("judge={judge_name} backend={} precision={:?} max_tokens={}", j.device.backend, j.device.precision, j.max_tokens);
        ShardRecord::new(s, all_work, &a.io.out, judge_name, &settings)?.write(&a.io.out)?;
        eprintln!("shard {}/{} is complete ({})", s.index, s.count, s.record_file(&a.io.out).display());
    }
    Ok(())
}

/// The session of a judgment line (for putting a finished run's lines in order).
fn session_of(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Key {
        session_id: String,
    }
    serde_json::from_slice::<Key>(line).ok().map(|k| k.session_id)
}
