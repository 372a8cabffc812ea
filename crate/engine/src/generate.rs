//! Where the judge writes: a continuation of a prompt, one token at a time.
//!
//! The prompt runs once into the KV cache (in the judge's prefill chunks); each new token then runs
//! as a one-row forward that appends its keys and values, and the full vocabulary's logits of that
//! row choose the next token:
//! - **greedy** (temperature 0): the highest logit, the lowest id on a tie (llama.cpp's greedy
//!   sampler);
//! - **sampled**: softmax of logits / temperature, then nucleus (top-p) filtering — the fewest most
//!   likely tokens whose probabilities sum to at least `top_p` — and one draw from the renormalised
//!   rest with the seeded [`Rng`] (the same seed gives the same text on every platform and backend
//!   that computes the same logits).
//!
//! Generation ends at an end-of-generation token of the vocabulary (not part of the text), at a stop
//! string (the text ends before it), at `max_tokens`, or when the context is full. Text reaches the
//! caller as it is generated, in pieces that are whole UTF-8 characters and never the beginning of a
//! stop string that might still complete, with one call per token (for progress and timing).

use rocketjudge_core::stats::Rng;
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::judge::ModelJudge;
use crate::EngineError;

/// How to generate. The defaults: greedy, at most 256 tokens, no stop strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct GenerateSettings {
    /// New tokens at most (end-of-generation tokens included).
    pub max_tokens: usize,
    /// 0 is greedy decoding; above it, logits are divided by it before the softmax.
    pub temperature: f32,
    /// Nucleus sampling's probability mass, in (0, 1]; 1 keeps every token.
    pub top_p: f32,
    /// The seed of the draws (ignored when greedy).
    pub seed: u64,
    /// Texts that end the generation where they appear; the result ends before the first one.
    pub stop: Vec<String>,
}

impl Default for GenerateSettings {
    fn default() -> Self {
        GenerateSettings { max_tokens: 256, temperature: 0.0, top_p: 1.0, seed: 0, stop: Vec::new() }
    }
}

impl GenerateSettings {
    /// The settings, or what is wrong with them.
    pub fn check(&self) -> Result<(), EngineError> {
        if self.max_tokens == 0 {
            return Err(EngineError::Input("max tokens must be at least 1".into()));
        }
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(EngineError::Input(format!("temperature must be a number ≥ 0, not {}", self.temperature)));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(EngineError::Input(format!("top-p must be in (0, 1], not {}", self.top_p)));
        }
        if self.stop.iter().any(String::is_empty) {
            return Err(EngineError::Input("a stop string is empty".into()));
        }
        Ok(())
    }
}

rocketjudge_core::named_enum!(
    /// Why generation ended (records write it by these names).
    pub enum StopReason, "the reason generation ended" {
        /// The model generated one of its end-of-generation tokens.
        EndOfGeneration = "end-of-generation",
        /// The text reached one of the stop strings.
        StopString = "stop-string",
        /// `max_tokens` tokens were generated.
        MaxTokens = "max-tokens",
        /// Prompt and new tokens fill the judge's context.
        ContextFull = "context-full",
    }
);

/// A finished generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generation {
    /// Every generated token, the end-of-generation token included.
    pub tokens: Vec<u32>,
    /// The generated text (end-of-generation tokens are not text), cut before a stop string.
    pub text: String,
    pub stop: StopReason,
    pub prompt_tokens: usize,
}

/// Chooses each next token from the logits.
pub struct Sampler {
    temperature: f32,
    top_p: f32,
    rng: Rng,
}

impl Sampler {
    pub fn new(settings: &GenerateSettings) -> Self {
        Sampler { temperature: settings.temperature, top_p: settings.top_p, rng: Rng::new(settings.seed) }
    }

    /// The next token for `logits` (one per vocabulary id).
    pub fn pick(&mut self, logits: &[f32]) -> u32 {
        if self.temperature == 0.0 {
            return greedy(logits);
        }
        let max = logits.iter().copied().filter(|l| !l.is_nan()).fold(f32::NEG_INFINITY, f32::max);
        let t = f64::from(self.temperature);
        let mut p: Vec<(u32, f64)> = logits
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.is_nan())
            .map(|(i, &l)| (i as u32, (f64::from(l - max) / t).exp()))
            .filter(|&(_, e)| e > 0.0)
            .collect();
        if p.is_empty() {
            return greedy(logits);
        }
        // Most likely first (ties by id), then the nucleus: the shortest head holding top_p of the mass.
        p.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: f64 = p.iter().map(|x| x.1).sum();
        let mut kept = 0.0;
        let mut n = 0;
        while n < p.len() && (n == 0 || kept < f64::from(self.top_p) * total) {
            kept += p[n].1;
            n += 1;
        }
        let u = self.rng.uniform(0.0, kept);
        let mut acc = 0.0;
        for &(id, e) in &p[..n] {
            acc += e;
            if u < acc {
                return id;
            }
        }
        p[n - 1].0
    }
}

