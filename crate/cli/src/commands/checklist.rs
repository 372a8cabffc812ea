//! `rocketjudge checklist create`: instance-specific checklists from a strong model behind any
//! OpenAI-compatible chat endpoint (a local vLLM / Ollama / llama.cpp server, or a hosted API), or
//! written on this machine by a local GGUF judge (no `--endpoint`: the queries never leave it), with
//! RocketEval's creation prompt.
//!
//! Robust by construction: connect and read timeouts, bounded retries with exponential backoff, replies
//! cut off above a size bound, malformed replies (no numbered questions) retried, results appended one
//! line per query (resumable, never rewritten), and the API key read only from the named environment
//! variable — it never appears in files, logs or error messages.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rocketjudge_core::creation::{write_checklist, CreationPolicy};
use rocketjudge_core::formats::{self, jsonl, Checklist, Lined, Query};
use rocketjudge_core::prompt::creation_prompt;
use serde_json::{json, Value};

use url::Url;

use super::CliResult;
use crate::inputs;
use crate::net::{redact_str as redact, Net};
use crate::output::OutputFolder;

/// Replies larger than this are cut off (a checklist is a few hundred bytes).
const MAX_REPLY_BYTES: u64 = 1 << 20;

#[derive(clap::Subcommand)]
pub enum ChecklistCmd {
    /// Create checklists for queries: with a strong model behind an OpenAI-compatible chat
    /// completions API (--endpoint), or with a local GGUF judge on this machine (no --endpoint).
    Create(CreateArgs),
    /// Print the creation prompt of one query (to run with a model elsewhere).
    Prompt {
        #[arg(long)]
        queries: PathBuf,
        #[arg(long)]
        session: String,
    },
}

#[derive(clap::Args)]
pub struct CreateArgs {
    /// Queries (RocketEval JSONL); `references["gpt-4"]` is used as the reference response when present.
    #[arg(long)]
    queries: PathBuf,
    /// Base URL of the API, e.g. http://127.0.0.1:8000/v1 (the path /chat/completions is appended).
    /// Without it the checklists are written on this machine by the local judge --model.
    #[arg(long)]
    endpoint: Option<String>,
    /// With --endpoint, the model name sent to it; without, a local judge: a manifest name
    /// (`rocketjudge models list`) or a GGUF path. A small local judge writes worse checklists than a
    /// strong model (docs/measurements/generation.md: "Checklists written on the device").
    #[arg(long)]
    model: String,
    /// Name of the environment variable holding the API key (sent as a Bearer token). Never a literal key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Output checklist file (RocketEval `checklist.jsonl`); existing lines are kept and skipped.
    #[arg(long)]
    out: PathBuf,
    /// Attempts per query (malformed replies and transient errors are retried with backoff). An
    /// endpoint that has not answered once in the run stops it at the first query that fails.
    #[arg(long, default_value_t = 4)]
    attempts: u32,
    /// Seconds to wait for a connection / for the reply.
    #[arg(long, default_value_t = 10)]
    connect_timeout: u64,
    #[arg(long, default_value_t = 120)]
    read_timeout: u64,
    /// Sampling temperature (local judge: 0 is greedy; a malformed reply is retried sampled at
    /// T = 0.7 or the given one if higher, with --seed plus the attempt).
    #[arg(long, default_value_t = 0.0)]
    temperature: f64,
    /// The prompt that writes each checklist: RocketEval's, or seed 002's generation policies
    /// (`baseline`, `specify`, `length-0.5`, `length-1.5`, `self-refine`: two prompts, the baseline's
    /// reply first; `ticking`: TICK's prompt).
    #[arg(long, default_value_t = CreationPolicy::RocketEval, value_parser = parse_policy)]
    policy: CreationPolicy,
    /// Local judge: tokens per reply at most.
    #[arg(long, default_value_t = 512)]
    max_new_tokens: usize,
    /// Local judge: the seed of sampled attempts.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Local judge: where it runs.
    #[command(flatten)]
    device: crate::judges::DeviceArgs,
}

fn parse_policy(s: &str) -> Result<CreationPolicy, String> {
    s.parse().map_err(|e: rocketjudge_core::error::UnknownName| e.to_string())
}

pub fn run(c: ChecklistCmd) -> CliResult {
    match c {
        ChecklistCmd::Prompt { queries, session } => {
            let name = queries.display().to_string();
            // Every query read and checked as `create` checks them; only the one asked for is kept.
            let mut sessions: Vec<Lined<String>> = Vec::new();
            let mut wanted = None;
            let check = |q: &Query, f: &str, l: usize| q.check_limits(f, l);
            formats::rocketeval::each_validated(&name, inputs::open(&queries)?, check, |q: Lined<Query>| {
                sessions.push(Lined { line: q.line, value: q.value.session_id.clone() });
                if q.value.session_id == session && wanted.is_none() {
                    wanted = Some(q.value);
                }
            })?;
            once_each(&name, sessions.iter().map(|s| (s.line, s.value.as_str())))?;
            let q = wanted.with_context(|| format!("no query `{session}` in {name}"))?;
            println!("{}", creation_prompt(&q));
            Ok(())
        }
        ChecklistCmd::Create(a) => create(a),
    }
}

