//! The grading loop of `grade`: the responses in the schedule's order, each judgment durable (its
//! trace lines first) before the next response is graded; progress and the live leaderboard on
//! stderr; with --until, a stop once the ranking is settled.

use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::formats::{jsonl, Judgment};
use rocketjudge_core::prompt::PromptStyle;
use rocketjudge_core::schedule::Schedule;
use rocketjudge_core::settle::{self, Pace};
use rocketjudge_engine::judge::{AnyJudge, Judge};
use serde_json::json;

use crate::inputs::Work;
use crate::live::Live;
use crate::output::OutputFolder;

/// One run's grading: the work, the judge and where each judgment goes.
pub(super) struct Grading<'r, 'w, 'a> {
    pub work: &'r [&'w Work<'a>],
    pub judge: &'r mut AnyJudge,
    pub judge_name: &'r str,
    pub prompt: PromptStyle,
    pub decoding: Option<Decoding>,
    pub out: &'r mut OutputFolder,
    /// The judgments file of a model.
    pub path_of: &'r dyn Fn(&str) -> PathBuf,
    pub trace: Option<File>,
    pub record: Option<OrderRecord>,
    /// --until: stop once the live leaderboard is settled.
    pub until: bool,
}

/// What a run graded.
pub(super) struct Graded {
    pub responses: usize,
    pub items: usize,
    pub truncated: usize,
    pub secs: f64,
    /// Prompt tokens not run again: each query's part, kept between its responses.
    pub kept_tokens: u64,
    /// Stopped by --until before every response was graded.
    pub settled_early: bool,
}

impl Grading<'_, '_, '_> {
    /// Grade until the schedule has nothing left for `done` (or, with --until, the ranking is
    /// settled): `todo` responses at most, `already` graded before this run.
    pub fn run(mut self, schedule: &Schedule, live: &mut Live, done: &mut [bool], todo: usize) -> Result<Graded> {
        let mut progress = Progress::new(self.work.len(), todo);
        let mut settled_early = false;
        live.refresh(Pace::default());
        while let Some(i) = schedule.next(done, live.standing.as_ref()) {
            if self.until && live.standing.as_ref().is_some_and(|s| s.settled) {
                settled_early = true;
                break;
            }
            let w = self.work[i];
            let (j, items) = self.grade(w)?;
            done[i] = true;
            progress.graded(w, items, j.truncated_chars.is_some_and(|c| c > 0));
            live.add(&j);
            let last = progress.n == todo;
            if live.due() || last {
                live.refresh(progress.pace());
                if let Some(text) = live.report(last) {
                    eprintln!("{}{text}", progress.clear_line());
                }
            }
        }
        Ok(progress.finish(settled_early, self.judge.reused_tokens()))
    }

    /// Grade one response and make its judgment durable (its trace lines first): the judgment and
    /// its number of items.
    fn grade(&mut self, w: &Work) -> Result<(Judgment, usize)> {
        let what = || format!("{} on `{}`", w.model, w.response.session_id);
        let prepared = self.judge.prepare(w.query, w.response).with_context(what)?;
        let grades = pollster::block_on(self.judge.grade_prepared(&prepared)).with_context(what)?;
        let tokens = self.judge.answer_tokens();
        let j = Judgment::from_grade(
            &w.response.session_id,
            &w.model,
            self.judge_name,
            grades.iter().map(|g| g.p_yes),
            tokens.clone(),
            prepared.truncated_chars,
            self.prompt.version(),
        );
        let j = Judgment { decoding: self.decoding, ..j };
        if let Some(t) = self.trace.as_mut() {
            let mut lines = String::new();
            for (i, g) in grades.iter().enumerate() {
                lines.push_str(&jsonl::to_jsonl_line(&json!({
                    "session_id": w.response.session_id, "model_test": w.model, "item": i,
                    "prefix_tokens": prepared.prefix, "suffix_tokens": prepared.suffixes[i],
                    "yes_id": tokens.yes[0], "no_id": tokens.no[0],
                    "logit_yes": g.logit_yes, "logit_no": g.logit_no, "p_yes": g.p_yes,
                })));
            }
            // Durable before the judgment line that makes the response count as done.
            t.write_all(lines.as_bytes())?;
            t.sync_data()?;
        }
        self.out.append(&(self.path_of)(&w.model), &jsonl::to_jsonl_line(&j))?;
        if let Some(r) = self.record.as_mut() {
            r.graded(&w.model, &w.response.session_id)?;
        }
        Ok((j, grades.len()))
    }
}

