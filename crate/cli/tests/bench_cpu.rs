//! `rocketjudge bench --op-times` on the CPU with the SmolLM2 test judge: each operation's time a
//! repetition, and the time outside every operation. The times are taken on the calling thread, one
//! operation after another, so they add up to the repetition's wall time: an operation timed inside
//! another (counted twice) would leave a negative remainder. And `--cpu-ceiling`.

mod common;

use std::process::Command;

use common::model_path;
use serde_json::Value;

fn bench(extra: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .arg("bench")
        .arg("--model")
        .arg(model_path())
        .args(["--backend", "cpu", "--threads", "2", "--prefix-tokens", "96", "--items", "2", "--suffix-tokens", "8"])
        .args(["--repeat", "2", "--decode-tokens", "3", "--reference", "none", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn op_times_add_up_to_the_wall_time_and_name_every_operation_of_a_forward() {
    let v = bench(&["--op-times"]);
    let t = &v["rocketjudge"]["op_times"];
    let wall = t["wall_s"].as_f64().unwrap();
    let ops = t["ops"].as_array().unwrap();
    let named: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
    for op in ["embed", "rms_norm", "matmul", "rope", "add", "gated_activation", "append_cache", "attention", "logits"] {
        assert!(named.contains(&op), "{op} missing from {named:?}");
    }
    let mut inside = 0.0;
    for o in ops {
        let (s, calls) = (o["seconds"].as_f64().unwrap(), o["calls"].as_f64().unwrap());
        assert!(s >= 0.0 && calls >= 1.0, "{o}");
        assert!((o["share"].as_f64().unwrap() - s / wall).abs() < 1e-9, "{o}");
        inside += s;
    }
    let outside = t["outside_s"].as_f64().unwrap();
    assert!(outside >= 0.0, "operations timed twice: {inside} s inside of {wall} s");
    assert!((outside + inside - wall).abs() < 1e-9 * wall.max(1.0), "{t}");
    // A repetition's products: 7 per layer (Q, K, V, O, gate, up, down) for each forward, the
    // decode's whole-vocabulary heads on top; SmolLM2-135M has 30 layers.
    let matmul = ops.iter().find(|o| o["op"] == "matmul").unwrap()["calls"].as_f64().unwrap();
    assert_eq!(matmul % 1.0, 0.0, "{matmul} products a repetition");
    assert!(matmul >= 7.0 * 30.0 * 3.0, "{matmul} products a repetition");
    // Without the flags nothing is timed.
    let plain = bench(&[]);
    assert!(plain["rocketjudge"]["op_times"].is_null() && plain.get("cpu_ceiling").is_none());
}

/// `--cpu-ceiling`: the product kernel alone, on one thread and on every thread of `--threads`, from
/// the caches and from memory. The figures are the CPU's, so only their form is checked (no timing
/// asserts): every rate measured, each speed-up its ratio, the kernel the engine's.
#[test]
fn cpu_ceiling_runs_the_product_kernel_alone_on_one_thread_and_on_all() {
    let v = bench(&["--cpu-ceiling"]);
    let c = &v["cpu_ceiling"];
    assert_eq!(c["threads"], 2, "{c}");
    for side in ["compute_gmacs", "memory_gbs"] {
        let (one, all) = (c[side]["one_thread"].as_f64().unwrap(), c[side]["all_threads"].as_f64().unwrap());
        assert!(one.is_finite() && one > 0.0 && all.is_finite() && all > 0.0, "{side}: {c}");
        assert!((c[side]["speedup"].as_f64().unwrap() - all / one).abs() < 1e-9, "{side}: {c}");
    }
    assert!(c["kernel"].as_str().unwrap().starts_with("int8 "), "{c}");
    assert!(v["rocketjudge"]["op_times"].is_null());
}
