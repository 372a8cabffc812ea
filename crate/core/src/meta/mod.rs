//! Meta-evaluation: how far a judge's output agrees with a reference.
//!
//! - System level ([`compare_rankings`]): Spearman ρ, Kendall τ-b, Pearson r between our ratings and a
//!   reference ranking (e.g. Chatbot Arena), and τ_u (seed 001 §2.2) when the reference has CIs; each
//!   with a percentile bootstrap CI over models.
//! - Instance level ([`pairwise_agreement`]): the judge's pointwise scores turned into pairwise verdicts
//!   (tie margin as in seed 000 §2.2) against pairwise labels (human or GPT-4), as three-way agreement
//!   (ties must match, seed 000 §2.2) and as accuracy with ½ credit when one side is a tie (seed 002);
//!   [`score_correlation`]: correlation of scores with reference scores.
//! - [`krippendorff::alpha`] for rater agreement.
//! - [`strong`]: our small judge against a strong judge's verdicts (GPT-4 in FastChat's MT-Bench
//!   judgments, Arena battles, any score file) per query, per model and overall, and agreement as a
//!   function of how close two models are.

pub mod correlation;
pub mod krippendorff;
pub mod strong;

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{invalid, Result};
use crate::formats::{Battle, RankingEntry, Winner};
use crate::rank::{ratings_on, PairRule, RankOptions, ScoreTable, WeightedBattle};
use crate::stats::{bootstrap_ci, percentile_interval, Rng};

pub use correlation::{kendall_tau_b, pearson, spearman, tau_u};

/// A statistic with its bootstrap interval (absent when there were too few units to resample).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetaOptions {
    pub bootstrap: usize,
    pub level: f64,
    pub seed: u64,
    /// τ_u's rating-gap threshold in reference points; `None` = every separable pair.
    pub u: Option<f64>,
}

impl Default for MetaOptions {
    fn default() -> Self {
        Self { bootstrap: 1000, level: 0.95, seed: 42, u: None }
    }
}

fn estimate(n: usize, opts: &MetaOptions, stat: impl Fn(&[usize]) -> f64) -> Estimate {
    let all: Vec<usize> = (0..n).collect();
    let value = stat(&all);
    let ci = if n >= 3 { bootstrap_ci(n, opts.bootstrap, opts.level, opts.seed, &stat) } else { None };
    Estimate { value, lower: ci.map(|c| c.lower), upper: ci.map(|c| c.upper) }
}

crate::named_enum!(
    /// What a system-level comparison's intervals resample.
    pub enum Resampled, "what the intervals resample" {
        /// The compared models (two given rankings: nothing else to resample).
        Models = "models",
        /// The queries our ranking was made from, ranking again in each replicate (seed 001's
        /// bootstrap over inputs).
        Queries = "queries",
    }
);

/// Our ranking against a reference ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankingComparison {
    /// Models in both rankings (the ones compared).
    pub models: Vec<String>,
    pub only_ours: Vec<String>,
    pub only_reference: Vec<String>,
    pub spearman: Estimate,
    pub kendall_tau_b: Estimate,
    pub pearson: Estimate,
    /// Present when every reference entry has `lower` and `upper`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_u: Option<Estimate>,
    /// The pairs τ_u counted (rating gap ≤ u, reference CIs disjoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_u_pairs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub u: Option<f64>,
    /// What the intervals resample.
    pub resampled: Resampled,
}

/// Spearman ρ, Kendall τ-b, Pearson r and τ_u (NaN without the reference's bounds) of our ratings `x`
/// against the reference's `y` (`bounds`: its (rating, lower, upper) per model).
fn system_correlations(x: &[f64], y: &[f64], bounds: Option<&[(f64, f64, f64)]>, u: Option<f64>) -> [f64; 4] {
    [spearman(x, y), kendall_tau_b(x, y), pearson(x, y), bounds.map_or(f64::NAN, |b| tau_u(x, b, u))]
}

/// The models both rankings have, their ratings, the reference's bounds, and the names only one has.
struct Common {
    models: Vec<String>,
    reference: Vec<f64>,
    bounds: Option<Vec<(f64, f64, f64)>>,
    only_ours: Vec<String>,
    only_reference: Vec<String>,
}

