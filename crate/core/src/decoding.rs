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
//! - [`Decoding::Majority`] and [`Decoding::Median`]: seed 003's other two ways of aggregating N
//!   samples (it samples five) — the most frequent answer, the median answer — as exact expectations
//!   over the draws, computed from `p_T` in closed form (no seed: nothing is drawn). Ties between
//!   most frequent answers are split evenly; with an even N the median is the mean of the two middle
//!   draws, so for a binary answer both are P(more than half the draws say Yes) + ½·P(exactly half).
//!
//! The decoding is recorded in each judgment line, and scores are computed from it when they are read.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};
use crate::stats::{self, Rng};

crate::named_enum!(
    /// How an answer distribution becomes a number.
    pub enum DecodingMethod, "the decoding" {
        /// The most likely answer.
        Greedy = "greedy",
        /// The exact expectation over the answer distribution (the default).
        Expected = "expected",
        /// The mean of N samples at temperature T.
        Sampled = "sample",
        /// The most frequent of N samples at temperature T, in expectation (exact).
        Majority = "majority",
        /// The median of N samples at temperature T, in expectation (exact).
        Median = "median",
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
    Majority {
        samples: u32,
        temperature: f64,
    },
    Median {
        samples: u32,
        temperature: f64,
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
            Decoding::Majority { samples, temperature } | Decoding::Median { samples, temperature } => {
                DecodingRecord { method: d.method(), samples: Some(samples), temperature: Some(temperature), seed: None }
            }
        }
    }
}

/// Samples when `sample` is chosen without a count (seed 003 uses 10 generations).
pub const DEFAULT_SAMPLES: u32 = 10;
/// Temperature when `sample`, `majority` or `median` is chosen without one.
pub const DEFAULT_TEMPERATURE: f64 = 1.0;
/// Samples when `majority` or `median` is chosen without a count (seed 003 samples five scores).
pub const DEFAULT_VOTES: u32 = 5;
/// The most samples `majority` takes: its exact form enumerates every way N draws fall on the answers
/// (92,378 for ten draws over ten digits).
pub const MAX_MAJORITY_SAMPLES: u32 = 10;

impl Decoding {
    /// The decoding that applies to a record: the one a view or a command chose (`chosen`), else the
    /// one the record carries (`recorded`), else the expectation. Records are never rewritten to
    /// change how they are decoded: the choice travels as this parameter.
    pub fn applied(chosen: Option<Decoding>, recorded: Option<Decoding>) -> Decoding {
        chosen.or(recorded).unwrap_or_default()
    }

    /// A decoding from its parts, refusing combinations that mean nothing: a sample count, temperature
    /// or seed with `greedy`/`expected`, a seed with the exact `majority`/`median`, no samples, more
    /// than [`MAX_MAJORITY_SAMPLES`] for `majority`, a temperature that is not positive and finite.
    pub fn new(method: DecodingMethod, samples: Option<u32>, temperature: Option<f64>, seed: Option<u64>) -> Result<Self> {
        use DecodingMethod as M;
        match method {
            M::Greedy | M::Expected => {
                if samples.is_some() || temperature.is_some() || seed.is_some() {
                    return invalid!(
                        "a sample count, temperature or seed applies only to the `sample`, `majority` and `median` decodings, not `{}`",
                        method.as_str()
                    );
                }
                return Ok(if method == M::Greedy { Decoding::Greedy } else { Decoding::Expected });
            }
            M::Majority | M::Median if seed.is_some() => {
                return invalid!("`{}` is computed exactly from the probabilities: nothing is drawn, so it takes no seed", method.as_str())
            }
            _ => {}
        }
        let samples = samples.unwrap_or(if method == M::Sampled { DEFAULT_SAMPLES } else { DEFAULT_VOTES });
        let temperature = temperature.unwrap_or(DEFAULT_TEMPERATURE);
        if samples == 0 {
            return invalid!("the `{}` decoding needs at least one sample", method.as_str());
        }
        if method == M::Majority && samples > MAX_MAJORITY_SAMPLES {
            return invalid!(
                "`majority` takes at most {MAX_MAJORITY_SAMPLES} samples (its exact form enumerates every outcome), not {samples}"
            );
        }
        if !(temperature.is_finite() && temperature > 0.0) {
            return invalid!("the sampling temperature must be a positive number, not {temperature} (greedy is temperature → 0)");
        }
        Ok(match method {
            M::Majority => Decoding::Majority { samples, temperature },
            M::Median => Decoding::Median { samples, temperature },
            _ => Decoding::Sampled { samples, temperature, seed: seed.unwrap_or(0) },
        })
    }

