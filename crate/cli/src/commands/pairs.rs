//! `rocketjudge grade --type pairwise`: every two models' responses to a query compared by the judge,
//! in both orders (seed 001), or each model against a reference system's response; with the checklist
//! always, never or where the plain comparison is inconsistent (seed 002).
//!
//! Output: `<out>/pairs.jsonl`, one [`PairJudgment`] per comparison, durable before the next starts;
//! a run with the same arguments resumes where it stopped.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use rocketjudge_core::formats::jsonl;
use rocketjudge_core::pairwise::{self, ChecklistUse, PairJudgment, PairSettings};
use rocketjudge_engine::judge::{AnyJudge, Judge};

use crate::inputs::Work;
use crate::output::OutputFolder;

/// The file a pairwise run writes in its --out folder.
pub const PAIRS_FILE: &str = "pairs.jsonl";

fn key(session: &str, a: &str, b: &str) -> String {
    format!("{session}\u{1f}{a}\u{1f}{b}")
}

/// Compare the pairs of `work` into `out/pairs.jsonl`.
pub fn run(work: &[&Work], judge: &mut AnyJudge, settings: &PairSettings, out_dir: &Path, out: &mut OutputFolder) -> Result<()> {
    let name = judge.name();
    let path = out_dir.join(PAIRS_FILE);
    let done_rows =
        OutputFolder::resume(&path, pairwise::read_pair_judgments, |p: &PairJudgment| key(&p.session_id, &p.model_a, &p.model_b))?;
    if let Some((r, m)) = done_rows.iter().find_map(|r| settings.mismatch(&r.value, &name).map(|m| (r, m))) {
        bail!("{}:{}: {m}; use another --out folder", path.display(), r.line);
    }
    let done: HashSet<String> = done_rows.iter().map(|r| key(&r.value.session_id, &r.value.model_a, &r.value.model_b)).collect();
    let ids: Vec<(&str, &str)> = work.iter().map(|w| (w.response.session_id.as_str(), w.model.as_str())).collect();
    let pairs: Vec<(&Work, &Work)> = pairwise::plan_pairs(&ids, settings.reference.as_deref())
        .map_err(|e| anyhow::anyhow!("--reference: {e} (models are the records' `generator` or the file name)"))?
        .into_iter()
        .map(|(a, b)| (work[a], work[b]))
        .collect();
    let todo: Vec<_> = pairs.iter().filter(|(a, b)| !done.contains(&key(&a.response.session_id, &a.model, &b.model))).collect();
    if todo.len() < pairs.len() {
        eprintln!("resuming: {} of {} comparisons are already in {}", pairs.len() - todo.len(), pairs.len(), path.display());
    }
    let start = std::time::Instant::now();
    let mut guided_count = 0;
    for (n, (a, b)) in todo.iter().enumerate() {
        let p = pollster::block_on(judge.compare_pair(a.query, (&a.model, a.response), (&b.model, b.response), settings))
            .with_context(|| format!("{} vs {} on `{}`", a.model, b.model, a.response.session_id))?;
        guided_count += usize::from(p.checklist);
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