/// The id of the highest logit, the lowest on a tie (NaN never wins; 0 where all are NaN).
///
/// The highest value first, 16 lanes at a time (loops the compiler vectorizes), then its first
/// place: a comparison per logit carrying the best index along did not vectorize, and took half a
/// millisecond of every decoded token of a 152k vocabulary, a serial step between its forwards
/// (`bench --splits`).
pub fn greedy(logits: &[f32]) -> u32 {
    const L: usize = 16;
    let mut lanes = [f32::NEG_INFINITY; L];
    let chunks = logits.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        for (m, &x) in lanes.iter_mut().zip(c) {
            // A NaN compares false and is passed over.
            *m = if x > *m { x } else { *m };
        }
    }
    let max = lanes.iter().chain(rest).fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    logits.iter().position(|&x| x == max).unwrap_or(0) as u32
}

/// The text generated so far, released to the caller as it becomes final.
struct TextStream<'a> {
    bytes: Vec<u8>,
    /// Bytes already given to the caller.
    released: usize,
    stop: &'a [String],
}

impl<'a> TextStream<'a> {
    /// Add a token's bytes; `true` when the text now holds a stop string (it is cut before it).
    fn push(&mut self, piece: &[u8]) -> bool {
        self.bytes.extend_from_slice(piece);
        let longest = self.stop.iter().map(String::len).max().unwrap_or(0);
        // A new stop string ends in the new bytes, so it starts at most `longest - 1` bytes before them.
        let from = self.bytes.len().saturating_sub(piece.len() + longest.saturating_sub(1));
        let found = self.stop.iter().filter_map(|s| find(&self.bytes[from..], s.as_bytes()).map(|at| from + at)).min();
        if let Some(at) = found {
            self.bytes.truncate(at);
        }
        found.is_some()
    }

    /// The next piece the caller may see: whole characters, holding back an ending that could still
    /// become a stop string (or everything, when `last`).
    fn release(&mut self, last: bool) -> Option<String> {
        let mut end = self.bytes.len();
        if !last {
            let tail = &self.bytes[self.released..];
            let held = (1..=tail.len()).rev().find(|&k| self.stop.iter().any(|s| s.as_bytes().starts_with(&tail[tail.len() - k..])));
            end -= held.unwrap_or(0);
            end = self.released + utf8_prefix(&self.bytes[self.released..end]);
        }
        if end <= self.released {
            return None;
        }
        let piece = String::from_utf8_lossy(&self.bytes[self.released..end]).into_owned();
        self.released = end;
        Some(piece)
    }
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The length of `b`'s longest prefix that does not end inside a UTF-8 character (invalid bytes
/// count as whole: they become U+FFFD).
fn utf8_prefix(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Ok(_) => b.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => b.len(),
    }
}

impl<B: Backend> ModelJudge<B> {
    /// One step of generation: `token` at `position` into the KV cache (which holds the positions
    /// before it), and the logits of `vocab` (every id, for generation) for the token after it.
    pub async fn decode_step(&mut self, token: u32, position: usize, vocab: &[u32]) -> Result<Vec<f32>, EngineError> {
        let hidden = self
            .model
            .forward(&mut self.backend, &mut self.caches, &[token], &[position as u32], &[0], true, Some(&[0]))?
            .expect("a row was requested");
        Ok(self.model.logits(&mut self.backend, &hidden, vocab).await?.swap_remove(0))
    }

    /// `n` tokens generated greedily on top of the `position` tokens in the KV cache, from `first`,
    /// end-of-generation tokens not stopping it (the speed benchmark's decode step).
    pub async fn decode_greedy(&mut self, position: usize, first: u32, n: usize) -> Result<(), EngineError> {
        let vocab = self.model.vocabulary();
        let mut next = first;
        for i in 0..n {
            next = greedy(&self.decode_step(next, position + i, &vocab).await?);
        }
        Ok(())
    }

