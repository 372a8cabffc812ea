//! Grading orders and stopping when settled (issue #26), with the SmolLM2 test judge on two models:
//! GPT-4's twelve shortest MT-Bench demo answers and a model that refuses every query
//! (`tests/fixtures/settle`).
//!
//! - A complete run's judgment files are byte for byte the same in every order (model by model,
//!   interleaved, adaptive), and so is its ranking.
//! - The interleaved order grades both models on a query before the next query, in a seeded order
//!   that is not the file order (`grading-order.tsv`).
//! - `--until settled` stops once the live leaderboard separates the pair (on at least 10 shared
//!   queries, so at a query boundary after 20 or 22 of 24 responses); `rank` on that partial folder agrees
//!   that it is settled, and also reads a folder whose last line is still being written; the same
//!   command without `--until` then grades only what is left and ends with the complete run's bytes.
//! - `replay` of the complete run stops the interleaved order (seed 0) where the real run stopped.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{jsonl_files, model_path, root};

/// `tests/fixtures/settle`: GPT-4's twelve shortest demo answers and a refuser's (see its README).
fn two_models() -> (PathBuf, PathBuf) {
    let fix = root().join("tests/fixtures/settle");
    (fix.join("queries.jsonl"), fix.join("responses"))
}

fn rj() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
}

/// Run `grade` into `out` with `extra` flags; its stderr.
fn grade(q: &Path, r: &Path, out: &Path, extra: &[&str]) -> String {
    let o = rj()
        .arg("grade")
        .arg("--model")
        .arg(model_path())
        .arg("--queries")
        .arg(q)
        .arg("--responses")
        .arg(r)
        .arg("--out")
        .arg(out)
        .args(["--threads", "2"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "grade {extra:?} failed: {err}");
    err
}

/// `rank --format json` of a folder: (stdout, stderr).
fn rank(dir: &Path) -> (String, String) {
    let o = rj().arg("rank").arg("--judgments").arg(dir).args(["--format", "json"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "rank failed: {err}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), err)
}

/// The (model, session) lines of a run's `grading-order.tsv`, without its `#` lines.
fn graded_order(out: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(out.join("grading-order.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (m, s) = l.split_once('\t').unwrap();
            (m.to_string(), s.to_string())
        })
        .collect()
}

#[test]
fn every_order_ends_alike_and_until_settled_stops_early_then_completes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = two_models();

    let by_model = d.join("model");
    grade(&q, &r, &by_model, &["--order", "model"]);
    let want = jsonl_files(&by_model);
    assert_eq!(want.len(), 2);
    assert_eq!(want.values().map(|b| b.iter().filter(|&&c| c == b'\n').count()).sum::<usize>(), 24);
    let model_order = graded_order(&by_model);
    assert!(model_order[..12].iter().all(|(m, _)| m == "gpt-4"), "{model_order:?}");

    // Interleaved, stopped once settled.
    let inter = d.join("interleaved");
    let err = grade(&q, &r, &inter, &["--until", "settled"]);
    let stopped: usize = err
        .split("stopped: ranking settled after ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the run did not stop settled: {err}"));
    // Not before 10 shared queries per pair; at a query boundary; before the end.
    assert!((20..24).contains(&stopped) && stopped.is_multiple_of(2), "stopped after {stopped}: {err}");
    assert!(err.contains(&format!("{} responses left pending", 24 - stopped)), "{err}");
    let order = graded_order(&inter);
    assert_eq!(order.len(), stopped);
    for pair in order.chunks(2) {
        assert_eq!(pair[0].1, pair[1].1, "both models on a query before the next: {order:?}");
        assert_eq!((pair[0].0.as_str(), pair[1].0.as_str()), ("gpt-4", "refuser"));
    }
    let sessions: Vec<&str> = order.iter().step_by(2).map(|(_, s)| s.as_str()).collect();
    let file_order: Vec<&str> = model_order[..stopped / 2].iter().map(|(_, s)| s.as_str()).collect();
    assert_ne!(sessions, file_order, "the interleaved order is a seeded shuffle, not the file order");

    // `rank` on the partial folder: settled too; and on a copy whose last line is half written.
    let (_, said) = rank(&inter);
    assert!(said.contains(&format!("ranking settled after {stopped} responses")), "{said}");
    let torn = d.join("torn");
    std::fs::create_dir(&torn).unwrap();
    for (name, bytes) in jsonl_files(&inter) {
        std::fs::write(torn.join(&name), &bytes).unwrap();
    }
    let full = &want["gpt-4.jsonl"];
    let missing =
        full.split_inclusive(|&c| c == b'\n').find(|l| !jsonl_files(&inter)["gpt-4.jsonl"].windows(l.len()).any(|w| w == *l)).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(torn.join("gpt-4.jsonl")).unwrap();
    std::io::Write::write_all(&mut f, &missing[..missing.len() / 2]).unwrap();
    let (out_torn, said) = rank(&torn);
    assert!(said.contains("leaving out an unfinished last line"), "{said}");
    assert_eq!(out_torn, rank(&inter).0);

    // The same command without --until grades the rest only, and ends as the model-by-model run.
    let err = grade(&q, &r, &inter, &[]);
    assert!(err.contains(&format!("resuming: {stopped} of 24 responses are already graded")), "{err}");
    assert!(err.contains(&format!("{} responses to grade, interleaved order (seed 0)", 24 - stopped)), "{err}");
    assert_eq!(jsonl_files(&inter), want, "a completed interleaved run differs from the model-by-model run");

    // `replay` of the complete run reproduces where the interleaved run stopped (same scores, same
    // standing after every query's worth, same seed), and every order ends at the complete ranking.
    let o = rj()
        .arg("replay")
        .arg("--judgments")
        .arg(&by_model)
        .arg("--queries")
        .arg(&q)
        .args(["--seeds", "2", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summaries: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let orders: Vec<&str> = summaries.iter().map(|s| s["order"].as_str().unwrap()).collect();
    assert_eq!(orders, ["model", "interleaved", "adaptive"]);
    let interleaved = &summaries[1];
    assert_eq!(interleaved["to_settled"][0].as_u64(), Some(stopped as u64), "{interleaved}");
    assert_eq!(interleaved["false_separations"], 0);

    let adaptive = d.join("adaptive");
    grade(&q, &r, &adaptive, &["--order", "adaptive", "--min-queries", "2"]);
    assert_eq!(jsonl_files(&adaptive), want, "the adaptive run differs from the model-by-model run");
    assert_eq!(rank(&adaptive).0, rank(&by_model).0);
}
