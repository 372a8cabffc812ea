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
//!
//! Each pair's [`PairState`] is the one story the rows and the summary sentence tell (the CLI and
//! the page print its words): separated; too close with an estimate that fits in the benchmark;
//! ordered so far but on fewer shared queries than the rule's minimum; too close beyond what the
//! benchmark holds; no sign of an order; or, on a benchmark with fewer queries than the minimum,
//! never separable here. Percentages are said only beside a separated pair, and an interval of no
//! width (one query, or identical scores) is no interval.

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
    /// difference yet). What the adaptive order sorts by; [`PairVerdict::state`] says whether the
    /// benchmark can give that many.
    pub more: Option<usize>,
    pub state: PairState,
    /// The state in words, as the rows of the CLI and the page print it.
    pub verdict: String,
}

/// Where an adjacent pair stands (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PairState {
    /// Ordered this way in at least the rule's share of replicates, on enough shared queries.
    Separated,
    /// Too close: about `more` more responses per model are estimated to separate it, and the
    /// benchmark has them.
    Closing { more: usize },
    /// Ordered this way in at least the rule's share of replicates, but on `common` shared queries,
    /// fewer than the rule's minimum (which the benchmark can still reach).
    FewShared { common: usize },
    /// Too close, and the estimate (or the minimum of shared queries) is more than the benchmark holds.
    NotWithin,
    /// No gap in its favour yet: nothing says it will separate.
    NoSign,
    /// The benchmark has fewer queries than the rule's minimum of shared queries: no pair separates here.
    CannotSeparate,
}

impl PairState {
    /// The state of `pair` under `rule`, the benchmark holding `queries` queries (`None`: unknown, and
    /// then estimates beyond twice the shared queries so far count as not within reach).
    pub fn of(pair: &AdjacentPair, rule: &SettleRule, queries: Option<usize>) -> Self {
        if rule.separates(pair) {
            return PairState::Separated;
        }
        if queries.is_some_and(|q| q < rule.min_queries) {
            return PairState::CannotSeparate;
        }
        let reach = queries.unwrap_or(2 * pair.common.max(1));
        match rule.queries_needed(pair) {
            Some(n) if n > reach => PairState::NotWithin,
            Some(_) if pair.share >= rule.level => PairState::FewShared { common: pair.common },
            Some(n) => PairState::Closing { more: n - pair.common },
            None => PairState::NoSign,
        }
    }

