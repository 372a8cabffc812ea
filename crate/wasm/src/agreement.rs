//! Small judge vs strong judge in the page: our stored judgments against a strong judge's file
//! (`rocketjudge_core::meta::strong`).

use rocketjudge_core::formats::Problem;
use rocketjudge_core::meta::strong::{self, AgreementSettings, StrongAgreement};
use rocketjudge_core::rank::ScoreTable;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::{err, judgment_scores, settings, to_js};

/// Compare judgments (RocketEval judgment records, as stored) with a strong judge's verdicts read from
/// a file's `bytes` named `name`: FastChat `gpt-4_single.jsonl` / `gpt-4_pair.jsonl`, Arena battles with
/// `question_id`, RocketEval scores or a `session_id,model_test,score` CSV, recognised by their fields.
/// `settings` (optional, each field too): `{tieMargin, bootstrap, seed}`. Returns the `StrongAgreement`
/// (`{strong_kind, rule, models, only_ours, only_strong, queries, unmatched, overall, per_model,
/// per_query, disagreements, closeness, closeness_bins}`) with `problems`: those of our judgments and
/// of the file (left-out lines, repeated responses). `decoding`: how our judgments are scored (as in `rank`).
#[wasm_bindgen(js_name = strongAgreement)]
pub fn strong_agreement(judgments: JsValue, name: &str, bytes: &[u8], settings: JsValue, decoding: JsValue) -> Result<JsValue, JsValue> {
    let s: AgreementSettings = self::settings(settings, "settings")?;
    let (rule, opts) = s.options().map_err(err)?;
    let (scores, mut problems) = judgment_scores(judgments, decoding)?;
    let ours = ScoreTable::new(&scores).map_err(err)?;
    let (verdicts, read) = strong::read_strong_verdicts(name, bytes).map_err(err)?;
    problems.extend(read);
    #[derive(Serialize)]
    struct R {
        #[serde(flatten)]
        agreement: StrongAgreement,
        problems: Vec<Problem>,
    }
    to_js(&R { agreement: strong::strong_agreement(&ours, &verdicts, &rule, &opts).map_err(err)?, problems })
}
