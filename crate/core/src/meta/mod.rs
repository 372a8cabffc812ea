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
use crate::rank::{PairRule, ScoreTable};
use crate::stats::bootstrap_ci;

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
}

/// Compare two rankings on their common models. Bootstrap CIs resample those models with replacement.
pub fn compare_rankings(ours: &[RankingEntry], reference: &[RankingEntry], opts: &MetaOptions) -> Result<RankingComparison> {
    let theirs: HashMap<&str, &RankingEntry> = reference.iter().map(|e| (e.name.as_str(), e)).collect();
    let mine: HashMap<&str, &RankingEntry> = ours.iter().map(|e| (e.name.as_str(), e)).collect();
    let mut models: Vec<String> = ours.iter().filter(|e| theirs.contains_key(e.name.as_str())).map(|e| e.name.clone()).collect();
    models.sort();
    models.dedup();
    if models.len() < 3 {
        return invalid!("only {} model(s) appear in both rankings; at least 3 are needed (check that the names match)", models.len());
    }
    let x: Vec<f64> = models.iter().map(|m| mine[m.as_str()].rating).collect();
    let y: Vec<f64> = models.iter().map(|m| theirs[m.as_str()].rating).collect();
    let pick = |v: &[f64], idx: &[usize]| idx.iter().map(|&i| v[i]).collect::<Vec<_>>();
    let corr = |f: fn(&[f64], &[f64]) -> f64| estimate(models.len(), opts, |idx| f(&pick(&x, idx), &pick(&y, idx)));
    let with_ci: Option<Vec<(f64, f64, f64)>> = models
        .iter()
        .map(|m| {
            let e = theirs[m.as_str()];
            Some((e.rating, e.lower?, e.upper?))
        })
        .collect();
    let (tau_u_est, tau_u_pairs) = match &with_ci {
        Some(r) => {
            let pairs = count_tau_u_pairs(r, opts.u);
            let est = estimate(models.len(), opts, |idx| {
                let rr: Vec<_> = idx.iter().map(|&i| r[i]).collect();
                tau_u(&pick(&x, idx), &rr, opts.u)
            });
            (Some(est), Some(pairs))
        }
        None => (None, None),
    };
    let mut only_ours: Vec<String> = ours.iter().filter(|e| !theirs.contains_key(e.name.as_str())).map(|e| e.name.clone()).collect();
    let mut only_reference: Vec<String> =
        reference.iter().filter(|e| !mine.contains_key(e.name.as_str())).map(|e| e.name.clone()).collect();
    only_ours.sort();
    only_reference.sort();
    Ok(RankingComparison {
        spearman: corr(spearman),
        kendall_tau_b: corr(kendall_tau_b),
        pearson: corr(pearson),
        tau_u: tau_u_est,
        tau_u_pairs,
        u: opts.u,
        models,
        only_ours,
        only_reference,
    })
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
        let (a, b) =
            p.battles(rule).iter().fold((0.0, 0.0), |(a, b), (w, weight)| (a + weight * w.score_a(), b + weight * (1.0 - w.score_a())));
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
