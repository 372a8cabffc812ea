//! `rocketjudge serve` as a hostile local client meets it, on loopback: only the app's files answer
//! (no dotfile, `.git`, `target/`, source file, or file a symlink takes outside the folder, under
//! any spelling of the path), only loopback Host names, ranges as RFC 9110 says, the policy headers
//! on every response, If-Range honoured (a stale validator gets the whole file, so a resumed download
//! never splices two versions), and bounded connections (a head deadline, a write timeout, a cap at
//! which the longest-idle connection gives way and only busy slots answer 503) so that no client can
//! take the server down, hold it or shut a user out. Every wait is a bounded loop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `rocketjudge serve` on a free loopback port, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        Self::start_with(Command::new(env!("CARGO_BIN_EXE_rocketjudge")), dir, extra)
    }

    fn start_with(mut cmd: Command, dir: &Path, extra: &[&str]) -> Server {
        let mut child = cmd.args(["serve", "--port", "0", "--dir"]).arg(dir).args(extra).stderr(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        let port = line
            .rsplit_once("127.0.0.1:")
            .and_then(|(_, p)| p.split('/').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server { child, port }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// Send `raw` and read the whole answer (the request asks to close).
    fn raw(&self, raw: &str) -> Answer {
        let mut s = self.connect();
        s.write_all(raw.as_bytes()).unwrap();
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        Answer::parse(&bytes)
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        self.raw(&(req + "\r\n"))
    }

    /// Whether the process still runs.
    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn parse(bytes: &[u8]) -> Answer {
        let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(bytes.len());
        let head = String::from_utf8_lossy(&bytes[..split]).to_string();
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        Answer { status, head, body: bytes.get(split + 4..).unwrap_or_default().to_vec() }
    }

    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// A served folder shaped like the repository: the app's files and the things that must never be
/// served beside them.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let files: &[(&str, &[u8])] = &[
        ("index.html", INDEX),
        ("web/app.js", b"export const app = 1;\n"),
        ("web/.env", b"SECRET=1"),
        ("pkg/x_bg.wasm", b"\0asm\x01\0\0\0"),
        ("benchmarks/mt-bench/queries.jsonl", b"{}\n"),
        ("models/manifest.json", b"{\"models\": []}"),
        (".git/config", b"[core]"),
        ("Cargo.toml", b"[workspace]"),
        ("target/release/rocketjudge", b"ELF"),
        ("crate/cli/src/main.rs", b"fn main() {}"),
        ("scripts/app.sh", b"#!/bin/sh"),
    ];
    for (path, bytes) in files {
        let p = r.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    std::os::unix::fs::symlink("/etc", r.join("web/etclink")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", r.join("web/passwd.js")).unwrap();
    std::os::unix::fs::symlink(r.join("Cargo.toml"), r.join("web/cargo.js")).unwrap();
    std::os::unix::fs::symlink(r.join(".git"), r.join("web/git")).unwrap();
    std::os::unix::fs::symlink(r.join("web/app.js"), r.join("web/alias.js")).unwrap();
    dir
}

const INDEX: &[u8] = b"<!doctype html><title>app</title>";

const POLICY_HEADERS: [&str; 5] =
    ["content-security-policy", "x-content-type-options", "cross-origin-opener-policy", "cross-origin-embedder-policy", "referrer-policy"];

#[test]
fn only_the_apps_files_answer_whatever_the_spelling_of_the_path() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    for ok in [
        "/",
        "/index.html",
        "/web/app.js",
        "/web/%61pp.js",
        "/web/alias.js",
        "/pkg/x_bg.wasm",
        "/benchmarks/mt-bench/queries.jsonl",
        "/models/manifest.json",
    ] {
        let a = server.get(ok, &[]);
        assert_eq!(a.status, 200, "{ok}: {}", a.head);
    }
    assert_eq!(
        server.get("/pkg/x_bg.wasm", &[]).header("content-type").as_deref(),
        Some("application/wasm"),
        "wasm streams only with its type"
    );
    let refused = [
        "/.git/config",
        "/.git/",
        "/Cargo.toml",
        "/target/release/rocketjudge",
        "/crate/cli/src/main.rs",
        "/scripts/app.sh",
        "/web/.env",
        "/web/%2eenv",
        "/web/etclink/passwd",
        "/web/passwd.js",
        "/web/cargo.js",
        "/web/git/config",
        "/../Cargo.toml",
        "/web/../Cargo.toml",
        "/web/..%2fCargo.toml",
        "/web/%2e%2e/Cargo.toml",
        "/web/%2e%2e%2fCargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/web/..\\Cargo.toml",
        "/web%5c..%5cCargo.toml",
        "//etc/passwd",
        "/web//app.js",
        "/web/app.js%00",
        "/web/app.js%00.html",
        "/./Cargo.toml",
        "/web/./app.js",
        "/%2fetc/passwd",
        "/web/%c0%ae%c0%ae/Cargo.toml",
        "/models/../Cargo.toml",
        "/models/not-a-model.gguf",
        "/models/x.bin",
        "/web",
        "/etc/passwd",
        "/index.html/",
        "/benchmarks/other.txt",
    ];
    for no in refused {
        let a = server.get(no, &[]);
        assert!(a.status == 404 || a.status == 400, "{no} answered {}", a.head);
        assert!(
            !String::from_utf8_lossy(&a.body).contains("root:") && !String::from_utf8_lossy(&a.body).contains("[workspace]"),
            "{no} leaked"
        );
    }
    // Absolute-form and odd request targets.
    for target in ["http://127.0.0.1/Cargo.toml", "*", "Cargo.toml"] {
        let a = server.raw(&format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
        assert_ne!(a.status, 200, "{target}: {}", a.head);
    }
}

#[test]
fn only_loopback_host_names_are_answered() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    let port = server.port;
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}"), "localhost".into()] {
        assert_eq!(server.get("/", &[("Host", &host)]).status, 200, "{host}");
    }
    for host in [
        format!("attacker.example:{port}"),
        "attacker.example".into(),
        format!("127.0.0.1.nip.io:{port}"),
        format!("localhost.attacker.example:{port}"),
    ] {
        let a = server.get("/", &[("Host", &host)]);
        assert_eq!(a.status, 403, "{host}: {}", a.head);
        assert!(!String::from_utf8_lossy(&a.body).contains("<title>app"), "{host} read the page");
    }
    assert_eq!(server.raw("GET / HTTP/1.0\r\n\r\n").status, 403, "no Host at all");
    let named = Server::start(dir.path(), &["--allow-host", "judge.lan"]);
    assert_eq!(named.get("/", &[("Host", "judge.lan:8080")]).status, 200);
}

