//! Malformed and inconsistent input files through the real `rocketjudge` binary: every one is an
//! error that names the file, the line and the field, with an exit code in 1..100 (3: bad input),
//! never a panic (101) or a signal. Every file is generated here from a small valid set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rocketjudge_core::formats::jsonl::MAX_LINE_BYTES;
use rocketjudge_engine::gguf::{Value, Writer};
use rocketjudge_engine::quant::GgmlType;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge")).args(args).output().expect("run rocketjudge")
}

const Q1: &str =
    r#"{"session_id":"q1","conversation_input":[{"role":"user","content":"Say hi."}],"checklist":["Does it greet?","Is it short?"]}"#;
const Q2: &str = r#"{"session_id":"q2","conversation_input":[{"role":"user","content":"Count to 3."}],"checklist":["Does it count?","Does it stop at 3?"]}"#;
const C1: &str = r#"{"session_id":"q1","checklist":["Does it greet?","Is it short?"]}"#;
const C2: &str = r#"{"session_id":"q2","checklist":["Does it count?","Does it stop at 3?"]}"#;
const R1: &str = r#"{"session_id":"q1","chat_history":["Say hi."],"output":["Hi!"],"generator":"m"}"#;
const R2: &str = r#"{"session_id":"q2","chat_history":["Count to 3."],"output":"1, 2, 3","generator":"m"}"#;
const J1: &str =
    r#"{"session_id":"q1","model_test":"m","judge":"t","norm_probability":[0.75,0.25],"judgment":["Yes (75.0)%","No (25.0)%"]}"#;
const J2: &str = r#"{"session_id":"q2","model_test":"m","judge":"t","norm_probability":[0.5,null],"judgment":["Unsure","Unsure"]}"#;
const S1: &str = r#"{"session_id":"q1","model_test":"m","score":7.5}"#;
const S2: &str = r#"{"session_id":"q2","model_test":"m","score":3}"#;

/// Which input a case breaks; it decides the file and the commands that read it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Input {
    /// `grade --queries`
    Queries,
    /// `grade --checklists`
    Checklists,
    /// `grade --responses` (a folder)
    Responses,
    /// `rank --judgments` and `score --judgments` (a folder)
    Judgments,
    /// `rank --scores` (a folder)
    Scores,
}

/// A folder with a valid set of every input; one file is then replaced by a case.
struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["r", "j", "s"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let w = |p: &str, a: &str, b: &str| std::fs::write(d.join(p), format!("{a}\n{b}\n")).unwrap();
        w("q.jsonl", Q1, Q2);
        w("c.jsonl", C1, C2);
        w("r/m.jsonl", R1, R2);
        w("j/m.jsonl", J1, J2);
        w("j/n.jsonl", &J1.replace("\"m\"", "\"n\""), &J2.replace("\"m\"", "\"n\""));
        w("s/m.jsonl", S1, S2);
        w("s/n.jsonl", &S1.replace("\"m\"", "\"n\""), &S2.replace("\"m\"", "\"n\""));
        Inputs { dir }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn s(&self, rel: &str) -> String {
        self.p(rel).display().to_string()
    }
    /// The file a case replaces, as the binary names it in messages.
    fn target(&self, input: Input) -> PathBuf {
        self.p(match input {
            Input::Queries => "q.jsonl",
            Input::Checklists => "c.jsonl",
            Input::Responses => "r/m.jsonl",
            Input::Judgments => "j/m.jsonl",
            Input::Scores => "s/m.jsonl",
        })
    }
    /// The commands that read `input`. `grade` reads every input before it looks for the judge, so a
    /// model path that does not exist is never reached when an input is bad.
    fn commands(&self, input: Input) -> Vec<Vec<String>> {
        let grade = |extra: &[String]| {
            let mut a: Vec<String> = ["grade", "--model", &self.s("no-such-model.gguf"), "--queries", &self.s("q.jsonl")]
                .iter()
                .map(|s| s.to_string())
                .collect();
            a.extend(extra.iter().cloned());
            a.extend(["--responses".into(), self.s("r"), "--out".into(), self.s("out")]);
            a
        };
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match input {
            Input::Queries | Input::Responses => vec![grade(&[])],
            Input::Checklists => vec![grade(&["--checklists".into(), self.s("c.jsonl")])],
            Input::Judgments => vec![
                v(&["rank", "--judgments", &self.s("j"), "--bootstrap", "0"]),
                v(&["score", "--judgments", &self.s("j"), "--out", &self.s("scores")]),
            ],
            Input::Scores => vec![v(&["rank", "--scores", &self.s("s"), "--bootstrap", "0"])],
        }
    }
}

