//! Integrity: SHA-256 of a model's bytes as they stream in.

use sha2::{Digest, Sha256};
use wasm_bindgen::prelude::*;

/// Streaming SHA-256, for checking a model while it downloads (WebCrypto cannot hash a stream).
#[wasm_bindgen]
pub struct Sha256Stream(Sha256);

#[wasm_bindgen]
impl Sha256Stream {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Sha256Stream {
        Sha256Stream(Sha256::new())
    }
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// Lower-case hex digest; the stream can be reused afterwards.
    pub fn hex(&mut self) -> String {
        self.0.finalize_reset().iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl Default for Sha256Stream {
    fn default() -> Self {
        Self::new()
    }
}
