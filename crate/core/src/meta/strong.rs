//! Our small judge against a strong judge (issue #14 item 3): GPT-4's MT-Bench verdicts, Arena votes or
//! any score file, read by [`read_strong_verdicts`] and compared by [`strong_agreement`].
//!
//! The unit everything is computed on is the *query* (session): a query is compared when at least two
//! models that both judges know have a verdict from both on it.
//!
//! - Instance level: within each query, every pair of responses. The strong verdict is the higher
//!   strong score (exactly equal scores tie) or the battle's winner; ours is [`PairRule::outcome`] of our
//!   scores (exactly equal scores tie whatever the rule's equal-score policy, as in
//!   [`super::pairwise_agreement`]). Reported as three-way agreement (A, B, tie must match) and as
//!   accuracy with ½ credit when exactly one side says tie.
//! - System level: Spearman ρ and Kendall τ-b between the models' mean scores, ours against the strong
//!   judge's mean score (or, for battles, the strong side's win rate: wins + ½ ties per battle). A model's
//!   means are taken over its *matched* responses: the responses to compared queries that both judges
//!   scored (for battles: that took part in a strong battle whose two responses we scored).
//! - When the strong side has scores: Spearman ρ of the two judges' scores over the matched responses.
//! - Intervals: a cluster bootstrap that resamples compared queries with replacement and recomputes
//!   every statistic (model means included) on the resample, seeded by [`MetaOptions::seed`].
//! - Per model, per query (with the most discordant pair), the queries of most disagreement, and one row
//!   per pair of models: how far apart the strong judge puts them against how often we agree with it on
//!   their shared queries. [`ClosenessBin`]s pool those rows by the strong gap's tertiles (scale-free,
//!   so the same rule works for 1–10 scores and for win rates): agreement as a function of how close
//!   two models are.
//!
//! ```
//! use rocketjudge_core::formats::Score;
//! use rocketjudge_core::meta::{strong, MetaOptions};
//! use rocketjudge_core::rank::{PairRule, ScoreTable};
//!
//! let s = |m: &str, q: &str, v: f64| Score { session_id: q.into(), model_test: m.into(), score: v, judge: None };
//! let ours = ScoreTable::new(&[s("a", "q1", 8.0), s("b", "q1", 3.0), s("a", "q2", 4.0), s("b", "q2", 6.0)]).unwrap();
//! let gpt4 = b"{\"question_id\": \"q1\", \"model\": \"a\", \"score\": 9, \"turn\": 1}\n";
//! let (verdicts, problems) = strong::read_strong_verdicts("gpt-4_single.jsonl", gpt4).unwrap();
//! assert!(problems.is_empty());
//! // One judgment only: no query has two models judged by GPT-4.
//! assert!(strong::strong_agreement(&ours, &verdicts, &PairRule::default(), &MetaOptions::default()).is_err());
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::{estimate, kendall_tau_b, paired_interval_alpha, spearman, Estimate, MetaOptions};
use crate::error::{invalid, FormatError, Result};
use crate::formats::rocketeval::read_scores;
use crate::formats::{arena, check_scores, csv, fastchat, sniff, Battle, Lined, Problem, Score, Winner};
use crate::rank::{PairRule, ScoreTable};
use crate::stats;

/// What a strong judge said.
#[derive(Debug, Clone)]
pub enum StrongVerdicts {
    /// A score per response (FastChat single judgments, RocketEval scores, a scores CSV).
    Scores(ScoreTable),
    /// Pairwise verdicts; every battle has a `question_id` (the session id, `<qid>_turn<k>` for MT-Bench).
    Battles(Vec<Battle>),
}

/// The kind of [`StrongVerdicts`], as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StrongKind {
    Scores,
    Battles,
}

const SHAPES: &str = "FastChat single judgments (question_id, model, score, turn), FastChat pair judgments \
(question_id, model_1, model_2, g1_winner, g2_winner, turn), Arena battles (model_a, model_b, winner, question_id), \
RocketEval scores (session_id, model_test, score), or a CSV with the header session_id,model_test,score";

/// Read a strong judge's verdicts, recognising the format by the fields of the first record (see
/// `SHAPES` in the error message). Scores with no valid value (FastChat's −1) and FastChat pair
/// judgments with an `error` verdict are left out with a warning (FastChat drops them too); a response
/// scored twice keeps its first score and is an error problem.
pub fn read_strong_verdicts(file: &str, bytes: &[u8]) -> std::result::Result<(StrongVerdicts, Vec<Problem>), FormatError> {
    let Some((line, keys, csv)) = sniff::first_record_keys(file, bytes, SHAPES)? else {
        return Err(FormatError::new(file, 0, "", format!("the file holds no records; expected {SHAPES}")));
    };
    if csv {
        return score_verdicts(file, csv::read_scores_csv(file, bytes)?, Vec::new());
    }
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("g1_winner") || has("g2_winner") {
        let (battles, problems) = fastchat::battles_from_pair_judgments(file, bytes)?;
        return Ok((StrongVerdicts::Battles(battles), problems));
    }
    if has("question_id") && has("turn") && has("model") {
        let (scores, problems) = fastchat::scores_from_single_judgments(file, bytes)?;
        return score_verdicts(file, scores, problems);
    }
    if has("model_a") && has("model_b") && has("winner") {
        let mut out = Vec::new();
        for b in arena::read_battles(file, bytes)? {
            if b.value.question_id.is_none() {
                return Err(FormatError::new(
                    file,
                    b.line,
                    "question_id",
                    "expected the session id of the query both models answered (e.g. `81_turn1`), to match battles with our judgments",
                ));
            }
            out.push(b.value);
        }
        return Ok((StrongVerdicts::Battles(out), Vec::new()));
    }
    if has("session_id") && has("model_test") {
        return score_verdicts(file, read_scores(file, bytes)?, Vec::new());
    }
    Err(FormatError::new(
        file,
        line,
        "",
        format!("a record with the fields [{}] is none of the known shapes; expected {SHAPES}", keys.join(", ")),
    ))
}

