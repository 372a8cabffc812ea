//! RocketEval's supervised score predictor (seed 000 §3.3, authors' `process/score.py`).
//!
//! For every query separately: the item probabilities of the training models' responses are the
//! features, their labels (e.g. GPT-4 scores 1–10) the targets. An Extremely Randomized Trees
//! regressor (Geurts et al. 2006; the authors use scikit-learn's with `n_estimators=10, max_depth=2,
//! random_state=42`) predicts a test response's score, and the prediction is blended with the
//! unsupervised mean by the weight factor α of Eq. 3:
//!
//! `s_sup = (1 − α)·s_unsup + α·f_sup(p)`, `α = (ε − KL(P_r ‖ U)) / ε`, `ε = max KL = ln(num_classes)`,
//!
//! where `P_r` is the distribution of the query's labels. α is 1 when the labels spread evenly over
//! the score range and 0 when every training model got the same label (nothing to learn from).
//!
//! The trees are our own implementation of scikit-learn's random splitter (all features considered,
//! thresholds drawn uniformly between a feature's min and max in the node, best variance reduction
//! kept), seeded with our RNG; with the same seed the result is the same on every platform, but it is
//! not bit-identical to scikit-learn's random stream. The golden test compares against scikit-learn
//! with many trees, where both converge to the same expectation.

use std::collections::HashMap;

use serde::Serialize;

use super::{unsupervised_score, BIAS, SCALE};
use crate::error::{invalid, Result};
use crate::stats::Rng;

/// Hyper-parameters; the defaults are RocketEval's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExtraTreesParams {
    pub n_estimators: usize,
    pub max_depth: Option<usize>,
    pub min_samples_split: usize,
    pub seed: u64,
}

impl Default for ExtraTreesParams {
    fn default() -> Self {
        Self { n_estimators: 10, max_depth: Some(2), min_samples_split: 2, seed: 42 }
    }
}

/// scikit-learn treats features whose range in a node is at most this as constant.
const FEATURE_THRESHOLD: f64 = 1e-7;

#[derive(Debug, Clone)]
enum Node {
    Leaf(f64),
    Split { feature: usize, threshold: f64, left: usize, right: usize },
}

#[derive(Debug, Clone)]
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn predict(&self, x: &[f64]) -> f64 {
        let mut i = 0;
        loop {
            match self.nodes[i] {
                Node::Leaf(v) => return v,
                Node::Split { feature, threshold, left, right } => i = if x[feature] <= threshold { left } else { right },
            }
        }
    }
}

/// An ensemble of extremely randomized regression trees.
#[derive(Debug, Clone)]
pub struct ExtraTrees {
    trees: Vec<Tree>,
    importances: Vec<f64>,
}

impl ExtraTrees {
    /// Fit on rows `x` (all of the same length) and targets `y`.
    pub fn fit(x: &[Vec<f64>], y: &[f64], params: &ExtraTreesParams) -> Result<Self> {
        if x.is_empty() || x.len() != y.len() {
            return invalid!("extra trees need as many target values as rows ({} rows, {} targets)", x.len(), y.len());
        }
        let width = x[0].len();
        if x.iter().any(|r| r.len() != width) {
            return invalid!("extra trees need rows of equal length");
        }
        if params.n_estimators == 0 {
            return invalid!("n_estimators must be at least 1");
        }
        let mut rng = Rng::new(params.seed);
        let mut importances = vec![0.0; width];
        let trees = (0..params.n_estimators)
            .map(|_| {
                let mut nodes = Vec::new();
                let mut decrease = vec![0.0; width];
                let idx: Vec<usize> = (0..x.len()).collect();
                grow(x, y, idx, 0, params, &mut rng, &mut nodes, &mut decrease);
                // scikit-learn's mean decrease in impurity: each tree's normalised to sum 1 (a tree
                // without a split adds nothing), averaged, normalised again.
                let total: f64 = decrease.iter().sum();
                if total > 0.0 {
                    importances.iter_mut().zip(&decrease).for_each(|(i, d)| *i += d / total);
                }
                Tree { nodes }
            })
            .collect();
        let total: f64 = importances.iter().sum();
        if total > 0.0 {
            importances.iter_mut().for_each(|i| *i /= total);
        }
        Ok(Self { trees, importances })
    }

