//! The judge: a GGUF header read from the page's bytes, a judge loaded on the engine's backend, and
//! its calls (grade, compare, explain, bench).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise, Uint8Array};
use rocketjudge_core::formats::{Judgment, Query, Response};
use rocketjudge_core::prompt;
use rocketjudge_engine::device::{open_judge, BackendChoice, BackendInfo, BackendOptions};
use rocketjudge_engine::gguf::{Gguf, GgufError, TensorInfo};
use rocketjudge_engine::judge::{AnyJudge, Judge};
use rocketjudge_engine::model::TensorSource;
use rocketjudge_engine::EngineError;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use crate::boundary::*;

/// A parsed GGUF header: what the model is, before any weight is loaded.
#[wasm_bindgen]
pub struct ModelHeader {
    gguf: Gguf,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeaderInfo {
    architecture: String,
    name: String,
    tensors: usize,
    tensor_bytes: u64,
    file_bytes: u64,
    context_length: Option<u64>,
}

#[wasm_bindgen]
impl ModelHeader {
    /// Parse from a prefix of the file. Throws an error of kind `header-incomplete` when the prefix is
    /// too short (see [`ModelHeader::bytes_needed`]); any other error means the file is not a usable GGUF.
    #[wasm_bindgen(constructor)]
    pub fn new(prefix: &[u8], file_len: f64) -> Result<ModelHeader, JsValue> {
        match Gguf::parse(prefix, Some(file_len as u64)) {
            Ok(gguf) => Ok(ModelHeader { gguf }),
            Err(e) => Err(err(EngineError::from(e))),
        }
    }

    /// Bytes of the file the parser needs when the header did not fit (0 otherwise).
    #[wasm_bindgen(js_name = bytesNeeded)]
    pub fn bytes_needed(prefix: &[u8]) -> f64 {
        match Gguf::parse(prefix, None) {
            Err(GgufError::NeedMore(n)) => n as f64,
            _ => 0.0,
        }
    }

    /// For tests: keep only the first `n` transformer blocks (every tensor shape and quantization of
    /// the model at a fraction of the work; the judge's answers are then meaningless).
    #[wasm_bindgen(js_name = keepLayers)]
    pub fn keep_layers(&mut self, n: u32) -> Result<(), JsValue> {
        let arch = self.gguf.architecture().ok_or_else(|| fail("model", "the model names no architecture"))?.to_string();
        self.gguf.metadata.insert(format!("{arch}.block_count"), rocketjudge_engine::gguf::Value::U32(n));
        Ok(())
    }

