//! Crash-safe grading: `rocketjudge grade` killed with SIGKILL at any moment and run again with the
//! same arguments ends with exactly the judgments of an uninterrupted run — no torn line, no
//! duplicate, no missing response, bit-identical p(Yes).
//!
//! One uninterrupted run grades six MT-Bench demo responses of two models with SmolLM2-135M into A
//! (with `--trace`). Then one output folder B goes through a chain of real runs, each killed at a
//! different moment (while the model loads, the instant the first line reaches the file, after the
//! 3rd and 5th line, the instant the last line lands) and each resumed by the next run with the same
//! arguments. A torn write (SIGKILL between two page copies of one `write`, which a test cannot
//! time) is reproduced byte for byte after three of the kills: the last judgment line without its
//! newline, cut in the middle, and a kill inside the trace write (the response's judgment line
//! absent, the trace cut in the middle of a line). The last run completes; B's judgments and trace
//! must equal A's byte for byte.
//!
//! The second test is the setup of the check that found issue #17 (three models, kills at 30–60 %
//! of an uninterrupted run's time), for `grade` and for `direct`: once with the process itself
//! SIGKILLed twice, once with its parent SIGKILLed twice (a shell, as a job runner or `cargo run`
//! would be), which leaves the process running while the next run starts. Before the output
//! folder's lock, that second case graded responses two and three times over. Both must end with
//! every file parsing, each (session, model) once, and the uninterrupted run's bytes.

#![cfg(unix)]

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{inputs, judge_inputs, THREE_MODELS_TWO_QUERIES};

/// (model, session ids): short MT-Bench demo answers, so the whole test stays near a minute or two.
const SUBSET: &[(&str, &[&str])] =
    &[("gpt-3.5-turbo", &["101_turn1", "111_turn1", "131_turn1"]), ("llama-13b", &["111_turn1", "91_turn1", "101_turn1"])];
const THREADS: &str = "2";

struct Grade {
    /// `grade` (with --trace) or `direct`.
    cmd: &'static str,
    queries: PathBuf,
    responses: PathBuf,
    logs: PathBuf,
    runs: usize,
}

/// The trace file of the output folder `out` (next to it, so the folder holds judgments only).
fn trace_of(out: &Path) -> PathBuf {
    out.with_extension("trace.jsonl")
}

impl Grade {
    /// Start the command into `out`; stderr goes to a log file (a pipe nobody reads could block it).
    fn spawn(&mut self, out: &Path) -> (Child, PathBuf) {
        self.spawn_in(Command::new(env!("CARGO_BIN_EXE_rocketjudge")), out)
    }

    /// Start the command under a shell that does not `exec` it (as a job runner or `cargo run`
    /// would), which writes the command's pid into `pid_file`. Killing the returned child kills the
    /// shell only.
    fn spawn_under_a_parent(&mut self, out: &Path, pid_file: &Path) -> (Child, PathBuf) {
        let mut sh = Command::new("sh");
        sh.args(["-c", "\"$0\" \"$@\" & echo $! > \"$PID_FILE\"; wait $!"])
            .arg(env!("CARGO_BIN_EXE_rocketjudge"))
            .env("PID_FILE", pid_file);
        self.spawn_in(sh, out)
    }

    fn spawn_in(&mut self, mut c: Command, out: &Path) -> (Child, PathBuf) {
        self.runs += 1;
        let log = self.logs.join(format!("run-{}.log", self.runs));
        judge_inputs(c.arg(self.cmd), &self.queries, &self.responses, out).args(["--threads", THREADS]);
        if self.cmd == "grade" {
            c.arg("--trace").arg(trace_of(out));
        }
        let child = c.stdout(Stdio::null()).stderr(File::create(&log).unwrap()).spawn().expect("start rocketjudge");
        (child, log)
    }

    /// Run to the end; panics unless it succeeds. Returns its stderr.
    fn complete(&mut self, out: &Path) -> String {
        let (mut child, log) = self.spawn(out);
        let status = child.wait().unwrap();
        let err = std::fs::read_to_string(&log).unwrap();
        assert!(status.success(), "grade failed ({status}): {err}");
        err
    }
}

