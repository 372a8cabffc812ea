//! What a checklist-grading run keeps from an earlier one: a stored judgment counts as graded when it
//! was made by this run's judge, with its prompt wording and decoding, against the response's checklist
//! as it is now. `rocketjudge grade` asks here when it resumes an `--out` folder (and refuses to mix
//! records made otherwise); the tab asks here, through the worker's `pending` request, which responses
//! are left to grade (and grades again a response whose stored judgment is out of date).

use serde::Deserialize;

use crate::decoding::Decoding;
use crate::formats::Judgment;
use crate::prompt::GRADING_PROMPT_VERSION;

/// How a grading run makes its judgments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GradingSettings {
    /// The judge's name, as judgments record it.
    pub judge: String,
    /// The grading prompt's version (`prompt::PromptStyle::version`).
    pub prompt_version: String,
    /// The decoding the run records (`None`: the expectation).
    #[serde(default)]
    pub decoding: Option<Decoding>,
}

impl GradingSettings {
    /// Why `j` does not count as this run's grade of a response whose checklist has `items` items, or
    /// `None` when it does. A judgment without a prompt version was made with RocketEval's wording.
    pub fn mismatch(&self, j: &Judgment, items: usize) -> Option<String> {
        let version = j.prompt_version.as_deref().unwrap_or(GRADING_PROMPT_VERSION);
        if j.judge != self.judge {
            Some(format!("judged by `{}`, but this run's judge is `{}`", j.judge, self.judge))
        } else if version != self.prompt_version {
            Some(format!("graded with the prompt `{version}`, but this run's is `{}`", self.prompt_version))
        } else if j.decoding != self.decoding {
            Some(format!(
                "decoded as `{}`, but this run's decoding is `{}`",
                j.decoding.unwrap_or_default().label(),
                self.decoding.unwrap_or_default().label()
            ))
        } else if j.norm_probability.len() != items {
            Some(format!("graded on {} checklist items, but the checklist now has {items}", j.norm_probability.len()))
        } else {
            None
        }
    }

    /// Whether `j` is this run's grade of a response whose checklist has `items` items.
    pub fn covers(&self, j: &Judgment, items: usize) -> bool {
        self.mismatch(j, items).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> GradingSettings {
        GradingSettings { judge: "j".into(), prompt_version: GRADING_PROMPT_VERSION.into(), decoding: None }
    }

    #[test]
    fn a_judgment_counts_only_when_judge_prompt_decoding_and_checklist_agree() {
        let s = settings();
        let j = Judgment::new("q", "m", "j", vec![Some(0.5), None]);
        assert!(s.covers(&j, 2));
        // A missing prompt version is RocketEval's wording; a stored `null` probability is still an item.
        assert!(s.covers(&Judgment { prompt_version: Some(GRADING_PROMPT_VERSION.into()), ..j.clone() }, 2));
        let why = |j: &Judgment, items| s.mismatch(j, items).unwrap();
        assert!(why(&j, 3).contains("2 checklist items, but the checklist now has 3"));
        assert!(why(&Judgment { judge: "other".into(), ..j.clone() }, 2).contains("judged by `other`"));
        assert!(why(&Judgment { prompt_version: Some("v0".into()), ..j.clone() }, 2).contains("prompt `v0`"));
        assert!(why(&Judgment { decoding: Some(Decoding::Greedy), ..j.clone() }, 2).contains("decoded as `greedy`"));
        let greedy = GradingSettings { decoding: Some(Decoding::Greedy), ..settings() };
        assert!(greedy.mismatch(&j, 2).unwrap().contains("this run's decoding is `greedy`"));
    }
}
