//! `grade --shard I/N` + `merge`: the merged judgments are byte for byte those of one unsharded run,
//! whether the shards share a folder or not, and a merge run twice changes nothing. Every way the
//! shards can be wrong — one unfinished, one present twice, a file no shard claims, shards of another
//! split or of other inputs, a line missing, an output that would be overwritten — is refused with
//! exit code 3 and a message naming the shard files, and writes nothing. Graded for real with the
//! SmolLM2 test judge on four MT-Bench demo responses.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{inputs, jsonl_files, judge_inputs};

const SUBSET: &[(&str, &[&str])] = &[("gpt-4", &["101_turn1", "111_turn1", "131_turn1"]), ("llama-13b", &["111_turn1"])];

fn rj(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge")).args(args).output().expect("run rocketjudge")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn grade(queries: &Path, responses: &Path, out: &Path, shard: Option<&str>) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocketjudge"));
    judge_inputs(c.arg("grade"), queries, responses, out).args(["--threads", "2"]);
    if let Some(sh) = shard {
        c.args(["--shard", sh]);
    }
    let o = c.output().expect("run rocketjudge");
    assert!(o.status.success(), "grade {shard:?} failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// `merge` of `dirs` into `out`: (exit code, stderr).
fn merge(dirs: &[&Path], out: &Path) -> (i32, String) {
    let mut args = vec!["merge", "--judgments"];
    args.extend(dirs.iter().map(|d| s(d)));
    args.extend(["--out", s(out)]);
    let o = rj(&args);
    (o.status.code().unwrap(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A merge that must be refused (exit code 3) with a message containing each of `says`, and must
/// not create `out`.
fn refused(dirs: &[&Path], out: &Path, says: &[&str]) {
    let (code, err) = merge(dirs, out);
    assert_eq!(code, 3, "expected a refusal, got exit {code}: {err}");
    for w in says {
        assert!(err.contains(w), "the refusal should say `{w}`: {err}");
    }
    assert!(!out.exists() || jsonl_files(out).is_empty(), "a refused merge wrote into {}", out.display());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn merged_shards_are_one_run_and_every_wrong_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, r) = inputs(d, SUBSET);
    let reference = d.join("reference");
    grade(&q, &r, &reference, None);
    // Shard 0 and shard 1 in folders of their own.
    let (a, b) = (d.join("a"), d.join("b"));
    grade(&q, &r, &a, Some("0/2"));
    grade(&q, &r, &b, Some("1/2"));

    let merged = d.join("merged");
    let (code, err) = merge(&[&a, &b], &merged);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("merged 2 shards (4 responses"), "{err}");
    assert_eq!(jsonl_files(&merged), jsonl_files(&reference), "the merge differs from one unsharded run");
    // Twice: nothing changes, nothing is refused.
    let (code, err) = merge(&[&a, &b], &merged);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("0 file(s) written"), "{err}");
    // The same shards in one folder.
    let both = d.join("both");
    copy_dir(&a, &both);
    copy_dir(&b, &both);
    let (code, err) = merge(&[&both], &d.join("merged-one-folder"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(jsonl_files(&d.join("merged-one-folder")), jsonl_files(&reference));

    // Shard 1 did not finish: its record is gone (a killed run has none).
    let unfinished = d.join("unfinished");
    copy_dir(&b, &unfinished);
    std::fs::remove_file(unfinished.join(".rocketjudge.shard-1-of-2.done")).unwrap();
    refused(&[&a, &unfinished], &d.join("m1"), &["shard 1/2 did not finish", "gpt-4.shard-1-of-2.jsonl", "grade --shard I/2"]);
    // Shard 1 never ran.
    refused(&[&a], &d.join("m2"), &["shard 1/2 has no files"]);
    // Shard 1 twice.
    let again = d.join("again");
    copy_dir(&b, &again);
    refused(&[&a, &b, &again], &d.join("m3"), &["shard 1/2 is present twice", ".rocketjudge.shard-1-of-2.done"]);
    // A file no record names.
    let stray = d.join("stray");
    copy_dir(&b, &stray);
    std::fs::copy(b.join("gpt-4.shard-1-of-2.jsonl"), stray.join("other.shard-1-of-2.jsonl")).unwrap();
    refused(&[&a, &stray], &d.join("m4"), &["other.shard-1-of-2.jsonl", "no completion record"]);
    // Shards of another split beside them.
    let split = d.join("split");
    copy_dir(&b, &split);
    std::fs::copy(b.join("gpt-4.shard-1-of-2.jsonl"), split.join("gpt-4.shard-0-of-3.jsonl")).unwrap();
    refused(&[&a, &split], &d.join("m5"), &["different splits", "N=2", "N=3", "gpt-4.shard-0-of-3.jsonl"]);
    // A line missing from a finished shard.
    let short = d.join("short");
    copy_dir(&b, &short);
    std::fs::write(short.join("gpt-4.shard-1-of-2.jsonl"), "").unwrap();
    refused(&[&a, &short], &d.join("m6"), &["gpt-4.shard-1-of-2.jsonl lacks 1 response", "111_turn1"]);
    // Shard 1 of other inputs (one model fewer).
    let (q2, r2) = {
        let other = d.join("other-inputs");
        std::fs::create_dir(&other).unwrap();
        inputs(&other, &SUBSET[..1])
    };
    let other = d.join("other");
    grade(&q2, &r2, &other, Some("1/2"));
    refused(
        &[&a, &other],
        &d.join("m7"),
        &["shards of different runs", ".rocketjudge.shard-0-of-2.done", ".rocketjudge.shard-1-of-2.done"],
    );
    // An output that would be overwritten, and the output in a shard folder.
    let taken = d.join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("gpt-4.jsonl"), "mine\n").unwrap();
    let (code, err) = merge(&[&a, &b], &taken);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("gpt-4.jsonl exists and differs"), "{err}");
    assert_eq!(std::fs::read_to_string(taken.join("gpt-4.jsonl")).unwrap(), "mine\n");
    assert!(!taken.join("llama-13b.jsonl").exists(), "a refused merge wrote another model's file");
    let before = jsonl_files(&a);
    let (code, err) = merge(&[&a, &b], &a);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("is a shard folder"), "{err}");
    assert_eq!(jsonl_files(&a), before);
    // No shards at all.
    refused(&[&reference], &d.join("m8"), &["no shard outputs"]);
}
