//! Reading the files the commands take: folders of judgments or scores, label files, rankings.
//! Problems (unknown ids, ungraded responses) are printed; errors stop the command.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use std::collections::HashSet;

use rocketjudge_core::decoding::Decoding;
use rocketjudge_core::formats::{
    self, fastchat, jsonl, Benchmark, Judgment, JudgmentNames, JudgmentRow, Lined, Names, Problem, Query, Response, Score, Severity,
};
use rocketjudge_core::pairwise::{self, PairJudgment};
use rocketjudge_core::rank::{BattleRows, ScoreRows};
use rocketjudge_core::reasoned;
use rocketjudge_core::score::judgment_score;
use rocketjudge_core::FormatError;

/// Input problems severe enough to stop (exit code 3).
#[derive(Debug)]
pub struct InputProblems(pub Vec<Problem>);

impl fmt::Display for InputProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: Vec<_> = self.0.iter().filter(|p| p.severity == Severity::Error).collect();
        write!(f, "{} problem(s) in the input; the first: {}", errors.len(), errors[0])
    }
}

impl std::error::Error for InputProblems {}

/// Print every problem to stderr; fail when any is an error.
pub fn report(problems: Vec<Problem>) -> Result<()> {
    for p in &problems {
        eprintln!("{p}");
    }
    if problems.iter().any(|p| p.severity == Severity::Error) {
        return Err(InputProblems(problems).into());
    }
    Ok(())
}

pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// A file to read a line at a time.
pub fn open(path: &Path) -> Result<BufReader<File>> {
    Ok(BufReader::new(File::open(path).with_context(|| format!("cannot read {}", path.display()))?))
}

/// A file's first non-blank line (what the readers that recognise a file by its fields look at),
/// read without the rest; empty when it has none.
fn first_line(path: &Path) -> Result<Vec<u8>> {
    let mut reader = open(path)?;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader).take(jsonl::MAX_LINE_BYTES as u64).read_until(b'\n', &mut line);
        if n.with_context(|| format!("cannot read {}", path.display()))? == 0 || !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(line);
        }
    }
}

/// The `.jsonl` / `.json` files of a folder, sorted; a single file is returned as is.
pub fn files_in(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).with_context(|| format!("cannot read folder {}", path.display()))? {
        let p = entry?.path();
        if p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("jsonl" | "json")) {
            out.push(p);
        }
    }
    out.sort();
    if out.is_empty() {
        bail!("{} holds no .jsonl or .json files", path.display());
    }
    Ok(out)
}

/// Whether `last`, the last line of the judgments file `name` when it has no newline, is unfinished:
/// `grade` appends a line per response, so a file of a run still going (or killed mid-write) may end
/// in a line not yet valid JSON, which is left out with a note (the run finishes or cuts it; nothing
/// here writes). A last line that is whole JSON is read like every other line, with or without its
/// newline, so what a file holds never depends on that byte.
fn unfinished_last_line(name: &str, last: &[u8]) -> bool {
    let unfinished = !last.iter().all(u8::is_ascii_whitespace) && serde_json::from_slice::<serde::de::IgnoredAny>(last).is_err();
    if unfinished {
        eprintln!("note: {name}: leaving out an unfinished last line ({} bytes; a run still writing?)", last.len());
    }
    unfinished
}

/// A judgments file as far as its last complete record ([`unfinished_last_line`]).
fn read_judgment_lines(f: &Path) -> Result<Vec<u8>> {
    let mut bytes = read(f)?;
    let complete = crate::output::complete_len(&bytes);
    if unfinished_last_line(&f.display().to_string(), &bytes[complete..]) {
        bytes.truncate(complete);
    }
    Ok(bytes)
}

/// The name of a pointwise judgments file; a file of pair judgments is an error.
pub fn pointwise_file(f: &Path) -> Result<String> {
    let name = f.display().to_string();
    if pairwise::looks_like_pair_judgments(&first_line(f)?) {
        bail!("{name} holds pairwise judgments (`grade --type pairwise`): rank them with `rocketjudge rank --judgments`");
    }
    Ok(name)
}

