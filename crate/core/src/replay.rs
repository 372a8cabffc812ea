//! What a complete run says about grading orders: its scores revealed one response at a time in a
//! [`Schedule`]'s order, as a run in that order would have graded them, without grading anything.
//!
//! At every checkpoint (one query's worth of responses by default) the partial run's [`Standing`] is
//! compared with the complete run: Spearman's ρ between the partial and the complete ratings (models
//! not rated yet share the last place), the share of adjacent pairs separated, whether the run counts
//! as settled, and how many of the pairs declared separated stand in the other order in the complete
//! run (false separations). The adaptive order sees the standings as a run would: refreshed at each
//! checkpoint.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{invalid, Result};
use crate::formats::Score;
use crate::meta::correlation::spearman;
use crate::rank::{self, RankOptions, ScoreTable};
use crate::schedule::{Job, Order, Schedule};
use crate::settle::{SettleRule, Standing};

/// One checkpoint of a replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    /// Responses revealed so far.
    pub graded: usize,
    /// Spearman's ρ of the partial ratings with the complete run's (NaN while none is rated).
    pub spearman: f64,
    /// Adjacent pairs separated, of `pairs` (the models of the run less one).
    pub separated: usize,
    pub pairs: usize,
    pub settled: bool,
    /// Separated pairs whose order the complete run reverses.
    pub false_separations: usize,
}

/// A replay of one order and seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    pub order: Order,
    pub seed: u64,
    pub total: usize,
    pub checkpoints: Vec<Checkpoint>,
}

impl Replay {
    /// Responses after which Spearman's ρ reaches `target` and stays there to the end.
    pub fn responses_to_spearman(&self, target: f64) -> Option<usize> {
        let last_below = self.checkpoints.iter().rposition(|c| c.spearman.is_nan() || c.spearman < target);
        match last_below {
            None => self.checkpoints.first().map(|c| c.graded),
            Some(i) => self.checkpoints.get(i + 1).map(|c| c.graded),
        }
    }

    /// Responses after which as many adjacent pairs are separated as in the complete run, to the end:
    /// the run is as settled as it will get (a pair the complete run cannot separate never counts).
    /// `None` when the complete run separates no pair.
    pub fn responses_to_final_separation(&self) -> Option<usize> {
        let last = self.checkpoints.last().filter(|c| c.separated > 0)?;
        let i = self.checkpoints.iter().rposition(|c| c.separated < last.separated).map_or(0, |i| i + 1);
        Some(self.checkpoints[i].graded)
    }

    /// Spearman's ρ at the first checkpoint with at least `share` of the run graded.
    pub fn spearman_at(&self, share: f64) -> f64 {
        self.checkpoints.iter().find(|c| c.graded as f64 >= share * self.total as f64).map_or(f64::NAN, |c| c.spearman)
    }

    /// The first checkpoint at which the run counts as settled (where `--until settled` stops).
    pub fn settled_at(&self) -> Option<&Checkpoint> {
        self.checkpoints.iter().find(|c| c.settled)
    }
}

/// Settings of a replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Responses between checkpoints (and between the adaptive order's refreshed standings).
    pub every: usize,
    pub rule: SettleRule,
    /// How the standings rank (with bootstrap replicates).
    pub rank: RankOptions,
}

