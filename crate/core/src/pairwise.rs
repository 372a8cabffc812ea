//! Where two responses to one query become a verdict, and verdicts become the inputs of every
//! aggregation (seed 001's pairwise evaluation types; seed 002's checklist use in pairwise settings).
//!
//! A [`PairJudgment`] holds the judge's p(A better) read from its logits in both presentation orders
//! (seed 001: "we always need to swap the presentation order ... to address the position bias").
//! Each order is decoded as the line records ([`crate::decoding`]), and the pair's p(A) is their mean;
//! a pair is *position-consistent* when both orders prefer the same response.
//!
//! [`comparisons`] turns pair judgments into what [`crate::rank::rank_comparisons`] aggregates:
//! - battles for `bt`, `winrate` and `elo` ([`PairJudgment::battles`]): by default one from the two
//!   orders' mean p(A), as scores 1 + 9·p(A) against 1 + 9·(1 − p(A)) through the same [`PairRule`]
//!   (tie margin, equal-score policy) as pointwise scores, so a pair the orders split evenly is a tie;
//!   with [`PairOrders::Each`] one per order, as seed 001 counts them, a 5-point verdict as
//!   Arena-Hard's weighted battles ([`five_point_battles`]);
//! - a score per (model, query) for `mean` and `median`: 1 + 9 × the model's mean p(win) over its
//!   comparisons on that query (its win share, on the 1–10 scale of checklist scores).
//!
//! With a reference system every model is compared with the reference's response only (seed 001,
//! App. D): n − 1 comparisons per query instead of n(n − 1)/2.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::decoding::Decoding;
use crate::error::{invalid, FormatError, Result};
use crate::formats::{Lined, Winner};
use crate::prompt::PairwiseScale;
use crate::rank::{PairOrders, PairRule, ScoreTable, WeightedBattle};
use crate::stats;

crate::named_enum!(
    /// When a comparison (or a Direct score) is made with the query's checklist in the prompt (seed 002).
    #[derive(Default)]
    pub enum ChecklistUse, "the checklist use" {
        /// Always (checklist-guided).
        Always = "always",
        /// Never (the plain prompt): the default, as before checklists guided comparisons.
        #[default]
        Never = "never",
        /// Per query: first without; again with the checklist where the judge is inconsistent
        /// (inconsistency ≥ k), as seed 002 §3.1 does.
        Selective = "selective",
    }
);

impl ChecklistUse {
    /// Selective use's threshold: `k`, or `default` when none is given; an error for a negative or
    /// non-finite one, and for one given to another rule (it would mean nothing there).
    pub fn threshold(self, k: Option<f64>, default: f64) -> Result<Option<f64>> {
        match (self, k) {
            (ChecklistUse::Selective, k) => match k.unwrap_or(default) {
                k if k.is_finite() && k >= 0.0 => Ok(Some(k)),
                k => invalid!("the selective threshold must be a non-negative number, not {k}"),
            },
            (_, Some(_)) => invalid!("a threshold applies to --checklist selective only"),
            (_, None) => Ok(None),
        }
    }
}

/// Seed 002's pairwise threshold default: the checklist is used when the less-preferred response would
/// get at least 3 of 10 votes.
pub const DEFAULT_PAIRWISE_K: f64 = 3.0;

/// How a pairwise run compares: the verdict's scale, the checklist rule (with selective use's threshold `k`), the
/// reference system (each model compared with it only; `None`: every two models) and the decoding.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PairSettings {
    /// The verdict asked for: "A or B" (binary) or Arena-Hard's 5-point scale.
    pub scale: PairwiseScale,
    pub checklist: ChecklistUse,
    pub k: Option<f64>,
    pub reference: Option<String>,
    pub decoding: Option<Decoding>,
}

impl PairSettings {
    /// The settings, checked: a threshold belongs to selective use only, which without one gets
    /// [`DEFAULT_PAIRWISE_K`].
    pub fn checked(mut self) -> Result<Self> {
        self.k = self.checklist.threshold(self.k, DEFAULT_PAIRWISE_K)?;
        Ok(self)
    }

