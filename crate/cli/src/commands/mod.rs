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

use std::path::Path;

use anyhow::{Context, Result};

use crate::output::replace_atomically;

/// Output formats shared by the commands that print tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[value(alias = "text")]
    Table,
    Json,
    Csv,
}

/// Write `text` to `path`, creating its folder, atomically (see [`replace_atomically`]): a reader
/// never sees half a file and an interrupted run never leaves one.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    replace_atomically(path, text.as_bytes())
}

/// A fixed-width text table.
pub fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
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
            if numeric[i] {
                s.push_str(&format!("{c:>w$}", w = width[i]));
            } else {
                s.push_str(&format!("{c:<w$}", w = width[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    out.push_str(&line(width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect()));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}