/// One malformed file: which input, its bytes, and what the error must say.
struct Case {
    name: &'static str,
    input: Input,
    body: Vec<u8>,
    /// The 1-based line the error must name.
    line: usize,
    /// The field the error must name (`None`: the line is not a JSON record at all, so there is no
    /// field; the message says what is wrong with the line instead).
    field: Option<&'static str>,
    /// A phrase of the message.
    says: &'static str,
}

/// A file whose line `line` is `bad`, after valid line 1 and blank lines, and followed by `after`.
fn at_line(first: &str, line: usize, bad: &[u8], after: &str) -> Vec<u8> {
    assert!(line >= 2);
    let mut b = format!("{first}\n").into_bytes();
    for _ in 2..line {
        b.extend_from_slice(b"   \n");
    }
    b.extend_from_slice(bad);
    b.push(b'\n');
    b.extend_from_slice(after.as_bytes());
    b.push(b'\n');
    b
}

/// A JSON record whose one line is `len` bytes long (a string field padded).
fn line_of_len(len: usize) -> Vec<u8> {
    let head = r#"{"session_id":"q3","conversation_input":[{"role":"user","content":""#;
    let tail = r#""}]}"#;
    let mut b = head.as_bytes().to_vec();
    b.resize(len - tail.len(), b'a');
    b.extend_from_slice(tail.as_bytes());
    assert_eq!(b.len(), len);
    b
}

