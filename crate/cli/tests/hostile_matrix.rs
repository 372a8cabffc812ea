//! The hostile-input matrix: every command that reads a user's file, given each kind of file an
//! attacker (or an accident) hands it — empty, binary, one 10 MB line, nesting 100,000 deep, a
//! record twice, every field of the wrong type, invalid UTF-8, a folder where a file goes and a
//! file where a folder goes. Each run must end with an exit code of 1–4 (never a panic, 101, or a
//! signal) and a message naming the file, within twice its input plus what the command costs on a
//! small valid input (its peak resident memory, measured by the kernel). A duplicate battle is
//! data, not an error: it is read; a label given twice to `calibrate` is warned about, naming the
//! file, and the later one counts.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

const Q: &str =
    r#"{"session_id":"q1","conversation_input":[{"role":"user","content":"Say hi."}],"checklist":["Does it greet?","Is it short?"]}"#;
const C: &str = r#"{"session_id":"q1","checklist":["Does it greet?","Is it short?"]}"#;
const R: &str = r#"{"session_id":"q1","chat_history":["Say hi."],"output":["Hi!"],"generator":"m"}"#;
const J: &str = r#"{"session_id":"q1","model_test":"m","judge":"t","norm_probability":[0.75,0.25],"judgment":["Yes","No"]}"#;
const JN: &str = r#"{"session_id":"q1","model_test":"n","judge":"t","norm_probability":[0.5,0.5],"judgment":["Yes","No"]}"#;
const S: &str = r#"{"session_id":"q1","model_test":"m","score":7.5}"#;
const B: &str = r#"{"model_a":"m","model_b":"n","winner":"model_a","question_id":"q1"}"#;
const K: &str = r#"[{"model":"m","score":1100},{"model":"n","score":1000},{"model":"o","score":900}]"#;
const U: &str = r#"{"session_id":"q1","rubric":"Helpfulness: does it help?"}"#;

/// The ten-megabyte line.
const BIG: usize = 10 << 20;

/// One test of this file at a time: a test's own allocations count in the peak of the commands
/// another one starts (see [`run_measured`]).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// This test process's resident memory in KiB.
fn own_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap()
}

/// A command's exit code, its stderr and its peak resident memory in KiB (from `wait4`). The kernel
/// counts in a child's peak the memory of this process at the moment it starts the child (the
/// child shares it until its exec), so the peak returned is never below this process's size then;
/// the bounds below allow for that, and a child that grows beyond it is measured as it is.
fn run_measured(args: &[String], dir: &Path) -> (Option<i32>, String, u64) {
    let err_path = dir.join(format!(".stderr-{:?}", std::thread::current().id()));
    #[allow(clippy::zombie_processes)] // waited for by wait4 below, which also gives its peak memory
    let child = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(args)
        .env("ROCKETJUDGE_CACHE", dir.join(".cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0i32;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; `status` and `usage` are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let code = if libc::WIFEXITED(status) { Some(libc::WEXITSTATUS(status)) } else { None };
    (code, std::fs::read_to_string(&err_path).unwrap_or_default(), usage.ru_maxrss as u64)
}

/// The most a run may peak at: what the same command costs on a small input (or this process's own
/// size, which the kernel counts in, if larger), plus twice the input, plus 16 MiB.
fn bound_kib(small: u64, input_bytes: u64) -> u64 {
    small.max(own_rss_kib()) + 2 * input_bytes / 1024 + 16 * 1024
}

/// A folder with a small valid file of every input; the case's file replaces one of them.
fn valid_set() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, text) in [
        ("q.jsonl", Q),
        ("c.jsonl", C),
        ("r.jsonl", R),
        ("j.jsonl", &format!("{J}\n{JN}")),
        ("s.jsonl", S),
        ("b.jsonl", B),
        ("k.json", K),
        ("u.jsonl", U),
        ("rubric.txt", "Helpfulness"),
    ] {
        std::fs::write(d.join(name), format!("{text}\n")).unwrap();
    }
    dir
}

/// One command that reads a file, the file it reads (`{}` in its arguments) and a valid record of it.
struct Reader {
    args: &'static str,
    record: &'static str,
}

