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
    assert_eq!(rank::battles(&table, &rule).collect::<Vec<_>>(), want);
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
        // Seed 000's item reweighting (Fig. 8): scikit-learn's `feature_importances_`.
        let itol = g["importance_tolerance"].as_f64().unwrap();
        for (f, (got, want)) in model.importances().iter().zip(floats(&c["importances_2000_trees"])).enumerate() {
            assert_close(*got, want, itol, &format!("case {i} importance of item {f}"));
        }
        assert_close(model.importances().iter().sum(), 1.0, 1e-9, "importances sum to 1");
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

#[test]
fn strong_agreement_matches_the_python_reference() {
    use rocketjudge_core::meta::strong::{strong_agreement, StrongVerdicts};
    let g = golden("strong.json");
    let tol = g["tolerance"].as_f64().unwrap();
    let rule = PairRule { tie_margin: g["tie_margin"].as_f64().unwrap(), ..Default::default() };
    let opts = meta::MetaOptions { bootstrap: 200, ..Default::default() };
    for c in g["cases"].as_array().unwrap() {
        let kind = c["kind"].as_str().unwrap();
        let ours: Vec<Score> = serde_json::from_value(c["ours"].clone()).unwrap();
        let strong = match kind {
            "scores" => {
                StrongVerdicts::Scores(ScoreTable::new(&serde_json::from_value::<Vec<Score>>(c["strong"].clone()).unwrap()).unwrap())
            }
            _ => StrongVerdicts::Battles(serde_json::from_value::<Vec<Battle>>(c["strong"].clone()).unwrap()),
        };
        let r = strong_agreement(&ScoreTable::new(&ours).unwrap(), &strong, &rule, &opts).unwrap();
        let close = |got: f64, want: &Value, what: &str| assert_close(got, want.as_f64().unwrap(), tol, &format!("{kind}: {what}"));
        let names = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect::<Vec<_>>();
        let count = |v: &Value| v.as_u64().unwrap() as usize;
        assert_eq!(r.models, names(&c["models"]), "{kind}");
        assert_eq!((r.only_ours.clone(), r.only_strong.clone()), (names(&c["only_ours"]), names(&c["only_strong"])), "{kind}");
        let o = &r.overall;
        assert_eq!(
            (r.queries, o.pairs, o.our_ties, o.strong_ties, o.responses),
            (count(&c["queries"]), count(&c["pairs"]), count(&c["our_ties"]), count(&c["strong_ties"]), count(&c["responses"])),
            "{kind}"
        );
        assert_eq!((r.unmatched.strong, r.unmatched.ours), (count(&c["unmatched_strong"]), count(&c["unmatched_ours"])), "{kind}");
        let mut estimates = vec![(o.agreement, &c["agreement"], "agreement"), (o.accuracy, &c["accuracy"], "accuracy")];
        estimates.extend([(o.spearman, &c["spearman"], "spearman"), (o.kendall_tau_b, &c["kendall_tau_b"], "kendall")]);
        match o.instance_spearman {
            Some(e) => estimates.push((e, &c["instance_spearman"], "instance spearman")),
            None => assert!(c["instance_spearman"].is_null(), "{kind}"),
        }
        match o.instance_krippendorff {
            Some(e) => estimates.push((e, &c["instance_krippendorff"], "instance krippendorff (interval)")),
            None => assert!(c["instance_krippendorff"].is_null(), "{kind}"),
        }
        for (e, want, what) in estimates {
            close(e.value, want, what);
            // The interval is a bootstrap of ours (no reference); it must at least hold the point.
            let (lo, hi) = (e.lower.unwrap(), e.upper.unwrap());
            assert!(lo <= e.value + 1e-12 && e.value <= hi + 1e-12, "{kind} {what}: {e:?}");
        }
        let want_models = c["per_model"].as_array().unwrap();
        assert_eq!(r.per_model.len(), want_models.len());
        for w in want_models {
            let m = r.per_model.iter().find(|m| m.model == w["model"].as_str().unwrap()).unwrap();
            close(m.ours_mean, &w["ours_mean"], "ours mean");
            close(m.strong_mean, &w["strong_mean"], "strong mean");
            close(m.agreement.value, &w["agreement"], "model agreement");
            close(m.accuracy, &w["accuracy"], "model accuracy");
            assert_eq!(
                (m.ours_rank, m.strong_rank, m.pairs, m.responses),
                (count(&w["ours_rank"]), count(&w["strong_rank"]), count(&w["pairs"]), count(&w["responses"]))
            );
        }
        let want_queries = c["per_query"].as_array().unwrap();
        assert_eq!(r.per_query.len(), want_queries.len());
        for (q, w) in r.per_query.iter().zip(want_queries) {
            assert_eq!(
                (q.session_id.as_str(), q.pairs, q.models.clone()),
                (w["session_id"].as_str().unwrap(), count(&w["pairs"]), names(&w["models"]))
            );
            close(q.agreement, &w["agreement"], "query agreement");
            close(q.accuracy, &w["accuracy"], "query accuracy");
            match (q.kendall_tau_b, w["kendall_tau_b"].as_f64()) {
                (Some(got), Some(want)) => assert_close(got, want, tol, &format!("{kind} {} kendall", q.session_id)),
                (got, want) => assert_eq!(got, want, "{kind} {}", q.session_id),
            }
            let worst = q.most_discordant.as_ref().map(|d| vec![d.model_a.clone(), d.model_b.clone()]);
            assert_eq!(worst, (!w["most_discordant"].is_null()).then(|| names(&w["most_discordant"])), "{kind} {}", q.session_id);
        }
        let mut order: Vec<&Value> = want_queries.iter().filter(|w| w["agreement"].as_f64().unwrap() < 1.0).collect();
        order.sort_by(|x, y| {
            let key = |v: &Value| (v["agreement"].as_f64().unwrap(), v["session_id"].as_str().unwrap().to_string());
            key(x).partial_cmp(&key(y)).unwrap()
        });
        let got: Vec<&str> = r.disagreements.iter().map(|q| q.session_id.as_str()).collect();
        assert_eq!(got, order.iter().map(|w| w["session_id"].as_str().unwrap()).collect::<Vec<_>>(), "{kind}");
        let want_pairs = c["closeness"].as_array().unwrap();
        assert_eq!(r.closeness.len(), want_pairs.len());
        for w in want_pairs {
            let p = r
                .closeness
                .iter()
                .find(|p| p.model_a == w["model_a"].as_str().unwrap() && p.model_b == w["model_b"].as_str().unwrap())
                .unwrap();
            close(p.strong_gap, &w["strong_gap"], "strong gap");
            close(p.ours_gap, &w["ours_gap"], "ours gap");
            assert_eq!(
                (p.order_agrees, p.pairs, p.queries),
                (w["order_agrees"].as_bool().unwrap(), count(&w["pairs"]), count(&w["queries"]))
            );
            match (p.agreement, w["agreement"].as_f64()) {
                (Some(got), Some(want)) => assert_close(got, want, tol, "pair agreement"),
                (got, want) => assert_eq!(got, want),
            }
        }
        let want_bins = c["closeness_bins"].as_array().unwrap();
        assert_eq!(r.closeness_bins.len(), want_bins.len(), "{kind}");
        for (b, w) in r.closeness_bins.iter().zip(want_bins) {
            close(b.lower, &w["lower"], "bin lower");
            close(b.upper, &w["upper"], "bin upper");
            close(b.order_agreement, &w["order_agreement"], "bin order agreement");
            close(b.agreement.unwrap(), &w["agreement"], "bin agreement");
            assert_eq!((b.model_pairs, b.pairs), (count(&w["model_pairs"]), count(&w["pairs"])));
        }
    }
}