/// Scores → a table; a repeated (session, model) keeps the first and is an error problem.
fn score_verdicts(
    file: &str,
    scores: Vec<Lined<Score>>,
    mut problems: Vec<Problem>,
) -> std::result::Result<(StrongVerdicts, Vec<Problem>), FormatError> {
    problems.extend(check_scores(scores.iter().map(|s| (file, s))));
    let mut seen = BTreeSet::new();
    let kept: Vec<Score> =
        scores.into_iter().map(|s| s.value).filter(|s| seen.insert((s.session_id.clone(), s.model_test.clone()))).collect();
    // Every score is finite (the readers check) and unique (just filtered), so the table builds.
    let table = ScoreTable::new(&kept).map_err(|e| FormatError::new(file, 0, "score", e.to_string()))?;
    Ok((StrongVerdicts::Scores(table), problems))
}

// ---------------------------------------------------------------- agreement
/// The settings a front-end chooses (the page's `{tieMargin, bootstrap, seed}`, each optional; the CLI's
/// `--tie-margin`, `--bootstrap`, `--seed`), as [`crate::rank::RankSettings`] does for ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct AgreementSettings {
    pub tie_margin: f64,
    pub bootstrap: usize,
    pub seed: u64,
}

impl Default for AgreementSettings {
    fn default() -> Self {
        Self { tie_margin: crate::rank::DEFAULT_TIE_MARGIN, bootstrap: crate::rank::DEFAULT_BOOTSTRAP, seed: crate::rank::DEFAULT_SEED }
    }
}

impl AgreementSettings {
    /// The pair rule and options of [`strong_agreement`]; a negative or non-finite tie margin is refused.
    pub fn options(&self) -> Result<(PairRule, MetaOptions)> {
        let rank = crate::rank::RankSettings { tie_margin: self.tie_margin, ..Default::default() }.options()?;
        Ok((rank.pairs, MetaOptions { bootstrap: self.bootstrap, seed: self.seed, ..Default::default() }))
    }
}

/// An estimate, three-way agreement with ½-tie-credit accuracy, over some pairs of responses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverallAgreement {
    /// Pairs of responses (to the same query) with a verdict from both judges.
    pub pairs: usize,
    /// Three-way agreement: A, B and tie must match.
    pub agreement: Estimate,
    /// 1 for the same verdict, ½ when exactly one side says tie, 0 otherwise.
    pub accuracy: Estimate,
    pub our_ties: usize,
    pub strong_ties: usize,
    /// Responses both judges scored on the compared queries (the matched responses).
    pub responses: usize,
    /// System level, over the common models' means (strong: mean score or win rate).
    pub spearman: Estimate,
    pub kendall_tau_b: Estimate,
    /// Spearman ρ of our scores against the strong scores over the matched responses (strong scores only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_spearman: Option<Estimate>,
    /// Krippendorff's interval α of the same pairs of scores (both on 1–10; seed 003's measure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_krippendorff: Option<Estimate>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelAgreement {
    pub model: String,
    /// Our mean score over the model's matched responses.
    pub ours_mean: f64,
    /// 1 + the number of common models with a strictly higher mean.
    pub ours_rank: usize,
    /// The strong judge's mean score, or (battles) its win rate.
    pub strong_mean: f64,
    pub strong_rank: usize,
    /// Pairwise agreement over the pairs this model is in.
    pub agreement: Estimate,
    pub accuracy: f64,
    pub pairs: usize,
    /// Matched responses of this model.
    pub responses: usize,
}

/// The pair of a query the judges disagree on most.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiscordantPair {
    pub model_a: String,
    pub model_b: String,
    pub ours_a: f64,
    pub ours_b: f64,
    pub ours_verdict: Winner,
    /// Absent for battles.
    pub strong_a: Option<f64>,
    pub strong_b: Option<f64>,
    pub strong_verdict: Winner,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryAgreement {
    pub session_id: String,
    /// Models with a compared pair on this query.
    pub models: Vec<String>,
    pub pairs: usize,
    pub agreement: f64,
    pub accuracy: f64,
    /// Kendall τ-b of the two judges' scores across the models; absent for battles, fewer than 3 models,
    /// or when a judge gives every model the same score.
    pub kendall_tau_b: Option<f64>,
    /// The pair with the least tie credit, then the largest score gaps; absent when the judges agree on every pair.
    pub most_discordant: Option<DiscordantPair>,
}

/// Two models: how far apart the strong judge puts them, and how well we agree with it on them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairCloseness {
    pub model_a: String,
    pub model_b: String,
    /// |difference of the strong means| (win rates for battles).
    pub strong_gap: f64,
    /// |difference of our means|.
    pub ours_gap: f64,
    /// Both judges order the two models the same way (an exact tie of means counts as its own order).
    pub order_agrees: bool,
    /// Instance-level agreement over their compared pairs; absent without any.
    pub agreement: Option<f64>,
    pub accuracy: Option<f64>,
    /// Compared pairs of the two (one per shared query for scores; battles can repeat).
    pub pairs: usize,
    /// Queries where both were compared.
    pub queries: usize,
}

/// Model pairs whose strong gap lies in `(lower, upper]` (the first bin includes `lower`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosenessBin {
    pub lower: f64,
    pub upper: f64,
    pub model_pairs: usize,
    /// Instance-level agreement pooled over the bin's compared pairs.
    pub pairs: usize,
    pub agreement: Option<f64>,
    pub accuracy: Option<f64>,
    /// Share of the bin's model pairs whose system-level order agrees.
    pub order_agreement: f64,
}

