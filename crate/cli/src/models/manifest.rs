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
    pub source: Source,
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
        }
    }
}
