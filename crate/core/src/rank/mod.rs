//! Where response scores become ranks.
//!
//! 1. [`ScoreTable`]: one score per (model, query).
//! 2. [`PairRule`]: pointwise → pairwise. For every query and every pair of models, the higher score
//!    wins; a difference below the tie margin (RocketEval and WildBench use 0.1) is a tie; exactly equal
//!    scores follow an explicit [`EqualScores`] policy.
//! 3. [`Method`]: a rating per model — Bradley–Terry (the default; Chatbot Arena's MLE, ties half a win),
//!    mean or median score, win rate, or online Elo (order-dependent, marked so).
//! 4. Percentile bootstrap CIs: resample queries (default), or reweight unique battles with a multinomial
//!    draw as Chatbot Arena does.

pub mod bradley_terry;
pub mod elo;
mod table;

pub use table::{BattleRows, ScoreRows, ScoreTable};

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{invalid, Result};
use crate::formats::{Battle, Winner};
use crate::stats::{self, Rng};

crate::named_enum!(
    /// What to do when two responses get exactly the same score.
    pub enum EqualScores, "the equal-score policy" {
        /// A tie: half a win each (the default; seed 001 App A's "=" rule).
        Tie = "tie",
        /// No battle.
        Skip = "skip",
    }
);

crate::named_enum!(
    /// How a pairwise judgment (both presentation orders) becomes battles.
    pub enum PairOrders, "the battles per comparison" {
        /// One battle from the two orders' mean p(A better) (a 5-point verdict: each order's win
        /// share) — the default: a small judge's verdict in one order is mostly its position bias,
        /// and the mean of the two orders' probabilities keeps what signal there is (docs/measurements/design-knobs.md).
        Mean = "mean",
        /// One battle per order, as seed 001 counts them; a 5-point verdict weighs as Arena-Hard's:
        /// "much better" three wins, "better" one, a tie one tie.
        Each = "each",
    }
);

/// Score differences strictly below this are ties (RocketEval: 0.1).
pub const DEFAULT_TIE_MARGIN: f64 = 0.1;
/// Bootstrap replicates for the intervals.
pub const DEFAULT_BOOTSTRAP: usize = 1000;
/// The bootstrap's seed.
pub const DEFAULT_SEED: u64 = 42;

/// Scores → battles: pointwise scores, and pairwise judgments ([`crate::pairwise::comparisons`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairRule {
    /// Score differences strictly below this are ties (RocketEval: 0.1).
    pub tie_margin: f64,
    pub equal: EqualScores,
    /// Pairwise judgments only: battles per comparison.
    pub orders: PairOrders,
}

impl Default for PairRule {
    fn default() -> Self {
        Self { tie_margin: DEFAULT_TIE_MARGIN, equal: EqualScores::Tie, orders: PairOrders::Mean }
    }
}

impl PairRule {
    /// The outcome of A (score `a`) against B (score `b`), or `None` for no battle.
    pub fn outcome(&self, a: f64, b: f64) -> Option<Winner> {
        let d = a - b;
        if d == 0.0 {
            return match self.equal {
                EqualScores::Tie => Some(Winner::Tie),
                EqualScores::Skip => None,
            };
        }
        // "Smaller than the margin", with a little slack so that 7.0 − 6.9 (0.0999…96 in binary) is not a tie.
        if d.abs() < self.tie_margin - 1e-9 {
            Some(Winner::Tie)
        } else if d > 0.0 {
            Some(Winner::A)
        } else {
            Some(Winner::B)
        }
    }
}

/// A battle between models by index (a < b).
pub type IndexBattle = (usize, usize, Winner);
/// A battle and how many battles it counts as (1 for a pointwise pair; a 5-point verdict's expected
/// wins, see [`PairOrders::Each`]).
pub type WeightedBattle = (IndexBattle, f64);