/// All judgments in a folder (one file per model, RocketEval layout) or a single file, each file read
/// a line at a time ([`each_judgment_in`]); a file of pair judgments is an error.
pub fn judgments(path: &Path) -> Result<Vec<(String, Vec<Lined<Judgment>>)>> {
    let mut out = Vec::new();
    for f in files_in(path)? {
        let name = pointwise_file(&f)?;
        let mut rows = Vec::new();
        each_judgment_in(&name, &f, |j| rows.push(j))?;
        out.push((name, rows));
    }
    Ok(out)
}

/// Every record of `files`, with the file it came from, in file order.
pub fn records<T>(files: &[(String, Vec<Lined<T>>)]) -> impl Iterator<Item = (&str, &Lined<T>)> + Clone {
    files.iter().flat_map(|(file, rows)| rows.iter().map(move |r| (file.as_str(), r)))
}

/// What a --judgments folder holds: pointwise judgments (as their scores) or pairwise ones (one
/// value a run: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
pub enum Judged {
    Scores(ScoreRows),
    Pairs(Vec<PairJudgment>),
}

/// The judgments in `path`, each file read once: pair judgments (`grade --type pairwise`) when it
/// holds them, else the scores of its pointwise judgments (see [`scores_of_judgments`]); a folder with
/// both is an error. `decoding` decodes the pointwise scores (`None`: as each judgment records); pairs
/// come as recorded, for `pairwise::comparisons` to decode.
pub fn judged(path: &Path, decoding: Option<Decoding>) -> Result<Judged> {
    let mut pairs = Vec::new();
    let mut pointwise = Scorer::default();
    for f in files_in(path)? {
        let name = f.display().to_string();
        if pairwise::looks_like_pair_judgments(&first_line(&f)?) {
            pairs.extend(pairwise::read_pair_judgments(&name, &read_judgment_lines(&f)?)?.into_iter().map(|r| r.value));
        } else {
            pointwise.read(name, &f, decoding)?;
        }
    }
    let first = pointwise.files.iter().next().map(String::from);
    match first {
        Some(f) if !pairs.is_empty() => {
            bail!("{} holds pairwise judgments and pointwise ones ({f}); rank one kind at a time", path.display())
        }
        Some(_) => Ok(Judged::Scores(pointwise.finish()?)),
        None => Ok(Judged::Pairs(pairs)),
    }
}

/// Each judgment of the file `path` (named `name`) to `each`, read a line at a time as
/// `formats::rocketeval::read_judgments` reads a file: a malformed line is the error whatever comes
/// before it, then the first judgment that fails its validation (so from that one on, `each` sees no
/// more while the remaining lines are parsed), and an unfinished last line left out
/// ([`unfinished_last_line`]). `formats::rocketeval::each_validated` without that last rule.
pub fn each_judgment_in(name: &str, path: &Path, mut each: impl FnMut(Lined<Judgment>)) -> Result<()> {
    let mut invalid = None;
    jsonl::each_line(name, open(path)?, |line, text, ended| {
        if !ended && unfinished_last_line(name, text.as_bytes()) {
            return Ok(());
        }
        let value: Judgment = jsonl::parse_value(name, line, text)?;
        if invalid.is_none() {
            match value.validate(name, line) {
                Ok(()) => each(Lined { line, value }),
                Err(e) => invalid = Some(e),
            }
        }
        Ok(())
    })?;
    invalid.map_or(Ok(()), |e| Err(e.into()))
}

/// Unsupervised scores of every judgment in `path`, after the checks across files (one judgment per
/// response, one checklist length per session); problems reported. Decoded as `decoding` says (`None`:
/// as each judgment records).
pub fn scores_of_judgments(path: &Path, decoding: Option<Decoding>) -> Result<ScoreRows> {
    let mut pointwise = Scorer::default();
    for f in files_in(path)? {
        pointwise.read(pointwise_file(&f)?, &f, decoding)?;
    }
    pointwise.finish()
}

