//! The bench report as a table: the matmul sweep, the workload line, a row per engine, how
//! llama.cpp ran, and the ratios.

use serde_json::Value;

use super::{is_cpu, Args};
use crate::commands::text_table;

pub(super) fn print_table(a: &Args, threads: usize, report: &Value) {
    let ours = &report["rocketjudge"];
    let f = |v: &Value, k: &str| v[k].as_f64().map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
    let mib = |v: &Value| v["peak_rss_bytes"].as_f64().map(|b| format!("{:.0}", b / 1048576.0)).unwrap_or_else(|| "–".into());
    let pct = |v: &Value, k: &str| v[k].as_f64().map(|x| format!("{:.1}%", x * 100.0)).unwrap_or_else(|| "unknown".into());
    if let Some(s) = report.get("matmul") {
        println!(
            "matrix products on {}: x[{}×{}] · W[{}×{}]ᵀ (GEMM) and 1 row (GEMV), {} repetitions each",
            ours["backend"].as_str().unwrap_or(""),
            s["m"],
            s["k"],
            s["n"],
            s["k"],
            s["repetitions"]
        );
        let rows: Vec<Vec<String>> = s["types"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                vec![t["type"].as_str().unwrap_or("").to_string(), f(t, "gemm_gflops"), f(t, "gemv_gflops"), f(t, "gemv_weight_gb_per_s")]
            })
            .collect();
        print!("{}", text_table(&["type", "GEMM GFLOP/s", "GEMV GFLOP/s", "GEMV GB/s (weights)"], &rows));
        println!(
            "empty sync {:.3} ms; one tiny op (add of 256 values) {:.3} ms\n",
            s["empty_sync_ms"].as_f64().unwrap_or(0.0),
            s["tiny_op_ms"].as_f64().unwrap_or(0.0)
        );
    }
    let cpu = is_cpu(ours);
    println!(
        "{} · prefix {} tokens, {} items × {:.1} tokens{}, median of {} (load {:.1}s, prefill chunks of {})",
        a.model,
        report["workload"]["prefix_tokens"],
        a.items,
        report["workload"]["suffix_tokens"].as_f64().unwrap_or(0.0),
        if cpu { format!(", {threads} threads") } else { String::new() },
        a.repeat,
        ours["load_s"].as_f64().unwrap_or(0.0),
        ours["chunk"]
    );
    println!(
        "peak: {} — {}",
        ours["peak_tflops"].as_f64().map(|p| format!("{p:.3} T(FL)OP/s")).unwrap_or_else(|| "unknown".into()),
        ours["peak_source"].as_str().unwrap_or("")
    );
    if let Some(amx) = ours["amx"].as_str() {
        println!("AMX: {amx}");
    }
    let mut rows = vec![vec![
        format!("rocketjudge ({})", ours["backend"].as_str().unwrap_or("")),
        f(ours, "prefill_tokens_per_s"),
        f(ours, "items_per_s"),
        f(ours, "seconds_per_response"),
        f(ours, "decode_tokens_per_s"),
        f(ours, "prefill_gflops"),
        f(ours, "gflops"),
        pct(ours, "fraction_of_peak"),
        mib(ours),
    ]];
    if let Some(r) = report.get("llama_cpp") {
        rows.push(vec![
            format!(
                "llama.cpp {} on {} (prefix KV reused; {})",
                r["llama_cpp_python"].as_str().unwrap_or(""),
                r["device"].as_str().unwrap_or("cpu"),
                llama_settings(&r["settings"])
            ),
            f(r, "prefill_tokens_per_s"),
            f(r, "items_per_s"),
            f(r, "seconds_per_response"),
            f(r, "decode_tokens_per_s"),
            "–".into(),
            "–".into(),
            "–".into(),
            mib(r),
        ]);
        if let Some(s) = r["scratch_s"].as_f64() {
            rows.push(vec![
                "llama.cpp (prefix re-run per item)".into(),
                "–".into(),
                format!("{:.2}", a.items as f64 / s),
                format!("{s:.2}"),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
            ]);
        }
    }
    print!(
        "{}",
        text_table(
            &["engine", "prefill tok/s", "items/s", "s/response", "decode tok/s", "prefill GFLOP/s", "GFLOP/s", "of peak", "peak RSS MiB"],
            &rows
        )
    );
    print_op_times(&ours["op_times"], threads);
    let c = &report["cpu_ceiling"];
    if let (Some(cx), Some(mx)) = (c["compute_gmacs"]["speedup"].as_f64(), c["memory_gbs"]["speedup"].as_f64()) {
        let f = |v: &Value| v.as_f64().unwrap_or(0.0);
        println!(
            "alone, nothing to wait for, 1 thread → {1}: the product kernel ({0}) from the caches {2:.1} → {3:.1} GMAC/s \
             (×{cx:.2}), a read from memory {4:.1} → {5:.1} GB/s (×{mx:.2}): what this CPU gives {1}",
            c["kernel"].as_str().unwrap_or("?"),
            threads_phrase(&c["threads"]),
            f(&c["compute_gmacs"]["one_thread"]),
            f(&c["compute_gmacs"]["all_threads"]),
            f(&c["memory_gbs"]["one_thread"]),
            f(&c["memory_gbs"]["all_threads"]),
        );
    } else if report.get("cpu_ceiling").is_some() {
        println!("--cpu-ceiling: the CPU backend only");
    }
    let r = &report["llama_cpp"];
    if let Some(pilot) = r["pilot"].as_array().filter(|p| !p.is_empty()) {
        let tried: Vec<String> = pilot
            .iter()
            .map(|p| format!("{} {:.1} tok/s", threads_phrase(&p["threads"]), p["prefix_tokens_per_s"].as_f64().unwrap_or(0.0)))
            .collect();
        println!("llama.cpp's thread count from a pilot on {} tokens of the prefix: {}", pilot[0]["tokens"], tried.join(", "));
    }
    if let Some(runs) = r["runs"].as_array().filter(|r| r.len() > 1) {
        let each: Vec<String> = runs
            .iter()
            .map(|run| {
                let (pre, items) = (run["prefill_s"].as_f64().unwrap_or(0.0), run["items_s"].as_f64().unwrap_or(0.0));
                format!(
                    "flash attention {}: prefill {:.2} tok/s, {:.2} s/response",
                    if run["settings"]["flash_attn"].as_bool().unwrap_or(false) { "on" } else { "off" },
                    report["workload"]["prefix_tokens"].as_f64().unwrap_or(0.0) / pre,
                    pre + items
                )
            })
            .collect();
        println!("llama.cpp's workload both ways — {}; its row is the faster response", each.join("; "));
    }
    if let Some(b) = r.get("best_prefill") {
        println!(
            "llama.cpp's prefill figure is from its faster prefill, {} (the rest of its row from the faster response)",
            llama_settings(&b["settings"])
        );
    }
    if let Some(r) = report.get("ratio") {
        println!(
            "ratio: prefill throughput ×{:.2} of llama.cpp; seconds per response ×{:.2} faster{}",
            r["prefill_tokens_per_s"].as_f64().unwrap(),
            r["speedup_seconds_per_response"].as_f64().unwrap(),
            r["decode_tokens_per_s"].as_f64().map(|d| format!("; decode ×{d:.2} of llama.cpp")).unwrap_or_default()
        );
    }
}

