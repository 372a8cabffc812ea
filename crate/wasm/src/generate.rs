//! The judge writes: generation for the worker (see the engine's `generate` module).

use js_sys::{Function, Promise};
use rocketjudge_engine::generate::{GenerateSettings, Generation};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::{borrow_judge, err, settings, to_js, JudgeHandle};

/// A finished generation with the prompt's token ids.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerateResult {
    prompt: Vec<u32>,
    #[serde(flatten)]
    generation: Generation,
}

#[wasm_bindgen]
impl JudgeHandle {
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
            let mut report = |piece: &str| {
                let _ = on_token.call1(&JsValue::NULL, &JsValue::from_str(piece));
            };
            let generation = guard.generate(&prompt, &settings, &mut report).await.map_err(err)?;
            to_js(&GenerateResult { prompt, generation })
        })
    }
}
