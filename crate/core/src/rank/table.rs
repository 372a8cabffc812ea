//! The table ranks are made from, and the compact rows it is built from while a file is read.
//!
//! A file of scores (or of verdicts on pairs) is read a record at a time into rows of a few numbers:
//! each model, session and judge name is stored once, however many records repeat it, so reading
//! costs memory near the input's size rather than a few times it (a record's owned strings would
//! cost more than its JSON text).

use std::collections::HashMap;

use crate::error::{invalid, Result};
use crate::formats::{self, Battle, Names, Problem, Score, Winner};

use super::WeightedBattle;

/// Scores of each model on each query (`None` where a model did not answer or was not graded).
#[derive(Debug, Clone, Default)]
pub struct ScoreTable {
    pub models: Vec<String>,
    pub sessions: Vec<String>,
    /// `cells[model][session]`.
    cells: Vec<Vec<Option<f64>>>,
}

impl ScoreTable {
    /// Build from score records. Models and sessions are sorted by name so results never depend on
    /// input order. A repeated (model, session) pair is an error.
    pub fn new(scores: &[Score]) -> Result<Self> {
        let mut rows = ScoreRows::default();
        for s in scores {
            rows.push(0, 0, s);
        }
        rows.table()
    }

    /// A table from its cells (`cells[model][session]`), models and sessions in the order given.
    pub fn from_cells(models: Vec<String>, sessions: Vec<String>, cells: Vec<Vec<Option<f64>>>) -> Self {
        debug_assert!(cells.len() == models.len() && cells.iter().all(|r| r.len() == sessions.len()));
        Self { models, sessions, cells }
    }

    /// Models and sessions with no score at all (verdicts on pairs): no cell is stored, so the table
    /// costs memory linear in the models and sessions, not their product.
    pub fn without_scores(models: Vec<String>, sessions: Vec<String>) -> Self {
        Self { models, sessions, cells: Vec::new() }
    }

    pub fn get(&self, model: usize, session: usize) -> Option<f64> {
        self.cells.get(model).and_then(|row| row[session])
    }

    /// The sessions on which `model` has a score.
    pub fn answered(&self, model: usize) -> usize {
        self.cells.get(model).map_or(0, |row| row.iter().flatten().count())
    }

    /// The sessions on which models `a` and `b` both have a score.
    pub fn common(&self, a: usize, b: usize) -> usize {
        match (self.cells.get(a), self.cells.get(b)) {
            (Some(x), Some(y)) => x.iter().zip(y).filter(|(x, y)| x.is_some() && y.is_some()).count(),
            _ => 0,
        }
    }
}

/// No judge named (a `u32` for [`ScoreRow::judge`]).
const NO_JUDGE: u32 = u32::MAX;

/// One score as [`ScoreRows`] keeps it.
#[derive(Debug, Clone, Copy)]
struct ScoreRow {
    model: u32,
    session: u32,
    judge: u32,
    file: u32,
    line: u32,
    score: f64,
}

/// Scores as they are read, in read order: a few numbers a score, each name stored once. What the
/// readers of score and judgment files fill, then check ([`ScoreRows::duplicates`]) and turn into a
/// [`ScoreTable`] (or back into records, where their order matters).
#[derive(Debug, Default)]
pub struct ScoreRows {
    models: Names,
    sessions: Names,
    judges: Names,
    rows: Vec<ScoreRow>,
}