fn common_models<'a>(ours: impl Iterator<Item = &'a str> + Clone, reference: &[RankingEntry]) -> Result<Common> {
    let theirs: HashMap<&str, &RankingEntry> = reference.iter().map(|e| (e.name.as_str(), e)).collect();
    let mut models: Vec<String> = ours.clone().filter(|m| theirs.contains_key(m)).map(str::to_string).collect();
    models.sort();
    models.dedup();
    if models.len() < 3 {
        return invalid!("only {} model(s) appear in both rankings; at least 3 are needed (check that the names match)", models.len());
    }
    let bounds = models
        .iter()
        .map(|m| {
            let e = theirs[m.as_str()];
            Some((e.rating, e.lower?, e.upper?))
        })
        .collect();
    let mut only_ours: Vec<String> = ours.clone().filter(|m| !theirs.contains_key(m)).map(str::to_string).collect();
    let mut only_reference: Vec<String> = reference.iter().filter(|e| !ours.clone().any(|m| m == e.name)).map(|e| e.name.clone()).collect();
    only_ours.sort();
    only_reference.sort();
    Ok(Common { reference: models.iter().map(|m| theirs[m.as_str()].rating).collect(), models, bounds, only_ours, only_reference })
}

impl Common {
    /// The comparison: `point` from every unit, and each statistic's percentile interval over the
    /// `replicates` (absent when fewer than half of those asked for gave a finite value).
    fn comparison(self, point: [f64; 4], replicates: &[[f64; 4]], resampled: Resampled, opts: &MetaOptions) -> RankingComparison {
        let est = |k: usize| {
            let vals: Vec<f64> = replicates.iter().map(|r| r[k]).collect();
            let ci = percentile_interval(&vals, opts.bootstrap, opts.level);
            Estimate { value: point[k], lower: ci.map(|c| c.lower), upper: ci.map(|c| c.upper) }
        };
        let tau_u_pairs = self.bounds.as_ref().map(|b| count_tau_u_pairs(b, opts.u));
        RankingComparison {
            spearman: est(0),
            kendall_tau_b: est(1),
            pearson: est(2),
            tau_u: self.bounds.is_some().then(|| est(3)),
            tau_u_pairs,
            u: opts.u,
            resampled,
            models: self.models,
            only_ours: self.only_ours,
            only_reference: self.only_reference,
        }
    }
}

fn pick<T: Copy>(v: &[T], idx: &[usize]) -> Vec<T> {
    idx.iter().map(|&i| v[i]).collect()
}

/// Compare two rankings on their common models. Bootstrap CIs resample those models with replacement.
pub fn compare_rankings(ours: &[RankingEntry], reference: &[RankingEntry], opts: &MetaOptions) -> Result<RankingComparison> {
    let common = common_models(ours.iter().map(|e| e.name.as_str()), reference)?;
    let mine: HashMap<&str, f64> = ours.iter().map(|e| (e.name.as_str(), e.rating)).collect();
    let x: Vec<f64> = common.models.iter().map(|m| mine[m.as_str()]).collect();
    let (y, bounds) = (&common.reference, common.bounds.as_deref());
    let point = system_correlations(&x, y, bounds, opts.u);
    let mut rng = Rng::new(opts.seed);
    let replicates: Vec<[f64; 4]> = (0..opts.bootstrap)
        .map(|_| {
            let idx = rng.resample(x.len());
            system_correlations(&pick(&x, &idx), &pick(y, &idx), bounds.map(|b| pick(b, &idx)).as_deref(), opts.u)
        })
        .collect();
    Ok(common.comparison(point, &replicates, Resampled::Models, opts))
}

