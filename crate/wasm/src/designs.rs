//! The other evaluation designs in the page (seeds 000–004): pairwise comparisons in both orders (every
//! two models or against a reference), Direct scores at an instruction level or by perplexity, with
//! the checklist always, never or selectively, and scores or pair verdicts from the judge's written
//! reasoning — the engine's `designs` and core's `pairwise`/`direct`/`reasoned`.

use js_sys::Function;
use rocketjudge_core::direct::{read_query_rubrics, DirectScore, DirectSettings, ReferenceUse};
use rocketjudge_core::formats::{Query, Response};
use rocketjudge_core::pairwise::{self, ChecklistUse, PairJudgment, PairSettings, PositionConsistency};
use rocketjudge_core::prompt::{DirectInstruction, DirectScale};
use rocketjudge_core::rank::{self, PairOrders, RankSettings, Ranking, ScoreTable};
use rocketjudge_core::reasoned::{Aggregate, ReasonedPair, ReasonedProtocol, ReasonedScore, ReasonedSettings};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::{borrow_judge, err, from_js, settings, to_js, JudgeHandle};

/// Pairwise settings `{checklist, k, reference, decoding}` checked, with selective use's default
/// threshold filled in (errors of kind `invalid` for combinations that mean nothing).
#[wasm_bindgen(js_name = checkPairSettings)]
pub fn check_pair_settings(s: JsValue) -> Result<JsValue, JsValue> {
    to_js(&settings::<PairSettings>(s, "pairwise settings")?.checked().map_err(err)?)
}

/// Direct settings `{instruction, checklist, k, decoding}` checked, as [`check_pair_settings`].
#[wasm_bindgen(js_name = checkDirectSettings)]
pub fn check_direct_settings(s: JsValue) -> Result<JsValue, JsValue> {
    to_js(&settings::<DirectSettings>(s, "Direct settings")?.checked().map_err(err)?)
}

/// Reasoned settings `{protocol, samples, temperature, aggregate, replyTokens, seed}` checked.
#[wasm_bindgen(js_name = checkReasonedSettings)]
pub fn check_reasoned_settings(s: JsValue) -> Result<JsValue, JsValue> {
    to_js(&settings::<ReasonedSettings>(s, "reasoned settings")?.checked().map_err(err)?)
}

/// The choices of the page's design form, from core's named enums (the page words each name):
/// `{instructions: [{name, scale, rubric, prompt}], scales, checklistUses, references, aggregates,
/// pairOrders, defaults: {instruction, scale, checklist, reference, pairOrders}}` — an
/// instruction's `scale`: it may ask 1–5; `rubric`: a rubric of the user's replaces its own; `prompt`:
/// it has one (perplexity has none, so no checklist or reference answer).
#[wasm_bindgen(js_name = designChoices)]
pub fn design_choices() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    struct Instruction {
        name: &'static str,
        scale: bool,
        rubric: bool,
        prompt: bool,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Defaults {
        instruction: DirectInstruction,
        scale: DirectScale,
        checklist: ChecklistUse,
        reference: ReferenceUse,
        pair_orders: PairOrders,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Choices {
        instructions: Vec<Instruction>,
        scales: &'static [&'static str],
        checklist_uses: &'static [&'static str],
        references: &'static [&'static str],
        aggregates: &'static [&'static str],
        pair_orders: &'static [&'static str],
        defaults: Defaults,
    }
    let instructions = DirectInstruction::NAMES
        .iter()
        .map(|&name| {
            let i: DirectInstruction = name.parse().expect("a listed name");
            Instruction { name, scale: i.has_scale(), rubric: i.has_rubric(), prompt: i.has_prompt() }
        })
        .collect();
    let direct = DirectSettings::default();
    to_js(&Choices {
        instructions,
        scales: DirectScale::NAMES,
        checklist_uses: ChecklistUse::NAMES,
        references: ReferenceUse::NAMES,
        aggregates: Aggregate::NAMES,
        pair_orders: PairOrders::NAMES,
        defaults: Defaults {
            instruction: direct.instruction,
            scale: direct.scale,
            checklist: PairSettings::default().checklist,
            reference: ReferenceUse::CHOSEN_BY_DEFAULT,
            pair_orders: RankSettings::default().pair_orders,
        },
    })
}

