#!/usr/bin/env python3
"""Golden values for rocketjudge-core from reference implementations.

scipy (pearsonr, spearmanr, kendalltau), scikit-learn (LogisticRegression for Bradley–Terry as
Chatbot Arena fits it, ExtraTreesRegressor for RocketEval's supervised predictor), the
`krippendorff` package, numpy (mean, median, quantiles), and plain-Python reference versions of
Arena's online Elo and RocketEval's KL weight. Fixture data is generated here from fixed seeds and
written together with the expected values, so the Rust tests need nothing but the JSON files.

Usage: pip install numpy scipy scikit-learn krippendorff
       python3 scripts/golden/core_golden.py   # writes tests/golden/core/*.json
"""
import json
import math
import os
from collections import Counter

import numpy as np
import krippendorff
import scipy
import sklearn
from scipy import stats
from scipy.special import kl_div
from sklearn.ensemble import ExtraTreesRegressor
from sklearn.linear_model import LogisticRegression

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "core")
VERSIONS = {"numpy": np.__version__, "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "krippendorff": krippendorff.__version__ if hasattr(krippendorff, "__version__") else "?"}


def write(name, payload):
    payload = {"generated_by": "scripts/golden/core_golden.py", "versions": VERSIONS, **payload}
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(payload, f, indent=1)
        f.write("\n")


def correlations():
    rng = np.random.default_rng(1)
    cases = []
    for n, levels in [(8, None), (20, 5), (50, 3), (18, None), (100, 10)]:
        x = rng.normal(size=n)
        y = 0.6 * x + rng.normal(size=n)
        if levels:  # coarse values → ties
            x = np.round(x * levels / 3)
            y = np.round(y * levels / 3)
        cases.append({
            "x": x.tolist(), "y": y.tolist(),
            "pearson": stats.pearsonr(x, y).statistic,
            "spearman": stats.spearmanr(x, y).statistic,
            "kendall_tau_b": stats.kendalltau(x, y).statistic,
        })
    write("correlations.json", {"tolerance": 1e-10, "cases": cases})


def kripp():
    rng = np.random.default_rng(2)
    cases = []
    for raters, units, values, p_missing in [(2, 30, 5, 0.0), (4, 12, 5, 0.2), (3, 50, 10, 0.3), (5, 40, 3, 0.1)]:
        data = rng.integers(1, values + 1, size=(raters, units)).astype(float)
        data[1:] = np.where(rng.random((raters - 1, units)) < 0.5, data[0], data[1:])  # some agreement
        data[rng.random((raters, units)) < p_missing] = np.nan
        case = {"units": [[None if math.isnan(v) else v for v in data[:, u]] for u in range(units)]}
        for level in ["nominal", "ordinal", "interval", "ratio"]:
            case[level] = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        cases.append(case)
    write("krippendorff.json", {"tolerance": 1e-9, "cases": cases})


def outcome(a, b, margin=0.1):
    d = a - b
    if d == 0 or abs(d) < margin - 1e-9:
        return "tie"
    return "model_a" if d > 0 else "model_b"


def score_table(rng, n_models, n_sessions, missing=0.0):
    strength = np.linspace(0, 3, n_models)
    models = [f"model-{i:02d}" for i in range(n_models)]
    sessions = [f"q{j:03d}" for j in range(n_sessions)]
    scores = []
    for j in range(n_sessions):
        difficulty = rng.normal()
        for i in range(n_models):
            if rng.random() < missing:
                continue
            s = float(np.clip(5 + strength[i] - difficulty + rng.normal(scale=1.5), 1, 10))
            scores.append({"model_test": models[i], "session_id": sessions[j], "score": round(s, 2)})
    return models, sessions, scores


def battles_of(models, sessions, scores):
    table = {(s["model_test"], s["session_id"]): s["score"] for s in scores}
    out = []
    for q in sessions:
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                if (a, q) in table and (b, q) in table:
                    out.append((a, b, outcome(table[(a, q)], table[(b, q)]), q))
    return out


def bt_arena(models, battles, weights=None):
    """Chatbot Arena's compute_mle_elo: duplicated rows, ties as one A-win and one B-win, no penalty."""
    idx = {m: i for i, m in enumerate(models)}
    rows, ys, ws = [], [], []
    weights = weights if weights is not None else [1.0] * len(battles)
    for (a, b, w, _), wt in zip(battles, weights):
        if wt == 0:
            continue
        x = np.zeros(len(models))
        x[idx[a]] = math.log(10)
        x[idx[b]] = -math.log(10)
        for copy in range(2):
            rows.append(x)
            if w == "model_a":
                ys.append(1)
            elif w == "model_b":
                ys.append(0)
            else:
                ys.append(1 if copy == 0 else 0)
            ws.append(wt)
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-10, max_iter=10000)
    lr.fit(np.array(rows), np.array(ys), sample_weight=np.array(ws))
    c = lr.coef_[0]
    return (400 * (c - c.mean()) + 1000).tolist()


def online_elo(models, battles, k=4.0):
    r = {m: 1000.0 for m in models}
    for a, b, w, _ in battles:
        ea = 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
        sa = 1.0 if w == "model_a" else 0.0 if w == "model_b" else 0.5
        r[a] += k * (sa - ea)
        r[b] += k * (1 - sa - (1 - ea))
    return [r[m] for m in models]


