//! When a partial run's ranking can be trusted: the live leaderboard of a run still grading.
//!
//! A [`Standing`] is a leaderboard of the responses graded so far (every graded response counts: each
//! model's mean is over its own graded queries, Bradley–Terry compares two models on the queries both
//! were graded on, so unequal coverage is handled by the method, not by dropping grades), plus, for
//! each adjacent pair, whether the query bootstrap orders it this way in at least `level` of its
//! replicates on at least `min_queries` shared queries (**separated**) or not (**too close to call**).
//! The run is **settled** when every model of the run is ranked and every adjacent pair is separated.
//!
//! The grading orders of [`crate::schedule`] keep each model's graded queries a prefix of one seeded,
//! category-stratified random order, so a partial run's scores estimate the complete run's without
//! bias; stopping early changes how many responses are graded, never how a complete run ranks.
//!
//! How much more a pair needs is estimated from its bootstrap gap: with mean gap μ and spread σ over
//! `n` shared queries, z = μ/σ grows like √n, so separation at `level` needs about
//! n·(z*/z)² queries, z* the normal quantile of `level`. A pair with no gap in its favour (μ ≤ 0) has
//! no estimate: nothing says it will ever separate.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};
use crate::rank::{self, AdjacentPair, RankOptions, RankedModel, Ranking, ScoreTable};

/// The share of bootstrap replicates that must order a pair one way (`--until settled`'s default).
pub const DEFAULT_LEVEL: f64 = 0.95;
/// The fewest queries two models must share before their order can count as separated: below it the
/// bootstrap of a handful of queries is overconfident (three wins out of three reorder in no replicate).
pub const DEFAULT_MIN_QUERIES: usize = 10;

/// When an adjacent pair counts as separated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SettleRule {
    /// Share of bootstrap replicates, in (0.5, 1).
    pub level: f64,
    /// Queries both models of the pair must have been graded on.
    pub min_queries: usize,
}

impl Default for SettleRule {
    fn default() -> Self {
        Self { level: DEFAULT_LEVEL, min_queries: DEFAULT_MIN_QUERIES }
    }
}

impl SettleRule {
    /// The rule, if its numbers make sense.
    pub fn checked(self) -> Result<Self> {
        if !(self.level > 0.5 && self.level < 1.0) {
            return invalid!("the settling level is a share of bootstrap replicates between 0.5 and 1 (e.g. 0.95), not {}", self.level);
        }
        if self.min_queries == 0 {
            return invalid!("the fewest shared queries for a separated pair must be at least 1");
        }
        Ok(self)
    }

    /// `settled` or `settled:LEVEL` (the CLI's `--until`), with the default minimum of queries.
    pub fn parse_until(s: &str) -> Result<Self> {
        let level = match s.split_once(':') {
            None if s == "settled" => DEFAULT_LEVEL,
            Some(("settled", l)) => match l.parse::<f64>() {
                Ok(v) => v,
                Err(_) => return invalid!("`{s}`: the level after `settled:` is a number such as 0.95, not `{l}`"),
            },
            _ => return invalid!("`{s}`: expected `settled` or `settled:LEVEL` (e.g. settled:0.99)"),
        };
        SettleRule { level, ..Default::default() }.checked()
    }

    /// Whether `pair` is separated under this rule.
    pub fn separates(&self, pair: &AdjacentPair) -> bool {
        pair.share >= self.level && pair.common >= self.min_queries
    }

    /// Shared queries the pair needs in all to separate (see the module notes); `None` when its gap
    /// gives no sign of an order.
    pub fn queries_needed(&self, pair: &AdjacentPair) -> Option<usize> {
        if !(pair.mean_gap > 0.0 && pair.sd_gap.is_finite() && pair.common > 0) {
            return None;
        }
        let n = pair.common as f64;
        let needed = if pair.sd_gap == 0.0 { n } else { n * (normal_quantile(self.level) * pair.sd_gap / pair.mean_gap).powi(2) };
        // A bound so that an absurd estimate stays a number a person can read.
        Some((needed.ceil().min(1e9) as usize).max(self.min_queries).max(pair.common + 1))
    }
}

