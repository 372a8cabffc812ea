//! Shards of a grading run: `grade --shard I/N` grades every N-th response starting at the I-th into
//! `<model>.shard-I-of-N.jsonl`, and when the whole shard is graded it writes a completion record
//! `.rocketjudge.shard-I-of-N.done` beside them. `merge` trusts a shard only through that record:
//! it names the shard's place in the whole run (the global position of every response it graded)
//! and a fingerprint of the whole run's inputs and judge settings, so shards of different inputs,
//! judges or splits are never mixed, and the merged files are line for line an unsharded run's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::inputs::Work;
use crate::output::replace_atomically;

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `I/N`, as `--shard` takes it.
    pub fn parse(s: &str) -> Result<Self> {
        let (i, n) = s.split_once('/').context("--shard takes I/N, e.g. 0/4")?;
        let index = i.trim().parse().with_context(|| format!("--shard {s}: I is not a number"))?;
        let count = n.trim().parse().with_context(|| format!("--shard {s}: N is not a number"))?;
        if count == 0 || index >= count {
            bail!("--shard {s}: need 0 <= I < N");
        }
        Ok(Shard { index, count })
    }

    /// `I-of-N`, as it appears in file names.
    pub fn tag(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }

    /// Whether the response at global position `k` of the run belongs to this shard.
    pub fn owns(&self, k: usize) -> bool {
        k % self.count == self.index
    }

    /// The judgments file of `model` in this shard.
    pub fn judgments_file(&self, dir: &Path, model: &str) -> PathBuf {
        crate::output::model_path(dir, model, &format!("shard-{}.jsonl", self.tag()))
    }

    /// The completion record of this shard in `dir`.
    pub fn record_file(&self, dir: &Path) -> PathBuf {
        dir.join(format!(".rocketjudge.shard-{}.done", self.tag()))
    }

    /// `(base, shard)` of a shard judgments file name `<base>.shard-I-of-N.jsonl` (`base` is the
    /// unsharded file's stem), or None for any other name.
    pub fn of_judgments_file(name: &str) -> Option<(&str, Shard)> {
        let stem = name.strip_suffix(".jsonl")?;
        let (base, tag) = stem.rsplit_once(".shard-")?;
        Some((base, Self::of_tag(tag)?))
    }

    /// The shard of a completion record's file name.
    pub fn of_record_file(name: &str) -> Option<Shard> {
        Self::of_tag(name.strip_prefix(".rocketjudge.shard-")?.strip_suffix(".done")?)
    }

    fn of_tag(tag: &str) -> Option<Shard> {
        let (i, n) = tag.split_once("-of-")?;
        let (index, count) = (i.parse().ok()?, n.parse().ok()?);
        (count > 0 && index < count && tag == Shard { index, count }.tag()).then_some(Shard { index, count })
    }
}

/// What a finished shard says of itself (`.rocketjudge.shard-I-of-N.done`, JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub shard: usize,
    pub shards: usize,
    /// Responses in the whole run (all shards).
    pub responses: usize,
    /// SHA-256 of the whole run's work (every query, checklist and response, in order) and of the
    /// judge and its settings: equal for every shard of one run, different otherwise.
    pub fingerprint: String,
    /// The judge and the settings that change its numbers, for people reading the record.
    pub judge: String,
    /// Per judgments file (its name in the folder): the responses graded into it, in file order.
    pub files: BTreeMap<String, Vec<Graded>>,
}

/// One graded response of a shard: its place in the whole run and its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graded {
    pub position: usize,
    pub session_id: String,
}

/// The fingerprint of a run: its work in order (model, query with checklist, response) and the
/// judge settings that change the numbers (`settings`: judge name, backend, precision, context).
pub fn fingerprint(work: &[Work<'_>], settings: &str) -> Result<String> {
    let mut h = Sha256::new();
    let mut put = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    put(settings.as_bytes());
    for w in work {
        put(w.model.as_bytes());
        put(&serde_json::to_vec(w.query)?);
        put(&serde_json::to_vec(w.response)?);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl ShardRecord {
    /// The record of `shard` of a run whose whole work is `work` (global positions = indices).
    pub fn new(shard: Shard, work: &[Work<'_>], dir: &Path, judge: &str, settings: &str) -> Result<Self> {
        let mut files: BTreeMap<String, Vec<Graded>> = BTreeMap::new();
        for (k, w) in work.iter().enumerate().filter(|(k, _)| shard.owns(*k)) {
            let file = shard.judgments_file(dir, &w.model);
            let name = file.file_name().and_then(|n| n.to_str()).context("a judgments file name is not UTF-8")?.to_string();
            files.entry(name).or_default().push(Graded { position: k, session_id: w.response.session_id.clone() });
        }
        Ok(ShardRecord {
            shard: shard.index,
            shards: shard.count,
            responses: work.len(),
            fingerprint: fingerprint(work, settings)?,
            judge: judge.to_string(),
            files,
        })
    }

    /// Write the record (atomically): the shard is complete.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let shard = Shard { index: self.shard, count: self.shards };
        replace_atomically(&shard.record_file(dir), (serde_json::to_string_pretty(self)? + "\n").as_bytes())
    }

    /// Remove the record of `shard` in `dir`, if any: a run that starts is not complete.
    pub fn clear(shard: Shard, dir: &Path) -> Result<()> {
        let path = shard.record_file(dir);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| format!("cannot remove {}", path.display())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let s = Shard::parse("2/5").unwrap();
        assert_eq!(s.tag(), "2-of-5");
        let f = s.judgments_file(Path::new("d"), "org/model");
        assert_eq!(f, Path::new("d/org_model.shard-2-of-5.jsonl"));
        assert_eq!(Shard::of_judgments_file("org_model.shard-2-of-5.jsonl"), Some(("org_model", s)));
        assert_eq!(Shard::of_judgments_file("a.b.shard-0-of-1.jsonl"), Some(("a.b", Shard { index: 0, count: 1 })));
        assert_eq!(Shard::of_record_file(".rocketjudge.shard-2-of-5.done"), Some(s));
        for bad in ["m.jsonl", "m.shard-5-of-5.jsonl", "m.shard-1-of-0.jsonl", "m.shard-01-of-5.jsonl", "m.shard-1-of-5.json"] {
            assert_eq!(Shard::of_judgments_file(bad), None, "{bad}");
        }
        for bad in ["0", "1/1", "a/2", "1/b", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert!((0..7).filter(|&k| s.owns(k)).eq([2]));
    }
}