    /// Whether the plain comparison's two orders send the pair to the guided prompt (selective use:
    /// its [`inconsistency`] reaches the threshold).
    pub fn guide(&self, p_a_first: f64, p_a_second: f64) -> bool {
        match self.checklist {
            ChecklistUse::Always => true,
            ChecklistUse::Never => false,
            ChecklistUse::Selective => inconsistency(p_a_first, p_a_second) >= self.k.unwrap_or(DEFAULT_PAIRWISE_K),
        }
    }

    /// Why `p` was not made with these settings by `judge` (what a resumed run checks), if it was not.
    pub fn mismatch(&self, p: &PairJudgment, judge: &str) -> Option<String> {
        if p.judge != judge {
            Some(format!("compared by `{}`, but this run's judge is `{judge}`", p.judge))
        } else if p.scale.unwrap_or_default() != self.scale {
            Some(format!("made on the {} scale, but this run's is {}", p.scale.unwrap_or_default(), self.scale))
        } else if p.checklist_use != Some(self.checklist) {
            Some(format!(
                "made with checklist use {}, but this run's is {}",
                p.checklist_use.map_or("(unknown)", |c| c.as_str()),
                self.checklist
            ))
        } else if p.reference != self.reference {
            Some(format!("made with reference {:?}, but this run's is {:?}", p.reference, self.reference))
        } else if p.decoding != self.decoding {
            Some("made with another decoding than this run's".to_string())
        } else {
            None
        }
    }
}

