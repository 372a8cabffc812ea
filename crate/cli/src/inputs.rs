//! Reading the files the commands take: folders of judgments or scores, label files, rankings.
//! Problems (unknown ids, ungraded responses) are printed; errors stop the command.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rocketjudge_core::formats::{self, fastchat, Judgment, Lined, Problem, Score, Severity};
use rocketjudge_core::score::scores_from_judgments;

/// Input problems severe enough to stop (exit code 3).
#[derive(Debug)]
pub struct InputProblems(pub Vec<Problem>);

impl fmt::Display for InputProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: Vec<_> = self.0.iter().filter(|p| p.severity == Severity::Error).collect();
        write!(f, "{} problem(s) in the input; the first: {}", errors.len(), errors[0])
    }
}

impl std::error::Error for InputProblems {}

/// Print every problem to stderr; fail when any is an error.
pub fn report(problems: Vec<Problem>) -> Result<()> {
    for p in &problems {
        eprintln!("{p}");
    }
    if problems.iter().any(|p| p.severity == Severity::Error) {
        return Err(InputProblems(problems).into());
    }
    Ok(())
}

pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The `.jsonl` / `.json` files of a folder, sorted; a single file is returned as is.
pub fn files_in(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).with_context(|| format!("cannot read folder {}", path.display()))? {
        let p = entry?.path();
        if p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("jsonl" | "json")) {
            out.push(p);
        }
    }
    out.sort();
    if out.is_empty() {
        bail!("{} holds no .jsonl or .json files", path.display());
    }
    Ok(out)
}

/// All judgments in a folder (one file per model, RocketEval layout) or a single file.
pub fn judgments(path: &Path) -> Result<Vec<(String, Vec<Lined<Judgment>>)>> {
    let mut out = Vec::new();
    for f in files_in(path)? {
        let name = f.display().to_string();
        out.push((name.clone(), formats::rocketeval::read_judgments(&name, &read(&f)?)?));
    }
    Ok(out)
}

/// Unsupervised scores of every judgment in `path`, problems reported.
pub fn scores_of_judgments(path: &Path) -> Result<Vec<Score>> {
    let mut scores = Vec::new();
    let mut problems = Vec::new();
    for (file, js) in judgments(path)? {
        let (s, p) = scores_from_judgments(&file, &js);
        scores.extend(s);
        problems.extend(p);
    }
    report(problems)?;
    Ok(scores)
}

/// Score labels: RocketEval score files (a folder or a file, JSON array or JSONL) or a FastChat
/// `*_single.jsonl` judgment file (recognised by its `question_id` and `turn` fields).
pub fn labels(path: &Path) -> Result<Vec<Score>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for f in files_in(path)? {
        let name = f.display().to_string();
        let bytes = read(&f)?;
        if looks_like_fastchat_judgment(&bytes) {
            let (s, p) = fastchat::scores_from_single_judgments(&name, &bytes)?;
            out.extend(s);
            problems.extend(p);
        } else {
            out.extend(formats::rocketeval::read_scores(&name, &bytes)?.into_iter().map(|l| l.value));
        }
    }
    report(problems)?;
    Ok(out)
}

fn looks_like_fastchat_judgment(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace));
    first
        .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .is_some_and(|v| v.get("question_id").is_some() && v.get("turn").is_some())
}
