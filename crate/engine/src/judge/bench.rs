//! The speed benchmark's workload.

use serde::Serialize;

use crate::tokenizer::Tokenizer;
use crate::EngineError;

/// The speed benchmark's workload, the same for `rocketjudge bench` and the browser's benchmark page:
/// one graded response, a shared prefix and `items` checklist-item suffixes, as text and as this
/// judge's tokens. The text is real (long MT-Bench answers, repeated to length), cut between words so
/// that prefix and suffix tokenize the same apart as joined: an engine given the text (wllama takes
/// text prompts) sees the same tokens. Content does not change the speed, but keeps the tokenizer and
/// attention on realistic data.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchWorkload {
    pub prefix: Vec<u32>,
    pub suffixes: Vec<Vec<u32>>,
    pub prefix_text: String,
    pub suffix_texts: Vec<String>,
}

/// Long MT-Bench answers (public, from the FastChat repository), one after another.
const BENCH_TEXT: &str = include_str!("bench_text.txt");

impl BenchWorkload {
    /// At least `prefix_tokens` (and `suffix_tokens` per item) tokens, the fewest words that give them.
    pub fn new(tokenizer: &Tokenizer, prefix_tokens: usize, items: usize, suffix_tokens: usize) -> Result<Self, EngineError> {
        if prefix_tokens == 0 || items == 0 || suffix_tokens == 0 {
            return Err(EngineError::Input("the benchmark needs a prefix, at least one item and at least one token per item".into()));
        }
        // Words with their leading space; every word is at least one token, so this many suffice.
        let words: Vec<String> =
            BENCH_TEXT.split_whitespace().cycle().take(prefix_tokens + items * suffix_tokens).map(|w| format!(" {w}")).collect();
        let mut at = 0;
        let mut take = |target: usize| -> Result<(String, Vec<u32>), EngineError> {
            // The fewest words from `at` whose text has `target` tokens (binary search: the count grows
            // with the words).
            let text = |k: usize| words[at..at + k].concat();
            let (mut lo, mut hi) = (1, target.min(words.len() - at));
            while lo < hi {
                let mid = (lo + hi) / 2;
                if tokenizer.encode_plain(&text(mid))?.len() >= target {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            let t = text(lo);
            at += lo;
            let ids = tokenizer.encode_plain(&t)?;
            Ok((t, ids))
        };
        let (prefix_text, prefix) = take(prefix_tokens)?;
        let (suffix_texts, suffixes) = (0..items).map(|_| take(suffix_tokens)).collect::<Result<Vec<_>, _>>()?.into_iter().unzip();
        Ok(BenchWorkload { prefix, suffixes, prefix_text, suffix_texts })
    }
}