/// Refuse a queries file that lists a session twice (which one would the checklist be for?).
fn once_each<'a>(file: &str, sessions: impl Iterator<Item = (usize, &'a str)>) -> Result<()> {
    let mut first_line = std::collections::HashMap::new();
    for (line, session) in sessions {
        if let Some(first) = first_line.insert(session, line) {
            return Err(rocketjudge_core::FormatError::new(
                file,
                line,
                "session_id",
                format!("the query `{session}` is listed twice (first on line {first}); each query gets one checklist"),
            )
            .into());
        }
    }
    Ok(())
}

/// Where checklists come from: an endpoint, or the local judge (one writer per run: the variants'
/// sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Writer {
    /// `answered`: whether any request of this run got an HTTP reply (of any status).
    Endpoint {
        net: Net,
        url: Url,
        key: Option<String>,
        endpoint: String,
        answered: bool,
    },
    Local(rocketjudge_engine::judge::AnyJudge),
}

fn create(a: CreateArgs) -> CliResult {
    let name = a.queries.display().to_string();
    let queries = formats::rocketeval::read_queries_from(&name, inputs::open(&a.queries)?)?;
    if queries.is_empty() {
        return Err(inputs::no_records(&[&name], "queries"));
    }
    // One checklist per query: a session listed twice would be worked (and paid for) twice.
    once_each(&name, queries.iter().map(|q| (q.line, q.value.session_id.as_str())))?;
    // One run at a time writes the file; sessions already in it are done (a torn last line cut).
    let mut out = OutputFolder::lock_file(&a.out)?;
    let resumed = OutputFolder::resume(&a.out, jsonl::read_jsonl::<Checklist>, |c: &Checklist| c.session_id.clone())?;
    // One file, one prompt: checklists written under another policy are not mixed in.
    let version = |c: &Checklist| c.meta.as_ref().and_then(|m| m["prompt_version"].as_str().map(str::to_string));
    if let Some(other) = resumed.iter().filter_map(|c| version(&c.value)).find(|v| v != a.policy.version()) {
        bail!(
            "{} holds checklists written with the prompt `{other}`; this run's --policy {} writes `{}`: choose another --out",
            a.out.display(),
            a.policy,
            a.policy.version()
        );
    }
    let done: HashSet<String> = resumed.into_iter().map(|c| c.value.session_id).collect();
    let mut writer = match &a.endpoint {
        Some(endpoint) => endpoint_writer(&a, endpoint)?,
        None => {
            if a.api_key_env.is_some() {
                bail!("--api-key-env is for an --endpoint; a local judge (no --endpoint) needs no key");
            }
            let (judge, info) = crate::judges::load(&a.model, &a.device, CONTEXT)?;
            eprintln!("writing checklists on this machine with {} on {}", a.model, info.description);
            Writer::Local(judge)
        }
    };
    let todo: Vec<&Query> = queries.iter().map(|l| &l.value).filter(|q| !done.contains(&q.session_id)).collect();
    eprintln!("{} queries, {} already have checklists, {} to create", queries.len(), done.len(), todo.len());
    let mut failed = Vec::new();
    for (n, q) in todo.iter().enumerate() {
        match create_one(&mut writer, &a, q) {
            Ok(items) => {
                let mut meta = json!({"generator": a.model, "prompt_version": a.policy.version()});
                match &writer {
                    Writer::Endpoint { endpoint, .. } => meta["endpoint"] = json!(redact(endpoint)),
                    Writer::Local(_) => meta["device"] = json!("local"),
                }
                let c = Checklist { session_id: q.session_id.clone(), checklist: items, meta: Some(meta) };
                out.append(&a.out, &jsonl::to_jsonl_line(&c))?;
            }
            Err(e) => {
                eprintln!("{}: no checklist: {e:#}", q.session_id);
                // An endpoint that has not answered once (a wrong address, no network) would fail
                // every query the same way, each after its retries' backoff: stop at the first.
                if let Writer::Endpoint { answered: false, endpoint, .. } = &writer {
                    bail!(
                        "--endpoint {} did not answer ({} attempt(s) for {}: {e:#}); stopped there, queries not tried: {}. \
                         Check the address and the network, then run again: checklists already in {} are kept",
                        redact(endpoint),
                        a.attempts.max(1),
                        q.session_id,
                        todo.len() - n - 1,
                        a.out.display()
                    );
                }
                failed.push(q.session_id.clone());
            }
        }
        eprintln!("[{}/{}] {}", n + 1, todo.len(), q.session_id);
    }
    if !failed.is_empty() {
        bail!("{} queries got no checklist ({}); run again to retry them", failed.len(), failed.join(", "));
    }
    Ok(())
}

/// The local judge's context: the creation prompt (the query, its history and reference answer) and
/// the checklist.
const CONTEXT: usize = 8192;

/// Why one prompt got no reply: worth another attempt (a transport error, 429, 5xx) or not.
enum Failure {
    Retry(anyhow::Error),
    Fatal(anyhow::Error),
}