/// Pointwise judgments read a file at a time and a line at a time: of each judgment only what the
/// checks across files and its score need is kept, as numbers (each file, session, model and judge
/// name stored once), never the judgment itself, so a folder costs memory near its scores', not its
/// judgments' (the labels, token ids and settings of every line).
#[derive(Default)]
struct Scorer {
    files: Names,
    sessions: Names,
    models: Names,
    keys: Vec<JudgmentRow>,
    scores: ScoreRows,
    /// The scores' problems, file by file (those of the checks across files go first).
    problems: Vec<Problem>,
}

impl Scorer {
    /// Read the judgments of one file ([`each_judgment_in`]), scoring each as it is read.
    fn read(&mut self, name: String, path: &Path, decoding: Option<Decoding>) -> Result<()> {
        let file = self.files.len();
        each_judgment_in(&name, path, |judgment| {
            let (score, problem) = judgment_score(&name, &judgment, decoding);
            self.problems.extend(problem);
            let (line, j) = (judgment.line, judgment.value);
            self.keys.push(JudgmentRow {
                file: file as u32,
                line: line as u32,
                session: self.sessions.number(&j.session_id),
                model: self.models.number(&j.model_test),
                items: j.norm_probability.len() as u32,
            });
            if let Some(s) = score {
                let judge = Some(j.judge).filter(|j| !j.is_empty());
                self.scores.push(file, line, &Score { session_id: j.session_id, model_test: j.model_test, score: s.score, judge });
            }
        })?;
        self.files.number(&name);
        Ok(())
    }

    /// The scores, after the checks across files; problems reported (errors stop). No judgment at
    /// all is an error naming the files.
    fn finish(self) -> Result<ScoreRows> {
        let Scorer { files, sessions, models, keys, scores, problems: scored } = self;
        if keys.is_empty() {
            return Err(no_records(&files.iter().collect::<Vec<_>>(), "judgments"));
        }
        let mut problems = formats::check_judgment_rows(&keys, &JudgmentNames { files: &files, sessions: &sessions, models: &models });
        problems.extend(scored);
        report(problems)?;
        Ok(scores)
    }
}

/// Pairwise verdicts: Arena battles ({model_a, model_b, winner, question_id?}, JSON or JSONL), or
/// `rocketjudge reason`'s pairs (a folder: its `pairs.jsonl`), each pair's majority a battle (a pair
/// without a readable reply has none).
pub fn battles(path: &Path) -> Result<Vec<formats::Battle>> {
    let mut out = Vec::new();
    each_battle(path, |b| out.push(b))?;
    Ok(out)
}

/// [`battles`] as they are read into [`BattleRows`], a few numbers each: what ranking them needs.
pub fn battle_rows(path: &Path) -> Result<BattleRows> {
    let mut rows = BattleRows::default();
    each_battle(path, |b| rows.push(&b))?;
    Ok(rows)
}

/// Each battle of [`battles`] to `each`; Arena JSONL is read a line at a time.
fn each_battle(path: &Path, mut each: impl FnMut(formats::Battle)) -> Result<()> {
    let file = if path.is_dir() { path.join(crate::output::PAIRS_FILE) } else { path.to_path_buf() };
    let name = file.display().to_string();
    if reasoned::looks_reasoned_pair(&first_line(&file)?) {
        let pairs = reasoned::read_reasoned_pairs(&name, &read(&file)?)?;
        let before = pairs.len();
        let battles: Vec<_> = pairs.iter().filter_map(|p| p.value.as_battle()).collect();
        if battles.len() < before {
            eprintln!("{name}: {} pairs have no readable reply and no verdict: left out", before - battles.len());
        }
        battles.into_iter().for_each(each);
        return Ok(());
    }
    let mut any = false;
    jsonl::each_record(&name, open(&file)?, |b: Lined<formats::Battle>| {
        formats::arena::check_battle(&name, &b)?;
        any = true;
        each(b.value);
        Ok(())
    })?;
    if !any {
        return Err(no_records(&[&name], "battles"));
    }
    Ok(())
}