    pub fn predict(&self, x: &[f64]) -> f64 {
        self.trees.iter().map(|t| t.predict(x)).sum::<f64>() / self.trees.len() as f64
    }

    /// Each feature's importance: its mean decrease in squared error over the splits that use it
    /// (scikit-learn's `feature_importances_`), summing to 1; all 0 when no tree could split.
    pub fn importances(&self) -> &[f64] {
        &self.importances
    }
}

/// The sum of squared deviations from the mean of `y` over `idx`.
fn sse(y: &[f64], idx: &[usize]) -> f64 {
    let mean = idx.iter().map(|&i| y[i]).sum::<f64>() / idx.len() as f64;
    idx.iter().map(|&i| (y[i] - mean).powi(2)).sum()
}

/// Grow the subtree of samples `idx`, push its nodes, add each split's decrease in squared error to
/// its feature's entry of `decrease`, return the index of its root.
#[allow(clippy::too_many_arguments)]
fn grow(
    x: &[Vec<f64>],
    y: &[f64],
    idx: Vec<usize>,
    depth: usize,
    params: &ExtraTreesParams,
    rng: &mut Rng,
    nodes: &mut Vec<Node>,
    decrease: &mut [f64],
) -> usize {
    let n = idx.len() as f64;
    let mean = idx.iter().map(|&i| y[i]).sum::<f64>() / n;
    let sse_here = sse(y, &idx);
    let at_limit = params.max_depth.is_some_and(|d| depth >= d) || idx.len() < params.min_samples_split;
    let me = nodes.len();
    nodes.push(Node::Leaf(mean));
    if at_limit || sse_here <= f64::EPSILON * n {
        return me;
    }
    // Random splitter: one uniform threshold per non-constant feature, best variance reduction wins.
    let mut features: Vec<usize> = (0..x[0].len()).collect();
    rng.shuffle(&mut features);
    let mut best: Option<(f64, usize, f64)> = None;
    for f in features {
        let (lo, hi) = idx.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| (lo.min(x[i][f]), hi.max(x[i][f])));
        if hi <= lo + FEATURE_THRESHOLD {
            continue;
        }
        let mut t = rng.uniform(lo, hi);
        if t >= hi {
            t = lo;
        }
        // Proxy of the impurity improvement: Σ_left²/n_left + Σ_right²/n_right (larger is better).
        let (mut sl, mut nl, mut sr, mut nr) = (0.0, 0.0, 0.0, 0.0);
        for &i in &idx {
            if x[i][f] <= t {
                sl += y[i];
                nl += 1.0;
            } else {
                sr += y[i];
                nr += 1.0;
            }
        }
        if nl == 0.0 || nr == 0.0 {
            continue;
        }
        let proxy = sl * sl / nl + sr * sr / nr;
        if best.is_none_or(|(b, _, _)| proxy > b) {
            best = Some((proxy, f, t));
        }
    }
    let Some((_, feature, threshold)) = best else {
        return me;
    };
    let (l, r): (Vec<usize>, Vec<usize>) = idx.into_iter().partition(|&i| x[i][feature] <= threshold);
    decrease[feature] += sse_here - sse(y, &l) - sse(y, &r);
    let left = grow(x, y, l, depth + 1, params, rng, nodes, decrease);
    let right = grow(x, y, r, depth + 1, params, rng, nodes, decrease);
    nodes[me] = Node::Split { feature, threshold, left, right };
    me
}