    /// The state in words for a row ("vs next"): `share` (of replicates) is said only beside a
    /// separated pair.
    pub fn words(&self, share: f64, rule: &SettleRule, queries: Option<usize>) -> String {
        let within = if queries.is_some() { "this benchmark" } else { "twice the queries graded so far" };
        match *self {
            PairState::Separated => format!("separated ({:.0}% of replicates)", share * 100.0),
            PairState::Closing { more } => format!("too close: about {more} more response{} per model", if more == 1 { "" } else { "s" }),
            PairState::FewShared { common } => format!("too close: {common} shared queries of the {} needed", rule.min_queries),
            PairState::NotWithin => format!("too close: not separable within {within}"),
            PairState::NoSign => "too close: no sign of an order yet".into(),
            PairState::CannotSeparate => {
                format!("cannot separate: {} queries here, {} shared needed", queries.unwrap_or(0), rule.min_queries)
            }
        }
    }
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
        let (mut entries, adjacent) = ranking.map(|r| (r.entries, r.adjacent)).unwrap_or_default();
        // An interval of no width (one shared query, identical scores) tells nothing: none.
        for e in &mut entries {
            if e.lower.zip(e.upper).is_some_and(|(l, u)| (u - l).abs() < 1e-9) {
                (e.lower, e.upper) = (None, None);
            }
        }
        let ranked: std::collections::HashSet<&str> = entries.iter().map(|e| e.model.as_str()).collect();
        let unranked: Vec<String> = models.iter().filter(|m| !ranked.contains(m.as_str())).cloned().collect();
        let pairs: Vec<PairVerdict> = adjacent
            .into_iter()
            .map(|pair| {
                let state = PairState::of(&pair, &rule, queries);
                let separated = state == PairState::Separated;
                let more = if separated { None } else { rule.queries_needed(&pair).map(|n| n - pair.common) };
                let verdict = state.words(pair.share, &rule, queries);
                PairVerdict { pair, separated, more, state, verdict }
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
        if self.queries.is_some_and(|q| q < self.rule.min_queries) {
            parts.push(format!(
                "this benchmark has {} queries, fewer than the {} shared queries a separated pair needs: the ranking cannot settle here",
                self.queries.unwrap_or(0),
                self.rule.min_queries
            ));
        } else if close > 0 {
            // The summary counts what the rows say: estimates within reach, and the rest.
            let within: Vec<usize> = self
                .pairs
                .iter()
                .filter(|p| matches!(p.state, PairState::Closing { .. } | PairState::FewShared { .. }))
                .filter_map(|p| p.more)
                .collect();
            let mut s = format!("{close} pair{} still too close", if close == 1 { "" } else { "s" });
            if let Some(&r) = within.iter().max() {
                let models = self.entries.len() + self.unranked.len();
                let which = if within.len() < close { format!(" to separate {} of them", within.len()) } else { String::new() };
                s +=
                    &format!(": about {r} more response{} per model{which}{}", if r == 1 { "" } else { "s" }, time((r * models).min(left)));
            }
            let rest = close - within.len();
            if rest > 0 {
                let within = if self.queries.is_some() { "within this benchmark" } else { "within twice the queries graded so far" };
                s += &format!(" ({rest} not expected to separate {within})");
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
            s.sentence(Pace::default()).ends_with("1 pair still too close (1 not expected to separate within this benchmark)"),
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
        // Its row says why, with no percentage beside a verdict it contradicts.
        assert_eq!(s.pairs[0].state, PairState::FewShared { common: 3 });
        assert_eq!(s.pairs[0].verdict, "too close: 3 shared queries of the 10 needed");
    }

    /// A benchmark with fewer queries than the rule's minimum can never separate a pair: every row
    /// and the sentence say so, with no estimate of "more" it could never give.
    #[test]
    fn a_benchmark_below_the_minimum_says_it_cannot_settle() {
        let t = ScoreTable::new(&scores(&[1.0, 5.0, 9.0], 3, 5)).unwrap();
        let s = Standing::new(&t, &models(3), Some(9), Some(3), &opts(), SettleRule::default()).unwrap();
        assert!(!s.settled);
        assert!(s.pairs.iter().all(|p| p.state == PairState::CannotSeparate), "{:?}", s.pairs);
        assert_eq!(s.pairs[0].verdict, "cannot separate: 3 queries here, 10 shared needed");
        let sentence = s.sentence(Pace { secs_per_response: Some(5.0), elapsed: None });
        assert!(sentence.contains("the ranking cannot settle here") && !sentence.contains("more"), "{sentence}");
    }

    /// Tied models: no sign of an order, said without the 0% of replicates that orders them.
    #[test]
    fn a_tie_shows_no_sign_and_no_percentage() {
        let mut v = scores(&[5.0, 5.0], 12, 6);
        let m0: Vec<f64> = v.iter().filter(|s| s.model_test == "m0").map(|s| s.score).collect();
        v.iter_mut().filter(|s| s.model_test == "m1").zip(m0).for_each(|(s, x)| s.score = x);
        let s = Standing::new(&ScoreTable::new(&v).unwrap(), &models(2), Some(40), Some(20), &opts(), SettleRule::default()).unwrap();
        assert_eq!(s.pairs[0].state, PairState::NoSign);
        assert!(!s.pairs[0].verdict.contains('%'), "{}", s.pairs[0].verdict);
    }

    /// A pair whose estimate needs more shared queries than the benchmark holds says so, and the
    /// summary counts it with the pairs that show no sign, not among those "about N more" separates.
    #[test]
    fn an_estimate_beyond_the_benchmark_is_not_within_it() {
        let pair =
            AdjacentPair { above: "a".into(), below: "b".into(), share: 0.7, replicates: 100, mean_gap: 1.0, sd_gap: 1.0, common: 20 };
        let rule = SettleRule::default();
        // 55 shared queries needed (see queries_needed_scales_with_the_squared_z).
        assert_eq!(PairState::of(&pair, &rule, Some(40)), PairState::NotWithin);
        assert_eq!(PairState::of(&pair, &rule, Some(80)), PairState::Closing { more: 35 });
        // Unknown size: within twice the shared queries so far.
        assert_eq!(PairState::of(&pair, &rule, None), PairState::NotWithin);
        assert_eq!(PairState::NotWithin.words(0.7, &rule, Some(40)), "too close: not separable within this benchmark");
    }

    /// The sentence and the rows tell one story: the pairs it calls too close are the rows' pairs that
    /// are not separated, the largest "more" it gives is a row's, and nothing it counts as estimable
    /// is a row that says otherwise; intervals of no width are none.
    #[test]
    fn the_summary_agrees_with_the_rows() {
        for (seed, queries, graded) in [(7, 16, 4), (8, 16, 12), (9, 40, 6), (10, 40, 25), (11, 80, 14)] {
            let t = ScoreTable::new(&scores(&[4.0, 4.6, 5.0, 7.5], graded, seed)).unwrap();
            let s = Standing::new(&t, &models(4), Some(4 * queries), Some(queries), &opts(), SettleRule::default()).unwrap();
            let sentence = s.sentence(Pace::default());
            let close = s.pairs.iter().filter(|p| !p.separated).count();
            if close > 0 {
                assert!(sentence.contains(&format!("{close} pair{} still too close", if close == 1 { "" } else { "s" })), "{sentence}");
            }
            let within: Vec<usize> = s
                .pairs
                .iter()
                .filter(|p| matches!(p.state, PairState::Closing { .. } | PairState::FewShared { .. }))
                .filter_map(|p| p.more)
                .collect();
            match within.iter().max() {
                Some(r) => assert!(sentence.contains(&format!("about {r} more")), "{sentence}"),
                None => assert!(!sentence.contains("more response"), "{sentence}"),
            }
            for p in &s.pairs {
                assert_eq!(p.separated, p.state == PairState::Separated);
                assert_eq!(p.verdict.contains('%'), p.separated, "{}", p.verdict);
                if let PairState::Closing { more } = p.state {
                    assert!(p.pair.common + more <= queries, "{p:?}");
                }
            }
            for e in &s.entries {
                assert!(e.lower.zip(e.upper).is_none_or(|(l, u)| u - l > 1e-9), "{e:?}");
            }
        }
        // One shared query: the bootstrap's interval has no width, and none is given.
        let t = ScoreTable::new(&scores(&[2.0, 8.0], 1, 12)).unwrap();
        let s = Standing::new(&t, &models(2), Some(40), Some(20), &opts(), SettleRule::default()).unwrap();
        assert!(s.entries.iter().all(|e| e.lower.is_none() && e.upper.is_none()), "{:?}", s.entries);
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
