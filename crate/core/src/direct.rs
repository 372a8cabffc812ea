//! Where a response becomes one Direct score: the baseline without checklist items (seed 000's
//! "Direct"), with the judge-design knobs of seeds 002–004 — the instruction level, the checklist in
//! the prompt (always, never, or where the judge is unsure), the decoding, and the prompt-free
//! perplexity score.
//!
//! A [`DirectScore`] is one line of `rocketjudge direct`'s output and of the page's Direct results:
//! the digit distribution 0–9 the judge gave (or, for `perplexity`, the response's mean token
//! log-probability) and how it was made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decoding::{score_spread, Decoding};
use crate::error::{invalid, FormatError};
use crate::formats::{rocketeval::Score, Lined};
use crate::pairwise::ChecklistUse;
use crate::prompt::{DirectInstruction, DirectPrompt, DirectScale};

crate::named_enum!(
    /// Whether a Direct prompt carries the query's reference answer (seeds 003 and 004 judge without one).
    #[derive(Default)]
    pub enum ReferenceUse, "the reference-answer use" {
        /// As each prompt's paper does (the CLI's and the page's default): RocketEval's Direct prompt
        /// with it (its MT-Bench setting), seed 004's instruction levels without.
        Paper = "paper",
        /// With the query's reference answer, where it has one. The default of settings that do not
        /// say, as every Direct prompt was made before this choice existed (so their stored records
        /// keep their settings' id).
        #[default]
        Include = "include",
        /// Never.
        Omit = "omit",
    }
);

impl ReferenceUse {
    /// What a user who does not choose gets (the CLI's `--reference-answer` and the page's menu): as
    /// each prompt's paper does. (A settings record that does not say means [`ReferenceUse::Include`].)
    pub const CHOSEN_BY_DEFAULT: ReferenceUse = ReferenceUse::Paper;

    fn is_default(&self) -> bool {
        *self == ReferenceUse::default()
    }
}

/// Seed 002's direct-scoring threshold default on our 0–9 scale: the checklist is used when the
/// standard deviation of the plain prompt's digit distribution is at least 1.5.
pub const DEFAULT_DIRECT_K: f64 = 1.5;

/// One response's Direct score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectScore {
    pub session_id: String,
    pub model_test: String,
    /// The decoded digit (0–9, or 1–5 on that scale), or for `perplexity` the mean token log-probability, −ln(perplexity):
    /// higher is better, and within a query it orders responses exactly as −perplexity does.
    pub score: f64,
    pub judge: String,
    /// The ten digits' probabilities (absent for `perplexity`; zero outside the scale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digits: Option<[f64; 10]>,
    /// The scale asked for, when not 0–9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<DirectScale>,
    /// The prompt's version (`rocketeval-direct-v1`, `generic-direct-v1`, …, `perplexity-v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// The user's rubric section (`criteria`: the criterion named; `rubric`: its definition and score
    /// bands), absent for the built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
    /// Whether the prompt carried the query's reference answer where it has one (absent for perplexity,
    /// and in lines written before this was recorded, which always did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<bool>,
    /// Whether the query's checklist was in the prompt, and by which rule.
    #[serde(default)]
    pub checklist: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checklist_use: Option<ChecklistUse>,
    /// Selective use: the standard deviation of the plain prompt's digit distribution that decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoding: Option<Decoding>,
    /// Perplexity: seed 004's value, exp(−mean token log-probability) (lower: the judge finds the
    /// response more predictable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perplexity: Option<f64>,
    /// Perplexity: the response tokens scored, and those cut to fit the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_tokens: Option<usize>,
}