/// How far each side's records were used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Unmatched {
    /// Strong scores or battles with no counterpart on our side (or outside the compared queries).
    pub strong: usize,
    /// Our scored responses that are not matched responses.
    pub ours: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrongAgreement {
    pub strong_kind: StrongKind,
    pub rule: PairRule,
    /// Models both judges know.
    pub models: Vec<String>,
    pub only_ours: Vec<String>,
    pub only_strong: Vec<String>,
    /// Compared queries (the bootstrap's units).
    pub queries: usize,
    pub unmatched: Unmatched,
    pub overall: OverallAgreement,
    /// By strong rank, then name.
    pub per_model: Vec<ModelAgreement>,
    /// By session id.
    pub per_query: Vec<QueryAgreement>,
    /// The queries with at least one disagreement, least agreement first (ties by session id).
    pub disagreements: Vec<QueryAgreement>,
    /// One row per pair of common models, by strong gap then names.
    pub closeness: Vec<PairCloseness>,
    /// `closeness` pooled by tertiles of the strong gap (fewer bins with fewer than 3 model pairs).
    pub closeness_bins: Vec<ClosenessBin>,
}

/// One compared pair of responses.
#[derive(Debug, Clone, Copy)]
struct Obs {
    unit: usize,
    a: usize,
    b: usize,
    ours: Winner,
    strong: Winner,
    ours_ab: (f64, f64),
    strong_ab: Option<(f64, f64)>,
}

impl Obs {
    fn agree(&self) -> f64 {
        (self.ours == self.strong) as u8 as f64
    }
    fn credit(&self) -> f64 {
        match (self.ours, self.strong) {
            (o, s) if o == s => 1.0,
            (Winner::Tie, _) | (_, Winner::Tie) => 0.5,
            _ => 0.0,
        }
    }
}

/// A matched response: our score and the strong side's (score, or points and battles).
#[derive(Debug, Clone, Copy)]
struct Matched {
    unit: usize,
    model: usize,
    ours: f64,
    /// (sum, count): the strong score once, or the points over `count` battles.
    strong: (f64, f64),
}

fn strict_verdict(a: f64, b: f64) -> Winner {
    match a.total_cmp(&b) {
        std::cmp::Ordering::Greater => Winner::A,
        std::cmp::Ordering::Less => Winner::B,
        std::cmp::Ordering::Equal => Winner::Tie,
    }
}

/// Compare our scores with a strong judge's verdicts; see the module docs for every definition.
/// Fails when fewer than 2 models are common to both, or no query has a verdict from both judges.
pub fn strong_agreement(ours: &ScoreTable, strong: &StrongVerdicts, rule: &PairRule, opts: &MetaOptions) -> Result<StrongAgreement> {
    let (models, only_ours, only_strong) = common_models(ours, strong)?;
    let c = Compared::new(ours, strong, rule, &models)?;
    // Each model's mean on both sides over every query (the per-model table and the closeness rows).
    let point = c.means(&vec![1.0; c.sessions.len()]);
    let per_query = c.per_query(&models);
    let mut disagreements: Vec<QueryAgreement> = per_query.iter().filter(|q| q.agreement < 1.0).cloned().collect();
    disagreements.sort_by(|x, y| x.agreement.total_cmp(&y.agreement).then_with(|| x.session_id.cmp(&y.session_id)));
    let closeness = c.closeness(&models, &point);
    let closeness_bins = bins(&closeness);
    Ok(StrongAgreement {
        strong_kind: c.kind,
        rule: *rule,
        overall: c.overall(opts),
        per_model: c.per_model(&models, &point, opts),
        models,
        only_ours,
        only_strong,
        queries: c.sessions.len(),
        unmatched: c.unmatched,
        per_query,
        disagreements,
        closeness,
        closeness_bins,
    })
}

/// The models both judges know (sorted), and those only ours or only the strong judge knows; fewer
/// than 2 in common is an error naming both sides' models.
fn common_models(ours: &ScoreTable, strong: &StrongVerdicts) -> Result<(Vec<String>, Vec<String>, Vec<String>)> {
    let our_models: BTreeSet<&str> = ours.models.iter().map(String::as_str).collect();
    let strong_models: BTreeSet<&str> = match strong {
        StrongVerdicts::Scores(t) => t.models.iter().map(String::as_str).collect(),
        StrongVerdicts::Battles(b) => b.iter().flat_map(|x| [x.model_a.as_str(), x.model_b.as_str()]).collect(),
    };
    let models: Vec<String> = our_models.intersection(&strong_models).map(|m| m.to_string()).collect();
    let only_ours: Vec<String> = our_models.difference(&strong_models).map(|m| m.to_string()).collect();
    let only_strong: Vec<String> = strong_models.difference(&our_models).map(|m| m.to_string()).collect();
    if models.len() < 2 {
        return invalid!(
            "{} model(s) are known to both judges ({}); at least 2 are needed: check that the model names match (ours: {}; strong: {})",
            models.len(),
            list(&models),
            list(&only_ours),
            list(&only_strong)
        );
    }
    Ok((models, only_ours, only_strong))
}

/// Both judges' verdicts on the same pairs of responses: the compared pairs (`obs`) and the matched
/// responses, by query (a query is the unit the bootstrap resamples).
struct Compared {
    kind: StrongKind,
    /// The queries with a verdict from both judges, in order; a unit is an index into it.
    sessions: Vec<String>,
    obs: Vec<Obs>,
    matched: Vec<Matched>,
    n_models: usize,
    unmatched: Unmatched,
}

