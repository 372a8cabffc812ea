//! Calibration: a user's own labels refit RocketEval's supervised scorer, and the leaderboard is
//! compared before and after.
//!
//! 1. [`Label`]: one label per line of a JSONL file, either a **score** of one response on 1–10,
//!    `{"session_id", "model_test", "score"}`, or a **preference** between two models' responses to the
//!    same query, `{"session_id", "model_a", "model_b", "winner": "model_a"|"model_b"|"tie"}`; both may
//!    carry `"note"` and `"created"` (an ISO 8601 time). [`read_labels`] reads and checks a file,
//!    [`labels_jsonl`] writes one (the two round-trip).
//! 2. [`training_targets`]: labels → one target score per labelled response, per query:
//!    - a query with score labels only: the scores (a response scored twice: the later label counts,
//!      with a warning);
//!    - a query with preferences only: each model's **win share** over the query's labelled pairs,
//!      `(wins + ½·ties) / comparisons`, mapped linearly onto 1–10 as `1 + 9·share` (a Copeland-style
//!      count, like the crate's `winrate` method; on a complete round robin it orders models as
//!      Bradley–Terry does). One preference A ≻ B gives A 10 and B 1; a tie gives both 5.5;
//!    - a query with both kinds: the score labels are used and its preferences are not (reported as a
//!      warning): a score is on the absolute 1–10 scale, a preference only orders two responses, and
//!      mixing the two would put a win share beside a score as if they were the same measure.
//! 3. [`calibrate`]: unsupervised scores → ranking (before); the supervised scorer fitted on the
//!    labelled responses' item probabilities against their targets; every response scored supervised
//!    → ranking (after) with the same settings and seed. RocketEval's weight α = (ln k − KL(P‖U))/ln k
//!    is reported per query: a query whose targets are all equal (a single label, a tie, two equal
//!    scores) gets α = 0, and its labels change nothing — [`QueryCalibration::note`] says so.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::decoding::Decoding;
use crate::error::{invalid, FormatError, Result};
use crate::formats::{check_judgments, jsonl, Judgment, Lined, Problem, Score, Severity, Winner};
use crate::rank::{self, RankOptions, RankSettings, Ranking, ScoreTable};
use crate::score::supervised::{ExtraTreesParams, SupervisedScorer, TrainingExample};
use crate::score::{judgment_score, BIAS, SCALE};

/// Label classes of the 1–10 scale, for α.
pub const NUM_CLASSES: usize = 10;
/// The file name problems of labels given as a list (not read from a file) are reported under.
pub const LABELS: &str = "labels";

/// A user's label of one query's responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawLabel")]
pub struct Label {
    pub session_id: String,
    #[serde(flatten)]
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When the label was made (ISO 8601), as the labelling front-end wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

/// What a label says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Verdict {
    /// The response of `model_test` deserves `score` on 1–10.
    Score { model_test: String, score: f64 },
    /// Of the two models' responses, `winner` is better (or neither: a tie).
    Preference { model_a: String, model_b: String, winner: Winner },
}

impl Label {
    /// A score label.
    pub fn score(session_id: &str, model: &str, score: f64) -> Self {
        Self { session_id: session_id.into(), verdict: Verdict::Score { model_test: model.into(), score }, note: None, created: None }
    }
    /// A preference label.
    pub fn preference(session_id: &str, model_a: &str, model_b: &str, winner: Winner) -> Self {
        Self {
            session_id: session_id.into(),
            verdict: Verdict::Preference { model_a: model_a.into(), model_b: model_b.into(), winner },
            note: None,
            created: None,
        }
    }
}

/// A label line as written, every field optional, checked by [`RawLabel::check`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLabel {
    #[serde(deserialize_with = "crate::formats::rocketeval::id_string")]
    session_id: String,
    model_test: Option<String>,
    score: Option<f64>,
    model_a: Option<String>,
    model_b: Option<String>,
    winner: Option<String>,
    note: Option<String>,
    created: Option<String>,
}

const EITHER: &str = "a label is either a score (`model_test` and `score`) or a preference (`model_a`, `model_b` and `winner`)";

