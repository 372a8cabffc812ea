//! Resuming a `grade` run: the judgments already in the output folder (each checked to be this run's
//! grade of its response), which responses they leave to grade, and a --trace file made to agree with
//! them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocketjudge_core::formats::{self, Judgment, Lined};
use rocketjudge_core::resume::GradingSettings;

use crate::inputs::Work;
use crate::output::{replace_atomically, OutputFolder};

/// Where a run stands before its first grade: which of its responses are graded already.
pub(super) struct Resumed {
    /// The judgments on disk, by model (they seed the live leaderboard).
    pub judgments: BTreeMap<String, Vec<Lined<Judgment>>>,
    /// Per response of the run's work, in its order: graded already.
    pub done: Vec<bool>,
}

impl Resumed {
    /// Read each model's file (`path_of(model)`) and mark the responses it grades.
    pub fn read(work: &[&Work], settings: &GradingSettings, path_of: impl Fn(&str) -> PathBuf) -> Result<Self> {
        let items: HashMap<&str, usize> = work.iter().map(|w| (w.response.session_id.as_str(), w.query.checklist.len())).collect();
        let mut judgments: BTreeMap<String, Vec<Lined<Judgment>>> = BTreeMap::new();
        for w in work {
            if !judgments.contains_key(&w.model) {
                judgments.insert(w.model.clone(), resume_file(&path_of(&w.model), settings, &items)?);
            }
        }
        let graded: HashSet<(&str, &str)> =
            judgments.iter().flat_map(|(m, rows)| rows.iter().map(move |r| (m.as_str(), r.value.session_id.as_str()))).collect();
        let done = work.iter().map(|w| graded.contains(&(w.model.as_str(), w.response.session_id.as_str()))).collect();
        Ok(Resumed { judgments, done })
    }

    /// The responses left to grade, in the work's order.
    pub fn todo<'w, 'a>(&self, work: &[&'w Work<'a>]) -> Vec<&'w Work<'a>> {
        work.iter().zip(&self.done).filter(|(_, d)| !**d).map(|(w, _)| *w).collect()
    }
}

/// The judgments already in `path` (resume; see `OutputFolder::resume_checked`), every one this run's
/// grade of its response (core's `resume`: the same judge, prompt wording and decoding, and as many
/// items as the response's checklist has now, `items` by session; a session not in this run is checked
/// against its own length).
fn resume_file(path: &Path, settings: &GradingSettings, items: &HashMap<&str, usize>) -> Result<Vec<Lined<Judgment>>> {
    OutputFolder::resume_checked(
        path,
        formats::rocketeval::read_judgments,
        |j: &Judgment| j.session_id.clone(),
        |j| settings.mismatch(j, items.get(j.session_id.as_str()).copied().unwrap_or(j.norm_probability.len())),
    )
}

/// Make a trace file agree with the judgments on disk before grading resumes: drop a torn last line
/// (and any line that is not a trace record) and the lines of responses in `todo` (those of a
/// response in flight when a run was stopped; it is graded, and traced, again). Other lines are kept
/// as they are. The file is replaced atomically.
pub(super) fn resume_trace(path: &Path, todo: &HashSet<(&str, &str)>) -> Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    #[derive(serde::Deserialize)]
    struct Key {
        session_id: String,
        model_test: String,
    }
    let mut keep = Vec::with_capacity(bytes.len());
    let mut dropped = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        // A torn line, a line that is not a trace record, or one of a response graded again: dropped.
        let keep_line = line.ends_with(b"\n")
            && serde_json::from_slice::<Key>(line).is_ok_and(|k| !todo.contains(&(k.model_test.as_str(), k.session_id.as_str())));
        if keep_line {
            keep.extend_from_slice(line);
        } else {
            dropped += 1;
        }
    }
    if dropped == 0 {
        return Ok(());
    }
    eprintln!("{}: dropping {dropped} trace lines of responses an interrupted run did not finish", path.display());
    replace_atomically(path, &keep)
}