impl Compared {
    fn new(ours: &ScoreTable, strong: &StrongVerdicts, rule: &PairRule, models: &[String]) -> Result<Self> {
        let om: HashMap<&str, usize> = ours.models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
        let os: HashMap<&str, usize> = ours.sessions.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        let our_score = |m: usize, s: &str| os.get(s).and_then(|&si| ours.get(om[models[m].as_str()], si));
        let n_models = models.len();

        // Pairs per session (by name, so that units come out sorted), and the matched responses.
        let mut by_session: BTreeMap<String, Vec<Obs>> = BTreeMap::new();
        let mut matched: BTreeMap<(String, usize), (f64, (f64, f64))> = BTreeMap::new();
        let kind;
        match strong {
            StrongVerdicts::Scores(t) => {
                kind = StrongKind::Scores;
                let tm: HashMap<&str, usize> = t.models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
                for (si, s) in t.sessions.iter().enumerate() {
                    let both: Vec<(usize, f64, f64)> =
                        (0..n_models).filter_map(|m| Some((m, our_score(m, s)?, t.get(tm[models[m].as_str()], si)?))).collect();
                    if both.len() < 2 {
                        continue;
                    }
                    let obs = by_session.entry(s.clone()).or_default();
                    for (i, &(a, oa, sa)) in both.iter().enumerate() {
                        matched.insert((s.clone(), a), (oa, (sa, 1.0)));
                        for &(b, ob, sb) in &both[i + 1..] {
                            let ours = rule.outcome(oa, ob).unwrap_or(Winner::Tie);
                            obs.push(Obs {
                                unit: 0,
                                a,
                                b,
                                ours,
                                strong: strict_verdict(sa, sb),
                                ours_ab: (oa, ob),
                                strong_ab: Some((sa, sb)),
                            });
                        }
                    }
                }
            }
            StrongVerdicts::Battles(battles) => {
                kind = StrongKind::Battles;
                let mi: HashMap<&str, usize> = models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
                for bt in battles {
                    let Some(s) = bt.question_id.as_deref() else {
                        return invalid!("strong battles need a `question_id` (the session id) to be matched with our judgments");
                    };
                    let (Some(&a), Some(&b)) = (mi.get(bt.model_a.as_str()), mi.get(bt.model_b.as_str())) else { continue };
                    let (Some(oa), Some(ob)) = (our_score(a, s), our_score(b, s)) else { continue };
                    // Orient by model order so that pairs of the same two models line up.
                    let (a, b, oa, ob, w) = if a < b { (a, b, oa, ob, bt.winner) } else { (b, a, ob, oa, bt.winner.swapped()) };
                    let ours = rule.outcome(oa, ob).unwrap_or(Winner::Tie);
                    by_session.entry(s.to_string()).or_default().push(Obs {
                        unit: 0,
                        a,
                        b,
                        ours,
                        strong: w,
                        ours_ab: (oa, ob),
                        strong_ab: None,
                    });
                    for (m, o, pts) in [(a, oa, w.score_a()), (b, ob, 1.0 - w.score_a())] {
                        let e = matched.entry((s.to_string(), m)).or_insert((o, (0.0, 0.0)));
                        e.1 .0 += pts;
                        e.1 .1 += 1.0;
                    }
                }
            }
        }
        if by_session.is_empty() {
            return invalid!(
                "no query has verdicts from both judges on two common models ({}); check that the session ids match (MT-Bench question 81 turn 1 is `81_turn1`)",
                list(models)
            );
        }
        let sessions: Vec<String> = by_session.keys().cloned().collect();
        let unit_of: HashMap<&str, usize> = sessions.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        let obs: Vec<Obs> = by_session.values().enumerate().flat_map(|(u, v)| v.iter().map(move |o| Obs { unit: u, ..*o })).collect();
        let matched: Vec<Matched> =
            matched.into_iter().map(|((s, model), (o, st))| Matched { unit: unit_of[s.as_str()], model, ours: o, strong: st }).collect();

        // Unmatched records on each side.
        let our_total =
            (0..ours.models.len()).map(|m| (0..ours.sessions.len()).filter(|&s| ours.get(m, s).is_some()).count()).sum::<usize>();
        let (strong_used, strong_total) = match strong {
            StrongVerdicts::Scores(t) => {
                (matched.len(), (0..t.models.len()).map(|m| (0..t.sessions.len()).filter(|&s| t.get(m, s).is_some()).count()).sum())
            }
            StrongVerdicts::Battles(b) => (obs.len(), b.len()),
        };
        let unmatched = Unmatched { strong: strong_total - strong_used, ours: our_total - matched.len() };
        Ok(Compared { kind, sessions, obs, matched, n_models, unmatched })
    }

    /// Each model's mean score on both sides, every query weighted by `w` (a bootstrap resample).
    fn means(&self, w: &[f64]) -> Vec<(f64, f64)> {
        let mut acc = vec![(0.0, 0.0, 0.0, 0.0); self.n_models];
        for r in &self.matched {
            let e = &mut acc[r.model];
            e.0 += w[r.unit] * r.ours;
            e.1 += w[r.unit];
            e.2 += w[r.unit] * r.strong.0;
            e.3 += w[r.unit] * r.strong.1;
        }
        acc.into_iter().map(|(so, no, ss, ns)| (so / no, ss / ns)).collect()
    }

    /// The query weights of a resample (queries with repeats).
    fn weights(&self, idx: &[usize]) -> Vec<f64> {
        weights(self.sessions.len(), idx)
    }

    fn overall(&self, opts: &MetaOptions) -> OverallAgreement {
        let nu = self.sessions.len();
        let all_sums = unit_sums(&self.obs, (0..self.obs.len()).collect());
        // Our model means against the strong judge's, over the models with both.
        let system = |w: &[f64], f: fn(&[f64], &[f64]) -> f64| {
            let (x, y): (Vec<f64>, Vec<f64>) = self.means(w).into_iter().filter(|(a, b)| a.is_finite() && b.is_finite()).unzip();
            if x.len() < 2 {
                f64::NAN
            } else {
                f(&x, &y)
            }
        };
        // Our scores against the strong scores over the matched responses, each unit weighted.
        let instance = |w: &[f64], stat: fn(&[f64], &[f64]) -> f64| {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for r in &self.matched {
                for _ in 0..w[r.unit] as usize {
                    x.push(r.ours);
                    y.push(r.strong.0);
                }
            }
            stat(&x, &y)
        };
        let scores = self.kind == StrongKind::Scores;
        OverallAgreement {
            pairs: self.obs.len(),
            agreement: estimate(nu, opts, |idx| pooled(&self.weights(idx), &all_sums).0),
            accuracy: estimate(nu, opts, |idx| pooled(&self.weights(idx), &all_sums).1),
            our_ties: self.obs.iter().filter(|o| o.ours == Winner::Tie).count(),
            strong_ties: self.obs.iter().filter(|o| o.strong == Winner::Tie).count(),
            responses: self.matched.len(),
            spearman: estimate(nu, opts, |idx| system(&self.weights(idx), spearman)),
            kendall_tau_b: estimate(nu, opts, |idx| system(&self.weights(idx), kendall_tau_b)),
            instance_spearman: scores.then(|| estimate(nu, opts, |idx| instance(&self.weights(idx), spearman))),
            instance_krippendorff: scores.then(|| estimate(nu, opts, |idx| instance(&self.weights(idx), paired_interval_alpha))),
        }
    }

