//! `rocketjudge rank`: judgments (or scores) → a leaderboard with confidence intervals.

use std::path::PathBuf;

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::pairwise;
use rocketjudge_core::rank::{self, EqualScores, Method, PairOrders, RankOptions, RankSettings, Resample};
use rocketjudge_core::report;
use serde::Serialize;

use super::CliResult;
use super::{text_table, Format};
use crate::inputs;
use crate::knobs::DecodingFlags;
use rocketjudge_core::settle::{Pace, SettleRule, Standing};

/// Rank models from their graded responses.
///
/// Reads one RocketEval judgments JSONL per model from --judgments (or score files from --scores),
/// scores each response (mean p(Yes) on 1–10), turns scores into per-query pairwise battles (a
/// difference below --tie-margin is a tie) and rates the models. A --judgments folder of pairwise
/// judgments (`grade --type pairwise`) feeds every method too: battles from both presentation orders
/// (--pair-orders), and for mean/median each model's win share per query on 1–10. JSON output is a list
/// of {model, score, lower, upper, rank}, best first; lower/upper are the bootstrap 95% interval.
#[derive(clap::Args)]
pub struct Args {
    /// Folder (or file) of RocketEval judgments JSONL, one file per model.
    #[arg(long, required_unless_present_any = ["scores", "battles"], conflicts_with_all = ["scores", "battles"])]
    judgments: Option<PathBuf>,
    /// Folder (or file) of score files instead of judgments (RocketEval `score/` layout, JSON or JSONL).
    #[arg(long, conflicts_with = "battles")]
    scores: Option<PathBuf>,
    /// Pairwise verdicts as given, e.g. human judgments (Arena battles {model_a, model_b, winner,
    /// question_id?}, JSON or JSONL): seed 001's setting 3 ranks systems by Bradley–Terry over them.
    /// A pairwise method only; the bootstrap resamples question ids (a battle without one alone).
    #[arg(long)]
    battles: Option<PathBuf>,
    #[command(flatten)]
    rank: RankFlags,
    /// Decode the judgments' probabilities this way instead of as they record (e.g. repeats of
    /// `--decoding sample` with other --sample-seed values, without grading again).
    #[command(flatten)]
    decoding: DecodingFlags,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// The ranking flags, shared by every command that ranks (`rank`, `calibrate`).
#[derive(clap::Args)]
pub struct RankFlags {
    /// bt: Bradley–Terry (Chatbot Arena's MLE, Elo scale); mean / median score; winrate; elo: online
    /// Elo with K=4 (order-dependent).
    #[arg(long, default_value_t = RankSettings::default().method, value_parser = PossibleValuesParser::new(Method::NAMES).try_map(|s| s.parse::<Method>()))]
    method: Method,
    /// Score differences below this are ties when responses are compared pairwise.
    #[arg(long, default_value_t = RankSettings::default().tie_margin)]
    tie_margin: f64,
    /// Exactly equal scores: `tie` (half a win each) or `skip` (no battle).
    #[arg(long, default_value_t = RankSettings::default().equal, value_parser = PossibleValuesParser::new(EqualScores::NAMES).try_map(|s| s.parse::<EqualScores>()))]
    equal: EqualScores,
    /// Pairwise judgments: `mean` — one battle from the two orders' mean p(A better) (the default: a
    /// small judge's single-order verdict is mostly position bias); `each` — one battle per
    /// presentation order, a 5-point verdict counted as seed 001 counts it ("much better" three
    /// battles, "better" one, a tie one tie).
    #[arg(long, default_value_t = RankSettings::default().pair_orders, value_parser = PossibleValuesParser::new(PairOrders::NAMES).try_map(|s| s.parse::<PairOrders>()))]
    pair_orders: PairOrders,
    /// Bootstrap replicates for the intervals (0: none).
    #[arg(long, default_value_t = RankSettings::default().bootstrap)]
    bootstrap: usize,
    /// What the bootstrap resamples: `sessions` (queries) or `battles` (Arena's multinomial reweighting).
    #[arg(long, default_value_t = RankSettings::default().resample, value_parser = PossibleValuesParser::new(Resample::NAMES).try_map(|s| s.parse::<Resample>()))]
    resample: Resample,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = RankSettings::default().seed)]
    seed: u64,
    /// Anchor the Elo scale: MODEL=RATING (bt and elo only).
    #[arg(long)]
    anchor: Option<String>,
}

impl RankFlags {
    /// The settings these flags choose (as the page's `{method, tieMargin, ...}`).
    pub fn settings(&self) -> RankSettings {
        RankSettings {
            method: self.method,
            tie_margin: self.tie_margin,
            equal: self.equal,
            pair_orders: self.pair_orders,
            bootstrap: self.bootstrap,
            resample: self.resample,
            seed: self.seed,
        }
    }

