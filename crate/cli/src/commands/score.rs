//! `rocketjudge score`: judgments → one score per response, unsupervised or supervised.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use anyhow::bail;
use rocketjudge_core::formats::{self, JudgmentNames, JudgmentRow, Names, Problem};
use rocketjudge_core::score::judgment_score;
use rocketjudge_core::score::supervised::{ExtraTreesParams, SupervisedScorer, TrainingExample};
use serde::Serialize;

use super::CliResult;
use super::{write_atomic, write_atomic_with};
use crate::inputs;

/// Score graded responses (RocketEval §3.3).
///
/// Unsupervised (default): the mean of a response's item probabilities on 1–10 (mean·9+1).
/// Supervised (--labels with --train-models): per query, Extremely Randomized Trees fitted on the
/// training models' item probabilities against their labels, blended with the mean by the KL weight
/// α; the other models are scored. Writes `<out>/<model>.json` (RocketEval's score layout: a JSON array
/// of {session_id, model_test, score, judge, unsupervised, alpha}).
#[derive(clap::Args)]
pub struct Args {
    /// Folder (or file) of RocketEval judgments JSONL.
    #[arg(long)]
    judgments: PathBuf,
    /// Labels of the training models: RocketEval score files (folder or file) or a FastChat
    /// `gpt-4_single.jsonl`.
    #[arg(long, requires = "train_models")]
    labels: Option<PathBuf>,
    /// Comma-separated training models (their responses train the predictor and are not scored).
    #[arg(long, value_delimiter = ',', requires = "labels")]
    train_models: Vec<String>,
    /// Trees per query (RocketEval: 10).
    #[arg(long, default_value_t = ExtraTreesParams::default().n_estimators)]
    trees: usize,
    /// Maximum tree depth (RocketEval: 2).
    #[arg(long, default_value_t = ExtraTreesParams::default().max_depth.expect("RocketEval's trees have a depth"))]
    max_depth: usize,
    /// Number of label classes for α (10 for a 1–10 scale).
    #[arg(long, default_value_t = 10)]
    classes: usize,
    #[arg(long, default_value_t = ExtraTreesParams::default().seed)]
    seed: u64,
    /// The weight of the trees' prediction for every query instead of Eq. 3's α (0–1; seed 000's
    /// ablation "w/o weight factor" is 1: the prediction alone).
    #[arg(long, requires = "labels")]
    alpha: Option<f64>,
    /// Also write each trained query's item importances (seed 000's Fig. 8 reweighting: the trees'
    /// mean decrease in squared error per checklist item, summing to 1) to this JSON file:
    /// [{session_id, alpha, importance: [...]}].
    #[arg(long, requires = "labels")]
    importance: Option<PathBuf>,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
}

/// One trained query's item importances, in session order.
#[derive(Serialize)]
struct Importance<'a> {
    session_id: &'a str,
    alpha: f64,
    importance: &'a [f64],
}

fn importances<'a>(s: &'a SupervisedScorer, examples: &'a [TrainingExample]) -> Vec<Importance<'a>> {
    let sessions: std::collections::BTreeSet<&str> = examples.iter().map(|e| e.session_id.as_str()).collect();
    sessions
        .into_iter()
        .filter_map(|sid| Some(Importance { session_id: sid, alpha: s.alpha(sid)?, importance: s.importances(sid)? }))
        .collect()
}

#[derive(Serialize)]
struct Row<'a> {
    session_id: &'a str,
    model_test: &'a str,
    score: f64,
    judge: &'a str,
    unsupervised: f64,
    alpha: f64,
}

/// What `score` keeps of each judgment, read a line at a time: numbers for its names ([`Read`]'s),
/// its place in [`Read::probs`], and its unsupervised score (of the judgments it scores).
struct Kept {
    key: JudgmentRow,
    judge: u32,
    probs: std::ops::Range<usize>,
    train: bool,
    unsupervised: Option<f64>,
}

/// The judgments of a folder as `score` keeps them: each name stored once, the item probabilities in
/// one list, the problems of the judgments it scores.
#[derive(Default)]
struct Read {
    files: Names,
    sessions: Names,
    models: Names,
    judges: Names,
    probs: Vec<Option<f64>>,
    kept: Vec<Kept>,
    problems: Vec<Problem>,
}