#[test]
fn seed_002_vote_split_matches_scipy() {
    use rocketjudge_core::pairwise::{inconsistency, vote_split};
    let g = golden("votes.json");
    let tol = g["tolerance"].as_f64().unwrap();
    for c in g["cases"].as_array().unwrap() {
        let (pf, ps) = (c["p_a_first"].as_f64().unwrap(), c["p_a_second"].as_f64().unwrap());
        for (x, (got, want)) in vote_split(pf, ps).iter().zip(floats(&c["vote_split"])).enumerate() {
            assert_close(*got, want, tol, &format!("({pf}, {ps}) P(X = {x})"));
        }
        assert_close(inconsistency(pf, ps), c["inconsistency"].as_f64().unwrap(), tol, &format!("({pf}, {ps}) inconsistency"));
    }
}

/// Seed 003's majority and median of N samples (and seed 000's disagreement ratio), exact, against every
/// sequence of draws enumerated by `core_golden.py`.
#[test]
fn majority_and_median_of_samples_match_enumeration() {
    use rocketjudge_core::decoding::{disagreement, Decoding, DecodingMethod};
    let g = golden("decodings.json");
    let tol = g["tolerance"].as_f64().unwrap();
    for c in g["distributions"].as_array().unwrap() {
        let p = floats(&c["p"]);
        let (n, t) = (c["samples"].as_u64().unwrap() as u32, c["temperature"].as_f64().unwrap());
        for (method, field) in [(DecodingMethod::Majority, "majority"), (DecodingMethod::Median, "median")] {
            let d = Decoding::new(method, Some(n), Some(t), None).unwrap();
            for (i, (got, want)) in d.distribution(&p, "k").iter().zip(floats(&c[field])).enumerate() {
                assert_close(*got, want, tol, &format!("{field} of {n} at T = {t} of {p:?}: P({i})"));
            }
        }
    }
    for c in g["binary"].as_array().unwrap() {
        let (p, n) = (c["p"].as_f64().unwrap(), c["samples"].as_u64().unwrap() as u32);
        for method in [DecodingMethod::Majority, DecodingMethod::Median] {
            let d = Decoding::new(method, Some(n), None, None).unwrap();
            assert_close(d.binary(&[p], "k")[0], c["majority"].as_f64().unwrap(), tol, &format!("{method} of {n} at p = {p}"));
        }
        assert_close(disagreement(n as usize, p), c["disagreement"].as_f64().unwrap(), tol, &format!("disagreement of {n} at p = {p}"));
    }
}
