//! # rocketjudge-core
//!
//! The pure half of rocketjudge: everything between "a judge said p(Yes) = 0.83 for this checklist item"
//! and "model A ranks above model B with 95% confidence". No I/O, no GPU, no threads, no clocks; the same
//! inputs and seed give the same outputs on native and `wasm32-unknown-unknown`.
//!
//! The modules follow the data flow (see `ARCHITECTURE.md`):
//!
//! | step | module |
//! |---|---|
//! | read and check inputs (RocketEval/WildBench, FastChat MT-Bench, AlpacaEval, Arena) | [`formats`] |
//! | turn a query + response + checklist item into the judge's prompt | [`prompt`] |
//! | answer distributions → numbers: greedy, expected, N samples at T | [`decoding`] |
//! | item probabilities → one score per response (mean, supervised) | [`score`] |
//! | a response → one Direct 0–9 score or its perplexity (the baseline, with seed 002–004 knobs) | [`direct`] |
//! | a judge's written reasoning (CoT) → N replies → one aggregated score, or a pair's majority verdict | [`reasoned`] |
//! | two responses → p(A better), both orders → battles and win shares | [`pairwise`] |
//! | response scores → pairwise battles → model ratings with CIs | [`rank`] |
//! | a partial run's leaderboard: separated or too-close pairs, settled or not | [`settle`] |
//! | the order a run grades in (interleaved, model by model, adaptive) | [`schedule`] |
//! | a complete run replayed in each order: how soon each ranks right and settles | [`replay`] |
//! | compare a ranking or judgments to a reference | [`meta`] |
//! | refit the supervised scorer on a user's labels, rankings before and after | [`calibrate`] |
//! | bias probes: response transforms and the summary of their effect | [`probe`] |
//! | what the result views and exports show (category table, quartiles, win rates, CSV) | [`report`] |
//! | shared statistics (ranks, quantiles, seeded RNG) | [`stats`] |
//!
//! ```
//! use rocketjudge_core::score::unsupervised_score;
//! // Three checklist items, one of which the judge could not grade.
//! let s = unsupervised_score(&[Some(0.9), None, Some(0.5)]).unwrap();
//! assert_eq!(s.missing, 1);
//! assert!((s.score - (0.7 * 9.0 + 1.0)).abs() < 1e-12);
//! ```

#![allow(clippy::needless_range_loop)] // numeric kernels index several arrays in step

pub mod calibrate;
pub mod creation;
pub mod decoding;
pub mod direct;
pub mod error;
pub mod formats;
pub mod meta;
pub mod pairwise;
pub mod probe;
pub mod prompt;
pub mod rank;
pub mod reasoned;
pub mod replay;
pub mod report;
pub mod resume;
pub mod schedule;
pub mod score;
pub mod settle;
pub mod stats;

pub use error::{Error, FormatError, Result};
