//! candle-core's quantized matrix product beside ours: the same random GGUF blocks of every weight
//! type, the same shape x[m×k] · W[n×k]ᵀ, in one process, the same threads. candle is timed the way
//! its quantized models call it (`QMatMul::forward` on a tensor); ours through the CPU backend, as the
//! engine's forward calls it. Both quantize the activations to 8 bits inside the product and sum
//! integer products, so their results agree to that rounding: the `differ` column checks it.

use candle_core::quantized::{ggml_file::qtensor_from_ggml, GgmlDType, QMatMul};
use candle_core::{Device, Module, Tensor};
use rocketjudge_engine::backend::cpu::qmatmul::{random_acts, random_weight, Kernels};
use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::backend::Backend;
use rocketjudge_engine::gguf::TensorInfo;
use rocketjudge_engine::quant::GgmlType;
use serde_json::{json, Value};

fn candle_type(t: GgmlType) -> GgmlDType {
    match t {
        GgmlType::F32 => GgmlDType::F32,
        GgmlType::F16 => GgmlDType::F16,
        GgmlType::BF16 => GgmlDType::BF16,
        GgmlType::Q4_0 => GgmlDType::Q4_0,
        GgmlType::Q4_1 => GgmlDType::Q4_1,
        GgmlType::Q5_0 => GgmlDType::Q5_0,
        GgmlType::Q5_1 => GgmlDType::Q5_1,
        GgmlType::Q8_0 => GgmlDType::Q8_0,
        GgmlType::Q4K => GgmlDType::Q4K,
        GgmlType::Q5K => GgmlDType::Q5K,
        GgmlType::Q6K => GgmlDType::Q6K,
    }
}

/// GFLOP/s of the median of `reps` timed samples of `batch` calls of `f` each (after one warm-up
/// call), timed by `now` in milliseconds. Samples, not one total: a burst of other work on the
/// machine moves one sample, not the result; batches, for products shorter than a browser's timer
/// resolution.
fn gflops(rows: usize, n: usize, k: usize, reps: usize, batch: usize, now: &dyn Fn() -> f64, mut f: impl FnMut()) -> f64 {
    f();
    let mut ms: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = now();
            for _ in 0..batch {
                f();
            }
            (now() - t) / batch as f64
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    2.0 * (rows * n * k) as f64 / (ms[ms.len() / 2] / 1e3) / 1e9
}

/// Largest |a − b| over the largest |b|.
fn differ(a: &[f32], b: &[f32]) -> f64 {
    let top = b.iter().fold(0f32, |m, v| m.max(v.abs())).max(f32::MIN_POSITIVE);
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) as f64 / top as f64
}