impl Writer {
    /// The reply to `prompt` sent as the user's message; `attempt` (from 0) picks the local judge's
    /// temperature: greedy (or --temperature) first, then sampled at T = max(0.7, --temperature)
    /// with --seed plus the attempt.
    fn ask(&mut self, a: &CreateArgs, prompt: &str, attempt: u32) -> Result<String, Failure> {
        match self {
            Writer::Endpoint { net, url, key, answered, .. } => ask_endpoint(net, url, key.as_deref(), a, prompt, answered),
            Writer::Local(judge) => {
                use rocketjudge_engine::generate::GenerateSettings;
                let temperature = if attempt == 0 { a.temperature as f32 } else { (a.temperature as f32).max(0.7) };
                let settings =
                    GenerateSettings { max_tokens: a.max_new_tokens, temperature, seed: a.seed + u64::from(attempt), ..Default::default() };
                let tokens = judge.prompt_tokens(prompt, true).map_err(|e| Failure::Fatal(e.into()))?;
                let g = pollster::block_on(judge.generate(&tokens, &settings, &mut |_| {})).map_err(|e| Failure::Fatal(e.into()))?;
                Ok(g.text)
            }
        }
    }
}

/// One query's checklist under --policy, at most --attempts runs of the policy: a run whose replies
/// hold no questions, or whose request failed transiently, is retried after a backoff.
fn create_one(writer: &mut Writer, a: &CreateArgs, q: &Query) -> Result<Vec<String>> {
    let mut last = anyhow::anyhow!("no attempt made");
    for attempt in 0..a.attempts.max(1) {
        if attempt > 0 && matches!(writer, Writer::Endpoint { .. }) {
            std::thread::sleep(Duration::from_millis(250 * (1 << attempt.min(6))));
        }
        let mut reply = String::new();
        let written = write_checklist(a.policy, q, |prompt| {
            reply = writer.ask(a, prompt, attempt)?;
            Ok::<_, Failure>(reply.clone())
        });
        match written {
            Ok(Some(items)) => return Ok(items),
            Ok(None) => {
                let start: String = reply.chars().take(200).collect();
                last = anyhow::anyhow!("the reply has no {} (attempt {}: {start:?}…)", a.policy.expected_reply(), attempt + 1);
            }
            Err(Failure::Retry(e)) => last = e,
            Err(Failure::Fatal(e)) => return Err(e),
        }
    }
    Err(last)
}

/// The endpoint's client, with the key from the environment.
fn endpoint_writer(a: &CreateArgs, endpoint: &str) -> Result<Writer> {
    let key = match &a.api_key_env {
        Some(var) => {
            Some(std::env::var(var).with_context(|| format!("the environment variable {var} (named by --api-key-env) is not set"))?)
        }
        None => None,
    };
    let net = Net::from_env()?.with_timeouts(Duration::from_secs(a.connect_timeout), Duration::from_secs(a.read_timeout));
    let url = Url::parse(&format!("{}/chat/completions", endpoint.trim_end_matches('/')))
        .with_context(|| format!("--endpoint {} is not a URL", redact(endpoint)))?;
    if let (Some(var), "http") = (&a.api_key_env, url.scheme()) {
        if !is_loopback(&url) {
            eprintln!(
                "warning: --endpoint {} is plain http: the key in {var} will cross the network unencrypted to {}, readable by anyone on the way. \
                 Use an https endpoint (plain http is fine only for a server on this machine)",
                redact(endpoint),
                url.host_str().unwrap_or("?")
            );
        }
    }
    Ok(Writer::Endpoint { net, url, key, endpoint: endpoint.to_string(), answered: false })
}

/// Whether `url` names this machine (localhost or a loopback address).
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// One request to the endpoint: the reply's text. Sets `answered` when an HTTP reply came back.
fn ask_endpoint(net: &Net, url: &Url, key: Option<&str>, a: &CreateArgs, prompt: &str, answered: &mut bool) -> Result<String, Failure> {
    let body = json!({
        "model": a.model,
        "temperature": a.temperature,
        "messages": [{"role": "user", "content": prompt}],
    })
    .to_string();
    let auth = key.map(|k| format!("Bearer {k}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|v| ("Authorization", v.as_str())).collect();
    // Transport errors name the URL only (redacted); the key is in a header and never printed.
    let reply = net.post_json(url, &headers, &body, MAX_REPLY_BYTES);
    *answered |= reply.is_ok();
    match reply {
        Ok((200..=299, text)) => Ok(serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["choices"][0]["message"]["content"].as_str().map(str::to_string))
            .unwrap_or_default()),
        Ok((code, _)) if code == 429 || code >= 500 => Err(Failure::Retry(anyhow::anyhow!("the endpoint answered HTTP {code}"))),
        Ok((code, _)) => Err(Failure::Fatal(anyhow::anyhow!("the endpoint answered HTTP {code} (not retried)"))),
        Err(e) => Err(Failure::Retry(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn endpoints_are_redacted() {
        assert_eq!(redact("https://user:secret@api.example.com/v1?key=abc"), "https://api.example.com/v1");
        assert_eq!(redact("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
    }
}
