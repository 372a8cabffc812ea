//! Where a judge's answer distribution becomes one number (seed 003, "decoding strategies").
//!
//! A judge answers with one token: Yes/No for a checklist item, A/B for a comparison, a digit for
//! the Direct score. A chatbot judge would *generate* that token, greedily or by sampling; since we
//! read the logits, every strategy is available exactly and offline:
//!
//! - [`Decoding::Greedy`]: the most likely answer (temperature → 0): Yes = 1 / No = 0, the argmax digit.
//! - [`Decoding::Expected`]: the expectation over the answer distribution (RocketEval's p(Yes), G-Eval's
//!   Σ d·p(d)) — the limit of infinitely many samples at temperature 1. The default.
//! - [`Decoding::Sampled`]: the mean of N draws at temperature T from the distribution the judge would
//!   sample, `p_T ∝ p^(1/T)`. Seeded per response, so a result is reproducible and a different
//!   `seed` is an honest repeat (seed 003 measures consistency across such repeats).
//!
//! The decoding is recorded in each judgment line, and scores are computed from it when they are read.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};
use crate::stats::Rng;

crate::named_enum!(
    /// How an answer distribution becomes a number.
    pub enum DecodingMethod, "the decoding" {
        /// The most likely answer.
        Greedy = "greedy",
        /// The exact expectation over the answer distribution (the default).
        Expected = "expected",
        /// The mean of N samples at temperature T.
        Sampled = "sample",
    }
);

/// A decoding with its parameters, as recorded in a judgment line: `{"method":"sample","samples":5,
/// "temperature":1.0,"seed":0}` (the parameters only for `sample`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DecodingRecord", into = "DecodingRecord")]
pub enum Decoding {
    Greedy,
    #[default]
    Expected,
    Sampled {
        samples: u32,
        temperature: f64,
        seed: u64,
    },
}

/// The serialized form (flat, so a judgment line reads well).
#[derive(Serialize, Deserialize)]
struct DecodingRecord {
    method: DecodingMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    samples: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

impl TryFrom<DecodingRecord> for Decoding {
    type Error = String;
    fn try_from(r: DecodingRecord) -> std::result::Result<Self, String> {
        Decoding::new(r.method, r.samples, r.temperature, r.seed).map_err(|e| e.to_string())
    }
}

impl From<Decoding> for DecodingRecord {
    fn from(d: Decoding) -> Self {
        match d {
            Decoding::Greedy => DecodingRecord { method: DecodingMethod::Greedy, samples: None, temperature: None, seed: None },
            Decoding::Expected => DecodingRecord { method: DecodingMethod::Expected, samples: None, temperature: None, seed: None },
            Decoding::Sampled { samples, temperature, seed } => {
                DecodingRecord { method: DecodingMethod::Sampled, samples: Some(samples), temperature: Some(temperature), seed: Some(seed) }
            }
        }
    }
}

/// Samples when `sample` is chosen without a count (seed 003 uses 10 generations).
pub const DEFAULT_SAMPLES: u32 = 10;
/// Temperature when `sample` is chosen without one.
pub const DEFAULT_TEMPERATURE: f64 = 1.0;

impl Decoding {
    /// A decoding from its parts, refusing combinations that mean nothing: a sample count, temperature
    /// or seed with `greedy`/`expected`, no samples, a temperature that is not positive and finite.
    pub fn new(method: DecodingMethod, samples: Option<u32>, temperature: Option<f64>, seed: Option<u64>) -> Result<Self> {
        match method {
            DecodingMethod::Greedy | DecodingMethod::Expected => {
                if samples.is_some() || temperature.is_some() || seed.is_some() {
                    return invalid!(
                        "a sample count, temperature or seed applies only to the `sample` decoding, not `{}`",
                        method.as_str()
                    );
                }
                Ok(if method == DecodingMethod::Greedy { Decoding::Greedy } else { Decoding::Expected })
            }
            DecodingMethod::Sampled => {
                let samples = samples.unwrap_or(DEFAULT_SAMPLES);
                let temperature = temperature.unwrap_or(DEFAULT_TEMPERATURE);
                if samples == 0 {
                    return invalid!("the `sample` decoding needs at least one sample");
                }
                if !(temperature.is_finite() && temperature > 0.0) {
                    return invalid!("the sampling temperature must be a positive number, not {temperature} (greedy is temperature → 0)");
                }
                Ok(Decoding::Sampled { samples, temperature, seed: seed.unwrap_or(0) })
            }
        }
    }

