//! In which order a run grades its responses, so that a partial run already ranks every model.
//!
//! - [`Order::Interleaved`] (the default): the queries in a seeded random order, stratified by
//!   category (each category's queries spread evenly over the run), and every model's response to a
//!   query before the next query. Any prefix of the run is a random, category-balanced sample of the
//!   benchmark on which every model has been graded.
//! - [`Order::Model`]: model by model, each model's responses in file order (the order before issue
//!   #26; a partial run ranks only the models it reached).
//! - [`Order::Adaptive`]: the interleaved order until every model has [`SettleRule::min_queries`]
//!   grades; then the next response goes to a pair still too close to call (the one closest to
//!   separating first, by [`crate::settle`]'s estimate), to the model of that pair with fewer grades.
//!   Each model still walks the same query order from its start, so its graded queries stay a prefix of
//!   one random order: which queries a model is graded on never depends on its scores, only how many.
//!   Pairs already separated wait; a run let finish grades everything.
//!
//! Whatever the order, a run that finishes grades the same responses with the same judge, so its
//! judgments and ranking do not depend on the order (`grade` then writes each model's file in file
//! order).

use std::collections::HashMap;

use serde::Deserialize;

use crate::settle::Standing;
use crate::stats::Rng;

crate::named_enum!(
    /// The order of a grading run.
    #[derive(Default)]
    pub enum Order, "the grading order" {
        /// Query by query in a seeded, category-stratified random order (the default).
        #[default]
        Interleaved = "interleaved",
        /// Model by model, in file order.
        Model = "model",
        /// Interleaved, then the pairs still too close to call first.
        Adaptive = "adaptive",
    }
);

/// The seed of the query order when none is given.
pub const DEFAULT_ORDER_SEED: u64 = 0;

/// One response of a run, as the schedule sees it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Job {
    pub model: String,
    pub session_id: String,
    #[serde(default)]
    pub category: Option<String>,
}

/// Positions of `sessions` (each with its category) in a seeded random order stratified by category:
/// each category's sessions shuffled, then merged so that every category is spread evenly (the i-th
/// of a category's n sessions sits near the fraction (i + ½)/n of the run; ties go to the categories
/// in a shuffled order).
pub fn stratified_positions(sessions: &[(&str, Option<&str>)], seed: u64) -> HashMap<String, usize> {
    let mut rng = Rng::new(seed);
    let mut groups: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for &(s, c) in sessions {
        match groups.iter_mut().find(|g| g.0 == c) {
            Some(g) if !g.1.contains(&s) => g.1.push(s),
            Some(_) => {}
            None => groups.push((c, vec![s])),
        }
    }
    // Categories by name first, so the draw does not depend on the order the sessions came in.
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for g in groups.iter_mut() {
        g.1.sort_unstable();
        rng.shuffle(&mut g.1);
    }
    let mut tiebreak: Vec<usize> = (0..groups.len()).collect();
    rng.shuffle(&mut tiebreak);
    let mut keyed: Vec<(f64, usize, &str)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let n = g.1.len() as f64;
        keyed.extend(g.1.iter().enumerate().map(|(i, s)| ((i as f64 + 0.5) / n, tiebreak[gi], *s)));
    }
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().enumerate().map(|(pos, (_, _, s))| (s.to_string(), pos)).collect()
}

/// A run's order over its jobs.
#[derive(Debug, Clone)]
pub struct Schedule {
    order: Order,
    /// Job indices in the interleaved (or, for `Model`, the given) order.
    sequence: Vec<usize>,
    /// Each job's model name.
    models: Vec<String>,
    min_queries: usize,
}

impl Schedule {
    /// The schedule of `jobs` (given in model-by-model file order). `min_queries`: the adaptive
    /// order's warm-up, the settling rule's fewest shared queries.
    pub fn new(jobs: &[Job], order: Order, seed: u64, min_queries: usize) -> Self {
        let mut sequence: Vec<usize> = (0..jobs.len()).collect();
        if order != Order::Model {
            let sessions: Vec<(&str, Option<&str>)> = jobs.iter().map(|j| (j.session_id.as_str(), j.category.as_deref())).collect();
            let pos = stratified_positions(&sessions, seed);
            // Stable: a query's models stay in the given order.
            sequence.sort_by_key(|&i| pos[&jobs[i].session_id]);
        }
        Schedule { order, sequence, models: jobs.iter().map(|j| j.model.clone()).collect(), min_queries }
    }

    pub fn order(&self) -> Order {
        self.order
    }

    /// Job indices in the order this schedule grades them when nothing is adaptive (for
    /// `Interleaved` and `Model`, the whole run's order).
    pub fn sequence(&self) -> &[usize] {
        &self.sequence
    }