/// The comparisons of a run: of `responses` (`(session, model)` each), per session every two models
/// in name order, or with a `reference` each other model against the reference's response (sessions
/// without one are left out). Indices into `responses`, `(a, b)` with b the reference. A reference
/// that answered nothing is an error.
pub fn plan_pairs(responses: &[(&str, &str)], reference: Option<&str>) -> Result<Vec<(usize, usize)>> {
    if let Some(r) = reference {
        if !responses.iter().any(|(_, m)| *m == r) {
            return invalid!("the reference `{r}` has no responses among the inputs");
        }
    }
    let mut by_session: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, (s, _)) in responses.iter().enumerate() {
        by_session.entry(s).or_default().push(i);
    }
    let mut out = Vec::new();
    for (_, mut ix) in by_session {
        ix.sort_by_key(|&i| responses[i].1);
        match reference {
            Some(r) => {
                let Some(&refi) = ix.iter().find(|&&i| responses[i].1 == r) else { continue };
                out.extend(ix.iter().filter(|&&i| responses[i].1 != r).map(|&i| (i, refi)));
            }
            None => {
                for x in 0..ix.len() {
                    for y in x + 1..ix.len() {
                        out.push((ix[x], ix[y]));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// One comparison of two responses to a query, both orders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairJudgment {
    pub session_id: String,
    pub model_a: String,
    pub model_b: String,
    pub judge: String,
    /// p(A better) with A shown first (p("A") / (p("A") + p("B"))).
    pub p_a_first: f64,
    /// p(A better) with A shown second (p("B") / (p("A") + p("B")) of the swapped prompt).
    pub p_a_second: f64,
    /// Whether the query's checklist was in the prompt (`pairwise-checklist-v1`) or not (`pairwise-v1`).
    pub checklist: bool,
    /// The rule that decided `checklist` (absent: given directly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checklist_use: Option<ChecklistUse>,
    /// Selective use: the plain comparison's inconsistency that decided it (see [`inconsistency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inconsistency: Option<f64>,
    /// The reference system when the run compared every model with one model (model_b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoding: Option<Decoding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Characters cut from the two responses to fit the judge's context (absent when they fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_chars: Option<usize>,
    /// The verdict's scale (absent: binary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<PairwiseScale>,
    /// 5-point scale: the judge's distribution over the verdicts "1" (the first shown much better) to
    /// "5" (the second shown much better) in each order, as shown (A first, then B first). `p_a_first`
    /// and `p_a_second` are their [`five_point_share`]s for A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<[[f64; 5]; 2]>,
}

impl PairJudgment {
    /// The two orders' p(A better), decoded as `decoding` says, else as the line records
    /// ([`Decoding::applied`]; on the 5-point scale: each order's verdict distribution decoded, then
    /// converted by [`five_point_share`]).
    pub fn decoded(&self, decoding: Option<Decoding>) -> (f64, f64) {
        if let Some([first, second]) = self.decoded_verdicts(decoding) {
            return (five_point_share(&first), 1.0 - five_point_share(&second));
        }
        let v = Decoding::applied(decoding, self.decoding).binary(&[self.p_a_first, self.p_a_second], &self.key());
        (v[0], v[1])
    }

    /// 5-point scale: each order's verdict distribution, decoded (as shown: A first, then B first).
    fn decoded_verdicts(&self, decoding: Option<Decoding>) -> Option<[Vec<f64>; 2]> {
        let d = Decoding::applied(decoding, self.decoding);
        let key = self.key();
        self.verdicts
            .as_ref()
            .map(|[first, second]| [d.distribution(first, &format!("{key}/first")), d.distribution(second, &format!("{key}/second"))])
    }

    /// The key of this comparison's random stream (sampled decodings).
    fn key(&self) -> String {
        format!("{}/{}/{}", self.model_a, self.model_b, self.session_id)
    }

    /// The pair's p(A better): the mean of the two orders, decoded (see [`Self::decoded`]).
    pub fn p_a(&self, decoding: Option<Decoding>) -> f64 {
        let (f, s) = self.decoded(decoding);
        (f + s) / 2.0
    }

    /// The battles this comparison counts as, A's outcome each with its weight. [`PairOrders::Each`]
    /// (seed 001): one per order, each order's decoded p(A) through `rule` as scores 1 + 9·p against
    /// 1 + 9·(1 − p); a 5-point verdict instead counts as Arena-Hard counts it, in expectation over
    /// the decoded distribution ([`five_point_battles`]). [`PairOrders::Mean`]: one battle from the
    /// orders' mean p(A). A zero weight gives no battle. `decoding` as for [`Self::decoded`].
    pub fn battles(&self, rule: &PairRule, decoding: Option<Decoding>) -> Vec<(Winner, f64)> {
        let through_rule = |p: f64| rule.outcome(1.0 + 9.0 * p, 1.0 + 9.0 * (1.0 - p)).map(|w| (w, 1.0));
        match (rule.orders, &self.verdicts) {
            (PairOrders::Mean, _) => through_rule(self.p_a(decoding)).into_iter().collect(),
            (PairOrders::Each, Some(_)) => {
                let [first, second] = self.decoded_verdicts(decoding).expect("verdicts are present");
                let [a_wins, tie, b_wins] = five_point_battles(&first);
                let [b_first, tie_second, a_second] = five_point_battles(&second);
                [(Winner::A, a_wins + a_second), (Winner::Tie, tie + tie_second), (Winner::B, b_wins + b_first)]
                    .into_iter()
                    .filter(|(_, w)| *w > 0.0)
                    .collect()
            }
            (PairOrders::Each, None) => {
                let (first, second) = self.decoded(decoding);
                [first, second].into_iter().filter_map(through_rule).collect()
            }
        }
    }

    /// Both orders prefer the same response (a 50/50 order prefers neither and is inconsistent).
    pub fn consistent(&self) -> bool {
        (self.p_a_first > 0.5 && self.p_a_second > 0.5) || (self.p_a_first < 0.5 && self.p_a_second < 0.5)
    }

    fn validate(&self, file: &str, line: usize) -> std::result::Result<(), FormatError> {
        for (field, p) in [("p_a_first", self.p_a_first), ("p_a_second", self.p_a_second)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(FormatError::new(file, line, field, format!("expected a probability in [0, 1], found {p}")));
            }
        }
        if let Some(vs) = &self.verdicts {
            if vs.iter().flatten().any(|p| !(0.0..=1.0).contains(p)) || vs.iter().any(|v| v.iter().sum::<f64>() <= 0.0) {
                return Err(FormatError::new(file, line, "verdicts", "expected two distributions of five probabilities in [0, 1]"));
            }
        }
        if self.model_a == self.model_b {
            return Err(FormatError::new(file, line, "model_b", format!("a model compared with itself (`{}`)", self.model_a)));
        }
        Ok(())
    }
}

/// A 5-point verdict distribution (first shown much better … second shown much better) as the first
/// shown response's share of wins under seed 001's conversion to base pairwise (App. A, after Li et
/// al. 2024b): "much better" counts as 6 wins, "better" as 2, a tie as one win each — here in
/// expectation over the distribution: (6p₁ + 2p₂ + p₃) / (6p₁ + 2p₂ + 2p₃ + 2p₄ + 6p₅).
pub fn five_point_share(p: &[f64]) -> f64 {
    let first = 6.0 * p[0] + 2.0 * p[1] + p[2];
    let second = p[2] + 2.0 * p[3] + 6.0 * p[4];
    first / (first + second)
}

/// A 5-point verdict distribution (first shown much better … second shown much better) as Arena-Hard
/// counts battles (Li et al. 2024b, seed 001 App. A: "much better" 6 wins, "better" 2, a tie 1 each —
/// halved): the expected [first-shown wins, ties, second-shown wins], 3p₁ + p₂, p₃, p₄ + 3p₅.
pub fn five_point_battles(p: &[f64]) -> [f64; 3] {
    [3.0 * p[0] + p[1], p[2], p[3] + 3.0 * p[4]]
}

/// Verdicts sampled per presentation order in seed 002's selective rule (ten runs, five per order).
pub const VOTES_PER_ORDER: usize = 5;

/// Seed 002's inconsistency of a plain comparison: the votes the less-preferred response gets when
/// the judge is run ten times at temperature 1, five per order — here exactly, as the expectation
/// over the judge's own distributions: with X = Bin(5, p_a_first) + Bin(5, p_a_second) the votes for
/// A, E[min(X, 10 − X)]. (At p = 0.5 in both orders it is about 3.77, not 5: a sampled minority is
/// usually smaller than half.) [`vote_split`] gives the whole distribution of X.
pub fn inconsistency(p_a_first: f64, p_a_second: f64) -> f64 {
    let n = 2 * VOTES_PER_ORDER;
    vote_split(p_a_first, p_a_second).iter().enumerate().map(|(x, p)| p * x.min(n - x) as f64).sum()
}

/// The distribution of the votes for A among seed 002's ten sampled verdicts (five with A shown first,
/// p(A) = `p_a_first` each, five with A shown second, `p_a_second` each): P(X = 0..=10), the
/// convolution of the two orders' binomials.
pub fn vote_split(p_a_first: f64, p_a_second: f64) -> Vec<f64> {
    let (a, b) = (stats::binomial_pmf(VOTES_PER_ORDER, p_a_first), stats::binomial_pmf(VOTES_PER_ORDER, p_a_second));
    let mut out = vec![0.0; 2 * VOTES_PER_ORDER + 1];
    for (i, pa) in a.iter().enumerate() {
        for (j, pb) in b.iter().enumerate() {
            out[i + j] += pa * pb;
        }
    }
    out
}

/// The old rule, kept for comparison: 10 · min(p̄, 1 − p̄) of the two orders' mean p(A) — the
/// minority's share of an infinite vote, scaled to ten; it is 5 at p̄ = 0.5, where ten sampled votes
/// give about 3.8 ([`inconsistency`]).
pub fn inconsistency_of_the_mean(p_a_first: f64, p_a_second: f64) -> f64 {
    let p = (p_a_first + p_a_second) / 2.0;
    10.0 * p.min(1.0 - p)
}

/// Read pair judgments (JSONL), checking probabilities and models.
pub fn read_pair_judgments(file: &str, bytes: &[u8]) -> std::result::Result<Vec<Lined<PairJudgment>>, FormatError> {
    let rows = crate::formats::jsonl::read_jsonl::<PairJudgment>(file, bytes)?;
    for r in &rows {
        r.value.validate(file, r.line)?;
    }
    Ok(rows)
}

/// Does a JSONL file hold pair judgments? (Its first record has `model_a`, `model_b` and `p_a_first`.)
pub fn looks_like_pair_judgments(bytes: &[u8]) -> bool {
    crate::formats::jsonl::first_record(bytes)
        .is_some_and(|v| v.get("model_a").is_some() && v.get("model_b").is_some() && v.get("p_a_first").is_some())
}

/// Pair judgments as the inputs of every aggregation: the per-(model, query) win-share scores and each
/// query's battles (see the module docs; `rule.orders` picks one battle per order or one from their
/// mean), each pair decoded as `decoding` says (`None`: as it records). A pair judged twice is an error.
pub fn comparisons(pairs: &[PairJudgment], rule: &PairRule, decoding: Option<Decoding>) -> Result<(ScoreTable, Vec<Vec<WeightedBattle>>)> {
    let models: Vec<String> =
        pairs.iter().flat_map(|p| [p.model_a.clone(), p.model_b.clone()]).collect::<BTreeSet<_>>().into_iter().collect();
    let sessions: Vec<String> = pairs.iter().map(|p| p.session_id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let mi: HashMap<&str, usize> = models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let si: HashMap<&str, usize> = sessions.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let mut seen = HashSet::new();
    let mut per_session: Vec<Vec<WeightedBattle>> = vec![Vec::new(); sessions.len()];
    let mut shares: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); sessions.len()]; models.len()];
    for p in pairs {
        let (a, b, s) = (mi[p.model_a.as_str()], mi[p.model_b.as_str()], si[p.session_id.as_str()]);
        if !seen.insert((a.min(b), a.max(b), s)) {
            return invalid!("`{}` and `{}` are compared twice on `{}`", p.model_a, p.model_b, p.session_id);
        }
        let pa = p.p_a(decoding);
        shares[a][s].push(pa);
        shares[b][s].push(1.0 - pa);
        // Battles keep the table's model order (a < b), as pointwise battles do.
        let ordered = |w: Winner| if a < b { (a, b, w) } else { (b, a, w.swapped()) };
        per_session[s].extend(p.battles(rule, decoding).into_iter().map(|(w, weight)| (ordered(w), weight)));
    }
    let cells: Vec<Vec<Option<f64>>> =
        shares.iter().map(|row| row.iter().map(|xs| (!xs.is_empty()).then(|| 1.0 + 9.0 * stats::mean(xs))).collect()).collect();
    Ok((ScoreTable::from_cells(models, sessions, cells), per_session))
}

/// How often the judge's verdict survives swapping the two responses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PositionConsistency {
    pub pairs: usize,
    pub consistent: usize,
    pub rate: f64,
    /// Mean p(the first-shown response is better) over both orders of every pair: 0.5 without bias.
    pub first_shown: f64,
}

