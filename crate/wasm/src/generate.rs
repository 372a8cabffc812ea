//! The judge writes: generation for the worker (see the engine's `generate` module).

use js_sys::{Function, Promise};
use rocketjudge_core::creation::{CreationPolicy, CreationRun, Step};
use rocketjudge_core::formats::Query;
use rocketjudge_engine::generate::{GenerateSettings, Generation};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::{borrow_judge, err, from_js, settings, to_js, JudgeHandle};

/// A finished generation with the prompt's token ids.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerateResult {
    prompt: Vec<u32>,
    #[serde(flatten)]
    generation: Generation,
}

/// A checklist written by the judge: its items (`None`: the replies held none), every reply, the
/// tokens generated in all and the policy's version.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WrittenChecklist {
    items: Option<Vec<String>>,
    replies: Vec<String>,
    tokens: usize,
    prompt_version: &'static str,
}

/// `onToken(piece)` called for each generated token's text.
fn reporter(on_token: &Function) -> impl FnMut(&str) + '_ {
    |piece: &str| {
        let _ = on_token.call1(&JsValue::NULL, &JsValue::from_str(piece));
    }
}

#[wasm_bindgen]
impl JudgeHandle {
    /// A checklist for `query` written by this judge under `policy` (core's `CreationPolicy` names:
    /// "rocketeval", "baseline", "specify", "length-0.5", "length-1.5", "self-refine", "ticking"),
    /// greedy, at most `max_tokens` per reply; `onToken(piece)` as in `generate`. Resolves with
    /// `{items, replies, tokens, promptVersion}`.
    #[wasm_bindgen(js_name = writeChecklist)]
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn write_checklist(&self, query: JsValue, policy: String, max_tokens: usize, on_token: Function) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let query: Query = from_js(query, "query")?;
            let policy: CreationPolicy = policy.parse().map_err(err)?;
            let settings = GenerateSettings { max_tokens, ..Default::default() };
            let mut guard = borrow_judge(&inner)?;
            let mut report = reporter(&on_token);
            let (mut replies, mut tokens) = (Vec::new(), 0);
            let mut run = CreationRun::new(policy, &query);
            let mut step = run.start();
            let items = loop {
                match step {
                    Step::Ask(prompt) => {
                        let ids = guard.prompt_tokens(&prompt, true).map_err(err)?;
                        let g = guard.generate(&ids, &settings, &mut report).await.map_err(err)?;
                        tokens += g.tokens.len();
                        step = run.reply(&g.text);
                        replies.push(g.text);
                    }
                    Step::Done(items) => break items,
                }
            };
            to_js(&WrittenChecklist { items, replies, tokens, prompt_version: policy.version() })
        })
    }

    /// Continue `text` (as the user's message in the judge's chat template when `chat`) under
    /// `settings` (`{maxTokens, temperature, topP, seed, stop}`, each optional; greedy by default).
    /// `onToken(piece)` is called once per generated token with the text that became final (often
    /// empty). Resolves with `{prompt: [ids], tokens: [ids], text, stop, promptTokens}`, `stop` one
    /// of "end-of-generation", "stop-string", "max-tokens", "context-full".
    // The judge stays borrowed across the awaits on purpose (see `grade`).
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn generate(&self, text: String, chat: bool, options: JsValue, on_token: Function) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let settings: GenerateSettings = settings(options, "generation settings")?;
            let mut guard = borrow_judge(&inner)?;
            let prompt = guard.prompt_tokens(&text, chat).map_err(err)?;
            let mut report = reporter(&on_token);
            let generation = guard.generate(&prompt, &settings, &mut report).await.map_err(err)?;
            to_js(&GenerateResult { prompt, generation })
        })
    }
}