    /// Continue `prompt` (token ids, chat template already applied if wanted) under `settings`.
    /// `on_token` is called once per generated token with the text that became final with it
    /// (often empty: a character split over tokens, an ending that may become a stop string).
    pub async fn generate(
        &mut self,
        prompt: &[u32],
        settings: &GenerateSettings,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Generation, EngineError> {
        settings.check()?;
        self.prefill_prompt(prompt, 0)?;
        self.reply(prompt, settings, on_token).await
    }

    /// `n` replies to one `prompt`, reply i sampled with `settings.seed + i`: the prompt runs into the
    /// KV cache once and each reply starts from it. Its first `shared` tokens are its query's part,
    /// kept for the next prompt that begins with them (see [`Self::prefill_shared`]; 0 keeps
    /// nothing). `on_reply` sees each reply as it is finished.
    pub async fn generate_replies(
        &mut self,
        prompt: &[u32],
        shared: usize,
        settings: &GenerateSettings,
        n: usize,
        on_reply: &mut dyn FnMut(usize, &Generation),
    ) -> Result<Vec<Generation>, EngineError> {
        settings.check()?;
        self.prefill_prompt(prompt, shared)?;
        let mut replies = Vec::with_capacity(n);
        for i in 0..n {
            let seeded = GenerateSettings { seed: settings.seed.wrapping_add(i as u64), ..settings.clone() };
            let reply = self.reply(prompt, &seeded, &mut |_| {}).await?;
            on_reply(i, &reply);
            replies.push(reply);
        }
        Ok(replies)
    }

    /// All of `prompt` but its last token into the KV cache (what every reply to it shares), its
    /// first `shared` tokens kept as [`Self::prefill_shared`] keeps a query's part.
    fn prefill_prompt(&mut self, prompt: &[u32], shared: usize) -> Result<(), EngineError> {
        let Some((_, head)) = prompt.split_last() else {
            return Err(EngineError::Input("the prompt is empty".into()));
        };
        if prompt.len() >= self.max_tokens {
            return Err(EngineError::Input(format!(
                "the prompt has {} tokens: the judge's context of {} leaves no room to generate",
                prompt.len(),
                self.max_tokens
            )));
        }
        self.prefill_shared(head, shared)
    }

    /// One reply to `prompt`, whose head is in the KV cache ([`Self::prefill_prompt`]); the cache is cut
    /// back to the head first, so replies can follow one another.
    async fn reply(
        &mut self,
        prompt: &[u32],
        settings: &GenerateSettings,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Generation, EngineError> {
        let (&last, head) = prompt.split_last().expect("prefill_prompt refuses an empty prompt");
        for c in self.caches.iter_mut() {
            self.backend.truncate_cache(c, head.len());
        }
        let vocab = self.model.vocabulary();
        let end_of_generation = self.codec.tokenizer.end_of_generation().to_vec();
        let mut sampler = Sampler::new(settings);
        let mut text = TextStream { bytes: Vec::new(), released: 0, stop: &settings.stop };
        let (mut tokens, mut next, mut position) = (Vec::new(), last, head.len());
        let stop = loop {
            let logits = self.decode_step(next, position, &vocab).await?;
            position += 1;
            next = sampler.pick(&logits);
            tokens.push(next);
            let reason = if end_of_generation.contains(&next) {
                Some(StopReason::EndOfGeneration)
            } else if text.push(&self.codec.tokenizer.token_bytes(next)) {
                Some(StopReason::StopString)
            } else if tokens.len() == settings.max_tokens {
                Some(StopReason::MaxTokens)
            } else if prompt.len() + tokens.len() == self.max_tokens {
                Some(StopReason::ContextFull)
            } else {
                None
            };
            on_token(&text.release(reason.is_some()).unwrap_or_default());
            if let Some(reason) = reason {
                break reason;
            }
        };
        let text = String::from_utf8_lossy(&text.bytes).into_owned();
        Ok(Generation { tokens, text, stop, prompt_tokens: prompt.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(stop: &[&str], pieces: &[&str]) -> (Vec<String>, String, bool) {
        let stop: Vec<String> = stop.iter().map(|s| s.to_string()).collect();
        let mut t = TextStream { bytes: Vec::new(), released: 0, stop: &stop };
        let mut out = Vec::new();
        let mut stopped = false;
        for p in pieces {
            stopped = t.push(p.as_bytes());
            out.extend(t.release(stopped));
            if stopped {
                break;
            }
        }
        out.extend(t.release(true));
        (out, String::from_utf8(t.bytes).unwrap(), stopped)
    }

    #[test]
    fn text_before_a_stop_string_is_released_and_the_stop_string_never() {
        // "\n\nQ" split over three tokens: held back while it could still become the stop string.
        let (out, text, stopped) = stream(&["\n\nQ:"], &["Answer", " is 4.", "\n", "\nQ", ":", " next"]);
        assert_eq!(out, ["Answer", " is 4."]);
        assert_eq!(text, "Answer is 4.");
        assert!(stopped);
        // A held-back ending that does not complete the stop string is released.
        let (out, text, stopped) = stream(&["\n\nQ:"], &["a", "\n", "\nb"]);
        assert_eq!(out, ["a", "\n\nb"]);
        assert_eq!(text, "a\n\nb");
        assert!(!stopped);
        // A stop string inside one piece cuts it.
        let (out, text, _) = stream(&["END", "STOP"], &["xxSTOPyyEND"]);
        assert_eq!((out.concat(), text), ("xx".to_string(), "xx".to_string()));
    }

    #[test]
    fn pieces_are_whole_characters() {
        let bytes = "é€🦙".as_bytes();
        let stop: Vec<String> = Vec::new();
        let mut t = TextStream { bytes: Vec::new(), released: 0, stop: &stop };
        let mut out = Vec::new();
        for b in bytes {
            t.push(&[*b]);
            out.extend(t.release(false));
        }
        assert_eq!(out, ["é", "€", "🦙"]);
    }

    #[test]
    fn greedy_takes_the_highest_logit_and_the_lowest_id_on_a_tie() {
        assert_eq!(greedy(&[0.0, 2.0, 1.0, 2.0]), 1);
        assert_eq!(greedy(&[f32::NAN, -1.0, -3.0]), 1);
        assert_eq!(greedy(&[f32::NAN, f32::NAN]), 0);
        assert_eq!(greedy(&[f32::NEG_INFINITY, f32::NEG_INFINITY]), 0);
        // Against the plain definition (the first index of the largest non-NaN value), on vectors
        // longer than the lanes, with NaNs, ties and the best in the tail.
        let reference = |l: &[f32]| {
            let mut best: Option<usize> = None;
            for (i, &x) in l.iter().enumerate() {
                if !x.is_nan() && best.is_none_or(|b| x > l[b]) {
                    best = Some(i);
                }
            }
            best.unwrap_or(0) as u32
        };
        let mut rng = Rng::new(3);
        for len in [1, 15, 16, 17, 100, 1000] {
            for _ in 0..50 {
                let l: Vec<f32> = (0..len)
                    .map(|_| match rng.below(10) {
                        0 => f32::NAN,
                        1 => 4.0,
                        r => r as f32 * 0.1 - rng.below(7) as f32,
                    })
                    .collect();
                assert_eq!(greedy(&l), reference(&l), "{l:?}");
            }
        }
        let mut s = Sampler::new(&GenerateSettings::default());
        assert_eq!(s.pick(&[0.5, 0.1, 0.7]), 2);
    }

    /// Draws follow softmax(logits / T) restricted to the nucleus: frequencies over 200,000 draws
    /// within 0.005 of the exact probabilities, and tokens outside the nucleus never drawn.
    #[test]
    fn sampling_follows_the_tempered_nucleus() {
        let logits = [2.0f32, 1.0, 0.0, -1.0, -8.0];
        let freq = |t: f32, top_p: f32| {
            let mut s = Sampler::new(&GenerateSettings { temperature: t, top_p, seed: 7, ..Default::default() });
            let mut counts = [0usize; 5];
            let n = 200_000;
            for _ in 0..n {
                counts[s.pick(&logits) as usize] += 1;
            }
            counts.map(|c| c as f64 / n as f64)
        };
        let softmax = |t: f64, keep: usize| {
            let e: Vec<f64> = logits.iter().take(keep).map(|&l| (f64::from(l) / t).exp()).collect();
            let z: f64 = e.iter().sum();
            let mut p = [0.0; 5];
            for (i, x) in e.iter().enumerate() {
                p[i] = x / z;
            }
            p
        };
        for (t, top_p, keep) in [(1.0, 1.0, 5), (0.5, 1.0, 5), (2.0, 1.0, 5), (1.0, 0.9, 3), (1.0, 0.6, 1)] {
            let (got, want) = (freq(t, top_p), softmax(f64::from(t), keep));
            for i in 0..5 {
                assert!((got[i] - want[i]).abs() < 0.005, "T {t}, top-p {top_p}: token {i} drawn {} vs {}", got[i], want[i]);
                if want[i] == 0.0 {
                    assert_eq!(got[i], 0.0, "T {t}, top-p {top_p}: token {i} is outside the nucleus");
                }
            }
        }
        // The same seed, the same draws.
        let draws = |seed| {
            let mut s = Sampler::new(&GenerateSettings { temperature: 1.0, seed, ..Default::default() });
            (0..50).map(|_| s.pick(&logits)).collect::<Vec<_>>()
        };
        assert_eq!(draws(3), draws(3));
        assert_ne!(draws(3), draws(4));
    }

    #[test]
    fn bad_settings_are_refused() {
        for s in [
            GenerateSettings { max_tokens: 0, ..Default::default() },
            GenerateSettings { temperature: -1.0, ..Default::default() },
            GenerateSettings { temperature: f32::NAN, ..Default::default() },
            GenerateSettings { top_p: 0.0, ..Default::default() },
            GenerateSettings { top_p: 1.5, ..Default::default() },
            GenerateSettings { stop: vec![String::new()], ..Default::default() },
        ] {
            assert!(matches!(s.check(), Err(EngineError::Input(_))), "{s:?}");
        }
        assert!(GenerateSettings::default().check().is_ok());
    }
}
