//! Where item probabilities become response scores.
//!
//! - [`unsupervised_score`]: RocketEval's unsupervised score, the mean of the graded items' normalised
//!   p(Yes) mapped to 1–10 as `mean·9 + 1` (the `Mean` predictor in the authors' `score.py`).
//!   Items the judge could not grade are counted in `missing`, never replaced by 0.5.
//! - [`supervised`]: RocketEval §3.3 — per query, Extremely Randomized Trees fitted on the item
//!   probabilities of training models against their labels, blended with the mean by the KL weight α.

pub mod supervised;

use serde::Serialize;

use crate::decoding::Decoding;
use crate::error::{invalid, Result};
use crate::formats::{Judgment, Lined, Problem, Score};

/// RocketEval maps the mean probability in [0, 1] to a 1–10 score: `mean * SCALE + BIAS`.
pub const SCALE: f64 = 9.0;
pub const BIAS: f64 = 1.0;

/// A response's score and how many of its checklist items went into it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ResponseScore {
    pub score: f64,
    pub graded: usize,
    pub missing: usize,
}

/// The mean of the graded items' probabilities on the 1–10 scale.
/// Fails when no item was graded: there is no score to give, and 5.5 would be a guess.
pub fn unsupervised_score(probs: &[Option<f64>]) -> Result<ResponseScore> {
    let graded: Vec<f64> = probs.iter().flatten().copied().filter(|p| p.is_finite()).collect();
    if graded.is_empty() {
        return invalid!("no checklist item of this response was graded ({} items)", probs.len());
    }
    let mean = graded.iter().sum::<f64>() / graded.len() as f64;
    Ok(ResponseScore { score: mean * SCALE + BIAS, graded: graded.len(), missing: probs.len() - graded.len() })
}

/// The item values a judgment's score is the mean of: its probabilities decoded as `decoding` says,
/// else as the judgment records ([`Decoding::applied`]; the probabilities themselves under `expected`).
/// See [`crate::decoding`].
pub fn decoded_probabilities(j: &Judgment, decoding: Option<Decoding>) -> Vec<Option<f64>> {
    match Decoding::applied(decoding, j.decoding) {
        Decoding::Expected => j.norm_probability.clone(),
        d => {
            let graded: Vec<f64> = j.norm_probability.iter().flatten().copied().collect();
            let mut values = d.binary(&graded, &Decoding::response_key(&j.model_test, &j.session_id)).into_iter();
            j.norm_probability.iter().map(|p| p.and_then(|_| values.next())).collect()
        }
    }
}

/// Unsupervised scores of graded responses, decoded as `decoding` says (`None`: as each records). A
/// response none of whose items was graded gets no score and is reported as a problem (it would
/// otherwise be a silent 5.5).
pub fn scores_from_judgments(file: &str, judgments: &[Lined<Judgment>], decoding: Option<Decoding>) -> (Vec<Score>, Vec<Problem>) {
    let mut scores = Vec::with_capacity(judgments.len());
    let mut problems = Vec::new();
    for j in judgments {
        let (s, p) = judgment_score(file, j, decoding);
        problems.extend(p);
        if let Some(s) = s {
            scores.push(Score {
                session_id: j.value.session_id.clone(),
                model_test: j.value.model_test.clone(),
                score: s.score,
                judge: Some(j.value.judge.clone()).filter(|s| !s.is_empty()),
            });
        }
    }
    (scores, problems)
}

/// The unsupervised score of one judgment read from `file` (decoded as for [`decoded_probabilities`]),
/// and its problem if it has one: an error
/// (and no score) when no item was graded, a warning when some were not; both at the judgment's line,
/// field `norm_probability`.
pub fn judgment_score(file: &str, j: &Lined<Judgment>, decoding: Option<Decoding>) -> (Option<ResponseScore>, Option<Problem>) {
    let problem = |p: fn(&str, usize, &str, String) -> Problem, message: String| {
        Some(p(file, j.line, &j.value.session_id, message).with_field("norm_probability"))
    };
    match unsupervised_score(&decoded_probabilities(&j.value, decoding)) {
        Ok(s) if s.missing > 0 => (
            Some(s),
            problem(
                Problem::warning,
                format!("{} of {} items have no probability; the score is the mean of the others", s.missing, s.missing + s.graded),
            ),
        ),
        Ok(s) => (Some(s), None),
        Err(e) => (None, problem(Problem::error, e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_on_the_one_to_ten_scale() {
        let s = unsupervised_score(&[Some(1.0), Some(0.0), Some(0.5)]).unwrap();
        assert_eq!((s.score, s.graded, s.missing), (5.5, 3, 0));
        assert_eq!(unsupervised_score(&[Some(1.0)]).unwrap().score, 10.0);
        assert!(unsupervised_score(&[None, None]).is_err());
        assert!(unsupervised_score(&[]).is_err());
    }
}