#[test]
fn ranges_methods_and_errors_carry_the_policy() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    let part = server.get("/index.html", &[("Range", "bytes=2-4")]);
    assert_eq!((part.status, part.body.as_slice()), (206, &b"doc"[..]));
    assert_eq!(part.header("content-range"), Some(format!("bytes 2-4/{}", INDEX.len())));
    for range in ["bytes=1000-2000", "bytes=0-1,4-5", "bytes=-0"] {
        let a = server.get("/index.html", &[("Range", range)]);
        assert_eq!(a.status, 416, "{range}: {}", a.head);
    }
    let post = server
        .raw(&format!("POST /index.html HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc", server.port));
    assert_eq!(post.status, 405);
    let answers = [
        server.get("/", &[]),
        server.get("/Cargo.toml", &[]),
        server.get("/", &[("Host", "attacker.example")]),
        server.get("/index.html", &[("Range", "bytes=1000-")]),
        post,
    ];
    let csp = answers[0].header("content-security-policy").unwrap();
    assert!(csp.starts_with("default-src 'none';") && csp.contains("connect-src 'self';"), "{csp}");
    for a in &answers {
        for h in POLICY_HEADERS {
            assert!(a.header(h).is_some(), "HTTP {} has no {h}: {}", a.status, a.head);
        }
        assert_eq!(a.header("content-security-policy").unwrap(), csp, "one policy on every response");
    }
    let origin = Server::start(dir.path(), &["--model-origin", "https://models.example"]);
    assert!(origin.get("/", &[]).header("content-security-policy").unwrap().contains("connect-src 'self' https://models.example;"));
}

