//! `rocketjudge merge`: the shards of a `grade --shard I/N` run → the files one unsharded run writes.
//!
//! Every shard 0..N must have finished (its completion record, see `crate::shard`), all records must
//! come from one run (same split, inputs and judge settings), and each shard's files must hold exactly
//! the responses its record names. Anything else stops with an error naming the shard files: a shard
//! that did not finish (with how far it got and how to resume it), a shard present twice, shards of
//! another run or split, a response in two shards, a file the records do not know. The merged
//! `<model>.jsonl` files keep each judgment line's bytes, in the unsharded run's order. Nothing is
//! overwritten: a merged file already present must be identical (so a merge job may run twice).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocketjudge_core::formats;

use super::write_atomic;
use super::CliResult;
use crate::inputs::read;
use crate::shard::{Shard, ShardRecord};

/// Merge the shards of a sharded `grade` run into one judgments folder.
///
/// Reads the `<model>.shard-I-of-N.jsonl` files and the shards' completion records from the
/// --judgments folders (all shards in one folder, or spread over several), checks that all N shards
/// of one run finished, and writes `<out>/<model>.jsonl`, identical to what `grade` without --shard
/// writes. `rank`, `score` and `export` read the result.
#[derive(clap::Args)]
pub struct Args {
    /// Folders holding the shards' outputs (`grade --shard I/N --out DIR`).
    #[arg(long, num_args = 1.., required = true)]
    judgments: Vec<PathBuf>,
    /// Folder for the merged judgments (not one of the shard folders).
    #[arg(long)]
    out: PathBuf,
}

/// Shards that cannot be merged as they are (exit code 3, as other bad input).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Stop with [`Refused`].
macro_rules! refuse {
    ($($t:tt)*) => { return Err(Refused(format!($($t)*)).into()) };
}

/// A shard file found on disk.
struct ShardFile {
    path: PathBuf,
    shard: Shard,
}

/// A completion record found on disk.
struct Found {
    path: PathBuf,
    dir: PathBuf,
    record: ShardRecord,
}

fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

fn list(paths: &[&Path]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The shard files and completion records of the folders.
fn scan(dirs: &[PathBuf]) -> Result<(Vec<ShardFile>, Vec<Found>)> {
    let (mut files, mut records) = (Vec::new(), Vec::new());
    for dir in dirs {
        if !dir.is_dir() {
            refuse!("{}: not a folder (give the folders `grade --shard` wrote)", dir.display());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read folder {}", dir.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for path in entries {
            let name = file_name(&path).to_string();
            if let Some((_, shard)) = Shard::of_judgments_file(&name) {
                files.push(ShardFile { shard, path });
            } else if let Some(shard) = Shard::of_record_file(&name) {
                let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
                let record: ShardRecord = serde_json::from_str(&text)
                    .map_err(|e| Refused(format!("{}: not a shard completion record (written by `grade --shard`): {e}", path.display())))?;
                if (record.shard, record.shards) != (shard.index, shard.count) {
                    refuse!(
                        "{}: the record says shard {}/{}, its name says {}/{}",
                        path.display(),
                        record.shard,
                        record.shards,
                        shard.index,
                        shard.count
                    );
                }
                records.push(Found { path, dir: dir.clone(), record });
            }
        }
    }
    Ok((files, records))
}

/// The one split (N) of the run; an error when the folders hold shards of several.
fn split(files: &[ShardFile], records: &[Found], dirs: &[PathBuf]) -> Result<usize> {
    let mut by_n: BTreeMap<usize, Vec<&Path>> = BTreeMap::new();
    for f in files {
        by_n.entry(f.shard.count).or_default().push(&f.path);
    }
    for r in records {
        by_n.entry(r.record.shards).or_default().push(&r.path);
    }
    match by_n.len() {
        0 => refuse!(
            "{}: no shard outputs (`grade --shard I/N --out DIR` writes <model>.shard-I-of-N.jsonl and .rocketjudge.shard-I-of-N.done)",
            list(&dirs.iter().map(PathBuf::as_path).collect::<Vec<_>>())
        ),
        1 => Ok(*by_n.keys().next().unwrap()),
        _ => {
            let mut msg = String::from("the folders hold shards of different splits; merge one run at a time:");
            for (n, paths) in &by_n {
                write!(msg, " N={n}: {};", list(paths)).unwrap();
            }
            refuse!("{}", msg.trim_end_matches(';'))
        }
    }
}

/// One completion record per shard 0..n, all of the same run.
fn complete_records<'a>(n: usize, files: &[ShardFile], records: &'a [Found]) -> Result<Vec<&'a Found>> {
    let mut by_shard: Vec<Vec<&Found>> = vec![Vec::new(); n];
    for r in records {
        by_shard[r.record.shard].push(r);
    }
    let mut missing = Vec::new();
    for (i, rs) in by_shard.iter().enumerate() {
        match rs.len() {
            0 => {
                let mine: Vec<&ShardFile> = files.iter().filter(|f| f.shard.index == i).collect();
                let got: usize = mine.iter().map(|f| read(&f.path).map(|b| b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(0)).sum();
                missing.push(if mine.is_empty() {
                    format!("shard {i}/{n} has no files (it never ran, or ran into another folder)")
                } else {
                    format!(
                        "shard {i}/{n} did not finish: {} hold(s) {got} graded responses and no completion record",
                        list(&mine.iter().map(|f| f.path.as_path()).collect::<Vec<_>>())
                    )
                });
            }
            1 => {}
            _ => refuse!(
                "shard {i}/{n} is present twice: {}; keep one of them (the folders may not share a shard)",
                list(&rs.iter().map(|r| r.path.as_path()).collect::<Vec<_>>())
            ),
        }
    }
    if !missing.is_empty() {
        refuse!(
            "{} of {n} shards are not complete: {}. Run `rocketjudge grade --shard I/{n}` again with the same arguments for each: it resumes where it stopped",
            missing.len(),
            missing.join("; ")
        );
    }
    let recs: Vec<&Found> = by_shard.into_iter().map(|mut v| v.remove(0)).collect();
    let first = &recs[0].record;
    for r in &recs[1..] {
        if (r.record.fingerprint.as_str(), r.record.responses) != (first.fingerprint.as_str(), first.responses) {
            refuse!(
                "{} and {} are shards of different runs (other queries, checklists, responses or judge settings: `{}` vs `{}`); grade every shard with the same arguments",
                recs[0].path.display(),
                r.path.display(),
                first.judge,
                r.record.judge
            );
        }
    }
    Ok(recs)
}

