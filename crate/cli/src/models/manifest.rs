//! The model manifest (`models/manifest.json`, compiled in): the judges rocketjudge knows by name,
//! with their size, SHA-256 and the package-index parts they are assembled from. Parsing only (the
//! fuzz crate compiles this file by path).

use serde::Deserialize;

pub const MANIFEST: &str = include_str!("../../../../models/manifest.json");

#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub models: Vec<Entry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub name: String,
    pub display: String,
    pub architecture: String,
    pub size: u64,
    pub sha256: String,
    pub role: String,
    /// What the app says of this judge's rankings (`note`), and the measurement its figures come
    /// from (`measured`).
    #[allow(dead_code)]
    pub trust: Trust,
    pub source: Source,
}

/// Shown by the page (`web/lib/manifest.js`), not by the CLI: parsed here so that a manifest without
/// them fails `manifest_is_complete`.
#[derive(Debug, Clone, Deserialize)]
#[allow(dead_code)]
pub struct Trust {
    pub note: String,
    pub measured: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Source {
    pub pypi: Vec<Part>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Part {
    pub package: String,
    pub version: String,
    pub member: String,
}

pub fn manifest() -> Manifest {
    serde_json::from_str(MANIFEST).expect("models/manifest.json is valid (checked by a test)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_is_complete() {
        let m = manifest();
        assert_eq!(m.models.len(), 4);
        for e in &m.models {
            assert_eq!(e.sha256.len(), 64, "{}", e.name);
            assert!(!e.source.pypi.is_empty());
            // Every figure the app quotes names its measurement, and the report it names exists.
            assert!(!e.trust.note.is_empty() && !e.trust.measured.is_empty(), "{}", e.name);
            for doc in e.trust.measured.split_whitespace().filter(|w| w.starts_with("docs/")) {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(doc.trim_end_matches(['.', ',', ';']));
                assert!(path.is_file(), "{}: {} does not exist", e.name, path.display());
            }
            let report = format!("docs/quality/{}-s6.md", e.name);
            assert!(e.trust.measured.contains(&report), "{}: its trust note should cite {report}", e.name);
        }
    }
}
