//! `rocketjudge export battles`: judgments → Chatbot Arena battles.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use rocketjudge_core::formats::arena;
use rocketjudge_core::rank::{self, EqualScores, PairRule};

use super::write_atomic_with;
use super::CliResult;
use crate::inputs;

#[derive(clap::Subcommand)]
pub enum Export {
    /// Write the pairwise battles implied by the judgments, in Chatbot Arena's format: a JSON array of
    /// {model_a, model_b, winner, question_id}, winner ∈ model_a / model_b / tie.
    Battles(BattlesArgs),
}

#[derive(clap::Args)]
pub struct BattlesArgs {
    /// Folder (or file) of RocketEval judgments JSONL.
    #[arg(long)]
    judgments: PathBuf,
    /// Where to write the battles (JSON array).
    #[arg(long)]
    out: PathBuf,
    /// Score differences below this are ties.
    #[arg(long, default_value_t = rank::DEFAULT_TIE_MARGIN)]
    tie_margin: f64,
    /// Exactly equal scores: `tie` or `skip`.
    #[arg(long, default_value_t = EqualScores::Tie, value_parser = PossibleValuesParser::new(EqualScores::NAMES).try_map(|s| s.parse::<EqualScores>()))]
    equal: EqualScores,
}

pub fn run(e: Export) -> CliResult {
    let Export::Battles(a) = e;
    let table = inputs::scores_of_judgments(&a.judgments, None)?.table()?;
    let rule = PairRule { tie_margin: a.tie_margin, equal: a.equal, ..Default::default() };
    // Written as derived, a query at a time: the battles are n(n−1)/2 a query for n scores, far more
    // than the judgments they come from.
    let mut count = 0;
    write_atomic_with(&a.out, |f| arena::write_battles(f, rank::battles(&table, &rule).inspect(|_| count += 1)))?;
    eprintln!("wrote {count} battles between {} models to {}", table.models.len(), a.out.display());
    Ok(())
}