impl ScoreRows {
    /// Add `score`, read at `line` of the caller's file number `file`.
    pub fn push(&mut self, file: usize, line: usize, score: &Score) {
        let row = ScoreRow {
            model: self.models.number(&score.model_test),
            session: self.sessions.number(&score.session_id),
            judge: score.judge.as_deref().map_or(NO_JUDGE, |j| self.judges.number(j)),
            file: u32::try_from(file).expect("fewer than 2^32 files"),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            score: score.score,
        };
        self.rows.push(row);
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every score that repeats an earlier one's (model, session), in read order: the problems
    /// [`formats::check_scores`] finds, `files` naming the file numbers given to [`Self::push`].
    pub fn duplicates(&self, files: &[String]) -> Vec<Problem> {
        let repeats = formats::repeats(self.rows.len(), |i| (self.rows[i].model, self.rows[i].session));
        repeats
            .into_iter()
            .map(|(i, first)| {
                let (r, f) = (&self.rows[i], &self.rows[first]);
                formats::duplicate(
                    (&files[r.file as usize], r.line as usize),
                    (&files[f.file as usize], f.line as usize),
                    self.sessions.name(r.session),
                    self.models.name(r.model),
                    "score",
                )
            })
            .collect()
    }

    /// The table of these scores (models and sessions sorted by name); a non-finite score or a second
    /// score of a (model, session) is an error.
    pub fn table(self) -> Result<ScoreTable> {
        let ScoreRows { models, sessions, rows, .. } = self;
        let (model_names, model_at) = models.sorted();
        let session_count = sessions.len();
        let mut cells = vec![vec![None; session_count]; model_names.len()];
        for r in &rows {
            let (model, session) = (&model_names[model_at[r.model as usize]], sessions.name(r.session));
            if !r.score.is_finite() {
                return invalid!("score of `{model}` on `{session}` is not a finite number");
            }
            let cell = &mut cells[model_at[r.model as usize]][r.session as usize];
            if cell.is_some() {
                return invalid!("two scores for model `{model}` on session `{session}`");
            }
            *cell = Some(r.score);
        }
        drop(rows);
        let (session_names, session_at) = sessions.sorted();
        let cells = cells
            .into_iter()
            .map(|row| {
                let mut sorted = vec![None; session_count];
                for (s, v) in row.into_iter().enumerate() {
                    sorted[session_at[s]] = v;
                }
                sorted
            })
            .collect();
        Ok(ScoreTable { models: model_names, sessions: session_names, cells })
    }

    /// The scores as records, in read order.
    pub fn into_scores(self) -> Vec<Score> {
        self.rows
            .iter()
            .map(|r| Score {
                session_id: self.sessions.name(r.session).to_string(),
                model_test: self.models.name(r.model).to_string(),
                score: r.score,
                judge: (r.judge != NO_JUDGE).then(|| self.judges.name(r.judge).to_string()),
            })
            .collect()
    }
}

/// A battle without a `question_id` (a session of its own, named by its place).
const OWN_SESSION: u32 = u32::MAX;

/// Verdicts on pairs as they are read: a few numbers a battle, each name stored once.
#[derive(Debug, Default)]
pub struct BattleRows {
    models: Names,
    sessions: Names,
    /// (model a, model b, winner, session or [`OWN_SESSION`]).
    rows: Vec<(u32, u32, Winner, u32)>,
}

impl BattleRows {
    pub fn of(battles: &[Battle]) -> Self {
        let mut rows = Self::default();
        battles.iter().for_each(|b| rows.push(b));
        rows
    }