impl RawLabel {
    /// The label, or the field that is wrong and what was expected.
    fn check(self) -> Result<Label, (&'static str, String)> {
        if self.session_id.trim().is_empty() {
            return Err(("session_id", "must not be empty".into()));
        }
        let nonempty = |field: &'static str, v: Option<String>| match v {
            Some(s) if s.trim().is_empty() => Err((field, "must not be empty".to_string())),
            Some(s) => Ok(s),
            None => Err((field, format!("is missing; {EITHER}"))),
        };
        let is_score = self.model_test.is_some() || self.score.is_some();
        let is_pref = self.model_a.is_some() || self.model_b.is_some() || self.winner.is_some();
        let verdict = match (is_score, is_pref) {
            (false, false) => return Err(("", format!("neither a score nor a preference; {EITHER}"))),
            (true, true) => {
                let stray = if self.model_a.is_some() {
                    "model_a"
                } else if self.model_b.is_some() {
                    "model_b"
                } else {
                    "winner"
                };
                return Err((stray, format!("does not belong in a score label (it has `model_test` or `score`); {EITHER}")));
            }
            (true, false) => {
                let model_test = nonempty("model_test", self.model_test)?;
                let score = self.score.ok_or(("score", format!("is missing; {EITHER}")))?;
                if !(1.0..=10.0).contains(&score) {
                    return Err(("score", format!("expected a score from 1 to 10, found {score}")));
                }
                Verdict::Score { model_test, score }
            }
            (false, true) => {
                let model_a = nonempty("model_a", self.model_a)?;
                let model_b = nonempty("model_b", self.model_b)?;
                if model_a == model_b {
                    return Err(("model_b", format!("`{model_b}` is compared with itself; a preference compares two models")));
                }
                let w = nonempty("winner", self.winner)?;
                let winner = match w.as_str() {
                    "model_a" => Winner::A,
                    "model_b" => Winner::B,
                    "tie" => Winner::Tie,
                    _ => return Err(("winner", format!("expected `model_a`, `model_b` or `tie`, found `{w}`"))),
                };
                Verdict::Preference { model_a, model_b, winner }
            }
        };
        Ok(Label { session_id: self.session_id, verdict, note: self.note, created: self.created })
    }
}

impl TryFrom<RawLabel> for Label {
    type Error = String;
    fn try_from(raw: RawLabel) -> Result<Self, String> {
        raw.check().map_err(|(field, message)| if field.is_empty() { message } else { format!("field `{field}`: {message}") })
    }
}

/// Read a labels JSONL file, checking every label: a score on 1–10, two different models in a
/// preference, a known winner. Fails on the first bad line with its file, line and field.
pub fn read_labels(file: &str, bytes: &[u8]) -> Result<Vec<Lined<Label>>, FormatError> {
    let mut out = Vec::new();
    for (line, text) in jsonl::lines(file, bytes)? {
        let raw: RawLabel = jsonl::parse_value(file, line, text)?;
        let value = raw.check().map_err(|(field, message)| FormatError::new(file, line, field, message))?;
        out.push(Lined { line, value });
    }
    Ok(out)
}

/// Labels as JSONL text, one per line in the order given ([`read_labels`] reads it back).
pub fn labels_jsonl(labels: &[Label]) -> String {
    jsonl::to_jsonl(labels)
}

/// The training target of one labelled response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub model: String,
    /// On 1–10: the score label, or `1 + 9·win share` for preferences.
    pub target: f64,
    /// Indices (0-based, into the labels given) of the labels this target comes from.
    pub labels: Vec<usize>,
}

/// The targets of one query and how they were made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryTargets {
    pub session_id: String,
    /// Labels of this query, of both kinds.
    pub labels: usize,
    /// `scores` or `preferences`: which kind of label made the targets.
    pub from: TargetSource,
    /// By model name.
    pub targets: Vec<Target>,
}

crate::named_enum!(
    /// Which labels a query's targets come from.
    pub enum TargetSource, "the target source" {
        Scores = "scores",
        Preferences = "preferences",
    }
);