/// `--op-times`: where a repetition's wall time went, operation by operation; with `--splits`, how
/// each operation's parallel work spread over the `threads` (or, replayed, the speed-up its split
/// allows).
fn print_op_times(t: &Value, threads: usize) {
    let Some(ops) = t["ops"].as_array() else { return };
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let ms = |v: &Value| format!("{:.1}", f(v) * 1e3);
    let share = |v: &Value| format!("{:.1}%", f(v) * 100.0);
    let splits = &t["splits"];
    let replay = splits["split_as"].as_u64();
    let mut header = vec!["operation", "calls", "ms", "share"];
    if splits.is_object() {
        header.extend(["regions", "tasks a region"]);
        match replay {
            Some(_) => header.push("speed-up its split allows"),
            None => header.extend(["work ms (every thread)", "busiest worker ms", "pool's own ms", "balance"]),
        }
    }
    // A row with no parallel step ends in dashes as long as the header.
    let serial = |mut row: Vec<String>| {
        if splits.is_object() {
            row.push("serial".into());
            row.resize(header.len(), "–".into());
        }
        row
    };
    let mut rows: Vec<Vec<String>> = ops
        .iter()
        .map(|o| {
            let mut row =
                vec![o["op"].as_str().unwrap_or("").to_string(), format!("{:.0}", f(&o["calls"])), ms(&o["seconds"]), share(&o["share"])];
            let s = &o["splits"];
            if f(&s["regions"]) == 0.0 {
                row = serial(row);
            } else if splits.is_object() {
                row.extend([format!("{:.0}", f(&s["regions"])), format!("{:.1}", f(&s["tasks"]) / f(&s["regions"]))]);
                match replay {
                    Some(_) => row.push(format!("×{:.2}", f(&o["seconds"]) / f(&s["bound_s"]))),
                    None => row.extend([
                        ms(&s["work_s"]),
                        ms(&s["busiest_s"]),
                        format!("{:.1}", (f(&s["wall_s"]) - f(&s["busiest_s"])) * 1e3),
                        format!("{:.0}%", f(&s["work_s"]) / threads as f64 / f(&s["busiest_s"]) * 100.0),
                    ]),
                }
            }
            row
        })
        .collect();
    rows.push(serial(vec!["outside every operation".into(), "–".into(), ms(&t["outside_s"]), share(&t["outside_share"])]));
    println!("where a repetition's {} ms went (prefill, items and decode; wall time on the calling thread):", ms(&t["wall_s"]));
    print!("{}", text_table(&header, &rows));
    match replay {
        Some(p) => println!(
            "the work split as for {p} threads, each task timed on one thread and replayed on {p} workers (each task, in \
             order, to the first free one; the pool's own costs left out): a repetition could take {} ms, ×{:.2} \
             (timing the tasks took {} ms of the wall time, left out)",
            ms(&splits["bound_s"]),
            (f(&t["wall_s"]) - f(&splits["instrument_s"])) / f(&splits["bound_s"]),
            ms(&splits["instrument_s"])
        ),
        None if splits.is_object() => println!(
            "on {threads} threads: a parallel step is at least its busiest worker's work; the pool's own time is the rest of \
             its wall time (waking, stealing, joining); balance = the work ÷ {threads} ÷ the busiest worker's"
        ),
        None => {}
    }
}

/// "2 threads, flash attention on, batch 1556 (physical 512)" from llama_cpp_bench.py's settings.
fn llama_settings(s: &Value) -> String {
    let mut out = format!(
        "{}, flash attention {}",
        threads_phrase(&s["threads"]),
        if s["flash_attn"].as_bool().unwrap_or(false) { "on" } else { "off" }
    );
    if let (Some(b), Some(u)) = (s["n_batch"].as_u64(), s["n_ubatch"].as_u64()) {
        out += &format!(", batch {b} (physical {u})");
    }
    out
}

/// "1 thread", "2 threads".
fn threads_phrase(n: &Value) -> String {
    let n = n.as_u64().unwrap_or(0);
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::llama_settings;

    /// The llama.cpp row names the settings it ran under (the batch only where they give it).
    #[test]
    fn the_reference_row_names_its_settings() {
        let s = serde_json::json!({"threads": 1, "flash_attn": true, "n_batch": 1580, "n_ubatch": 512});
        assert_eq!(llama_settings(&s), "1 thread, flash attention on, batch 1580 (physical 512)");
        assert_eq!(llama_settings(&serde_json::json!({"threads": 2, "flash_attn": false})), "2 threads, flash attention off");
    }
}
