//! The race between the CPU kernels (`qmatmul::race_kernels`, which the browser's engine starts):
//! in its own test binary, since the race sets the process's `Kernels::Best`.

use std::sync::OnceLock;
use std::time::Instant;

use rocketjudge_engine::backend::cpu::qmatmul::{self, random_acts, random_weight, Kernels, QActs, QWeight};
use rocketjudge_engine::quant::GgmlType;

fn now() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

/// Products of at least 32 rows race every SIMD kernel with the same result as any one of them;
/// shorter ones do not count; after 16 the race is decided, lists every kernel once, and its winner
/// is the best. Where the CPU has one SIMD kernel there is no race.
#[test]
fn a_race_runs_every_kernel_on_the_products_and_keeps_the_winner() {
    let simd: Vec<&str> = qmatmul::available().into_iter().filter(|&n| n != "int8 scalar").collect();
    let (n, k) = (64, 1536);
    let w = QWeight::from_gguf(GgmlType::Q4K, n, k, &random_weight(GgmlType::Q4K, n, k, 3)).unwrap();
    let acts = |m: usize| QActs::quantize(&random_acts(m, k, 5), m, k, w.act_kind());
    let product = |a: &QActs, kernels| {
        let mut y = vec![0f32; a.rows * n];
        qmatmul::matmul(a, &w, &mut y, 2, kernels);
        y
    };
    qmatmul::race_kernels(now);
    let short = acts(8);
    for _ in 0..20 {
        assert_eq!(product(&short, Kernels::Best), product(&short, Kernels::Named(simd[0])));
    }
    assert!(qmatmul::race_result().is_none(), "products of 8 rows do not race");
    let long = acts(32);
    let want = product(&long, Kernels::Named(simd[0]));
    for _ in 0..16 {
        assert_eq!(product(&long, Kernels::Best), want, "a raced product gives the kernels' result");
    }
    if simd.len() < 2 {
        assert!(qmatmul::race_result().is_none());
        eprintln!("one SIMD kernel here ({simd:?}): no race");
        return;
    }
    let result = qmatmul::race_result().expect("decided after 16 products");
    let mut names: Vec<&str> = result.iter().map(|r| r.0).collect();
    names.sort();
    let mut expected = simd.clone();
    expected.sort();
    assert_eq!(names, expected);
    // Each kernel's median time over the product's fastest: at least 1, the winner's the lowest.
    assert!(result.iter().all(|r| r.1 >= 1.0) && result.windows(2).all(|w| w[0].1 <= w[1].1), "{result:?}");
    assert_eq!(qmatmul::kernel_name(Kernels::Best), result[0].0);
    eprintln!("race: {result:?}");
}