/// RocketEval's weight factor α (Eq. 3, `kl_uniform_weight`): one minus the KL divergence of the label
/// distribution from the uniform distribution over `num_classes` classes, divided by its maximum ln(k).
///
/// As in the authors' code, the label distribution is the histogram of the distinct label values. When
/// there are more distinct values than classes (fractional labels), labels are rounded to integers first
/// and, if that is still too many, binned into `num_classes` equal-width bins over their range.
pub fn kl_uniform_weight(labels: &[f64], num_classes: usize) -> f64 {
    if labels.is_empty() || num_classes < 2 {
        return 0.0;
    }
    let mut counts = histogram(labels.iter().map(|&v| v.to_bits()));
    if counts.len() > num_classes {
        counts = histogram(labels.iter().map(|v| v.round().to_bits()));
    }
    if counts.len() > num_classes {
        let (lo, hi) = labels.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let width = (hi - lo) / num_classes as f64;
        counts = histogram(labels.iter().map(|&v| (((v - lo) / width) as usize).min(num_classes - 1) as u64));
    }
    let n = labels.len() as f64;
    let max_kl = (num_classes as f64).ln();
    let kl: f64 = counts.values().map(|&c| c as f64 / n).map(|p| p * (p * num_classes as f64).ln()).sum();
    (max_kl - kl) / max_kl
}

fn histogram(keys: impl Iterator<Item = u64>) -> HashMap<u64, usize> {
    let mut h = HashMap::new();
    for k in keys {
        *h.entry(k).or_insert(0) += 1;
    }
    h
}

/// Missing item probabilities as features: RocketEval fills them with 0.5 when it loads judgments.
/// The count of filled items is returned so callers can report it.
pub fn features(probs: &[Option<f64>]) -> (Vec<f64>, usize) {
    let missing = probs.iter().filter(|p| p.is_none_or(|p| !p.is_finite())).count();
    (probs.iter().map(|p| p.filter(|p| p.is_finite()).unwrap_or(0.5)).collect(), missing)
}

/// One training example: a training model's graded response to a query, and its label.
#[derive(Debug, Clone)]
pub struct TrainingExample {
    pub session_id: String,
    pub probs: Vec<Option<f64>>,
    pub label: f64,
}

#[derive(Debug, Clone)]
struct QueryPredictor {
    trees: ExtraTrees,
    alpha: f64,
    width: usize,
}

/// A supervised score and how it was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SupervisedScore {
    pub score: f64,
    /// The unsupervised score it was blended with.
    pub unsupervised: f64,
    /// The weight of the trees' prediction (0 when the query had no training data).
    pub alpha: f64,
    /// Whether a predictor was trained for this query.
    pub trained: bool,
    /// Items without a probability, filled with 0.5 for the trees.
    pub imputed: usize,
}

/// Per-query predictors fitted on training models' judgments and labels.
#[derive(Debug, Clone, Default)]
pub struct SupervisedScorer {
    per_query: HashMap<String, QueryPredictor>,
}

impl SupervisedScorer {
    /// Fit one predictor per query. `num_classes` is the number of label values of the scale (10 for 1–10).
    pub fn fit(examples: &[TrainingExample], params: &ExtraTreesParams, num_classes: usize) -> Result<Self> {
        let mut by_query: HashMap<&str, Vec<&TrainingExample>> = HashMap::new();
        for e in examples {
            if !e.label.is_finite() {
                return invalid!("label of `{}` is not a finite number", e.session_id);
            }
            by_query.entry(e.session_id.as_str()).or_default().push(e);
        }
        let mut per_query = HashMap::new();
        for (sid, rows) in by_query {
            let width = rows[0].probs.len();
            if let Some(bad) = rows.iter().find(|r| r.probs.len() != width) {
                return invalid!(
                    "session `{sid}`: training judgments have {} and {} items; a query's checklist must be the same for every model",
                    width,
                    bad.probs.len()
                );
            }
            let x: Vec<Vec<f64>> = rows.iter().map(|r| features(&r.probs).0).collect();
            let y: Vec<f64> = rows.iter().map(|r| r.label).collect();
            let trees = ExtraTrees::fit(&x, &y, params)?;
            let alpha = kl_uniform_weight(&y, num_classes);
            per_query.insert(sid.to_string(), QueryPredictor { trees, alpha, width });
        }
        Ok(Self { per_query })
    }

    /// Number of queries with a trained predictor.
    pub fn trained_queries(&self) -> usize {
        self.per_query.len()
    }

    /// The weight α of a query, if it was trained.
    pub fn alpha(&self, session_id: &str) -> Option<f64> {
        self.per_query.get(session_id).map(|p| p.alpha)
    }

