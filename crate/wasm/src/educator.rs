//! Calibration and bias probes for the page (core's [`calibrate`](rocketjudge_core::calibrate) and
//! [`probe`](rocketjudge_core::probe)): labels in and out, the rankings before and after a refit on
//! them, the probes' text transforms and the summary of their outcomes. Conversions only.

use rocketjudge_core::calibrate::{self, Label};
use rocketjudge_core::formats::Judgment;
use rocketjudge_core::probe::{self, Probe, ProbeOutcome};
use rocketjudge_core::rank::RankSettings;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::{err, from_js, settings, to_js};

fn probe_kind(kind: &str) -> Result<Probe, JsValue> {
    kind.parse::<Probe>().map_err(err)
}

/// Every probe: `[{name, description, transformsText}]` (`transformsText`: `probeText` computes it).
#[wasm_bindgen(js_name = probeKinds)]
pub fn probe_kinds() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct K {
        name: &'static str,
        description: &'static str,
        transforms_text: bool,
    }
    let kinds: Vec<K> =
        Probe::ALL.iter().map(|p| K { name: p.as_str(), description: p.description(), transforms_text: p.transforms_text() }).collect();
    to_js(&kinds)
}

/// A response text changed by a text probe (`pad`: `amount` is the fraction of its length to add;
/// `truncate`: the fraction to keep; `reorder`: `amount` unused): `{text, changed}`.
#[wasm_bindgen(js_name = probeText)]
pub fn probe_text(kind: &str, text: &str, amount: f64) -> Result<JsValue, JsValue> {
    to_js(&probe::apply(probe_kind(kind)?, text, amount).map_err(err)?)
}

/// The summary of a probe's outcomes `[{session_id, model, before, after}]` (scores on 1–10; for
/// `position`, p(A better) with A first and with B first).
#[wasm_bindgen(js_name = probeSummary)]
pub fn probe_summary(kind: &str, outcomes: JsValue) -> Result<JsValue, JsValue> {
    let outcomes: Vec<ProbeOutcome> = from_js(outcomes, "outcomes")?;
    to_js(&probe::summarize(probe_kind(kind)?, &outcomes).map_err(err)?)
}

/// Parse a labels JSONL file: `[label]`, each `{session_id, model_test, score, note?, created?}` or
/// `{session_id, model_a, model_b, winner, note?, created?}`. A bad line throws (kind `format`) with
/// file, line and field.
#[wasm_bindgen(js_name = parseLabels)]
pub fn parse_labels(name: &str, bytes: &[u8]) -> Result<JsValue, JsValue> {
    let rows = calibrate::read_labels(name, bytes).map_err(err)?;
    to_js(&rows.into_iter().map(|l| l.value).collect::<Vec<_>>())
}

/// Labels as JSONL text (what `parseLabels` reads back).
#[wasm_bindgen(js_name = labelsJsonl)]
pub fn labels_jsonl(labels: JsValue) -> Result<String, JsValue> {
    Ok(calibrate::labels_jsonl(&from_js::<Vec<Label>>(labels, "labels")?))
}

/// Refit the supervised scorer on the labels and rank before and after:
/// `{before, after, changes, queries, labels_used, problems}` (see core's `Calibration`). `settings` and
/// `decoding` as in `rank` (optional).
#[wasm_bindgen]
pub fn calibrate(judgments: JsValue, labels: JsValue, settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let judgments: Vec<Judgment> = from_js(judgments, "judgments")?;
    let labels: Vec<Label> = from_js(labels, "labels")?;
    let s: RankSettings = self::settings(settings, "settings")?;
    to_js(&calibrate::calibrate(&judgments, &labels, &s, crate::results::decoding(decoding)?).map_err(err)?)
}