    pub fn method(&self) -> DecodingMethod {
        match self {
            Decoding::Greedy => DecodingMethod::Greedy,
            Decoding::Expected => DecodingMethod::Expected,
            Decoding::Sampled { .. } => DecodingMethod::Sampled,
        }
    }

    /// `greedy`, `expected` or `sample:N@T#seed`, for messages and tables.
    pub fn label(&self) -> String {
        match self {
            Decoding::Sampled { samples, temperature, seed } => format!("sample:{samples}@{temperature}#{seed}"),
            d => d.method().as_str().to_string(),
        }
    }

    /// The key of one response's random stream: its model and session, so that a response's draws do
    /// not depend on which others were decoded before it (the same in every reader of its scores).
    pub fn response_key(model: &str, session: &str) -> String {
        format!("{model}/{session}")
    }

    /// The random stream of `key` (see [`Self::response_key`]).
    fn rng(seed: u64, key: &str) -> Rng {
        // FNV-1a: stable across platforms and Rust versions.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in key.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Rng::new(h)
    }

    /// Decode binary answers (checklist items, A/B verdicts), each given as p(first answer), e.g.
    /// p(Yes)/(p(Yes)+p(No)). Returns one value in [0, 1] per answer: 1/0 (greedy; 0.5 exactly at
    /// p = 0.5), p (expected), or the share of N draws at temperature T that were the first answer.
    pub fn binary(&self, ps: &[f64], key: &str) -> Vec<f64> {
        match *self {
            Decoding::Greedy => ps
                .iter()
                .map(|&p| {
                    if p > 0.5 {
                        1.0
                    } else if p < 0.5 {
                        0.0
                    } else {
                        0.5
                    }
                })
                .collect(),
            Decoding::Expected => ps.to_vec(),
            Decoding::Sampled { samples, temperature, seed } => {
                let mut rng = Self::rng(seed, key);
                ps.iter()
                    .map(|&p| {
                        let pt = tempered_binary(p, temperature);
                        let hits = (0..samples).filter(|_| rng.uniform(0.0, 1.0) < pt).count();
                        hits as f64 / samples as f64
                    })
                    .collect()
            }
        }
    }

    /// Decode a distribution over the scores 0..n (the Direct digits): the argmax, Σ d·p(d), or the
    /// mean of N draws from `p_T ∝ p^(1/T)` — the mean of [`Self::distribution`].
    pub fn score(&self, probabilities: &[f64], key: &str) -> f64 {
        self.distribution(probabilities, key).iter().enumerate().map(|(d, p)| d as f64 * p).sum()
    }