impl Read {
    fn judgments(path: &std::path::Path, train: &HashSet<&str>) -> anyhow::Result<Self> {
        let mut read = Read::default();
        for f in inputs::files_in(path)? {
            let name = inputs::pointwise_file(&f)?;
            let file = read.files.number(&name);
            inputs::each_judgment_in(&name, &f, |j| {
                let is_train = train.contains(j.value.model_test.as_str());
                let unsupervised = if is_train {
                    None
                } else {
                    let (s, p) = judgment_score(&name, &j, None);
                    read.problems.extend(p);
                    s.map(|s| s.score)
                };
                let v = j.value;
                let start = read.probs.len();
                read.probs.extend_from_slice(&v.norm_probability);
                read.kept.push(Kept {
                    key: JudgmentRow {
                        file,
                        line: j.line as u32,
                        session: read.sessions.number(&v.session_id),
                        model: read.models.number(&v.model_test),
                        items: v.norm_probability.len() as u32,
                    },
                    judge: read.judges.number(&v.judge),
                    probs: start..read.probs.len(),
                    train: is_train,
                    unsupervised,
                });
            })?;
        }
        if read.kept.is_empty() {
            return Err(inputs::no_records(&read.files.iter().collect::<Vec<_>>(), "judgments"));
        }
        Ok(read)
    }
}

pub fn run(a: Args) -> CliResult {
    let train: HashSet<&str> = a.train_models.iter().map(String::as_str).collect();
    let mut read = Read::judgments(&a.judgments, &train)?;
    let scored_problems = std::mem::take(&mut read.problems);
    if let Some(missing) = train.iter().find(|m| !read.models.iter().any(|k| k == **m)) {
        bail!("training model `{missing}` has no judgments in {}", a.judgments.display());
    }
    // Training judgments first: where a session's checklist lengths tie, the one the predictor is
    // trained on is the session's, and the scored judgments that differ are the errors.
    let training = read.kept.iter().filter(|k| k.train);
    let scored = read.kept.iter().filter(|k| !k.train);
    let keys: Vec<JudgmentRow> = training.clone().chain(scored.clone()).map(|k| k.key).collect();
    let names = JudgmentNames { files: &read.files, sessions: &read.sessions, models: &read.models };
    let mut problems = formats::check_judgment_rows(&keys, &names);
    drop(keys);
    problems.extend(scored_problems);
    inputs::report(problems)?;
    let (session, model, probs) =
        (|k: &Kept| read.sessions.name(k.key.session), |k: &Kept| read.models.name(k.key.model), |k: &Kept| &read.probs[k.probs.clone()]);
    let scorer = match &a.labels {
        Some(path) => {
            let labels: HashMap<(String, String), f64> =
                inputs::labels(path)?.into_scores().into_iter().map(|s| ((s.model_test, s.session_id), s.score)).collect();
            let mut examples = Vec::new();
            let mut unlabelled = 0;
            for k in training {
                match labels.get(&(model(k).to_string(), session(k).to_string())) {
                    Some(&label) => examples.push(TrainingExample { session_id: session(k).to_string(), probs: probs(k).to_vec(), label }),
                    None => unlabelled += 1,
                }
            }
            if examples.is_empty() {
                bail!("no judgment of the training models has a label (check model names and session ids)");
            }
            if unlabelled > 0 {
                eprintln!("warning: {unlabelled} training judgments have no label and were not used");
            }
            let params = ExtraTreesParams { n_estimators: a.trees, max_depth: Some(a.max_depth), seed: a.seed, ..Default::default() };
            let mut s = SupervisedScorer::fit(&examples, &params, a.classes)?;
            if let Some(alpha) = a.alpha {
                s = s.with_alpha(alpha).map_err(|e| anyhow::anyhow!("--alpha: {e}"))?;
            }
            eprintln!("trained predictors for {} queries on {} labelled responses", s.trained_queries(), examples.len());
            if let Some(path) = &a.importance {
                write_atomic(path, &serde_json::to_string_pretty(&importances(&s, &examples))?)?;
                eprintln!("wrote item importances to {}", path.display());
            }
            Some(s)
        }
        None => None,
    };
    let mut per_model: BTreeMap<&str, Vec<Row>> = BTreeMap::new();
    let mut untrained = 0;
    for k in scored {
        // The checks above leave every scored judgment with a graded item and its session's checklist
        // length, so scoring cannot fail on the input.
        let Some(unsupervised) = k.unsupervised else { continue };
        let (score, alpha) = match &scorer {
            Some(s) => {
                let r = s.score(session(k), probs(k))?;
                untrained += usize::from(!r.trained);
                (r.score, r.alpha)
            }
            None => (unsupervised, 0.0),
        };
        per_model.entry(model(k)).or_default().push(Row {
            session_id: session(k),
            model_test: model(k),
            score,
            judge: read.judges.name(k.judge),
            unsupervised,
            alpha,
        });
    }
    if untrained > 0 {
        eprintln!("note: {untrained} responses are to queries without training data; they keep their unsupervised score (α = 0)");
    }
    for (model, rows) in &per_model {
        let path = crate::output::model_path(&a.out, model, "json");
        write_atomic_with(&path, |f| serde_json::to_writer_pretty(f, rows).map_err(std::io::Error::from))?;
    }
    eprintln!("wrote scores of {} models to {}", per_model.len(), a.out.display());
    Ok(())
}