    /// Each checklist item's importance to a query's predictor (seed 000's Fig. 8 "item reweighting":
    /// the trees' mean decrease in squared error, summing to 1), if the query was trained.
    pub fn importances(&self, session_id: &str) -> Option<&[f64]> {
        self.per_query.get(session_id).map(|p| p.trees.importances())
    }

    /// Every query's weight α set to `alpha` instead of Eq. 3's (seed 000's ablation "w/o weight
    /// factor" is α = 1: the trees' prediction alone); an error outside [0, 1].
    pub fn with_alpha(mut self, alpha: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&alpha) {
            return invalid!("the weight factor α must be between 0 and 1, not {alpha}");
        }
        self.per_query.values_mut().for_each(|p| p.alpha = alpha);
        Ok(self)
    }

    /// Score one response. Without a predictor for its query the score is the unsupervised one (α = 0).
    pub fn score(&self, session_id: &str, probs: &[Option<f64>]) -> Result<SupervisedScore> {
        let unsup = unsupervised_score(probs)?.score;
        let Some(p) = self.per_query.get(session_id) else {
            return Ok(SupervisedScore { score: unsup, unsupervised: unsup, alpha: 0.0, trained: false, imputed: 0 });
        };
        if probs.len() != p.width {
            return invalid!(
                "session `{session_id}`: the response has {} graded items but the predictor was trained on {}",
                probs.len(),
                p.width
            );
        }
        let (x, imputed) = features(probs);
        let sup = p.trees.predict(&x);
        Ok(SupervisedScore { score: (1.0 - p.alpha) * unsup + p.alpha * sup, unsupervised: unsup, alpha: p.alpha, trained: true, imputed })
    }
}

/// The 1–10 range of the unsupervised score, for callers that need to know the scale.
pub const SCORE_RANGE: (f64, f64) = (BIAS, BIAS + SCALE);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_is_normalised_entropy() {
        // Uniform over 10 classes → 1; a single class → 0; two equal classes → ln2/ln10.
        let all: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((kl_uniform_weight(&all, 10) - 1.0).abs() < 1e-12);
        assert!(kl_uniform_weight(&[7.0, 7.0, 7.0], 10).abs() < 1e-12);
        let two = kl_uniform_weight(&[3.0, 8.0, 3.0, 8.0], 10);
        assert!((two - 2f64.ln() / 10f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn trees_learn_a_step_and_are_deterministic() {
        // y depends on feature 0 only; with deep trees the step is found.
        let mut rng = Rng::new(3);
        let x: Vec<Vec<f64>> = (0..200).map(|_| vec![rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0)]).collect();
        let y: Vec<f64> = x.iter().map(|r| if r[0] > 0.5 { 9.0 } else { 2.0 }).collect();
        let p = ExtraTreesParams { n_estimators: 50, max_depth: None, ..Default::default() };
        let m = ExtraTrees::fit(&x, &y, &p).unwrap();
        assert!(m.predict(&[0.9, 0.1]) > 8.0);
        assert!(m.predict(&[0.1, 0.9]) < 3.0);
        let again = ExtraTrees::fit(&x, &y, &p).unwrap();
        assert_eq!(m.predict(&[0.6, 0.6]), again.predict(&[0.6, 0.6]));
    }

    #[test]
    fn constant_labels_fall_back_to_the_mean() {
        let ex: Vec<TrainingExample> =
            (0..4).map(|i| TrainingExample { session_id: "q".into(), probs: vec![Some(i as f64 / 4.0), Some(0.5)], label: 6.0 }).collect();
        let s = SupervisedScorer::fit(&ex, &ExtraTreesParams::default(), 10).unwrap();
        let r = s.score("q", &[Some(1.0), None]).unwrap();
        assert_eq!(r.alpha, 0.0);
        assert_eq!((r.score, r.imputed, r.trained), (10.0, 1, true));
        let other = s.score("unseen", &[Some(0.0)]).unwrap();
        assert!(!other.trained);
        assert!(s.score("q", &[Some(1.0)]).is_err());
    }
}