/// How Direct scores are made: the instruction level, the reference answer's use, the checklist rule
/// (with selective use's threshold `k`) and the decoding.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DirectSettings {
    pub instruction: DirectInstruction,
    /// 0–9 (not written, so settings from before this choice keep their id) or 1–5.
    #[serde(skip_serializing_if = "DirectScale::is_default")]
    pub scale: DirectScale,
    /// The rubric section for `criteria` (the criterion named, seed 004's setting 3) or `rubric` (its
    /// definition and score bands, setting 4) in place of the built-in one (MT-Bench's six criteria).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
    /// Seed 003's instance rubrics: a query's own rubric section by session id, in place of `rubric`
    /// for that query (not written when there are none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rubrics: BTreeMap<String, String>,
    /// Checked settings hold `include` or `omit` (`paper` resolved); `include` is not written.
    #[serde(skip_serializing_if = "ReferenceUse::is_default")]
    pub reference: ReferenceUse,
    pub checklist: ChecklistUse,
    pub k: Option<f64>,
    pub decoding: Option<Decoding>,
}

impl DirectSettings {
    /// The settings, checked: perplexity has no prompt to put a checklist or a reference answer in and
    /// no answer to decode; a threshold belongs to selective use only. Selective use without a
    /// threshold gets [`DEFAULT_DIRECT_K`]; `paper` becomes what it means for the instruction.
    pub fn checked(mut self) -> crate::Result<Self> {
        if !self.instruction.has_prompt()
            && (self.decoding.is_some() || self.checklist != ChecklistUse::Never || self.reference == ReferenceUse::Include)
        {
            return invalid!(
                "the perplexity score has no prompt and no answer to decode: the checklist, the reference answer and the decoding do not apply"
            );
        }
        if self.scale != DirectScale::ZeroToNine && !self.instruction.has_scale() {
            return invalid!(
                "the `{}` score has no {} scale: RocketEval's prompt scores 0–9, perplexity is no score asked for",
                self.instruction,
                self.scale
            );
        }
        self.k = self.checklist.threshold(self.k, DEFAULT_DIRECT_K)?;
        self.reference = if self.with_reference() { ReferenceUse::Include } else { ReferenceUse::Omit };
        if (self.rubric.is_some() || !self.rubrics.is_empty()) && !self.instruction.has_rubric() {
            return invalid!(
                "a rubric of your own replaces the `criteria`, `rubric` or `rubric-ends` level's, not `{}`'s",
                self.instruction
            );
        }
        if self.rubric.as_ref().is_some_and(|t| t.trim().is_empty()) {
            return invalid!("the rubric is empty: name the criterion (criteria) or write its definition and score bands (rubric)");
        }
        if let Some((session, _)) = self.rubrics.iter().find(|(_, t)| t.trim().is_empty()) {
            return invalid!("the rubric of query `{session}` is empty: name the criterion or write its definition and score bands");
        }
        Ok(self)
    }

    /// Whether a plain prompt's digit distribution sends the response to the guided prompt.
    pub fn guide(&self, plain: &[f64; 10]) -> bool {
        match self.checklist {
            ChecklistUse::Always => true,
            ChecklistUse::Never => false,
            ChecklistUse::Selective => score_spread(plain) >= self.k.unwrap_or(DEFAULT_DIRECT_K),
        }
    }

    /// The user's rubric section for the query `session`: its own, else the run's (`None`: the built-in one).
    pub fn rubric_for(&self, session: &str) -> Option<&str> {
        self.rubrics.get(session).or(self.rubric.as_ref()).map(String::as_str)
    }

