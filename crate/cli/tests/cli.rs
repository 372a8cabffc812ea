//! End-to-end tests of the `rocketjudge` binary on files: what a user runs, what they get back.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocketjudge"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run rocketjudge")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn golden_ranking() -> Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/core/ranking.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Judgments whose unsupervised scores are exactly the golden fixture's scores: one item with
/// p = (score − 1)/9 per response, one file per model.
fn judgments_from_golden(dir: &Path) {
    let g = golden_ranking();
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    for s in g["scores"].as_array().unwrap() {
        let model = s["model_test"].as_str().unwrap();
        let p = (s["score"].as_f64().unwrap() - 1.0) / 9.0;
        let line =
            json!({"session_id": s["session_id"], "model_test": model, "judge": "fixture", "norm_probability": [p], "judgment": ["x"]});
        files.entry(model.to_string()).or_default().push_str(&format!("{line}\n"));
    }
    for (m, text) in files {
        std::fs::write(dir.join(format!("{m}.jsonl")), text).unwrap();
    }
}

#[test]
fn rank_json_prints_bt_ratings_with_cis_matching_an_independent_fit() {
    let dir = tempfile::tempdir().unwrap();
    judgments_from_golden(dir.path());
    let o = run(&["rank", "--judgments", dir.path().to_str().unwrap(), "--format", "json"]);
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let g = golden_ranking();
    let models: Vec<&str> = g["models"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(rows.len(), models.len());
    let mut last = f64::INFINITY;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["rank"].as_u64().unwrap() as usize, i + 1);
        let score = r["score"].as_f64().unwrap();
        assert!(score <= last, "sorted best first");
        last = score;
        let k = models.iter().position(|m| *m == r["model"].as_str().unwrap()).unwrap();
        let tol = g["bt_tolerance"].as_f64().unwrap();
        assert!((score - g["bt"][k].as_f64().unwrap()).abs() < tol, "{r}");
        let (lo, hi) = (g["bt_ci_lower"][k].as_f64().unwrap(), g["bt_ci_upper"][k].as_f64().unwrap());
        let slack = g["bt_ci_tolerance_fraction_of_width"].as_f64().unwrap() * (hi - lo);
        assert!((r["lower"].as_f64().unwrap() - lo).abs() < slack, "{r} vs [{lo}, {hi}]");
        assert!((r["upper"].as_f64().unwrap() - hi).abs() < slack, "{r} vs [{lo}, {hi}]");
    }
}