/// Our ranking made from the judge's output on a set of queries (`table` and each query's battles, as
/// [`crate::rank::rank_comparisons`] takes them, ranked by `rank_opts.method`) against a reference
/// ranking. The intervals resample the queries and rank again in each replicate (seed 001's bootstrap
/// over inputs): how much the agreement depends on which queries were asked. A replicate's
/// correlations use the common models it rates.
pub fn compare_over_queries(
    table: &ScoreTable,
    per_session: &[Vec<WeightedBattle>],
    rank_opts: &RankOptions,
    reference: &[RankingEntry],
    opts: &MetaOptions,
) -> Result<RankingComparison> {
    let common = common_models(table.models.iter().map(String::as_str), reference)?;
    let index: Vec<usize> = common.models.iter().map(|m| table.models.iter().position(|t| t == m).expect("a common model")).collect();
    let correlations = |ratings: &[f64]| {
        let rated: Vec<usize> = (0..index.len()).filter(|&i| ratings[index[i]].is_finite()).collect();
        if rated.len() < 3 {
            return [f64::NAN; 4];
        }
        let x: Vec<f64> = rated.iter().map(|&i| ratings[index[i]]).collect();
        let bounds = common.bounds.as_ref().map(|b| pick(b, &rated));
        system_correlations(&x, &pick(&common.reference, &rated), bounds.as_deref(), opts.u)
    };
    let all: Vec<usize> = (0..table.sessions.len()).collect();
    let point = correlations(&ratings_on(table, per_session, &all, rank_opts)?);
    let mut rng = Rng::new(opts.seed);
    let replicates: Vec<[f64; 4]> = (0..opts.bootstrap)
        .map(|_| match ratings_on(table, per_session, &rng.resample(all.len()), rank_opts) {
            Ok(r) => correlations(&r),
            // A resample without comparisons has no ranking: skipped, not faked.
            Err(_) => [f64::NAN; 4],
        })
        .collect();
    Ok(common.comparison(point, &replicates, Resampled::Queries, opts))
}

fn count_tau_u_pairs(r: &[(f64, f64, f64)], u: Option<f64>) -> usize {
    let mut n = 0;
    for i in 0..r.len() {
        for j in i + 1..r.len() {
            if u.is_none_or(|u| (r[i].0 - r[j].0).abs() <= u) && (r[i].2 < r[j].1 || r[j].2 < r[i].1) {
                n += 1;
            }
        }
    }
    n
}

/// The judge's pairwise verdicts against pairwise labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseAgreement {
    /// Labelled pairs where the judge scored both responses.
    pub pairs: usize,
    /// Labels whose responses the judge did not score (reported, not counted).
    pub unmatched: usize,
    /// Three-way agreement (A, B, tie must match exactly), as seed 000 §2.2.
    pub agreement: Estimate,
    /// 1 for the same verdict, ½ when exactly one side says tie, 0 otherwise (seed 002's tie credit).
    pub accuracy: Estimate,
    pub judge_ties: usize,
    pub label_ties: usize,
}

/// Agreement of a judge (its scores in `table`, turned into verdicts by `rule`) with pairwise `labels`
/// (`question_id` = session id). A pair whose scores are exactly equal under the `skip` policy counts
/// as a tie here: agreement needs a verdict.
pub fn pairwise_agreement(table: &ScoreTable, labels: &[Battle], rule: &PairRule, opts: &MetaOptions) -> Result<PairwiseAgreement> {
    let mi: HashMap<&str, usize> = table.models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let si: HashMap<&str, usize> = table.sessions.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let mut verdicts: Vec<(Winner, Winner)> = Vec::new();
    let mut unmatched = 0;
    for l in labels {
        let Some(sid) = l.question_id.as_deref() else {
            return invalid!("pairwise labels need a `question_id` (the session id) to match responses");
        };
        let score = |m: &str| Some(table.get(*mi.get(m)?, *si.get(sid)?)).flatten();
        match (score(&l.model_a), score(&l.model_b)) {
            (Some(a), Some(b)) => verdicts.push((rule.outcome(a, b).unwrap_or(Winner::Tie), l.winner)),
            _ => unmatched += 1,
        }
    }
    if verdicts.is_empty() {
        return invalid!("none of the {} labelled pairs has scores for both responses", labels.len());
    }
    Ok(agreement_of(&verdicts, unmatched, opts))
}

