//! The documentation's promises a machine can check: every relative link (and its `#anchor`) in the
//! README, CONTRIBUTING, SECURITY, ARCHITECTURE and `docs/` leads somewhere, and every command they
//! quote names what exists — each `rocketjudge` subcommand and flag (asked of the binary's own
//! `--help`), each script and test file, each repository path.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The Markdown files the docs are made of.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut out: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "SECURITY.md", "ARCHITECTURE.md"].iter().map(|f| root.join(f)).collect();
    for dir in ["docs", "docs/guide", "docs/measurements"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// Text outside fenced code blocks and inline code (where links live).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            line.split('`').step_by(2).for_each(|part| out.push_str(part));
            out.push('\n');
        }
    }
    out
}

/// Every `](target)` of `text`'s prose.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
        }
    }
    out
}

#[test]
fn every_relative_link_leads_somewhere() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for target in link_targets(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
            let file = if path.is_empty() { doc.clone() } else { doc.parent().unwrap().join(path) };
            if !file.exists() {
                failures.push(format!("{}: `{target}`: no such file", doc.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&linked).contains(anchor) {
                    failures.push(format!("{}: `{target}`: no heading with that anchor", doc.display()));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found: is the scan broken?");
    assert!(failures.is_empty(), "{} broken links:\n{}", failures.len(), failures.join("\n"));
}

/// The commands a document quotes: the lines of its ```sh blocks (continuations joined, comments
/// dropped) and its inline code that starts with `rocketjudge `, `./scripts/` or `scripts/`.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && matches!(line.trim_start_matches('`').trim(), "sh" | "bash" | "shell");
            continue;
        }
        if in_sh {
            let code = strip_comment(line);
            let (code, more) = match code.trim_end().strip_suffix('\\') {
                Some(c) => (c, true),
                None => (code, false),
            };
            pending.push_str(code);
            pending.push(' ');
            if !more {
                out.push(std::mem::take(&mut pending).trim().to_string());
            }
            continue;
        }
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 1 && ["rocketjudge ", "./scripts/", "scripts/"].iter().any(|p| part.starts_with(p)) {
                out.push(part.to_string());
            }
        }
    }
    out.into_iter().map(|c| c.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|c| !c.is_empty()).collect()
}

/// A shell line without its `# comment` (a `#` after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Each `rocketjudge` invocation in a shell line (after `|`, `;`, `&&` or a variable assignment too).
fn invocations(command: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for segment in command.split(['|', ';', '&']) {
        let words: Vec<String> = segment.split_whitespace().map(|w| w.trim_matches(['"', '\'']).to_string()).collect();
        // The command word: after variable assignments and `exec`, `env`, `time`, `nice`.
        let at = words.iter().position(|w| !w.contains('=') && !matches!(w.as_str(), "exec" | "env" | "time" | "nice" | "sudo"));
        if let Some(i) = at.filter(|&i| words[i] == "rocketjudge" || words[i].ends_with("/rocketjudge")) {
            out.push(words[i + 1..].to_vec());
        }
    }
    out
}

/// `rocketjudge <words> --help`, asked once per subcommand path.
struct Help {
    bin: PathBuf,
    cache: HashMap<Vec<String>, Option<String>>,
}

impl Help {
    fn of(&mut self, path: &[String]) -> Option<String> {
        let bin = self.bin.clone();
        self.cache
            .entry(path.to_vec())
            .or_insert_with(|| {
                let out = Command::new(&bin).args(path).arg("--help").output().unwrap();
                out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
            })
            .clone()
    }

    /// What is wrong with one invocation's words, if anything: an unknown subcommand or flag.
    fn check(&mut self, words: &[String]) -> Option<String> {
        let leading: Vec<String> = words.iter().take_while(|w| !w.starts_with('-')).cloned().collect();
        if leading.is_empty() || leading[0] == "..." {
            return None;
        }
        // The longest run of leading words that is a subcommand path (the rest are positional).
        let Some((depth, help)) = (1..=leading.len().min(2)).rev().find_map(|n| self.of(&leading[..n]).map(|h| (n, h))) else {
            return Some(format!("no subcommand `{}`", leading[0]));
        };
        for w in words.iter().filter(|w| w.starts_with("--")) {
            let flag = w.split('=').next().unwrap().trim_end_matches([',', '.', ')']);
            if flag == "--" || flag == "--help" {
                continue;
            }
            let known = help.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')).any(|t| t == flag);
            if !known {
                return Some(format!("`rocketjudge {}` has no flag {flag}", leading[..depth].join(" ")));
            }
        }
        None
    }
}