/// Score labels: RocketEval score files (a folder or a file, JSON array or JSONL; JSONL read a line
/// at a time) or a FastChat `*_single.jsonl` judgment file (recognised by its `question_id` and `turn`
/// fields), as rows of numbers (each name stored once). A response scored twice is an error.
pub fn labels(path: &Path) -> Result<ScoreRows> {
    let mut files = Vec::new();
    let mut rows = ScoreRows::default();
    let mut problems = Vec::new();
    for f in files_in(path)? {
        let name = f.display().to_string();
        let file = files.len();
        let first = first_line(&f)?;
        let mut whole = |scores: Vec<Lined<Score>>| scores.iter().for_each(|s| rows.push(file, s.line, &s.value));
        if looks_like_fastchat_judgment(&first) {
            let (s, p) = fastchat::scores_from_single_judgments(&name, &read(&f)?)?;
            problems.extend(p);
            whole(s);
        } else if reasoned::looks_reasoned_pair(&first) {
            bail!("{name} holds verdicts on pairs (`reason` with a pairwise protocol): rank them with --battles {name}");
        } else if reasoned::looks_reasoned(&first) {
            // `reason` lines: a response none of whose replies could be read has no score (unanswered).
            let replies = reasoned::read_reasoned_scores(&name, &read(&f)?)?;
            let unscored = replies.iter().filter(|r| r.value.score.is_none()).count();
            if unscored > 0 {
                eprintln!("{name}: {unscored} responses have no readable reply and no score: ranked as unanswered");
            }
            whole(replies.into_iter().filter_map(|r| r.value.as_score().map(|value| Lined { line: r.line, value })).collect());
        } else {
            jsonl::each_record(&name, open(&f)?, |s: Lined<Score>| {
                formats::rocketeval::check_score(&name, &s)?;
                rows.push(file, s.line, &s.value);
                Ok(())
            })?;
        }
        files.push(name);
    }
    if rows.is_empty() {
        return Err(no_records(&files.iter().map(String::as_str).collect::<Vec<_>>(), "scores"));
    }
    problems.extend(rows.duplicates(&files));
    report(problems)?;
    Ok(rows)
}

fn looks_like_fastchat_judgment(bytes: &[u8]) -> bool {
    jsonl::first_record(bytes).is_some_and(|v| v.get("question_id").is_some() && v.get("turn").is_some())
}

/// What the grading commands (`grade`, `direct`) take: a judge, a benchmark, responses, an output folder.
#[derive(clap::Args)]
pub struct GradingArgs {
    /// Judge: a model name from `rocketjudge models list`, a GGUF path, or an http(s) URL.
    #[arg(long)]
    pub model: String,
    /// Queries (RocketEval JSONL).
    #[arg(long)]
    pub queries: PathBuf,
    /// Checklists (RocketEval `checklist.jsonl`), replacing the queries' own.
    #[arg(long)]
    pub checklists: Option<PathBuf>,
    /// Response files or folders (RocketEval JSONL).
    #[arg(long, num_args = 1.., required = true)]
    pub responses: Vec<PathBuf>,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub judge: crate::judges::JudgeArgs,
}

/// Input files that hold no record of `what` (blank lines only): nothing to grade is a mistake in the
/// command, not a run that does nothing and succeeds (exit code 3, naming the files).
pub fn no_records(files: &[&str], what: &str) -> anyhow::Error {
    let holds = if files.len() == 1 {
        "the file is empty or holds only blank lines"
    } else {
        "each of these files is empty or holds only blank lines"
    };
    FormatError::new(&files.join(", "), 0, "", format!("no {what}: {holds} (one JSON object per line expected)")).into()
}