/// One adjacent pair of the live leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    #[serde(flatten)]
    pub pair: AdjacentPair,
    pub separated: bool,
    /// Too close: about how many more responses per model would separate it (`None`: no sign of a
    /// difference yet).
    pub more: Option<usize>,
}

/// The live leaderboard of a run (see the module notes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// Best first, as [`rank::rank`] orders them.
    pub entries: Vec<RankedModel>,
    /// `pairs[i]` is `entries[i]` against `entries[i + 1]`.
    pub pairs: Vec<PairVerdict>,
    /// Models of the run without a rating yet.
    pub unranked: Vec<String>,
    /// Responses graded, of `total` in the run (`None`: unknown, e.g. `rank` on a folder being written).
    pub graded: usize,
    pub total: Option<usize>,
    /// Queries of the run: the most any model can be graded on (`None`: unknown).
    pub queries: Option<usize>,
    pub settled: bool,
    pub rule: SettleRule,
}

impl Standing {
    /// The standing of `scores` (one per graded response of the run so far). `models`: every model of
    /// the run (graded or not); `total`, `queries`: responses and queries of the whole run.
    pub fn new(
        table: &ScoreTable,
        models: &[String],
        total: Option<usize>,
        queries: Option<usize>,
        opts: &RankOptions,
        rule: SettleRule,
    ) -> Result<Standing> {
        let rule = rule.checked()?;
        if opts.bootstrap == 0 {
            return invalid!("a standing needs bootstrap replicates to tell separated pairs from close ones");
        }
        let graded = (0..table.models.len()).map(|m| (0..table.sessions.len()).filter(|&s| table.get(m, s).is_some()).count()).sum();
        // Fewer than two graded models (or no shared query yet) have no ranking; that is a standing too.
        let ranking = if table.models.len() >= 2 { rank::rank(table, opts).ok() } else { None };
        Ok(Self::from_ranking(ranking, graded, models, total, queries, rule))
    }

    /// The standing of a ranking made with bootstrap replicates (any evaluation type's): `graded`
    /// responses (or comparisons) went into it; the rest as in [`Standing::new`].
    pub fn from_ranking(
        ranking: Option<Ranking>,
        graded: usize,
        models: &[String],
        total: Option<usize>,
        queries: Option<usize>,
        rule: SettleRule,
    ) -> Standing {
        let (entries, adjacent) = ranking.map(|r| (r.entries, r.adjacent)).unwrap_or_default();
        let ranked: std::collections::HashSet<&str> = entries.iter().map(|e| e.model.as_str()).collect();
        let unranked: Vec<String> = models.iter().filter(|m| !ranked.contains(m.as_str())).cloned().collect();
        let pairs: Vec<PairVerdict> = adjacent
            .into_iter()
            .map(|pair| {
                let separated = rule.separates(&pair);
                let more = if separated { None } else { rule.queries_needed(&pair).map(|n| n - pair.common) };
                PairVerdict { pair, separated, more }
            })
            .collect();
        let settled = unranked.is_empty() && entries.len() >= 2 && pairs.len() + 1 == entries.len() && pairs.iter().all(|p| p.separated);
        Standing { entries, pairs, unranked, graded, total, queries, settled, rule }
    }

    /// Adjacent pairs still too close to call.
    pub fn too_close(&self) -> usize {
        self.pairs.iter().filter(|p| !p.separated).count()
    }

