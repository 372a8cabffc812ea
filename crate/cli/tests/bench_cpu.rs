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
        .args(["--backend", "cpu", "--prefix-tokens", "96", "--items", "2", "--suffix-tokens", "8"])
        .args(if extra.contains(&"--threads") { &[][..] } else { &["--threads", "2"][..] })
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

/// `--splits`: each operation's parallel steps beside its time. The figures are the machine's, so
/// what is checked is what must hold whatever they are: a step's busiest worker did at most the
/// work of all of them and at least their mean, and within the step's wall time; the bound is the
/// operation's time with each step cut to its busiest worker; the operations with no parallel step
/// have none.
#[test]
fn splits_give_each_operations_work_and_busiest_worker() {
    let check = |v: &Value, workers: f64| {
        let t = &v["rocketjudge"]["op_times"];
        let ops = t["ops"].as_array().unwrap();
        let mut saved = 0.0;
        for o in ops {
            let (s, sp) = (o["seconds"].as_f64().unwrap(), &o["splits"]);
            let f = |k: &str| sp[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {o}"));
            let (regions, tasks, wall, work, busiest) = (f("regions"), f("tasks"), f("wall_s"), f("work_s"), f("busiest_s"));
            match o["op"].as_str().unwrap() {
                "embed" | "append_cache" | "select_rows" => assert_eq!(regions, 0.0, "{o}"),
                "matmul" | "attention" | "rms_norm" | "rope" | "add" | "gated_activation" => assert!(regions >= 1.0, "{o}"),
                _ => {}
            }
            assert!(tasks >= regions, "{o}");
            assert!(
                busiest <= work * (1.0 + 1e-9) && busiest * workers >= work * (1.0 - 1e-9),
                "busiest outside [work / {workers}, work]: {o}"
            );
            assert!(busiest <= wall * (1.0 + 1e-9) && wall <= s * (1.0 + 1e-9), "{o}");
            assert!((f("bound_s") - (s - wall + busiest)).abs() < 1e-9, "{o}");
            saved += wall - busiest;
        }
        let (wall, instrument) = (t["wall_s"].as_f64().unwrap(), t["splits"]["instrument_s"].as_f64().unwrap());
        assert!((t["splits"]["bound_s"].as_f64().unwrap() - (wall - instrument - saved)).abs() < 1e-9, "{t}");
        // The operations, the timing and what lies outside them make up the wall time.
        let inside: f64 = ops.iter().map(|o| o["seconds"].as_f64().unwrap()).sum();
        assert!((inside + instrument + t["outside_s"].as_f64().unwrap() - wall).abs() < 1e-9 * wall.max(1.0), "{t}");
        assert!(instrument >= 0.0 && t["outside_s"].as_f64().unwrap() >= 0.0, "{t}");
    };
    // On the run's own two threads.
    let v = bench(&["--splits"]);
    check(&v, 2.0);
    assert!(v["rocketjudge"]["op_times"]["splits"]["split_as"].is_null());
    // On one thread, the work split as for 4 and replayed on 4 workers.
    let mut args: Vec<&str> = vec!["--splits", "4", "--threads", "1"];
    let v = bench(&args);
    check(&v, 4.0);
    assert_eq!(v["rocketjudge"]["op_times"]["splits"]["split_as"], 4);
    assert!(v["rocketjudge"]["backend"].as_str().unwrap().contains("1 thread, the work split as for 4"), "{}", v["rocketjudge"]["backend"]);
    // A replay needs one thread to time the tasks on: a clear refusal otherwise.
    args.truncate(2);
    let o = Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
        .args(["bench", "--model", model_path().to_str().unwrap(), "--backend", "cpu", "--threads", "2", "--reference", "none"])
        .args(&args)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--splits") && err.contains("one thread"), "{err}");
}