/// The reasoned protocols, each `{name, description, paper, pairwise, checklist}` (`paper`: its settings
/// as its paper runs it; `pairwise`: it judges pairs of responses; `checklist`: its prompt lists the
/// query's checklist).
#[wasm_bindgen(js_name = reasonedProtocols)]
pub fn reasoned_protocols() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    struct P {
        name: &'static str,
        description: &'static str,
        paper: ReasonedSettings,
        pairwise: bool,
        checklist: bool,
    }
    let all: Vec<P> = ReasonedProtocol::NAMES
        .iter()
        .map(|n| {
            let p: ReasonedProtocol = n.parse().expect("a listed name");
            P {
                name: n,
                description: p.description(),
                paper: ReasonedSettings::paper(p),
                pairwise: p.is_pairwise(),
                checklist: p.needs_checklist(),
            }
        })
        .collect();
    to_js(&all)
}

/// Parse per-query rubrics (JSONL `{session_id, rubric}`, seed 003's instance rubrics) for the Direct
/// settings' `rubrics`: one per query, none empty (errors name the file, line and field).
#[wasm_bindgen(js_name = parseQueryRubrics)]
pub fn parse_query_rubrics(name: &str, bytes: &[u8]) -> Result<JsValue, JsValue> {
    to_js(&read_query_rubrics(name, bytes).map_err(err)?.into_iter().map(|l| l.value).collect::<Vec<_>>())
}

/// The comparisons of a pairwise run over responses given as `[[session_id, model]]`: `[[a, b]]`
/// indices (core's `plan_pairs`; with `reference`, b is the reference's response).
#[wasm_bindgen(js_name = planPairs)]
pub fn plan_pairs(responses: JsValue, reference: Option<String>) -> Result<JsValue, JsValue> {
    let ids: Vec<(String, String)> = from_js(responses, "responses")?;
    let refs: Vec<(&str, &str)> = ids.iter().map(|(s, m)| (s.as_str(), m.as_str())).collect();
    to_js(&pairwise::plan_pairs(&refs, reference.as_deref()).map_err(err)?)
}

/// Rank pair judgments with every aggregation (`settings` and `decoding` as for `rank`; the lines are
/// decoded as they record when `decoding` is null). `{ranking, consistency: {pairs, consistent, rate,
/// first_shown}}`.
#[wasm_bindgen(js_name = rankPairs)]
pub fn rank_pairs(pairs: JsValue, settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let pairs: Vec<PairJudgment> = from_js(pairs, "pair judgments")?;
    let opts = self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?;
    let (table, battles) = pairwise::comparisons(&pairs, &opts.pairs, crate::results::decoding(decoding)?).map_err(err)?;
    #[derive(Serialize)]
    struct R {
        ranking: Ranking,
        consistency: Option<PositionConsistency>,
    }
    to_js(&R { ranking: rank::rank_comparisons(&table, battles, &opts).map_err(err)?, consistency: pairwise::position_consistency(&pairs) })
}

/// Rank Direct scores (`settings` as for `rank`; `decoding`, optional, re-decodes the digits).
#[wasm_bindgen(js_name = rankDirect)]
pub fn rank_direct(rows: JsValue, settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let rows: Vec<DirectScore> = from_js(rows, "Direct scores")?;
    let decoding = crate::results::decoding(decoding)?;
    let scores: Vec<_> = rows.iter().map(|r| r.as_score(decoding)).collect();
    let opts = self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?;
    to_js(&rank::rank(&ScoreTable::new(&scores).map_err(err)?, &opts).map_err(err)?)
}

/// Rank reasoned scores (`settings` as for `rank`); responses without a readable reply are left out
/// (unanswered).
#[wasm_bindgen(js_name = rankReasoned)]
pub fn rank_reasoned(rows: JsValue, settings: JsValue) -> Result<JsValue, JsValue> {
    let rows: Vec<ReasonedScore> = from_js(rows, "reasoned scores")?;
    let scores: Vec<_> = rows.iter().filter_map(ReasonedScore::as_score).collect();
    let opts = self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?;
    to_js(&rank::rank(&ScoreTable::new(&scores).map_err(err)?, &opts).map_err(err)?)
}