/// Total bytes and complete lines of the judgment files in `out`.
fn progress(out: &Path) -> (u64, usize) {
    let Ok(dir) = std::fs::read_dir(out) else { return (0, 0) };
    let (mut bytes, mut lines) = (0, 0);
    for e in dir.flatten() {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            let b = std::fs::read(e.path()).unwrap_or_default();
            bytes += b.len() as u64;
            lines += b.iter().filter(|&&c| c == b'\n').count();
        }
    }
    (bytes, lines)
}

/// What one kill did.
struct Kill {
    point: String,
    /// Complete lines in the folder when the run started and when it was killed.
    lines_before: usize,
    lines_at_kill: usize,
    /// The run was really killed by SIGKILL (not finished first).
    killed: bool,
    /// The run's stderr (it is killed before its last words).
    log: String,
}

/// Start a run into `out` and SIGKILL it as soon as `when(bytes, lines, elapsed)` holds, polling
/// every millisecond (or when it ends by itself, which a kill point may allow).
fn kill_when(g: &mut Grade, out: &Path, point: &str, when: impl Fn(u64, usize, Duration) -> bool) -> Kill {
    let lines_before = progress(out).1;
    let (mut child, log) = g.spawn(out);
    let start = Instant::now();
    loop {
        let (bytes, lines) = progress(out);
        if when(bytes, lines, start.elapsed()) {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(300), "{point}: the run did not reach its kill point in 300 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    // SIGKILL (std's `Child::kill` on Unix); a zombie that already exited ignores it.
    let _ = child.kill();
    let status = child.wait().unwrap();
    let killed = status.signal() == Some(9);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(killed || status.success(), "{point}: the run failed on its own ({status}): {log}");
    Kill { point: point.to_string(), lines_before, lines_at_kill: progress(out).1, killed, log }
}

/// The judgment file written last.
fn newest(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("a judgment file")
}

/// Cut `file` inside its last line: `keep` maps the last line's length (newline included) to the
/// number of its bytes to keep. Returns the bytes lost.
fn tear_last_line(file: &Path, keep: impl Fn(usize) -> usize) -> usize {
    let b = std::fs::read(file).unwrap();
    assert_eq!(b.last(), Some(&b'\n'), "{}: the kill itself left a torn line", file.display());
    let start = b[..b.len() - 1].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let kept = keep(b.len() - start);
    assert!(kept < b.len() - start);
    std::fs::write(file, &b[..start + kept]).unwrap();
    b.len() - start - kept
}

/// A judgment file's bytes and its records by (session_id, model_test).
type JudgmentFile = (Vec<u8>, BTreeMap<(String, String), Value>);

/// Every judgment file of `out`, checked line by line: each line complete and valid JSON, no
/// (session_id, model_test) twice. Returns file name → (bytes, records by key).
fn read_out(out: &Path) -> BTreeMap<String, JudgmentFile> {
    let mut files = BTreeMap::new();
    let mut seen = HashSet::new();
    for e in std::fs::read_dir(out).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with(".rocketjudge") && name.ends_with(".lock") || name == "grading-order.tsv" {
            continue; // the folder's lock file (see crate::output), the record of the grading order
        }
        assert!(!name.starts_with('.'), "{name}: a temporary file was left behind");
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "{name}: torn last line");
        let mut records = BTreeMap::new();
        for (i, line) in bytes.split(|&c| c == b'\n').enumerate().filter(|(_, l)| !l.is_empty()) {
            let v: Value = serde_json::from_slice(line).unwrap_or_else(|e| panic!("{name}:{}: not a complete record: {e}", i + 1));
            let key = (v["session_id"].as_str().unwrap().to_string(), v["model_test"].as_str().unwrap().to_string());
            assert!(seen.insert(key.clone()), "{name}:{}: {key:?} is judged twice", i + 1);
            records.insert(key, v);
        }
        files.insert(name, (bytes, records));
    }
    files
}