/// Labels → per-query training targets (see the module's documentation for the method), with
/// warnings for labels that are not used. `labels[i]` is reported at line `i + 1` of [`LABELS`].
pub fn training_targets(labels: &[Label]) -> (Vec<QueryTargets>, Vec<Problem>) {
    let mut by_query: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        by_query.entry(l.session_id.as_str()).or_default().push(i);
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for (sid, idx) in by_query {
        let (scores, prefs): (Vec<usize>, Vec<usize>) = idx.iter().partition(|&&i| matches!(labels[i].verdict, Verdict::Score { .. }));
        let mut targets: BTreeMap<&str, Target> = BTreeMap::new();
        let from = if !scores.is_empty() {
            for &i in &prefs {
                problems.push(Problem::warning(
                    LABELS,
                    i + 1,
                    sid,
                    "a preference on a query that also has score labels is not used: the query's score labels are its targets",
                ));
            }
            for &i in &scores {
                let Verdict::Score { model_test, score } = &labels[i].verdict else { unreachable!("partitioned") };
                if let Some(earlier) = targets.get(model_test.as_str()) {
                    problems.push(
                        Problem::warning(
                            LABELS,
                            i + 1,
                            sid,
                            format!("a second score of `{model_test}` (the first: line {}); this later one counts", earlier.labels[0] + 1),
                        )
                        .with_field("score"),
                    );
                }
                targets.insert(model_test, Target { model: model_test.clone(), target: *score, labels: vec![i] });
            }
            TargetSource::Scores
        } else {
            // Points (wins + ½ ties) and comparisons per model.
            let mut tally: BTreeMap<&str, (f64, f64, Vec<usize>)> = BTreeMap::new();
            for &i in &prefs {
                let Verdict::Preference { model_a, model_b, winner } = &labels[i].verdict else { unreachable!("partitioned") };
                for (m, points) in [(model_a, winner.score_a()), (model_b, 1.0 - winner.score_a())] {
                    let t = tally.entry(m).or_default();
                    t.0 += points;
                    t.1 += 1.0;
                    t.2.push(i);
                }
            }
            for (m, (points, n, labels)) in tally {
                targets.insert(m, Target { model: m.to_string(), target: BIAS + SCALE * points / n, labels });
            }
            TargetSource::Preferences
        };
        out.push(QueryTargets { session_id: sid.to_string(), labels: idx.len(), from, targets: targets.into_values().collect() });
    }
    (out, problems)
}

/// One model's place before and after calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankChange {
    pub model: String,
    pub rank_before: usize,
    pub rank_after: usize,
    pub score_before: f64,
    pub score_after: f64,
    pub lower_before: Option<f64>,
    pub upper_before: Option<f64>,
    pub lower_after: Option<f64>,
    pub upper_after: Option<f64>,
    /// `upper − lower`, when the bootstrap gave an interval.
    pub ci_width_before: Option<f64>,
    pub ci_width_after: Option<f64>,
}

/// What calibration did on one labelled query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryCalibration {
    pub session_id: String,
    /// Labels of this query, of both kinds.
    pub labels: usize,
    /// `scores` or `preferences`.
    pub from: TargetSource,
    /// The training targets (1–10) of the query's labelled responses that have a judgment.
    pub targets: Vec<Target>,
    /// RocketEval's weight of the trees' prediction: 0 when every target is equal.
    pub alpha: f64,
    /// Whether a predictor was fitted (the query has at least one labelled, judged response).
    pub trained: bool,
    /// Each checklist item's importance to the fitted predictor (seed 000's Fig. 8; summing to 1, all
    /// 0 when the trees could not split; empty when not trained).
    pub importance: Vec<f64>,
    /// Why the labels change nothing, when they do not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Rankings before and after calibration, and what changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Unsupervised scores (mean p(Yes) on 1–10).
    pub before: Ranking,
    /// Supervised scores fitted on the labels; the same responses, settings and seed.
    pub after: Ranking,
    /// One row per model, in the order of `after`.
    pub changes: Vec<RankChange>,
    /// One row per labelled query, by session id.
    pub queries: Vec<QueryCalibration>,
    /// Labels that made at least one training target.
    pub labels_used: usize,
    /// Labels not used, judgments without a score; file `labels` means the label list (line = position
    /// in it, 1-based), file `judgments` the judgment list.
    pub problems: Vec<Problem>,
}