def ranking():
    rng = np.random.default_rng(3)
    models, sessions, scores = score_table(rng, 8, 80, missing=0.05)
    battles = battles_of(models, sessions, scores)
    bt = bt_arena(models, battles)
    by_model = {m: [s["score"] for s in scores if s["model_test"] == m] for m in models}
    win = {m: [0.0, 0] for m in models}
    for a, b, w, _ in battles:
        pa = 1.0 if w == "model_a" else 0.0 if w == "model_b" else 0.5
        win[a][0] += pa
        win[b][0] += 1 - pa
        win[a][1] += 1
        win[b][1] += 1
    # Session bootstrap of BT with numpy's RNG: Monte Carlo, so the Rust CIs are compared with a tolerance.
    boot = []
    by_session = {}
    for bt_ in battles:
        by_session.setdefault(bt_[3], []).append(bt_)
    reps = 400
    brng = np.random.default_rng(4)
    for _ in range(reps):
        pick = brng.integers(0, len(sessions), len(sessions))
        sample = [b for j in pick for b in by_session.get(sessions[j], [])]
        boot.append(bt_arena(models, sample))
    boot = np.array(boot)
    write("ranking.json", {
        "tie_margin": 0.1,
        "scores": scores,
        "battles": [{"model_a": a, "model_b": b, "winner": w, "question_id": q} for a, b, w, q in battles],
        "models": models,
        "bt": bt,
        "bt_tolerance": 0.05,
        "bt_ci_lower": np.quantile(boot, 0.025, axis=0).tolist(),
        "bt_ci_upper": np.quantile(boot, 0.975, axis=0).tolist(),
        "bt_ci_reps": reps,
        "bt_ci_tolerance_fraction_of_width": 0.2,
        "mean": [float(np.mean(by_model[m])) for m in models],
        "median": [float(np.median(by_model[m])) for m in models],
        "winrate": [win[m][0] / win[m][1] for m in models],
        "elo": online_elo(models, battles),
        "tolerance": 1e-9,
    })


def rocketeval_weight(labels, num_classes=10):
    """RocketEval's kl_uniform_weight, verbatim in behaviour."""
    uniform = np.ones(num_classes) / num_classes
    max_kl = kl_div([1.0] + [0.0] * (num_classes - 1), uniform).sum()
    counts = Counter(labels)
    hist = np.array(list(counts.values()))
    hist = hist / hist.sum()
    hist = np.pad(hist, (0, num_classes - hist.shape[0]), "constant")
    return (max_kl - kl_div(hist, uniform).sum()) / max_kl


def supervised():
    rng = np.random.default_rng(5)
    cases = []
    for n_train, n_items in [(12, 6), (30, 8), (60, 5)]:
        x = rng.random((n_train, n_items))
        w = rng.random(n_items)
        y = np.clip(np.round(1 + 9 * (x @ w) / w.sum() + rng.normal(scale=0.8, size=n_train)), 1, 10)
        test = rng.random((10, n_items))
        # Many trees: the ensemble average converges, so an independent implementation must agree closely.
        et = ExtraTreesRegressor(n_estimators=2000, max_depth=2, random_state=0).fit(x, y)
        cases.append({
            "x": x.tolist(), "y": y.tolist(), "test": test.tolist(),
            "predict_2000_trees": et.predict(test).tolist(),
            "alpha": rocketeval_weight(y.tolist()),
        })
    labels_cases = [[7, 7, 7], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [3, 8, 3, 8], [5, 6, 6, 7, 7, 7, 9]]
    write("supervised.json", {
        "tree_tolerance": 0.12,
        "cases": cases,
        "alpha_cases": [{"labels": l, "alpha": rocketeval_weight(l)} for l in labels_cases],
    })


def meta():
    rng = np.random.default_rng(6)
    # tau_u on random ratings with CIs, by a direct Python implementation of seed 001 §2.2.
    n = 15
    ref = np.sort(rng.normal(1100, 80, n))
    half = rng.uniform(5, 30, n)
    ours = ref + rng.normal(scale=60, size=n)
    out = []
    for u in [None, 40.0, 100.0]:
        c = d = ta = th = 0
        for i in range(n):
            for j in range(i + 1, n):
                if u is not None and abs(ref[i] - ref[j]) > u:
                    continue
                if not (ref[i] + half[i] < ref[j] - half[j] or ref[j] + half[j] < ref[i] - half[i]):
                    continue
                dx, dy = ours[i] - ours[j], ref[i] - ref[j]
                if dx == 0 and dy == 0:
                    continue
                if dx == 0:
                    ta += 1
                elif dy == 0:
                    th += 1
                elif (dx > 0) == (dy > 0):
                    c += 1
                else:
                    d += 1
        tau = (c - d) / math.sqrt((c + d + ta) * (c + d + th)) if (c + d + ta) * (c + d + th) else None
        out.append({"u": u, "tau_u": tau})
    write("tau_u.json", {"ours": ours.tolist(), "reference": [[r, r - h, r + h] for r, h in zip(ref, half)], "cases": out, "tolerance": 1e-12})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    correlations()
    kripp()
    ranking()
    supervised()
    meta()
    print("wrote", sorted(os.listdir(OUT)))