#[test]
fn rank_methods_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    judgments_from_golden(dir.path());
    let d = dir.path().to_str().unwrap();
    let csv = stdout(&run(&["rank", "--judgments", d, "--method", "mean", "--format", "csv", "--bootstrap", "50"]));
    assert!(csv.starts_with("rank,model,score,lower,upper\n1,model-07,"), "{csv}");
    let table = stdout(&run(&["rank", "--judgments", d, "--method", "winrate", "--bootstrap", "0"]));
    assert!(table.lines().next().unwrap().starts_with("model "), "{table}");
    let elo = run(&["rank", "--judgments", d, "--method", "elo", "--bootstrap", "20"]);
    assert!(String::from_utf8_lossy(&elo.stderr).contains("order"));
    let bad = run(&["rank", "--judgments", d, "--method", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn malformed_input_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.jsonl");
    std::fs::write(
        &f,
        "{\"session_id\":\"a\",\"model_test\":\"m\",\"norm_probability\":[0.5]}\n{\"session_id\":\"b\",\"model_test\":\"m\",\"norm_probability\":[0.5, 7]}\n",
    )
    .unwrap();
    let o = run(&["rank", "--judgments", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("m.jsonl:2: field `norm_probability[1]`"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let missing = run(&["rank", "--judgments", dir.path().join("nope").to_str().unwrap()]);
    assert_ne!(missing.status.code(), Some(0));
}

#[test]
fn export_battles_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    judgments_from_golden(dir.path());
    let out = dir.path().join("out").join("battles.json");
    stdout(&run(&["export", "battles", "--judgments", dir.path().to_str().unwrap(), "--out", out.to_str().unwrap()]));
    let battles: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(battles.len(), golden_ranking()["battles"].as_array().unwrap().len());
    assert!(battles.iter().all(|b| ["model_a", "model_b", "tie"].contains(&b["winner"].as_str().unwrap())));
    // Battles feed `rank --scores`? No: they feed Arena tools; check that meta can read them as pairs.
    let o = run(&[
        "meta",
        "--judgments",
        dir.path().to_str().unwrap(),
        "--pairs",
        out.to_str().unwrap(),
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The judge agrees perfectly with battles derived from its own scores.
    assert_eq!(v["pairs"]["agreement"]["value"].as_f64(), Some(1.0));
}

#[test]
fn score_unsupervised_and_supervised() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("judgments");
    std::fs::create_dir(&j).unwrap();
    // Four models, three queries, two items; labels follow item 0.
    let mut labels = Vec::new();
    for (m, base) in [("w", 0.1), ("x", 0.4), ("y", 0.7), ("z", 0.9)] {
        let mut text = String::new();
        for q in 0..3 {
            let p0 = base + 0.02 * q as f64;
            text.push_str(&format!("{}\n", json!({"session_id": format!("q{q}"), "model_test": m, "norm_probability": [p0, 0.5]})));
            labels.push(json!({"session_id": format!("q{q}"), "model_test": m, "score": (1.0 + 9.0 * p0).round()}));
        }
        std::fs::write(j.join(format!("{m}.jsonl")), text).unwrap();
    }
    let lab = dir.path().join("labels.json");
    std::fs::write(&lab, serde_json::to_string(&labels).unwrap()).unwrap();
    let out = dir.path().join("scores");
    stdout(&run(&["score", "--judgments", j.to_str().unwrap(), "--out", out.to_str().unwrap()]));
    let w: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(out.join("w.json")).unwrap()).unwrap();
    assert!((w[0]["score"].as_f64().unwrap() - (1.0 + 9.0 * 0.3)).abs() < 1e-12);
    let sup = dir.path().join("sup");
    let o = run(&[
        "score",
        "--judgments",
        j.to_str().unwrap(),
        "--labels",
        lab.to_str().unwrap(),
        "--train-models",
        "w,z,y",
        "--out",
        sup.to_str().unwrap(),
    ]);
    stdout(&o);
    assert!(!sup.join("w.json").exists(), "training models are not scored");
    let x: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(sup.join("x.json")).unwrap()).unwrap();
    assert!(x.iter().all(|r| r["alpha"].as_f64().unwrap() > 0.0));
    // Seed 000's ablations: α = 1 (the trees alone), and each item's importance to a query's trees —
    // item 1 is 0.5 for everyone, so item 0 carries it all.
    let (fixed, imp) = (dir.path().join("fixed"), dir.path().join("importance.json"));
    let args = |alpha: &str, out: &Path| {
        let (j, lab, out, imp) = (j.to_str().unwrap(), lab.to_str().unwrap(), out.to_str().unwrap(), imp.to_str().unwrap());
        run(&["score", "--judgments", j, "--labels", lab, "--train-models", "w,z,y", "--alpha", alpha, "--importance", imp, "--out", out])
    };
    stdout(&args("1", &fixed));
    let x1: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(fixed.join("x.json")).unwrap()).unwrap();
    assert!(x1.iter().all(|r| r["alpha"] == 1.0));
    assert!(x1.iter().zip(&x).any(|(a, b)| a["score"] != b["score"]), "α = 1 changes the scores");
    let importance: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&imp).unwrap()).unwrap();
    assert_eq!(importance.len(), 3);
    for q in &importance {
        assert_eq!(
            (q["importance"][0].as_f64(), q["importance"][1].as_f64(), q["alpha"].as_f64()),
            (Some(1.0), Some(0.0), Some(1.0)),
            "{q}"
        );
    }
    let bad = args("1.5", &dir.path().join("bad"));
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("between 0 and 1"));
    // The scored files feed `rank --scores`.
    let ranked = stdout(&run(&["rank", "--scores", out.to_str().unwrap(), "--format", "json", "--bootstrap", "0"]));
    let rows: Vec<Value> = serde_json::from_str(&ranked).unwrap();
    assert_eq!(rows[0]["model"], "z");
}