/// The file name problems of judgments given as a list are reported under.
pub const JUDGMENTS: &str = "judgments";

/// Calibrate with ranking settings (see the module's documentation); the unsupervised scores decoded as
/// `decoding` says (`None`: as each judgment records).
pub fn calibrate(judgments: &[Judgment], labels: &[Label], settings: &RankSettings, decoding: Option<Decoding>) -> Result<Calibration> {
    calibrate_with(judgments, labels, &settings.options()?, &ExtraTreesParams::default(), decoding)
}

/// [`calibrate`] with full ranking options (an anchor) and the trees' hyper-parameters.
///
/// Errors: judgments that cannot be compared (a response judged twice, one query graded on checklists of
/// different lengths), fewer than two models, no comparisons. Labels that cannot be used are problems.
pub fn calibrate_with(
    judgments: &[Judgment],
    labels: &[Label],
    opts: &RankOptions,
    trees: &ExtraTreesParams,
    decoding: Option<Decoding>,
) -> Result<Calibration> {
    // Judgment `i` is reported at line `i + 1` of `judgments`.
    let owned: Vec<Lined<Judgment>> = judgments.iter().enumerate().map(|(i, j)| Lined { line: i + 1, value: j.clone() }).collect();
    let mut problems = check_judgments(owned.iter().map(|l| (JUDGMENTS, l)));
    if let Some(first) = problems.iter().find(|p| p.severity == Severity::Error) {
        let n = problems.iter().filter(|p| p.severity == Severity::Error).count();
        return invalid!("the judgments cannot be compared ({n} problem(s)); the first: {first}");
    }
    // Responses with an unsupervised score (at least one graded item); the others are problems and
    // take part in neither ranking.
    let mut scored: Vec<(&Judgment, f64)> = Vec::new();
    for l in &owned {
        let (s, p) = judgment_score(JUDGMENTS, l, decoding);
        problems.extend(p);
        if let Some(s) = s {
            scored.push((&judgments[l.line - 1], s.score));
        }
    }
    let by_response: HashMap<(&str, &str), &Judgment> =
        scored.iter().map(|(j, _)| ((j.session_id.as_str(), j.model_test.as_str()), *j)).collect();

    let (query_targets, label_problems) = training_targets(labels);
    problems.extend(label_problems);
    let mut examples = Vec::new();
    let mut used = vec![false; labels.len()];
    let mut kept: Vec<QueryTargets> = Vec::with_capacity(query_targets.len());
    for mut q in query_targets {
        q.targets.retain(|t| match by_response.get(&(q.session_id.as_str(), t.model.as_str())) {
            Some(j) => {
                examples.push(TrainingExample { session_id: q.session_id.clone(), probs: j.norm_probability.clone(), label: t.target });
                t.labels.iter().for_each(|&i| used[i] = true);
                true
            }
            None => {
                for &i in &t.labels {
                    problems.push(Problem::warning(
                        LABELS,
                        i + 1,
                        &q.session_id,
                        format!("`{}` has no scored judgment on this query; its label is not used for it", t.model),
                    ));
                }
                false
            }
        });
        kept.push(q);
    }
    let scorer = SupervisedScorer::fit(&examples, trees, NUM_CLASSES)?;

    let mut before = Vec::with_capacity(scored.len());
    let mut after = Vec::with_capacity(scored.len());
    for (j, unsup) in &scored {
        // Every scored judgment has a graded item and its session's checklist length (checked above).
        let sup = scorer.score(&j.session_id, &j.norm_probability)?;
        let row = |score| Score { session_id: j.session_id.clone(), model_test: j.model_test.clone(), score, judge: None };
        before.push(row(*unsup));
        after.push(row(sup.score));
    }
    let before = rank::rank(&ScoreTable::new(&before)?, opts)?;
    let after = rank::rank(&ScoreTable::new(&after)?, opts)?;

    let width = |lo: Option<f64>, hi: Option<f64>| lo.zip(hi).map(|(l, h)| h - l);
    let changes = after
        .entries
        .iter()
        .filter_map(|a| {
            let b = before.entries.iter().find(|b| b.model == a.model)?;
            Some(RankChange {
                model: a.model.clone(),
                rank_before: b.rank,
                rank_after: a.rank,
                score_before: b.score,
                score_after: a.score,
                lower_before: b.lower,
                upper_before: b.upper,
                lower_after: a.lower,
                upper_after: a.upper,
                ci_width_before: width(b.lower, b.upper),
                ci_width_after: width(a.lower, a.upper),
            })
        })
        .collect();
    let queries = kept
        .into_iter()
        .map(|q| {
            let alpha = scorer.alpha(&q.session_id).unwrap_or(0.0);
            let trained = !q.targets.is_empty();
            let note = if !trained {
                Some("no labelled response of this query has a scored judgment: its labels are not used".to_string())
            } else if alpha == 0.0 {
                Some(if q.targets.len() == 1 {
                    "a single labelled response: with nothing to compare it to, α = 0 and the label changes no score".to_string()
                } else {
                    "every labelled response got the same target: α = 0 and the labels change no score".to_string()
                })
            } else {
                None
            };
            let importance = scorer.importances(&q.session_id).map(<[f64]>::to_vec).unwrap_or_default();
            QueryCalibration {
                session_id: q.session_id,
                labels: q.labels,
                from: q.from,
                targets: q.targets,
                alpha,
                trained,
                importance,
                note,
            }
        })
        .collect();
    Ok(Calibration { before, after, changes, queries, labels_used: used.iter().filter(|u| **u).count(), problems })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judgment(sid: &str, model: &str, probs: &[f64]) -> Judgment {
        Judgment::new(sid, model, "j", probs.iter().map(|&p| Some(p)).collect())
    }

    fn no_bootstrap() -> RankSettings {
        RankSettings { bootstrap: 0, ..Default::default() }
    }

    #[test]
    fn reader_names_line_field_and_expectation() {
        let err = |text: &str| read_labels("l.jsonl", text.as_bytes()).unwrap_err();
        let ok = r#"{"session_id":"q","model_test":"m","score":7}"#;
        let e = err(&format!("{ok}\n\n{{\"session_id\":\"q\",\"model_test\":\"m\",\"score\":11}}"));
        assert_eq!((e.line, e.field.as_str()), (3, "score"));
        assert!(e.message.contains("from 1 to 10, found 11"), "{e}");
        let e = err(r#"{"session_id":"q","model_a":"x","model_b":"x","winner":"tie"}"#);
        assert_eq!(e.field, "model_b");
        assert!(e.message.contains("compared with itself"), "{e}");
        let e = err(r#"{"session_id":"q","model_a":"x","model_b":"y","winner":"x"}"#);
        assert_eq!(e.field, "winner");
        assert!(e.message.contains("`model_a`, `model_b` or `tie`, found `x`"), "{e}");
        let e = err(r#"{"session_id":"q","model_a":"x","winner":"tie"}"#);
        assert_eq!(e.field, "model_b");
        let e = err(r#"{"session_id":"q","model_test":"m","score":5,"winner":"tie"}"#);
        assert_eq!(e.field, "winner");
        let e = err(r#"{"session_id":"q","note":"hm"}"#);
        assert!(e.message.starts_with("neither a score nor a preference"), "{e}");
        let e = err(r#"{"session_id":"q","model_test":"m","score":5,"color":1}"#);
        assert!(e.message.contains("unknown field `color`"), "{e}");
        let e = err(r#"{"session_id":"q","model_test":"m","score":"high"}"#);
        assert_eq!(e.field, "score");
        let e = err(r#"{"session_id":"","model_test":"m","score":5}"#);
        assert_eq!(e.field, "session_id");
        // Labels given as JSON values (the browser's) are checked the same way.
        let v: Result<Label, _> = serde_json::from_str(r#"{"session_id":"q","model_test":"m","score":0}"#);
        assert!(v.unwrap_err().to_string().contains("field `score`: expected a score from 1 to 10"));
    }

    #[test]
    fn labels_round_trip() {
        let mut a = Label::score("q1", "m", 7.5);
        a.note = Some("clear and \"correct\"".into());
        a.created = Some("2025-01-02T03:04:05Z".into());
        let labels = vec![a, Label::preference("7", "x", "y", Winner::B), Label::preference("q1", "x", "y", Winner::Tie)];
        let text = labels_jsonl(&labels);
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(1).unwrap().contains(r#""winner":"model_b""#), "{text}");
        let back: Vec<Label> = read_labels("l", text.as_bytes()).unwrap().into_iter().map(|l| l.value).collect();
        assert_eq!(back, labels);
        // Integer session ids are read as strings, like every other record's.
        let l = read_labels("l", br#"{"session_id":12,"model_test":"m","score":1}"#).unwrap();
        assert_eq!(l[0].value.session_id, "12");
    }

    #[test]
    fn preferences_become_win_shares() {
        use Winner::*;
        // q1: a ≻ b, a ≻ c, b ≻ c, c ~ a (tie). Points/comparisons: a 2.5/3, b 1/2, c 0.5/3.
        let labels = vec![
            Label::preference("q1", "a", "b", A),
            Label::preference("q1", "c", "a", B),
            Label::preference("q1", "b", "c", A),
            Label::preference("q1", "c", "a", Tie),
            Label::score("q2", "a", 4.0),
            Label::preference("q2", "a", "b", A),
            Label::score("q2", "a", 6.0),
        ];
        let (t, p) = training_targets(&labels);
        assert_eq!(t[0].from, TargetSource::Preferences);
        let got: Vec<(&str, f64)> = t[0].targets.iter().map(|t| (t.model.as_str(), t.target)).collect();
        let want = [("a", 1.0 + 9.0 * 2.5 / 3.0), ("b", 1.0 + 9.0 * 0.5), ("c", 1.0 + 9.0 * 0.5 / 3.0)];
        for ((gm, gv), (wm, wv)) in got.iter().zip(want) {
            assert_eq!(*gm, wm);
            assert!((gv - wv).abs() < 1e-12, "{gm}: {gv} vs {wv}");
        }
        assert_eq!(t[0].targets[0].labels, [0, 1, 3]);
        // q2: scores win over the preference; the later score replaces the earlier.
        assert_eq!(t[1].from, TargetSource::Scores);
        assert_eq!(t[1].targets.len(), 1);
        assert_eq!((t[1].targets[0].target, t[1].targets[0].labels.as_slice()), (6.0, &[6][..]));
        let lines: Vec<usize> = p.iter().map(|p| p.line).collect();
        assert_eq!(lines, [6, 7]);
        assert!(p[0].message.contains("not used"));
        assert!(p[1].message.contains("(the first: line 5)"));
    }

    /// Four queries, three models, two items each: unsupervised, `a` is ahead of `b` on every query by
    /// 1 point and `c` is far behind.
    fn three_models() -> Vec<Judgment> {
        let mut js = Vec::new();
        for (i, q) in ["q1", "q2", "q3", "q4"].iter().enumerate() {
            let d = i as f64 * 0.02;
            js.push(judgment(q, "a", &[0.6 + d, 0.5 + d])); // (0.55+d)·9+1
            js.push(judgment(q, "b", &[0.5 + d, 0.38 + d])); // ≈ 1 point lower
            js.push(judgment(q, "c", &[0.1, 0.05]));
        }
        js
    }

    #[test]
    fn labels_that_prefer_b_reverse_a_and_b() {
        use Winner::*;
        let js = three_models();
        // b over a on every query: by preference on q1 and q2, by scores on q3 and q4.
        let labels = vec![
            Label::preference("q1", "a", "b", B),
            Label::preference("q2", "b", "a", A),
            Label::score("q3", "a", 2.0),
            Label::score("q3", "b", 9.0),
            Label::score("q4", "b", 9.0),
            Label::score("q4", "a", 2.0),
        ];
        for method in [rank::Method::BradleyTerry, rank::Method::Mean] {
            let c = calibrate(&js, &labels, &RankSettings { method, bootstrap: 40, ..Default::default() }, None).unwrap();
            let order = |r: &Ranking| r.entries.iter().map(|e| e.model.clone()).collect::<Vec<_>>();
            assert_eq!(order(&c.before), ["a", "b", "c"], "{method:?}");
            assert_eq!(order(&c.after), ["b", "a", "c"], "{method:?}");
            let b = c.changes.iter().find(|r| r.model == "b").unwrap();
            assert_eq!((b.rank_before, b.rank_after), (2, 1));
            assert!((b.ci_width_after.unwrap() - (b.upper_after.unwrap() - b.lower_after.unwrap())).abs() < 1e-12);
            assert_eq!(c.labels_used, 6);
            assert!(c.problems.is_empty(), "{:?}", c.problems);
            // Two distinct targets (10 and 1, or 9 and 2) on each query: α = ln2 / ln10.
            for q in &c.queries {
                assert!((q.alpha - 2f64.ln() / 10f64.ln()).abs() < 1e-12, "{q:?}");
                assert!(q.trained && q.note.is_none());
                // Each query's item weights (seed 000's Fig. 8): one per item, summing to 1.
                assert_eq!(q.importance.len(), js.iter().find(|j| j.session_id == q.session_id).unwrap().norm_probability.len());
                assert!((q.importance.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{q:?}");
            }
        }
        // The same judgments and settings give the same rankings (the seed is the settings').
        let s = RankSettings { bootstrap: 30, ..Default::default() };
        assert_eq!(calibrate(&js, &labels, &s, None).unwrap(), calibrate(&js, &labels, &s, None).unwrap());
    }

    #[test]
    fn equal_labels_and_single_labels_change_nothing() {
        let js = three_models();
        // q1: two equal scores; q2: a tie; q3: one score; q4: a label for a response without a judgment.
        let labels = vec![
            Label::score("q1", "a", 7.0),
            Label::score("q1", "b", 7.0),
            Label::preference("q2", "a", "b", Winner::Tie),
            Label::score("q3", "b", 10.0),
            Label::score("q4", "zed", 3.0),
        ];
        let c = calibrate(&js, &labels, &RankSettings { method: rank::Method::Mean, ..no_bootstrap() }, None).unwrap();
        for (b, a) in c.before.entries.iter().zip(&c.after.entries) {
            assert_eq!(b.model, a.model);
            assert!((b.score - a.score).abs() < 1e-12, "{b:?} {a:?}");
        }
        let q = |sid: &str| c.queries.iter().find(|q| q.session_id == sid).unwrap();
        assert_eq!(q("q1").alpha, 0.0);
        assert!(q("q1").note.as_deref().unwrap().contains("same target"));
        assert_eq!((q("q2").alpha, q("q2").targets[0].target), (0.0, 5.5));
        assert!(q("q3").note.as_deref().unwrap().starts_with("a single labelled response"));
        assert!(!q("q4").trained);
        assert_eq!(c.labels_used, 4);
        assert_eq!(c.problems.len(), 1);
        assert_eq!((c.problems[0].file.as_str(), c.problems[0].line), (LABELS, 5));
    }

    #[test]
    fn judgments_that_cannot_be_compared_are_an_error() {
        let mut js = three_models();
        js.push(judgment("q1", "a", &[0.1, 0.2]));
        let e = calibrate(&js, &[], &no_bootstrap(), None).unwrap_err().to_string();
        assert!(e.contains("a second judgment of `a`"), "{e}");
        // An ungraded response is a problem and is left out of both rankings.
        let mut js = three_models();
        js.push(Judgment::new("q1", "d", "j", vec![None, None]));
        js.push(judgment("q2", "d", &[0.9, 0.9]));
        let c = calibrate(&js, &[Label::score("q1", "d", 5.0)], &no_bootstrap(), None).unwrap();
        assert_eq!(c.problems.iter().filter(|p| p.file == JUDGMENTS).count(), 1);
        assert_eq!(c.problems.iter().filter(|p| p.file == LABELS).count(), 1);
        assert_eq!(c.before.entries.iter().find(|e| e.model == "d").unwrap().responses, 1);
    }
}