    /// Decode a distribution over n answers into the distribution the decoding acts with: all mass on
    /// the most likely answer (greedy), the distribution itself renormalised (expected), or the shares
    /// of N draws from `p_T ∝ p^(1/T)` (sampled).
    pub fn distribution(&self, probabilities: &[f64], key: &str) -> Vec<f64> {
        let mut out = vec![0.0; probabilities.len()];
        match *self {
            Decoding::Greedy => {
                if let Some(best) = (0..probabilities.len()).max_by(|&a, &b| probabilities[a].total_cmp(&probabilities[b])) {
                    out[best] = 1.0;
                }
            }
            Decoding::Expected => {
                let z: f64 = probabilities.iter().sum();
                out.iter_mut().zip(probabilities).for_each(|(o, p)| *o = p / z);
            }
            Decoding::Sampled { samples, temperature, seed } => {
                let tempered = tempered(probabilities, temperature);
                let mut rng = Self::rng(seed, key);
                for _ in 0..samples {
                    let u = rng.uniform(0.0, 1.0);
                    let mut acc = 0.0;
                    let drawn = tempered.iter().position(|p| {
                        acc += p;
                        u < acc
                    });
                    out[drawn.unwrap_or(tempered.len() - 1)] += 1.0 / samples as f64;
                }
            }
        }
        out
    }
}

/// p(first) of a binary answer at temperature `t`: σ(logit(p)/t).
pub fn tempered_binary(p: f64, t: f64) -> f64 {
    tempered(&[p, 1.0 - p], t)[0]
}

/// A distribution at temperature `t`: `p^(1/t)`, renormalised (computed in logs; zeros stay zero).
pub fn tempered(probabilities: &[f64], t: f64) -> Vec<f64> {
    let logs: Vec<f64> = probabilities.iter().map(|p| p.ln() / t).collect();
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = logs.iter().map(|l| if l.is_finite() { (l - max).exp() } else { 0.0 }).collect();
    let z: f64 = e.iter().sum();
    e.iter().map(|x| x / z).collect()
}

/// The spread of a score distribution: its standard deviation, sqrt(Σ p(d)(d − μ)²). Seed 002 uses the
/// standard deviation of repeated Direct scores as its "inconsistency"; this is its exact value at T = 1.
pub fn score_spread(probabilities: &[f64]) -> f64 {
    let z: f64 = probabilities.iter().sum();
    let mu: f64 = probabilities.iter().enumerate().map(|(d, p)| d as f64 * p).sum::<f64>() / z;
    (probabilities.iter().enumerate().map(|(d, p)| p * (d as f64 - mu).powi(2)).sum::<f64>() / z).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_and_expected_are_exact() {
        assert_eq!(Decoding::Greedy.binary(&[0.8, 0.2, 0.5], "k"), vec![1.0, 0.0, 0.5]);
        assert_eq!(Decoding::Expected.binary(&[0.8, 0.2], "k"), vec![0.8, 0.2]);
        let p = [0.1, 0.2, 0.7];
        assert_eq!(Decoding::Greedy.score(&p, "k"), 2.0);
        assert!((Decoding::Expected.score(&p, "k") - 1.6).abs() < 1e-12);
    }

    #[test]
    fn temperature_sharpens_and_flattens() {
        // σ(logit(0.8)/0.5) = 0.8²/(0.8² + 0.2²).
        assert!((tempered_binary(0.8, 0.5) - 0.64 / 0.68).abs() < 1e-12);
        assert!((tempered_binary(0.8, 1.0) - 0.8).abs() < 1e-12);
        let flat = tempered(&[0.1, 0.9], 1e6);
        assert!((flat[0] - 0.5).abs() < 1e-5);
        assert_eq!(tempered(&[0.0, 1.0], 2.0), vec![0.0, 1.0]);
    }

    #[test]
    fn many_samples_converge_to_the_expectation_and_repeat_with_the_seed() {
        let d = Decoding::new(DecodingMethod::Sampled, Some(20_000), None, Some(7)).unwrap();
        let p = [0.1, 0.2, 0.7];
        assert!((d.score(&p, "m/s") - 1.6).abs() < 0.03);
        assert!((d.binary(&[0.3], "m/s")[0] - 0.3).abs() < 0.02);
        assert_eq!(d.score(&p, "m/s"), d.score(&p, "m/s"));
        let other = Decoding::new(DecodingMethod::Sampled, Some(3), None, Some(8)).unwrap();
        let same = Decoding::new(DecodingMethod::Sampled, Some(3), None, Some(8)).unwrap();
        assert_eq!(other.binary(&[0.5; 8], "a"), same.binary(&[0.5; 8], "a"));
    }

    #[test]
    fn nonsense_combinations_are_refused_and_records_round_trip() {
        assert!(Decoding::new(DecodingMethod::Greedy, Some(5), None, None).is_err());
        assert!(Decoding::new(DecodingMethod::Expected, None, Some(0.7), None).is_err());
        assert!(Decoding::new(DecodingMethod::Sampled, Some(0), None, None).is_err());
        assert!(Decoding::new(DecodingMethod::Sampled, None, Some(0.0), None).is_err());
        let d = Decoding::new(DecodingMethod::Sampled, Some(5), Some(0.7), Some(3)).unwrap();
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(s, r#"{"method":"sample","samples":5,"temperature":0.7,"seed":3}"#);
        assert_eq!(serde_json::from_str::<Decoding>(&s).unwrap(), d);
        assert_eq!(serde_json::to_string(&Decoding::Greedy).unwrap(), r#"{"method":"greedy"}"#);
        assert!(serde_json::from_str::<Decoding>(r#"{"method":"greedy","samples":3}"#).is_err());
    }

    #[test]
    fn spread_is_the_standard_deviation() {
        assert_eq!(score_spread(&[0.0, 1.0, 0.0]), 0.0);
        assert!((score_spread(&[0.5, 0.0, 0.5]) - 1.0).abs() < 1e-12);
    }
}