#[test]
fn calibrate_follows_labels_that_reverse_two_models() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("judgments");
    std::fs::create_dir(&j).unwrap();
    // Unsupervised, a is about one point ahead of b on every query; c is far behind.
    for (m, p) in [("a", [0.6, 0.5]), ("b", [0.5, 0.38]), ("c", [0.1, 0.05])] {
        let text: String = (0..4)
            .map(|q| {
                let d = 0.02 * q as f64;
                format!("{}\n", json!({"session_id": format!("q{q}"), "model_test": m, "norm_probability": [p[0] + d, p[1] + d]}))
            })
            .collect();
        std::fs::write(j.join(format!("{m}.jsonl")), text).unwrap();
    }
    // b over a everywhere: preferences on q0 and q1, scores on q2 and q3; one label for an unknown model.
    let labels = dir.path().join("labels.jsonl");
    let lines = [
        json!({"session_id": "q0", "model_a": "a", "model_b": "b", "winner": "model_b"}),
        json!({"session_id": "q1", "model_a": "b", "model_b": "a", "winner": "model_a", "note": "b is correct"}),
        json!({"session_id": "q2", "model_test": "a", "score": 2}),
        json!({"session_id": "q2", "model_test": "b", "score": 9}),
        json!({"session_id": "q3", "model_test": "a", "score": 2}),
        json!({"session_id": "q3", "model_test": "b", "score": 9}),
        json!({"session_id": "q3", "model_test": "zed", "score": 4}),
    ];
    std::fs::write(&labels, lines.iter().map(|l| format!("{l}\n\n")).collect::<String>()).unwrap();
    let (jd, ld) = (j.to_str().unwrap(), labels.to_str().unwrap());
    let o = run(&["calibrate", "--judgments", jd, "--labels", ld, "--method", "mean", "--bootstrap", "50", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let order = |r: &Value| r["entries"].as_array().unwrap().iter().map(|e| e["model"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(order(&v["before"]), ["a", "b", "c"]);
    assert_eq!(order(&v["after"]), ["b", "a", "c"]);
    assert_eq!(v["labels_used"], 6);
    assert_eq!(v["changes"][0]["model"], "b");
    assert_eq!((v["changes"][0]["rank_before"].as_u64(), v["changes"][0]["rank_after"].as_u64()), (Some(2), Some(1)));
    assert!(v["changes"][0]["ci_width_after"].as_f64().unwrap() >= 0.0);
    // The unknown model's label is a warning at its own line of the file (blank lines between labels).
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("warning: {ld}:13: session `q3`: `zed` has no scored judgment")), "{stderr}");
    let t = stdout(&run(&["calibrate", "--judgments", jd, "--labels", ld, "--bootstrap", "0"]));
    assert!(t.contains("rank before") && t.contains("alpha") && t.contains("0.301"), "{t}");
    // A malformed label: file, line, field, what was expected; exit code 3.
    std::fs::write(
        &labels,
        "{\"session_id\":\"q0\",\"model_test\":\"a\",\"score\":3}\n{\"session_id\":\"q0\",\"model_test\":\"a\",\"score\":0}\n",
    )
    .unwrap();
    let o = run(&["calibrate", "--judgments", jd, "--labels", ld]);
    assert_eq!(o.status.code(), Some(3));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains(&format!("{ld}:2: field `score`: expected a score from 1 to 10, found 0")), "{e}");
}