/// The progress line: a line per response on a terminal (rewritten in place), every tenth otherwise;
/// after the first response, the time the whole run will take at its pace.
struct Progress {
    start: Instant,
    tty: bool,
    /// Responses in the run's work, and those left to grade when it started.
    total: usize,
    todo: usize,
    n: usize,
    items: usize,
    truncated: usize,
}

impl Progress {
    fn new(total: usize, todo: usize) -> Self {
        let tty = std::io::stderr().is_terminal();
        Progress { start: Instant::now(), tty, total, todo, n: 0, items: 0, truncated: 0 }
    }

    /// What ends the progress line before another line is printed.
    fn clear_line(&self) -> &'static str {
        if self.tty {
            "\r\x1b[K"
        } else {
            ""
        }
    }

    fn pace(&self) -> Pace {
        let secs = self.start.elapsed().as_secs_f64();
        Pace { secs_per_response: Some(secs / self.n.max(1) as f64), elapsed: Some(secs) }
    }

    fn graded(&mut self, w: &Work, items: usize, truncated: bool) {
        self.n += 1;
        self.items += items;
        self.truncated += usize::from(truncated);
        let secs = self.start.elapsed().as_secs_f64();
        let pace = secs / self.n as f64;
        if self.n == 1 {
            eprintln!(
                "{}the first response took {pace:.1} s here: about {} for the {} to grade",
                self.clear_line(),
                settle::duration(pace * self.todo as f64),
                self.todo
            );
        }
        let line = format!(
            "[{}/{}] {} {}: {:.2} items/s, {:.1} s per response, ETA {}",
            self.n + self.total - self.todo,
            self.total,
            w.model,
            w.response.session_id,
            self.items as f64 / secs,
            pace,
            settle::duration((self.todo - self.n) as f64 * pace)
        );
        if self.tty {
            eprint!("\r\x1b[K{line}");
        } else if self.n % 10 == 1 || self.n == self.todo {
            eprintln!("{line}");
        }
    }

    fn finish(self, settled_early: bool, kept_tokens: u64) -> Graded {
        if self.tty && self.n > 0 {
            eprintln!();
        }
        let secs = self.start.elapsed().as_secs_f64();
        Graded { responses: self.n, items: self.items, truncated: self.truncated, secs, kept_tokens, settled_early }
    }
}

/// `grading-order.tsv` in the output folder: which response each run graded when, a line each
/// (`model<TAB>session_id`), after a `# ` line per run naming its order and seed. For people and
/// audits; resuming reads the judgments, never this.
pub(super) struct OrderRecord {
    file: File,
}

impl OrderRecord {
    const NAME: &'static str = "grading-order.tsv";

    pub fn open(dir: &Path, header: &str) -> Result<Self> {
        let path = dir.join(Self::NAME);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // A line cut by a kill is ended before this run's lines.
        let torn = std::fs::read(&path).map(|b| b.last().is_some_and(|&c| c != b'\n')).unwrap_or(false);
        writeln!(file, "{}# {header}", if torn { "\n" } else { "" }).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OrderRecord { file })
    }

    fn graded(&mut self, model: &str, session: &str) -> Result<()> {
        writeln!(self.file, "{model}\t{session}").context("cannot write the grading order")
    }
}
