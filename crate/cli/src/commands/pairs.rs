//! `rocketjudge grade --type pairwise`: every two models' responses to a query compared by the judge,
//! in both orders (seed 001), or each model against a reference system's response; with the checklist
//! always, never or where the plain comparison is inconsistent (seed 002).
//!
//! Output: `<out>/pairs.jsonl`, one [`PairJudgment`] per comparison, durable before the next starts;
//! a run with the same arguments resumes where it stopped.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::formats::jsonl;
use rocketjudge_core::pairwise::{self, ChecklistUse, PairJudgment};
use rocketjudge_core::prompt::{PAIRWISE_CHECKLIST_PROMPT_VERSION, PAIRWISE_PROMPT_VERSION};
use rocketjudge_engine::judge::{AnyJudge, Judge};

use crate::inputs::Work;
use crate::output::OutputFolder;

/// The file a pairwise run writes in its --out folder.
pub const PAIRS_FILE: &str = "pairs.jsonl";

/// How a pairwise run compares.
pub struct PairSettings {
    pub checklist: ChecklistUse,
    /// The threshold of selective use.
    pub k: Option<f64>,
    pub reference: Option<String>,
    pub decoding: Option<Decoding>,
}

/// The pairs to compare: per query, every two models (by name) or each model with the reference.
fn plan<'w>(work: &'w [&'w Work<'w>], reference: Option<&str>) -> Result<Vec<(&'w Work<'w>, &'w Work<'w>)>> {
    let mut by_session: BTreeMap<&str, Vec<&Work>> = BTreeMap::new();
    for w in work {
        by_session.entry(w.response.session_id.as_str()).or_default().push(w);
    }
    if let Some(r) = reference {
        if !work.iter().any(|w| w.model == r) {
            bail!("--reference `{r}` has no responses among the inputs (models are the records' `generator` or the file name)");
        }
    }
    let mut out = Vec::new();
    for (_, mut ws) in by_session {
        ws.sort_by(|a, b| a.model.cmp(&b.model));
        match reference {
            Some(r) => {
                let Some(refw) = ws.iter().find(|w| w.model == r).copied() else { continue };
                out.extend(ws.iter().filter(|w| w.model != r).map(|w| (*w, refw)));
            }
            None => {
                for i in 0..ws.len() {
                    for j in i + 1..ws.len() {
                        out.push((ws[i], ws[j]));
                    }
                }
            }
        }
    }
    Ok(out)
}

fn key(session: &str, a: &str, b: &str) -> String {
    format!("{session}\u{1f}{a}\u{1f}{b}")
}

/// Compare the pairs of `work` into `out/pairs.jsonl`.
pub fn run(work: &[&Work], judge: &mut AnyJudge, settings: &PairSettings, out_dir: &Path, out: &mut OutputFolder) -> Result<()> {
    let name = judge.name();
    let path = out_dir.join(PAIRS_FILE);
    let done_rows =
        OutputFolder::resume(&path, pairwise::read_pair_judgments, |p: &PairJudgment| key(&p.session_id, &p.model_a, &p.model_b))?;
    for r in &done_rows {
        let p = &r.value;
        let mismatch = if p.judge != name {
            Some(format!("compared by `{}`, but this run's judge is `{name}`", p.judge))
        } else if p.checklist_use != Some(settings.checklist) {
            Some(format!(
                "made with --checklist {}, but this run's is {}",
                p.checklist_use.map_or("(unknown)", |c| c.as_str()),
                settings.checklist
            ))
        } else if p.reference != settings.reference {
            Some(format!("made with --reference {:?}, but this run's is {:?}", p.reference, settings.reference))
        } else if p.decoding != settings.decoding {
            Some("made with another --decoding than this run's".to_string())
        } else {
            None
        };
        if let Some(m) = mismatch {
            bail!("{}:{}: {m}; use another --out folder", path.display(), r.line);
        }
    }
    let done: HashSet<String> = done_rows.iter().map(|r| key(&r.value.session_id, &r.value.model_a, &r.value.model_b)).collect();
    let pairs = plan(work, settings.reference.as_deref())?;
    let todo: Vec<_> = pairs.iter().filter(|(a, b)| !done.contains(&key(&a.response.session_id, &a.model, &b.model))).collect();
    if todo.len() < pairs.len() {
        eprintln!("resuming: {} of {} comparisons are already in {}", pairs.len() - todo.len(), pairs.len(), path.display());
    }
    let start = std::time::Instant::now();
    let mut guided_count = 0;
    for (n, (a, b)) in todo.iter().enumerate() {
        let ctx = || format!("{} vs {} on `{}`", a.model, b.model, a.response.session_id);
        let both = |judge: &mut AnyJudge, checklist: bool| -> Result<(f64, f64, usize)> {
            let ab = pollster::block_on(judge.compare(a.query, a.response, b.response, checklist)).with_context(ctx)?;
            let ba = pollster::block_on(judge.compare(a.query, b.response, a.response, checklist)).with_context(ctx)?;
            Ok((ab.p_a, 1.0 - ba.p_a, ab.truncated_chars.max(ba.truncated_chars)))
        };
        let (mut first, mut second, mut cut, mut inconsistency) = (0.0, 0.0, 0, None);
        let guided = match settings.checklist {
            ChecklistUse::Always => true,
            ChecklistUse::Never => false,
            ChecklistUse::Selective => {
                (first, second, cut) = both(judge, false)?;
                let x = pairwise::inconsistency(first, second);
                inconsistency = Some(x);
                x >= settings.k.expect("selective use has a threshold")
            }
        };
        if guided && a.query.checklist.is_empty() {
            bail!("{}: the query has no checklist to guide the comparison (use --checklist never)", ctx());
        }
        if guided || settings.checklist != ChecklistUse::Selective {
            (first, second, cut) = both(judge, guided)?;
        }
        guided_count += usize::from(guided);
        let p = PairJudgment {
            session_id: a.response.session_id.clone(),
            model_a: a.model.clone(),
            model_b: b.model.clone(),
            judge: name.clone(),
            p_a_first: first,
            p_a_second: second,
            checklist: guided,
            checklist_use: Some(settings.checklist),
            inconsistency,
            reference: settings.reference.clone(),
            decoding: settings.decoding,
            prompt_version: Some(if guided { PAIRWISE_CHECKLIST_PROMPT_VERSION } else { PAIRWISE_PROMPT_VERSION }.to_string()),
            truncated_chars: (cut > 0).then_some(cut),
        };
        out.append(&path, &jsonl::to_jsonl_line(&p))?;
        if n % 10 == 0 || n + 1 == todo.len() {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "[{}/{}] {} vs {} on {}: {:.1} s per comparison (both orders)",
                n + 1 + pairs.len() - todo.len(),
                pairs.len(),
                a.model,
                b.model,
                a.response.session_id,
                secs / (n + 1) as f64
            );
        }
    }
    if settings.checklist == ChecklistUse::Selective {
        eprintln!("the checklist guided {guided_count} of {} comparisons (inconsistency ≥ {})", todo.len(), settings.k.unwrap_or_default());
    }
    eprintln!("compared {} pairs in {:.1} s into {}", todo.len(), start.elapsed().as_secs_f64(), path.display());
    Ok(())
}