#[test]
fn grade_killed_at_any_moment_resumes_to_the_uninterrupted_result() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let (queries, responses) = inputs(dir.path(), SUBSET);
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let mut g = Grade { cmd: "grade", queries, responses, logs, runs: 0 };
    let total: usize = SUBSET.iter().map(|(_, ids)| ids.len()).sum();

    // A: uninterrupted.
    let a = dir.path().join("a");
    g.complete(&a);
    let t_a = t0.elapsed();
    let want = read_out(&a);
    assert_eq!(want.values().map(|(_, r)| r.len()).sum::<usize>(), total);

    // B: a chain of killed runs, each resuming the last.
    let b = dir.path().join("b");
    let mut kills = Vec::new();
    let mut tears = Vec::new();
    kills.push(kill_when(&mut g, &b, "while loading the model (after 300 ms)", |_, _, t| t >= Duration::from_millis(300)));
    kills.push(kill_when(&mut g, &b, "the instant the 1st line reached the file", |bytes, _, _| bytes > 0));
    let f = newest(&b);
    tear_last_line(&f, |len| len - 1);
    tears.push(format!("a write torn before the newline ({} lost only the newline of its last line)", name(&f)));
    kills.push(kill_when(&mut g, &b, "after the 3rd line", |_, lines, _| lines >= 3));
    let f = newest(&b);
    let lost = tear_last_line(&f, |len| len / 2);
    tears.push(format!("a write torn in the middle ({} lost {lost} bytes of its last line)", name(&f)));
    kills.push(kill_when(&mut g, &b, "after the 5th line", |_, lines, _| lines >= 5));
    // A kill inside the trace write: the response's judgment line was never written, its trace
    // lines were, the last of them in part.
    let f = newest(&b);
    tear_last_line(&f, |_| 0);
    let t = trace_of(&b);
    let lost = tear_last_line(&t, |len| len / 3);
    tears.push(format!("a kill inside the trace write ({} lost its last line, the trace {lost} bytes)", name(&f)));
    kills.push(kill_when(&mut g, &b, "the instant the last line reached the file", |_, lines, _| lines >= total));
    let last = g.complete(&b);

    // Every run after a torn judgment line said so and graded that response again.
    let logs: Vec<&str> = kills.iter().map(|k| k.log.as_str()).chain([last.as_str()]).collect();
    let discarded = logs.iter().filter(|l| l.contains("discarding an unfinished last line")).count();
    assert_eq!(discarded, 2, "both torn judgment lines are detected and discarded on resume");
    for (i, k) in kills.iter().enumerate() {
        assert!(k.killed || i == kills.len() - 1, "{}: the run ended before SIGKILL reached it", k.point);
        if i > 0 && k.lines_before > 0 {
            assert!(k.log.contains("resuming:"), "{}: the run did not resume: {}", k.point, k.log);
        }
    }
    assert_eq!(kills[0].lines_at_kill, 0);
    assert!(kills[1].lines_at_kill >= 1 && kills[1].lines_at_kill < total);
    assert!(kills[2].lines_at_kill >= 3 && kills[3].lines_at_kill >= 5);

    // B equals A: the same files, records, p(Yes) to the bit, and bytes.
    let got = read_out(&b);
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "the same judgment files");
    for (name, (want_bytes, want_records)) in &want {
        let (got_bytes, got_records) = &got[name];
        assert_eq!(got_records.keys().collect::<Vec<_>>(), want_records.keys().collect::<Vec<_>>(), "{name}: the same responses");
        for (key, w) in want_records {
            let g = &got_records[key];
            let bits =
                |v: &Value| v["norm_probability"].as_array().unwrap().iter().map(|p| p.as_f64().unwrap().to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(g), bits(w), "{name} {key:?}: p(Yes) differs after resuming");
            assert_eq!(g, w, "{name} {key:?}: the record differs after resuming");
        }
        assert!(got_bytes == want_bytes, "{name}: same records, but not the same bytes (order)");
    }
    // The trace too: every item of every response once, complete, in the same order.
    let (ta, tb) = (std::fs::read(trace_of(&a)).unwrap(), std::fs::read(trace_of(&b)).unwrap());
    let items = |t: &[u8]| t.iter().filter(|&&c| c == b'\n').count();
    assert!(ta == tb, "the trace differs after resuming: {} lines uninterrupted, {} resumed", items(&ta), items(&tb));

    assert!(logs.iter().any(|l| l.contains("dropping") && l.contains("trace lines")), "the torn trace is repaired on resume");
    eprintln!("uninterrupted run: {total} responses, {} trace lines in {:.1} s", items(&ta), t_a.as_secs_f64());
    for (i, k) in kills.iter().enumerate() {
        eprintln!(
            "survived SIGKILL {}: {} -> {} complete lines{}",
            k.point,
            k.lines_before,
            k.lines_at_kill,
            if k.killed { "" } else { " (the run had already finished)" }
        );
        if let Some(t) = i.checked_sub(1).and_then(|j| tears.get(j)) {
            eprintln!("survived {t}");
        }
    }
    eprintln!(
        "{} runs; the interrupted chain ends byte-identical to the uninterrupted run ({:.1} s in all)",
        g.runs,
        t0.elapsed().as_secs_f64()
    );
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().to_string()
}