fn cases() -> Vec<Case> {
    use Input::*;
    let case = |name, input, body, line, field, says| Case { name, input, body, line, field, says };
    let q = |line: usize, bad: &str| at_line(Q1, line, bad.as_bytes(), Q2);
    let c = |line: usize, bad: &str| at_line(C1, line, bad.as_bytes(), C2);
    let r = |line: usize, bad: &str| at_line(R1, line, bad.as_bytes(), R2);
    let j = |line: usize, bad: &str| at_line(J1, line, bad.as_bytes(), J2);
    let s = |line: usize, bad: &str| at_line(S1, line, bad.as_bytes(), S2);
    vec![
        // ---- queries ----
        case("query: bad JSON", Queries, q(2, r#"{"session_id":"q3","conversation_input":["#), 2, None, "invalid JSON"),
        case("query: trailing garbage", Queries, q(3, &format!("{} ,", Q1.replace("q1", "q3"))), 3, None, "invalid JSON"),
        case("query: not an object", Queries, q(2, r#""just a string""#), 2, None, "expected struct Query"),
        case("query: missing session_id", Queries, q(2, r#"{"conversation_input":[]}"#), 2, Some("session_id"), "missing field"),
        case(
            "query: session_id is a boolean",
            Queries,
            q(2, r#"{"session_id":true,"conversation_input":[{"role":"user","content":"x"}]}"#),
            2,
            Some("session_id"),
            "expected a string or integer id",
        ),
        case(
            "query: conversation_input is a string",
            Queries,
            q(4, r#"{"session_id":"q3","conversation_input":"hello"}"#),
            4,
            Some("conversation_input"),
            "expected a sequence",
        ),
        case(
            "query: unknown role",
            Queries,
            q(2, r#"{"session_id":"q3","conversation_input":[{"role":"robot","content":"x"}]}"#),
            2,
            Some("conversation_input[0].role"),
            "unknown variant `robot`",
        ),
        case(
            "query: message without content",
            Queries,
            q(2, r#"{"session_id":"q3","conversation_input":[{"role":"user"}]}"#),
            2,
            Some("conversation_input[0]"),
            "missing field `content`",
        ),
        case(
            "query: checklist item is a number",
            Queries,
            q(2, r#"{"session_id":"q3","conversation_input":[{"role":"user","content":"x"}],"checklist":["ok?",7]}"#),
            2,
            Some("checklist[1]"),
            "expected a string",
        ),
        case(
            "query: invalid UTF-8 in a string",
            Queries,
            at_line(Q1, 2, b"{\"session_id\":\"q3\",\"conversation_input\":[{\"role\":\"user\",\"content\":\"caf\xE9\"}]}", Q2),
            2,
            None,
            "invalid UTF-8 at byte 70 of the line",
        ),
        case(
            "query: over-long line",
            Queries,
            at_line(Q1, 2, &line_of_len(MAX_LINE_BYTES + 1), Q2),
            2,
            None,
            "bytes long; the limit is 16777216 bytes",
        ),
        case(
            "query: empty conversation",
            Queries,
            q(2, r#"{"session_id":"q3","conversation_input":[],"checklist":["x?"]}"#),
            2,
            Some("conversation_input"),
            "is empty",
        ),
        case(
            "query: last message is not the user's",
            Queries,
            q(2, r#"{"session_id":"q3","conversation_input":[{"role":"assistant","content":"x"}],"checklist":["x?"]}"#),
            2,
            Some("conversation_input"),
            "must be the user's",
        ),
        case("query: duplicate session_id", Queries, q(3, Q1), 3, Some("session_id"), "duplicate session_id (first on line 1)"),
        // ---- checklists ----
        case(
            "checklist: checklist is a string",
            Checklists,
            c(2, r#"{"session_id":"q2","checklist":"x?"}"#),
            2,
            Some("checklist"),
            "expected a sequence",
        ),
        case("checklist: missing checklist", Checklists, c(2, r#"{"session_id":"q2"}"#), 2, Some("checklist"), "missing field"),
        case("checklist: bad JSON", Checklists, c(2, r#"{"session_id":"q2","checklist":["x?"]"#), 2, None, "invalid JSON"),
        case(
            "checklist: session without a query",
            Checklists,
            c(2, r#"{"session_id":"zz","checklist":["x?"]}"#),
            2,
            Some("session `zz`"),
            "checklist for a session that has no query",
        ),
        case("checklist: duplicate", Checklists, c(3, C1), 3, Some("session `q1`"), "duplicate checklist (first on line 1)"),
        // ---- responses ----
        case(
            "response: output is a number",
            Responses,
            r(2, r#"{"session_id":"q2","output":42}"#),
            2,
            Some("output"),
            "expected a string or a list",
        ),
        case("response: output is empty", Responses, r(2, r#"{"session_id":"q2","output":[]}"#), 2, Some("output"), "at least one output"),
        case("response: missing output", Responses, r(2, r#"{"session_id":"q2"}"#), 2, Some("output"), "missing field"),
        case(
            "response: chat_history of numbers",
            Responses,
            r(2, r#"{"session_id":"q2","chat_history":[1,2],"output":"x"}"#),
            2,
            Some("chat_history"),
            "expected a list of strings or of {role, content} messages",
        ),
        case(
            "response: generator is a list",
            Responses,
            r(2, r#"{"session_id":"q2","output":"x","generator":["m"]}"#),
            2,
            Some("generator"),
            "expected a string",
        ),
        case(
            "response: invalid UTF-8",
            Responses,
            at_line(R1, 3, b"{\"session_id\":\"q2\",\"output\":\"\xFF\xFE\"}", R2),
            3,
            None,
            "invalid UTF-8",
        ),
        case(
            "response: session without a query",
            Responses,
            r(2, r#"{"session_id":"nope","output":"x","generator":"m"}"#),
            2,
            Some("session `nope`"),
            "response to a session that has no query",
        ),
        case("response: duplicate", Responses, r(2, R1), 2, Some("session `q1`"), "duplicate response of `m` (first on line 1)"),
        // ---- judgments (rank and score) ----
        case(
            "judgment: probability above 1",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":[0.5,1.5]}"#),
            2,
            Some("norm_probability[1]"),
            "expected a probability in [0, 1] or null, found 1.5",
        ),
        case(
            "judgment: probability below 0",
            Judgments,
            j(3, r#"{"session_id":"q2","model_test":"m","norm_probability":[-0.25,0.5]}"#),
            3,
            Some("norm_probability[0]"),
            "found -0.25",
        ),
        case(
            "judgment: probability out of f64 range",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":[1e400]}"#),
            2,
            Some("norm_probability[0]"),
            "number out of range",
        ),
        case(
            "judgment: probability as a string",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":["0.5"]}"#),
            2,
            Some("norm_probability[0]"),
            "expected f64",
        ),
        case(
            "judgment: norm_probability is not a list",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":0.5}"#),
            2,
            Some("norm_probability"),
            "expected a sequence",
        ),
        case(
            "judgment: lists of different lengths",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":[0.5,0.25],"judgment":["Unsure","No (25.0)%","Yes (90.0)%"]}"#),
            2,
            Some("judgment"),
            "has 3 entries but norm_probability has 2; they must be the same length",
        ),
        case(
            "judgment: missing model_test",
            Judgments,
            j(2, r#"{"session_id":"q2","norm_probability":[0.5]}"#),
            2,
            Some("model_test"),
            "missing field",
        ),
        case(
            "judgment: empty session_id",
            Judgments,
            j(2, r#"{"session_id":"","model_test":"m","norm_probability":[0.5]}"#),
            2,
            Some("session_id"),
            "must not be empty",
        ),
        case(
            "judgment: tokens of the wrong shape",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":[0.5],"tokens":{"yes":"Yes","no":[1]}}"#),
            2,
            Some("tokens.yes"),
            "expected a sequence",
        ),
        case(
            "judgment: bad JSON",
            Judgments,
            j(2, r#"{"session_id":"q2","model_test":"m","norm_probability":[0.5,]}"#),
            2,
            None,
            "invalid JSON",
        ),
        case(
            "judgment: invalid UTF-8",
            Judgments,
            at_line(J1, 2, b"{\"session_id\":\"q\xC3\x28\",\"model_test\":\"m\",\"norm_probability\":[0.5]}", J2),
            2,
            None,
            "invalid UTF-8 at byte 16 of the line",
        ),
        case(
            "judgment: over-long line",
            Judgments,
            at_line(J1, 3, &line_of_len(MAX_LINE_BYTES + 100), J2),
            3,
            None,
            "is 16777316 bytes long; the limit is 16777216 bytes",
        ),
        // ---- scores (rank --scores) ----
        case(
            "score: score is a string",
            Scores,
            s(2, r#"{"session_id":"q2","model_test":"m","score":"high"}"#),
            2,
            Some("score"),
            "expected f64",
        ),
        case("score: missing score", Scores, s(2, r#"{"session_id":"q2","model_test":"m"}"#), 2, Some("score"), "missing field"),
        case(
            "score: out of range",
            Scores,
            s(2, r#"{"session_id":"q2","model_test":"m","score":-1e999}"#),
            2,
            Some("score"),
            "number out of range",
        ),
        case("score: bad JSON", Scores, s(2, r#"{"session_id":"q2","model_test":"m","score":}"#), 2, None, "invalid JSON"),
    ]
}

/// Check one failed run: exit code, file, line, field, message. Returns the exit code, or what is wrong.
fn check(what: &str, o: &Output, file: &Path, line: usize, field: Option<&str>, says: &str) -> Result<i32, String> {
    let err = String::from_utf8_lossy(&o.stderr);
    let Some(code) = o.status.code() else { return Err(format!("{what}: killed by a signal: {err}")) };
    let at = format!("{}:{line}:", file.display());
    let last = err.lines().last().unwrap_or("");
    let problem = if !(1..100).contains(&code) {
        format!("exit code {code} (want 1..100)")
    } else if err.contains("panicked") {
        "a panic".to_string()
    } else if !err.contains(&at) {
        format!("the message does not name `{at}`")
    } else if field.is_some_and(|f| !err.contains(f)) {
        format!("the message does not name the field `{}`", field.unwrap())
    } else if !err.contains(says) {
        format!("the message does not say `{says}`")
    } else if !(last.starts_with("rocketjudge: error: ") && last.contains(&at)) {
        // The one-line summary (the last line) names the file and line too.
        "the last line is not a one-line summary naming file and line".to_string()
    } else {
        return Ok(code);
    };
    Err(format!("{what}: {problem}: {err}"))
}

#[test]
fn every_malformed_record_names_file_line_and_field() {
    let cases = cases();
    let mut runs = 0;
    let mut failures = Vec::new();
    for c in &cases {
        let inputs = Inputs::new();
        let file = inputs.target(c.input);
        std::fs::write(&file, &c.body).unwrap();
        for args in inputs.commands(c.input) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run(&args);
            let what = format!("{} ({})", c.name, args[0]);
            match check(&what, &o, &file, c.line, c.field, c.says) {
                Ok(3) => {}
                Ok(code) => failures.push(format!("{what}: exit code {code}, but bad input exits with 3")),
                Err(e) => failures.push(e),
            }
            runs += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{} malformed JSONL files, {runs} runs of rocketjudge: each named file, line and field, exit code 3", cases.len());
}

/// Nothing to grade is refused, not run: a queries file, or every response file, with no records
/// (blank lines only) stops `grade`, `direct` and `reason` (and an empty queries file `checklist
/// create`) with exit code 3 and a message naming the file, before a judge is looked for; judgments
/// files with none stop `score`.
#[test]
fn inputs_without_records_are_refused_naming_the_file() {
    let mut failures = Vec::new();
    for (input, says) in [(Input::Queries, "no queries"), (Input::Responses, "no responses")] {
        let inputs = Inputs::new();
        let file = inputs.target(input);
        std::fs::write(&file, "\n\n").unwrap();
        let commands: &[&str] =
            if input == Input::Queries { &["grade", "direct", "reason", "checklist"] } else { &["grade", "direct", "reason"] };
        for &command in commands {
            // `grade`'s arguments under the command's name; `checklist create` reads queries only.
            let args = if command == "checklist" {
                let (model, queries, out) = (inputs.s("no-such-model.gguf"), inputs.s("q.jsonl"), inputs.s("c-out.jsonl"));
                ["checklist", "create", "--model", &model, "--queries", &queries, "--out", &out].map(String::from).to_vec()
            } else {
                let mut a = inputs.commands(input).remove(0);
                a[0] = command.to_string();
                a
            };
            let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let err = String::from_utf8_lossy(&o.stderr);
            let named = format!("{}: {says}", file.display());
            if o.status.code() != Some(3) || !err.contains(&named) {
                failures.push(format!("{command}, {says}: exit code {:?}, want 3 and `{named}`: {err}", o.status.code()));
            }
        }
    }
    // `score` on judgments that hold none (it wrote "scores of 0 models" before).
    let inputs = Inputs::new();
    let file = inputs.target(Input::Judgments);
    std::fs::write(&file, "\n").unwrap();
    std::fs::write(inputs.p("j/n.jsonl"), "").unwrap();
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &inputs.s("scores")]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(3)
        || !err.contains(&format!("{}, {}: no judgments", file.display(), inputs.s("j/n.jsonl")))
        || inputs.p("scores").exists()
    {
        failures.push(format!("score, no judgments: exit code {:?}, want 3, both files named and nothing written: {err}", o.status.code()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The line limit is exact: a record of exactly `MAX_LINE_BYTES` is read, one byte more is refused.
#[test]
fn the_line_limit_is_exact() {
    let inputs = Inputs::new();
    let pad = |len: usize| {
        let head = r#"{"session_id":"q3","model_test":"m","judge":""#;
        let tail = r#"","norm_probability":[0.5]}"#;
        let mut b = head.as_bytes().to_vec();
        b.resize(len - tail.len(), b'x');
        b.extend_from_slice(tail.as_bytes());
        b
    };
    let file = inputs.target(Input::Judgments);
    std::fs::write(&file, at_line(J1, 2, &pad(MAX_LINE_BYTES), J2)).unwrap();
    let out = inputs.s("scores");
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &out]);
    assert!(o.status.success(), "a line of exactly {MAX_LINE_BYTES} bytes is accepted: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(&file, at_line(J1, 2, &pad(MAX_LINE_BYTES + 1), J2)).unwrap();
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &out]);
    assert_eq!(check("line limit + 1", &o, &file, 2, None, "is 16777217 bytes long; the limit is 16777216 bytes"), Ok(3));
}

/// Hostile model files through `grade`: refused with a message about the GGUF file and an exit
/// code below 100, before any input is graded.
#[test]
fn hostile_model_files_are_refused_by_grade() {
    let inputs = Inputs::new();
    let mut w = Writer::default();
    w.kv("general.architecture", Value::String("llama".into())).tensor("w", &[32, 2], GgmlType::F32, vec![0u8; 256]);
    let good = w.to_bytes();
    let mut huge_count = good.clone();
    huge_count[8..16].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let models: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not a GGUF file", Q1.as_bytes().to_vec(), "wrong magic"),
        ("truncated", good[..good.len() - 64].to_vec(), "truncated"),
        ("2^50 tensors", huge_count, "claims 1125899906842624 tensors"),
        ("empty", Vec::new(), "truncated"),
        ("valid header, not a judge", good, "tokenizer"),
    ];
    for (what, bytes, says) in &models {
        let m = inputs.p("model.gguf");
        std::fs::write(&m, bytes).unwrap();
        let o = run(&[
            "grade",
            "--model",
            m.to_str().unwrap(),
            "--queries",
            &inputs.s("q.jsonl"),
            "--responses",
            &inputs.s("r"),
            "--out",
            &inputs.s("out"),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        let code = o.status.code().unwrap_or_else(|| panic!("{what}: killed by a signal: {err}"));
        assert!((1..100).contains(&code), "{what}: exit code {code}: {err}");
        assert!(err.contains(&m.display().to_string()) && err.contains(says), "{what}: {err}");
        assert!(!inputs.p("out/m.jsonl").exists(), "{what}: nothing is graded");
    }
}

/// Inconsistent records, each fine on its own: a judgment with nothing graded, a session graded on
/// checklists of different lengths by different models, a response judged or scored twice, and bad
/// elements of pretty-printed JSON-array score files. Each names file, line and field, exit code 3.
#[test]
fn inconsistent_records_across_lines_name_file_line_and_field() {
    let mut failures = Vec::new();
    let mut expect =
        |what: &str, o: &Output, file: &Path, line: usize, field: &str, says: &str| match check(what, o, file, line, Some(field), says) {
            Ok(3) => {}
            Ok(code) => failures.push(format!("{what}: exit code {code}, but bad input exits with 3")),
            Err(e) => failures.push(e),
        };
    // A judgment with no probability at all.
    let inputs = Inputs::new();
    let file = inputs.target(Input::Judgments);
    std::fs::write(&file, at_line(J1, 2, br#"{"session_id":"q2","model_test":"m","norm_probability":[]}"#, "")).unwrap();
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &inputs.s("scores")]);
    expect("score: empty norm_probability", &o, &file, 2, "norm_probability", "no checklist item");
    let o = run(&["rank", "--judgments", &inputs.s("j"), "--bootstrap", "0"]);
    expect("rank: empty norm_probability", &o, &file, 2, "norm_probability", "no checklist item");
    // The same session graded on checklists of different lengths by two models: in supervised score
    // the training model's checklist is the session's, so the scored model's judgment is the error.
    let inputs = Inputs::new();
    let file = inputs.target(Input::Judgments);
    std::fs::write(&file, format!("{J1}\n{}\n", r#"{"session_id":"q2","model_test":"m","norm_probability":[0.5]}"#)).unwrap();
    let labels = inputs.p("labels.jsonl");
    std::fs::write(
        &labels,
        format!("{}\n{}\n", r#"{"session_id":"q1","model_test":"n","score":7}"#, r#"{"session_id":"q2","model_test":"n","score":4}"#),
    )
    .unwrap();
    let o = run(&[
        "score",
        "--judgments",
        &inputs.s("j"),
        "--labels",
        labels.to_str().unwrap(),
        "--train-models",
        "n",
        "--out",
        &inputs.s("scores"),
    ]);
    expect("score: lists of different lengths across models", &o, &file, 2, "norm_probability", "1 item here but 2 items");
    // Models compared on one query must have been graded on the same checklist: `rank` and
    // unsupervised `score` refuse too (the length most models have is the session's).
    std::fs::write(inputs.p("j/o.jsonl"), format!("{}\n{}\n", J1.replace("\"m\"", "\"o\""), J2.replace("\"m\"", "\"o\""))).unwrap();
    let o = run(&["rank", "--judgments", &inputs.s("j"), "--bootstrap", "0"]);
    expect("rank: lists of different lengths across models", &o, &file, 2, "norm_probability", "same checklist");
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &inputs.s("scores")]);
    expect("score: lists of different lengths across models (unsupervised)", &o, &file, 2, "norm_probability", "same checklist");
    // The same response judged twice, in one file and in two.
    let inputs = Inputs::new();
    let file = inputs.target(Input::Judgments);
    std::fs::write(&file, at_line(J1, 2, J1.as_bytes(), J2)).unwrap();
    let o = run(&["rank", "--judgments", &inputs.s("j"), "--bootstrap", "0"]);
    expect("rank: duplicate judgment", &o, &file, 2, "session_id", "a second judgment of `m` on this session (the first: line 1)");
    let o = run(&["score", "--judgments", &inputs.s("j"), "--out", &inputs.s("scores")]);
    expect("score: duplicate judgment", &o, &file, 2, "session_id", "a second judgment of `m`");
    let inputs = Inputs::new();
    let file = inputs.p("j/z.jsonl");
    std::fs::write(&file, format!("{J2}\n")).unwrap();
    let o = run(&["rank", "--judgments", &inputs.s("j"), "--bootstrap", "0"]);
    expect("rank: duplicate judgment in another file", &o, &file, 1, "session_id", "m.jsonl, line 2)");
    // The same response scored twice (rank --scores), in JSONL and in a pretty-printed JSON array.
    let inputs = Inputs::new();
    let file = inputs.p("s/z.json");
    let z = |s: &str| s.replace("\"m\"", "\"z\"");
    std::fs::write(&file, format!("[\n  {},\n\n  {}\n]\n", z(S1), z(S2))).unwrap();
    let o = run(&["rank", "--scores", &inputs.s("s"), "--bootstrap", "0"]);
    assert!(o.status.success(), "a JSON-array score file: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(&file, format!("[\n  {},\n\n  {S2}\n]\n", z(S1))).unwrap();
    let o = run(&["rank", "--scores", &inputs.s("s"), "--bootstrap", "0"]);
    expect("rank: duplicate score in a JSON array", &o, &file, 4, "session_id", "a second score of `m`");
    // A bad element of a JSON array: the line of the element, the field with the element's index.
    std::fs::write(
        &file,
        format!("[\n  {},\n  {{\"session_id\": \"q2\",\n   \"model_test\": \"z\",\n   \"score\": \"high\"}}\n]\n", z(S1)),
    )
    .unwrap();
    let o = run(&["rank", "--scores", &inputs.s("s"), "--bootstrap", "0"]);
    expect("rank: score is a string in a JSON array", &o, &file, 5, "[1].score", "expected f64");
    std::fs::write(&file, format!("[\n  {},\n  {{\"session_id\": \"q2\",\n   \"model_test\": \"z\"}}\n]\n", z(S1))).unwrap();
    let o = run(&["rank", "--scores", &inputs.s("s"), "--bootstrap", "0"]);
    expect("rank: missing score in a JSON array", &o, &file, 4, "[1]", "missing field `score`");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Run `args` and expect a refusal: exit code `code`, a message holding each of `says`, never a panic.
fn refused(what: &str, args: &[&str], code: i32, says: &[&str], failures: &mut Vec<String>) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() != Some(code) || !says.iter().all(|s| err.contains(s)) {
        failures.push(format!("{what}: exit code {:?}, want {code} and {says:?}: {err}", o.status.code()));
    }
}

/// What was accepted in silence is refused with file, line and field (exit code 3), or read by a
/// rule that does not depend on a trailing newline: a reference ranking naming a model twice or an
/// interval upside down, an empty --checklists or --rubrics file, a queries file listing a session
/// twice for `checklist create`, a stray `summary.json` in a judgments folder (with and without its
/// last newline), an empty battles file, and `site --out` inside the folders a site build copies.
#[test]
fn what_was_accepted_in_silence_is_refused() {
    let inputs = Inputs::new();
    let s = |rel: &str| inputs.s(rel);
    let mut failures = Vec::new();
    let w = |rel: &str, text: &str| std::fs::write(inputs.p(rel), text).unwrap();
    w("ours.json", r#"[{"model":"a","score":1100},{"model":"b","score":1000},{"model":"c","score":900}]"#);
    w("twice.json", "[\n{\"model\":\"a\",\"score\":1100},\n{\"model\":\"b\",\"score\":1000},\n{\"model\":\"a\",\"score\":900}\n]\n");
    w("upside.json", "[\n{\"model\":\"a\",\"score\":1100,\"lower\":1150,\"upper\":1050},\n{\"model\":\"b\",\"score\":1000}\n]\n");
    let twice = format!("{}:4: field `[2].name`", s("twice.json"));
    refused(
        "a model listed twice",
        &["meta", "--ranking", &s("ours.json"), "--reference", &s("twice.json")],
        3,
        &[&twice, "listed twice (first on line 2)"],
        &mut failures,
    );
    let upside = format!("{}:2: field `[0].lower`", s("upside.json"));
    refused(
        "lower > upper",
        &["meta", "--ranking", &s("ours.json"), "--reference", &s("upside.json")],
        3,
        &[&upside, "above its upper bound"],
        &mut failures,
    );

    w("empty.jsonl", "");
    let grade = |extra: &[String]| {
        let mut a: Vec<String> = ["grade", "--model", &s("no-such-model.gguf"), "--queries", &s("q.jsonl")].map(String::from).to_vec();
        a.extend(extra.iter().cloned());
        a.extend(["--responses".into(), s("r"), "--out".into(), s("out")]);
        a
    };
    let args = grade(&["--checklists".into(), s("empty.jsonl")]);
    let empty = format!("{}: no checklists: the file is empty", s("empty.jsonl"));
    refused("an empty --checklists", &args.iter().map(String::as_str).collect::<Vec<_>>(), 3, &[&empty], &mut failures);
    let mut args = grade(&["--rubrics".into(), s("empty.jsonl")]);
    args[0] = "direct".into();
    let empty = format!("{}: no rubrics: the file is empty", s("empty.jsonl"));
    refused("an empty --rubrics", &args.iter().map(String::as_str).collect::<Vec<_>>(), 3, &[&empty], &mut failures);
    let empty = format!("{}: no battles: the file is empty", s("empty.jsonl"));
    refused("an empty battles file", &["rank", "--battles", &s("empty.jsonl")], 3, &[&empty], &mut failures);

    w("dup-q.jsonl", &format!("{Q1}\n{Q2}\n{Q1}\n"));
    let dup = format!("{}:3: field `session_id`", s("dup-q.jsonl"));
    refused(
        "checklist create with a session twice",
        &["checklist", "create", "--model", &s("no-such-model.gguf"), "--queries", &s("dup-q.jsonl"), "--out", &s("c-out.jsonl")],
        3,
        &[&dup, "listed twice (first on line 1)"],
        &mut failures,
    );
    assert!(!inputs.p("c-out.jsonl").exists(), "nothing was written");

    // A stray summary.json: refused the same way whether or not it ends in a newline.
    for ending in ["", "\n"] {
        w("j/summary.json", &format!("{{\"models\": 2, \"note\": \"written by hand\"}}{ending}"));
        let line = format!("{}:1", s("j/summary.json"));
        refused(
            &format!("summary.json ending {ending:?}"),
            &["rank", "--judgments", &s("j"), "--bootstrap", "0"],
            3,
            &[&line],
            &mut failures,
        );
    }
    std::fs::remove_file(inputs.p("j/summary.json")).unwrap();
    // A judgments file torn mid-line (a run still writing) is still read up to that line.
    let torn = format!("{J1}\n{}", &J2[..J2.len() / 2]);
    w("j/m.jsonl", &torn);
    let o = run(&["rank", "--judgments", &s("j"), "--bootstrap", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    if !(o.status.success() && err.contains("leaving out an unfinished last line")) {
        failures.push(format!("a torn last line: exit code {:?}: {err}", o.status.code()));
    }

    // `site --out` inside a folder the build copies (a fake built app: the check comes first).
    let app = inputs.p("app");
    for d in ["pkg", "web/vendor"] {
        std::fs::create_dir_all(app.join(d)).unwrap();
    }
    std::fs::write(app.join("pkg/rocketjudge_wasm_bg.wasm"), b"").unwrap();
    let inside = app.join("web/site");
    refused(
        "site --out inside web/",
        &["site", "--app", &app.display().to_string(), "--out", &inside.display().to_string(), "--models", "smollm2-135m"],
        1,
        &["is inside the app's web"],
        &mut failures,
    );
    assert!(!inside.exists(), "nothing was made");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Cells that no table can show (a model name of 70,000 characters) are shortened on the terminal
/// and kept whole in JSON; a --model-origin that is not an origin is refused before it reaches a header.
/// The words and exit codes the README promises: a CSV where JSON Lines are expected is named as
/// CSV, and well-formed inputs that cannot be used together (two rankings with too few models in
/// common) are bad input, exit code 3 like a malformed file.
#[test]
fn csv_is_named_and_unusable_inputs_exit_3() {
    let inputs = Inputs::new();
    let s = |rel: &str| inputs.s(rel);
    let w = |rel: &str, text: &str| std::fs::write(inputs.p(rel), text).unwrap();
    let mut failures = Vec::new();
    w("scores.csv", "session_id,model_test,score\nq1,a,7\n");
    let csv = format!("{}:1: this is CSV, which is not accepted here", s("scores.csv"));
    refused("a CSV of scores", &["rank", "--scores", &s("scores.csv")], 3, &[&csv], &mut failures);
    refused(
        "a CSV of queries",
        &["checklist", "prompt", "--queries", &s("scores.csv"), "--session", "q1"],
        3,
        &["this is CSV"],
        &mut failures,
    );
    w("two.json", r#"[{"model":"a","score":1100},{"model":"b","score":1000}]"#);
    refused(
        "rankings with two models in common",
        &["meta", "--ranking", &s("two.json"), "--reference", &s("two.json")],
        3,
        &["at least 3 are needed"],
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn long_cells_and_odd_origins_do_not_panic() {
    let inputs = Inputs::new();
    let long = "m".repeat(70_000);
    let battles = format!(
        "{{\"model_a\":\"{long}\",\"model_b\":\"b\",\"winner\":\"model_a\"}}\n{{\"model_a\":\"{long}\",\"model_b\":\"b\",\"winner\":\"model_b\"}}\n"
    );
    std::fs::write(inputs.p("battles.jsonl"), battles).unwrap();
    let o = run(&["rank", "--battles", &inputs.s("battles.jsonl"), "--bootstrap", "0"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "rank --battles with a long name: {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    assert!(out.lines().all(|l| l.chars().count() < 200) && out.contains("mmm…"), "{out}");
    let o = run(&["rank", "--battles", &inputs.s("battles.jsonl"), "--bootstrap", "0", "--format", "json"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains(&long), "the JSON keeps the whole name");
    std::fs::write(
        inputs.p("j/n.jsonl"),
        format!("{}\n{}\n", J1.replace("\"m\"", &format!("\"{long}\"")), J2.replace("\"m\"", &format!("\"{long}\""))),
    )
    .unwrap();
    let o = run(&["rank", "--judgments", &inputs.s("j"), "--bootstrap", "0"]);
    assert!(o.status.success(), "rank --judgments with a long model_test: {}", String::from_utf8_lossy(&o.stderr));
    for origin in ["https://a.example\nX: 1", "https://a.example; script-src *", "https://a.example/path"] {
        let o = run(&["serve", "--port", "0", "--model-origin", origin]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(2) && err.contains("an origin such as https://huggingface.co"),
            "{origin:?}: {:?}: {err}",
            o.status.code()
        );
    }
}
