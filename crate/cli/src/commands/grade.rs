//! `rocketjudge grade`: a judge model grades every response against its query's checklist.
//!
//! Output: one RocketEval judgments JSONL per responding model in --out, a line per response,
//! durable before the next starts; a run with the same arguments resumes, and one run at a time
//! writes a folder (see `crate::output`). The --trace file is written before each judgment line; on
//! resume it loses its torn tail and the lines of the responses about to be graded again (rewritten
//! atomically), so it too ends as an uninterrupted run's.

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{ErrorKind, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::{self, jsonl, Judgment};
use rocketjudge_core::prompt::{PairwiseScale, PromptStyle, GRADING_PROMPT_VERSION};
use serde_json::json;

use rocketjudge_engine::judge::Judge;

use super::pairs;
use super::score::safe_file_name;
use crate::knobs::{ChecklistFlags, DecodingFlags};
use crate::output::{replace_atomically, OutputFolder};
use crate::shard::{Shard, ShardRecord};
use crate::{inputs, judges, CliResult};
use rocketjudge_core::decoding::Decoding;
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

/// The sessions already judged in `path` (resume; see `OutputFolder::resume`), all by `judge` with
/// the prompt wording `style` and the decoding `decoding`.
fn resume_file(path: &Path, judge: &str, style: PromptStyle, decoding: Option<Decoding>) -> Result<HashSet<String>> {
    let rows = OutputFolder::resume(path, formats::rocketeval::read_judgments, |j: &Judgment| j.session_id.clone())?;
    let mut done = HashSet::new();
    for r in rows {
        if r.value.judge != judge {
            bail!(
                "{}:{}: judged by `{}`, but this run's judge is `{judge}`; use another --out folder",
                path.display(),
                r.line,
                r.value.judge
            );
        }
        let version = r.value.prompt_version.as_deref().unwrap_or(GRADING_PROMPT_VERSION);
        if version != style.version() {
            bail!(
                "{}:{}: graded with the prompt `{version}`, but this run's is `{}`; use another --out folder",
                path.display(),
                r.line,
                style.version()
            );
        }
        if r.value.decoding != decoding {
            bail!(
                "{}:{}: decoded as `{}`, but this run's decoding is `{}`; use another --out folder",
                path.display(),
                r.line,
                r.value.decoding.unwrap_or_default().label(),
                decoding.unwrap_or_default().label()
            );
        }
        done.insert(r.value.session_id);
    }
    Ok(done)
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
    }
    // Plain comparisons need no checklist: queries without one are fine then (as for `direct`).
    let allow = a.allow_problems || (pairwise && checklist == ChecklistUse::Never);
    let inputs = inputs::GradingInputs::read(&a.io.queries, a.io.checklists.as_deref(), &a.io.responses, allow)?;
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
    let (mut judge, _) = judges::load(&a.io.model, &a.io.judge)?;
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
            None => a.io.out.join(format!("{}.jsonl", safe_file_name(model))),
        }
    };
    let mut done: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for w in &work {
        if !done.contains_key(&w.model) {
            done.insert(w.model.clone(), resume_file(&out_path(&w.model), &judge_name, a.prompt, decoding)?);
        }
    }
    let todo: Vec<&inputs::Work> = work.iter().copied().filter(|w| !done[&w.model].contains(&w.response.session_id)).collect();
    let already = work.len() - todo.len();
    if already > 0 {
        eprintln!("resuming: {already} of {} responses are already graded in {}", work.len(), a.io.out.display());
    }
    let mut trace = match &a.trace {
        Some(p) => {
            resume_trace(p, &todo.iter().map(|w| (w.model.as_str(), w.response.session_id.as_str())).collect())?;
            Some(OpenOptions::new().create(true).append(true).open(p).with_context(|| format!("cannot open {}", p.display()))?)
        }
        None => None,
    };
    let tokens = judge.answer_tokens();
    let start = Instant::now();
    let (mut items_done, mut truncated) = (0usize, 0usize);
    let tty = std::io::stderr().is_terminal();
    for (n, w) in todo.iter().enumerate() {
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
            a.prompt,
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
        items_done += grades.len();
        let secs = start.elapsed().as_secs_f64();
        let rate = items_done as f64 / secs;
        let left = (todo.len() - n - 1) as f64 * secs / (n + 1) as f64;
        let line = format!(
            "[{}/{}] {} {}: {:.2} items/s, {:.1} s per response, ETA {}",
            n + 1 + already,
            work.len(),
            w.model,
            w.response.session_id,
            rate,
            secs / (n + 1) as f64,
            eta(left)
        );
        if tty {
            eprint!("\r\x1b[K{line}");
        } else if n % 10 == 0 || n + 1 == todo.len() {
            eprintln!("{line}");
        }
    }
    if tty && !todo.is_empty() {
        eprintln!();
    }
    if truncated > 0 {
        eprintln!("note: {truncated} responses were longer than the judge's context and were truncated (marked in the prompt and in `truncated_chars`)");
    }
    eprintln!("graded {} responses ({items_done} items) in {:.1} s into {}", todo.len(), start.elapsed().as_secs_f64(), a.io.out.display());
    if let Some(s) = a.shard {
        let j = &a.io.judge;
        let settings = format!("judge={judge_name} backend={} precision={:?} max_tokens={}", j.backend, j.precision, j.max_tokens);
        ShardRecord::new(s, &all_work, &a.io.out, &judge_name, &settings)?.write(&a.io.out)?;
        eprintln!("shard {}/{} is complete ({})", s.index, s.count, s.record_file(&a.io.out).display());
    }
    Ok(())
}

fn eta(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
