//! A grading run in the page (issue #26): which response to grade next (core's `schedule`) and the
//! live leaderboard of what is graded so far (core's `settle`), so the tab and `rocketjudge grade`
//! order and judge a run alike.

use std::collections::HashMap;

use rocketjudge_core::formats::Judgment;
use rocketjudge_core::rank::{RankSettings, ScoreTable};
use rocketjudge_core::resume::GradingSettings;
use rocketjudge_core::schedule::{Job, Order, Schedule, DEFAULT_ORDER_SEED};
use rocketjudge_core::settle::{Pace, SettleRule, Standing};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::{err, from_js, judgment_scores, settings, to_js};

/// The defaults of a run: the order's `seed` and the settling `rule` (`{level, minQueries}`).
#[wasm_bindgen(js_name = runChoices)]
pub fn run_choices() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    struct C {
        seed: u64,
        rule: SettleRule,
    }
    to_js(&C { seed: DEFAULT_ORDER_SEED, rule: SettleRule::default() })
}

/// The next job of a run: `jobs` ([{model, session_id, category?}], model by model in file order),
/// `order` (`interleaved`, `model`, `adaptive`), `seed`, `done` (a 0/1 per job), `standing` (the
/// run's latest, as [`standing`] returns it; adaptive order only; `null` before the first) and the
/// rule's `minQueries`. Returns the job's index, or `undefined` when every job is done.
#[wasm_bindgen(js_name = nextJob)]
pub fn next_job(
    jobs: JsValue,
    order: &str,
    seed: f64,
    done: &[u8],
    standing: JsValue,
    min_queries: usize,
) -> Result<Option<usize>, JsValue> {
    // A JS number (not a BigInt): a whole number a double holds exactly.
    if !(seed >= 0.0 && seed.fract() == 0.0 && seed <= 9_007_199_254_740_991.0) {
        return Err(err(rocketjudge_core::Error::Invalid(format!("the order's seed is a whole number from 0, not {seed}"))));
    }
    let jobs: Vec<Job> = from_js(jobs, "jobs")?;
    let order: Order = order.parse().map_err(err)?;
    if done.len() != jobs.len() {
        return Err(err(rocketjudge_core::Error::Invalid(format!("{} jobs but {} done flags", jobs.len(), done.len()))));
    }
    let standing: Option<Standing> =
        if standing.is_null() || standing.is_undefined() { None } else { Some(from_js(standing, "standing")?) };
    let done: Vec<bool> = done.iter().map(|&d| d != 0).collect();
    Ok(Schedule::new(&jobs, order, seed as u64, min_queries).next(&done, standing.as_ref()))
}

/// What a standing is asked about: the run's models, responses and queries, and the rule.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Scope {
    models: Vec<String>,
    total: usize,
    queries: usize,
    #[serde(default)]
    rule: SettleRule,
    /// What the run measured of its speed: `{secsPerResponse?, elapsed?}`, for the sentence.
    #[serde(default)]
    pace: Pace,
}

/// The live leaderboard of `judgments` (those of the run so far): `{entries, pairs: [{above, below,
/// share, common, separated, more, state, verdict (the row's words), ...}], unranked, graded, total,
/// queries, settled, rule, sentence}`,
/// ranked with `settings` (as `rank`'s; bootstrap replicates needed). `scope`: `{models, total,
/// queries, rule?: {level, minQueries}, pace?: {secsPerResponse?, elapsed?}}`.
#[wasm_bindgen]
pub fn standing(judgments: JsValue, scope: JsValue, settings: JsValue) -> Result<JsValue, JsValue> {
    let scope: Scope = from_js(scope, "scope")?;
    let opts = self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?;
    let table = ScoreTable::new(&judgment_scores(judgments, JsValue::NULL)?.0).map_err(err)?;
    let s = Standing::new(&table, &scope.models, Some(scope.total), Some(scope.queries), &opts, scope.rule).map_err(err)?;
    #[derive(Serialize)]
    struct WithSentence {
        #[serde(flatten)]
        standing: Standing,
        sentence: String,
    }
    let sentence = s.sentence(scope.pace);
    to_js(&WithSentence { standing: s, sentence })
}

/// A response a run may grade: `{model, session_id, items}` (`items`: its checklist's length now).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Candidate {
    model: String,
    session_id: String,
    items: usize,
}

/// Which of `candidates` (`[{model, session_id, items}]`) are left to grade: the indices of those
/// without a judgment among `judgments` that core's `resume` counts as this run's grade (`settings`:
/// `{judge, promptVersion, decoding?}`; the same judge, prompt wording and decoding, and as many items
/// as the checklist has now). `rocketjudge grade` resumes by the same rule.
#[wasm_bindgen(js_name = pendingResponses)]
pub fn pending_responses(judgments: JsValue, candidates: JsValue, settings: JsValue) -> Result<Vec<usize>, JsValue> {
    let judgments: Vec<Judgment> = from_js(judgments, "judgments")?;
    let candidates: Vec<Candidate> = from_js(candidates, "candidates")?;
    let settings: GradingSettings = from_js(settings, "settings")?;
    let stored: HashMap<(&str, &str), &Judgment> =
        judgments.iter().filter(|j| j.judge == settings.judge).map(|j| ((j.model_test.as_str(), j.session_id.as_str()), j)).collect();
    Ok(candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !stored.get(&(c.model.as_str(), c.session_id.as_str())).is_some_and(|j| settings.covers(j, c.items)))
        .map(|(i, _)| i)
        .collect())
}