/// Rank reasoned pairs' verdicts (`settings` as for `rank`, a pairwise method); pairs without a
/// readable reply are left out.
#[wasm_bindgen(js_name = rankReasonedPairs)]
pub fn rank_reasoned_pairs(rows: JsValue, settings: JsValue) -> Result<JsValue, JsValue> {
    let rows: Vec<ReasonedPair> = from_js(rows, "reasoned pairs")?;
    let battles: Vec<_> = rows.iter().filter_map(ReasonedPair::as_battle).collect();
    let opts = self::settings::<RankSettings>(settings, "settings")?.options().map_err(err)?;
    to_js(&rank::rank_battles(rank::BattleRows::of(&battles), &opts).map_err(err)?)
}

/// A query and the two responses of a pair, from the page.
fn pair_inputs(query: JsValue, a: JsValue, b: JsValue) -> Result<(Query, Response, Response), JsValue> {
    Ok((from_js(query, "query")?, from_js(a, "first response")?, from_js(b, "second response")?))
}

/// The page's `onReply(i, sample)` as the engine's per-reply callback.
fn reply_callback<T: Serialize>(on_reply: &Function) -> impl FnMut(usize, &T) + '_ {
    move |i, sample| {
        if let Ok(v) = to_js(sample) {
            let _ = on_reply.call2(&JsValue::NULL, &JsValue::from(i as u32), &v);
        }
    }
}

#[wasm_bindgen]
impl JudgeHandle {
    /// Compare `modelA`'s and `modelB`'s responses to `query` in both orders (`settings`: checked
    /// pairwise settings): resolves with the `PairJudgment` to store.
    #[wasm_bindgen(js_name = comparePair)]
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn compare_pair(
        &self,
        query: JsValue,
        a: JsValue,
        model_a: String,
        b: JsValue,
        model_b: String,
        settings: JsValue,
    ) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let (q, a, b) = pair_inputs(query, a, b)?;
            let s: PairSettings = from_js(settings, "pairwise settings")?;
            let mut guard = borrow_judge(&inner)?;
            to_js(&guard.compare_pair(&q, (&model_a, &a), (&model_b, &b), &s).await.map_err(err)?)
        })
    }

    /// The Direct score of `model`'s `response` to `query` (`settings`: checked Direct settings):
    /// resolves with the `DirectScore` to store, or `null` for an empty response under perplexity.
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn direct(&self, query: JsValue, response: JsValue, model: String, settings: JsValue) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let q: Query = from_js(query, "query")?;
            let r: Response = from_js(response, "response")?;
            let s: DirectSettings = from_js(settings, "Direct settings")?;
            let mut guard = borrow_judge(&inner)?;
            to_js(&guard.direct(&q, &r, &model, &s).await.map_err(err)?)
        })
    }

    /// `model`'s `response` to `query` judged from N written replies (`settings`: checked reasoned
    /// settings): resolves with the `ReasonedScore` to store. `onReply(i, sample)` is called as each
    /// reply is read (`sample`: `{score?, text, items?, tokens, stop}`).
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn reason(&self, query: JsValue, response: JsValue, model: String, settings: JsValue, on_reply: Function) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let q: Query = from_js(query, "query")?;
            let r: Response = from_js(response, "response")?;
            let s: ReasonedSettings = from_js(settings, "reasoned settings")?;
            let mut guard = borrow_judge(&inner)?;
            let row = guard.reasoned(&q, &r, &model, &s, &mut reply_callback(&on_reply)).await.map_err(err)?;
            to_js(&row)
        })
    }

    /// `modelA`'s and `modelB`'s responses to `query` compared by written replies (`settings`: checked
    /// reasoned settings of a pairwise protocol), half with A shown first: resolves with the
    /// `ReasonedPair` to store. `onReply(i, sample)` is called as each reply is read (`sample`:
    /// `{a_first, vote?, text, items?, tokens, stop}`).
    #[wasm_bindgen(js_name = reasonPair)]
    #[allow(clippy::await_holding_refcell_ref, clippy::too_many_arguments)]
    pub fn reason_pair(
        &self,
        query: JsValue,
        a: JsValue,
        model_a: String,
        b: JsValue,
        model_b: String,
        settings: JsValue,
        on_reply: Function,
    ) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let (q, a, b) = pair_inputs(query, a, b)?;
            let s: ReasonedSettings = from_js(settings, "reasoned settings")?;
            let mut guard = borrow_judge(&inner)?;
            let row = guard.reasoned_pair(&q, (&model_a, &a), (&model_b, &b), &s, &mut reply_callback(&on_reply)).await.map_err(err)?;
            to_js(&row)
        })
    }
}
