//! `rocketjudge grade`: a judge model grades every response against its query's checklist.
//!
//! Output: one RocketEval judgments JSONL per responding model in --out, a line per response,
//! durable before the next starts; a run with the same arguments resumes, and one run at a time
//! writes a folder (see `crate::output`). The --trace file is written before each judgment line; on
//! resume it loses its torn tail and the lines of the responses about to be graded again (rewritten
//! atomically), so it too ends as an uninterrupted run's.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{ErrorKind, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::{self, jsonl, Judgment, Lined};
use rocketjudge_core::prompt::{PairwiseScale, PromptStyle};
use rocketjudge_core::resume::GradingSettings;
use rocketjudge_core::schedule::{Order, Schedule, DEFAULT_ORDER_SEED};
use rocketjudge_core::settle::{self, Pace, SettleRule, DEFAULT_MIN_QUERIES};
use serde_json::json;

use rocketjudge_engine::judge::Judge;

use super::pairs;
use super::CliResult;
use crate::knobs::{ChecklistFlags, DecodingFlags};
use crate::live::Live;
use crate::output::{reorder_lines, replace_atomically, OutputFolder};
use crate::shard::{Shard, ShardRecord};
use crate::{inputs, judges};
use rocketjudge_core::pairwise::{ChecklistUse, PairSettings, DEFAULT_PAIRWISE_K};

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

/// The judgments already in `path` (resume; see `OutputFolder::resume_checked`), every one this run's
/// grade of its response (core's `resume`: the same judge, prompt wording and decoding, and as many
/// items as the response's checklist has now, `items` by session; a session not in this run is checked
/// against its own length).
fn resume_file(path: &Path, settings: &GradingSettings, items: &HashMap<&str, usize>) -> Result<Vec<Lined<Judgment>>> {
    OutputFolder::resume_checked(
        path,
        formats::rocketeval::read_judgments,
        |j: &Judgment| j.session_id.clone(),
        |j| settings.mismatch(j, items.get(j.session_id.as_str()).copied().unwrap_or(j.norm_probability.len())),
    )
}

/// Make a trace file agree with the judgments on disk before grading resumes: drop a torn last line
/// (and any line that is not a trace record) and the lines of responses in `todo` (those of a
/// response in flight when a run was stopped; it is graded, and traced, again). Other lines are kept
/// as they are. The file is replaced atomically.
fn resume_trace(path: &Path, todo: &HashSet<(&str, &str)>) -> Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    #[derive(serde::Deserialize)]
    struct Key {
        session_id: String,
        model_test: String,
    }
    let mut keep = Vec::with_capacity(bytes.len());
    let mut dropped = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        // A torn line, a line that is not a trace record, or one of a response graded again: dropped.
        let keep_line = line.ends_with(b"\n")
            && serde_json::from_slice::<Key>(line).is_ok_and(|k| !todo.contains(&(k.model_test.as_str(), k.session_id.as_str())));
        if keep_line {
            keep.extend_from_slice(line);
        } else {
            dropped += 1;
        }
    }
    if dropped == 0 {
        return Ok(());
    }
    eprintln!("{}: dropping {dropped} trace lines of responses an interrupted run did not finish", path.display());
    replace_atomically(path, &keep)
}