/// Whether the server has closed `s` (reads end) within `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn a_slow_or_idle_client_is_cut_at_the_head_deadline() {
    let dir = tree();
    let server = Server::start(dir.path(), &["--head-timeout", "2"]);
    // One header line every 0.5 s: the head would take 6 s; the deadline is for the whole head.
    let mut slow = server.connect();
    slow.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let start = Instant::now();
    let mut sent_all = true;
    for i in 0..12 {
        std::thread::sleep(Duration::from_millis(500));
        if slow.write_all(format!("X-Slow-{i}: 1\r\n").as_bytes()).is_err() {
            sent_all = false;
            break;
        }
    }
    let _ = slow.write_all(b"Host: 127.0.0.1\r\n\r\n");
    let mut rest = Vec::new();
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = slow.read_to_end(&mut rest);
    let answer = Answer::parse(&rest);
    assert_ne!(answer.status, 200, "a head sent over {:?} was served (sent whole: {sent_all})", start.elapsed());
    // A connection that sends nothing, or stays idle after a request, is closed too.
    let mut idle = server.connect();
    assert!(closed_within(&mut idle, Duration::from_secs(8)), "an idle connection stayed open");
    let mut kept = server.connect();
    kept.write_all(format!("GET /web/app.js HTTP/1.1\r\nHost: localhost:{}\r\n\r\n", server.port).as_bytes()).unwrap();
    assert!(closed_within(&mut kept, Duration::from_secs(8)), "a keep-alive connection stayed open while idle");
}

/// Send a GET for `path` on `s` (kept alive) without reading the answer.
fn send_get(s: &mut TcpStream, port: u16, path: &str) {
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").as_bytes()).unwrap();
}

#[test]
fn at_the_cap_an_idle_connection_gives_way_and_only_busy_slots_answer_503() {
    let dir = tree();
    // A file far larger than the socket buffers, so a client that does not read stalls the write.
    std::fs::write(dir.path().join("web/big.bin"), vec![7u8; 64 << 20]).unwrap();
    let mut server = Server::start(dir.path(), &["--max-connections", "2", "--write-timeout", "2", "--head-timeout", "30"]);
    // One slot sends a response its client does not read; the other has sent nothing yet.
    let mut stalled = server.connect();
    send_get(&mut stalled, server.port, "/web/big.bin");
    std::thread::sleep(Duration::from_millis(300));
    let mut idle = server.connect();
    std::thread::sleep(Duration::from_millis(300));
    // A newcomer is served: the idle connection gives way, the response under way does not.
    assert_eq!(server.get("/", &[]).status, 200, "a newcomer at the cap, beside an idle connection");
    assert!(closed_within(&mut idle, Duration::from_secs(5)), "the idle connection gave its slot away");
    // Both slots sending responses: a newcomer gets a whole 503 (never a reset).
    let mut second = server.connect();
    send_get(&mut second, server.port, "/web/big.bin");
    std::thread::sleep(Duration::from_millis(300));
    let busy = server.get("/", &[]);
    assert_eq!(busy.status, 503, "a third connection while two responses are under way: {}", busy.head);
    assert!(busy.header("retry-after").is_some());
    assert_eq!(busy.body, b"too many connections; try again soon\n", "the whole answer arrives");
    // The stalled downloads are dropped after the write timeout, freeing their slots.
    let start = Instant::now();
    let mut served = false;
    while start.elapsed() < Duration::from_secs(15) && !served {
        std::thread::sleep(Duration::from_millis(250));
        served = server.get("/", &[]).status == 200;
    }
    assert!(served, "the slot of a client that stopped reading was never freed");
    assert!(closed_within(&mut stalled, Duration::from_secs(10)), "the stalled connection is closed");
    assert!(server.alive());
}