/// Agreement of pairwise judgments ([`crate::pairwise::PairJudgment`], both orders) with pairwise
/// `labels` (`question_id` = session id), e.g. human verdicts: each comparison's verdict is the side
/// with more points over its battles under `rule` (one from the mean of the orders, or one per order
/// as seed 001 counts them), equal points a tie.
pub fn pair_judgment_agreement(
    pairs: &[crate::pairwise::PairJudgment],
    labels: &[Battle],
    rule: &PairRule,
    opts: &MetaOptions,
) -> Result<PairwiseAgreement> {
    let by: HashMap<(&str, &str, &str), &crate::pairwise::PairJudgment> =
        pairs.iter().map(|p| ((p.session_id.as_str(), p.model_a.as_str(), p.model_b.as_str()), p)).collect();
    let mut verdicts: Vec<(Winner, Winner)> = Vec::new();
    let mut unmatched = 0;
    for l in labels {
        let Some(sid) = l.question_id.as_deref() else {
            return invalid!("pairwise labels need a `question_id` (the session id) to match comparisons");
        };
        let (p, swapped) = match (by.get(&(sid, &l.model_a, &l.model_b)), by.get(&(sid, &l.model_b, &l.model_a))) {
            (Some(p), _) => (p, false),
            (None, Some(p)) => (p, true),
            (None, None) => {
                unmatched += 1;
                continue;
            }
        };
        let (a, b) = p
            .battles(rule, None)
            .iter()
            .fold((0.0, 0.0), |(a, b), (w, weight)| (a + weight * w.score_a(), b + weight * (1.0 - w.score_a())));
        let verdict = if (a - b).abs() < 1e-12 {
            Winner::Tie
        } else if a > b {
            Winner::A
        } else {
            Winner::B
        };
        verdicts.push((if swapped { verdict.swapped() } else { verdict }, l.winner));
    }
    if verdicts.is_empty() {
        return invalid!("none of the {} labelled pairs was compared by the judge", labels.len());
    }
    Ok(agreement_of(&verdicts, unmatched, opts))
}

/// Agreement and accuracy (ties half) of (judge, label) verdicts, with bootstrap intervals.
fn agreement_of(verdicts: &[(Winner, Winner)], unmatched: usize, opts: &MetaOptions) -> PairwiseAgreement {
    let agree = |idx: &[usize]| idx.iter().filter(|&&i| verdicts[i].0 == verdicts[i].1).count() as f64 / idx.len() as f64;
    let credit = |(j, l): (Winner, Winner)| match (j, l) {
        _ if j == l => 1.0,
        (Winner::Tie, _) | (_, Winner::Tie) => 0.5,
        _ => 0.0,
    };
    let acc = |idx: &[usize]| idx.iter().map(|&i| credit(verdicts[i])).sum::<f64>() / idx.len() as f64;
    PairwiseAgreement {
        pairs: verdicts.len(),
        unmatched,
        agreement: estimate(verdicts.len(), opts, agree),
        accuracy: estimate(verdicts.len(), opts, acc),
        judge_ties: verdicts.iter().filter(|v| v.0 == Winner::Tie).count(),
        label_ties: verdicts.iter().filter(|v| v.1 == Winner::Tie).count(),
    }
}

/// Correlation of the judge's scores with reference scores over the (model, session) cells both have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreCorrelation {
    pub n: usize,
    pub pearson: Estimate,
    pub spearman: Estimate,
    pub kendall_tau_b: Estimate,
    /// Krippendorff's α at the interval level, the judge and the reference as two raters of each
    /// response (seed 003's agreement measure: unlike a correlation it asks for the same values, so
    /// both must be on one scale, e.g. 1–10). NaN where every value is the same (α undefined).
    pub krippendorff_interval: Estimate,
}

/// Krippendorff's interval α of paired ratings (one unit per pair), NaN where undefined.
pub fn paired_interval_alpha(x: &[f64], y: &[f64]) -> f64 {
    let units: Vec<Vec<Option<f64>>> = x.iter().zip(y).map(|(a, b)| vec![Some(*a), Some(*b)]).collect();
    krippendorff::alpha(&units, krippendorff::Level::Interval).unwrap_or(f64::NAN)
}