#[test]
fn meta_compares_rankings() {
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.json");
    let reference = dir.path().join("ref.json");
    std::fs::write(&ours, r#"[{"model":"a","score":3,"rank":1},{"model":"b","score":2,"rank":2},{"model":"c","score":1,"rank":3},{"model":"d","score":0,"rank":4}]"#).unwrap();
    std::fs::write(&reference, r#"[{"name":"a","rating":1300,"lower":1290,"upper":1310},{"name":"b","rating":1100,"lower":1090,"upper":1110},{"name":"c","rating":1200,"lower":1190,"upper":1210},{"name":"d","rating":1000,"lower":990,"upper":1010}]"#).unwrap();
    let o = run(&["meta", "--ranking", ours.to_str().unwrap(), "--reference", reference.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((v["spearman"]["value"].as_f64().unwrap() - 0.8).abs() < 1e-12);
    assert!((v["kendall_tau_b"]["value"].as_f64().unwrap() - 4.0 / 6.0).abs() < 1e-12);
    assert_eq!(v["tau_u_pairs"], 6);
    let t = stdout(&run(&["meta", "--ranking", ours.to_str().unwrap(), "--reference", reference.to_str().unwrap(), "--u", "150"]));
    assert!(t.contains("tau_u") && t.contains("(gap <= 150)"), "{t}");
    // A sweep over u (seed 001's Fig. 2): gaps 100 (a–c, b–c, b–d), 200 (a–b, c–d), 300 (a–d); b–c is
    // the one discordant pair.
    let o = run(&[
        "meta",
        "--ranking",
        ours.to_str().unwrap(),
        "--reference",
        reference.to_str().unwrap(),
        "--u",
        "150,250,400",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sweep: Vec<(f64, f64, u64)> = v["tau_u_by_u"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["u"].as_f64().unwrap(), s["tau_u"]["value"].as_f64().unwrap(), s["pairs"].as_u64().unwrap()))
        .collect();
    for ((u, t, p), (want_t, want_p)) in sweep.iter().zip([(1.0 / 3.0, 3), (3.0 / 5.0, 5), (4.0 / 6.0, 6)]) {
        assert!((t - want_t).abs() < 1e-12 && *p == want_p, "u = {u}: {t} over {p}");
    }
    assert!(!run(&["meta", "--ranking", ours.to_str().unwrap(), "--reference", reference.to_str().unwrap(), "--u", "0,5"])
        .status
        .success());
}

/// Small judge vs strong judge: the hand-checked case of `meta::strong`'s unit tests, through files.
#[test]
fn meta_ranks_judgments_against_a_reference_resampling_queries() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("judgments");
    std::fs::create_dir(&j).unwrap();
    // One item per response, p = (score − 1)/9; q3 reverses the order the other queries agree on.
    let scores = [("a", [9.0, 8.0, 2.0]), ("b", [7.0, 7.0, 4.0]), ("c", [5.0, 3.0, 6.0]), ("d", [2.0, 2.0, 8.0])];
    for (m, per_query) in scores {
        let lines: String = per_query
            .iter()
            .enumerate()
            .map(|(q, s)| {
                format!(
                    "{}\n",
                    json!({"session_id": format!("q{q}"), "model_test": m, "judge": "fixture", "norm_probability": [(s - 1.0) / 9.0]})
                )
            })
            .collect();
        std::fs::write(j.join(format!("{m}.jsonl")), lines).unwrap();
    }
    let reference = dir.path().join("ref.json");
    std::fs::write(&reference, r#"[{"name":"a","rating":1300},{"name":"b","rating":1200},{"name":"c","rating":1100},{"name":"d","rating":1000},{"name":"e","rating":900}]"#).unwrap();
    let (j, r) = (j.to_str().unwrap(), reference.to_str().unwrap());
    let v: Value = serde_json::from_str(&stdout(&run(&[
        "meta",
        "--judgments",
        j,
        "--reference",
        r,
        "--method",
        "mean",
        "--bootstrap",
        "200",
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(v["resampled"], "queries");
    assert_eq!(v["only_reference"], json!(["e"]));
    // The point is the ranking `rank` makes, compared as `meta --ranking` compares it.
    let ranking = dir.path().join("ours.json");
    std::fs::write(&ranking, stdout(&run(&["rank", "--judgments", j, "--method", "mean", "--bootstrap", "0", "--format", "json"])))
        .unwrap();
    let whole: Value =
        serde_json::from_str(&stdout(&run(&["meta", "--ranking", ranking.to_str().unwrap(), "--reference", r, "--format", "json"])))
            .unwrap();
    assert_eq!(whole["resampled"], "models");
    assert_eq!(v["spearman"]["value"], whole["spearman"]["value"]);
    assert!((v["spearman"]["value"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    // Resampling the three queries: a replicate of q3 alone reverses the order.
    let (lo, hi) = (v["spearman"]["lower"].as_f64().unwrap(), v["spearman"]["upper"].as_f64().unwrap());
    assert!(lo < 0.0 && (hi - 1.0).abs() < 1e-12, "[{lo}, {hi}]");
    let t = stdout(&run(&["meta", "--judgments", j, "--reference", r, "--bootstrap", "50"]));
    assert!(t.contains("intervals resample the queries"), "{t}");
    let both = bin().args(["meta", "--judgments", j, "--reference", r, "--pairs", r]).output().unwrap();
    assert!(!both.status.success() && String::from_utf8_lossy(&both.stderr).contains("in a run of their own"));
}

#[test]
fn meta_strong_agreement_with_fastchat_files() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("judgments");
    std::fs::create_dir(&j).unwrap();
    // One item with p = (score − 1)/9: the judge's score is the given score.
    let ours = [("a", 1, 8.0), ("b", 1, 5.0), ("c", 1, 5.05), ("a", 2, 6.0), ("b", 2, 7.0), ("c", 2, 2.0)];
    for m in ["a", "b", "c"] {
        let lines: String = ours
            .iter()
            .filter(|o| o.0 == m)
            .map(|(_, t, s)| {
                let sid = format!("81_turn{t}");
                format!("{}\n", json!({"session_id": sid, "model_test": m, "judge": "fixture", "norm_probability": [(s - 1.0) / 9.0]}))
            })
            .collect();
        std::fs::write(j.join(format!("{m}.jsonl")), lines).unwrap();
    }
    let single = dir.path().join("gpt-4_single.jsonl");
    let strong = [("a", 1, 9), ("b", 1, 4), ("c", 1, 4), ("a", 2, 8), ("b", 2, 7), ("c", 2, 3), ("gpt", 2, 5)];
    let lines: String = strong
        .iter()
        .map(|(m, t, s)| format!("{}\n", json!({"question_id": 81, "model": m, "judge": ["gpt-4", "single-v1"], "score": s, "turn": t})))
        .collect();
    std::fs::write(&single, lines).unwrap();
    let args = |f: &Path, format: &str| {
        let v = vec!["meta", "--judgments", j.to_str().unwrap(), "--strong", f.to_str().unwrap(), "--bootstrap", "50", "--format", format];
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run_s = |v: Vec<String>| bin().args(&v).output().unwrap();
    let v: Value = serde_json::from_str(&stdout(&run_s(args(&single, "json")))).unwrap();
    let s = &v["strong"];
    // 81_turn1: all 3 pairs agree (b~c: a tie on both sides); 81_turn2: a-b disagrees.
    assert!((s["overall"]["agreement"]["value"].as_f64().unwrap() - 5.0 / 6.0).abs() < 1e-9, "{s}");
    assert_eq!(s["only_strong"], json!(["gpt"]));
    assert_eq!(s["disagreements"][0]["session_id"], "81_turn2");
    assert_eq!(s["disagreements"][0]["most_discordant"]["model_b"], "b");
    let t = stdout(&run_s(args(&single, "text")));
    assert!(t.contains("3 common models on 2 queries") && t.contains("81_turn2  agreement 0.67"), "{t}");
    assert!(t.contains("agreement by how close"), "{t}");

    // FastChat pair judgments: a beats b on turn 2 in both orders (ours: b wins); b-c on turn 1 inconsistent → tie.
    let pair = dir.path().join("gpt-4_pair.jsonl");
    std::fs::write(
        &pair,
        concat!(
            r#"{"question_id": 81, "model_1": "a", "model_2": "b", "g1_winner": "model_1", "g2_winner": "model_1", "turn": 2}"#,
            "\n",
            r#"{"question_id": 81, "model_1": "b", "model_2": "c", "g1_winner": "model_1", "g2_winner": "model_2", "turn": 1}"#,
            "\n"
        ),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&stdout(&run_s(args(&pair, "json")))).unwrap();
    assert_eq!(v["strong"]["strong_kind"], "battles");
    assert_eq!(v["strong"]["overall"]["agreement"]["value"].as_f64(), Some(0.5));

    // A malformed line: file, line and field in the message.
    std::fs::write(&pair, r#"{"question_id": 81, "model_1": "a", "model_2": "b", "g1_winner": "A", "g2_winner": "tie", "turn": 1}"#)
        .unwrap();
    let o = run_s(args(&pair, "text"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("gpt-4_pair.jsonl:1: field `g1_winner`"), "{err}");
}

#[test]
fn every_command_has_help() {
    for c in [
        &["rank", "--help"][..],
        &["score", "--help"],
        &["calibrate", "--help"],
        &["meta", "--help"],
        &["export", "battles", "--help"],
        &["site", "--help"],
        &["models", "fetch", "--help"],
    ] {
        let h = stdout(&run(c));
        assert!(h.contains("Usage:"), "{h}");
    }
    // The top-level list says what each command does: no name without a line.
    let top = stdout(&run(&["--help"]));
    let listed: Vec<&str> =
        top.lines().skip_while(|l| *l != "Commands:").skip(1).take_while(|l| !l.is_empty()).filter(|l| !l.starts_with("   ")).collect();
    assert!(listed.len() >= 15, "{top}");
    for line in listed {
        assert!(line.trim().split_once(' ').is_some_and(|(_, what)| !what.trim().is_empty()), "no description: {line:?}");
    }
}

#[test]
fn rank_battles_as_given() {
    // Seed 001's setting 3: human verdicts ranked by Bradley–Terry (win rate checked by counting).
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("human.jsonl");
    let rows = [
        ("a", "b", "model_a", "q1"),
        ("a", "c", "model_a", "q1"),
        ("b", "c", "tie", "q2"),
        ("c", "a", "model_a", "q2"),
        ("b", "a", "model_b", "q3"),
    ];
    let text: String =
        rows.iter().map(|(x, y, w, q)| format!("{}\n", json!({"model_a": x, "model_b": y, "winner": w, "question_id": q}))).collect();
    std::fs::write(&b, text).unwrap();
    let rank = |method: &str| run(&["rank", "--battles", b.to_str().unwrap(), "--method", method, "--bootstrap", "0", "--format", "json"]);
    let v: Vec<Value> = serde_json::from_str(&stdout(&rank("winrate"))).unwrap();
    // a: 3 wins of 4; c: a win, a tie, a loss; b: two losses and a tie.
    let got: Vec<(String, f64)> = v.iter().map(|r| (r["model"].as_str().unwrap().to_string(), r["score"].as_f64().unwrap())).collect();
    assert_eq!(got, [("a".to_string(), 0.75), ("c".to_string(), 0.5), ("b".to_string(), 0.5 / 3.0)]);
    let bt: Vec<Value> = serde_json::from_str(&stdout(&rank("bt"))).unwrap();
    assert_eq!(bt[0]["model"], "a");
    let o = rank("mean");
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("rank them with bt, winrate or elo, not mean (--method)"));
    // The table counts each model's battles (a: 4, b: 3, c: 3), not its responses (there are none).
    let t = stdout(&run(&["rank", "--battles", b.to_str().unwrap(), "--method", "winrate", "--bootstrap", "0"]));
    let counts: Vec<(&str, &str)> = t.lines().skip(2).map(|l| l.split_whitespace().collect::<Vec<_>>()).map(|c| (c[0], c[5])).collect();
    assert!(t.starts_with("model") && t.lines().next().unwrap().contains("battles"), "{t}");
    assert_eq!(counts, [("a", "4"), ("c", "3"), ("b", "3")], "{t}");
}