    /// What the prompt for the query `session` asks: the level, the scale and the user's rubric.
    pub fn prompt(&self, session: &str) -> DirectPrompt<'_> {
        DirectPrompt { instruction: self.instruction, scale: self.scale, rubric: self.rubric_for(session) }
    }

    /// What a line made with these settings records as `scale` (nothing for 0–9).
    pub fn recorded_scale(&self) -> Option<DirectScale> {
        (!self.scale.is_default()).then_some(self.scale)
    }

    /// Whether the prompt carries the query's reference answer (where it has one).
    pub fn with_reference(&self) -> bool {
        match self.reference {
            ReferenceUse::Include => true,
            ReferenceUse::Omit => false,
            ReferenceUse::Paper => self.instruction == DirectInstruction::RocketEval,
        }
    }

    /// What a line made with these settings records as `reference` (nothing where there is no prompt:
    /// perplexity).
    pub fn recorded_reference(&self) -> Option<bool> {
        self.instruction.has_prompt().then(|| self.with_reference())
    }

    /// Whether `row` was made with these settings (what a resumed run checks; a line without
    /// `reference` was made with the reference answer).
    pub fn made(&self, row: &DirectScore) -> bool {
        row.prompt_version.as_deref().unwrap_or(DirectInstruction::RocketEval.version()) == self.instruction.version()
            && row.checklist_use.unwrap_or(ChecklistUse::Never) == self.checklist
            && row.decoding == self.decoding
            && row.rubric.as_deref() == self.rubric_for(&row.session_id)
            && row.scale.unwrap_or_default() == self.scale
            && self.recorded_reference().is_none_or(|r| row.reference.unwrap_or(true) == r)
    }
}

impl DirectScore {
    /// The score decoded by `decoding` (the line's own when `None`); perplexity scores as they are.
    pub fn decoded(&self, decoding: Option<Decoding>) -> f64 {
        match (&self.digits, decoding) {
            (Some(d), Some(dec)) => dec.score(d, &Decoding::response_key(&self.model_test, &self.session_id)),
            _ => self.score,
        }
    }

    /// As a response score for ranking (`decoding` as in [`Self::decoded`]).
    pub fn as_score(&self, decoding: Option<Decoding>) -> Score {
        Score {
            session_id: self.session_id.clone(),
            model_test: self.model_test.clone(),
            score: self.decoded(decoding),
            judge: Some(self.judge.clone()),
        }
    }
}

/// One query's own rubric (seed 003 judges each instance by its own score rubric): a line of
/// `direct --rubrics FILE`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRubric {
    pub session_id: String,
    pub rubric: String,
}

/// Read per-query rubrics (JSONL `{session_id, rubric}`): one per query, none empty.
pub fn read_query_rubrics(file: &str, bytes: &[u8]) -> std::result::Result<Vec<Lined<QueryRubric>>, FormatError> {
    let rows = crate::formats::jsonl::read_jsonl::<QueryRubric>(file, bytes)?;
    let mut seen = std::collections::HashMap::new();
    for r in &rows {
        crate::formats::limits::check_rubric(file, r.line, "rubric", &r.value.rubric)?;
        if r.value.rubric.trim().is_empty() {
            return Err(FormatError::new(
                file,
                r.line,
                "rubric",
                "expected the query's rubric (the criterion, or its definition and score bands), found an empty one",
            ));
        }
        if let Some(first) = seen.insert(r.value.session_id.as_str(), r.line) {
            return Err(FormatError::new(
                file,
                r.line,
                "session_id",
                format!("expected one rubric per query; `{}` has one on line {first}", r.value.session_id),
            ));
        }
    }
    Ok(rows)
}