    /// The run in one sentence: settled, or what is still too close and about how much more it needs.
    /// `pace`: seconds per response measured on this device (for the time estimate) and the seconds
    /// the run has graded so far (said when it settles).
    pub fn sentence(&self, pace: Pace) -> String {
        let secs_per_response = pace.secs_per_response;
        let of = match self.total {
            Some(t) => format!("{} of {t} responses", self.graded),
            None => format!("{} responses", self.graded),
        };
        let time = |responses: usize| match secs_per_response {
            Some(s) if s.is_finite() && s > 0.0 => format!(", about {} at this device's measured rate", duration(responses as f64 * s)),
            _ => String::new(),
        };
        if self.settled {
            let took = match pace.elapsed {
                Some(t) if t.is_finite() && t > 0.0 => format!(" ({})", duration(t)),
                _ => String::new(),
            };
            return format!(
                "ranking settled after {of}{took}: every adjacent pair is separated in ≥ {:.0}% of bootstrap replicates",
                self.rule.level * 100.0
            );
        }
        if self.entries.len() < 2 {
            return format!("{of} graded: no ranking yet (two models need grades on a shared query)");
        }
        let left = self.total.map_or(usize::MAX, |t| t.saturating_sub(self.graded));
        let mut parts = Vec::new();
        if !self.unranked.is_empty() {
            parts.push(format!("{} model{} not ranked yet", self.unranked.len(), if self.unranked.len() == 1 { "" } else { "s" }));
        }
        let close = self.too_close();
        if close > 0 {
            let graded_per_model = self.graded.div_ceil(self.entries.len().max(1));
            // Unknown benchmark size (`rank` on a folder): estimates beyond doubling the run say little.
            let room = self.queries.map_or(graded_per_model, |q| q.saturating_sub(graded_per_model));
            // Pairs whose estimate fits in what the benchmark has left, and the others.
            let within: Vec<usize> = self.pairs.iter().filter(|p| !p.separated).filter_map(|p| p.more).filter(|&r| r <= room).collect();
            let mut s = format!("{close} pair{} still too close", if close == 1 { "" } else { "s" });
            if let Some(&r) = within.iter().max() {
                let models = self.entries.len() + self.unranked.len();
                let which = if within.len() < close { format!(" to separate {} of them", within.len()) } else { String::new() };
                s +=
                    &format!(": about {r} more response{} per model{which}{}", if r == 1 { "" } else { "s" }, time((r * models).min(left)));
            }
            let rest = close - within.len();
            if rest > 0 {
                let within = if self.queries.is_some() { "within this benchmark" } else { "within twice the responses graded so far" };
                s += &format!(" ({rest} show{} no sign of separating {within})", if rest == 1 { "s" } else { "" });
            }
            parts.push(s);
        }
        format!("{of} graded; {}", parts.join("; "))
    }
}

/// What a run measured of its own speed, for [`Standing::sentence`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Pace {
    pub secs_per_response: Option<f64>,
    /// Seconds spent grading so far.
    pub elapsed: Option<f64>,
}

/// A duration for people: `45 s`, `12 min`, `2 h 05 min`.
pub fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s < 90 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min", (s + 30) / 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60)
    }
}