/// Battles of each session: every pair (a < b by model order) that both have a score.
pub fn session_battles(table: &ScoreTable, rule: &PairRule) -> Vec<Vec<WeightedBattle>> {
    (0..table.sessions.len()).map(|s| Comparisons::Scores(rule).session(table, s).collect()).collect()
}

/// Where each session's battles come from: derived from the table's scores by a pair rule when they
/// are asked for (a session of n scores has n(n−1)/2 of them: stored for every session, they would
/// cost far more memory than the scores), or given (pairwise judgments, verdicts on pairs).
#[derive(Clone, Copy)]
enum Comparisons<'a> {
    Scores(&'a PairRule),
    Given(&'a [Vec<WeightedBattle>]),
}

impl Comparisons<'_> {
    /// The battles of session `s`.
    fn session<'t>(self, table: &'t ScoreTable, s: usize) -> Box<dyn Iterator<Item = WeightedBattle> + 't>
    where
        Self: 't,
    {
        match self {
            Comparisons::Given(per_session) => Box::new(per_session[s].iter().copied()),
            Comparisons::Scores(rule) => {
                let n = table.models.len();
                Box::new((0..n).filter_map(move |a| table.get(a, s).map(|sa| (a, sa))).flat_map(move |(a, sa)| {
                    (a + 1..n).filter_map(move |b| {
                        let sb = table.get(b, s)?;
                        rule.outcome(sa, sb).map(|w| ((a, b, w), 1.0))
                    })
                }))
            }
        }
    }

    /// The battles of `sessions`, repeats counting again.
    fn of<'t>(self, table: &'t ScoreTable, sessions: &'t [usize]) -> impl Iterator<Item = WeightedBattle> + 't
    where
        Self: 't,
    {
        sessions.iter().flat_map(move |&s| self.session(table, s))
    }
}

/// All pairwise battles implied by the scores, in Chatbot Arena's format (query order, then model
/// order), derived one query at a time as they are taken.
pub fn battles<'t>(table: &'t ScoreTable, rule: &'t PairRule) -> impl Iterator<Item = Battle> + 't {
    (0..table.sessions.len()).flat_map(move |s| {
        Comparisons::Scores(rule).session(table, s).map(move |((a, b, w), _)| Battle {
            model_a: table.models[a].clone(),
            model_b: table.models[b].clone(),
            winner: w,
            question_id: Some(table.sessions[s].clone()),
        })
    })
}

/// Rank verdicts on pairs (given battles, or a judge's majority votes) with a pairwise method (a
/// verdict is not a score: `mean` and `median` are refused). The battles are models and sessions
/// (`question_id`; a battle without one is a session of its own) with each session's battles
/// (weight 1), for [`rank_comparisons`] — seed 001's setting 3: Bradley–Terry over instance-level
/// human judgments.
pub fn rank_battles(battles: BattleRows, opts: &RankOptions) -> Result<Ranking> {
    if !opts.method.is_pairwise() {
        return invalid!("verdicts on pairs are not scores: rank them with bt, winrate or elo, not {}", opts.method);
    }
    if battles.is_empty() {
        return invalid!("no verdicts on pairs to rank (none of the pairs has one)");
    }
    let (table, per_session) = battles.comparisons();
    rank_comparisons(&table, per_session, opts)
}

crate::named_enum!(
    /// How a model's rating is computed.
    pub enum Method, "the ranking method" {
        /// Bradley–Terry MLE on the pairwise battles, Elo scale (the default).
        BradleyTerry = "bt",
        Mean = "mean",
        Median = "median",
        /// Points (wins + ½ ties) per battle.
        WinRate = "winrate",
        /// Online Elo with K = 4 in battle order: order-dependent.
        Elo = "elo",
    }
);

impl Method {
    pub fn is_pairwise(self) -> bool {
        matches!(self, Method::BradleyTerry | Method::WinRate | Method::Elo)
    }
}

