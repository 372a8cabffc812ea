//! What the result views show, computed from judgments once for every front-end: the per-category
//! table of mean scores, score distributions (quartiles), seed 000's ratio of disagreement, the
//! pairwise win-rate matrix, and the CSV exports. The browser's worker answers the page's view requests with these (through `crate/wasm`),
//! so no score formula, quantile or tie rule is recomputed in JavaScript.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::formats::{csv, Score, Winner};
use crate::rank::{self, PairRule, RankedModel, ScoreTable};
use crate::stats;

/// Mean response score per model and category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryTable {
    pub models: Vec<String>,
    pub categories: Vec<String>,
    /// `means[model][category]`: the mean score, `None` where the model has no score in it.
    pub means: Vec<Vec<Option<f64>>>,
}

/// The category of a session that has none (or is not in `categories`).
pub const NO_CATEGORY: &str = "all";

/// Mean scores per model (rows, by name) and category (columns, by name); `categories` maps session
/// ids to categories.
pub fn category_table(scores: &[Score], categories: &HashMap<String, String>) -> CategoryTable {
    let mut sums: BTreeMap<(&str, &str), (f64, usize)> = BTreeMap::new();
    for s in scores {
        let c = categories.get(&s.session_id).map(String::as_str).filter(|c| !c.is_empty()).unwrap_or(NO_CATEGORY);
        let e = sums.entry((&s.model_test, c)).or_default();
        e.0 += s.score;
        e.1 += 1;
    }
    let models: Vec<String> = sums.keys().map(|k| k.0.to_string()).collect::<BTreeSet<_>>().into_iter().collect();
    let cats: Vec<String> = sums.keys().map(|k| k.1.to_string()).collect::<BTreeSet<_>>().into_iter().collect();
    let means =
        models.iter().map(|m| cats.iter().map(|c| sums.get(&(m.as_str(), c.as_str())).map(|(sum, n)| sum / *n as f64)).collect()).collect();
    CategoryTable { models, categories: cats, means }
}

/// One model's response scores as a box plot: min, quartiles (numpy's linear interpolation), max.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    pub model: String,
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
    pub responses: usize,
}

/// Score distributions per model, by model name.
pub fn distributions(scores: &[Score]) -> Vec<Distribution> {
    let mut by: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in scores {
        by.entry(&s.model_test).or_default().push(s.score);
    }
    by.into_iter()
        .map(|(m, xs)| Distribution {
            model: m.to_string(),
            min: stats::quantile(&xs, 0.0),
            q1: stats::quantile(&xs, 0.25),
            median: stats::quantile(&xs, 0.5),
            q3: stats::quantile(&xs, 0.75),
            max: stats::quantile(&xs, 1.0),
            responses: xs.len(),
        })
        .collect()
}

/// Seed 000's ratio of disagreement (its Fig. 4) for one number of samples: the share of checklist
/// items on which that many Yes/No answers sampled at temperature 1 would not all agree, in exact
/// expectation over the stored p(Yes) ([`crate::decoding::disagreement`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    pub samples: usize,
    pub ratio: f64,
    /// Graded items it averages over.
    pub items: usize,
}

/// The numbers of samples the views show the ratio of disagreement for (seed 000's Fig. 4 goes to 5).
pub const DISAGREEMENT_SAMPLES: [usize; 4] = [2, 3, 5, 10];

/// The ratio of disagreement over every graded item of `judgments`, for each number of samples in `ns`.
pub fn disagreement(judgments: &[crate::formats::Judgment], ns: &[usize]) -> Vec<Disagreement> {
    let ps: Vec<f64> = judgments.iter().flat_map(|j| j.norm_probability.iter().flatten().copied()).collect();
    ns.iter()
        .map(|&n| Disagreement {
            samples: n,
            ratio: if ps.is_empty() {
                0.0
            } else {
                stats::mean(&ps.iter().map(|&p| crate::decoding::disagreement(n, p)).collect::<Vec<_>>())
            },
            items: ps.len(),
        })
        .collect()
}

/// One cell of the win-rate matrix: the row model's points (a win 1, a tie ½) per battle against the
/// column model, over the queries both answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WinRate {
    pub row: usize,
    pub col: usize,
    pub win_rate: f64,
    pub battles: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WinRates {
    pub models: Vec<String>,
    /// The tie margin the battles used.
    pub tie_margin: f64,
    /// Cells with at least one battle, row by row.
    pub cells: Vec<WinRate>,
}