    pub fn info(&self) -> Result<JsValue, JsValue> {
        let g = &self.gguf;
        let arch = g.architecture().unwrap_or("?").to_string();
        to_js(&HeaderInfo {
            name: g.get("general.name").and_then(|v| v.as_str()).unwrap_or("").to_string(),
            context_length: g.get(&format!("{arch}.context_length")).and_then(|v| v.as_u64()),
            architecture: arch,
            tensors: g.tensors.len(),
            tensor_bytes: g.tensors.iter().map(|t| t.n_bytes).sum(),
            file_bytes: g.data_end,
        })
    }
}

/// Tensor bytes read through a JavaScript function `(offset, length) => Promise<Uint8Array>` (a Blob
/// slice), one tensor at a time.
struct JsSource(Function);

impl TensorSource for JsSource {
    async fn read(&mut self, info: &TensorInfo) -> Result<Vec<u8>, EngineError> {
        let js =
            |e: JsValue| EngineError::Io(format!("reading tensor `{}`: {}", info.name, e.as_string().unwrap_or_else(|| format!("{e:?}"))));
        let p =
            self.0.call2(&JsValue::NULL, &JsValue::from_f64(info.offset as f64), &JsValue::from_f64(info.n_bytes as f64)).map_err(js)?;
        let bytes = JsFuture::from(Promise::from(p)).await.map_err(js)?;
        let arr = Uint8Array::new(&bytes);
        if arr.length() as u64 != info.n_bytes {
            return Err(EngineError::Io(format!("tensor `{}`: read {} bytes, expected {}", info.name, arr.length(), info.n_bytes)));
        }
        Ok(arr.to_vec())
    }
}

/// A loaded judge. Grading calls run one at a time (the worker queues them).
#[wasm_bindgen]
pub struct JudgeHandle {
    pub(crate) inner: Rc<RefCell<AnyJudge>>,
    name: String,
    info: BackendInfo,
}

/// Load a judge. `read(offset, length)` returns a promise of the bytes; `progress(done, total)` is
/// called after each tensor. `backend`: `"auto"`, `"cpu"` or `"webgpu"` (a build without WebGPU
/// refuses it with kind `unavailable`); `options` (optional): `{precision: "int8"|"f32"}` for the CPU
/// (on as many threads as the page started with `initThreadPool`, else one), `{kernels:
/// "auto"|"gpu"|"software", allowF16, memoryBudget}` for WebGPU.
#[wasm_bindgen(js_name = loadJudge)]
pub fn load_judge(
    header: ModelHeader,
    name: String,
    backend: String,
    read: Function,
    progress: Function,
    max_tokens: usize,
    options: JsValue,
) -> Promise {
    future_to_promise(async move {
        let choice: BackendChoice = backend.parse().map_err(err)?;
        let options: BackendOptions = settings(options, "options")?;
        rocketjudge_engine::backend::cpu::qmatmul::race_kernels(now_ms);
        let mut report = |done: u64, total: u64| {
            let _ = progress.call2(&JsValue::NULL, &JsValue::from_f64(done as f64), &JsValue::from_f64(total as f64));
        };
        let (inner, info) =
            open_judge(name.clone(), &header.gguf, &mut JsSource(read), choice, &options, max_tokens, &mut report).await.map_err(err)?;
        Ok(JsValue::from(JudgeHandle { inner: Rc::new(RefCell::new(inner)), name, info }))
    })
}

/// The judge for one call; a second call while it runs gets "busy" instead of interleaving with it.
pub(crate) fn borrow_judge(inner: &RefCell<AnyJudge>) -> Result<std::cell::RefMut<'_, AnyJudge>, JsValue> {
    inner.try_borrow_mut().map_err(|_| fail("busy", "the judge is busy with another response"))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GradeResult {
    items: Vec<rocketjudge_engine::judge::ItemGrade>,
    prefix_tokens: usize,
    suffix_tokens: usize,
    /// Of `prefix_tokens`, those the judge did not run again: the query's part of the prompt, kept
    /// from the previous response to the same query.
    kept_tokens: u64,
    truncated_chars: usize,
    judgment: Judgment,
}

#[wasm_bindgen]
impl JudgeHandle {
    pub fn name(&self) -> String {
        self.name.clone()
    }
    /// What the judge runs on, typed: `{kind: "cpu"|"webgpu", description, why, adapter, vendor,
    /// deviceType, softwareAdapter, threads, kernels, precision, f16}`.
    pub fn info(&self) -> Result<JsValue, JsValue> {
        to_js(&self.info)
    }
    /// Which token ids count as Yes / No.
    #[wasm_bindgen(js_name = answerTokens)]
    pub fn answer_tokens(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.borrow().answer_tokens())
    }

    /// For tests: destroy the GPU device, as a driver reset or the browser reclaiming the GPU would
    /// lose it; every later grade fails with "GPU device lost". Returns false on the CPU backend.
    /// Throws while a response is being graded (the worker calls it between responses).
    #[wasm_bindgen(js_name = loseDevice)]
    pub fn lose_device(&self) -> Result<bool, JsValue> {
        let mut guard = borrow_judge(&self.inner)?;
        Ok(guard.lose_device())
    }

