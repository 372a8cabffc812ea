//! Scores and rankings: core's result views over the stored judgments.

use std::collections::HashMap;

use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::formats::{self, arena, jsonl, Judgment, Lined, Problem, RankingEntry};
use rocketjudge_core::meta::{self, MetaOptions};
use rocketjudge_core::rank::{self, EqualScores, Method, PairRule, RankSettings, RankedModel, Resample, ScoreTable};
use rocketjudge_core::report;
use rocketjudge_core::score::scores_from_judgments;
use rocketjudge_core::settle::SettleRule;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::boundary::*;

/// RocketEval's label for each probability ("Yes (83.0)%", "Unsure", ...).
#[wasm_bindgen(js_name = judgmentLabels)]
pub fn judgment_labels(probs: JsValue) -> Result<JsValue, JsValue> {
    let p: Vec<Option<f64>> = from_js(probs, "probabilities")?;
    to_js(&p.into_iter().map(formats::judgment_label).collect::<Vec<_>>())
}

/// The decoding a view asks for (`{method, samples?, temperature?, seed?}`, core's `Decoding`); null or
/// absent: each judgment as it records. Every view that scores takes it as its last argument.
pub(crate) fn decoding(v: JsValue) -> Result<Option<Decoding>, JsValue> {
    settings(v, "decoding")
}

/// The judgments' scores under `decoding` (see [`decoding`]), and their problems.
pub(crate) fn judgment_scores(judgments: JsValue, decoding: JsValue) -> Result<(Vec<formats::Score>, Vec<Problem>), JsValue> {
    let js: Vec<Judgment> = from_js(judgments, "judgments")?;
    let lined: Vec<Lined<Judgment>> = js.into_iter().map(|value| Lined { line: 0, value }).collect();
    Ok(scores_from_judgments("judgments", &lined, self::decoding(decoding)?))
}

fn score_table(judgments: JsValue, decoding: JsValue) -> Result<ScoreTable, JsValue> {
    ScoreTable::new(&judgment_scores(judgments, decoding)?.0).map_err(err)
}

/// How one judgment's item probabilities become its score: `{mean, scale, bias, score, graded,
/// missing}` with `score = mean·scale + bias` (RocketEval's unsupervised score).
#[wasm_bindgen(js_name = explainScore)]
pub fn explain_score(judgment: JsValue) -> Result<JsValue, JsValue> {
    let j: Judgment = from_js(judgment, "judgment")?;
    let s = rocketjudge_core::score::unsupervised_score(&j.norm_probability).map_err(err)?;
    #[derive(Serialize)]
    struct E {
        mean: f64,
        scale: f64,
        bias: f64,
        score: f64,
        graded: usize,
        missing: usize,
    }
    use rocketjudge_core::score::{BIAS, SCALE};
    to_js(&E { mean: (s.score - BIAS) / SCALE, scale: SCALE, bias: BIAS, score: s.score, graded: s.graded, missing: s.missing })
}

/// Scores of judgments: `{scores: [{session_id, model_test, score}], problems}` (`decoding` as in
/// [`judgment_scores`]).
#[wasm_bindgen(js_name = scoreJudgments)]
pub fn score_judgments(judgments: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let (scores, problems) = judgment_scores(judgments, decoding)?;
    #[derive(Serialize)]
    struct S {
        scores: Vec<formats::Score>,
        problems: Vec<Problem>,
    }
    to_js(&S { scores, problems })
}

/// The ranking settings' defaults, `{method, tieMargin, equal, pairOrders, bootstrap, resample, seed}`, and each
/// choice's names (`methods`, `equalScores`, `resamples`): the page's options come from here.
#[wasm_bindgen(js_name = rankDefaults)]
pub fn rank_defaults() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct D {
        settings: RankSettings,
        methods: &'static [&'static str],
        equal_scores: &'static [&'static str],
        resamples: &'static [&'static str],
    }
    to_js(&D { settings: RankSettings::default(), methods: Method::NAMES, equal_scores: EqualScores::NAMES, resamples: Resample::NAMES })
}

/// Rank models from judgments. `settings` (optional, each field too): `{method, tieMargin, equal, pairOrders,
/// bootstrap, resample, seed}`; the defaults are `rankDefaults()`; `decoding` as in [`judgment_scores`].
/// The ranking comes with `rule` and `separated` (see [`RankingWithVerdicts`]).
#[wasm_bindgen]
pub fn rank(judgments: JsValue, settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let s: RankSettings = self::settings(settings, "settings")?;
    let ranking = rank::rank(&score_table(judgments, decoding)?, &s.options().map_err(err)?).map_err(err)?;
    let rule = SettleRule::default();
    let separated = ranking.adjacent.iter().map(|p| rule.separates(p)).collect();
    to_js(&RankingWithVerdicts { ranking, rule, separated })
}

