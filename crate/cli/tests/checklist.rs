//! `rocketjudge checklist create` against a local stand-in for an OpenAI-compatible endpoint: retries
//! on malformed replies and server errors, resumes, times out, and never leaks the API key.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-test-SECRET-4242";

/// A stand-in server answering successive requests with the given (status, body) replies; the last
/// is repeated. Records each request's Authorization header.
fn serve(replies: Vec<(u16, String)>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut auth = String::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if lower.starts_with("authorization:") {
                    auth = line.trim().to_string();
                }
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            log.lock().unwrap().push(auth);
            let (status, reply) = replies.get(n).unwrap_or(replies.last().unwrap()).clone();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (addr, seen)
}

fn chat(content: &str) -> String {
    serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string()
}

fn queries(dir: &Path) -> std::path::PathBuf {
    let q = dir.join("queries.jsonl");
    std::fs::write(
        &q,
        "{\"session_id\":\"a\",\"conversation_input\":[{\"role\":\"user\",\"content\":\"What is 2+2?\"}],\"references\":{\"gpt-4\":\"4\"}}\n\
         {\"session_id\":\"b\",\"conversation_input\":[{\"role\":\"user\",\"content\":\"Name a prime.\"}]}\n",
    )
    .unwrap();
    q
}

/// `checklist create` against the stand-in at `url`, with the given extra flags.
fn create_args(q: &Path, url: &str, model: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let base =
        ["checklist", "create", "--queries", q.to_str().unwrap(), "--endpoint", url, "--model", model, "--out", out.to_str().unwrap()];
    base.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge")).args(args).env("RJ_TEST_KEY", KEY).output().unwrap()
}

#[test]
fn creates_retries_resumes_and_keeps_the_key_secret() {
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let out = dir.path().join("checklists.jsonl");
    let good = chat("## Checklist\n1. Does the response say 4?\n2. Is it brief?");
    let (url, seen) = serve(vec![(200, chat("I cannot help with that.")), (503, "{}".into()), (200, good.clone())]);
    let o = run(&create_args(&q, &url, "stand-in", &out, &["--api-key-env", "RJ_TEST_KEY"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["checklist"][0], "Does the response say 4?");
    assert_eq!(lines[0]["meta"]["generator"], "stand-in");
    assert_eq!(lines[0]["meta"]["prompt_version"], "rocketeval-create-v1");
    // A malformed reply and a 503 were retried: 4 requests for 2 queries, each with the key as a bearer token.
    let auth = seen.lock().unwrap().clone();
    assert_eq!(auth.len(), 4);
    // Header names are case-insensitive (RFC 9110); the value is exact.
    assert!(
        auth.iter()
            .all(|a| a.split_once(": ").is_some_and(|(k, v)| k.eq_ignore_ascii_case("authorization") && v == format!("Bearer {KEY}"))),
        "{auth:?}"
    );
    for s in [text.as_str(), &String::from_utf8_lossy(&o.stdout), &String::from_utf8_lossy(&o.stderr)] {
        assert!(!s.contains(KEY), "the key leaked: {s}");
    }
    // Resume: nothing left to do, no request, the file unchanged.
    let o = run(&create_args(&q, &url, "stand-in", &out, &[]));
    assert!(o.status.success());
    assert_eq!(seen.lock().unwrap().len(), 4);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}

#[test]
fn gives_up_after_bounded_attempts_and_a_missing_key_variable_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let out = dir.path().join("c.jsonl");
    let (url, seen) = serve(vec![(200, chat("no numbered list here"))]);
    let o = run(&create_args(&q, &url, "m", &out, &["--attempts", "2"]));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no numbered questions"));
    assert_eq!(seen.lock().unwrap().len(), 4, "two attempts per query");
    let o = run(&create_args(&q, &url, "m", &out, &["--api-key-env", "RJ_NOT_SET_ANYWHERE"]));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("RJ_NOT_SET_ANYWHERE"));
}

