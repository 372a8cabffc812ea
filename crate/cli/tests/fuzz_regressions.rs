//! Replays fuzzing findings on stable Rust, without a fuzzing engine.
//!
//! Every file under `tests/fuzz-regressions/<target>/` (an input that once crashed, hung or blew up a
//! parser) and every hand-made seed under `fuzz/seeds/<target>/` goes through the very entry function
//! the cargo-fuzz target calls (`fuzz/src/lib.rs`, compiled into this test by path). Errors are fine;
//! a panic fails the test, naming the file. See docs/fuzzing.md.

#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_targets;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// Counts the bytes this thread has live, so a test can see memory that an entry point keeps after it
/// returns (libFuzzer reports that as an out-of-memory finding once the limit is reached).
struct PerThread;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(l.size() as isize);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(l.size() as isize));
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        count(new as isize - l.size() as isize);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: PerThread = PerThread;

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

/// Found by the `tokenizer` target (an out-of-memory after ~10k executions): tokenizers 0.23's BPE
/// keeps its word cache in a thread-local map keyed by instance and never removes an instance's
/// entries when it is dropped, so every tokenizer built and used kept its cache alive for the life of
/// the thread. The engine now builds the BPE without that cache; building and using a tokenizer again
/// and again must not grow the heap.
#[test]
fn building_tokenizers_does_not_leak() {
    let data = std::fs::read(repo().join("tests/fuzz-regressions/tokenizer/bpe-cache-leak-distinct-words")).unwrap();
    let live = || LIVE.with(Cell::get);
    for _ in 0..2 {
        fuzz_targets::tokenizer(&data);
    }
    let before = live();
    for _ in 0..20 {
        fuzz_targets::tokenizer(&data);
    }
    let grown = live() - before;
    assert!(grown < 256 << 10, "20 tokenizers built and dropped left {grown} bytes behind");
}