const READERS: &[Reader] = &[
    Reader { args: "grade --model NO.gguf --queries {} --responses r.jsonl --out out", record: Q },
    Reader { args: "grade --model NO.gguf --queries q.jsonl --checklists {} --responses r.jsonl --out out", record: C },
    Reader { args: "grade --model NO.gguf --queries q.jsonl --responses {} --out out", record: R },
    Reader { args: "direct --model NO.gguf --queries q.jsonl --responses r.jsonl --rubrics {} --out out", record: U },
    Reader {
        args: "direct --model NO.gguf --queries q.jsonl --responses r.jsonl --instruction rubric --rubric-file {} --out out",
        record: "",
    },
    Reader { args: "reason --model NO.gguf --queries {} --responses r.jsonl --out out", record: Q },
    Reader { args: "checklist create --model NO.gguf --queries {} --out c-out.jsonl", record: Q },
    Reader { args: "checklist prompt --queries {} --session q1", record: Q },
    Reader { args: "score --judgments {} --out scores", record: J },
    Reader { args: "rank --judgments {} --bootstrap 0", record: J },
    Reader { args: "rank --scores {} --bootstrap 0", record: S },
    Reader { args: "rank --battles {} --bootstrap 0", record: B },
    Reader { args: "meta --ranking k.json --reference {}", record: K },
    Reader { args: "meta --judgments j.jsonl --labels {} --bootstrap 0", record: S },
    Reader { args: "calibrate --judgments j.jsonl --labels {} --bootstrap 0", record: S },
    Reader { args: "replay --judgments {} --bootstrap 10", record: J },
    Reader { args: "export battles --judgments {} --out battles.json", record: J },
];

/// The hostile files: a name and the bytes (`None`: a folder where the file goes).
fn cases(record: &str) -> Vec<(&'static str, Option<Vec<u8>>)> {
    let mut big = br#"{"session_id":"q1","x":""#.to_vec();
    big.resize(BIG, b'a');
    big.extend_from_slice(b"\"}\n");
    let deep = format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes();
    let binary: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let wrong = br#"{"session_id":[1],"model_test":{},"score":"high","conversation_input":"hi","checklist":7,"norm_probability":"x","model_a":1,"model_b":2,"winner":3,"output":false,"rubric":[],"model":null,"name":5,"rating":"r"}
"#
    .to_vec();
    // A byte that is never UTF-8, inside the record's first string.
    let mut utf8 = record.as_bytes().to_vec();
    let at = record.find('"').map_or(0, |i| i + 1);
    utf8.insert(at, 0xff);
    utf8.push(b'\n');
    vec![
        ("empty", Some(Vec::new())),
        ("binary", Some(binary)),
        ("a 10 MB line", Some(big)),
        ("nesting 100,000 deep", Some(deep)),
        ("a record twice", Some(format!("{record}\n{record}\n").into_bytes())),
        ("every field of the wrong type", Some(wrong)),
        ("invalid UTF-8", Some(utf8)),
        ("a folder for a file", None),
    ]
}

