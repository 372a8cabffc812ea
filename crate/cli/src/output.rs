//! Output folders that survive being killed, and a second run started beside the first.
//!
//! `grade` and `direct` write one JSONL file per model, a line per finished response, each line
//! written in one call and fsynced before the next response starts. A run with the same arguments
//! resumes: it cuts a torn last line, keeps every complete line as it is, and grades only what is
//! missing. One run at a time writes a folder (per shard): the folder's lock file
//! (`.rocketjudge.lock`, or `.rocketjudge.shard-I-of-N.lock`) is held for the whole run, and a run
//! that finds it held waits for the other to end — for instance one whose parent (a shell, a
//! `cargo run`, a job runner) was killed while it kept running. A record that appears twice in a
//! file (written by two runs at once before this lock existed) is dropped on resume, keeping the
//! first; the file is rewritten atomically.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rocketjudge_core::formats::Lined;
use rocketjudge_core::FormatError;

/// The file a pairwise run writes in its --out folder.
pub const PAIRS_FILE: &str = "pairs.jsonl";

/// A model's file in an output folder, `<dir>/<model>.<ext>`: the one naming rule of every command
/// that writes a file per model (`grade`, `direct`, `score`, the shards), the model name made safe
/// as a file name (path separators, `:` and control characters replaced; never hidden, never empty).
pub fn model_path(dir: &Path, model: &str, ext: &str) -> PathBuf {
    let s: String = model.chars().map(|c| if c == '/' || c == '\\' || c.is_control() || c == ':' { '_' } else { c }).collect();
    let name = if s.is_empty() || s.starts_with('.') { format!("_{s}") } else { s };
    dir.join(format!("{name}.{ext}"))
}

/// A locked output folder and the files a run appends to.
pub struct OutputFolder {
    _lock: File,
    files: BTreeMap<PathBuf, File>,
}