    pub fn push(&mut self, b: &Battle) {
        let (x, y) = (self.models.number(&b.model_a), self.models.number(&b.model_b));
        let session = b.question_id.as_deref().map_or(OWN_SESSION, |q| self.sessions.number(q));
        self.rows.push((x, y, b.winner, session));
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The models and sessions (`question_id`; a battle without one is a session of its own, `battle
    /// i` by its place), sorted by name, as a table without scores, and each session's battles
    /// (weight 1), the lower-numbered model first.
    pub fn comparisons(self) -> (ScoreTable, Vec<Vec<WeightedBattle>>) {
        let BattleRows { models, sessions, rows } = self;
        let own = |i: usize| format!("battle {i}");
        let mut names: Vec<String> = sessions.iter().map(String::from).collect();
        names.extend(rows.iter().enumerate().filter(|(_, r)| r.3 == OWN_SESSION).map(|(i, _)| own(i)));
        names.sort();
        names.dedup();
        let place: HashMap<&str, usize> = names.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        let named_at: Vec<usize> = sessions.iter().map(|s| place[s]).collect();
        let mut per_session = vec![Vec::new(); names.len()];
        let (model_names, model_at) = models.sorted();
        for (i, &(a, b, winner, session)) in rows.iter().enumerate() {
            let (x, y) = (model_at[a as usize], model_at[b as usize]);
            let battle = if x < y { (x, y, winner) } else { (y, x, winner.swapped()) };
            let s = if session == OWN_SESSION { place[own(i).as_str()] } else { named_at[session as usize] };
            per_session[s].push((battle, 1.0));
        }
        drop(place);
        (ScoreTable::without_scores(model_names, names), per_session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(m: &str, s: &str, v: f64) -> Score {
        Score { session_id: s.into(), model_test: m.into(), score: v, judge: None }
    }

    #[test]
    fn rows_become_the_sorted_table_and_back() {
        let scores = [
            score("b", "q2", 1.0),
            score("a", "q2", 2.0),
            score("b", "q1", 3.0),
            Score { judge: Some("j".into()), ..score("c", "q3", 4.0) },
        ];
        let mut rows = ScoreRows::default();
        for s in &scores {
            rows.push(0, 1, s);
        }
        assert_eq!(rows.len(), 4);
        let table = rows.table().unwrap();
        assert_eq!(
            (table.models.clone(), table.sessions.clone()),
            (vec!["a".into(), "b".into(), "c".into()], vec!["q1".into(), "q2".into(), "q3".into()])
        );
        assert_eq!(
            [table.get(0, 1), table.get(1, 0), table.get(1, 1), table.get(2, 2), table.get(0, 0)],
            [Some(2.0), Some(3.0), Some(1.0), Some(4.0), None]
        );
        let mut back = ScoreRows::default();
        scores.iter().for_each(|s| back.push(0, 1, s));
        assert_eq!(back.into_scores(), scores);
    }

    #[test]
    fn duplicates_name_both_places_in_read_order() {
        let files = ["f1".to_string(), "f2".to_string()];
        let mut rows = ScoreRows::default();
        for (file, line, s) in [
            (0, 1, score("a", "q", 1.0)),
            (0, 2, score("b", "q", 1.0)),
            (1, 1, score("b", "q", 2.0)),
            (1, 2, score("a", "q", 3.0)),
            (1, 3, score("a", "q", 4.0)),
        ] {
            rows.push(file, line, &s);
        }
        let got: Vec<(String, usize, String)> = rows.duplicates(&files).into_iter().map(|p| (p.file, p.line, p.message)).collect();
        // The same problems as the check over records.
        let records: Vec<(&str, formats::Lined<Score>)> =
            [("f1", 1, "a", 1.0), ("f1", 2, "b", 1.0), ("f2", 1, "b", 2.0), ("f2", 2, "a", 3.0), ("f2", 3, "a", 4.0)]
                .into_iter()
                .map(|(f, line, m, v)| (f, formats::Lined { line, value: score(m, "q", v) }))
                .collect();
        let want: Vec<(String, usize, String)> =
            formats::check_scores(records.iter().map(|(f, l)| (*f, l))).into_iter().map(|p| (p.file, p.line, p.message)).collect();
        assert_eq!(got, want);
        assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(rows.table().is_err());
    }

    #[test]
    fn battles_without_a_question_are_sessions_of_their_own() {
        let b = |a: &str, b: &str, w, q: Option<&str>| Battle {
            model_a: a.into(),
            model_b: b.into(),
            winner: w,
            question_id: q.map(Into::into),
        };
        let mut rows = BattleRows::default();
        for battle in [b("y", "x", Winner::A, Some("q")), b("x", "y", Winner::Tie, None), b("x", "z", Winner::B, Some("q"))] {
            rows.push(&battle);
        }
        let (table, per_session) = rows.comparisons();
        assert_eq!(table.models, ["x", "y", "z"]);
        assert_eq!(table.sessions, ["battle 1", "q"]);
        assert_eq!(per_session, [vec![((0, 1, Winner::Tie), 1.0)], vec![((0, 1, Winner::B), 1.0), ((0, 2, Winner::B), 1.0)]]);
    }
}
