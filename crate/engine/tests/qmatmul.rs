//! The integer weight products against llama.cpp's own CPU kernels, on real tensors of every weight
//! type the packaged judges hold (golden values: `scripts/golden/qmatmul_golden.py`, which calls
//! ggml's `mul_mat` through ctypes).
//!
//! llama.cpp rounds the activations to 8 bits per block before multiplying; we round the same way,
//! so our products must equal its products up to f32 summation order (relative error ~1e-6). The
//! f32 path (unrounded activations) differs from it by the rounding itself (~1e-3): the test also
//! checks that the integer path is over ten times closer, so a rounding that drifted from
//! llama.cpp's would fail here even if it stayed "close".

mod common;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use rocketjudge_engine::backend::cpu::qmatmul::{self, matmul, Kernels, QActs, QWeight};
use rocketjudge_engine::load::read_header;
use rocketjudge_engine::quant::dequantize;

/// The script's activations: xorshift32 integers in [−1000, 1000] over 997, in f32.
fn activations(m: usize, k: usize, seed: u64) -> Vec<f32> {
    let mut s = ((seed * 2654435761 + 12345) & 0xFFFF_FFFF) as u32;
    (0..m * k)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            ((s % 2001) as i32 - 1000) as f32 / 997.0
        })
        .collect()
}

/// The GGUF type and the first `rows` rows of tensor `name` of a packaged model.
fn tensor_rows(model: &str, name: &str, rows: usize) -> (rocketjudge_engine::quant::GgmlType, usize, Vec<u8>) {
    let path = common::model_path(model);
    let mut f = File::open(&path).unwrap();
    let len = f.metadata().unwrap().len();
    let g = read_header(
        |n| {
            let mut b = vec![0u8; n.min(len as usize)];
            f.seek(SeekFrom::Start(0)).unwrap();
            f.read_exact(&mut b).unwrap();
            Ok(b)
        },
        Some(len),
    )
    .unwrap();
    let info = g.tensor(name).unwrap_or_else(|| panic!("{model} has no {name}"));
    let (_, k) = info.rows_cols();
    let mut b = vec![0u8; rows * info.dtype.row_bytes(k)];
    f.seek(SeekFrom::Start(info.offset)).unwrap();
    f.read_exact(&mut b).unwrap();
    (info.dtype, k, b)
}

#[test]
fn integer_products_match_llama_cpps_kernels() {
    let g = common::golden("qmatmul.json");
    for case in g["cases"].as_array().unwrap() {
        let (model, name) = (case["model"].as_str().unwrap(), case["tensor"].as_str().unwrap());
        let (rows, m, seed) =
            (case["rows"].as_u64().unwrap() as usize, case["m"].as_u64().unwrap() as usize, case["seed"].as_u64().unwrap());
        let (dtype, k, bytes) = tensor_rows(model, name, rows);
        assert_eq!(format!("{dtype:?}").replace('_', ""), case["type"].as_str().unwrap().replace('_', ""), "{model} {name}");
        assert_eq!(k, case["k"].as_u64().unwrap() as usize);
        let want: Vec<f32> =
            case["y"].as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32)).collect();
        let scale = want.iter().fold(0f32, |a, v| a.max(v.abs()));
        let x = activations(m, k, seed);
        let w = QWeight::from_gguf(dtype, rows, k, &bytes).unwrap();
        let a = QActs::quantize(&x, m, k, w.act_kind());
        let worst = |y: &[f32]| y.iter().zip(&want).fold(0f32, |e, (a, b)| e.max((a - b).abs())) / scale;
        let mut errors = Vec::new();
        // Every kernel this CPU has (best first), the scalar reference last.
        let names = qmatmul::available();
        for kernels in names.iter().copied().map(Kernels::Named) {
            let mut y = vec![0f32; m * rows];
            matmul(&a, &w, &mut y, 2, kernels);
            let e = worst(&y);
            assert!(e <= 2e-6, "{model} {name} ({dtype:?}, {kernels:?}): max error {e:.2e} of max |y| against llama.cpp");
            errors.push(e);
        }
        // The f32 path: dequantized weights times unrounded activations.
        let mut wf = vec![0f32; rows * k];
        dequantize(dtype, &bytes, &mut wf);
        let yf: Vec<f32> = (0..m * rows).map(|i| (0..k).map(|t| x[(i / rows) * k + t] * wf[(i % rows) * k + t]).sum()).collect();
        let ef = worst(&yf);
        assert!(ef > 10.0 * errors[0], "{model} {name}: f32 path {ef:.2e} is not far from llama.cpp's rounding ({:.2e})", errors[0]);
        let per_kernel: Vec<String> = names.iter().zip(&errors).map(|(n, e)| format!("{n} {e:.1e}")).collect();
        eprintln!("{model} {name} ({dtype:?}, k={k}): {}, f32 path {ef:.1e} (max error / max |y|)", per_kernel.join(", "));
    }
}
