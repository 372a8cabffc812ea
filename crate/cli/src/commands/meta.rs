//! `rocketjudge meta`: how well a judge agrees with a reference, at system and instance level.

use std::path::PathBuf;

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::rocketeval;
use rocketjudge_core::meta::{self, strong, Estimate, MetaOptions};
use rocketjudge_core::pairwise::{self, PairJudgment};
use rocketjudge_core::rank::{self, Method, PairOrders, PairRule, RankOptions, RankSettings};
use serde_json::json;

use super::CliResult;
use super::{text_table, Format};
use crate::inputs;

/// Meta-evaluate a judge.
///
/// System level: --ranking FILE --reference FILE gives Spearman ρ, Kendall τ-b and Pearson r between
/// the two rankings' ratings on their common models, and τ_u (seed 001) when the reference has
/// lower/upper bounds; bootstrap CIs resample models. --judgments DIR (or --scores) --reference FILE
/// ranks the judgments (--method) and compares that ranking, the CIs resampling the queries.
/// Instance level: --judgments DIR --pairs FILE gives the judge's agreement with pairwise labels
/// (Arena battles with question_id = session id) — of its scores, or of its pairwise judgments
/// (`grade --type pairwise`; --pair-orders); --judgments DIR --labels PATH gives the correlation
/// of its scores with reference scores (and Krippendorff's interval α, which asks for equal values on
/// one scale) and its pairwise agreement with them within each query.
/// Small judge vs strong judge: --judgments DIR --strong FILE compares our judge with a strong judge's
/// verdicts (FastChat `gpt-4_single.jsonl` or `gpt-4_pair.jsonl`, Arena battles with question_id,
/// RocketEval scores, or a CSV session_id,model_test,score; recognised by their fields): pairwise
/// agreement overall, per model and per query, Spearman/Kendall of the models' means, the queries of
/// most disagreement, and agreement by how close the strong judge puts two models. CIs resample queries.
///
/// Example: rocketjudge meta --judgments judged/ --strong benchmarks/mt-bench/gpt4-judged/gpt-4_single.jsonl
#[derive(clap::Args)]
pub struct Args {
    /// Our ranking (JSON list of {model|name, score|rating, lower?, upper?}).
    #[arg(long, requires = "reference", conflicts_with = "judgments")]
    ranking: Option<PathBuf>,
    /// The reference ranking, same format (e.g. Chatbot Arena ratings with CIs). With --judgments or
    /// --scores instead of --ranking: our ranking is made from them (--method) and the intervals
    /// resample the queries, ranking again each time (seed 001's bootstrap over inputs).
    #[arg(long)]
    reference: Option<PathBuf>,
    /// How --judgments/--scores are ranked against --reference (as `rank --method`).
    #[arg(long, default_value_t = RankSettings::default().method, value_parser = PossibleValuesParser::new(Method::NAMES).try_map(|s| s.parse::<Method>()))]
    method: Method,
    /// τ_u's rating-gap threshold (reference points); default: every separable pair. Several,
    /// comma-separated (e.g. 25,50,100,200), sweep it: τ_u at each, as seed 001's Fig. 2 does.
    #[arg(long, value_delimiter = ',')]
    u: Vec<f64>,
    /// Folder (or file) of judgments, for instance-level agreement.
    #[arg(long, conflicts_with = "scores")]
    judgments: Option<PathBuf>,
    /// Score files instead of judgments (e.g. supervised or Direct scores).
    #[arg(long)]
    scores: Option<PathBuf>,
    /// Pairwise labels: Arena battles {model_a, model_b, winner, question_id}.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// Reference scores (RocketEval score files or FastChat `*_single.jsonl`).
    #[arg(long)]
    labels: Option<PathBuf>,
    /// A strong judge's verdicts to compare with (see above); `--format json` prints every table.
    #[arg(long)]
    strong: Option<PathBuf>,
    /// Tie margin when the judge's scores are compared pairwise.
    #[arg(long, default_value_t = rank::DEFAULT_TIE_MARGIN)]
    tie_margin: f64,
    /// Pairwise judgments (`grade --type pairwise`) against --pairs: their verdicts from the mean of the
    /// two orders (`mean`) or from one battle per order as seed 001 counts them (`each`; as `rank`).
    #[arg(long, default_value_t = PairOrders::Mean, value_parser = PossibleValuesParser::new(PairOrders::NAMES).try_map(|s| s.parse::<PairOrders>()))]
    pair_orders: PairOrders,
    /// Bootstrap replicates for the intervals (0: none).
    #[arg(long, default_value_t = rank::DEFAULT_BOOTSTRAP)]
    bootstrap: usize,
    #[arg(long, default_value_t = rank::DEFAULT_SEED)]
    seed: u64,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn est(e: &Estimate) -> String {
    match (e.lower, e.upper) {
        (Some(l), Some(u)) => format!("{:.3} [{:.3}, {:.3}]", e.value, l, u),
        _ => format!("{:.3}", e.value),
    }
}

pub fn run(a: Args) -> CliResult {
    if a.u.iter().any(|u| !(u.is_finite() && *u > 0.0)) {
        bail!("--u takes positive rating gaps, not {:?}", a.u);
    }
    let single_u = if a.u.len() == 1 { Some(a.u[0]) } else { None };
    let opts = MetaOptions { bootstrap: a.bootstrap, seed: a.seed, u: single_u, ..Default::default() };
    let rule = PairRule { tie_margin: a.tie_margin, orders: a.pair_orders, ..Default::default() };
    let read_ranking = |f: &PathBuf| -> anyhow::Result<_> { Ok(rocketeval::read_ranking(&f.display().to_string(), &inputs::read(f)?)?) };
    let report = if let (Some(r), Some(reference)) = (&a.ranking, &a.reference) {
        let (ours, theirs) = (read_ranking(r)?, read_ranking(reference)?);
        match report_comparison(&a, &opts, |o| meta::compare_rankings(&ours, &theirs, o))? {
            Some(v) => v,
            None => return Ok(()),
        }
    } else if let (Some(reference), true) = (&a.reference, a.judgments.is_some() || a.scores.is_some()) {
        // Our ranking made from the judgments, its intervals resampling the queries.
        if a.pairs.is_some() || a.labels.is_some() || a.strong.is_some() {
            bail!("--reference ranks the judgments and compares the ranking; give --pairs, --labels or --strong in a run of their own");
        }
        let theirs = read_ranking(reference)?;
        let (table, battles) = match judged(&a)? {
            inputs::Judged::Pairs(pairs) => pairwise::comparisons(&pairs, &rule, None)?,
            inputs::Judged::Scores(scores) => {
                let table = scores.table()?;
                let battles = rank::session_battles(&table, &rule);
                (table, battles)
            }
        };
        let rank_opts = RankOptions { method: a.method, pairs: rule, bootstrap: 0, ..Default::default() };
        eprintln!(
            "ranking {} models by {} over {} queries; the intervals resample the queries",
            table.models.len(),
            a.method,
            table.sessions.len()
        );
        match report_comparison(&a, &opts, |o| meta::compare_over_queries(&table, &battles, &rank_opts, &theirs, o))? {
            Some(v) => v,
            None => return Ok(()),
        }
    } else if a.judgments.is_some() || a.scores.is_some() {
        let scores = match judged(&a)? {
            inputs::Judged::Scores(scores) => scores,
            inputs::Judged::Pairs(pairs) => return pairs_against_labels(&a, &pairs, &rule, &opts),
        };
        let table = scores.table()?;
        let mut out = serde_json::Map::new();
        if let Some(p) = &a.pairs {
            let labels = inputs::battles(p)?;
            let agr = meta::pairwise_agreement(&table, &labels, &rule, &opts)?;
            if agr.unmatched > 0 {
                eprintln!(
                    "note: {} of {} labelled pairs have no scores for both responses and were not counted",
                    agr.unmatched,
                    labels.len()
                );
            }
            if a.format == Format::Table {
                print_agreement("pairwise labels", &agr);
            }
            out.insert("pairs".into(), serde_json::to_value(&agr)?);
        }
        if let Some(l) = &a.labels {
            let reference = inputs::labels(l)?.table()?;
            let corr = meta::score_correlation(&table, &reference, &opts)?;
            // Within each query, every pair of responses: the label scores' verdict (equal labels tie).
            let label_rule = PairRule { tie_margin: 1e-9, ..Default::default() };
            let label_pairs: Vec<_> = rank::battles(&reference, &label_rule).collect();
            let agr = meta::pairwise_agreement(&table, &label_pairs, &rule, &opts)?;
            if a.format == Format::Table {
                println!(
                    "score correlation over {} responses: Pearson {}, Spearman {}, Kendall tau-b {}; Krippendorff's alpha (interval) {}",
                    corr.n,
                    est(&corr.pearson),
                    est(&corr.spearman),
                    est(&corr.kendall_tau_b),
                    est(&corr.krippendorff_interval)
                );
                print_agreement("pairs derived from the labels", &agr);
            }
            out.insert("score_correlation".into(), serde_json::to_value(&corr)?);
            out.insert("pairwise_vs_labels".into(), serde_json::to_value(&agr)?);
        }
        if let Some(f) = &a.strong {
            let name = f.display().to_string();
            let (verdicts, problems) = strong::read_strong_verdicts(&name, &inputs::read(f)?)?;
            inputs::report(problems)?;
            let s = strong::strong_agreement(&table, &verdicts, &rule, &opts)?;
            if a.format == Format::Table {
                print_strong(&s);
            }
            out.insert("strong".into(), serde_json::to_value(&s)?);
        }
        if out.is_empty() {
            bail!("with --judgments or --scores, give --pairs FILE, --labels PATH and/or --strong FILE");
        }
        if a.format == Format::Table {
            return Ok(());
        }
        serde_json::Value::Object(out)
    } else {
        bail!("give --ranking with --reference, or --judgments/--scores with --reference, --pairs, --labels and/or --strong");
    };
    println!("{}", serde_json::to_string_pretty(&json!(report))?);
    Ok(())
}

/// The judgments (or scores) the instance-level and query-bootstrap reports read.
fn judged(a: &Args) -> anyhow::Result<inputs::Judged> {
    Ok(match (&a.judgments, &a.scores) {
        (Some(j), _) => inputs::judged(j, None)?,
        (None, Some(s)) => inputs::Judged::Scores(inputs::labels(s)?),
        (None, None) => bail!("give --judgments or --scores"),
    })
}

/// A system-level comparison as --format asks (`None`: printed as a table), with τ_u swept over
/// several --u values.
fn report_comparison(
    a: &Args,
    opts: &MetaOptions,
    compare: impl Fn(&MetaOptions) -> rocketjudge_core::Result<meta::RankingComparison>,
) -> anyhow::Result<Option<serde_json::Value>> {
    let c = compare(opts)?;
    if !c.only_ours.is_empty() || !c.only_reference.is_empty() {
        eprintln!(
            "note: compared {} common models; only in ours: {:?}; only in the reference: {:?}",
            c.models.len(),
            c.only_ours,
            c.only_reference
        );
    }
    // A sweep over u: τ_u among the pairs at most u apart, for each u.
    let mut sweep = Vec::new();
    if a.u.len() > 1 {
        if c.tau_u.is_none() {
            bail!("--u needs a reference ranking with lower and upper bounds for every model");
        }
        for &u in &a.u {
            let at = compare(&MetaOptions { u: Some(u), ..*opts })?;
            if let (Some(t), Some(p)) = (at.tau_u, at.tau_u_pairs) {
                sweep.push((u, t, p));
            }
        }
    }
    if a.format == Format::Table {
        println!("models compared  {} (intervals resample the {})", c.models.len(), c.resampled);
        println!("Spearman rho     {}", est(&c.spearman));
        println!("Kendall tau-b    {}", est(&c.kendall_tau_b));
        println!("Pearson r        {}", est(&c.pearson));
        if let (Some(t), Some(p)) = (&c.tau_u, c.tau_u_pairs) {
            println!(
                "tau_u            {} over {p} separable pairs{}",
                est(t),
                opts.u.map(|u| format!(" (gap <= {u})")).unwrap_or_default()
            );
        }
        for (u, t, p) in &sweep {
            println!("tau_u, gap <= {u:<6} {} over {p} separable pairs", est(t));
        }
        return Ok(None);
    }
    let mut v = serde_json::to_value(&c)?;
    if !sweep.is_empty() {
        v["tau_u_by_u"] = sweep.iter().map(|(u, t, p)| json!({"u": u, "tau_u": t, "pairs": p})).collect();
    }
    Ok(Some(v))
}

/// Pairwise judgments against pairwise labels (e.g. human verdicts): seed 001's accuracy.
fn pairs_against_labels(a: &Args, pairs: &[PairJudgment], rule: &PairRule, opts: &MetaOptions) -> CliResult {
    let (Some(p), None, None) = (&a.pairs, &a.labels, &a.strong) else {
        bail!("{} holds pairwise judgments: compare them with pairwise labels (--pairs)", a.judgments.as_ref().unwrap().display());
    };
    let labels = inputs::battles(p)?;
    let agr = meta::pair_judgment_agreement(pairs, &labels, rule, opts)?;
    if agr.unmatched > 0 {
        eprintln!("note: {} of {} labelled pairs were not compared by the judge and were not counted", agr.unmatched, labels.len());
    }
    match a.format {
        Format::Table => print_agreement(&format!("pairwise labels, verdicts by --pair-orders {}", a.pair_orders), &agr),
        _ => println!("{}", serde_json::to_string_pretty(&json!({ "pairs": agr }))?),
    }
    Ok(())
}

fn print_agreement(what: &str, p: &meta::PairwiseAgreement) {
    println!(
        "{what}: {} pairs; agreement (ties must match) {}; accuracy (tie = 1/2) {}; judge ties {}, label ties {}",
        p.pairs,
        est(&p.agreement),
        est(&p.accuracy),
        p.judge_ties,
        p.label_ties
    );
}

fn print_strong(s: &strong::StrongAgreement) {
    let o = &s.overall;
    let kind = match s.strong_kind {
        strong::StrongKind::Scores => "mean score",
        strong::StrongKind::Battles => "win rate",
    };
    println!("strong judge ({}): {} common models on {} queries", kind, s.models.len(), s.queries);
    if !s.only_ours.is_empty() || !s.only_strong.is_empty() {
        println!("left out: only ours {:?}; only the strong judge's {:?}", s.only_ours, s.only_strong);
    }
    if s.unmatched.strong > 0 || s.unmatched.ours > 0 {
        println!("unmatched records: {} of the strong judge's, {} of our scores", s.unmatched.strong, s.unmatched.ours);
    }
    println!(
        "pairwise: {} pairs; agreement (ties must match) {}; accuracy (tie = 1/2) {}; our ties {}, strong ties {}",
        o.pairs,
        est(&o.agreement),
        est(&o.accuracy),
        o.our_ties,
        o.strong_ties
    );
    println!(
        "system level (our mean scores vs the strong {kind}s): Spearman {}, Kendall tau-b {}",
        est(&o.spearman),
        est(&o.kendall_tau_b)
    );
    if let (Some(e), Some(k)) = (&o.instance_spearman, &o.instance_krippendorff) {
        println!("scores over {} responses: Spearman {}, Krippendorff's alpha (interval) {}", o.responses, est(e), est(k));
    }
    println!();
    let rows: Vec<Vec<String>> = s
        .per_model
        .iter()
        .map(|m| {
            vec![
                m.model.clone(),
                format!("{:.3}", m.ours_mean),
                m.ours_rank.to_string(),
                format!("{:.3}", m.strong_mean),
                m.strong_rank.to_string(),
                est(&m.agreement),
                m.pairs.to_string(),
                m.responses.to_string(),
            ]
        })
        .collect();
    print!("{}", text_table(&["model", "ours", "our rank", "strong", "strong rank", "agreement", "pairs", "responses"], &rows));
    println!();
    println!("most disagreement ({} of {} queries have any):", s.disagreements.len(), s.per_query.len());
    for q in s.disagreements.iter().take(5) {
        let worst = q.most_discordant.as_ref().map(|d| {
            let strong = match (d.strong_a, d.strong_b) {
                (Some(x), Some(y)) => format!("{x} vs {y}"),
                _ => format!("{:?}", d.strong_verdict),
            };
            format!("; e.g. {} vs {}: ours {:.2} vs {:.2}, strong {strong}", d.model_a, d.model_b, d.ours_a, d.ours_b)
        });
        println!("  {}  agreement {:.2} over {} pairs{}", q.session_id, q.agreement, q.pairs, worst.unwrap_or_default());
    }
    println!();
    let rows: Vec<Vec<String>> = s
        .closeness_bins
        .iter()
        .map(|b| {
            vec![
                format!("{:.3}-{:.3}", b.lower, b.upper),
                b.model_pairs.to_string(),
                b.pairs.to_string(),
                b.agreement.map_or("-".into(), |x| format!("{x:.3}")),
                format!("{:.3}", b.order_agreement),
            ]
        })
        .collect();
    println!("agreement by how close the strong judge puts two models ({kind} gap):");
    print!("{}", text_table(&["strong gap", "model pairs", "pairs", "agreement", "same order"], &rows));
}