    fn per_model(&self, models: &[String], point: &[(f64, f64)], opts: &MetaOptions) -> Vec<ModelAgreement> {
        let nu = self.sessions.len();
        let (our_means, strong_means): (Vec<f64>, Vec<f64>) = point.iter().copied().unzip();
        let by_model = group(self.obs.iter().enumerate().flat_map(|(i, o)| [(o.a, i), (o.b, i)]), self.n_models);
        let mut per_model: Vec<ModelAgreement> = (0..self.n_models)
            .map(|m| {
                let sums = unit_sums(&self.obs, by_model[m].clone());
                ModelAgreement {
                    model: models[m].clone(),
                    ours_mean: point[m].0,
                    ours_rank: rank_of(point[m].0, &our_means),
                    strong_mean: point[m].1,
                    strong_rank: rank_of(point[m].1, &strong_means),
                    agreement: estimate(nu, opts, |idx| pooled(&self.weights(idx), &sums).0),
                    accuracy: pooled(&vec![1.0; nu], &sums).1,
                    pairs: by_model[m].len(),
                    responses: self.matched.iter().filter(|r| r.model == m).count(),
                }
            })
            .collect();
        per_model.sort_by(|x, y| x.strong_rank.cmp(&y.strong_rank).then_with(|| x.model.cmp(&y.model)));
        per_model
    }

    fn per_query(&self, models: &[String]) -> Vec<QueryAgreement> {
        let nu = self.sessions.len();
        let by_unit = group(self.obs.iter().enumerate().map(|(i, o)| (o.unit, i)), nu);
        let matched_by_unit = group(self.matched.iter().enumerate().map(|(i, r)| (r.unit, i)), nu);
        self.sessions
            .iter()
            .enumerate()
            .map(|(u, s)| {
                let q: Vec<&Obs> = by_unit[u].iter().map(|&i| &self.obs[i]).collect();
                let n = q.len() as f64;
                let in_q: BTreeSet<usize> = q.iter().flat_map(|o| [o.a, o.b]).collect();
                let kendall = match self.kind {
                    StrongKind::Scores if in_q.len() >= 3 => {
                        let rows: Vec<&Matched> = matched_by_unit[u].iter().map(|&i| &self.matched[i]).collect();
                        let x: Vec<f64> = rows.iter().map(|r| r.ours).collect();
                        let y: Vec<f64> = rows.iter().map(|r| r.strong.0).collect();
                        Some(kendall_tau_b(&x, &y)).filter(|t| t.is_finite())
                    }
                    _ => None,
                };
                QueryAgreement {
                    session_id: s.clone(),
                    models: in_q.iter().map(|&m| models[m].clone()).collect(),
                    pairs: q.len(),
                    agreement: q.iter().map(|o| o.agree()).sum::<f64>() / n,
                    accuracy: q.iter().map(|o| o.credit()).sum::<f64>() / n,
                    kendall_tau_b: kendall,
                    most_discordant: most_discordant(&q, models),
                }
            })
            .collect()
    }

    /// One row per pair of common models, closest (by the strong judge's gap) first.
    fn closeness(&self, models: &[String], point: &[(f64, f64)]) -> Vec<PairCloseness> {
        let mut by_pair: HashMap<(usize, usize), Vec<&Obs>> = HashMap::new();
        for o in &self.obs {
            by_pair.entry((o.a, o.b)).or_default().push(o);
        }
        let mut closeness = Vec::new();
        for a in 0..self.n_models {
            for b in a + 1..self.n_models {
                let q = by_pair.remove(&(a, b)).unwrap_or_default();
                let n = q.len() as f64;
                let (dours, dstrong) = (point[a].0 - point[b].0, point[a].1 - point[b].1);
                closeness.push(PairCloseness {
                    model_a: models[a].clone(),
                    model_b: models[b].clone(),
                    strong_gap: dstrong.abs(),
                    ours_gap: dours.abs(),
                    order_agrees: strict_verdict(dours, 0.0) == strict_verdict(dstrong, 0.0),
                    agreement: (n > 0.0).then(|| q.iter().map(|o| o.agree()).sum::<f64>() / n),
                    accuracy: (n > 0.0).then(|| q.iter().map(|o| o.credit()).sum::<f64>() / n),
                    pairs: q.len(),
                    queries: q.iter().map(|o| o.unit).collect::<BTreeSet<_>>().len(),
                });
            }
        }
        // Pairs whose means are undefined (a model without matched responses) cannot be placed.
        closeness.retain(|c| c.strong_gap.is_finite() && c.ours_gap.is_finite());
        closeness
            .sort_by(|x, y| x.strong_gap.total_cmp(&y.strong_gap).then_with(|| (&x.model_a, &x.model_b).cmp(&(&y.model_a, &y.model_b))));
        closeness
    }
}