#[test]
fn every_reader_refuses_every_hostile_file_naming_it_within_its_memory_bound() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut failures = Vec::new();
    let mut runs = 0;
    for reader in READERS {
        let set = valid_set();
        let d = set.path();
        let args = |file: &Path| -> Vec<String> {
            reader
                .args
                .split(' ')
                .map(|a| {
                    if a == "{}" {
                        file.display().to_string()
                    } else if (a.contains('.') && !a.starts_with('-')) || a == "out" || a == "scores" {
                        d.join(a).display().to_string()
                    } else {
                        a.to_string()
                    }
                })
                .collect()
        };
        // What the command costs on a small file (the valid record, or the folder of it).
        let small = d.join("small.jsonl");
        std::fs::write(&small, format!("{}\n", if reader.record.is_empty() { "Helpfulness" } else { reader.record })).unwrap();
        let (_, _, base) = run_measured(&args(&small), d);
        for (case, bytes) in cases(reader.record) {
            // The rubric file is text, not JSON: only the cases that are not JSON records apply.
            if reader.record.is_empty() && matches!(case, "a record twice" | "every field of the wrong type" | "nesting 100,000 deep") {
                continue;
            }
            let file: PathBuf = d.join(format!("case-{runs}.jsonl"));
            let size = match &bytes {
                Some(b) => {
                    std::fs::write(&file, b).unwrap();
                    b.len() as u64
                }
                None => {
                    std::fs::create_dir_all(&file).unwrap();
                    0
                }
            };
            runs += 1;
            let (code, err, peak) = run_measured(&args(&file), d);
            let what = format!("`{}` on {case}", reader.args.replace("{}", "FILE"));
            let named = err.contains(&file.display().to_string());
            // A battle twice is data; a label twice in `calibrate` is a stated rule (the later counts, warned).
            let duplicate_battle = case == "a record twice" && reader.record == B;
            let warned = case == "a record twice" && reader.args.starts_with("calibrate") && named && err.contains("this later one counts");
            let bound = bound_kib(base, size);
            if duplicate_battle {
                if code != Some(0) {
                    failures.push(format!("{what}: a battle twice is data, read as such; exit code {code:?}: {err}"));
                }
            } else if !warned && (!matches!(code, Some(1..=4)) || !named) {
                failures.push(format!("{what}: exit code {code:?} (want 1-4) and a message naming the file: {err}"));
            }
            if peak > bound {
                failures.push(format!(
                    "{what}: peak memory {peak} KiB, above {bound} KiB (small input {base} KiB + 2 × {size} bytes + 16 MiB)"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{runs} hostile files through {} readers: each refused, named, within its memory bound", READERS.len());
}

/// A file where the output folder goes: refused, naming it, and the file is left as it was.
#[test]
fn a_file_where_the_output_folder_goes_is_refused_and_kept() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let set = valid_set();
    let d = set.path();
    let out = d.join("out");
    std::fs::write(&out, "the user's own file").unwrap();
    let s = |n: &str| d.join(n).display().to_string();
    for args in [
        vec![
            "grade".to_string(),
            "--model".into(),
            s("NO.gguf"),
            "--queries".into(),
            s("q.jsonl"),
            "--responses".into(),
            s("r.jsonl"),
            "--out".into(),
            s("out"),
        ],
        vec!["score".into(), "--judgments".into(), s("j.jsonl"), "--out".into(), s("out")],
    ] {
        let (code, err, _) = run_measured(&args, d);
        assert!(matches!(code, Some(1..=4)) && err.contains(&s("out")), "{args:?}: {code:?}: {err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "the user's own file");
    }
}

/// A 10 MB response graded by a real judge (SmolLM2, a 512-token context): `grade`, `direct` (its
/// digit prompt and the prompt-free perplexity) and `reason` cut it to what the context holds before
/// anything is tokenized, so each costs at most twice the input more than a response that just fills
/// the context (each before: 1.4-1.7 GB). A query too long to judge is refused before the judge loads.
#[test]
fn a_ten_megabyte_response_costs_what_a_context_does() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let set = valid_set();
    let d = set.path();
    let model = common::packaged_model("smollm2-135m").display().to_string();
    let response = |answer: &str| {
        format!("{}\n", serde_json::json!({"session_id": "q1", "chat_history": ["Say hi."], "output": [answer], "generator": "m"}))
    };
    // About 2,000 tokens: more than the context, so both runs cut the answer.
    std::fs::write(d.join("fills.jsonl"), response(&"word ".repeat(2_000))).unwrap();
    std::fs::write(d.join("huge.jsonl"), response(&"word ".repeat(BIG / 5))).unwrap();
    let s = |n: &str| d.join(n).display().to_string();
    let mut failures = Vec::new();
    for command in [&["grade"][..], &["direct"], &["direct", "--instruction", "perplexity"], &["reason", "--reply-tokens", "16"]] {
        let run = |responses: &str, out: &str| {
            let mut a: Vec<String> = command.iter().map(|c| c.to_string()).collect();
            a.extend(
                ["--model", &model, "--max-tokens", "512", "--queries", &s("q.jsonl"), "--responses", &s(responses), "--out", &s(out)]
                    .map(String::from),
            );
            run_measured(&a, d)
        };
        let (code_small, err_small, small) = run("fills.jsonl", &format!("out-fills-{}", command.join("-")));
        let (code, err, huge) = run("huge.jsonl", &format!("out-huge-{}", command.join("-")));
        let bound = bound_kib(small, BIG as u64);
        if code_small != Some(0) || code != Some(0) {
            failures.push(format!("{command:?}: exit codes {code_small:?} and {code:?}: {err_small} {err}"));
        } else if huge > bound {
            failures.push(format!(
                "{command:?}: a 10 MB response peaked at {huge} KiB, above {bound} KiB (one filling the context: {small} KiB)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Large valid inputs: a 10 MB scores file of 20 models (every query's 190 pairs made battles),
/// 10 MB of battles, of judgments and of queries. Each is read a line at a time into numbers (each
/// name stored once) or only what the command keeps: the bound is twice the input over a small run
/// (plus 16 MB), which records read whole with their owned strings (3–6 times the input), the
/// models² battles of every query once stored for all queries (15 times), and `export battles`
/// building its output before writing it (17 times) exceeded. SECURITY.md has each command's
/// measured ratio (`scripts/bench/memory.sh`).
#[test]
fn large_valid_inputs_cost_memory_linear_in_their_size() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let set = valid_set();
    let d = set.path();
    let write_lines = |name: &str, line: &dyn Fn(usize) -> String| {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(d.join(name)).unwrap());
        let (mut k, mut n) = (0, 0);
        while n < BIG {
            let l = line(k);
            n += l.len() + 1;
            writeln!(f, "{l}").unwrap();
            k += 1;
        }
    };
    write_lines("scores.jsonl", &|k| {
        format!(r#"{{"session_id":"q{}","model_test":"model{}","score":{}.{}}}"#, k / 20, k % 20, k % 9 + 1, k % 7)
    });
    write_lines("battles.jsonl", &|k| {
        format!(
            r#"{{"model_a":"model{}","model_b":"model{}","winner":"model_a","question_id":"q{}"}}"#,
            k % 20,
            (k * 7 + 1) % 20 + 20,
            k % 5000
        )
    });
    write_lines("judgments.jsonl", &|k| {
        format!(
            r#"{{"session_id":"q{}","model_test":"model{}","judge":"t","norm_probability":[0.{},0.5,0.25],"judgment":["Yes","No","No"]}}"#,
            k / 20,
            k % 20,
            k % 9 + 1
        )
    });
    write_lines("queries.jsonl", &|k| {
        format!(
            r#"{{"session_id":"q{}","conversation_input":[{{"role":"user","content":"{}"}}],"checklist":["Is it right?"]}}"#,
            k + 1,
            "x".repeat(200)
        )
    });
    write_lines("queries.jsonl", &|k| {
        format!(
            r#"{{"session_id":"q{}","conversation_input":[{{"role":"user","content":"{}"}}],"checklist":["Is it right?"]}}"#,
            k + 1,
            "x".repeat(200)
        )
    });
    let s = |n: &str| d.join(n).display().to_string();
    let mut failures = Vec::new();
    for (args, small) in [
        (vec!["rank", "--scores", &s("scores.jsonl"), "--bootstrap", "20"], s("s.jsonl")),
        (vec!["rank", "--battles", &s("battles.jsonl"), "--bootstrap", "20"], s("b.jsonl")),
        (vec!["rank", "--judgments", &s("judgments.jsonl"), "--bootstrap", "20"], s("j.jsonl")),
        (vec!["score", "--judgments", &s("judgments.jsonl"), "--out", &s("scores-out")], s("j.jsonl")),
        (vec!["export", "battles", "--judgments", &s("judgments.jsonl"), "--out", &s("battles-out.json")], s("j.jsonl")),
        (vec!["checklist", "prompt", "--queries", &s("queries.jsonl"), "--session", "q1"], s("q.jsonl")),
    ] {
        let at = args.iter().position(|a| a.ends_with(".jsonl")).unwrap();
        let big_input = std::fs::metadata(args[at]).unwrap().len();
        let small_args: Vec<String> = args.iter().enumerate().map(|(i, a)| if i == at { small.clone() } else { a.to_string() }).collect();
        let (_, _, base) = run_measured(&small_args, d);
        let (code, err, peak) = run_measured(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), d);
        let bound = base.max(own_rss_kib()) + 2 * big_input / 1024 + 16 * 1024;
        if code != Some(0) || peak > bound {
            failures.push(format!("{:?}: exit {code:?}, peak {peak} KiB, bound {bound} KiB (small input {base} KiB): {err}", &args[..2]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