pub fn run(a: Args) -> CliResult {
    let (files, records) = scan(&a.judgments)?;
    let n = split(&files, &records, &a.judgments)?;
    for d in &a.judgments {
        if a.out.canonicalize().ok().is_some_and(|o| d.canonicalize().ok() == Some(o)) {
            refuse!(
                "--out {} is a shard folder: write the merged judgments elsewhere (rank would read the shards and the merge twice)",
                a.out.display()
            );
        }
    }
    let recs = complete_records(n, &files, &records)?;

    // Every file the records name, read and checked against its record; every shard file known.
    let mut known: HashSet<PathBuf> = HashSet::new();
    // base name -> (position in the run, line bytes) of every judgment.
    let mut merged: BTreeMap<String, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
    let mut owner: HashMap<usize, PathBuf> = HashMap::new();
    for r in &recs {
        for (name, graded) in &r.record.files {
            let path = r.dir.join(name);
            let (base, _) =
                Shard::of_judgments_file(name).with_context(|| format!("{}: names `{name}`, not a shard file", r.path.display()))?;
            let bytes = read(&path).with_context(|| format!("{} names it as complete", r.path.display()))?;
            let shown = path.display().to_string();
            let rows = formats::rocketeval::read_judgments(&shown, &bytes)?;
            let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
            let mut position: HashMap<&str, usize> = graded.iter().map(|g| (g.session_id.as_str(), g.position)).collect();
            let into = merged.entry(base.to_string()).or_default();
            for row in &rows {
                let Some(k) = position.remove(row.value.session_id.as_str()) else {
                    refuse!(
                        "{shown}:{}: session `{}` is not among the responses {} names for this file (graded twice, or by another run)",
                        row.line,
                        row.value.session_id,
                        r.path.display()
                    );
                };
                if let Some(other) = owner.insert(k, path.clone()) {
                    refuse!("response {k} of the run (`{}`) is in two shards: {} and {shown}", row.value.session_id, other.display());
                }
                into.push((k, lines[row.line - 1].to_vec()));
            }
            if !position.is_empty() {
                let mut lost: Vec<&str> = position.keys().copied().collect();
                lost.sort();
                refuse!("{shown} lacks {} response(s) its completion record {} names: {}", lost.len(), r.path.display(), lost.join(", "));
            }
            known.insert(path);
        }
    }
    for f in files.iter().filter(|f| f.shard.count == n) {
        if !known.contains(&f.path) {
            refuse!(
                "{}: no completion record of shard {}/{n} names this file (left from another run of the same split?); move it away",
                f.path.display(),
                f.shard.index
            );
        }
    }
    let total = recs[0].record.responses;
    if owner.len() != total {
        refuse!("the shards hold {} of the run's {total} responses", owner.len());
    }

    // Each model's file in the run's order. Checked before anything is written: a file already in
    // --out must be the same (a merge run twice), never overwritten.
    let mut to_write = Vec::new();
    for (base, mut rows) in merged {
        rows.sort_by_key(|(k, _)| *k);
        let text = String::from_utf8(rows.into_iter().flat_map(|(_, l)| l).collect()).context("judgment lines are UTF-8")?;
        let path = a.out.join(format!("{base}.jsonl"));
        match std::fs::read(&path) {
            Ok(old) if old == text.as_bytes() => {}
            Ok(_) => {
                refuse!("{} exists and differs from the merge; remove it or choose another --out (nothing was written)", path.display())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => to_write.push((path, text)),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    let written = to_write.len();
    for (path, text) in to_write {
        write_atomic(&path, &text)?;
    }
    eprintln!("merged {n} shards ({total} responses, judge {}) into {} ({written} file(s) written)", recs[0].record.judge, a.out.display());
    Ok(())
}