/// Replay `scores` (`scores[i]` is the complete run's score of `jobs[i]`) in `order` with `seed`.
pub fn replay(jobs: &[Job], scores: &[f64], order: Order, seed: u64, o: &ReplayOptions) -> Result<Replay> {
    if jobs.len() != scores.len() {
        return invalid!("{} jobs but {} scores", jobs.len(), scores.len());
    }
    if o.every == 0 {
        return invalid!("checkpoints need at least one response between them");
    }
    let score =
        |i: usize| Score { session_id: jobs[i].session_id.clone(), model_test: jobs[i].model.clone(), score: scores[i], judge: None };
    let full = ScoreTable::new(&(0..jobs.len()).map(score).collect::<Vec<_>>())?;
    let complete = rank::rank(&full, &RankOptions { bootstrap: 0, ..o.rank.clone() })?;
    let final_rating: HashMap<&str, f64> = complete.entries.iter().map(|e| (e.model.as_str(), e.score)).collect();
    let models = full.models.clone();
    let queries = full.sessions.len();
    let schedule = Schedule::new(jobs, order, seed, o.rule.min_queries);

    let mut done = vec![false; jobs.len()];
    let mut revealed: Vec<Score> = Vec::with_capacity(jobs.len());
    let mut standing: Option<Standing> = None;
    let mut checkpoints = Vec::new();
    while let Some(i) = schedule.next(&done, standing.as_ref()) {
        done[i] = true;
        revealed.push(score(i));
        if !revealed.len().is_multiple_of(o.every) && revealed.len() != jobs.len() {
            continue;
        }
        let s = Standing::new(&ScoreTable::new(&revealed)?, &models, Some(jobs.len()), Some(queries), &o.rank, o.rule)?;
        let partial: HashMap<&str, f64> = s.entries.iter().map(|e| (e.model.as_str(), e.score)).collect();
        // Models without a rating share the last place.
        let floor = partial.values().copied().fold(f64::INFINITY, f64::min) - 1.0;
        let x: Vec<f64> = models.iter().map(|m| final_rating[m.as_str()]).collect();
        let y: Vec<f64> = models.iter().map(|m| partial.get(m.as_str()).copied().unwrap_or(floor)).collect();
        let separated: Vec<_> = s.pairs.iter().filter(|p| p.separated).collect();
        checkpoints.push(Checkpoint {
            graded: revealed.len(),
            // One rated model against the rest tied below it is a ranking too; none is not.
            spearman: if partial.is_empty() { f64::NAN } else { spearman(&x, &y) },
            separated: separated.len(),
            pairs: models.len() - 1,
            settled: s.settled,
            false_separations: separated
                .iter()
                .filter(|p| final_rating[p.pair.above.as_str()] < final_rating[p.pair.below.as_str()])
                .count(),
        });
        standing = Some(s);
    }
    Ok(Replay { order, seed, total: jobs.len(), checkpoints })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Rng;

    /// Five models of spaced strengths on 40 queries, listed model by model.
    fn run() -> (Vec<Job>, Vec<f64>) {
        let mut rng = Rng::new(9);
        let (mut jobs, mut scores) = (Vec::new(), Vec::new());
        for m in 0..5 {
            for q in 0..40 {
                jobs.push(Job { model: format!("m{m}"), session_id: format!("q{q:02}"), category: Some(format!("c{}", q % 4)) });
                scores.push((2.0 + 1.5 * m as f64 + rng.uniform(-2.5, 2.5)).clamp(1.0, 10.0));
            }
        }
        (jobs, scores)
    }

    fn options() -> ReplayOptions {
        ReplayOptions { every: 5, rule: SettleRule::default(), rank: RankOptions { bootstrap: 100, ..Default::default() } }
    }

    #[test]
    fn every_order_ends_at_the_complete_ranking() {
        let (jobs, scores) = run();
        for order in [Order::Model, Order::Interleaved, Order::Adaptive] {
            let r = replay(&jobs, &scores, order, 1, &options()).unwrap();
            let last = r.checkpoints.last().unwrap();
            assert_eq!(last.graded, 200, "{order}");
            assert!((last.spearman - 1.0).abs() < 1e-12, "{order}: {last:?}");
            assert_eq!(last.false_separations, 0);
        }
    }

    #[test]
    fn interleaved_ranks_everyone_early_and_model_order_does_not() {
        let (jobs, scores) = run();
        let model = replay(&jobs, &scores, Order::Model, 0, &options()).unwrap();
        let inter = replay(&jobs, &scores, Order::Interleaved, 0, &options()).unwrap();
        // A quarter of the run: model by model has graded one model and a bit.
        let at = |r: &Replay| r.checkpoints.iter().find(|c| c.graded == 50).unwrap().spearman;
        assert!(at(&inter) > 0.8, "{}", at(&inter));
        assert!(at(&model) <= 0.8, "{}", at(&model));
        assert!(inter.responses_to_spearman(0.9).unwrap() < model.responses_to_spearman(0.9).unwrap());
    }

    #[test]
    fn spearman_target_means_reached_and_kept() {
        let c = |graded, spearman| Checkpoint { graded, spearman, separated: 0, pairs: 1, settled: false, false_separations: 0 };
        let r = Replay { order: Order::Model, seed: 0, total: 40, checkpoints: vec![c(10, 0.95), c(20, 0.5), c(30, 0.92), c(40, 1.0)] };
        assert_eq!(r.responses_to_spearman(0.9), Some(30));
        assert_eq!(r.responses_to_spearman(0.99), Some(40));
        let never = Replay { checkpoints: vec![c(10, 0.5), c(20, f64::NAN)], ..r };
        assert_eq!(never.responses_to_spearman(0.9), None);
        assert!((r.spearman_at(0.5) - 0.5).abs() < 1e-12 && (r.spearman_at(0.55) - 0.92).abs() < 1e-12);
        let sep = |graded, separated| Checkpoint { graded, spearman: 1.0, separated, pairs: 3, settled: false, false_separations: 0 };
        let s = Replay { checkpoints: vec![sep(10, 0), sep(20, 2), sep(30, 1), sep(40, 2), sep(50, 2)], ..never };
        assert_eq!(s.responses_to_final_separation(), Some(40));
    }
}
