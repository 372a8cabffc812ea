//! The judge-design flags shared by `grade`, `direct` and `rank` (seeds 002 and 003): how an answer
//! distribution is decoded, and when the checklist is put in the prompt. Each is recorded in every
//! judgment line, so a result says how it was made.

use anyhow::{anyhow, bail, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::decoding::{Decoding, DecodingMethod};
use rocketjudge_core::pairwise::ChecklistUse;

/// Seed 003's decoding strategies, exact from the logits.
#[derive(clap::Args, Clone, Debug)]
pub struct DecodingFlags {
    /// How the judge's answer distribution becomes a number: `greedy` (its most likely answer),
    /// `expected` (the exact expectation; the default), `sample` (the mean of --samples draws at
    /// --temperature, seeded by --sample-seed), or seed 003's `majority` / `median` of --samples draws
    /// (default 5; majority at most 10) at --temperature, as exact expectations (nothing is drawn).
    #[arg(long, value_parser = PossibleValuesParser::new(DecodingMethod::NAMES).try_map(|s| s.parse::<DecodingMethod>()))]
    pub decoding: Option<DecodingMethod>,
    /// Draws per answer for `--decoding sample` (default 10), `majority` or `median` (default 5).
    #[arg(long)]
    pub samples: Option<u32>,
    /// Temperature of the draws for `--decoding sample`, `majority` or `median` (default 1).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Seed of `--decoding sample` (a different seed is an independent repeat; default 0).
    #[arg(long)]
    pub sample_seed: Option<u64>,
}

impl DecodingFlags {
    /// The decoding chosen, `None` when no flag was given; nonsense combinations (a sample count with
    /// `greedy`, a temperature of 0) are errors.
    pub fn chosen(&self) -> Result<Option<Decoding>> {
        let method = match self.decoding {
            Some(m) => m,
            None if self.samples.is_some() || self.temperature.is_some() || self.sample_seed.is_some() => {
                bail!("--samples, --temperature and --sample-seed need --decoding sample (or majority/median, without a seed)")
            }
            None => return Ok(None),
        };
        Decoding::new(method, self.samples, self.temperature, self.sample_seed).map(Some).map_err(|e| anyhow!("--decoding: {e}"))
    }
}

/// Seed 002's checklist use.
#[derive(clap::Args, Clone, Debug)]
pub struct ChecklistFlags {
    /// Put the query's checklist in the prompt: `always`, `never`, or `selective` (first without, and
    /// again with it where the judge is inconsistent: inconsistency ≥ --selective-k).
    #[arg(long, value_parser = PossibleValuesParser::new(ChecklistUse::NAMES).try_map(|s| s.parse::<ChecklistUse>()))]
    pub checklist: Option<ChecklistUse>,
    /// The threshold of `--checklist selective`: for a comparison, the votes of 10 sampled verdicts
    /// (five per order) the less-preferred response gets, in exact expectation (0–5; about 3.77 at an
    /// even split; default 3); for a Direct score, the standard deviation of its 0–9 distribution
    /// (default 1.5).
    #[arg(long)]
    pub selective_k: Option<f64>,
}

impl ChecklistFlags {
    /// The rule and its threshold (`default_k` for `selective` without --selective-k).
    pub fn rule(&self, default: ChecklistUse, default_k: f64) -> Result<(ChecklistUse, Option<f64>)> {
        let rule = self.checklist.unwrap_or(default);
        Ok((rule, rule.threshold(self.selective_k, default_k).map_err(|e| anyhow!("--selective-k: {e}"))?))
    }
}
