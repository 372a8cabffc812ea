//! `rocketjudge generate`: the judge writes a continuation of a prompt (for scripting and checks).

use std::io::Write;
use std::time::Instant;

use anyhow::Context;
use rocketjudge_engine::generate::GenerateSettings;

use super::CliResult;
use super::Format;
use crate::judges;

/// Continue a prompt with the judge model and print the text as it is generated.
///
/// Greedy by default (the highest logit at each step); with --temperature above 0, sampled from the
/// softmax of logits / T restricted to the --top-p nucleus, with --seed (the same seed, the same
/// text). Stops at the model's end-of-generation tokens, at a --stop string (the text ends before
/// it), after --max-tokens, or when the context is full. Speed goes to stderr; `--format json`
/// prints one object with the tokens, the text and why it stopped instead.
#[derive(clap::Args)]
pub struct Args {
    /// Judge model: a manifest name (`rocketjudge models list`) or a GGUF path.
    #[arg(long)]
    model: String,
    /// The prompt text (special-token spellings in it are those tokens unless --chat).
    #[arg(long)]
    prompt: String,
    /// Send the prompt as the user's message in the model's chat template.
    #[arg(long)]
    chat: bool,
    /// New tokens at most.
    #[arg(long, default_value_t = GenerateSettings::default().max_tokens)]
    max_tokens: usize,
    /// 0: greedy decoding.
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// Nucleus sampling's probability mass (with --temperature above 0).
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A text that ends the generation (repeatable).
    #[arg(long)]
    stop: Vec<String>,
    /// The judge's context in tokens (prompt and new tokens together).
    #[arg(long, default_value_t = 4096)]
    context: usize,
    #[command(flatten)]
    device: judges::DeviceArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run(a: Args) -> CliResult {
    let settings = GenerateSettings { max_tokens: a.max_tokens, temperature: a.temperature, top_p: a.top_p, seed: a.seed, stop: a.stop };
    settings.check()?;
    if a.format == Format::Csv {
        anyhow::bail!("generate prints text or JSON: --format table or json");
    }
    let (mut judge, info) = judges::load(&a.model, &a.device, a.context)?;
    let prompt = judge.prompt_tokens(&a.prompt, a.chat)?;
    let started = Instant::now();
    let mut first: Option<f64> = None;
    let stream = a.format == Format::Table;
    let mut stdout = std::io::stdout().lock();
    let mut on_token = |piece: &str| {
        first.get_or_insert_with(|| started.elapsed().as_secs_f64());
        if stream && !piece.is_empty() {
            // A closed pipe (`| head`) ends the output, not the command's result.
            let _ = stdout.write_all(piece.as_bytes()).and_then(|()| stdout.flush());
        }
    };
    let g = pollster::block_on(judge.generate(&prompt, &settings, &mut on_token)).context("generation failed")?;
    let seconds = started.elapsed().as_secs_f64();
    if stream {
        let _ = writeln!(stdout);
    } else {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&g)?)?;
    }
    eprintln!(
        "{} prompt + {} new tokens in {seconds:.2} s (first token {:.2} s, then {:.1} tokens/s; stop: {}) on {}",
        g.prompt_tokens,
        g.tokens.len(),
        first.unwrap_or(seconds),
        rate(g.tokens.len(), first.unwrap_or(seconds), seconds),
        serde_json::to_value(g.stop)?.as_str().unwrap_or_default(),
        info.description
    );
    Ok(())
}

/// Tokens per second after the first (which pays for the prompt), or 0 with fewer than two.
fn rate(tokens: usize, first: f64, all: f64) -> f64 {
    if tokens < 2 || all <= first {
        0.0
    } else {
        (tokens - 1) as f64 / (all - first)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rate_counts_tokens_after_the_first() {
        assert_eq!(super::rate(11, 1.0, 3.0), 5.0);
        assert_eq!(super::rate(1, 1.0, 3.0), 0.0);
    }
}
