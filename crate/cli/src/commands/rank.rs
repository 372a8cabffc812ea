//! `rocketjudge rank`: judgments (or scores) → a leaderboard with confidence intervals.

use std::path::PathBuf;

use anyhow::bail;
use rocketjudge_core::formats::csv;
use rocketjudge_core::rank::{self, EqualScores, Method, PairRule, RankOptions, Resample, ScoreTable};
use serde::Serialize;

use super::{text_table, Format};
use crate::{inputs, CliResult};

/// Rank models from their graded responses.
///
/// Reads one RocketEval judgments JSONL per model from --judgments (or score files from --scores),
/// scores each response (mean p(Yes) on 1–10), turns scores into per-query pairwise battles (a
/// difference below --tie-margin is a tie) and rates the models. JSON output is a list of
/// {model, score, lower, upper, rank}, best first; lower/upper are the bootstrap 95% interval.
#[derive(clap::Args)]
pub struct Args {
    /// Folder (or file) of RocketEval judgments JSONL, one file per model.
    #[arg(long, required_unless_present = "scores", conflicts_with = "scores")]
    judgments: Option<PathBuf>,
    /// Folder (or file) of score files instead of judgments (RocketEval `score/` layout, JSON or JSONL).
    #[arg(long)]
    scores: Option<PathBuf>,
    /// bt: Bradley–Terry (Chatbot Arena's MLE, Elo scale); mean / median score; winrate; elo: online
    /// Elo with K=4 (order-dependent).
    #[arg(long, default_value = "bt", value_parser = ["bt", "mean", "median", "winrate", "elo"])]
    method: String,
    /// Score differences below this are ties when responses are compared pairwise.
    #[arg(long, default_value_t = 0.1)]
    tie_margin: f64,
    /// Exactly equal scores: `tie` (half a win each) or `skip` (no battle).
    #[arg(long, default_value = "tie", value_parser = ["tie", "skip"])]
    equal: String,
    /// Bootstrap replicates for the intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    bootstrap: usize,
    /// What the bootstrap resamples: `sessions` (queries) or `battles` (Arena's multinomial reweighting).
    #[arg(long, default_value = "sessions", value_parser = ["sessions", "battles"])]
    resample: String,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Anchor the Elo scale: MODEL=RATING (bt and elo only).
    #[arg(long)]
    anchor: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Serialize)]
struct Row<'a> {
    model: &'a str,
    score: f64,
    lower: Option<f64>,
    upper: Option<f64>,
    rank: usize,
}

pub fn run(a: Args) -> CliResult {
    let scores = match (&a.judgments, &a.scores) {
        (Some(j), _) => inputs::scores_of_judgments(j)?,
        (None, Some(s)) => inputs::labels(s)?,
        (None, None) => unreachable!("clap requires one of --judgments and --scores"),
    };
    if !(a.tie_margin >= 0.0 && a.tie_margin.is_finite()) {
        bail!("--tie-margin must be a non-negative number");
    }
    let anchor = match &a.anchor {
        Some(s) => {
            let Some((m, r)) = s.rsplit_once('=') else { bail!("--anchor takes MODEL=RATING, not `{s}`") };
            Some((m.to_string(), r.parse::<f64>().map_err(|_| anyhow::anyhow!("--anchor rating `{r}` is not a number"))?))
        }
        None => None,
    };
    let opts = RankOptions {
        method: a.method.parse::<Method>()?,
        pairs: PairRule { tie_margin: a.tie_margin, equal: a.equal.parse::<EqualScores>()? },
        bootstrap: a.bootstrap,
        resample: a.resample.parse::<Resample>()?,
        seed: a.seed,
        anchor,
        ..Default::default()
    };
    let table = ScoreTable::new(&scores)?;
    let ranking = rank::rank(&table, &opts)?;
    for e in &ranking.entries {
        for n in &e.notes {
            eprintln!("note: {}: {n}", e.model);
        }
    }
    if ranking.order_dependent {
        eprintln!("note: online Elo depends on the order of the battles (queries in name order); use bt for an order-free rating");
    }
    let rows: Vec<Row> =
        ranking.entries.iter().map(|e| Row { model: &e.model, score: e.score, lower: e.lower, upper: e.upper, rank: e.rank }).collect();
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Csv => {
            let mut out = String::from("rank,model,score,lower,upper\n");
            for r in &rows {
                out.push_str(&format!(
                    "{},{},{},{},{}\n",
                    r.rank,
                    csv::text_cell(r.model),
                    csv::number_cell(Some(r.score)),
                    csv::number_cell(r.lower),
                    csv::number_cell(r.upper)
                ));
            }
            print!("{out}");
        }
        Format::Table => {
            let digits = if matches!(opts.method, Method::WinRate) { 3 } else { 2 };
            let f = |x: Option<f64>| x.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "–".into());
            let body: Vec<Vec<String>> = ranking
                .entries
                .iter()
                .map(|e| vec![e.model.clone(), e.rank.to_string(), f(Some(e.score)), f(e.lower), f(e.upper), e.responses.to_string()])
                .collect();
            print!("{}", text_table(&["model", "rank", &a.method, "95% lower", "95% upper", "responses"], &body));
        }
    }
    Ok(())
}