pub fn run(a: Args) -> CliResult {
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
    // Plain comparisons need no checklist: queries without one are fine then (as for `direct`).
    let need_checklists = !(pairwise && checklist == ChecklistUse::Never);
    let inputs =
        inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, a.allow_problems, need_checklists)?;
    let all_work = inputs.work();
    let work: Vec<&inputs::Work> = match a.shard {
        Some(s) => {
            let mine: Vec<_> = all_work.iter().enumerate().filter(|(k, _)| s.owns(*k)).map(|(_, w)| w).collect();
            eprintln!("shard {}/{}: {} of {} responses", s.index, s.count, mine.len(), all_work.len());
            mine
        }
        None => all_work.iter().collect(),
    };

    let mut out = OutputFolder::lock(&a.io.out, a.shard.map(|s| s.tag()).as_deref())?;
    if let Some(s) = a.shard {
        ShardRecord::clear(s, &a.io.out)?;
    }
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge.device, a.io.judge.max_tokens)?;
    if pairwise {
        let scale = if a.eval_type == EvalType::Pairwise5Point { PairwiseScale::FivePoint } else { PairwiseScale::Binary };
        let settings = PairSettings { scale, checklist, k, reference: a.reference.clone(), decoding };
        return Ok(pairs::run(&work, &mut judge, &settings, &a.io.out, &mut out)?);
    }
    judge.set_prompt_style(a.prompt);
    let judge_name = judge.name();
    let out_path = |model: &str| -> PathBuf {
        match a.shard {
            Some(s) => s.judgments_file(&a.io.out, model),
            None => crate::output::model_path(&a.io.out, model, "jsonl"),
        }
    };
    let settings = GradingSettings { judge: judge_name.clone(), prompt_version: a.prompt.version().to_string(), decoding };
    let items: HashMap<&str, usize> = work.iter().map(|w| (w.response.session_id.as_str(), w.query.checklist.len())).collect();
    let mut resumed: BTreeMap<String, Vec<Lined<Judgment>>> = BTreeMap::new();
    for w in &work {
        if !resumed.contains_key(&w.model) {
            resumed.insert(w.model.clone(), resume_file(&out_path(&w.model), &settings, &items)?);
        }
    }
    let graded: HashSet<(&str, &str)> =
        resumed.iter().flat_map(|(m, rows)| rows.iter().map(move |r| (m.as_str(), r.value.session_id.as_str()))).collect();
    let mut done: Vec<bool> = work.iter().map(|w| graded.contains(&(w.model.as_str(), w.response.session_id.as_str()))).collect();
    let todo: Vec<&inputs::Work> = work.iter().zip(&done).filter(|(_, d)| !**d).map(|(w, _)| *w).collect();
    let already = work.len() - todo.len();
    let rule = SettleRule { min_queries: a.min_queries, ..a.until.unwrap_or_default() }.checked()?;
    let mut live = Live::new(&work, resumed.values().flatten(), rule)?;
    let schedule = Schedule::new(&live.jobs, order, a.order_seed, live.rule.min_queries);
    if already > 0 {
        eprintln!("resuming: {already} of {} responses are already graded in {}", work.len(), a.io.out.display());
    }
    eprintln!(
        "{} responses to grade, {order} order{}",
        todo.len(),
        if order == Order::Model { String::new() } else { format!(" (seed {})", a.order_seed) }
    );
    let mut trace = match &a.trace {
        Some(p) => {
            resume_trace(p, &todo.iter().map(|w| (w.model.as_str(), w.response.session_id.as_str())).collect())?;
            Some(OpenOptions::new().create(true).append(true).open(p).with_context(|| format!("cannot open {}", p.display()))?)
        }
        None => None,
    };
    // The order this run grades in, a line per response (a shard's order is its own, not recorded).
    let mut record = match a.shard {
        Some(_) => None,
        None => Some(OrderRecord::open(&a.io.out, &format!("order {order}, seed {}, {} responses to grade", a.order_seed, todo.len()))?),
    };
    let tokens = judge.answer_tokens();
    let start = Instant::now();
    let (mut items_done, mut truncated, mut n) = (0usize, 0usize, 0usize);
    let tty = std::io::stderr().is_terminal();
    let mut settled_early = false;
    live.refresh(Pace::default());
    while let Some(i) = schedule.next(&done, live.standing.as_ref()) {
        if a.until.is_some() && live.standing.as_ref().is_some_and(|s| s.settled) {
            settled_early = true;
            break;
        }
        let w = work[i];
        let prepared = judge.prepare(w.query, w.response).with_context(|| format!("{} on `{}`", w.model, w.response.session_id))?;
        let grades =
            pollster::block_on(judge.grade_prepared(&prepared)).with_context(|| format!("{} on `{}`", w.model, w.response.session_id))?;
        let j = Judgment::from_grade(
            &w.response.session_id,
            &w.model,
            &judge_name,
            grades.iter().map(|g| g.p_yes),
            tokens.clone(),
            prepared.truncated_chars,
            a.prompt.version(),
        );
        let j = Judgment { decoding, ..j };
        truncated += usize::from(prepared.truncated_chars > 0);
        if let Some(t) = trace.as_mut() {
            let mut lines = String::new();
            for (i, g) in grades.iter().enumerate() {
                lines.push_str(&jsonl::to_jsonl_line(&json!({
                    "session_id": w.response.session_id, "model_test": w.model, "item": i,
                    "prefix_tokens": prepared.prefix, "suffix_tokens": prepared.suffixes[i],
                    "yes_id": tokens.yes[0], "no_id": tokens.no[0],
                    "logit_yes": g.logit_yes, "logit_no": g.logit_no, "p_yes": g.p_yes,
                })));
            }
            // Durable before the judgment line that makes the response count as done.
            t.write_all(lines.as_bytes())?;
            t.sync_data()?;
        }
        out.append(&out_path(&w.model), &jsonl::to_jsonl_line(&j))?;
        if let Some(r) = record.as_mut() {
            r.graded(&w.model, &w.response.session_id)?;
        }
        done[i] = true;
        n += 1;
        items_done += grades.len();
        let secs = start.elapsed().as_secs_f64();
        let pace = secs / n as f64;
        if n == 1 {
            eprintln!(
                "{}the first response took {pace:.1} s here: about {} for the {} to grade",
                if tty { "\r\x1b[K" } else { "" },
                settle::duration(pace * todo.len() as f64),
                todo.len()
            );
        }
        let line = format!(
            "[{}/{}] {} {}: {:.2} items/s, {:.1} s per response, ETA {}",
            n + already,
            work.len(),
            w.model,
            w.response.session_id,
            items_done as f64 / secs,
            pace,
            settle::duration((todo.len() - n) as f64 * pace)
        );
        if tty {
            eprint!("\r\x1b[K{line}");
        } else if n % 10 == 1 || n == todo.len() {
            eprintln!("{line}");
        }
        live.add(&j);
        if live.due() || n == todo.len() {
            live.refresh(Pace { secs_per_response: Some(pace), elapsed: Some(secs) });
            if let Some(text) = live.report(n == todo.len()) {
                eprintln!("{}{text}", if tty { "\r\x1b[K" } else { "" });
            }
        }
    }
    if tty && n > 0 {
        eprintln!();
    }
    if truncated > 0 {
        eprintln!("note: {truncated} responses were longer than the judge's context and were truncated (marked in the prompt and in `truncated_chars`)");
    }
    eprintln!("graded {n} responses ({items_done} items) in {:.1} s into {}", start.elapsed().as_secs_f64(), a.io.out.display());
    if settled_early {
        let left = done.iter().filter(|d| !**d).count();
        let pace = Pace { secs_per_response: None, elapsed: Some(start.elapsed().as_secs_f64()) };
        let s = live.standing.as_ref().map(|s| s.sentence(pace)).unwrap_or_default();
        eprintln!("stopped: {s}; {left} responses left pending (the same command without --until grades them)");
        return Ok(());
    }
    // A finished run: each model's file in file order, whatever order it was graded in.
    for (model, rows) in work.iter().fold(BTreeMap::<&str, Vec<&str>>::new(), |mut m, w| {
        m.entry(w.model.as_str()).or_default().push(w.response.session_id.as_str());
        m
    }) {
        reorder_lines(&out_path(model), &rows, session_of)?;
    }
    if let Some(s) = a.shard {
        let j = &a.io.judge;
        let settings =
            format!("judge={judge_name} backend={} precision={:?} max_tokens={}", j.device.backend, j.device.precision, j.max_tokens);
        ShardRecord::new(s, &all_work, &a.io.out, &judge_name, &settings)?.write(&a.io.out)?;
        eprintln!("shard {}/{} is complete ({})", s.index, s.count, s.record_file(&a.io.out).display());
    }
    Ok(())
}

/// `grading-order.tsv` in the output folder: which response each run graded when, a line each
/// (`model<TAB>session_id`), after a `# ` line per run naming its order and seed. For people and
/// audits; resuming reads the judgments, never this.
struct OrderRecord {
    file: std::fs::File,
}

impl OrderRecord {
    const NAME: &'static str = "grading-order.tsv";

    fn open(dir: &Path, header: &str) -> Result<Self> {
        let path = dir.join(Self::NAME);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // A line cut by a kill is ended before this run's lines.
        let torn = std::fs::read(&path).map(|b| b.last().is_some_and(|&c| c != b'\n')).unwrap_or(false);
        writeln!(file, "{}# {header}", if torn { "\n" } else { "" }).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OrderRecord { file })
    }

    fn graded(&mut self, model: &str, session: &str) -> Result<()> {
        writeln!(self.file, "{model}\t{session}").context("cannot write the grading order")
    }
}

/// The session of a judgment line (for putting a finished run's lines in order).
fn session_of(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Key {
        session_id: String,
    }
    serde_json::from_slice::<Key>(line).ok().map(|k| k.session_id)
}
