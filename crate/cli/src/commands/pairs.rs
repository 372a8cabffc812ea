//! `rocketjudge grade --type pairwise`: every two models' responses to a query compared by the judge,
//! in both orders (seed 001), or each model against a reference system's response; with the checklist
//! always, never or where the plain comparison is inconsistent (seed 002).
//!
//! Output: `<out>/pairs.jsonl`, one [`PairJudgment`] per comparison, durable before the next starts;
//! a run with the same arguments resumes where it stopped.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Context, Result};
use rocketjudge_core::formats::jsonl;
use rocketjudge_core::pairwise::{self, ChecklistUse, PairJudgment, PairSettings};
use rocketjudge_engine::judge::{AnyJudge, Judge};

use crate::inputs::Work;
use crate::output::{OutputFolder, PAIRS_FILE};

/// What names a comparison in a resumed run.
pub fn pair_key(session: &str, a: &str, b: &str) -> String {
    format!("{session}\u{1f}{a}\u{1f}{b}")
}

/// The comparisons of `work` (core's `plan_pairs`): every two models' responses to a query, or each
/// model's with the `reference`'s.
pub fn plan<'w, 'a>(work: &'w [&'a Work<'a>], reference: Option<&str>) -> Result<Vec<(&'w Work<'a>, &'w Work<'a>)>> {
    let ids: Vec<(&str, &str)> = work.iter().map(|w| (w.response.session_id.as_str(), w.model.as_str())).collect();
    Ok(pairwise::plan_pairs(&ids, reference)
        .map_err(|e| anyhow::anyhow!("--reference: {e} (models are the records' `generator` or the file name)"))?
        .into_iter()
        .map(|(a, b)| (work[a], work[b]))
        .collect())
}

/// The planned `pairs` not yet among the `done` keys (what a resumed run still compares).
pub fn pending<'p, 'w>(pairs: &'p [(&'w Work<'w>, &'w Work<'w>)], done: &HashSet<String>) -> Vec<&'p (&'w Work<'w>, &'w Work<'w>)> {
    pairs.iter().filter(|(a, b)| !done.contains(&pair_key(&a.response.session_id, &a.model, &b.model))).collect()
}

/// Compare the pairs of `work` into `out/pairs.jsonl`.
pub fn run(work: &[&Work], judge: &mut AnyJudge, settings: &PairSettings, out_dir: &Path, out: &mut OutputFolder) -> Result<()> {
    let name = judge.name();
    let path = out_dir.join(PAIRS_FILE);
    let done = OutputFolder::resume_same(
        &path,
        pairwise::read_pair_judgments,
        |p: &PairJudgment| pair_key(&p.session_id, &p.model_a, &p.model_b),
        |p| settings.mismatch(p, &name),
    )?;
    let pairs = plan(work, settings.reference.as_deref())?;
    let todo = pending(&pairs, &done);
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
    eprintln!(
        "compared {} pairs in {:.1} s into {}{}",
        todo.len(),
        start.elapsed().as_secs_f64(),
        path.display(),
        crate::judges::kept_note(judge.reused_tokens())
    );
    Ok(())
}