    /// The ranking options: the settings and the anchor.
    pub fn options(&self) -> anyhow::Result<RankOptions> {
        let anchor = match &self.anchor {
            Some(s) => {
                let Some((m, r)) = s.rsplit_once('=') else { bail!("--anchor takes MODEL=RATING, not `{s}`") };
                Some((m.to_string(), r.parse::<f64>().map_err(|_| anyhow::anyhow!("--anchor rating `{r}` is not a number"))?))
            }
            None => None,
        };
        Ok(RankOptions { anchor, ..self.settings().options().map_err(|e| anyhow::anyhow!("--tie-margin: {e}"))? })
    }
}

#[derive(Serialize)]
struct Row<'a> {
    model: &'a str,
    score: f64,
    lower: Option<f64>,
    upper: Option<f64>,
    rank: usize,
    /// This model against the next one down: the share of bootstrap replicates ordering them so, and
    /// whether that separates them (`grade --until settled`'s rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    vs_next: Option<VsNext>,
}

#[derive(Serialize)]
struct VsNext {
    share: f64,
    separated: bool,
}

pub fn run(a: Args) -> CliResult {
    let decoding = a.decoding.chosen()?;
    let opts = a.rank.options()?;
    if a.judgments.is_none() && decoding.is_some() {
        bail!("--decoding re-decodes judgments (--judgments); score and battle files hold no distributions");
    }
    let judged = match (&a.judgments, &a.scores, &a.battles) {
        (Some(j), _, _) => inputs::judged(j, decoding)?,
        (None, Some(s), _) => inputs::Judged::Scores(inputs::labels(s)?),
        (None, None, Some(b)) => {
            let battles = inputs::battle_rows(b)?;
            let count = battles.len();
            let ranking = rank::rank_battles(battles, &opts).map_err(|e| anyhow::anyhow!("--battles: {e} (--method)"))?;
            eprintln!("{count} battles between {} models", ranking.entries.len());
            return print_ranking(&a, &opts, ranking, None);
        }
        (None, None, None) => unreachable!("clap requires one of --judgments, --scores and --battles"),
    };
    let (ranking, graded) = match judged {
        inputs::Judged::Pairs(pairs) => {
            if let Some(c) = pairwise::position_consistency(&pairs) {
                eprintln!(
                    "{} comparisons; position consistency {:.3} ({} of {} keep their verdict when the order is swapped); p(first shown wins) {:.3}",
                    c.pairs, c.rate, c.consistent, c.pairs, c.first_shown
                );
            }
            let (table, battles) = pairwise::comparisons(&pairs, &opts.pairs, decoding)?;
            (rank::rank_comparisons(&table, battles, &opts)?, None)
        }
        inputs::Judged::Scores(scores) => {
            let graded = scores.len();
            (rank::rank(&scores.table()?, &opts)?, Some(graded))
        }
    };
    print_ranking(&a, &opts, ranking, graded)
}

/// The leaderboard as --format asks, with its notes; `graded`: the scored responses, if any.
fn print_ranking(a: &Args, opts: &RankOptions, ranking: rank::Ranking, graded: Option<usize>) -> CliResult {
    // Which neighbours the bootstrap separates (a folder still being graded included).
    let models: Vec<String> = ranking.entries.iter().map(|e| e.model.clone()).collect();
    let standing = (!ranking.adjacent.is_empty())
        .then(|| Standing::from_ranking(Some(ranking.clone()), graded.unwrap_or(0), &models, None, None, SettleRule::default()));
    for e in &ranking.entries {
        for n in &e.notes {
            eprintln!("note: {}: {n}", e.model);
        }
    }
    if ranking.order_dependent {
        eprintln!("note: online Elo depends on the order of the battles (queries in name order); use bt for an order-free rating");
    }
    let pair = |i: usize| standing.as_ref().and_then(|s| s.pairs.get(i));
    let rows: Vec<Row> = ranking
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| Row {
            model: &e.model,
            score: e.score,
            lower: e.lower,
            upper: e.upper,
            rank: e.rank,
            vs_next: pair(i).map(|p| VsNext { share: p.pair.share, separated: p.separated }),
        })
        .collect();
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Csv => print!("{}", report::ranking_csv(&ranking.entries)),
        Format::Table => {
            let digits = if matches!(opts.method, Method::WinRate) { 3 } else { 2 };
            // Given battles have no responses: count what each model's rating rests on instead.
            let given = a.battles.is_some();
            let count = |e: &rank::RankedModel| if given { e.battles.unwrap_or(0) } else { e.responses };
            let f = |x: Option<f64>| x.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "–".into());
            let body: Vec<Vec<String>> = ranking
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let next = pair(i).map(|p| p.verdict.clone()).unwrap_or_default();
                    vec![e.model.clone(), e.rank.to_string(), f(Some(e.score)), f(e.lower), f(e.upper), count(e).to_string(), next]
                })
                .collect();
            let counted = if given { "battles" } else { "responses" };
            print!("{}", text_table(&["model", "rank", opts.method.as_str(), "95% lower", "95% upper", counted, "vs next"], &body));
        }
    }
    // Graded responses (not comparisons): how settled the ranking is, in a sentence.
    if let (Some(s), Some(_)) = (&standing, graded) {
        eprintln!("{}", s.sentence(Pace::default()));
    }
    Ok(())
}