impl OutputFolder {
    /// Create `dir` and take its lock (`shard`: e.g. `0-of-4`, so shards may share a folder),
    /// waiting while another run holds it.
    pub fn lock(dir: &Path, shard: Option<&str>) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let name = match shard {
            Some(s) => format!(".rocketjudge.shard-{s}.lock"),
            None => ".rocketjudge.lock".to_string(),
        };
        Self::lock_at(&dir.join(name), dir)
    }

    /// Take the lock of a single output file (`<file>.lock` beside it), as [`lock`](Self::lock).
    pub fn lock_file(file: &Path) -> Result<Self> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        Self::lock_at(Path::new(&name), file)
    }

    fn lock_at(path: &Path, what: &Path) -> Result<Self> {
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot create the lock file {}", path.display()))?;
        if f.try_lock().is_err() {
            let holder = std::fs::read_to_string(path).unwrap_or_default();
            let holder = holder.trim();
            eprintln!(
                "another rocketjudge run{} is writing to {}; waiting for it to end (stop it to go on at once)",
                if holder.is_empty() { String::new() } else { format!(" (pid {holder})") },
                what.display()
            );
            f.lock().with_context(|| format!("cannot lock {}", path.display()))?;
        }
        // Who holds it, for the message above (informative only: the lock is the flock).
        f.set_len(0)?;
        write!(f, "{}", std::process::id())?;
        Ok(OutputFolder { _lock: f, files: BTreeMap::new() })
    }

    /// The records already in `file`, for resuming: a torn last line (a write cut by a kill) is
    /// cut off; every complete line is read by `read`, the command's own reader (so a bad line is
    /// an error naming file, line and field); a record whose `key` repeats an earlier one is
    /// dropped and the file rewritten atomically without it. A missing file has no records.
    pub fn resume<T>(
        file: &Path,
        read: impl Fn(&str, &[u8]) -> Result<Vec<Lined<T>>, FormatError>,
        key: impl Fn(&T) -> String,
    ) -> Result<Vec<Lined<T>>> {
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
        };
        let name = file.display().to_string();
        let complete = complete_len(&bytes);
        if complete < bytes.len() {
            eprintln!("{name}: discarding an unfinished last line ({} bytes) from an interrupted run", bytes.len() - complete);
            let f = OpenOptions::new().write(true).open(file).with_context(|| format!("cannot write {name}"))?;
            f.set_len(complete as u64)?;
            f.sync_all()?;
        }
        let rows = read(&name, &bytes[..complete])?;
        let mut seen = HashSet::new();
        let (keep, repeated): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| seen.insert(key(&r.value)));
        if repeated.is_empty() {
            return Ok(keep);
        }
        let lines: Vec<&[u8]> = bytes[..complete].split_inclusive(|&b| b == b'\n').collect();
        let drop: HashSet<usize> = repeated.iter().map(|r| r.line).collect();
        let kept: Vec<u8> =
            lines.iter().enumerate().filter(|(i, _)| !drop.contains(&(i + 1))).flat_map(|(_, l)| l.iter().copied()).collect();
        eprintln!(
            "{name}: dropping {} repeated records (lines {}), written by two runs at once; the first of each is kept",
            repeated.len(),
            repeated.iter().map(|r| r.line.to_string()).collect::<Vec<_>>().join(", ")
        );
        replace_atomically(file, &kept)?;
        Ok(keep)
    }

    /// The keys of the records already in `file` (see [`Self::resume`]), all made as this run makes
    /// them: `mismatch` says how a record was made otherwise (another judge, other settings), and the
    /// first such record is an error naming its file and line (a run never mixes its records with
    /// another's).
    pub fn resume_same<T>(
        file: &Path,
        read: impl Fn(&str, &[u8]) -> Result<Vec<Lined<T>>, FormatError>,
        key: impl Fn(&T) -> String,
        mismatch: impl Fn(&T) -> Option<String>,
    ) -> Result<HashSet<String>> {
        Ok(Self::resume_checked(file, read, &key, mismatch)?.iter().map(|r| key(&r.value)).collect())
    }

    /// The records already in `file` (see [`Self::resume`]) after the check of [`Self::resume_same`].
    pub fn resume_checked<T>(
        file: &Path,
        read: impl Fn(&str, &[u8]) -> Result<Vec<Lined<T>>, FormatError>,
        key: impl Fn(&T) -> String,
        mismatch: impl Fn(&T) -> Option<String>,
    ) -> Result<Vec<Lined<T>>> {
        let rows = Self::resume(file, read, key)?;
        if let Some((r, why)) = rows.iter().find_map(|r| mismatch(&r.value).map(|why| (r, why))) {
            bail!("{}:{}: {why}; use another --out folder", file.display(), r.line);
        }
        Ok(rows)
    }

    /// Append one complete line (with its newline) to `file` in one write, and make it durable
    /// before returning: a kill leaves at most this line torn, which the next run cuts off.
    pub fn append(&mut self, file: &Path, line: &str) -> Result<()> {
        debug_assert!(line.ends_with('\n'));
        let f = match self.files.get_mut(file) {
            Some(f) => f,
            None => {
                let f =
                    OpenOptions::new().create(true).append(true).open(file).with_context(|| format!("cannot open {}", file.display()))?;
                self.files.entry(file.to_path_buf()).or_insert(f)
            }
        };
        f.write_all(line.as_bytes()).with_context(|| format!("cannot write {}", file.display()))?;
        f.sync_data().with_context(|| format!("cannot write {}", file.display()))?;
        Ok(())
    }
}

/// How many bytes of an appended-to JSONL file are complete lines: everything up to the last
/// newline; a tail without one was cut by a kill (or is still being written).
pub fn complete_len(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// Put the lines of a finished run's `file` in `order` (record keys, e.g. session ids, as `key` reads
/// them from a line): a run graded in any order ends with the same bytes. Lines whose key is not in
/// `order` follow, as they were. Nothing is written when the file is already in order; otherwise it
/// is replaced atomically, so a kill leaves the old file or the new one.
pub fn reorder_lines(file: &Path, order: &[&str], key: impl Fn(&[u8]) -> Option<String>) -> Result<()> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let rank: std::collections::HashMap<&str, usize> = order.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut lines: Vec<(usize, &[u8])> = bytes
        .split_inclusive(|&b| b == b'\n')
        .map(|l| (key(l).and_then(|k| rank.get(k.as_str()).copied()).unwrap_or(usize::MAX), l))
        .collect();
    // Stable: lines without a place keep theirs, after the others.
    lines.sort_by_key(|(r, _)| *r);
    let sorted: Vec<u8> = lines.into_iter().flat_map(|(_, l)| l.iter().copied()).collect();
    if sorted == bytes {
        return Ok(());
    }
    replace_atomically(file, &sorted)
}