    pub fn method(&self) -> DecodingMethod {
        match self {
            Decoding::Greedy => DecodingMethod::Greedy,
            Decoding::Expected => DecodingMethod::Expected,
            Decoding::Sampled { .. } => DecodingMethod::Sampled,
            Decoding::Majority { .. } => DecodingMethod::Majority,
            Decoding::Median { .. } => DecodingMethod::Median,
        }
    }

    /// `greedy`, `expected`, `sample:N@T#seed`, `majority:N@T` or `median:N@T`, for messages and tables.
    pub fn label(&self) -> String {
        match self {
            Decoding::Sampled { samples, temperature, seed } => format!("sample:{samples}@{temperature}#{seed}"),
            Decoding::Majority { samples, temperature } | Decoding::Median { samples, temperature } => {
                format!("{}:{samples}@{temperature}", self.method().as_str())
            }
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
            Decoding::Majority { samples, temperature } | Decoding::Median { samples, temperature } => {
                ps.iter().map(|&p| majority_of_binary(samples as usize, tempered_binary(p, temperature))).collect()
            }
        }
    }

    /// Decode a distribution over the scores 0..n (the Direct digits): the argmax, Σ d·p(d), or the
    /// mean of N draws from `p_T ∝ p^(1/T)` — the mean of [`Self::distribution`].
    pub fn score(&self, probabilities: &[f64], key: &str) -> f64 {
        self.distribution(probabilities, key).iter().enumerate().map(|(d, p)| d as f64 * p).sum()
    }

    /// Decode a distribution over n answers into the distribution the decoding acts with: all mass on
    /// the most likely answer (greedy), the distribution itself renormalised (expected), the shares
    /// of N draws from `p_T ∝ p^(1/T)` (sampled), or the exact distribution of N draws' most frequent
    /// answer (majority, [`mode_distribution`]) or median ([`median_distribution`]).
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
            Decoding::Majority { samples, temperature } => out = mode_distribution(&tempered(probabilities, temperature), samples as usize),
            Decoding::Median { samples, temperature } => out = median_distribution(&tempered(probabilities, temperature), samples as usize),
        }
        out
    }
}

/// The expected majority of `n` binary draws with p(first answer) = `q`: P(X > n/2) + ½·P(X = n/2),
/// X ~ Bin(n, q) — also the expected median of the draws as 1/0 (the mean of the middle two for even n).
pub fn majority_of_binary(n: usize, q: f64) -> f64 {
    stats::binomial_pmf(n, q)
        .iter()
        .enumerate()
        .map(|(x, p)| {
            p * if 2 * x > n {
                1.0
            } else if 2 * x == n {
                0.5
            } else {
                0.0
            }
        })
        .sum()
}

/// Seed 000's ratio of disagreement: the chance that `n` draws of a binary answer with p(first) = `q`
/// do not all agree, 1 − qⁿ − (1 − q)ⁿ.
pub fn disagreement(n: usize, q: f64) -> f64 {
    1.0 - q.powi(n as i32) - (1.0 - q).powi(n as i32)
}

/// The distribution of the most frequent answer among `n` draws from `p` (ties between answers split
/// evenly): every way the draws can fall on the answers, each with its multinomial probability.
pub fn mode_distribution(p: &[f64], n: usize) -> Vec<f64> {
    struct Walk<'a> {
        p: &'a [f64],
        /// The answers that can be drawn (the others take no part).
        live: Vec<usize>,
        ln_fact: Vec<f64>,
        /// Draws in all.
        n: usize,
        counts: Vec<usize>,
        out: Vec<f64>,
    }
    impl Walk<'_> {
        /// Every count of answer `i` onwards, `left` draws to place.
        fn from(&mut self, i: usize, left: usize) {
            if i + 1 < self.live.len() {
                for c in 0..=left {
                    self.counts[i] = c;
                    self.from(i + 1, left - c);
                }
                return;
            }
            self.counts[i] = left;
            let ln = self.ln_fact[self.n]
                + self.counts.iter().zip(&self.live).map(|(&c, &a)| c as f64 * self.p[a].ln() - self.ln_fact[c]).sum::<f64>();
            let top = *self.counts.iter().max().expect("one answer at least");
            let modes = self.counts.iter().filter(|&&c| c == top).count();
            for (j, &c) in self.counts.iter().enumerate() {
                if c == top {
                    self.out[self.live[j]] += ln.exp() / modes as f64;
                }
            }
        }
    }
    let live: Vec<usize> = (0..p.len()).filter(|&i| p[i] > 0.0).collect();
    let ln_fact = (0..=n).map(|k| (1..=k).map(|x| (x as f64).ln()).sum()).collect();
    let mut w = Walk { p, counts: vec![0; live.len()], live, ln_fact, n, out: vec![0.0; p.len()] };
    if !w.live.is_empty() {
        w.from(0, n);
    }
    w.out
}