    /// The next job to grade: `done[i]` tells which are graded; `standing` is the run's live
    /// leaderboard (used by the adaptive order only). `None` when every job is done.
    pub fn next(&self, done: &[bool], standing: Option<&Standing>) -> Option<usize> {
        let first_pending = || self.sequence.iter().copied().find(|&i| !done[i]);
        if self.order != Order::Adaptive {
            return first_pending();
        }
        let Some(s) = standing else { return first_pending() };
        let warm = s.unranked.is_empty() && s.entries.iter().all(|e| e.responses >= self.min_queries);
        if !warm || s.settled {
            return first_pending();
        }
        // Too-close pairs, the one closest to separating first; those with no estimate last.
        let mut close: Vec<_> = s.pairs.iter().filter(|p| !p.separated).collect();
        close.sort_by_key(|p| (p.more.is_none(), p.more.unwrap_or(0), p.pair.common));
        let graded: HashMap<&str, usize> = s.entries.iter().map(|e| (e.model.as_str(), e.responses)).collect();
        for p in close {
            let mut pair = [p.pair.above.as_str(), p.pair.below.as_str()];
            pair.sort_by_key(|m| graded.get(m).copied().unwrap_or(0));
            for m in pair {
                if let Some(i) = self.sequence.iter().copied().find(|&i| !done[i] && self.models[i] == m) {
                    return Some(i);
                }
            }
        }
        first_pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(models: &[&str], queries: usize, categories: usize) -> Vec<Job> {
        let mut v = Vec::new();
        for m in models {
            for q in 0..queries {
                v.push(Job { model: m.to_string(), session_id: format!("q{q:02}"), category: Some(format!("c{}", q % categories)) });
            }
        }
        v
    }

    fn run(s: &Schedule, n: usize) -> Vec<usize> {
        let mut done = vec![false; n];
        let mut out = Vec::new();
        while let Some(i) = s.next(&done, None) {
            done[i] = true;
            out.push(i);
        }
        out
    }

    #[test]
    fn model_order_is_file_order() {
        let j = jobs(&["a", "b"], 5, 1);
        assert_eq!(run(&Schedule::new(&j, Order::Model, 0, 10), j.len()), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn interleaved_grades_every_model_on_a_query_before_the_next() {
        let j = jobs(&["a", "b", "c"], 12, 3);
        let s = Schedule::new(&j, Order::Interleaved, 7, 10);
        let seq = run(&s, j.len());
        assert_eq!(seq.len(), j.len());
        for chunk in seq.chunks(3) {
            let q: Vec<_> = chunk.iter().map(|&i| &j[i].session_id).collect();
            assert!(q.iter().all(|x| *x == q[0]), "{q:?}");
            assert_eq!(chunk.iter().map(|&i| j[i].model.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        }
        // Stratified: every run of 3 queries holds each of the 3 categories once.
        let cats: Vec<_> = seq.chunks(3).map(|c| j[c[0]].category.clone().unwrap()).collect();
        for w in cats.chunks(3) {
            let mut w = w.to_vec();
            w.sort();
            assert_eq!(w, ["c0", "c1", "c2"]);
        }
        // Seeded: the same seed gives the same order, another seed another.
        assert_eq!(seq, run(&Schedule::new(&j, Order::Interleaved, 7, 10), j.len()));
        assert_ne!(seq, run(&Schedule::new(&j, Order::Interleaved, 8, 10), j.len()));
        // Not the file order.
        assert_ne!(cats, (0..12).map(|q| format!("c{}", q % 3)).collect::<Vec<_>>());
    }

    #[test]
    fn adaptive_grades_close_pairs_first_and_keeps_each_model_on_a_prefix() {
        use crate::formats::Score;
        use crate::rank::{RankOptions, ScoreTable};
        use crate::settle::{SettleRule, Standing};
        // m0 and m1 far below, m2 and m3 close together at the top.
        let strength = [1.0, 4.0, 7.0, 7.3];
        let names = ["m0", "m1", "m2", "m3"];
        let j = jobs(&names, 60, 3);
        let mut rng = crate::stats::Rng::new(5);
        let value: Vec<f64> =
            j.iter().map(|x| strength[names.iter().position(|m| *m == x.model).unwrap()] + rng.uniform(-2.0, 2.0)).collect();
        let rule = SettleRule { min_queries: 5, ..Default::default() };
        let s = Schedule::new(&j, Order::Adaptive, 3, rule.min_queries);
        let models: Vec<String> = names.iter().map(|m| m.to_string()).collect();
        let (mut done, mut seq, mut standing) = (vec![false; j.len()], Vec::new(), None);
        while let Some(i) = s.next(&done, standing.as_ref()) {
            done[i] = true;
            seq.push(i);
            if seq.len() % 4 == 0 {
                let scores: Vec<Score> = seq
                    .iter()
                    .map(|&k| Score { session_id: j[k].session_id.clone(), model_test: j[k].model.clone(), score: value[k], judge: None })
                    .collect();
                let opts = RankOptions { bootstrap: 100, ..Default::default() };
                standing = Some(Standing::new(&ScoreTable::new(&scores).unwrap(), &models, None, None, &opts, rule).unwrap());
            }
        }
        assert_eq!(seq.len(), j.len(), "a run let finish grades everything");
        // Each model's graded queries, in the order graded, are a prefix of the interleaved query order.
        let inter = Schedule::new(&j, Order::Interleaved, 3, rule.min_queries);
        for m in names {
            let mine = |order: &[usize]| order.iter().filter(|&&i| j[i].model == m).map(|&i| j[i].session_id.clone()).collect::<Vec<_>>();
            assert_eq!(mine(&seq), mine(inter.sequence()), "{m}");
        }
        // Halfway through, the close pair at the top has more grades than the far-apart models.
        let half = &seq[..j.len() / 2];
        let count = |m: &str| half.iter().filter(|&&i| j[i].model == m).count();
        assert!(count("m2") + count("m3") > count("m0") + count("m1") + 20, "{:?}", names.map(count));
    }

    #[test]
    fn positions_do_not_depend_on_input_order() {
        let a = [("x", Some("w")), ("y", Some("w")), ("z", Some("m")), ("u", None)];
        let mut b = a;
        b.reverse();
        assert_eq!(stratified_positions(&a, 3), stratified_positions(&b, 3));
    }
}
