//! `rocketjudge replay`: a complete run's judgments replayed in each grading order, grading nothing.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats;
use rocketjudge_core::rank::{RankOptions, RankSettings};
use rocketjudge_core::replay::{replay, Replay, ReplayOptions};
use rocketjudge_core::schedule::{Job, Order};
use rocketjudge_core::settle::{SettleRule, DEFAULT_LEVEL, DEFAULT_MIN_QUERIES};
use rocketjudge_core::stats;
use serde::Serialize;

use super::CliResult;
use super::{text_table, write_atomic, Format};
use crate::inputs;

/// Replay a complete run in each grading order, without grading: how soon each order ranks right.
///
/// Reveals the run's scores one response at a time in each order (`model`, `interleaved`,
/// `adaptive`; the last two with seeds 0..--seeds) and at every checkpoint compares the partial
/// standing with the complete run: Spearman's ρ with the complete ranking (Bradley–Terry; models not
/// yet rated share the last place), the share of adjacent pairs separated, whether the run counts as
/// settled (`grade --until settled`'s rule), and the separated pairs the complete run reverses.
/// Prints per order the responses each needs (median and range over seeds); --csv writes every
/// checkpoint, for plots (`scripts/replay/plot.py`).
#[derive(clap::Args)]
pub struct Args {
    /// A complete run's judgments (one RocketEval judgments file per model, as `grade` writes them).
    #[arg(long, required_unless_present = "scores", conflicts_with = "scores")]
    judgments: Option<PathBuf>,
    /// Scores instead (RocketEval score files, or FastChat `*_single.jsonl`: a strong judge's run).
    #[arg(long)]
    scores: Option<PathBuf>,
    /// The run's queries (RocketEval JSONL): their categories stratify the interleaved order.
    #[arg(long)]
    queries: Option<PathBuf>,
    /// The orders to replay, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "model,interleaved,adaptive", value_parser = PossibleValuesParser::new(Order::NAMES).try_map(|s| s.parse::<Order>()))]
    orders: Vec<Order>,
    /// Seeds 0..N of the interleaved and adaptive orders (the model order has none).
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Responses between checkpoints (default: one query's worth, the number of models).
    #[arg(long)]
    every: Option<usize>,
    /// The settling level: the share of bootstrap replicates that must order a pair one way.
    #[arg(long, default_value_t = DEFAULT_LEVEL)]
    level: f64,
    /// The fewest queries two models must share before their order counts as separated.
    #[arg(long, default_value_t = DEFAULT_MIN_QUERIES)]
    min_queries: usize,
    /// Bootstrap replicates of each checkpoint's standing (`grade`'s live leaderboard uses 1000).
    #[arg(long, default_value_t = RankSettings::default().bootstrap)]
    bootstrap: usize,
    /// Write every checkpoint as CSV: order, seed, graded, share of the run, spearman, separated
    /// share, settled, false separations.
    #[arg(long)]
    csv: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// One order's replays, summarised over its seeds.
#[derive(Serialize)]
struct Summary {
    order: Order,
    seeds: usize,
    responses: usize,
    /// Responses after which ρ ≥ 0.9 holds to the end: per seed (None: never before the end).
    to_spearman_09: Vec<Option<usize>>,
    /// Responses at which the run first counts as settled, per seed.
    to_settled: Vec<Option<usize>>,
    /// Adjacent pairs the complete run separates, of `pairs`.
    separated_at_end: usize,
    pairs: usize,
    /// Responses from which as many pairs are separated as in the complete run, per seed.
    to_final_separation: Vec<Option<usize>>,
    /// ρ with the complete ranking when a quarter of the run is graded, per seed.
    spearman_at_quarter: Vec<f64>,
    /// ρ with the complete ranking where it settled, per seed.
    spearman_at_settled: Vec<Option<f64>>,
    /// Separation declarations (pairs × checkpoints) and how many the complete run reverses.
    separations: usize,
    false_separations: usize,
    /// The same, counting only the pairs separated where the run settled before its end (where
    /// `--until settled` stops it).
    separated_at_stop: usize,
    false_at_stop: usize,
}

impl Summary {
    fn of(order: Order, runs: &[Replay]) -> Summary {
        let stop = |r: &Replay| r.settled_at().cloned();
        // Where `--until settled` ends a run early (a run settled only at its end stops nothing).
        let early = |r: &Replay| r.settled_at().filter(|c| c.graded < r.total).cloned();
        Summary {
            order,
            seeds: runs.len(),
            responses: runs[0].total,
            to_spearman_09: runs.iter().map(|r| r.responses_to_spearman(0.9)).collect(),
            to_settled: runs.iter().map(|r| stop(r).map(|c| c.graded)).collect(),
            separated_at_end: runs[0].checkpoints.last().map_or(0, |c| c.separated),
            pairs: runs[0].checkpoints.last().map_or(0, |c| c.pairs),
            to_final_separation: runs.iter().map(|r| r.responses_to_final_separation()).collect(),
            spearman_at_quarter: runs.iter().map(|r| r.spearman_at(0.25)).collect(),
            spearman_at_settled: runs.iter().map(|r| stop(r).map(|c| c.spearman)).collect(),
            separations: runs.iter().flat_map(|r| &r.checkpoints).map(|c| c.separated).sum(),
            false_separations: runs.iter().flat_map(|r| &r.checkpoints).map(|c| c.false_separations).sum(),
            separated_at_stop: runs.iter().filter_map(early).map(|c| c.separated).sum(),
            false_at_stop: runs.iter().filter_map(early).map(|c| c.false_separations).sum(),
        }
    }
}

/// "n (p%)" as the median over seeds, with the range when seeds differ; "never" for seeds that
/// did not get there.
fn responses_cell(xs: &[Option<usize>], total: usize) -> String {
    let got: Vec<f64> = xs.iter().flatten().map(|&x| x as f64).collect();
    if got.is_empty() {
        return "never".into();
    }
    let pct = |x: f64| format!("{x:.0} ({:.0}%)", 100.0 * x / total as f64);
    let mut s = pct(stats::median(&got));
    let (lo, hi) = (got.iter().copied().fold(f64::INFINITY, f64::min), got.iter().copied().fold(0.0, f64::max));
    if lo < hi {
        write!(s, " [{lo:.0}–{hi:.0}]").unwrap();
    }
    if got.len() < xs.len() {
        write!(s, ", never in {} of {}", xs.len() - got.len(), xs.len()).unwrap();
    }
    s
}

fn rate(part: usize, of: usize) -> String {
    if of == 0 {
        "–".into()
    } else {
        format!("{:.1}% ({part}/{of})", 100.0 * part as f64 / of as f64)
    }
}

pub fn run(a: Args) -> CliResult {
    let rule = SettleRule { level: a.level, min_queries: a.min_queries }.checked()?;
    if a.bootstrap == 0 {
        bail!("--bootstrap must be at least 1: the standings tell separated pairs by their bootstrap replicates");
    }
    let scores = match (&a.judgments, &a.scores) {
        (Some(j), _) => inputs::scores_of_judgments(j, None)?.into_scores(),
        (_, Some(s)) => inputs::labels(s)?.into_scores(),
        (None, None) => unreachable!("clap requires one of --judgments and --scores"),
    };
    let categories: HashMap<String, Option<String>> = match &a.queries {
        Some(q) => {
            let name = q.display().to_string();
            formats::rocketeval::read_queries_from(&name, inputs::open(q)?)?
                .into_iter()
                .map(|r| (r.value.session_id, r.value.category))
                .collect()
        }
        None => HashMap::new(),
    };
    // Model by model in the order the files list them, each model's responses in file order.
    let mut models: Vec<&str> = Vec::new();
    for s in &scores {
        if !models.contains(&s.model_test.as_str()) {
            models.push(&s.model_test);
        }
    }
    let mut rows: Vec<_> = scores.iter().collect();
    rows.sort_by_key(|s| models.iter().position(|m| *m == s.model_test).unwrap_or(usize::MAX));
    let jobs: Vec<Job> = rows
        .iter()
        .map(|s| Job {
            model: s.model_test.clone(),
            session_id: s.session_id.clone(),
            category: categories.get(&s.session_id).cloned().flatten(),
        })
        .collect();
    if let Some(q) = &a.queries {
        if let Some(j) = jobs.iter().find(|j| !categories.contains_key(&j.session_id)) {
            bail!("{}: no query `{}` (scored for {}); give the queries the run graded", q.display(), j.session_id, j.model);
        }
    }
    let values: Vec<f64> = rows.iter().map(|s| s.score).collect();
    let o =
        ReplayOptions { every: a.every.unwrap_or(models.len()), rule, rank: RankOptions { bootstrap: a.bootstrap, ..Default::default() } };
    eprintln!("replaying {} responses of {} models on {} queries", jobs.len(), models.len(), jobs.len().div_ceil(models.len().max(1)));
    let mut summaries = Vec::new();
    let mut csv = String::from("order,seed,graded,share,spearman,separated_share,settled,false_separations\n");
    for &order in &a.orders {
        let seeds: Vec<u64> = if order == Order::Model { vec![0] } else { (0..a.seeds.max(1)).collect() };
        let mut runs = Vec::new();
        for seed in seeds {
            let r = replay(&jobs, &values, order, seed, &o).with_context(|| format!("replaying the {order} order (seed {seed})"))?;
            for c in &r.checkpoints {
                writeln!(
                    csv,
                    "{order},{seed},{},{:.4},{},{:.4},{},{}",
                    c.graded,
                    c.graded as f64 / r.total as f64,
                    if c.spearman.is_finite() { format!("{:.4}", c.spearman) } else { String::new() },
                    c.separated as f64 / c.pairs.max(1) as f64,
                    c.settled,
                    c.false_separations
                )?;
            }
            runs.push(r);
        }
        eprintln!("{order}: done");
        summaries.push(Summary::of(order, &runs));
    }
    if let Some(p) = &a.csv {
        write_atomic(p, &csv)?;
        eprintln!("wrote every checkpoint to {}", p.display());
    }
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&summaries)?),
        Format::Csv => print!("{csv}"),
        Format::Table => {
            let body: Vec<Vec<String>> = summaries
                .iter()
                .map(|s| {
                    let rho: Vec<f64> = s.spearman_at_settled.iter().flatten().copied().collect();
                    let quarter: Vec<f64> = s.spearman_at_quarter.iter().copied().filter(|x| x.is_finite()).collect();
                    vec![
                        s.order.to_string(),
                        s.seeds.to_string(),
                        if quarter.is_empty() { "–".into() } else { format!("{:.2}", stats::median(&quarter)) },
                        responses_cell(&s.to_spearman_09, s.responses),
                        if s.separated_at_end == 0 {
                            format!("– (0 of {} at the end)", s.pairs)
                        } else {
                            format!("{} ({} of {})", responses_cell(&s.to_final_separation, s.responses), s.separated_at_end, s.pairs)
                        },
                        responses_cell(&s.to_settled, s.responses),
                        if rho.is_empty() { "–".into() } else { format!("{:.2}", stats::median(&rho)) },
                        rate(s.false_separations, s.separations),
                        rate(s.false_at_stop, s.separated_at_stop),
                    ]
                })
                .collect();
            print!(
                "{}",
                text_table(
                    &[
                        "order",
                        "seeds",
                        "ρ at 25%",
                        "responses to ρ ≥ 0.9 (kept)",
                        "to final separation",
                        "responses to settled",
                        "ρ when settled",
                        "false separations",
                        "false at stop"
                    ],
                    &body
                )
            );
            println!(
                "{} responses in all; medians over seeds [range]; settled: every adjacent pair ordered alike in ≥ {:.0}% of {} bootstrap replicates on ≥ {} shared queries",
                summaries.first().map_or(0, |s| s.responses),
                rule.level * 100.0,
                a.bootstrap,
                rule.min_queries
            );
        }
    }
    Ok(())
}
