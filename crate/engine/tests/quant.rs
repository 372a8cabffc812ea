//! Dequantization of every supported block type against gguf-py (llama.cpp's Python package),
//! on random blocks: `scripts/golden/quant_golden.py`.

mod common;

use rocketjudge_engine::quant::{dequantize, GgmlType};

#[test]
fn dequantize_matches_gguf_py() {
    let g = common::golden("quant.json");
    let rel = g["tolerance_relative"].as_f64().unwrap();
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for c in cases {
        let dtype = GgmlType::from_u32(c["ggml_type"].as_u64().unwrap() as u32).unwrap();
        let hex = c["hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        let want: Vec<f64> = c["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let mut got = vec![0f32; want.len()];
        dequantize(dtype, &bytes, &mut got);
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            let tol = rel * b.abs().max(1e-3);
            assert!((*a as f64 - b).abs() <= tol, "{dtype:?} element {i}: {a} vs {b}");
        }
    }
}
