//! Grade the parity fixtures with one model and print tokens and p(Yes): a quick look at the engine.
//! `cargo run --release -p rocketjudge-engine --example grade_one -- ~/.cache/rocketjudge/models/smollm2-135m.gguf`

use std::time::Instant;

use rocketjudge_core::formats::{jsonl::read_jsonl, Query, Response};
use rocketjudge_engine::backend::cpu::{Cpu, Precision};
use rocketjudge_engine::judge::Judge;
use rocketjudge_engine::load::judge_from_file;

fn main() {
    let path = std::env::args().nth(1).expect("model path");
    let threads: usize = std::env::args().nth(2).map(|t| t.parse().unwrap()).unwrap_or(2);
    let t0 = Instant::now();
    let precision = if std::env::var("F32").is_ok() { Precision::F32 } else { Precision::Int8 };
    let mut judge =
        judge_from_file(std::path::Path::new(&path), Cpu::with_precision(threads, precision).unwrap(), 4096, &mut |_, _| {}).unwrap();
    if let Ok(c) = std::env::var("CHUNK") {
        judge.chunk = c.parse().unwrap();
    }
    println!("loaded in {:?}; answers {:?}", t0.elapsed(), judge.answer_tokens());
    let q = std::fs::read("tests/fixtures/parity/queries.jsonl").unwrap();
    let r = std::fs::read("tests/fixtures/parity/responses.jsonl").unwrap();
    let queries: Vec<Query> = read_jsonl("q", &q).unwrap().into_iter().map(|l| l.value).collect();
    for resp in read_jsonl::<Response>("r", &r).unwrap() {
        let resp = resp.value;
        let query = queries.iter().find(|q| q.session_id == resp.session_id).unwrap();
        let t = Instant::now();
        let p = judge.prepare(query, &resp).unwrap();
        let g = pollster::block_on(judge.grade_prepared(&p)).unwrap();
        println!(
            "{} prefix {} tokens, suffixes {:?}: {:?} in {:?}",
            resp.session_id,
            p.prefix.len(),
            p.suffixes.iter().map(Vec::len).collect::<Vec<_>>(),
            g.iter().map(|x| (x.logit_yes, x.logit_no, (x.p_yes * 10000.0).round() / 10000.0)).collect::<Vec<_>>(),
            t.elapsed()
        );
        if std::env::var("SCRATCH").is_ok() {
            for sfx in &p.suffixes {
                let toks: Vec<u32> = p.prefix.iter().chain(sfx).copied().collect();
                let g = pollster::block_on(judge.grade_from_scratch(&toks)).unwrap();
                print!("{:.4} ", g.p_yes);
            }
            println!(" (from scratch)");
        }
    }
}