/// A ranking with, per adjacent pair, whether the live leaderboard's rule (core's `settle`, its
/// default) counts it separated, and that rule: the leaderboard says so without restating the rule.
#[derive(serde::Serialize)]
struct RankingWithVerdicts {
    #[serde(flatten)]
    ranking: rank::Ranking,
    rule: SettleRule,
    separated: Vec<bool>,
}

/// The pair rule of ranking settings.
fn pair_rule(settings: JsValue) -> Result<PairRule, JsValue> {
    Ok(self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?.pairs)
}

/// Pairwise battles implied by judgments as an Arena JSON file's text (`settings`, `decoding` as in [`rank`]).
#[wasm_bindgen(js_name = battlesJson)]
pub fn battles_json(judgments: JsValue, settings: JsValue, decoding: JsValue) -> Result<String, JsValue> {
    let (table, rule) = (score_table(judgments, decoding)?, pair_rule(settings)?);
    Ok(arena::battles_to_json(&rank::battles(&table, &rule).collect::<Vec<_>>()))
}

/// The win-rate matrix: `{models, tie_margin, cells: [{row, col, win_rate, battles}]}` (`settings`,
/// `decoding` as in [`rank`]).
#[wasm_bindgen(js_name = winRates)]
pub fn win_rates(judgments: JsValue, settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    to_js(&report::win_rates(&score_table(judgments, decoding)?, &pair_rule(settings)?))
}

/// Mean score per model and category: `{models, categories, means: [[score|null]]}`;
/// `categories` maps session ids to categories (`{[session_id]: category}`); `decoding` as in [`rank`].
#[wasm_bindgen(js_name = categoryTable)]
pub fn category_table(judgments: JsValue, categories: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let cats: HashMap<String, String> = from_js(categories, "categories")?;
    to_js(&report::category_table(&judgment_scores(judgments, decoding)?.0, &cats))
}

/// Score distributions per model: `[{model, min, q1, median, q3, max, responses}]` (`decoding` as in [`rank`]).
#[wasm_bindgen]
pub fn distributions(judgments: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    to_js(&report::distributions(&judgment_scores(judgments, decoding)?.0))
}

/// Seed 000's ratio of disagreement over the judgments' graded items for 2, 3, 5 and 10 samples:
/// `[{samples, ratio, items}]`.
#[wasm_bindgen]
pub fn disagreement(judgments: JsValue) -> Result<JsValue, JsValue> {
    let js: Vec<Judgment> = from_js(judgments, "judgments")?;
    to_js(&report::disagreement(&js, &report::DISAGREEMENT_SAMPLES))
}

/// Scores as CSV text (`model,session_id,score`; `decoding` as in [`rank`]).
#[wasm_bindgen(js_name = scoresCsv)]
pub fn scores_csv(judgments: JsValue, decoding: JsValue) -> Result<String, JsValue> {
    Ok(report::scores_csv(&judgment_scores(judgments, decoding)?.0))
}

/// A ranking's entries (as [`rank`] returns them) as CSV text (`rank,model,score,lower,upper`).
#[wasm_bindgen(js_name = rankingCsv)]
pub fn ranking_csv(entries: JsValue) -> Result<String, JsValue> {
    Ok(report::ranking_csv(&from_js::<Vec<RankedModel>>(entries, "ranking entries")?))
}

/// Compare a ranking with a reference: Spearman, Kendall τ-b, Pearson, τ_u (with reference CIs).
#[wasm_bindgen(js_name = compareRankings)]
pub fn compare_rankings(ours: JsValue, reference: JsValue, bootstrap: usize) -> Result<JsValue, JsValue> {
    let ours: Vec<RankingEntry> = from_js(ours, "ranking")?;
    let reference: Vec<RankingEntry> = from_js(reference, "reference")?;
    to_js(&meta::compare_rankings(&ours, &reference, &MetaOptions { bootstrap, ..Default::default() }).map_err(err)?)
}

/// Judgments as RocketEval JSONL text.
#[wasm_bindgen(js_name = judgmentsJsonl)]
pub fn judgments_jsonl(judgments: JsValue) -> Result<String, JsValue> {
    let js: Vec<Judgment> = from_js(judgments, "judgments")?;
    Ok(jsonl::to_jsonl(&js))
}
