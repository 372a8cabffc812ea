//! Replays fuzzing findings on stable Rust, without a fuzzing engine.
//!
//! Every file under `tests/fuzz-regressions/<target>/` (an input that once crashed, hung or blew up a
//! parser) and every hand-made seed under `fuzz/seeds/<target>/` goes through the very entry function
//! the cargo-fuzz target calls (`fuzz/src/lib.rs`, compiled into this test by path). Errors are fine;
//! a panic fails the test, naming the file. See docs/fuzzing.md.

#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_targets;

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    out.retain(|p| p.is_file() && p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.')));
    out.sort();
    out
}

fn replay(root: &Path) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    let known: Vec<&str> = fuzz_targets::TARGETS.iter().map(|t| t.0).collect();
    for dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if dir.path().is_dir() && !known.contains(&name.as_str()) {
            failures.push(format!("{}: no fuzz target is named `{name}`", dir.path().display()));
        }
    }
    for (target, entry) in fuzz_targets::TARGETS {
        for file in files(&root.join(target)) {
            let data = std::fs::read(&file).unwrap();
            n += 1;
            if std::panic::catch_unwind(|| entry(&data)).is_err() {
                failures.push(format!("{target}: {} panics", file.display()));
            }
        }
    }
    (n, failures)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn fuzz_regressions_do_not_panic() {
    let (n, failures) = replay(&repo().join("tests/fuzz-regressions"));
    assert!(failures.is_empty(), "{} of {n} regression inputs fail:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn fuzz_seeds_do_not_panic() {
    let (n, failures) = replay(&repo().join("fuzz/seeds"));
    assert!(n > 0, "no seeds under fuzz/seeds");
    assert!(failures.is_empty(), "{} of {n} seeds fail:\n{}", failures.len(), failures.join("\n"));
}