/// Repository paths a command names (`scripts/…`, `tests/…`, `crate/…`, …) without placeholders.
fn repository_paths(command: &str) -> Vec<String> {
    const DIRS: [&str; 8] = ["scripts/", "tests/", "crate/", "benchmarks/", "web/", "models/", "docs/", "data/"];
    command
        .split(|c: char| c.is_whitespace() || matches!(c, '=' | '(' | ')' | ',' | '`' | '"' | '\''))
        .map(|w| w.trim_start_matches("./").trim_end_matches([':', '.', ';']))
        .filter(|w| DIRS.iter().any(|d| w.starts_with(d)))
        .filter(|w| !w.contains(['<', '>', '*', '{', '}', '$', '…']) && !w.ends_with("..."))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_quoted_command_names_what_exists() {
    let root = root();
    let mut help = Help { bin: PathBuf::from(env!("CARGO_BIN_EXE_rocketjudge")), cache: HashMap::new() };
    let mut failures = Vec::new();
    let mut invocations_checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(&root).unwrap().display().to_string();
        for command in commands(&text) {
            for words in invocations(&command) {
                invocations_checked += 1;
                if let Some(problem) = help.check(&words) {
                    failures.push(format!("{name}: `{command}`: {problem}"));
                }
            }
            for path in repository_paths(&command) {
                // A path the command writes (after --out or `>`) need not exist yet.
                let written = command.contains(&format!("--out {path}")) || command.contains(&format!("> {path}"));
                if !written && !root.join(&path).exists() {
                    failures.push(format!("{name}: `{command}`: no {path} in the repository"));
                }
            }
            let words: Vec<&str> = command.split_whitespace().collect();
            for pair in words.windows(2).filter(|p| p[0] == "--test") {
                let exists = ["cli", "core", "engine"].iter().any(|c| root.join(format!("crate/{c}/tests/{}.rs", pair[1])).exists());
                if words.contains(&"cargo") && !exists {
                    failures.push(format!("{name}: `{command}`: no test file {}.rs", pair[1]));
                }
            }
        }
    }
    assert!(invocations_checked > 40, "only {invocations_checked} rocketjudge commands found: is the scan broken?");
    assert!(failures.is_empty(), "{} commands name what does not exist:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_checks_themselves_catch_what_they_look_for() {
    assert_eq!(slug("A tab, one machine or a cluster"), "a-tab-one-machine-or-a-cluster");
    assert_eq!(slug(" Parity with llama.cpp (CPU backend)"), "parity-with-llamacpp-cpu-backend");
    assert_eq!(link_targets("see [x](a.md#b) and `[y](code.md)`"), ["a.md#b"]);
    assert_eq!(
        commands("```sh\nrocketjudge rank \\\n  --judgments j   # note\n```\nand `rocketjudge grade --x`"),
        ["rocketjudge rank --judgments j", "rocketjudge grade --x"]
    );
    let mut help = Help { bin: PathBuf::from(env!("CARGO_BIN_EXE_rocketjudge")), cache: HashMap::new() };
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(help.check(&words("rank --judgments j --format json")), None);
    assert!(help.check(&words("rank --no-such-flag")).is_some());
    assert!(help.check(&words("no-such-command --x")).is_some());
    assert!(help.check(&words("export battles --judgments j --nope")).is_some());
    assert_eq!(help.check(&words("checklist create --queries q --out o")), None);
    assert_eq!(repository_paths("./scripts/app.sh --out docs/x/<judge>.md data/a.json"), ["scripts/app.sh", "data/a.json"]);
}