/// A query's worst disagreement: a pair the judges order differently, opposite verdicts before a tie
/// against a verdict, then the widest gaps.
fn most_discordant(q: &[&Obs], models: &[String]) -> Option<DiscordantPair> {
    let severity = |o: &Obs| {
        let gap = (o.ours_ab.0 - o.ours_ab.1).abs() + o.strong_ab.map_or(0.0, |(a, b)| (a - b).abs());
        (o.credit(), -gap)
    };
    q.iter()
        .filter(|o| o.agree() == 0.0)
        .min_by(|x, y| {
            let (sx, sy) = (severity(x), severity(y));
            sx.0.total_cmp(&sy.0).then(sx.1.total_cmp(&sy.1)).then((x.a, x.b).cmp(&(y.a, y.b)))
        })
        .map(|o| DiscordantPair {
            model_a: models[o.a].clone(),
            model_b: models[o.b].clone(),
            ours_a: o.ours_ab.0,
            ours_b: o.ours_ab.1,
            ours_verdict: o.ours,
            strong_a: o.strong_ab.map(|p| p.0),
            strong_b: o.strong_ab.map(|p| p.1),
            strong_verdict: o.strong,
        })
}

/// Indices grouped by key (`0..n`), in the order given.
fn group(items: impl Iterator<Item = (usize, usize)>, n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); n];
    for (k, i) in items {
        out[k].push(i);
    }
    out
}

/// How often each unit occurs in a resample.
fn weights(n: usize, idx: &[usize]) -> Vec<f64> {
    let mut w = vec![0.0; n];
    for &i in idx {
        w[i] += 1.0;
    }
    w
}

/// (unit, agreements, tie credit, pairs) of the observations `members`, one entry per unit.
fn unit_sums(obs: &[Obs], members: Vec<usize>) -> Vec<(usize, f64, f64, f64)> {
    let mut out: Vec<(usize, f64, f64, f64)> = Vec::new();
    for i in members {
        let o = &obs[i];
        match out.last_mut() {
            Some(last) if last.0 == o.unit => {
                last.1 += o.agree();
                last.2 += o.credit();
                last.3 += 1.0;
            }
            _ => out.push((o.unit, o.agree(), o.credit(), 1.0)),
        }
    }
    out
}

/// Pooled (agreement, accuracy) of unit sums under unit weights; NaN without any pair.
fn pooled(w: &[f64], sums: &[(usize, f64, f64, f64)]) -> (f64, f64) {
    let (mut agree, mut credit, mut n) = (0.0, 0.0, 0.0);
    for &(u, a, c, k) in sums {
        agree += w[u] * a;
        credit += w[u] * c;
        n += w[u] * k;
    }
    if n > 0.0 {
        (agree / n, credit / n)
    } else {
        (f64::NAN, f64::NAN)
    }
}

/// 1 + the number of values strictly above `v`.
fn rank_of(v: f64, all: &[f64]) -> usize {
    1 + all.iter().filter(|&&x| x > v).count()
}