/// Read Direct scores (JSONL), checking the digit probabilities.
pub fn read_direct_scores(file: &str, bytes: &[u8]) -> std::result::Result<Vec<Lined<DirectScore>>, FormatError> {
    let rows = crate::formats::jsonl::read_jsonl::<DirectScore>(file, bytes)?;
    for r in &rows {
        if let Some(d) = &r.value.digits {
            if d.iter().any(|p| !(0.0..=1.0).contains(p)) || d.iter().sum::<f64>() <= 0.0 {
                return Err(FormatError::new(file, r.line, "digits", "expected ten probabilities in [0, 1], not all zero"));
            }
        }
        if !r.value.score.is_finite() {
            return Err(FormatError::new(file, r.line, "score", format!("expected a number, found {}", r.value.score)));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(digits: Option<[f64; 10]>) -> DirectScore {
        DirectScore {
            session_id: "s".into(),
            model_test: "m".into(),
            score: 4.5,
            judge: "j".into(),
            digits,
            prompt_version: None,
            scale: None,
            rubric: None,
            reference: None,
            checklist: false,
            checklist_use: None,
            spread: None,
            decoding: None,
            perplexity: None,
            tokens: None,
            truncated_tokens: None,
        }
    }

    #[test]
    fn query_rubrics_are_one_per_query_and_not_empty() {
        let ok = read_query_rubrics(
            "r.jsonl",
            b"{\"session_id\":\"a\",\"rubric\":\"Logicality\"}\n{\"session_id\":\"b\",\"rubric\":\"Fluency\"}\n",
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        let twice = read_query_rubrics("r.jsonl", b"{\"session_id\":\"a\",\"rubric\":\"x\"}\n{\"session_id\":\"a\",\"rubric\":\"y\"}\n")
            .unwrap_err();
        assert!(twice.to_string().contains("r.jsonl") && twice.to_string().contains("line 1"), "{twice}");
        let empty = read_query_rubrics("r.jsonl", b"{\"session_id\":\"a\",\"rubric\":\" \"}\n").unwrap_err();
        assert!(empty.to_string().contains("rubric"), "{empty}");
        assert!(read_query_rubrics("r.jsonl", b"{\"session_id\":\"a\",\"text\":\"x\"}\n").is_err());
    }

    #[test]
    fn the_scale_is_recorded_checked_on_resume_and_refused_where_fixed() {
        let s = |instruction, scale| DirectSettings { instruction, scale, ..Default::default() }.checked();
        assert!(s(DirectInstruction::RocketEval, DirectScale::OneToFive).is_err());
        assert!(s(DirectInstruction::Perplexity, DirectScale::OneToFive).is_err());
        let likert = s(DirectInstruction::RubricEnds, DirectScale::OneToFive).unwrap();
        assert_eq!(likert.recorded_scale(), Some(DirectScale::OneToFive));
        // 0–9 is not written: settings stored before the choice keep their id.
        assert!(!serde_json::to_string(&s(DirectInstruction::Generic, DirectScale::ZeroToNine).unwrap()).unwrap().contains("scale"));
        let line = DirectScore { prompt_version: Some(DirectInstruction::RubricEnds.version().into()), ..row(None) };
        assert!(!likert.made(&line));
        assert!(likert.made(&DirectScore { scale: Some(DirectScale::OneToFive), ..line }));
    }

    #[test]
    fn settings_refuse_nonsense_and_fill_the_threshold() {
        let s =
            |instruction, checklist, k, decoding| DirectSettings { instruction, checklist, k, decoding, ..Default::default() }.checked();
        assert!(s(DirectInstruction::Perplexity, ChecklistUse::Always, None, None).is_err());
        assert!(s(DirectInstruction::Perplexity, ChecklistUse::Never, None, Some(Decoding::Greedy)).is_err());
        assert!(s(DirectInstruction::Generic, ChecklistUse::Never, Some(1.0), None).is_err());
        assert!(s(DirectInstruction::Generic, ChecklistUse::Selective, Some(-1.0), None).is_err());
        assert_eq!(s(DirectInstruction::Generic, ChecklistUse::Selective, None, None).unwrap().k, Some(DEFAULT_DIRECT_K));
    }

    #[test]
    fn the_reference_answer_is_used_as_each_paper_does_unless_chosen() {
        let s = |instruction, reference| DirectSettings { instruction, reference, ..Default::default() };
        assert!(s(DirectInstruction::RocketEval, ReferenceUse::Paper).with_reference());
        // Seed 004's levels judge without one: before this switch they silently got it.
        assert!(!s(DirectInstruction::Generic, ReferenceUse::Paper).with_reference());
        assert!(s(DirectInstruction::Rubric, ReferenceUse::Include).with_reference());
        assert!(!s(DirectInstruction::RocketEval, ReferenceUse::Omit).with_reference());
        assert!(s(DirectInstruction::Perplexity, ReferenceUse::Include).checked().is_err());
        // Checked settings say what was done; with the reference, as before the switch, they serialize
        // as they did then (a stored design keeps its id).
        assert_eq!(s(DirectInstruction::Generic, ReferenceUse::Paper).checked().unwrap().reference, ReferenceUse::Omit);
        let rocketeval = s(DirectInstruction::RocketEval, ReferenceUse::Paper).checked().unwrap();
        assert_eq!(
            serde_json::to_string(&rocketeval).unwrap(),
            r#"{"instruction":"rocketeval","checklist":"never","k":null,"decoding":null}"#
        );
        assert_eq!(s(DirectInstruction::Perplexity, ReferenceUse::Paper).recorded_reference(), None);
        // A line from before the switch was made with the reference: the generic level now differs.
        let old = DirectScore { prompt_version: Some(DirectInstruction::Generic.version().into()), ..row(None) };
        assert!(!s(DirectInstruction::Generic, ReferenceUse::Paper).made(&old));
        assert!(s(DirectInstruction::Generic, ReferenceUse::Include).made(&old));
        assert!(s(DirectInstruction::Generic, ReferenceUse::Paper).made(&DirectScore { reference: Some(false), ..old }));
        // A rubric of one's own belongs to the criteria and rubric levels, and is recorded.
        let own = |instruction, text: &str| DirectSettings { instruction, rubric: Some(text.into()), ..Default::default() }.checked();
        assert!(own(DirectInstruction::Generic, "Logicality").is_err() && own(DirectInstruction::Criteria, " ").is_err());
        let logicality = own(DirectInstruction::Criteria, "Logicality").unwrap();
        let line = DirectScore { prompt_version: Some(DirectInstruction::Criteria.version().into()), ..row(None) };
        assert!(!logicality.made(&line) && logicality.made(&DirectScore { rubric: Some("Logicality".into()), ..line.clone() }));
        // A query's own rubric wins over the run's, for that query only; empty ones are refused.
        let per_query = |rubrics: &[(&str, &str)]| DirectSettings {
            rubrics: rubrics.iter().map(|(s, t)| (s.to_string(), t.to_string())).collect(),
            ..logicality.clone()
        };
        let mixed = per_query(&[("s", "Fluency")]).checked().unwrap();
        assert_eq!((mixed.rubric_for("s"), mixed.rubric_for("other")), (Some("Fluency"), Some("Logicality")));
        assert!(mixed.made(&DirectScore { rubric: Some("Fluency".into()), ..line.clone() }));
        assert!(!mixed.made(&DirectScore { rubric: Some("Logicality".into()), ..line }));
        assert!(per_query(&[("s", " ")]).checked().is_err());
        assert!(DirectSettings { instruction: DirectInstruction::Generic, ..per_query(&[("s", "Fluency")]) }.checked().is_err());
    }

    #[test]
    fn selective_use_guides_spread_distributions_only() {
        let s = DirectSettings { checklist: ChecklistUse::Selective, k: Some(1.0), ..Default::default() };
        let mut peaked = [0.0; 10];
        peaked[7] = 1.0;
        let mut split = [0.0; 10];
        (split[2], split[8]) = (0.5, 0.5);
        assert!(!s.guide(&peaked));
        assert!(s.guide(&split)); // standard deviation 3
    }

    #[test]
    fn decoding_overrides_the_line_and_leaves_perplexity_alone() {
        let mut d = [0.0; 10];
        (d[3], d[6]) = (0.4, 0.6);
        let r = row(Some(d));
        assert_eq!(r.decoded(None), 4.5);
        assert_eq!(r.decoded(Some(Decoding::Greedy)), 6.0);
        assert!((r.decoded(Some(Decoding::Expected)) - 4.8).abs() < 1e-12);
        assert_eq!(row(None).decoded(Some(Decoding::Greedy)), 4.5);
    }

    #[test]
    fn bad_lines_name_the_field() {
        let e =
            read_direct_scores("f.jsonl", br#"{"session_id":"s","model_test":"m","score":1,"judge":"j","digits":[2,0,0,0,0,0,0,0,0,0]}"#)
                .unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (1, "digits"));
    }
}
