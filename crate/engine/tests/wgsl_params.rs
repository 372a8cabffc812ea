//! The WebGPU kernels' parameter structs and their Rust twins, held together: each `#[repr(C)]`
//! struct in `backend/webgpu/ops/` that is uploaded as a kernel's `Params` has, field for field, the
//! WGSL struct's names and scalar types, in the same order. Every field is a 4-byte scalar on both
//! sides, so equal lists are equal layouts (`#[repr(C)]` adds no padding between them); a uniform
//! struct's size is a multiple of 16 bytes, as WGSL's uniform address space lays it out.
//!
//! Read from the sources, so it runs without a GPU or the `webgpu` feature.

use std::path::Path;

/// Each Rust twin: its file under `ops/`, its name, the kernel file under `kernels/` and which
/// `struct Params` of that file (a file with sections has one per section).
const TWINS: [(&str, &str, &str, usize); 13] = [
    ("attention.rs", "Params", "attention.wgsl", 0),
    ("attention.rs", "UboParams", "attention_ubo.wgsl", 0),
    ("cache.rs", "Params", "append.wgsl", 0),
    ("eltwise.rs", "AddParams", "eltwise.wgsl", 0),
    ("eltwise.rs", "GluParams", "eltwise.wgsl", 1),
    ("logits.rs", "Params", "logits.wgsl", 0),
    ("matmul.rs", "Params", "matmul_io.wgsl", 0),
    ("matmul.rs", "UboParams", "matmul_ubo.wgsl", 0),
    ("matmul.rs", "PackParams", "pack_x.wgsl", 0),
    ("norm.rs", "Params", "norm.wgsl", 0),
    ("rope.rs", "Params", "rope.wgsl", 0),
    ("rows.rs", "EmbedParams", "embed.wgsl", 0),
    ("rows.rs", "SelectParams", "select.wgsl", 0),
];

fn source(path: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/backend/webgpu");
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The body of the `nth` `struct NAME {…}` in `text`, and what precedes the keyword on its lines
/// above (attributes), or `None`.
fn struct_body<'a>(text: &'a str, name: &str, nth: usize) -> Option<(&'a str, &'a str)> {
    let head = format!("struct {name} {{");
    let at = text.match_indices(&head).map(|(i, _)| i).nth(nth)?;
    let body = &text[at + head.len()..];
    let end = body.find('}')?;
    let before = &text[text[..at].rfind("\n\n").unwrap_or(0)..at];
    Some((&body[..end], before))
}

/// The (name, type) fields of a struct body, comments left out.
fn fields(body: &str) -> Vec<(String, String)> {
    body.lines()
        .map(|l| l.split("//").next().unwrap().trim())
        .flat_map(|l| l.split(','))
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (name, ty) = f.split_once(':').unwrap_or_else(|| panic!("a field without a type: `{f}`"));
            (name.trim().trim_start_matches("pub ").to_string(), ty.trim().to_string())
        })
        .collect()
}

#[test]
fn every_params_struct_matches_its_wgsl_twin() {
    let mut failures = Vec::new();
    for (file, name, kernel, nth) in TWINS {
        let rust = source(&format!("ops/{file}"));
        let wgsl = source(&format!("kernels/{kernel}"));
        let (Some((rust_body, attributes)), Some((wgsl_body, _))) = (struct_body(&rust, name, 0), struct_body(&wgsl, "Params", nth)) else {
            failures.push(format!("{file} {name} or {kernel} Params #{nth}: not found"));
            continue;
        };
        let (ours, theirs) = (fields(rust_body), fields(wgsl_body));
        if !attributes.contains("#[repr(C)]") {
            failures.push(format!("{file} {name}: not #[repr(C)]"));
        }
        if ours != theirs {
            failures.push(format!("{file} {name} {ours:?}\n  is not {kernel}'s Params #{nth} {theirs:?}"));
        }
        if let Some((n, t)) = ours.iter().find(|(_, t)| !matches!(t.as_str(), "u32" | "i32" | "f32")) {
            failures.push(format!("{file} {name}: field {n} is a {t}, not a 4-byte scalar (this test's layout rule)"));
        }
        if wgsl.contains("var<uniform> P: Params") && ours.len() % 4 != 0 {
            failures.push(format!("{file} {name}: {} bytes, not a multiple of 16 (a uniform struct's size)", 4 * ours.len()));
        }
    }
    // Every repr(C) struct of the kernels' files is a twin named above.
    for e in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/backend/webgpu/ops")).unwrap() {
        let path = e.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        // An attribute line, not a mention in a comment.
        for (i, _) in text.match_indices("\n#[repr(C)]") {
            let name = text[i..].split("struct ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap_or("?");
            if !TWINS.iter().any(|(f, n, _, _)| *f == file && *n == name) {
                failures.push(format!("{file}: #[repr(C)] struct {name} has no WGSL twin in this test"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_parser_sees_what_the_test_compares() {
    let rust = "#[repr(C)]\nstruct P {\n    /// doc\n    a: u32,\n    b: f32, // note\n}\n";
    let (body, attrs) = struct_body(rust, "P", 0).unwrap();
    assert!(attrs.contains("#[repr(C)]"));
    assert_eq!(fields(body), [("a".to_string(), "u32".to_string()), ("b".to_string(), "f32".to_string())]);
    let wgsl = "struct Params { x: u32, }\n//#B\nstruct Params {\n    y: f32,\n}\n";
    assert_eq!(fields(struct_body(wgsl, "Params", 1).unwrap().0), [("y".to_string(), "f32".to_string())]);
}