/// Tertile bins of the strong gap: k = min(3, pairs) bins with edges at the gaps' quantiles j/k (numpy's
/// linear quantile); a pair goes into the first bin whose upper edge is ≥ its gap. Empty bins (equal
/// edges) are left out.
fn bins(rows: &[PairCloseness]) -> Vec<ClosenessBin> {
    let gaps: Vec<f64> = rows.iter().map(|r| r.strong_gap).collect();
    let k = gaps.len().min(3);
    let edges: Vec<f64> = (0..=k).map(|j| stats::quantile(&gaps, j as f64 / k as f64)).collect();
    let mut out = Vec::new();
    let mut placed = vec![false; rows.len()];
    for j in 1..=k {
        let members: Vec<usize> = (0..rows.len()).filter(|&i| !placed[i] && rows[i].strong_gap <= edges[j]).collect();
        if members.is_empty() {
            continue;
        }
        let (mut pairs, mut agree, mut credit, mut ordered) = (0usize, 0.0, 0.0, 0usize);
        for &i in &members {
            placed[i] = true;
            let r = &rows[i];
            pairs += r.pairs;
            agree += r.agreement.unwrap_or(0.0) * r.pairs as f64;
            credit += r.accuracy.unwrap_or(0.0) * r.pairs as f64;
            ordered += r.order_agrees as usize;
        }
        out.push(ClosenessBin {
            lower: edges[j - 1],
            upper: edges[j],
            model_pairs: members.len(),
            pairs,
            agreement: (pairs > 0).then(|| agree / pairs as f64),
            accuracy: (pairs > 0).then(|| credit / pairs as f64),
            order_agreement: ordered as f64 / members.len() as f64,
        });
    }
    out
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(m: &str, q: &str, v: f64) -> Score {
        Score { session_id: q.into(), model_test: m.into(), score: v, judge: None }
    }

    fn no_ci() -> MetaOptions {
        MetaOptions { bootstrap: 0, ..Default::default() }
    }

    /// Three models, two queries; checked by hand below.
    fn ours() -> ScoreTable {
        ScoreTable::new(&[
            s("a", "q1", 8.0),
            s("b", "q1", 5.0),
            s("c", "q1", 5.05),
            s("a", "q2", 6.0),
            s("b", "q2", 7.0),
            s("c", "q2", 2.0),
            s("x", "q1", 1.0),
        ])
        .unwrap()
    }

    #[test]
    fn hand_checked_scores() {
        let strong = StrongVerdicts::Scores(
            ScoreTable::new(&[
                s("a", "q1", 9.0),
                s("b", "q1", 4.0),
                s("c", "q1", 4.0),
                s("a", "q2", 8.0),
                s("b", "q2", 7.0),
                s("c", "q2", 3.0),
                s("y", "q2", 5.0),
                s("a", "q3", 5.0),
            ])
            .unwrap(),
        );
        let r = strong_agreement(&ours(), &strong, &PairRule::default(), &no_ci()).unwrap();
        assert_eq!(r.models, ["a", "b", "c"]);
        assert_eq!((r.only_ours.as_slice(), r.only_strong.as_slice()), (&["x".to_string()][..], &["y".to_string()][..]));
        // q1: a>b (both), a>c (both), b~c (ours: tie by margin; strong: equal) → 3/3.
        // q2: a<b ours, a>b strong (0); a>c both; b>c both → 2/3.
        let q1 = &r.per_query[0];
        assert_eq!((q1.pairs, q1.agreement), (3, 1.0));
        let q2 = &r.per_query[1];
        assert!((q2.agreement - 2.0 / 3.0).abs() < 1e-12);
        let worst = q2.most_discordant.as_ref().unwrap();
        assert_eq!(
            (worst.model_a.as_str(), worst.model_b.as_str(), worst.ours_verdict, worst.strong_verdict),
            ("a", "b", Winner::B, Winner::A)
        );
        assert!((r.overall.agreement.value - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!((r.overall.our_ties, r.overall.strong_ties, r.overall.responses), (1, 1, 6));
        // Means: ours a 7, b 6, c 3.525; strong a 8.5, b 5.5, c 3.5: same order.
        assert!((r.overall.spearman.value - 1.0).abs() < 1e-12);
        let a = r.per_model.iter().find(|m| m.model == "a").unwrap();
        assert_eq!((a.ours_rank, a.strong_rank, a.pairs, a.responses), (1, 1, 4, 2));
        assert!((a.agreement.value - 0.75).abs() < 1e-12);
        // q2 a-b: the one discordant query first; q3 has one model, not compared; x's response, y's and a-q3 unmatched.
        assert_eq!(r.disagreements.iter().map(|q| q.session_id.as_str()).collect::<Vec<_>>(), ["q2"]);
        assert_eq!(r.unmatched, Unmatched { strong: 2, ours: 1 });
        assert_eq!(r.closeness.len(), 3);
        let ab = r.closeness.iter().find(|c| c.model_a == "a" && c.model_b == "b").unwrap();
        assert_eq!((ab.agreement, ab.queries, ab.order_agrees), (Some(0.5), 2, true));
        assert!((ab.strong_gap - 3.0).abs() < 1e-12 && (ab.ours_gap - 1.0).abs() < 1e-12);
        assert_eq!(r.closeness_bins.iter().map(|b| b.model_pairs).sum::<usize>(), 3);
        // Kendall τ-b on q2: ours (6,7,2) vs strong (8,7,3): C=2, D=1 → 1/3.
        assert!((q2.kendall_tau_b.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn battles_are_oriented_and_counted() {
        let b = |a: &str, b: &str, w, q: &str| Battle { model_a: a.into(), model_b: b.into(), winner: w, question_id: Some(q.into()) };
        // c vs a on q1 with c winning = a loses (ours says a wins): disagreement. b-a on q2: b wins both.
        let strong =
            StrongVerdicts::Battles(vec![b("c", "a", Winner::A, "q1"), b("b", "a", Winner::A, "q2"), b("a", "zz", Winner::A, "q1")]);
        let r = strong_agreement(&ours(), &strong, &PairRule::default(), &no_ci()).unwrap();
        assert_eq!(r.strong_kind, StrongKind::Battles);
        assert_eq!((r.overall.pairs, r.overall.agreement.value), (2, 0.5));
        assert!(r.overall.instance_spearman.is_none());
        assert_eq!(r.unmatched.strong, 1);
        let worst = r.per_query[0].most_discordant.as_ref().unwrap();
        assert_eq!((worst.model_a.as_str(), worst.ours_verdict, worst.strong_verdict, worst.strong_a), ("a", Winner::A, Winner::B, None));
        // Strong win rates: a 0/2, b 1/1, c 1/1.
        let a = r.per_model.iter().find(|m| m.model == "a").unwrap();
        assert_eq!((a.strong_mean, a.strong_rank), (0.0, 3));
        assert!(r.per_query.iter().all(|q| q.kendall_tau_b.is_none()));
    }

    #[test]
    fn no_common_models_or_queries_is_a_clear_error() {
        let other = StrongVerdicts::Scores(ScoreTable::new(&[s("p", "q1", 1.0), s("a", "q1", 2.0)]).unwrap());
        let e = strong_agreement(&ours(), &other, &PairRule::default(), &no_ci()).unwrap_err().to_string();
        assert!(e.contains("1 model(s)") && e.contains("check that the model names match"), "{e}");
        let apart = StrongVerdicts::Scores(ScoreTable::new(&[s("a", "81_turn1", 1.0), s("b", "81_turn1", 2.0)]).unwrap());
        let e = strong_agreement(&ours(), &apart, &PairRule::default(), &no_ci()).unwrap_err().to_string();
        assert!(e.contains("no query has verdicts from both judges"), "{e}");
    }

    #[test]
    fn bootstrap_brackets_the_point_and_is_seeded() {
        let mut rng = stats::Rng::new(3);
        let (mut o, mut t) = (Vec::new(), Vec::new());
        for q in 0..30 {
            for (m, base) in [2.0, 4.0, 6.0, 8.0].iter().enumerate() {
                let (sid, name) = (format!("q{q}"), format!("m{m}"));
                let x = base + rng.uniform(-3.0, 3.0);
                o.push(s(&name, &sid, (x + rng.uniform(-2.0, 2.0)).clamp(1.0, 10.0)));
                t.push(s(&name, &sid, x.round().clamp(1.0, 10.0)));
            }
        }
        let (o, t) = (ScoreTable::new(&o).unwrap(), StrongVerdicts::Scores(ScoreTable::new(&t).unwrap()));
        let opts = MetaOptions { bootstrap: 200, ..Default::default() };
        let r = strong_agreement(&o, &t, &PairRule::default(), &opts).unwrap();
        assert_eq!(r, strong_agreement(&o, &t, &PairRule::default(), &opts).unwrap());
        let is = r.overall.instance_spearman.unwrap();
        for e in [r.overall.agreement, r.overall.accuracy, is, r.per_model[0].agreement] {
            let (lo, hi) = (e.lower.unwrap(), e.upper.unwrap());
            assert!(lo <= e.value && e.value <= hi && lo < hi, "{e:?}");
        }
    }

    #[test]
    fn reads_every_shape() {
        let single = br#"{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": 7, "turn": 2, "judgment": "ok [[7]]"}
{"question_id": 81, "model": "n", "judge": ["gpt-4", "single-v1"], "score": -1, "turn": 2}"#;
        let (v, p) = read_strong_verdicts("s.jsonl", single).unwrap();
        let StrongVerdicts::Scores(t) = v else { panic!("scores expected") };
        assert_eq!((t.sessions.as_slice(), t.models.as_slice(), p.len()), (&["81_turn2".to_string()][..], &["m".to_string()][..], 1));

        let pair = br#"{"question_id": 81, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "model_1", "judge": ["gpt-4", "pair-v2"], "turn": 1}
{"question_id": 82, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "model_2", "turn": 1}
{"question_id": 83, "model_1": "x", "model_2": "y", "g1_winner": "tie", "g2_winner": "tie", "turn": 2}
{"question_id": 84, "model_1": "x", "model_2": "y", "g1_winner": "model_2", "g2_winner": "model_2", "turn": 1}
{"question_id": 85, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "error", "turn": 1}"#;
        let (v, p) = read_strong_verdicts("pair.jsonl", pair).unwrap();
        let StrongVerdicts::Battles(b) = v else { panic!("battles expected") };
        let w: Vec<_> = b.iter().map(|b| (b.question_id.clone().unwrap(), b.winner)).collect();
        let want = [("81_turn1", Winner::A), ("82_turn1", Winner::Tie), ("83_turn2", Winner::Tie), ("84_turn1", Winner::B)];
        assert_eq!(w, want.map(|(q, w)| (q.to_string(), w)));
        assert_eq!((p.len(), p[0].line, p[0].field.as_str()), (1, 5, "g2_winner"));

        let arena = br#"[{"model_a": "x", "model_b": "y", "winner": "tie (bothbad)", "question_id": "q1"}]"#;
        let (v, _) = read_strong_verdicts("arena.json", arena).unwrap();
        assert!(matches!(v, StrongVerdicts::Battles(b) if b[0].winner == Winner::Tie));

        let scores =
            b"{\"session_id\": \"q\", \"model_test\": \"m\", \"score\": 3}\n{\"session_id\": \"q\", \"model_test\": \"m\", \"score\": 4}\n";
        let (v, p) = read_strong_verdicts("scores.jsonl", scores).unwrap();
        assert!(matches!(v, StrongVerdicts::Scores(t) if t.get(0, 0) == Some(3.0)));
        assert_eq!((p.len(), p[0].line), (1, 2));

        // A JSON array on one line: the repeat is found by (session, model), not by line.
        let one_line = br#"[{"session_id": "q", "model_test": "m", "score": 3}, {"session_id": "q", "model_test": "m", "score": 4}]"#;
        let (v, p) = read_strong_verdicts("scores.json", one_line).unwrap();
        assert!(matches!(v, StrongVerdicts::Scores(t) if t.get(0, 0) == Some(3.0)));
        assert_eq!(p.len(), 1);

        let csv = b"model_test,session_id,score\nm,q1,4.5\nn,q1,6\n";
        let (v, _) = read_strong_verdicts("s.csv", csv).unwrap();
        assert!(matches!(v, StrongVerdicts::Scores(t) if t.models == ["m", "n"] && t.get(1, 0) == Some(6.0)));
    }

    #[test]
    fn settings_are_checked() {
        let s: AgreementSettings = serde_json::from_str(r#"{"tieMargin": 0.5}"#).unwrap();
        let (rule, opts) = s.options().unwrap();
        assert_eq!((rule.tie_margin, opts.bootstrap, opts.seed), (0.5, crate::rank::DEFAULT_BOOTSTRAP, crate::rank::DEFAULT_SEED));
        assert!(AgreementSettings { tie_margin: -1.0, ..Default::default() }.options().is_err());
        assert!(serde_json::from_str::<AgreementSettings>(r#"{"tie_margin": 0.5}"#).is_err());
    }

    #[test]
    fn malformed_input_names_file_line_and_field() {
        let err = |name: &str, bytes: &[u8]| read_strong_verdicts(name, bytes).unwrap_err();
        let e = err("pair.jsonl", b"{\"question_id\": 1, \"model_1\": \"x\", \"model_2\": \"y\", \"g1_winner\": \"model_1\", \"g2_winner\": \"model_1\", \"turn\": 1}\n{\"question_id\": 1, \"model_1\": \"x\", \"model_2\": \"y\", \"g1_winner\": \"A\", \"g2_winner\": \"tie\", \"turn\": 1}");
        assert_eq!((e.line, e.field.as_str()), (2, "g1_winner"));
        assert!(e.to_string().starts_with("pair.jsonl:2: field `g1_winner`: expected model_1, model_2, tie or error"), "{e}");
        let e = err("s.jsonl", b"{\"question_id\": 81, \"model\": \"m\", \"score\": 7, \"turn\": 1}\n{\"question_id\": 81, \"model\": \"m\", \"score\": \"high\", \"turn\": 2}");
        assert_eq!((e.line, e.field.as_str()), (2, "score"));
        let e = err("arena.jsonl", b"{\"model_a\": \"x\", \"model_b\": \"y\", \"winner\": \"model_a\"}");
        assert_eq!((e.line, e.field.as_str()), (1, "question_id"));
        let e = err("odd.jsonl", b"\n{\"who\": \"x\", \"verdict\": 1}");
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("[verdict, who]") && e.message.contains("FastChat single judgments (question_id, model, score, turn)"),
            "{e}"
        );
        let e = err("s.csv", b"session_id,model_test,score\nq1,m,7\nq1,n,good\n");
        assert_eq!((e.line, e.field.as_str()), (3, "score"));
        let e = err("s.csv", b"session,model,score\nq1,m,7\n");
        assert_eq!((e.line, e.field.as_str()), (1, "session_id"));
        assert_eq!(err("empty.jsonl", b"\n \n").line, 0);
    }
}