    /// Grade one response: `{items: [{p_yes, logit_yes, logit_no}], prefixTokens, suffixTokens,
    /// keptTokens, truncatedChars, judgment}`, where `keptTokens` of the `prefixTokens` were not run
    /// again (the query's part of the prompt, kept from the previous response to the same query) and
    /// `judgment` is the RocketEval record to store. `options` (optional): `{prompt:
    /// "rocketeval"|"reworded"|"minimal"|"criteria"}`, the grading prompt's wording for this response
    /// only (recorded in the judgment's `prompt_version`).
    // The judge stays borrowed across the forward's awaits on purpose: a second call meanwhile gets
    // "busy" from `borrow_judge` instead of interleaving with it.
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn grade(&self, query: JsValue, response: JsValue, model: String, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        let name = self.name.clone();
        future_to_promise(async move {
            let q: Query = from_js(query, "query")?;
            let r: Response = from_js(response, "response")?;
            let GradeOptions { prompt: style } = settings(options, "options")?;
            let mut guard = borrow_judge(&inner)?;
            let reused = guard.reused_tokens();
            let (grade, tokens) = (guard.grade_styled(style, &q, &r).await, guard.answer_tokens());
            let kept_tokens = guard.reused_tokens() - reused;
            let grade = grade.map_err(err)?;
            let judgment = Judgment::from_grade(
                &r.session_id,
                &model,
                &name,
                grade.items.iter().map(|g| g.p_yes),
                tokens,
                grade.truncated_chars,
                style.version(),
            );
            to_js(&GradeResult {
                items: grade.items,
                prefix_tokens: grade.prefix_tokens,
                suffix_tokens: grade.suffix_tokens,
                kept_tokens,
                truncated_chars: grade.truncated_chars,
                judgment,
            })
        })
    }

    /// Which of two responses to `query` the judge prefers, in the order given (A = `first`):
    /// `{logit_a, logit_b, p_a, truncated_chars}`, p_a = p(A)/(p(A)+p(B)).
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn compare(&self, query: JsValue, first: JsValue, second: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let q: Query = from_js(query, "query")?;
            let a: Response = from_js(first, "first response")?;
            let b: Response = from_js(second, "second response")?;
            let mut guard = borrow_judge(&inner)?;
            to_js(&guard.compare(&q, &a, &b, false, prompt::PairwiseScale::Binary).await.map_err(err)?)
        })
    }

    /// What the judge reads for a response, as text, without running it: `{template, style, prefix,
    /// suffixes, prefix_tokens, suffix_tokens, kept_chars, truncated_chars}` (see the engine's
    /// `PromptView`). `options` as for `grade`.
    pub fn explain(&self, query: JsValue, response: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let q: Query = from_js(query, "query")?;
        let r: Response = from_js(response, "response")?;
        let GradeOptions { prompt: style } = settings(options, "options")?;
        to_js(&borrow_judge(&self.inner)?.explain(style, &q, &r).map_err(err)?)
    }
}

/// Options of one grade.
#[derive(Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct GradeOptions {
    prompt: prompt::PromptStyle,
}

/// The benchmark page's steps, timed by the caller (`web/bench.js`). Each holds the judge for its
/// duration; a second call meanwhile gets "busy".
#[wasm_bindgen]
impl JudgeHandle {
    /// The benchmark workload in this judge's tokens: `{prefix: [ids], suffixes: [[ids]]}`.
    #[wasm_bindgen(js_name = benchWorkload)]
    pub fn bench_workload(&self, prefix_tokens: usize, items: usize, suffix_tokens: usize) -> Result<JsValue, JsValue> {
        to_js(&self.inner.borrow().bench_workload(prefix_tokens, items, suffix_tokens).map_err(err)?)
    }

    /// Run the prefix into the KV cache and read one more token's logits (resolves when done).
    #[wasm_bindgen(js_name = benchPrefix)]
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn bench_prefix(&self, prefix: Vec<u32>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let mut guard = borrow_judge(&inner)?;
            guard.bench_prefix(&prefix).await.map_err(err)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Generate `n` tokens greedily on top of the cached prefix of `prefix_len` tokens, from
    /// `first` (resolves when done).
    #[wasm_bindgen(js_name = benchDecode)]
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn bench_decode(&self, prefix_len: usize, first: u32, n: usize) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let mut guard = borrow_judge(&inner)?;
            guard.bench_decode(prefix_len, first, n).await.map_err(err)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Grade the suffixes (`[[ids]]`) on top of the cached prefix of `prefix_len` tokens: resolves
    /// with their p(Yes).
    #[wasm_bindgen(js_name = benchItems)]
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn bench_items(&self, prefix_len: usize, suffixes: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let suffixes: Vec<Vec<u32>> = from_js(suffixes, "suffixes")?;
            let mut guard = borrow_judge(&inner)?;
            let grades = guard.bench_items(prefix_len, &suffixes).await.map_err(err)?;
            to_js(&grades.iter().map(|g| g.p_yes).collect::<Vec<_>>())
        })
    }
}