/// [`no_records`] when every file read holds none.
pub fn ensure_records<T>(files: &[(String, Vec<T>)], what: &str) -> Result<()> {
    if files.iter().all(|(_, rows)| rows.is_empty()) {
        return Err(no_records(&files.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(), what));
    }
    Ok(())
}

/// Queries (with checklists) and response files, checked against each other.
pub struct GradingInputs {
    pub bench: Benchmark,
    pub responses: Vec<(String, Vec<Lined<Response>>)>,
    /// Sessions with an error problem: their responses are not graded.
    bad: HashSet<String>,
}

/// One response to grade.
pub struct Work<'a> {
    pub query: &'a Query,
    pub response: &'a Response,
    pub model: String,
}

/// Put `todo` (part of `work`) in the order that lets a judge keep each query's part of the prompt
/// from one response to the next: every model's response to a query in turn, the queries in the
/// order they first come in `work`.
pub fn by_query(work: &[Work], todo: &mut [&Work]) {
    let mut first_seen = std::collections::HashMap::new();
    for (i, w) in work.iter().enumerate() {
        first_seen.entry(w.response.session_id.as_str()).or_insert(i);
    }
    todo.sort_by_key(|w| first_seen[w.response.session_id.as_str()]);
}

impl GradingInputs {
    /// Read and check everything; problems are printed, and errors stop unless `allow_problems`.
    /// Without `need_checklists` (prompts that list no checklist items) a query without a checklist is
    /// no problem: its responses are judged.
    pub fn read(
        queries: &Path,
        checklists: Option<&Path>,
        responses: &[PathBuf],
        allow_problems: bool,
        need_checklists: bool,
    ) -> Result<Self> {
        let qname = queries.display().to_string();
        let (mut bench, mut problems) = Benchmark::new(&qname, formats::rocketeval::read_queries_from(&qname, open(queries)?)?);
        if bench.is_empty() {
            return Err(no_records(&[&qname], "queries"));
        }
        if let Some(c) = checklists {
            let cname = c.display().to_string();
            let rows = formats::rocketeval::read_checklists_from(&cname, open(c)?)?;
            if rows.is_empty() {
                return Err(no_records(&[&cname], "checklists"));
            }
            problems.extend(bench.attach_checklists(&cname, rows));
        }
        if need_checklists {
            problems.extend(bench.check_checklists(&qname));
        }
        let mut files = Vec::new();
        for r in responses {
            for f in files_in(r)? {
                let name = f.display().to_string();
                let rows = jsonl::read_jsonl_from::<Response, _>(&name, open(&f)?)?;
                problems.extend(bench.check_responses(&name, &rows));
                files.push((name, rows));
            }
        }
        ensure_records(&files, "responses")?;
        let bad = problems.iter().filter(|p| p.severity == Severity::Error).map(|p| p.session_id.clone()).collect();
        if problems.iter().any(|p| p.severity == Severity::Error) && !allow_problems {
            report(problems)?;
        } else {
            for p in &problems {
                eprintln!("{p}");
            }
        }
        Ok(GradingInputs { bench, responses: files, bad })
    }

    /// The responses to grade, in a deterministic order (files as given, records in file order); the
    /// model is the record's `generator`, else the file name.
    pub fn work(&self) -> Vec<Work<'_>> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (file, rows) in &self.responses {
            let stem = Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("model").to_string();
            for r in rows {
                let model = if r.value.generator.is_empty() { stem.clone() } else { r.value.generator.clone() };
                let Some(query) = self.bench.get(&r.value.session_id) else { continue };
                if self.bad.contains(&r.value.session_id) || !seen.insert((model.clone(), r.value.session_id.clone())) {
                    continue;
                }
                out.push(Work { query, response: &r.value, model });
            }
        }
        out
    }
}