pub fn score_correlation(judge: &ScoreTable, reference: &ScoreTable, opts: &MetaOptions) -> Result<ScoreCorrelation> {
    let rm: HashMap<&str, usize> = reference.models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let rs: HashMap<&str, usize> = reference.sessions.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (m, model) in judge.models.iter().enumerate() {
        for (s, session) in judge.sessions.iter().enumerate() {
            let (Some(a), Some(&rmi), Some(&rsi)) = (judge.get(m, s), rm.get(model.as_str()), rs.get(session.as_str())) else {
                continue;
            };
            if let Some(b) = reference.get(rmi, rsi) {
                x.push(a);
                y.push(b);
            }
        }
    }
    if x.len() < 3 {
        return invalid!("only {} scored responses are shared with the reference; at least 3 are needed", x.len());
    }
    let pick = |v: &[f64], idx: &[usize]| idx.iter().map(|&i| v[i]).collect::<Vec<_>>();
    let corr = |f: fn(&[f64], &[f64]) -> f64| estimate(x.len(), opts, |idx| f(&pick(&x, idx), &pick(&y, idx)));
    Ok(ScoreCorrelation {
        n: x.len(),
        pearson: corr(pearson),
        spearman: corr(spearman),
        kendall_tau_b: corr(kendall_tau_b),
        krippendorff_interval: corr(paired_interval_alpha),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Score;

    fn entry(name: &str, rating: f64, ci: Option<f64>) -> RankingEntry {
        RankingEntry { name: name.into(), rating, lower: ci.map(|h| rating - h), upper: ci.map(|h| rating + h) }
    }

    #[test]
    fn pair_judgments_meet_labels_by_either_rule() {
        let p = |s: &str, a: &str, b: &str, first: f64, second: f64| -> crate::pairwise::PairJudgment {
            serde_json::from_value(serde_json::json!({"session_id": s, "model_a": a, "model_b": b, "judge": "j",
                "p_a_first": first, "p_a_second": second, "checklist": false}))
            .unwrap()
        };
        let label =
            |s: &str, a: &str, b: &str, winner| Battle { model_a: a.into(), model_b: b.into(), winner, question_id: Some(s.into()) };
        // q1: x ahead on the mean (0.6), split by order; q2: y ahead in both orders, labelled from y's side.
        let pairs = [p("q1", "x", "y", 0.9, 0.3), p("q2", "x", "y", 0.2, 0.1)];
        let labels = [label("q1", "x", "y", Winner::A), label("q2", "y", "x", Winner::A), label("q3", "x", "y", Winner::B)];
        let opts = MetaOptions { bootstrap: 0, ..Default::default() };
        let mean = pair_judgment_agreement(&pairs, &labels, &PairRule::default(), &opts).unwrap();
        assert_eq!((mean.pairs, mean.unmatched, mean.accuracy.value, mean.judge_ties), (2, 1, 1.0, 0));
        let each = PairRule { orders: crate::rank::PairOrders::Each, ..Default::default() };
        let per_order = pair_judgment_agreement(&pairs, &labels, &each, &opts).unwrap();
        // Seed 001's count: q1 is one battle each way, a tie (half credit).
        assert_eq!((per_order.accuracy.value, per_order.agreement.value, per_order.judge_ties), (0.75, 0.5, 1));
    }

    #[test]
    fn rankings_compare_on_common_models() {
        let ours = [entry("a", 3.0, None), entry("b", 2.0, None), entry("c", 1.0, None), entry("x", 0.0, None)];
        let reference =
            [entry("a", 1300.0, Some(5.0)), entry("b", 1200.0, Some(5.0)), entry("c", 1000.0, Some(5.0)), entry("y", 9.0, Some(1.0))];
        let c = compare_rankings(&ours, &reference, &MetaOptions { bootstrap: 200, ..Default::default() }).unwrap();
        assert_eq!(c.models, ["a", "b", "c"]);
        assert_eq!((c.only_ours.as_slice(), c.only_reference.as_slice()), (&["x".to_string()][..], &["y".to_string()][..]));
        for e in [c.spearman, c.kendall_tau_b, c.tau_u.unwrap()] {
            assert!((e.value - 1.0).abs() < 1e-12, "{e:?}");
        }
        assert_eq!(c.tau_u_pairs, Some(3));
    }

    #[test]
    fn the_query_bootstrap_ranks_again_on_each_resample() {
        let s = |m: &str, q: &str, v: f64| Score { session_id: q.into(), model_test: m.into(), score: v, judge: None };
        let reference =
            [entry("a", 1300.0, Some(5.0)), entry("b", 1200.0, Some(5.0)), entry("c", 1100.0, Some(5.0)), entry("d", 1000.0, Some(5.0))];
        let opts = MetaOptions { bootstrap: 300, ..Default::default() };
        let mean = RankOptions { method: crate::rank::Method::Mean, bootstrap: 0, ..Default::default() };
        // Two queries in the reference's order, one reversed by a wide margin, one with c first.
        let rows: Vec<Score> =
            [("q1", [4.0, 3.0, 2.0, 1.0]), ("q2", [4.0, 3.0, 2.0, 1.0]), ("q3", [1.0, 2.0, 3.0, 9.0]), ("q4", [2.0, 1.0, 5.0, 1.0])]
                .iter()
                .flat_map(|(q, v)| ["a", "b", "c", "d"].iter().zip(v).map(|(m, &x)| s(m, q, x)))
                .collect();
        let table = ScoreTable::new(&rows).unwrap();
        let battles = crate::rank::session_battles(&table, &mean.pairs);
        let c = compare_over_queries(&table, &battles, &mean, &reference, &opts).unwrap();
        assert_eq!(c.resampled, Resampled::Queries);
        // The point: our ranking of all queries against the reference, as `compare_rankings` gives it.
        let ranked = crate::rank::rank(&table, &mean).unwrap();
        let ours: Vec<RankingEntry> = ranked.entries.iter().map(|e| entry(&e.model, e.score, None)).collect();
        let whole = compare_rankings(&ours, &reference, &opts).unwrap();
        assert_eq!(
            (c.spearman.value, c.kendall_tau_b.value, c.tau_u.unwrap().value),
            (whole.spearman.value, whole.kendall_tau_b.value, whole.tau_u.unwrap().value)
        );
        // The interval: each replicate the models' means over the resampled queries, done by hand.
        let mut rng = Rng::new(opts.seed);
        let mut rhos: Vec<f64> = (0..opts.bootstrap)
            .map(|_| {
                let idx = rng.resample(4);
                let x: Vec<f64> =
                    (0..4).map(|m| crate::stats::mean(&idx.iter().map(|&q| table.get(m, q).unwrap()).collect::<Vec<_>>())).collect();
                spearman(&x, &[1300.0, 1200.0, 1100.0, 1000.0])
            })
            .collect();
        rhos.retain(|r| r.is_finite());
        assert_eq!(
            (c.spearman.lower, c.spearman.upper),
            (Some(crate::stats::quantile(&rhos, 0.025)), Some(crate::stats::quantile(&rhos, 0.975)))
        );
        assert!(c.spearman.lower.unwrap() < -0.99 && c.spearman.upper.unwrap() > 0.99, "{:?}", c.spearman);
        // Queries that all agree leave nothing to resample: the interval is the point.
        let same: Vec<Score> = rows.iter().filter(|r| r.session_id == "q1" || r.session_id == "q2").cloned().collect();
        let t2 = ScoreTable::new(&same).unwrap();
        let bt = RankOptions { bootstrap: 0, ..Default::default() };
        let c2 = compare_over_queries(&t2, &crate::rank::session_battles(&t2, &bt.pairs), &bt, &reference, &opts).unwrap();
        assert!(
            (c2.spearman.value - 1.0).abs() < 1e-12
                && c2.spearman.lower == Some(c2.spearman.value)
                && c2.spearman.upper == Some(c2.spearman.value)
        );
    }

    #[test]
    fn agreement_counts_ties_both_ways() {
        let s = |m: &str, q: &str, v: f64| Score { session_id: q.into(), model_test: m.into(), score: v, judge: None };
        let t = ScoreTable::new(&[s("a", "q1", 8.0), s("b", "q1", 5.0), s("a", "q2", 6.0), s("b", "q2", 6.05)]).unwrap();
        let l = |q: &str, w| Battle { model_a: "a".into(), model_b: "b".into(), winner: w, question_id: Some(q.into()) };
        let labels = [l("q1", Winner::A), l("q2", Winner::B), l("q3", Winner::A)];
        let a = pairwise_agreement(&t, &labels, &PairRule::default(), &MetaOptions { bootstrap: 0, ..Default::default() }).unwrap();
        assert_eq!((a.pairs, a.unmatched, a.judge_ties), (2, 1, 1));
        assert_eq!(a.agreement.value, 0.5);
        assert_eq!(a.accuracy.value, 0.75);
    }
}
