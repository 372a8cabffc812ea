//! The boundary's conversions: Rust values to and from JavaScript (serde, JSON-compatible), optional
//! settings, and errors as JavaScript `Error`s with the `kind` (and, for a malformed file, the place)
//! the worker acts on.

use js_sys::Function;
use rocketjudge_core::error::{Error as CoreError, FormatError, UnknownName};
use rocketjudge_engine::EngineError;
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::prelude::*;

/// `performance.now()` of this global (a page or a worker), else `Date.now()`.
pub(crate) fn now_ms() -> f64 {
    let performance = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).unwrap_or(JsValue::UNDEFINED);
    js_sys::Reflect::get(&performance, &"now".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .and_then(|now| now.call0(&performance).ok())
        .and_then(|v| v.as_f64())
        .unwrap_or_else(js_sys::Date::now)
}

pub(crate) fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| fail("input", e))
}

pub(crate) fn from_js<T: DeserializeOwned>(v: JsValue, what: &str) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(v).map_err(|e| fail("input", format!("{what}: {e}")))
}

/// Optional settings: `undefined` or `null` give the defaults.
pub(crate) fn settings<T: DeserializeOwned + Default>(v: JsValue, what: &str) -> Result<T, JsValue> {
    if v.is_undefined() || v.is_null() {
        Ok(T::default())
    } else {
        from_js(v, what)
    }
}

/// A JavaScript `Error` with the message and a `kind` property the worker acts on: the engine's
/// [`rocketjudge_engine::ErrorKind`] (`header-incomplete`, `model`, `unsupported`, `input`, `backend`,
/// `unavailable`, `io`), `format` (a malformed file: file, line, field), `invalid` (inputs that cannot
/// be used together), or `busy` (the judge is grading).
pub(crate) fn fail(kind: &str, message: impl std::fmt::Display) -> JsValue {
    let e = js_sys::Error::new(&message.to_string());
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("kind"), &JsValue::from_str(kind));
    e.into()
}

/// The kind of an error, for [`fail`].
pub(crate) trait Kind: std::fmt::Display {
    fn kind(&self) -> &'static str;
    /// Where a malformed file went wrong, for the page to say in its own words.
    fn place(&self) -> Option<&FormatError> {
        None
    }
}

impl Kind for EngineError {
    fn kind(&self) -> &'static str {
        EngineError::kind(self).as_str()
    }
}

impl Kind for FormatError {
    fn kind(&self) -> &'static str {
        "format"
    }
    fn place(&self) -> Option<&FormatError> {
        Some(self)
    }
}

impl Kind for CoreError {
    fn kind(&self) -> &'static str {
        match self {
            CoreError::Format(_) => "format",
            CoreError::Invalid(_) => "invalid",
            CoreError::UnknownName(_) => "input",
        }
    }
    fn place(&self) -> Option<&FormatError> {
        match self {
            CoreError::Format(f) => Some(f),
            _ => None,
        }
    }
}

impl Kind for UnknownName {
    fn kind(&self) -> &'static str {
        "input"
    }
}

/// The error as a JavaScript `Error` (see [`fail`]); a malformed file's error also carries `file`,
/// `line` (0: the whole file), `field` (empty: the record) and `detail` (what was wrong).
pub(crate) fn err(e: impl Kind) -> JsValue {
    let js = fail(e.kind(), &e);
    if let Some(p) = e.place() {
        for (k, v) in [
            ("file", JsValue::from_str(&p.file)),
            ("line", JsValue::from_f64(p.line as f64)),
            ("field", JsValue::from_str(&p.field)),
            ("detail", JsValue::from_str(&p.message)),
        ] {
            let _ = js_sys::Reflect::set(&js, &JsValue::from_str(k), &v);
        }
    }
    js
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind and place each Rust error carries across (what the worker and page act on).
    fn crossing(e: &dyn Kind) -> (&'static str, Option<(String, usize, String)>) {
        (e.kind(), e.place().map(|p| (p.file.clone(), p.line, p.field.clone())))
    }

    #[test]
    fn errors_cross_with_the_kind_the_worker_acts_on_and_a_bad_file_with_its_place() {
        let bad = FormatError::new("answers.jsonl", 3, "output", "expected a list of strings");
        assert_eq!(crossing(&bad), ("format", Some(("answers.jsonl".into(), 3, "output".into()))));
        assert_eq!(crossing(&CoreError::Format(bad.clone())), crossing(&bad));
        assert_eq!(crossing(&CoreError::Invalid("two models at least".into())), ("invalid", None));
        let unknown = "nope".parse::<rocketjudge_core::rank::Method>().unwrap_err();
        assert_eq!(crossing(&unknown), ("input", None));
        assert_eq!(crossing(&CoreError::UnknownName(unknown)), ("input", None));
        // The engine's own kinds, spelled as the worker reads them (`backend`: the GPU failed, so the
        // worker moves the judge to the CPU).
        assert_eq!(crossing(&EngineError::Backend("GPU device lost".into())), ("backend", None));
        assert_eq!(crossing(&EngineError::Unavailable("no WebGPU".into())), ("unavailable", None));
        assert_eq!(crossing(&EngineError::Input("empty checklist".into())), ("input", None));
        assert_eq!(crossing(&EngineError::Model("no output head".into())), ("model", None));
    }
}