pub fn position_consistency(pairs: &[PairJudgment]) -> Option<PositionConsistency> {
    if pairs.is_empty() {
        return None;
    }
    let consistent = pairs.iter().filter(|p| p.consistent()).count();
    let first: Vec<f64> = pairs.iter().flat_map(|p| [p.p_a_first, 1.0 - p.p_a_second]).collect();
    Some(PositionConsistency {
        pairs: pairs.len(),
        consistent,
        rate: consistent as f64 / pairs.len() as f64,
        first_shown: stats::mean(&first),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn pair(s: &str, a: &str, b: &str, first: f64, second: f64) -> PairJudgment {
        PairJudgment {
            session_id: s.into(),
            model_a: a.into(),
            model_b: b.into(),
            judge: "j".into(),
            p_a_first: first,
            p_a_second: second,
            checklist: false,
            checklist_use: None,
            inconsistency: None,
            reference: None,
            decoding: None,
            prompt_version: None,
            truncated_chars: None,
            scale: None,
            verdicts: None,
        }
    }

    #[test]
    fn five_point_verdicts_convert_as_seed_001_counts_them() {
        // "A much better" is 6 wins of 6; "A better" 2 of 2; a tie 1 of 2.
        assert_eq!(five_point_share(&[1.0, 0.0, 0.0, 0.0, 0.0]), 1.0);
        assert_eq!(five_point_share(&[0.0, 0.0, 1.0, 0.0, 0.0]), 0.5);
        assert_eq!(five_point_share(&[0.0, 1.0, 0.0, 0.0, 1.0]), 2.0 / 8.0);
        // Each order is decoded, then converted; the second order's share is B's, seen from A.
        let p = PairJudgment {
            scale: Some(PairwiseScale::FivePoint),
            verdicts: Some([[0.1, 0.5, 0.2, 0.1, 0.1], [0.0, 0.2, 0.3, 0.4, 0.1]]),
            ..pair("q", "x", "y", 0.0, 0.0)
        };
        let (first, second) = p.decoded(None);
        assert!((first - five_point_share(&[0.1, 0.5, 0.2, 0.1, 0.1])).abs() < 1e-12);
        assert!((second - (1.0 - five_point_share(&[0.0, 0.2, 0.3, 0.4, 0.1]))).abs() < 1e-12);
        let greedy = PairJudgment { decoding: Some(Decoding::Greedy), ..p.clone() };
        // Greedy: "A slightly better" shown first; "4", the second shown (A) slightly better, shown second.
        assert_eq!(greedy.decoded(None), (1.0, 1.0));
        // A decoding passed in applies over the one the line records, which is left as it is.
        assert_eq!(p.decoded(Some(Decoding::Greedy)), (1.0, 1.0));
        assert_eq!(greedy.decoded(Some(Decoding::Expected)), p.decoded(None));
        assert!(PairSettings { scale: PairwiseScale::FivePoint, ..Default::default() }
            .mismatch(&PairJudgment { checklist_use: Some(ChecklistUse::Never), ..pair("q", "x", "y", 0.5, 0.5) }, "j")
            .is_some());
    }

    #[test]
    fn pairs_are_planned_per_session_in_model_order() {
        let rs = [("q1", "b"), ("q1", "a"), ("q2", "c"), ("q1", "c"), ("q2", "a")];
        let names = |v: Vec<(usize, usize)>| v.into_iter().map(|(a, b)| (rs[a].0, rs[a].1, rs[b].1)).collect::<Vec<_>>();
        assert_eq!(names(plan_pairs(&rs, None).unwrap()), [("q1", "a", "b"), ("q1", "a", "c"), ("q1", "b", "c"), ("q2", "a", "c")]);
        // Against a reference: each other model, on the sessions the reference answered.
        assert_eq!(names(plan_pairs(&rs, Some("b")).unwrap()), [("q1", "a", "b"), ("q1", "c", "b")]);
        assert!(plan_pairs(&rs, Some("nobody")).is_err());
    }

    #[test]
    fn settings_pick_the_guided_prompt_by_their_rule() {
        let s = |checklist, k| PairSettings { checklist, k, ..Default::default() }.checked();
        assert!(s(ChecklistUse::Never, Some(2.0)).is_err());
        assert!(s(ChecklistUse::Selective, Some(f64::NAN)).is_err());
        let sel = s(ChecklistUse::Selective, None).unwrap();
        assert_eq!(sel.k, Some(DEFAULT_PAIRWISE_K));
        assert!(!sel.guide(0.9, 0.85)); // E[minority of 10 votes] ≈ 1.25 < 3
        assert!(sel.guide(0.9, 0.2)); // ≈ 4.09
        let at = |k| PairSettings { checklist: ChecklistUse::Selective, k: Some(k), ..Default::default() }.checked().unwrap();
        // At an even split the expected minority is about 3.77: a threshold of 4 no longer means "always".
        assert!(at(3.0).guide(0.5, 0.5) && !at(4.0).guide(0.5, 0.5));
        assert!(s(ChecklistUse::Always, None).unwrap().guide(1.0, 1.0));
        let p = pair("q", "x", "y", 0.9, 0.2);
        assert!(sel.mismatch(&p, "j").is_some()); // the line records no checklist use
        assert!(PairSettings::default().mismatch(&PairJudgment { checklist_use: Some(ChecklistUse::Never), ..p.clone() }, "j").is_none());
        assert!(PairSettings::default().mismatch(&PairJudgment { checklist_use: Some(ChecklistUse::Never), ..p }, "other").is_some());
    }

    #[test]
    fn both_orders_are_averaged_and_consistency_counted() {
        let p = pair("q", "x", "y", 0.9, 0.3);
        assert!((p.p_a(None) - 0.6).abs() < 1e-12);
        assert!(!p.consistent());
        assert!(pair("q", "x", "y", 0.6, 0.7).consistent());
        let c = position_consistency(&[p, pair("q", "x", "z", 0.6, 0.7)]).unwrap();
        assert_eq!((c.pairs, c.consistent), (2, 1));
        // First shown: 0.9, 0.7, 0.6, 0.3.
        assert!((c.first_shown - 0.625).abs() < 1e-12);
        assert!((inconsistency_of_the_mean(0.9, 0.3) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn sampled_votes_agree_with_the_exact_inconsistency() {
        // Ten verdicts drawn as seed 002 draws them (five per order), many times: the mean minority
        // and the vote distribution approach the closed forms.
        let mut rng = crate::stats::Rng::new(7);
        for (pf, ps) in [(0.5, 0.5), (0.9, 0.3), (0.8, 0.75), (0.99, 0.02)] {
            let runs = 40_000;
            let mut counts = [0usize; 2 * VOTES_PER_ORDER + 1];
            for _ in 0..runs {
                let x = (0..VOTES_PER_ORDER).filter(|_| rng.uniform(0.0, 1.0) < pf).count()
                    + (0..VOTES_PER_ORDER).filter(|_| rng.uniform(0.0, 1.0) < ps).count();
                counts[x] += 1;
            }
            let minority: f64 =
                counts.iter().enumerate().map(|(x, &c)| (x.min(2 * VOTES_PER_ORDER - x) * c) as f64).sum::<f64>() / runs as f64;
            assert!((minority - inconsistency(pf, ps)).abs() < 0.03, "({pf}, {ps}): sampled {minority}, exact {}", inconsistency(pf, ps));
            for (x, p) in vote_split(pf, ps).iter().enumerate() {
                assert!((counts[x] as f64 / runs as f64 - p).abs() < 0.01, "({pf}, {ps}): P(X = {x})");
            }
        }
    }

    const EACH: PairRule =
        PairRule { tie_margin: crate::rank::DEFAULT_TIE_MARGIN, equal: crate::rank::EqualScores::Tie, orders: PairOrders::Each };
    const MEAN: PairRule = PairRule { orders: PairOrders::Mean, ..EACH };

    #[test]
    fn each_order_is_a_battle_and_the_mean_one_battle() {
        let mut p = pair("q", "x", "y", 0.9, 0.3);
        // Seed 001: one battle per order — A won with A shown first, B with B shown first.
        assert_eq!(p.battles(&EACH, None), [(Winner::A, 1.0), (Winner::B, 1.0)]);
        // The mean of the orders (0.6): one battle, A's.
        assert_eq!(p.battles(&MEAN, None), [(Winner::A, 1.0)]);
        p.decoding = Some(Decoding::Greedy);
        assert_eq!(p.battles(&MEAN, None), [(Winner::Tie, 1.0)]);
        assert_eq!(p.battles(&EACH, None), [(Winner::A, 1.0), (Winner::B, 1.0)]);
        assert_eq!(PairRule::default(), MEAN);
    }

    #[test]
    fn five_point_verdicts_count_as_arena_hard_battles() {
        // A much better with A shown first; B better with B shown first ("1" = the first shown much
        // better): 6 wins to 2 as seed 001 counts them, 3 battles to 1 as Arena-Hard does.
        let p = PairJudgment {
            scale: Some(PairwiseScale::FivePoint),
            verdicts: Some([[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0]]),
            decoding: Some(Decoding::Greedy),
            ..pair("q", "x", "y", 0.0, 0.0)
        };
        assert_eq!(p.battles(&EACH, None), [(Winner::A, 3.0), (Winner::B, 1.0)]);
        // One battle from the orders' mean win share (1 and 0): a tie.
        assert_eq!(p.battles(&MEAN, None), [(Winner::Tie, 1.0)]);
        // Ranked: x ahead with 6:2, level without.
        let (table, battles) = comparisons(std::slice::from_ref(&p), &EACH, None).unwrap();
        let opts = crate::rank::RankOptions { method: crate::rank::Method::WinRate, bootstrap: 0, ..Default::default() };
        let r = crate::rank::rank_comparisons(&table, battles, &opts).unwrap();
        assert_eq!((r.entries[0].model.as_str(), r.entries[0].score, r.entries[0].battles), ("x", 0.75, Some(4)));
        // In expectation over a distribution: 3p₁ + p₂ wins, p₃ ties, p₄ + 3p₅ losses per order.
        let spread = PairJudgment { decoding: None, verdicts: Some([[0.5, 0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]]), ..p };
        assert_eq!(spread.battles(&EACH, None), [(Winner::A, 1.5 + 3.0), (Winner::Tie, 0.5)]);
    }

    #[test]
    fn comparisons_give_battles_in_model_order_and_win_shares() {
        let pairs = [pair("q1", "y", "x", 0.8, 0.8), pair("q1", "y", "z", 0.2, 0.2), pair("q2", "x", "y", 0.5, 0.5)];
        let (table, battles) = comparisons(&pairs, &EACH, None).unwrap();
        assert_eq!(table.models, ["x", "y", "z"]);
        // y beat x on q1 in both orders: stored as (x, y, B), twice.
        let b = |x, y, w| ((x, y, w), 1.0);
        assert_eq!(battles[0], vec![b(0, 1, Winner::B), b(0, 1, Winner::B), b(1, 2, Winner::B), b(1, 2, Winner::B)]);
        assert_eq!(battles[1], vec![b(0, 1, Winner::Tie), b(0, 1, Winner::Tie)]);
        assert_eq!(comparisons(&pairs, &MEAN, None).unwrap().1[0], vec![b(0, 1, Winner::B), b(1, 2, Winner::B)]);
        // y on q1: p(win) 0.8 and 0.2 → share 0.5 → 5.5.
        assert!((table.get(1, 0).unwrap() - 5.5).abs() < 1e-12);
        assert!((table.get(0, 0).unwrap() - (1.0 + 9.0 * 0.2)).abs() < 1e-12);
        assert_eq!(table.get(2, 1), None);
        assert!(comparisons(&[pair("q", "x", "y", 0.5, 0.5), pair("q", "y", "x", 0.5, 0.5)], &PairRule::default(), None).is_err());
    }

    #[test]
    fn bad_lines_name_the_field() {
        let e = read_pair_judgments(
            "p.jsonl",
            br#"{"session_id":"q","model_a":"x","model_b":"y","judge":"j","p_a_first":1.5,"p_a_second":0.5,"checklist":false}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("p_a_first"), "{e}");
        assert!(looks_like_pair_judgments(b"\n{\"model_a\":\"x\",\"model_b\":\"y\",\"p_a_first\":0.5}\n"));
        assert!(!looks_like_pair_judgments(b"{\"session_id\":\"q\",\"norm_probability\":[0.5]}"));
    }
}
