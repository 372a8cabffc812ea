//! One module per subcommand.

pub mod bench;
pub mod calibrate;
pub mod checklist;
pub mod direct;
pub mod export;
pub mod generate;
pub mod grade;
pub mod merge;
pub mod meta;
pub mod models;
pub mod pairs;
pub mod rank;
pub mod reason;
pub mod replay;
pub mod score;
pub mod serve;
pub mod site;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::output::replace_atomically_with;

/// Output formats shared by the commands that print tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[value(alias = "text")]
    Table,
    Json,
    Csv,
}

/// What every command's `run` returns: `Ok` or an error that `main` turns into a message and an
/// exit code.
pub type CliResult = anyhow::Result<()>;

/// Write `text` to `path`, creating its folder, atomically (see [`replace_atomically`]): a reader
/// never sees half a file and an interrupted run never leaves one.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(text.as_bytes()))
}

/// [`write_atomic`] with what `write` writes, as it writes it.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    replace_atomically_with(path, write)
}

/// The widest a table cell is shown, in characters: a longer one (a model name of 70,000 characters)
/// is cut with `…` for the terminal; JSON and CSV output keep the whole text.
pub const MAX_CELL_CHARS: usize = 60;

/// `cell` as a table shows it: at most [`MAX_CELL_CHARS`] characters, a cut one ending in `…`.
fn shown_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.char_indices().nth(MAX_CELL_CHARS) {
        None => cell.into(),
        Some(_) => {
            let keep = cell.char_indices().nth(MAX_CELL_CHARS - 1).map_or(cell.len(), |(i, _)| i);
            format!("{}…", &cell[..keep]).into()
        }
    }
}

/// A fixed-width text table; long cells are shortened ([`MAX_CELL_CHARS`]).
pub fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<std::borrow::Cow<'_, str>>> = rows.iter().map(|r| r.iter().map(|c| shown_cell(c)).collect()).collect();
    let header: Vec<std::borrow::Cow<'_, str>> = header.iter().map(|h| shown_cell(h)).collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    // Numeric columns (every cell starts like a number) are right-aligned, text left-aligned.
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| !rows.is_empty() && rows.iter().all(|r| r[i].starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '–')))
        .collect();
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            // Padded by hand: `format!`'s width must stay below 65,536.
            let pad = " ".repeat(width[i].saturating_sub(c.chars().count()));
            if numeric[i] {
                s.push_str(&pad);
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&pad);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(|h| h.as_ref()).collect());
    out.push_str(&line(width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect()));
    for r in &rows {
        out.push_str(&line(r.iter().map(|c| c.as_ref()).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_cell_is_shortened_for_the_table() {
        let long = "m".repeat(70_000);
        let t = text_table(&["model", "score"], &[vec![long.clone(), "1.5".into()], vec!["short".into(), "10.25".into()]]);
        let first = t.lines().nth(2).unwrap();
        assert!(first.starts_with(&format!("{}…", "m".repeat(MAX_CELL_CHARS - 1))), "{first}");
        assert_eq!(first.chars().count(), MAX_CELL_CHARS + 2 + 5, "{first}");
        assert!(t.lines().nth(3).unwrap().ends_with("10.25"));
        assert_eq!(shown_cell("é".repeat(MAX_CELL_CHARS).as_str()), "é".repeat(MAX_CELL_CHARS));
    }
}
