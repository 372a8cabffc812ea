//! The live leaderboard of a `grade` run: the scores graded so far, their standing (core's
//! `settle`), and what to print of it, at a bounded rate.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use rocketjudge_core::formats::{Judgment, Lined, Score};
use rocketjudge_core::rank::{RankOptions, RankSettings, ScoreTable};
use rocketjudge_core::schedule::Job;
use rocketjudge_core::score::judgment_score;
use rocketjudge_core::settle::{Pace, SettleRule, Standing};

use crate::commands::text_table;
use crate::inputs::Work;

/// A printed standing is repeated at most this often (unless the run settles or ends).
const PRINT_EVERY: Duration = Duration::from_secs(30);

pub struct Live {
    /// The run's responses, as the schedule sees them (same indices as the run's work).
    pub jobs: Vec<Job>,
    /// The settling rule (`--until`'s level, `--min-queries`): shown, and used by the adaptive order.
    pub rule: SettleRule,
    /// The latest standing (`None` before the first refresh).
    pub standing: Option<Standing>,
    models: Vec<String>,
    queries: usize,
    scores: Vec<Score>,
    opts: RankOptions,
    /// Responses graded since the last refresh; a refresh is due after one query's worth (one per model).
    since: usize,
    pace: Pace,
    printed: Option<(Instant, bool)>,
}

impl Live {
    /// The live state of a run over `work`, with the judgments a resumed run found (`resumed`; those
    /// of other responses are left out).
    pub fn new<'a>(work: &[&Work<'_>], resumed: impl Iterator<Item = &'a Lined<Judgment>>, rule: SettleRule) -> Result<Self> {
        let jobs: Vec<Job> = work
            .iter()
            .map(|w| Job { model: w.model.clone(), session_id: w.response.session_id.clone(), category: w.query.category.clone() })
            .collect();
        let mut models: Vec<String> = Vec::new();
        for j in &jobs {
            if !models.contains(&j.model) {
                models.push(j.model.clone());
            }
        }
        let queries = jobs.iter().map(|j| j.session_id.as_str()).collect::<HashSet<_>>().len();
        let in_run: HashSet<(&str, &str)> = jobs.iter().map(|j| (j.model.as_str(), j.session_id.as_str())).collect();
        let scores =
            resumed.filter(|j| in_run.contains(&(j.value.model_test.as_str(), j.value.session_id.as_str()))).filter_map(score_of).collect();
        let opts = RankSettings::default().options()?;
        Ok(Live { jobs, rule, standing: None, models, queries, scores, opts, since: 0, pace: Pace::default(), printed: None })
    }

    /// A judgment just graded.
    pub fn add(&mut self, j: &Judgment) {
        self.scores.extend(score_of(&Lined { line: 0, value: j.clone() }));
        self.since += 1;
    }

    /// Whether a query's worth of responses was graded since the last refresh.
    pub fn due(&self) -> bool {
        self.since >= self.models.len()
    }

    /// Recompute the standing; `pace`: what this run measured of its speed so far.
    pub fn refresh(&mut self, pace: Pace) {
        self.since = 0;
        self.pace = pace;
        self.standing = ScoreTable::new(&self.scores)
            .and_then(|t| Standing::new(&t, &self.models, Some(self.jobs.len()), Some(self.queries), &self.opts, self.rule))
            .ok();
    }

    /// The standing as text, when it is time to print it: the first time, every [`PRINT_EVERY`], when
    /// it settles or unsettles, and at the end (`last`).
    pub fn report(&mut self, last: bool) -> Option<String> {
        let s = self.standing.as_ref()?;
        let due = match self.printed {
            None => true,
            Some((at, settled)) => last || settled != s.settled || at.elapsed() >= PRINT_EVERY,
        };
        if !due || s.entries.is_empty() {
            return None;
        }
        self.printed = Some((Instant::now(), s.settled));
        Some(format!(
            "live leaderboard (Bradley–Terry, 95% bootstrap intervals over queries):\n{}{}",
            standing_table(s),
            s.sentence(self.pace)
        ))
    }
}

fn score_of(j: &Lined<Judgment>) -> Option<Score> {
    judgment_score("", j, None).0.map(|s| Score {
        session_id: j.value.session_id.clone(),
        model_test: j.value.model_test.clone(),
        score: s.score,
        judge: None,
    })
}

/// The standing's leaderboard: rank, model, Bradley–Terry rating with its interval, responses graded,
/// and the verdict on the pair it forms with the next model.
fn standing_table(s: &Standing) -> String {
    let rows: Vec<Vec<String>> = s
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let ci = match (e.lower, e.upper) {
                (Some(l), Some(u)) => format!("{l:.0} – {u:.0}"),
                _ => "–".into(),
            };
            let next = s.pairs.get(i).map(|p| p.verdict.clone()).unwrap_or_default();
            vec![e.rank.to_string(), e.model.clone(), format!("{:.0}", e.score), ci, e.responses.to_string(), next]
        })
        .collect();
    text_table(&["#", "model", "rating", "95% CI", "graded", "vs next"], &rows)
}