/// The distribution of the median of `n` draws from `p` over the answers 0, 1, …: by order statistics,
/// P(X₍ₖ₎ ≤ d) = P(Bin(n, F(d)) ≥ k) with F the cumulative distribution; the median is X₍₍ₙ₊₁₎/₂₎ for
/// odd n and for even n the mean of X₍ₙ/₂₎ and X₍ₙ/₂₊₁₎ (given as their half-and-half mixture, whose
/// mean is the median's expectation).
pub fn median_distribution(p: &[f64], n: usize) -> Vec<f64> {
    let z: f64 = p.iter().sum();
    let order_statistic = |k: usize| {
        let mut below = 0.0; // P(X₍ₖ₎ ≤ d − 1)
        let mut cumulative = 0.0;
        p.iter()
            .map(|pd| {
                cumulative += pd / z;
                let at_most: f64 = stats::binomial_pmf(n, cumulative.min(1.0))[k..].iter().sum();
                let here = (at_most - below).max(0.0);
                below = at_most;
                here
            })
            .collect::<Vec<f64>>()
    };
    if n % 2 == 1 {
        order_statistic(n.div_ceil(2))
    } else {
        order_statistic(n / 2).iter().zip(order_statistic(n / 2 + 1)).map(|(a, b)| (a + b) / 2.0).collect()
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
    fn sampled_majorities_and_medians_approach_the_exact_forms() {
        // Draw N answers as seed 003 does, many times, and aggregate each set: the most frequent
        // answer (ties split) and the median; their means approach the closed forms.
        let mut rng = Rng::new(11);
        let p = [0.05, 0.15, 0.3, 0.1, 0.4];
        for (n, t) in [(5usize, 1.0), (4, 0.6)] {
            let q = tempered(&p, t);
            let runs = 60_000;
            let (mut mode, mut median) = (0.0, 0.0);
            for _ in 0..runs {
                let mut draws: Vec<usize> = (0..n)
                    .map(|_| {
                        let u = rng.uniform(0.0, 1.0);
                        let mut acc = 0.0;
                        q.iter()
                            .position(|x| {
                                acc += x;
                                u < acc
                            })
                            .unwrap_or(q.len() - 1)
                    })
                    .collect();
                let counts: Vec<usize> = (0..p.len()).map(|a| draws.iter().filter(|&&d| d == a).count()).collect();
                let top = *counts.iter().max().unwrap();
                let modes: Vec<usize> = (0..p.len()).filter(|&a| counts[a] == top).collect();
                mode += modes.iter().sum::<usize>() as f64 / modes.len() as f64;
                draws.sort();
                median += if n % 2 == 1 { draws[n / 2] as f64 } else { (draws[n / 2 - 1] + draws[n / 2]) as f64 / 2.0 };
            }
            let exact = |m| Decoding::new(m, Some(n as u32), Some(t), None).unwrap().score(&p, "k");
            assert!((mode / runs as f64 - exact(DecodingMethod::Majority)).abs() < 0.02, "majority of {n}");
            assert!((median / runs as f64 - exact(DecodingMethod::Median)).abs() < 0.02, "median of {n}");
        }
        // Binary: P(most of 5 draws say Yes) at p = 0.7, about 0.837 — sharper than the expectation.
        let m = Decoding::new(DecodingMethod::Majority, None, None, None).unwrap();
        assert!((m.binary(&[0.7], "k")[0] - 0.83692).abs() < 1e-5);
        assert_eq!(m, Decoding::Majority { samples: DEFAULT_VOTES, temperature: 1.0 });
    }

    #[test]
    fn exact_aggregates_take_no_seed_and_round_trip() {
        assert!(Decoding::new(DecodingMethod::Median, Some(5), None, Some(1)).is_err());
        assert!(Decoding::new(DecodingMethod::Majority, Some(MAX_MAJORITY_SAMPLES + 1), None, None).is_err());
        assert!(Decoding::new(DecodingMethod::Median, Some(0), None, None).is_err());
        let d = Decoding::new(DecodingMethod::Median, Some(7), Some(0.5), None).unwrap();
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(s, r#"{"method":"median","samples":7,"temperature":0.5}"#);
        assert_eq!(serde_json::from_str::<Decoding>(&s).unwrap(), d);
        assert_eq!(d.label(), "median:7@0.5");
    }

    #[test]
    fn spread_is_the_standard_deviation() {
        assert_eq!(score_spread(&[0.0, 1.0, 0.0]), 0.0);
        assert!((score_spread(&[0.5, 0.0, 0.5]) - 1.0).abs() < 1e-12);
    }
}
