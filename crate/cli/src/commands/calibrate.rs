//! `rocketjudge calibrate`: your labels refit the supervised scorer; the ranking before and after.

use std::path::PathBuf;

use rocketjudge_core::calibrate::{self, Calibration, LABELS};
use rocketjudge_core::formats::{self, Judgment};
use rocketjudge_core::score::scores_from_judgments;
use rocketjudge_core::score::supervised::ExtraTreesParams;

use super::rank::RankFlags;
use super::text_table;
use super::CliResult;
use crate::inputs;

/// Calibrate the judge on your own labels (RocketEval §3.3, fitted on them).
///
/// Reads judgments (one RocketEval JSONL per model) and a labels JSONL file, one label per line:
/// a score, {"session_id", "model_test", "score": 1–10}, or a preference, {"session_id", "model_a",
/// "model_b", "winner": "model_a"|"model_b"|"tie"}. Per query, preferences become each model's win
/// share mapped onto 1–10; the supervised scorer is fitted on the labelled responses' item
/// probabilities, every response is rescored, and the models are ranked before (mean p(Yes)) and after,
/// with the same settings and seed. Prints ranks, scores and 95% interval widths before and after, and
/// each labelled query's weight α (0: its labels change nothing, e.g. a single label or equal labels).
#[derive(clap::Args)]
pub struct Args {
    /// Folder (or file) of RocketEval judgments JSONL, one file per model.
    #[arg(long)]
    judgments: PathBuf,
    /// Labels JSONL (scores and/or preferences).
    #[arg(long)]
    labels: PathBuf,
    #[command(flatten)]
    rank: RankFlags,
    /// `text` (tables) or `json` (the whole calibration: before, after, changes, queries, problems).
    #[arg(long, value_enum, default_value_t = Output::Text)]
    format: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    #[value(alias = "table")]
    Text,
    Json,
}

pub fn run(a: Args) -> CliResult {
    let opts = a.rank.options()?;
    let files = inputs::judgments(&a.judgments)?;
    // The judgments' problems, with their files and lines (core reports them again by position).
    let mut problems = formats::check_judgments(inputs::records(&files));
    for (file, js) in &files {
        problems.extend(scores_from_judgments(file, js, None).1);
    }
    inputs::report(problems)?;
    let labels_name = a.labels.display().to_string();
    let lined = calibrate::read_labels(&labels_name, &inputs::read(&a.labels)?)?;
    if lined.is_empty() {
        return Err(inputs::no_records(&[&labels_name], "labels"));
    }
    let judgments: Vec<Judgment> = files.into_iter().flat_map(|(_, rows)| rows.into_iter().map(|j| j.value)).collect();
    let labels: Vec<_> = lined.iter().map(|l| l.value.clone()).collect();
    let mut c = calibrate::calibrate_with(&judgments, &labels, &opts, &ExtraTreesParams::default(), None)?;
    // Label problems name the label's position; give them the file and line instead.
    c.problems.retain(|p| p.file == LABELS);
    for p in c.problems.iter_mut() {
        p.line = lined[p.line - 1].line;
        p.file = labels_name.clone();
    }
    for p in &c.problems {
        eprintln!("{p}");
    }
    for (when, r) in [("before", &c.before), ("after", &c.after)] {
        for e in &r.entries {
            for n in &e.notes {
                eprintln!("note: {when}: {}: {n}", e.model);
            }
        }
    }
    eprintln!("{} of {} labels used on {} queries", c.labels_used, labels.len(), c.queries.iter().filter(|q| q.trained).count());
    match a.format {
        Output::Json => println!("{}", serde_json::to_string_pretty(&c)?),
        Output::Text => print!("{}", text(&c)),
    }
    Ok(())
}

fn text(c: &Calibration) -> String {
    let f = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into());
    let rows: Vec<Vec<String>> = c
        .changes
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.rank_before.to_string(),
                r.rank_after.to_string(),
                f(Some(r.score_before)),
                f(Some(r.score_after)),
                f(r.ci_width_before),
                f(r.ci_width_after),
            ]
        })
        .collect();
    let method = c.after.method.as_str();
    let mut out = text_table(
        &[
            "model",
            "rank before",
            "rank after",
            &format!("{method} before"),
            &format!("{method} after"),
            "95% CI width before",
            "95% CI width after",
        ],
        &rows,
    );
    out.push('\n');
    let rows: Vec<Vec<String>> = c
        .queries
        .iter()
        .map(|q| {
            vec![
                q.session_id.clone(),
                q.labels.to_string(),
                q.from.to_string(),
                q.targets.len().to_string(),
                format!("{:.3}", q.alpha),
                q.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&text_table(&["query", "labels", "from", "responses", "alpha", "note"], &rows));
    out
}
