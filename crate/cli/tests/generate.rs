//! `rocketjudge generate` end to end with the SmolLM2 test judge: streamed text and JSON agree, a stop
//! string cuts the text, and bad settings are refused with what was expected.

mod common;

use std::process::{Command, Output};

use serde_json::Value;

fn generate(extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(["generate", "--model"])
        .arg(common::model_path())
        .args(["--prompt", "Name three colours of the rainbow.", "--chat", "--threads", "2"])
        .args(extra)
        .output()
        .unwrap()
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn streamed_text_and_json_agree_and_a_stop_string_cuts() {
    let json: Value = serde_json::from_str(&ok(generate(&["--max-tokens", "16", "--format", "json"]))).unwrap();
    let tokens = json["tokens"].as_array().unwrap();
    assert!(!tokens.is_empty() && tokens.len() <= 16, "{json}");
    assert!(json["promptTokens"].as_u64().unwrap() > 5, "{json}");
    let text = json["text"].as_str().unwrap();
    assert!(!text.is_empty());
    // Greedy: the streamed text is the same text, and a newline ends it.
    assert_eq!(ok(generate(&["--max-tokens", "16"])), format!("{text}\n"));
    let word = text.split_whitespace().nth(1).expect("two words");
    let cut: Value = serde_json::from_str(&ok(generate(&["--max-tokens", "16", "--format", "json", "--stop", word]))).unwrap();
    assert_eq!(cut["stop"], "stop-string");
    assert_eq!(cut["text"].as_str().unwrap(), &text[..text.find(word).unwrap()]);
}

#[test]
fn bad_settings_are_refused_plainly() {
    for (args, says) in [
        (&["--temperature=-1"][..], "temperature must be a number ≥ 0"),
        (&["--top-p", "1.5"], "top-p must be in (0, 1]"),
        (&["--max-tokens", "0"], "max tokens must be at least 1"),
        (&["--format", "csv"], "--format table or json"),
        (&["--context", "8"], "leaves no room to generate"),
    ] {
        let o = generate(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
    }
}