/// The standard normal quantile Φ⁻¹(p), by bisection on Φ(x) = erfc(−x/√2)/2 (to 1e-12).
pub fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 0.5 * libm::erfc(-mid / std::f64::consts::SQRT_2) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Score;
    use crate::stats::Rng;

    fn scores(strengths: &[f64], queries: usize, seed: u64) -> Vec<Score> {
        let mut rng = Rng::new(seed);
        let mut v = Vec::new();
        for q in 0..queries {
            for (m, s) in strengths.iter().enumerate() {
                let score = (s + rng.uniform(-2.0, 2.0)).clamp(1.0, 10.0);
                v.push(Score { session_id: format!("q{q:03}"), model_test: format!("m{m}"), score, judge: None });
            }
        }
        v
    }

    fn models(n: usize) -> Vec<String> {
        (0..n).map(|m| format!("m{m}")).collect()
    }

    fn opts() -> RankOptions {
        RankOptions { bootstrap: 200, ..Default::default() }
    }

    #[test]
    fn normal_quantile_matches_known_values() {
        // scipy.stats.norm.ppf
        assert!((normal_quantile(0.95) - 1.6448536269514722).abs() < 1e-9);
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-9);
        assert!(normal_quantile(0.5).abs() < 1e-9);
    }

    #[test]
    fn until_parses_and_refuses_nonsense() {
        assert_eq!(SettleRule::parse_until("settled").unwrap().level, 0.95);
        assert_eq!(SettleRule::parse_until("settled:0.99").unwrap().level, 0.99);
        for bad in ["settled:1.5", "settled:0.3", "settled:x", "done", "settled:"] {
            assert!(SettleRule::parse_until(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn far_apart_models_settle_and_equal_ones_do_not() {
        let t = ScoreTable::new(&scores(&[2.0, 5.0, 8.0], 40, 1)).unwrap();
        let s = Standing::new(&t, &models(3), Some(120), Some(40), &opts(), SettleRule::default()).unwrap();
        assert!(s.settled, "{s:?}");
        assert!(s
            .sentence(Pace { secs_per_response: Some(10.0), elapsed: Some(600.0) })
            .starts_with("ranking settled after 120 of 120 responses (10 min)"));
        // m1 answers exactly as m0 does: every replicate ties them.
        let mut v = scores(&[5.0, 5.0, 8.0], 40, 2);
        let m0: Vec<f64> = v.iter().filter(|s| s.model_test == "m0").map(|s| s.score).collect();
        v.iter_mut().filter(|s| s.model_test == "m1").zip(m0).for_each(|(s, x)| s.score = x);
        let t = ScoreTable::new(&v).unwrap();
        let s = Standing::new(&t, &models(3), Some(120), Some(40), &opts(), SettleRule::default()).unwrap();
        assert!(!s.settled);
        assert_eq!(s.entries[0].model, "m2");
        assert!(s.pairs[0].separated && !s.pairs[1].separated, "{:?}", s.pairs);
        assert_eq!((s.pairs[1].pair.share, s.pairs[1].more), (0.0, None));
        assert!(
            s.sentence(Pace::default()).ends_with("1 pair still too close (1 shows no sign of separating within this benchmark)"),
            "{}",
            s.sentence(Pace::default())
        );
    }

    #[test]
    fn too_few_shared_queries_never_separate() {
        // Three queries where one model always wins: every replicate agrees, yet it is not enough.
        let t = ScoreTable::new(&scores(&[1.0, 9.0], 3, 3)).unwrap();
        let s = Standing::new(&t, &models(2), Some(6), Some(30), &opts(), SettleRule::default()).unwrap();
        assert_eq!(s.pairs[0].pair.share, 1.0);
        assert!(!s.settled);
        assert_eq!(s.pairs[0].more, Some(DEFAULT_MIN_QUERIES - 3));
    }

    #[test]
    fn unranked_models_keep_a_run_unsettled() {
        let t = ScoreTable::new(&scores(&[2.0, 8.0], 30, 4)).unwrap();
        let s = Standing::new(&t, &models(3), Some(90), Some(30), &opts(), SettleRule::default()).unwrap();
        assert_eq!(s.unranked, vec!["m2".to_string()]);
        assert!(!s.settled);
        assert!(s.sentence(Pace::default()).contains("1 model not ranked yet"), "{}", s.sentence(Pace::default()));
        let one = ScoreTable::new(&scores(&[2.0], 5, 4)).unwrap();
        let s = Standing::new(&one, &models(2), Some(10), Some(5), &opts(), SettleRule::default()).unwrap();
        assert!(s.entries.is_empty() && !s.settled);
    }

    #[test]
    fn queries_needed_scales_with_the_squared_z() {
        let pair = |mean_gap: f64, sd_gap: f64, common: usize| AdjacentPair {
            above: "a".into(),
            below: "b".into(),
            share: 0.8,
            replicates: 100,
            mean_gap,
            sd_gap,
            common,
        };
        let rule = SettleRule::default();
        // z = 1 on 20 queries; z* = 1.6449 at 0.95: 20 · 1.6449² = 54.1 → 55.
        assert_eq!(rule.queries_needed(&pair(1.0, 1.0, 20)), Some(55));
        // Half the spread, a quarter of the queries (but more than it has, and at least the minimum).
        assert_eq!(rule.queries_needed(&pair(2.0, 1.0, 20)), Some(21));
        assert_eq!(rule.queries_needed(&pair(2.0, 1.0, 4)), Some(DEFAULT_MIN_QUERIES));
        assert_eq!(rule.queries_needed(&pair(0.0, 1.0, 20)), None);
        assert_eq!(rule.queries_needed(&pair(-1.0, 1.0, 20)), None);
        let strict = SettleRule { level: 0.99, ..rule };
        assert!(strict.queries_needed(&pair(1.0, 1.0, 20)).unwrap() > 55);
    }
}