/// Has process `pid` ended (gone, or a zombie nobody reaped)?
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) == Some("Z"),
    }
}

/// `out`'s files equal `want`'s byte for byte (`read_out` has checked each holds every response once).
fn assert_same(what: &str, want: &BTreeMap<String, JudgmentFile>, got: &BTreeMap<String, JudgmentFile>) {
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{what}: the same files");
    for (name, (want_bytes, want_records)) in want {
        let (got_bytes, got_records) = &got[name];
        assert_eq!(got_records, want_records, "{what}: {name} holds other records than the uninterrupted run's");
        assert!(got_bytes == want_bytes, "{what}: {name}: same records, not the same bytes (order)");
    }
}

#[test]
fn killed_runs_and_killed_parents_never_leave_a_response_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (queries, responses) = inputs(dir.path(), THREE_MODELS_TWO_QUERIES);
    let total: usize = THREE_MODELS_TWO_QUERIES.iter().map(|(_, ids)| ids.len()).sum();
    for cmd in ["grade", "direct"] {
        let logs = dir.path().join(format!("logs-{cmd}"));
        std::fs::create_dir(&logs).unwrap();
        let mut g = Grade { cmd, queries: queries.clone(), responses: responses.clone(), logs, runs: 0 };

        // A: uninterrupted, timed: the kills fall at 35 % and 55 % of its time.
        let a = dir.path().join(format!("{cmd}-a"));
        let start = Instant::now();
        g.complete(&a);
        let full = start.elapsed();
        let want = read_out(&a);
        assert_eq!(want.len(), 3);
        assert_eq!(want.values().map(|(_, r)| r.len()).sum::<usize>(), total);
        let moments = [full.mul_f64(0.35), full.mul_f64(0.55)];

        // B: the process itself SIGKILLed twice, then resumed.
        let b = dir.path().join(format!("{cmd}-b"));
        for (k, m) in moments.iter().enumerate() {
            // At its moment, or at the latest with one response left: a run that resumes may go
            // faster than A did (A's time is measured on a shared machine), and must still be
            // killed mid-run.
            let kill = kill_when(&mut g, &b, &format!("{cmd} kill {}", k + 1), |_, lines, t| t >= *m || lines + 1 >= total);
            assert!(kill.killed, "{cmd}: run {} ended before its kill at {m:?}", k + 1);
        }
        g.complete(&b);
        assert_same(&format!("{cmd}, process killed twice"), &want, &read_out(&b));

        // C: its parent SIGKILLed twice; the process goes on, and the next run waits for it.
        let c = dir.path().join(format!("{cmd}-c"));
        let mut orphans = Vec::new();
        let mut logs = Vec::new();
        for (k, m) in moments.iter().enumerate() {
            let pid_file = dir.path().join(format!("{cmd}-c-{k}.pid"));
            let (mut parent, log) = g.spawn_under_a_parent(&c, &pid_file);
            std::thread::sleep(*m);
            let _ = parent.kill();
            parent.wait().unwrap();
            let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            // The first run must outlive its parent (the case of the issue); the second may already
            // have found everything done once the first ended.
            assert!(k > 0 || !ended(pid), "{cmd}: run 1 ended before its parent was killed; the case is not reproduced");
            orphans.push(pid);
            logs.push(log);
        }
        g.complete(&c);
        let deadline = Instant::now() + Duration::from_secs(300);
        while !orphans.iter().all(|&p| ended(p)) {
            assert!(Instant::now() < deadline, "{cmd}: the runs left by their killed parents did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_same(&format!("{cmd}, parent killed twice"), &want, &read_out(&c));
        let waited = logs.iter().filter(|l| std::fs::read_to_string(l).unwrap().contains("waiting for it to end")).count();
        assert!(waited >= 1, "{cmd}: the second run did not wait for the first");
        eprintln!("{cmd}: uninterrupted {:.1} s; two kills at 35/55 % and a resume: identical, each response once, with the process or its parent killed", full.as_secs_f64());
    }
}