/// The pairwise win-rate matrix of the battles `rule` makes of the scores.
pub fn win_rates(table: &ScoreTable, rule: &PairRule) -> WinRates {
    let models: Vec<String> = table.models.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let idx: HashMap<&str, usize> = models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let n = models.len();
    let mut pts = vec![vec![(0.0, 0usize); n]; n];
    for b in rank::battles(table, rule) {
        let (a, c) = (idx[b.model_a.as_str()], idx[b.model_b.as_str()]);
        let s = match b.winner {
            Winner::A => 1.0,
            Winner::B => 0.0,
            Winner::Tie => 0.5,
        };
        pts[a][c].0 += s;
        pts[a][c].1 += 1;
        pts[c][a].0 += 1.0 - s;
        pts[c][a].1 += 1;
    }
    let mut cells = Vec::new();
    for (row, r) in pts.iter().enumerate() {
        for (col, &(p, k)) in r.iter().enumerate() {
            if row != col && k > 0 {
                cells.push(WinRate { row, col, win_rate: p / k as f64, battles: k });
            }
        }
    }
    WinRates { models, tie_margin: rule.tie_margin, cells }
}

/// Scores as CSV: `model,session_id,score`, text cells neutralised against spreadsheet formulas.
pub fn scores_csv(scores: &[Score]) -> String {
    let mut out = String::from("model,session_id,score\n");
    for s in scores {
        out.push_str(&format!("{},{},{}\n", csv::text_cell(&s.model_test), csv::text_cell(&s.session_id), csv::number_cell(Some(s.score))));
    }
    out
}

/// A leaderboard as CSV: `rank,model,score,lower,upper` (what `rocketjudge rank --format csv` prints).
pub fn ranking_csv(entries: &[RankedModel]) -> String {
    let mut out = String::from("rank,model,score,lower,upper\n");
    for e in entries {
        out.push_str(&format!(
            "{},{},{},{},{}\n",
            e.rank,
            csv::text_cell(&e.model),
            csv::number_cell(Some(e.score)),
            csv::number_cell(e.lower),
            csv::number_cell(e.upper)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(model: &str, session: &str, score: f64) -> Score {
        Score { session_id: session.into(), model_test: model.into(), score, judge: None }
    }

    #[test]
    fn disagreement_averages_over_graded_items() {
        let j: crate::formats::Judgment =
            serde_json::from_str(r#"{"session_id":"q","model_test":"m","norm_probability":[0.5,null,1.0]}"#).unwrap();
        // Three draws at p = 0.5 disagree with chance 1 − ⅛ − ⅛; at p = 1 never; the ungraded item is left out.
        assert_eq!(disagreement(&[j], &[3]), [Disagreement { samples: 3, ratio: 0.375, items: 2 }]);
        assert_eq!(disagreement(&[], &[3])[0].items, 0);
    }

    #[test]
    fn categories_distributions_and_win_rates() {
        let scores = vec![s("b", "1", 8.0), s("a", "1", 7.95), s("a", "2", 3.0), s("b", "2", 9.0), s("a", "3", 5.0)];
        let cats: HashMap<String, String> = [("1".into(), "math".into()), ("2".into(), "code".into())].into();
        let t = category_table(&scores, &cats);
        assert_eq!(t.models, ["a", "b"]);
        assert_eq!(t.categories, ["all", "code", "math"]);
        assert_eq!(t.means[0], [Some(5.0), Some(3.0), Some(7.95)]);
        assert_eq!(t.means[1], [None, Some(9.0), Some(8.0)]);

        let d = distributions(&scores);
        assert_eq!((d[0].model.as_str(), d[0].min, d[0].q1, d[0].median, d[0].max, d[0].responses), ("a", 3.0, 4.0, 5.0, 7.95, 3));

        let table = ScoreTable::new(&scores).unwrap();
        let w = win_rates(&table, &PairRule::default());
        // Session 1: |8.0 − 7.95| < 0.1, a tie; session 2: b wins; session 3: only a answered.
        assert_eq!(
            w.cells,
            [WinRate { row: 0, col: 1, win_rate: 0.25, battles: 2 }, WinRate { row: 1, col: 0, win_rate: 0.75, battles: 2 }]
        );
        assert_eq!(scores_csv(&[s("=x", "1", 2.5)]), "model,session_id,score\n'=x,1,2.5\n");
    }
}