#[test]
fn a_flood_of_idle_connections_under_a_400_mb_address_limit_leaves_the_server_answering() {
    let dir = tree();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -v 400000 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_rocketjudge")]);
    let mut server = Server::start_with(cmd, dir.path(), &[]);
    let mut flood: Vec<TcpStream> = (0..300).map(|_| server.connect()).collect();
    std::thread::sleep(Duration::from_millis(500));
    assert!(server.alive(), "the server died under 300 idle connections");
    // During the flood a request is answered at once, and the oldest idle connections made room.
    assert_eq!(server.get("/", &[]).status, 200, "a request during the flood");
    let closed = flood.iter_mut().take(20).map(|s| closed_within(s, Duration::from_secs(2))).filter(|c| *c).count();
    assert_eq!(closed, 20, "the 20 oldest of 300 idle connections gave way (cap 128)");
    drop(flood);
    assert!(server.alive());
}

/// 200 connections that send a request head a byte now and then, reconnecting as soon as they are
/// closed, from their own threads; a normal client asks for the page 40 times meanwhile, each on a
/// fresh connection.
#[test]
fn a_flood_of_slow_heads_does_not_shut_the_user_out() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let open = |_| {
                    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
                    s.set_write_timeout(Some(Duration::from_millis(200))).ok()?;
                    s.write_all(b"GET / HTTP/1.1\r\n").ok()?;
                    Some(s)
                };
                let mut conns: Vec<Option<TcpStream>> = (0..50).map(open).collect();
                let mut reconnects = 0usize;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for c in conns.iter_mut() {
                        let alive = c.as_mut().is_some_and(|s| s.write_all(b"X").is_ok());
                        if !alive {
                            *c = open(0);
                            reconnects += 1;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                reconnects
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
    for _ in 0..40 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let _ = s.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").as_bytes());
        let mut bytes = Vec::new();
        let read = s.read_to_end(&mut bytes);
        match (read, Answer::parse(&bytes).status) {
            (Ok(_), 200) => ok += 1,
            (Ok(_), 503) => refused += 1,
            (r, status) => other.push(format!("{status} {r:?}")),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reconnects: usize = flood.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!(
        "during the flood: {ok} of 40 requests answered 200 within 1 s, {refused} refused 503; the flood reconnected {reconnects} times"
    );
    assert!(
        ok >= 38,
        "{ok} of 40 requests answered 200 within 1 s ({refused} refused 503, others: {other:?}; the flood reconnected {reconnects} times)"
    );
    assert!(other.is_empty(), "every refusal is a whole 503, never a reset or a timeout: {other:?}");
    assert!(reconnects > 0, "the flood's connections were closed to make room");
}

#[test]
fn a_stale_if_range_gets_the_whole_file() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    let whole = server.get("/index.html", &[]);
    let modified = whole.header("last-modified").expect("a Last-Modified to resume by");
    let fresh = server.get("/index.html", &[("Range", "bytes=2-4"), ("If-Range", &modified)]);
    assert_eq!((fresh.status, fresh.body.as_slice()), (206, &b"doc"[..]), "the validator matches: the range");
    for stale in ["\"nope\"", "W/\"x\"", "Tue, 01 Jan 2019 00:00:00 GMT"] {
        let a = server.get("/index.html", &[("Range", "bytes=0-3"), ("If-Range", stale)]);
        assert_eq!(a.status, 200, "If-Range {stale}: {}", a.head);
        assert_eq!(a.body, whole.body, "If-Range {stale}: the whole file");
    }
}

#[test]
fn oversized_heads_are_refused_and_a_wider_bind_is_warned_about() {
    let dir = tree();
    let server = Server::start(dir.path(), &[]);
    let long_target = format!("GET /index.html?{} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", "a".repeat(100_000));
    let long_header = format!("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\nConnection: close\r\n\r\n", "b".repeat(100_000));
    let many_headers = format!("GET / HTTP/1.1\r\nHost: localhost\r\n{}Connection: close\r\n\r\n", "X-A: 1\r\n".repeat(500));
    for (what, raw) in [("a 100 kB request line", long_target), ("a 100 kB header", long_header), ("500 headers", many_headers)] {
        let a = server.raw(&raw);
        assert!(a.status == 431 || a.status == 0, "{what}: {}", a.head);
    }
    assert_eq!(server.get("/", &[]).status, 200, "and the server goes on");
    // Beyond loopback: served, with a warning first.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--dir"])
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.starts_with("warning: listening on 0.0.0.0 reaches beyond this computer"), "{first}");
    assert!(second.contains("on http://0.0.0.0:"), "{second}");
}