/// Every weight type at `m,n,k` (GEMM) and at one row (GEMV): ours and candle's GFLOP/s, their
/// ratio, and how far the results differ. `threads`: ours (candle uses rayon's global pool, which
/// the caller sizes); `kernels`: ours by name (`None`: the best this CPU has).
pub fn sweep(
    m: usize,
    n: usize,
    k: usize,
    reps: usize,
    threads: usize,
    kernels: Option<&str>,
    now: &dyn Fn() -> f64,
) -> Result<Value, String> {
    let kernels = kernels.map(Kernels::named).transpose()?.unwrap_or_default();
    let mut ours = Cpu::with_precision(threads, Default::default()).map_err(|e| e.to_string())?.with_kernels(kernels);
    let x = random_acts(m, k, 7);
    let xt = Tensor::from_vec(x.clone(), (m, k), &Device::Cpu).map_err(|e| e.to_string())?;
    let x1t = Tensor::from_vec(x[..k].to_vec(), (1, k), &Device::Cpu).map_err(|e| e.to_string())?;
    let x1 = rocketjudge_engine::backend::cpu::Tensor { rows: 1, cols: k, data: x[..k].to_vec() };
    let xs = rocketjudge_engine::backend::cpu::Tensor { rows: m, cols: k, data: x };
    let mut rows = Vec::new();
    for (seed, dtype) in GgmlType::ALL.into_iter().enumerate() {
        if k % dtype.block_size() != 0 {
            continue;
        }
        let bytes = random_weight(dtype, n, k, seed as u64 + 1);
        let info = TensorInfo { name: format!("{dtype:?}"), dims: vec![k as u64, n as u64], dtype, offset: 0, n_bytes: bytes.len() as u64 };
        let w = ours.load(&info, &bytes).map_err(|e| e.to_string())?;
        let qt = qtensor_from_ggml(candle_type(dtype), &bytes, vec![n, k], &Device::Cpu).map_err(|e| e.to_string())?;
        let mm = QMatMul::from_qtensor(qt).map_err(|e| e.to_string())?;
        let y_ours = ours.matmul(&xs, &w, None).data;
        let y_candle: Vec<f32> = mm.forward(&xt).and_then(|y| y.flatten_all()?.to_vec1()).map_err(|e| e.to_string())?;
        let ours_gemm = gflops(m, n, k, reps, 1, now, || drop(ours.matmul(&xs, &w, None)));
        let candle_gemm = gflops(m, n, k, reps, 1, now, || drop(mm.forward(&xt)));
        let ours_gemv = gflops(1, n, k, reps, 50, now, || drop(ours.matmul(&x1, &w, None)));
        let candle_gemv = gflops(1, n, k, reps, 50, now, || drop(mm.forward(&x1t)));
        rows.push(json!({
            "type": format!("{dtype:?}"),
            "ours_gemm_gflops": ours_gemm, "candle_gemm_gflops": candle_gemm, "gemm_ratio": ours_gemm / candle_gemm,
            "ours_gemv_gflops": ours_gemv, "candle_gemv_gflops": candle_gemv, "gemv_ratio": ours_gemv / candle_gemv,
            "differ": differ(&y_ours, &y_candle),
        }));
    }
    Ok(json!({"m": m, "n": n, "k": k, "repetitions": reps, "threads": threads, "ours_kernels": ours.kernel_name(), "types": rows}))
}

/// The sweep as a text table.
pub fn table(r: &Value) -> String {
    let f = |v: &Value| v.as_f64().map(|x| format!("{x:.1}")).unwrap_or_default();
    let mut s = format!(
        "x[{m}×{k}] · W[{n}×{k}]ᵀ (GEMM) and 1 row (GEMV), {t} thread(s), ours: {kn}; GFLOP/s\n",
        m = r["m"],
        k = r["k"],
        n = r["n"],
        t = r["threads"],
        kn = r["ours_kernels"].as_str().unwrap_or("")
    );
    s += "type   ours GEMM  candle GEMM   ratio   ours GEMV  candle GEMV   ratio   differ\n";
    for t in r["types"].as_array().into_iter().flatten() {
        s += &format!(
            "{:<6} {:>9} {:>12} {:>7} {:>11} {:>12} {:>7} {:>8.1e}\n",
            t["type"].as_str().unwrap_or(""),
            f(&t["ours_gemm_gflops"]),
            f(&t["candle_gemm_gflops"]),
            format!("×{:.2}", t["gemm_ratio"].as_f64().unwrap_or(0.0)),
            f(&t["ours_gemv_gflops"]),
            f(&t["candle_gemv_gflops"]),
            format!("×{:.2}", t["gemv_ratio"].as_f64().unwrap_or(0.0)),
            t["differ"].as_f64().unwrap_or(f64::NAN),
        );
    }
    s
}

#[cfg(target_arch = "wasm32")]
mod web {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = performance)]
        fn now() -> f64;
    }

    /// The sweep in the browser (one thread): its JSON, or an error.
    #[wasm_bindgen]
    pub fn sweep(m: usize, n: usize, k: usize, reps: usize, kernels: Option<String>) -> Result<String, JsValue> {
        let r = super::sweep(m, n, k, reps, 1, kernels.as_deref(), &|| now()).map_err(|e| JsValue::from_str(&e))?;
        Ok(r.to_string())
    }

    #[wasm_bindgen]
    pub fn table(json: &str) -> Result<String, JsValue> {
        let r: serde_json::Value = serde_json::from_str(json).map_err(|e| JsValue::from_str(&e.to_string()))?;
        Ok(super::table(&r))
    }

    /// The kernels ours has in this module.
    #[wasm_bindgen]
    pub fn kernels() -> Vec<String> {
        rocketjudge_engine::backend::cpu::qmatmul::available().into_iter().map(String::from).collect()
    }
}