#[test]
fn an_endpoint_that_never_answers_stops_the_run_at_the_first_query() {
    // A port nothing listens on: every connection is refused.
    let url = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let out = dir.path().join("c.jsonl");
    let o = run(&create_args(&q, &url, "m", &out, &["--attempts", "2"]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("did not answer (2 attempt(s) for a") && err.contains("queries not tried: 1"), "{err}");
    assert!(err.contains("a: no checklist") && !err.contains("b: no checklist"), "the second query was tried: {err}");
    assert!(std::fs::read_to_string(&out).unwrap_or_default().is_empty());
    // An endpoint that answers, if with errors, is tried for every query as before.
    let (url, seen) = serve(vec![(503, "{}".into())]);
    let o = run(&create_args(&q, &url, "m", &out, &["--attempts", "1"]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("b: no checklist") && err.contains("2 queries got no checklist"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[test]
fn a_silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let _held: Vec<_> = listener.incoming().take(4).collect(); // accept, never answer
        std::thread::sleep(std::time::Duration::from_secs(3600));
    });
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(create_args(
            &q,
            &url,
            "m",
            &dir.path().join("c.jsonl"),
            &["--attempts", "1", "--read-timeout", "1", "--api-key-env", "RJ_TEST_KEY"],
        ))
        .env("RJ_TEST_KEY", KEY)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Liveness, not speed: with a 1 s read timeout the command must give up on its own; a client
    // without timeouts would wait for the silent server forever.
    let mut status = None;
    for _ in 0..600 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let Some(status) = status else {
        child.kill().unwrap();
        panic!("checklist create did not give up on a server that never answers");
    };
    assert!(!status.success());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("cannot reach") || err.contains("reading the reply"), "{err}");
    assert!(!err.contains(KEY));
}

#[test]
fn a_key_bound_for_plain_http_beyond_this_machine_is_warned_about_first() {
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let out = dir.path().join("checklists.jsonl");
    // A host that does not resolve: the warning must come before the (failing) request, tried once
    // (a lookup that fails is retried after a backoff, seconds this test does not need).
    let unresolved = ["--connect-timeout", "2", "--attempts", "1"];
    let o = run(&create_args(&q, "http://judge-api.invalid/v1", "m", &out, &[&["--api-key-env", "RJ_TEST_KEY"][..], &unresolved].concat()));
    let err = String::from_utf8_lossy(&o.stderr);
    let warning = err
        .lines()
        .position(|l| l.starts_with("warning: --endpoint http://judge-api.invalid/v1 is plain http"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(err.lines().nth(warning).unwrap().contains("RJ_TEST_KEY") && !err.contains(KEY), "{err}");
    assert!(
        err.lines().take(warning).all(|l| !l.contains("judge-api.invalid") || l.contains("queries")),
        "warned before any request: {err}"
    );
    // Without a key, or to this machine, nothing to warn about.
    let o = run(&create_args(&q, "http://judge-api.invalid/v1", "m", &out, &unresolved));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("plain http"));
    let (url, _) = serve(vec![(200, chat("## Checklist\n1. Is it right?")); 2]);
    let o = run(&create_args(&q, &url, "stand-in", &dir.path().join("local.jsonl"), &["--api-key-env", "RJ_TEST_KEY"]));
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("plain http"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Without `--endpoint` the local judge writes the checklists on this machine (SmolLM2, the test
/// judge): one line per query, numbered questions parsed as a strong model's are, each item once,
/// marked as written locally; a second run resumes with nothing left to do; a key is refused.
#[test]
fn a_local_judge_writes_checklists_on_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let q = queries(dir.path());
    let out = dir.path().join("checklists.jsonl");
    let model = common::model_path();
    let args: Vec<String> = ["checklist", "create", "--queries", q.to_str().unwrap(), "--model", model.to_str().unwrap(), "--out"]
        .iter()
        .map(|s| s.to_string())
        .chain([out.to_str().unwrap().to_string(), "--threads".into(), "2".into()])
        .collect();
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|l| l["session_id"].as_str().unwrap()).collect::<Vec<_>>(), ["a", "b"]);
    for l in &lines {
        let items: Vec<&str> = l["checklist"].as_array().unwrap().iter().map(|i| i.as_str().unwrap()).collect();
        assert!(!items.is_empty() && items.iter().all(|i| !i.trim().is_empty()), "{l}");
        let unique: std::collections::HashSet<&&str> = items.iter().collect();
        assert_eq!(unique.len(), items.len(), "each item once: {l}");
        assert_eq!(l["meta"]["device"], "local");
        assert_eq!(l["meta"]["generator"], model.to_str().unwrap());
        assert!(l["meta"].get("endpoint").is_none());
    }
    // Resumed: nothing left, the file unchanged.
    let again = run(&args);
    assert!(again.status.success() && String::from_utf8_lossy(&again.stderr).contains("2 already have checklists, 0 to create"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    // Another policy does not add to a file written under this one.
    let mut other = args.clone();
    other.extend(["--policy".into(), "ticking".into()]);
    let o = run(&other);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("written with the prompt `rocketeval-create-v1`") && err.contains("`seed002-ticking-v1`"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    // A key is for an endpoint.
    let mut keyed = args.clone();
    keyed.extend(["--api-key-env".into(), "RJ_TEST_KEY".into()]);
    let o = run(&keyed);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("a local judge (no --endpoint) needs no key"));
}