crate::named_enum!(
    /// What the bootstrap resamples.
    pub enum Resample, "bootstrap resampling" {
        /// Queries with replacement (all of a query's responses move together).
        Sessions = "sessions",
        /// Chatbot Arena's reweighting: multinomial counts over the unique (model_a, model_b, winner) battles.
        Battles = "battles",
    }
);

/// The settings a front-end chooses (the CLI's `rank` flags, the page's `{method, tieMargin, equal, pairOrders,
/// bootstrap, resample, seed}`); the defaults are the only ones.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RankSettings {
    pub method: Method,
    pub tie_margin: f64,
    pub equal: EqualScores,
    /// Pairwise judgments: one battle per order or one from their mean.
    pub pair_orders: PairOrders,
    pub bootstrap: usize,
    pub resample: Resample,
    pub seed: u64,
}

impl Default for RankSettings {
    fn default() -> Self {
        Self {
            method: Method::BradleyTerry,
            tie_margin: DEFAULT_TIE_MARGIN,
            equal: EqualScores::Tie,
            pair_orders: PairOrders::Mean,
            bootstrap: DEFAULT_BOOTSTRAP,
            resample: Resample::Sessions,
            seed: DEFAULT_SEED,
        }
    }
}

impl RankSettings {
    /// The options of [`rank`]; a negative or non-finite tie margin is refused.
    pub fn options(&self) -> Result<RankOptions> {
        if !(self.tie_margin >= 0.0 && self.tie_margin.is_finite()) {
            return invalid!("the tie margin must be a non-negative number, not {}", self.tie_margin);
        }
        Ok(RankOptions {
            method: self.method,
            pairs: PairRule { tie_margin: self.tie_margin, equal: self.equal, orders: self.pair_orders },
            bootstrap: self.bootstrap,
            resample: self.resample,
            seed: self.seed,
            ..Default::default()
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RankOptions {
    pub method: Method,
    pub pairs: PairRule,
    /// Bootstrap replicates; 0 for no intervals.
    pub bootstrap: usize,
    pub resample: Resample,
    pub level: f64,
    pub seed: u64,
    /// Shift ratings so this model has this rating (Elo-scale methods only).
    pub anchor: Option<(String, f64)>,
    pub elo_k: f64,
}

impl Default for RankOptions {
    fn default() -> Self {
        Self {
            method: Method::BradleyTerry,
            pairs: PairRule::default(),
            bootstrap: DEFAULT_BOOTSTRAP,
            resample: Resample::Sessions,
            level: 0.95,
            seed: DEFAULT_SEED,
            anchor: None,
            elo_k: elo::DEFAULT_K,
        }
    }
}

/// One row of a leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct RankedModel {
    pub model: String,
    pub score: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// 1 + the number of models with a strictly higher score.
    pub rank: usize,
    /// Responses of this model that have a score.
    pub responses: usize,
    /// Pairwise methods: battles this model took part in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battles: Option<usize>,
    /// Notes about this row, e.g. "undefeated: rating held finite by a weak prior".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranking {
    pub method: Method,
    /// Online Elo depends on the order of battles; every other method does not.
    pub order_dependent: bool,
    pub entries: Vec<RankedModel>,
    /// Each adjacent pair of `entries` (best first) and how often the bootstrap orders it this way;
    /// empty without bootstrap replicates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adjacent: Vec<AdjacentPair>,
}

/// Two models next to each other on the leaderboard, seen through the bootstrap.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct AdjacentPair {
    /// The model ranked higher (by the point estimate).
    pub above: String,
    pub below: String,
    /// Share of the bootstrap replicates that rate `above` strictly higher than `below`.
    pub share: f64,
    /// Replicates that rated both.
    pub replicates: usize,
    /// The mean and standard deviation of `above`'s rating minus `below`'s over those replicates.
    pub mean_gap: f64,
    pub sd_gap: f64,
    /// Queries on which both models have a score.
    pub common: usize,
}

/// Rank the models of `table` (pointwise scores; battles by the options' pair rule).
pub fn rank(table: &ScoreTable, opts: &RankOptions) -> Result<Ranking> {
    rank_with(table, Comparisons::Scores(&opts.pairs), opts)
}

/// Rank from scores and each session's battles given separately: pairwise judgments
/// ([`crate::pairwise::comparisons`]) give both, so every method applies to every evaluation type.
pub fn rank_comparisons(table: &ScoreTable, per_session: Vec<Vec<WeightedBattle>>, opts: &RankOptions) -> Result<Ranking> {
    rank_with(table, Comparisons::Given(&per_session), opts)
}

fn rank_with(table: &ScoreTable, comparisons: Comparisons, opts: &RankOptions) -> Result<Ranking> {
    let n = table.models.len();
    if n < 2 {
        return invalid!("ranking needs at least two models with scores, found {n}");
    }
    if opts.resample == Resample::Battles && !opts.method.is_pairwise() {
        return invalid!("battle resampling applies to pairwise methods (bt, winrate, elo), not {:?}", opts.method);
    }
    let all_sessions: Vec<usize> = (0..table.sessions.len()).collect();
    let point = estimate(table, comparisons, &all_sessions, opts)?;

    // One pass over every battle: the battles each model took part in, and their count.
    let mut battles_per_model = vec![0.0; n];
    let mut total = 0usize;
    for ((a, b, _), weight) in comparisons.of(table, &all_sessions) {
        battles_per_model[a] += weight;
        battles_per_model[b] += weight;
        total += 1;
    }

    // Each replicate's ratings of every model (NaN: not rated in that replicate).
    let mut replicates: Vec<Vec<f64>> = Vec::with_capacity(opts.bootstrap);
    if opts.bootstrap > 0 {
        let mut rng = Rng::new(opts.seed);
        // Battle resampling draws from the distinct battles: as many draws as there are battle
        // records, each in proportion to its battle's weight and weighing the mean weight (with unit
        // weights: Arena's multinomial counts).
        let unique = if opts.resample == Resample::Battles { unique_battles(comparisons.of(table, &all_sessions)) } else { Vec::new() };
        let p: Vec<f64> = unique.iter().map(|u| u.1).collect();
        let per_draw = p.iter().sum::<f64>() / total.max(1) as f64;
        for _ in 0..opts.bootstrap {
            let est = match opts.resample {
                Resample::Sessions => estimate(table, comparisons, &rng.resample(table.sessions.len()), opts).map(|e| e.ratings),
                Resample::Battles => {
                    let counts = rng.multinomial(total, &p);
                    let weighted: Vec<WeightedBattle> =
                        unique.iter().zip(counts).filter(|(_, c)| *c > 0).map(|(u, c)| (u.0, c as f64 * per_draw)).collect();
                    pairwise_estimate(n, weighted, opts, Some(&mut rng)).map(|(r, _)| r.ratings)
                }
            };
            // A resample without comparisons (tiny inputs) has no estimate; it is skipped, not faked.
            if let Ok(ratings) = est {
                replicates.push(ratings);
            }
        }
    }

    let responses: Vec<usize> = (0..n).map(|m| table.answered(m)).collect();
    let mut entries: Vec<RankedModel> = (0..n)
        .map(|m| {
            let samples: Vec<f64> = replicates.iter().map(|r| r[m]).collect();
            let ci = stats::percentile_interval(&samples, opts.bootstrap, opts.level);
            RankedModel {
                model: table.models[m].clone(),
                score: point.ratings[m] + point.shift,
                lower: ci.map(|c| c.lower + point.shift),
                upper: ci.map(|c| c.upper + point.shift),
                rank: 0,
                responses: responses[m],
                battles: opts.method.is_pairwise().then_some(battles_per_model[m].round() as usize),
                notes: point.notes[m].clone(),
            }
        })
        .collect();
    // Bootstrap ratings were computed before the anchor shift; `shift` moves point and interval alike.
    entries.retain(|e| e.score.is_finite());
    entries.sort_by(|x, y| y.score.total_cmp(&x.score).then_with(|| x.model.cmp(&y.model)));
    // Sorted best first: a model's rank is 1 + the place of the first entry with its score.
    for k in 0..entries.len() {
        entries[k].rank = if k > 0 && entries[k - 1].score == entries[k].score { entries[k - 1].rank } else { k + 1 };
    }
    let index: HashMap<&str, usize> = table.models.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let adjacent = if replicates.is_empty() {
        Vec::new()
    } else {
        entries.windows(2).map(|w| adjacent_pair(table, &replicates, index[w[0].model.as_str()], index[w[1].model.as_str()])).collect()
    };
    Ok(Ranking { method: opts.method, order_dependent: opts.method == Method::Elo, entries, adjacent })
}

/// How the bootstrap replicates order models `a` (ranked above) and `b`.
fn adjacent_pair(table: &ScoreTable, replicates: &[Vec<f64>], a: usize, b: usize) -> AdjacentPair {
    let gaps: Vec<f64> = replicates.iter().map(|r| r[a] - r[b]).filter(|g| g.is_finite()).collect();
    let above = gaps.iter().filter(|&&g| g > 0.0).count();
    // Zero, not NaN, without replicates: no gap shown (and the numbers survive a JSON round trip).
    let mean_gap = if gaps.is_empty() { 0.0 } else { stats::mean(&gaps) };
    let sd_gap =
        if gaps.len() < 2 { 0.0 } else { (gaps.iter().map(|g| (g - mean_gap).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64).sqrt() };
    AdjacentPair {
        above: table.models[a].clone(),
        below: table.models[b].clone(),
        share: if gaps.is_empty() { 0.0 } else { above as f64 / gaps.len() as f64 },
        replicates: gaps.len(),
        mean_gap,
        sd_gap,
        common: table.common(a, b),
    }
}

/// Each model's rating (in `table.models`' order, NaN where unrated, no anchor shift) from the
/// `sessions` given, repeats counting again: what one replicate of [`rank_comparisons`]'s query bootstrap
/// computes.
pub fn ratings_on(table: &ScoreTable, per_session: &[Vec<WeightedBattle>], sessions: &[usize], opts: &RankOptions) -> Result<Vec<f64>> {
    estimate(table, Comparisons::Given(per_session), sessions, opts).map(|e| e.ratings)
}

struct Estimate {
    ratings: Vec<f64>,
    /// Added to every rating (and interval) to honour the anchor.
    shift: f64,
    notes: Vec<Vec<String>>,
}

fn estimate(table: &ScoreTable, comparisons: Comparisons, sessions: &[usize], opts: &RankOptions) -> Result<Estimate> {
    let n = table.models.len();
    let ratings = match opts.method {
        Method::Mean | Method::Median => {
            let mut r = Vec::with_capacity(n);
            for m in 0..n {
                let xs: Vec<f64> = sessions.iter().filter_map(|&s| table.get(m, s)).collect();
                r.push(match (xs.is_empty(), opts.method) {
                    (true, _) => f64::NAN,
                    (false, Method::Mean) => stats::mean(&xs),
                    (false, _) => stats::median(&xs),
                });
            }
            r
        }
        _ => {
            let (est, notes) = pairwise_estimate(n, comparisons.of(table, sessions), opts, None)?;
            return Ok(Estimate { shift: anchor_shift(table, &est.ratings, opts), ratings: est.ratings, notes });
        }
    };
    Ok(Estimate { ratings, shift: 0.0, notes: vec![Vec::new(); n] })
}

struct PairwiseEstimate {
    ratings: Vec<f64>,
}

/// Ratings from weighted battles. For online Elo the battles are replayed in the given order, or in a
/// random order when `shuffle` is given (bootstrap replicates, as Arena's bootstrap does).
fn pairwise_estimate(
    n: usize,
    weighted: impl IntoIterator<Item = WeightedBattle>,
    opts: &RankOptions,
    shuffle: Option<&mut Rng>,
) -> Result<(PairwiseEstimate, Vec<Vec<String>>)> {
    // Online Elo replays the battles in order; the other methods read them once, as they come.
    let mut sequence: Vec<WeightedBattle> = Vec::new();
    let mut any = false;
    // Each pair that met once, with the points each side took (memory linear in the pairs, never n²).
    let mut at: HashMap<(usize, usize), usize> = HashMap::new();
    let mut pairs: Vec<bradley_terry::Pair> = Vec::new();
    let mut games = vec![0.0; n];
    let mut points = vec![0.0; n];
    for ((a, b, w), weight) in weighted {
        any = true;
        if opts.method == Method::Elo {
            sequence.push(((a, b, w), weight));
        }
        let (i, j, wins_i) = if a < b { (a, b, w.score_a()) } else { (b, a, 1.0 - w.score_a()) };
        let k = *at.entry((i, j)).or_insert_with(|| {
            pairs.push(bradley_terry::Pair { i, j, wins_i: 0.0, wins_j: 0.0 });
            pairs.len() - 1
        });
        pairs[k].wins_i += weight * wins_i;
        pairs[k].wins_j += weight * (1.0 - wins_i);
        points[i] += weight * wins_i;
        points[j] += weight * (1.0 - wins_i);
        games[a] += weight;
        games[b] += weight;
    }
    if !any {
        return invalid!("no pairwise comparisons between the models (do they answer the same queries?)");
    }
    let mut notes = vec![Vec::new(); n];
    let ratings = match opts.method {
        Method::BradleyTerry => {
            let fit = bradley_terry::fit_pairs(n, &pairs)?;
            if fit.regularized {
                let (mut won, mut lost) = (vec![false; n], vec![false; n]);
                for p in &pairs {
                    won[p.i] |= p.wins_i > 0.0;
                    lost[p.j] |= p.wins_i > 0.0;
                    won[p.j] |= p.wins_j > 0.0;
                    lost[p.i] |= p.wins_j > 0.0;
                }
                for m in 0..n {
                    let (lost, won) = (lost[m], won[m]);
                    if !lost {
                        notes[m].push("undefeated: rating held finite by a weak prior (one virtual tie with an average model)".into());
                    } else if !won {
                        notes[m].push("never won: rating held finite by a weak prior (one virtual tie with an average model)".into());
                    }
                }
            }
            // Models without any battle have no rating.
            fit.ratings.iter().enumerate().map(|(m, r)| if games[m] > 0.0 { *r } else { f64::NAN }).collect()
        }
        Method::WinRate => (0..n).map(|m| if games[m] > 0.0 { points[m] / games[m] } else { f64::NAN }).collect(),
        Method::Elo => {
            // A battle of weight w is replayed ⌊w⌋ times, then once more with K scaled by the rest.
            let mut seq: Vec<WeightedBattle> = Vec::new();
            for (b, weight) in sequence {
                seq.extend(std::iter::repeat_n((b, 1.0), weight.floor() as usize));
                if weight.fract() > 1e-9 {
                    seq.push((b, weight.fract()));
                }
            }
            if let Some(rng) = shuffle {
                rng.shuffle(&mut seq);
            }
            elo::online_elo(n, seq, opts.elo_k).into_iter().enumerate().map(|(m, r)| if games[m] > 0.0 { r } else { f64::NAN }).collect()
        }
        Method::Mean | Method::Median => unreachable!("pointwise methods do not use battles"),
    };
    Ok((PairwiseEstimate { ratings }, notes))
}

fn anchor_shift(table: &ScoreTable, ratings: &[f64], opts: &RankOptions) -> f64 {
    match &opts.anchor {
        Some((model, value)) if matches!(opts.method, Method::BradleyTerry | Method::Elo) => {
            table.models.iter().position(|m| m == model).map(|i| value - ratings[i]).unwrap_or(0.0)
        }
        _ => 0.0,
    }
}

/// Distinct battles and their total weight (for multinomial reweighting).
fn unique_battles(battles: impl Iterator<Item = WeightedBattle>) -> Vec<WeightedBattle> {
    let mut counts: HashMap<(usize, usize, u8), f64> = HashMap::new();
    for ((a, b, w), weight) in battles {
        *counts.entry((a, b, w as u8)).or_insert(0.0) += weight;
    }
    let mut out: Vec<WeightedBattle> = counts
        .into_iter()
        .map(|((a, b, w), c)| {
            let w = match w {
                x if x == Winner::A as u8 => Winner::A,
                x if x == Winner::B as u8 => Winner::B,
                _ => Winner::Tie,
            };
            ((a, b, w), c)
        })
        .collect();
    // HashMap order is random per process; sort so the seeded draw is reproducible.
    out.sort_by_key(|&((a, b, w), _)| (a, b, w as u8));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Score;

    fn score(m: &str, s: &str, v: f64) -> Score {
        Score { session_id: s.into(), model_test: m.into(), score: v, judge: None }
    }

    /// Three models on four queries; "a" is best, "c" worst.
    fn table() -> ScoreTable {
        ScoreTable::new(&table_scores()).unwrap()
    }

    fn table_scores() -> Vec<Score> {
        let mut v = Vec::new();
        for (i, s) in ["q1", "q2", "q3", "q4"].iter().enumerate() {
            v.push(score("a", s, 8.0 + i as f64 * 0.1));
            v.push(score("b", s, if i == 0 { 9.0 } else { 6.0 }));
            v.push(score("c", s, 3.0 + if i == 3 { 3.95 } else { 0.0 }));
        }
        v
    }

    #[test]
    fn given_battles_rank_like_the_same_battles_from_scores() {
        // The battles the scores imply, given directly (as human verdicts are), rank the same.
        let t = table();
        let opts = RankOptions { bootstrap: 0, ..Default::default() };
        let (bt, per_session) = BattleRows::of(&battles(&t, &PairRule::default()).collect::<Vec<_>>()).comparisons();
        let given = rank_comparisons(&bt, per_session, &opts).unwrap();
        let from_scores = rank(&t, &opts).unwrap();
        for (g, f) in given.entries.iter().zip(&from_scores.entries) {
            assert_eq!(g.model, f.model);
            assert!((g.score - f.score).abs() < 1e-9);
        }
    }

    #[test]
    fn tie_margin_and_equal_policy() {
        let r = PairRule::default();
        assert_eq!(r.outcome(7.0, 6.95), Some(Winner::Tie));
        assert_eq!(r.outcome(7.0, 6.9), Some(Winner::A));
        assert_eq!(r.outcome(6.0, 7.0), Some(Winner::B));
        let skip = PairRule { tie_margin: 0.0, equal: EqualScores::Skip, ..Default::default() };
        assert_eq!(skip.outcome(5.0, 5.0), None);
        assert_eq!(skip.outcome(5.0, 4.99), Some(Winner::A));
    }

    #[test]
    fn swapping_a_and_b_flips_outcomes() {
        let r = PairRule::default();
        for (a, b) in [(1.0, 2.0), (3.0, 3.05), (9.0, 1.0), (4.0, 4.0)] {
            assert_eq!(r.outcome(a, b).map(Winner::swapped), r.outcome(b, a));
        }
    }

    #[test]
    fn battles_cover_every_pair_of_every_session() {
        let t = table();
        let b: Vec<_> = battles(&t, &PairRule::default()).collect();
        assert_eq!(b.len(), 4 * 3);
        // q4: b=6.0, c=6.95 → c wins; a=8.3 beats both.
        let q4: Vec<_> = b.iter().filter(|x| x.question_id.as_deref() == Some("q4")).collect();
        assert_eq!(q4.iter().find(|x| x.model_a == "b" && x.model_b == "c").unwrap().winner, Winner::B);
    }

    #[test]
    fn every_method_ranks_a_first() {
        for m in [Method::BradleyTerry, Method::Mean, Method::Median, Method::WinRate, Method::Elo] {
            let opts = RankOptions { method: m, bootstrap: 50, ..Default::default() };
            let r = rank(&table(), &opts).unwrap();
            assert_eq!(r.entries[0].model, "a", "{m:?}");
            assert_eq!(r.order_dependent, m == Method::Elo);
            for e in &r.entries {
                let (lo, hi) = (e.lower.unwrap(), e.upper.unwrap());
                assert!(lo <= hi, "{m:?} {e:?}");
            }
        }
    }

    #[test]
    fn undefeated_model_is_noted_and_bootstrap_is_seeded() {
        let opts = RankOptions { bootstrap: 100, ..Default::default() };
        let r1 = rank(&table(), &opts).unwrap();
        let r2 = rank(&table(), &opts).unwrap();
        assert_eq!(r1, r2);
        assert!(r1.entries.iter().all(|e| e.notes.is_empty()));
        let mut v = vec![score("top", "q1", 9.5), score("top", "q2", 9.5)];
        v.extend(table_scores());
        let with_top = rank(&ScoreTable::new(&v).unwrap(), &RankOptions { bootstrap: 0, ..Default::default() }).unwrap();
        assert_eq!(with_top.entries[0].model, "top");
        assert!(with_top.entries[0].notes[0].starts_with("undefeated"), "{:?}", with_top.entries[0]);
        let battles = RankOptions { resample: Resample::Battles, ..opts };
        assert!(rank(&table(), &battles).is_ok());
        let bad = RankOptions { method: Method::Mean, resample: Resample::Battles, ..Default::default() };
        assert!(rank(&table(), &bad).is_err());
    }

    #[test]
    fn anchor_shifts_points_and_intervals() {
        let base = RankOptions { bootstrap: 30, ..Default::default() };
        let r0 = rank(&table(), &base).unwrap();
        let anchored = rank(&table(), &RankOptions { anchor: Some(("b".into(), 1200.0)), ..base }).unwrap();
        let b = anchored.entries.iter().find(|e| e.model == "b").unwrap();
        assert!((b.score - 1200.0).abs() < 1e-9);
        let b0 = r0.entries.iter().find(|e| e.model == "b").unwrap();
        assert!((b.upper.unwrap() - b.score - (b0.upper.unwrap() - b0.score)).abs() < 1e-9);
    }

    #[test]
    fn bt_equals_win_ratio_order_on_a_balanced_round_robin() {
        // Every pair meets on every query (complete, balanced): BT order = win-ratio order (seed 001).
        let mut rng = Rng::new(11);
        let mut v = Vec::new();
        let strength = [0.0, 0.5, 1.0, 1.5, 2.5];
        for q in 0..40 {
            for (m, s) in strength.iter().enumerate() {
                v.push(score(&format!("m{m}"), &format!("q{q}"), s + rng.uniform(-2.0, 2.0)));
            }
        }
        let t = ScoreTable::new(&v).unwrap();
        let order = |m| rank(&t, &RankOptions { method: m, bootstrap: 0, ..Default::default() }).unwrap();
        let bt = order(Method::BradleyTerry);
        let wr = order(Method::WinRate);
        let names = |r: &Ranking| r.entries.iter().map(|e| e.model.clone()).collect::<Vec<_>>();
        assert_eq!(names(&bt), names(&wr));
        assert!(bt.entries.iter().all(|e| e.lower.is_none()));
    }

    #[test]
    fn duplicate_scores_are_rejected() {
        assert!(ScoreTable::new(&[score("a", "q", 1.0), score("a", "q", 2.0)]).is_err());
    }
}
