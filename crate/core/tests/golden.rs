//! Golden tests: rocketjudge-core against reference implementations (scipy, scikit-learn, the
//! `krippendorff` package, Chatbot Arena's algorithms). The values come from
//! `scripts/golden/core_golden.py`; each file states its tolerance.

use std::path::PathBuf;

use rocketjudge_core::formats::{Battle, Score};
use rocketjudge_core::meta::{self, krippendorff};
use rocketjudge_core::rank::{self, Method, PairRule, RankOptions, ScoreTable};
use rocketjudge_core::score::supervised::{kl_uniform_weight, ExtraTrees, ExtraTreesParams};
use serde_json::Value;

fn golden(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/core").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (tolerance {tol})");
}

#[test]
fn correlations_match_scipy() {
    let g = golden("correlations.json");
    let tol = g["tolerance"].as_f64().unwrap();
    for (i, c) in g["cases"].as_array().unwrap().iter().enumerate() {
        let (x, y) = (floats(&c["x"]), floats(&c["y"]));
        assert_close(meta::pearson(&x, &y), c["pearson"].as_f64().unwrap(), tol, &format!("case {i} pearson"));
        assert_close(meta::spearman(&x, &y), c["spearman"].as_f64().unwrap(), tol, &format!("case {i} spearman"));
        assert_close(meta::kendall_tau_b(&x, &y), c["kendall_tau_b"].as_f64().unwrap(), tol, &format!("case {i} kendall"));
    }
}

#[test]
fn krippendorff_matches_the_reference_package() {
    let g = golden("krippendorff.json");
    let tol = g["tolerance"].as_f64().unwrap();
    for (i, c) in g["cases"].as_array().unwrap().iter().enumerate() {
        let units: Vec<Vec<Option<f64>>> =
            c["units"].as_array().unwrap().iter().map(|u| u.as_array().unwrap().iter().map(Value::as_f64).collect()).collect();
        for level in ["nominal", "ordinal", "interval", "ratio"] {
            let a = krippendorff::alpha(&units, level.parse().unwrap()).unwrap();
            assert_close(a, c[level].as_f64().unwrap(), tol, &format!("case {i} {level}"));
        }
    }
}

fn ranking_fixture() -> (Value, ScoreTable) {
    let g = golden("ranking.json");
    let scores: Vec<Score> = serde_json::from_value(g["scores"].clone()).unwrap();
    (g, ScoreTable::new(&scores).unwrap())
}

#[test]
fn pointwise_to_pairwise_matches() {
    let (g, table) = ranking_fixture();
    let want: Vec<Battle> = serde_json::from_value(g["battles"].clone()).unwrap();
    let rule = PairRule { tie_margin: g["tie_margin"].as_f64().unwrap(), ..Default::default() };
    assert_eq!(rank::battles(&table, &rule), want);
}

fn ratings(table: &ScoreTable, method: Method, bootstrap: usize) -> Vec<(f64, Option<f64>, Option<f64>)> {
    let r = rank::rank(table, &RankOptions { method, bootstrap, ..Default::default() }).unwrap();
    table
        .models
        .iter()
        .map(|m| {
            let e = r.entries.iter().find(|e| &e.model == m).unwrap();
            (e.score, e.lower, e.upper)
        })
        .collect()
}

#[test]
fn bradley_terry_matches_arena_logistic_regression() {
    let (g, table) = ranking_fixture();
    let tol = g["bt_tolerance"].as_f64().unwrap();
    for ((got, _, _), want) in ratings(&table, Method::BradleyTerry, 0).iter().zip(floats(&g["bt"])) {
        assert_close(*got, want, tol, "BT rating");
    }
}

#[test]
fn bradley_terry_bootstrap_intervals_agree_with_an_independent_bootstrap() {
    // Both are Monte Carlo estimates (different RNGs), so each bound must agree within a fraction of
    // the interval's width.
    let (g, table) = ranking_fixture();
    let frac = g["bt_ci_tolerance_fraction_of_width"].as_f64().unwrap();
    let (lo, hi) = (floats(&g["bt_ci_lower"]), floats(&g["bt_ci_upper"]));
    for (i, (_, l, u)) in ratings(&table, Method::BradleyTerry, 1000).iter().enumerate() {
        let width = hi[i] - lo[i];
        assert_close(l.unwrap(), lo[i], frac * width, &format!("{} lower", table.models[i]));
        assert_close(u.unwrap(), hi[i], frac * width, &format!("{} upper", table.models[i]));
    }
}

#[test]
fn mean_median_winrate_elo_match() {
    let (g, table) = ranking_fixture();
    let tol = g["tolerance"].as_f64().unwrap();
    for (method, key) in [(Method::Mean, "mean"), (Method::Median, "median"), (Method::WinRate, "winrate"), (Method::Elo, "elo")] {
        for ((got, _, _), want) in ratings(&table, method, 0).iter().zip(floats(&g[key])) {
            assert_close(*got, want, tol, key);
        }
    }
}

#[test]
fn extra_trees_converge_to_scikit_learn() {
    let g = golden("supervised.json");
    let tol = g["tree_tolerance"].as_f64().unwrap();
    for (i, c) in g["cases"].as_array().unwrap().iter().enumerate() {
        let x: Vec<Vec<f64>> = c["x"].as_array().unwrap().iter().map(floats).collect();
        let y = floats(&c["y"]);
        let params = ExtraTreesParams { n_estimators: 2000, ..Default::default() };
        let model = ExtraTrees::fit(&x, &y, &params).unwrap();
        for (t, want) in c["test"].as_array().unwrap().iter().zip(floats(&c["predict_2000_trees"])) {
            assert_close(model.predict(&floats(t)), want, tol, &format!("case {i} prediction"));
        }
        assert_close(kl_uniform_weight(&y, 10), c["alpha"].as_f64().unwrap(), 1e-12, &format!("case {i} alpha"));
    }
    for c in g["alpha_cases"].as_array().unwrap() {
        assert_close(kl_uniform_weight(&floats(&c["labels"]), 10), c["alpha"].as_f64().unwrap(), 1e-12, "alpha");
    }
}

#[test]
fn tau_u_matches_a_direct_implementation() {
    let g = golden("tau_u.json");
    let ours = floats(&g["ours"]);
    let reference: Vec<(f64, f64, f64)> = g["reference"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let v = floats(r);
            (v[0], v[1], v[2])
        })
        .collect();
    for c in g["cases"].as_array().unwrap() {
        let got = meta::tau_u(&ours, &reference, c["u"].as_f64());
        match c["tau_u"].as_f64() {
            Some(want) => assert_close(got, want, 1e-12, "tau_u"),
            None => assert!(got.is_nan()),
        }
    }
}