/// Replace `path` with `bytes` through a temporary file in the same folder, a rename and an fsync
/// of the folder: a reader or a crash sees the old file or the new one, never a mix.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_atomically_with(path, |f| f.write_all(bytes))
}

/// [`replace_atomically`] with what `write` writes, as it writes it (an output larger than its input
/// is never held whole); a failed write leaves the old file and no temporary one.
pub fn replace_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("out")));
    let replace = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(File::create(&tmp)?);
        write(&mut f)?;
        f.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable once the folder is.
        File::open(dir).and_then(|d| d.sync_all()).or(Ok(()))
    };
    replace()
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("cannot rewrite {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocketjudge_core::formats::jsonl;

    #[test]
    fn model_files_are_safe_names_in_the_folder() {
        let dir = Path::new("out");
        assert_eq!(model_path(dir, "org/model:v1", "jsonl"), dir.join("org_model_v1.jsonl"));
        assert_eq!(model_path(dir, "..", "json"), dir.join("_...json"));
        assert_eq!(model_path(dir, "", "jsonl"), dir.join("_.jsonl"));
        assert_eq!(model_path(dir, "a\nb", "shard-0-of-2.jsonl"), dir.join("a_b.shard-0-of-2.jsonl"));
    }

    #[derive(Debug, serde::Deserialize)]
    struct Rec {
        id: String,
    }

    fn read(f: &str, b: &[u8]) -> Result<Vec<Lined<Rec>>, FormatError> {
        jsonl::read_jsonl(f, b)
    }

    #[test]
    fn resume_cuts_torn_lines_and_drops_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.jsonl");
        std::fs::write(&f, "{\"id\":\"a\",\"v\":1}\n{\"id\":\"b\"}\n{\"id\":\"a\",\"v\":2}\n{\"id\":\"c\"}\n{\"id\":\"b\"}\n{\"id\":\"d\"")
            .unwrap();
        let rows = OutputFolder::resume(&f, read, |r: &Rec| r.id.clone()).unwrap();
        assert_eq!(rows.iter().map(|r| r.value.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{\"id\":\"a\",\"v\":1}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n");
        assert!(OutputFolder::resume(&dir.path().join("none.jsonl"), read, |r: &Rec| r.id.clone()).unwrap().is_empty());
        std::fs::write(&f, "{\"id\":\"a\"}\nnot json\n").unwrap();
        let e = OutputFolder::resume(&f, read, |r: &Rec| r.id.clone()).unwrap_err().to_string();
        assert!(e.contains("m.jsonl:2"), "{e}");
    }

    #[test]
    fn reorder_puts_lines_in_order_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.jsonl");
        std::fs::write(&f, "{\"id\":\"c\"}\n{\"id\":\"x\"}\n{\"id\":\"a\"}\n{\"id\":\"b\"}\n").unwrap();
        let key = |l: &[u8]| serde_json::from_slice::<Rec>(l).ok().map(|r| r.id);
        reorder_lines(&f, &["a", "b", "c"], key).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n{\"id\":\"x\"}\n");
        reorder_lines(&dir.path().join("none.jsonl"), &["a"], key).unwrap();
    }

    #[test]
    fn a_second_run_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputFolder::lock(dir.path(), None).unwrap();
        // Another shard may share the folder at once.
        let shard = OutputFolder::lock(dir.path(), Some("0-of-2")).unwrap();
        let d = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let second = OutputFolder::lock(&d, None).unwrap();
            tx.send(()).unwrap();
            drop(second);
        });
        assert!(rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "the second run did not wait");
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the second run goes on once the first ends");
        t.join().unwrap();
        drop(shard);
    }
}
