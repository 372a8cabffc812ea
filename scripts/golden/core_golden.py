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
import itertools
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
            "importances_2000_trees": et.feature_importances_.tolist(),
            "alpha": rocketeval_weight(y.tolist()),
        })
    labels_cases = [[7, 7, 7], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [3, 8, 3, 8], [5, 6, 6, 7, 7, 7, 9]]
    write("supervised.json", {
        "tree_tolerance": 0.12,
        "importance_tolerance": 0.03,
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


def strong():
    """Our judge against a strong judge (meta::strong): a direct Python version of every point value,
    with scipy for the correlations and numpy for the closeness bins' quantile edges."""
    margin = 0.1

    def ours_verdict(a, b):
        d = a - b
        if d == 0 or abs(d) < margin - 1e-9:
            return "tie"
        return "a" if d > 0 else "b"

    def strict(a, b):
        return "tie" if a == b else ("a" if a > b else "b")

    def credit(o, s):
        return 1.0 if o == s else (0.5 if "tie" in (o, s) else 0.0)

    def nan_none(x):
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

    def analyse(ours, strong_scores=None, battles=None):
        our = {(r["model_test"], r["session_id"]): r["score"] for r in ours}
        our_models = sorted({m for m, _ in our})
        if strong_scores is not None:
            st = {(r["model_test"], r["session_id"]): r["score"] for r in strong_scores}
            strong_models = sorted({m for m, _ in st})
        else:
            strong_models = sorted({b["model_a"] for b in battles} | {b["model_b"] for b in battles})
        models = [m for m in our_models if m in strong_models]
        obs, matched = [], {}  # obs: (session, a, b, ours, strong, oa, ob, sa, sb)
        if strong_scores is not None:
            for s in sorted({q for _, q in st}):
                both = [m for m in models if (m, s) in our and (m, s) in st]
                if len(both) < 2:
                    continue
                for i, a in enumerate(both):
                    matched[(s, a)] = (our[(a, s)], st[(a, s)], 1.0)
                    for b in both[i + 1:]:
                        oa, ob, sa, sb = our[(a, s)], our[(b, s)], st[(a, s)], st[(b, s)]
                        obs.append((s, a, b, ours_verdict(oa, ob), strict(sa, sb), oa, ob, sa, sb))
        else:
            flip = {"model_a": "b", "model_b": "a", "tie": "tie"}
            keep = {"model_a": "a", "model_b": "b", "tie": "tie"}
            for bt in battles:
                s, a, b = bt["question_id"], bt["model_a"], bt["model_b"]
                if a not in models or b not in models or (a, s) not in our or (b, s) not in our:
                    continue
                w = keep[bt["winner"]]
                if a > b:
                    a, b, w = b, a, flip[bt["winner"]]
                obs.append((s, a, b, ours_verdict(our[(a, s)], our[(b, s)]), w, our[(a, s)], our[(b, s)], None, None))
                pa = {"a": 1.0, "b": 0.0, "tie": 0.5}[w]
                for m, pts in ((a, pa), (b, 1 - pa)):
                    o, p, n = matched.get((s, m), (our[(m, s)], 0.0, 0.0))
                    matched[(s, m)] = (o, p + pts, n + 1)
        sessions = sorted({o[0] for o in obs})
        agree = [float(o[3] == o[4]) for o in obs]
        cred = [credit(o[3], o[4]) for o in obs]
        mean = {}
        for m in models:
            rows = [v for (s, mm), v in matched.items() if mm == m]
            mean[m] = (float(np.mean([r[0] for r in rows])), sum(r[1] for r in rows) / sum(r[2] for r in rows))
        xs, ys = [mean[m][0] for m in models], [mean[m][1] for m in models]
        out = {
            "models": models,
            "only_ours": [m for m in our_models if m not in strong_models],
            "only_strong": [m for m in strong_models if m not in our_models],
            "queries": len(sessions),
            "pairs": len(obs),
            "agreement": float(np.mean(agree)),
            "accuracy": float(np.mean(cred)),
            "our_ties": sum(o[3] == "tie" for o in obs),
            "strong_ties": sum(o[4] == "tie" for o in obs),
            "responses": len(matched),
            "unmatched_strong": (len(st) if strong_scores is not None else len(battles)) - (len(matched) if strong_scores is not None else len(obs)),
            "unmatched_ours": len(our) - len(matched),
            "spearman": float(stats.spearmanr(xs, ys).statistic),
            "kendall_tau_b": float(stats.kendalltau(xs, ys).statistic),
            "instance_spearman": None,
            "instance_krippendorff": None,
        }
        if strong_scores is not None:
            vals = list(matched.values())
            out["instance_spearman"] = float(stats.spearmanr([v[0] for v in vals], [v[1] for v in vals]).statistic)
            out["instance_krippendorff"] = float(krippendorff.alpha(
                reliability_data=[[v[0] for v in vals], [v[1] for v in vals]], level_of_measurement="interval"))
        per_model = []
        for m in models:
            idx = [i for i, o in enumerate(obs) if m in (o[1], o[2])]
            per_model.append({
                "model": m, "ours_mean": mean[m][0], "strong_mean": mean[m][1],
                "ours_rank": 1 + sum(mean[x][0] > mean[m][0] for x in models),
                "strong_rank": 1 + sum(mean[x][1] > mean[m][1] for x in models),
                "agreement": float(np.mean([agree[i] for i in idx])), "accuracy": float(np.mean([cred[i] for i in idx])),
                "pairs": len(idx), "responses": sum(1 for (_, mm) in matched if mm == m),
            })
        per_query = []
        for s in sessions:
            idx = [i for i, o in enumerate(obs) if o[0] == s]
            ms = sorted({obs[i][1] for i in idx} | {obs[i][2] for i in idx})
            tau = None
            if strong_scores is not None and len(ms) >= 3:
                tau = nan_none(stats.kendalltau([our[(m, s)] for m in ms], [st[(m, s)] for m in ms]).statistic)
            bad = [i for i in idx if agree[i] == 0]
            # Least credit, then the largest sum of score gaps, then model order.
            worst = min(bad, key=lambda i: (cred[i], -(abs(obs[i][5] - obs[i][6]) + (abs(obs[i][7] - obs[i][8]) if obs[i][7] is not None else 0)), models.index(obs[i][1]), models.index(obs[i][2]))) if bad else None
            per_query.append({
                "session_id": s, "models": ms, "pairs": len(idx),
                "agreement": float(np.mean([agree[i] for i in idx])), "accuracy": float(np.mean([cred[i] for i in idx])),
                "kendall_tau_b": tau,
                "most_discordant": None if worst is None else [obs[worst][1], obs[worst][2]],
            })
        closeness = []
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                idx = [k for k, o in enumerate(obs) if o[1] == a and o[2] == b]
                do, ds = mean[a][0] - mean[b][0], mean[a][1] - mean[b][1]
                closeness.append({
                    "model_a": a, "model_b": b, "strong_gap": abs(ds), "ours_gap": abs(do),
                    "order_agrees": bool(np.sign(do) == np.sign(ds)),
                    "agreement": float(np.mean([agree[k] for k in idx])) if idx else None,
                    "pairs": len(idx), "queries": len({obs[k][0] for k in idx}),
                })
        gaps = np.array([c["strong_gap"] for c in closeness])
        k = min(3, len(gaps))
        edges = np.quantile(gaps, [j / k for j in range(k + 1)])
        bins, placed = [], set()
        for j in range(1, k + 1):
            members = [i for i, c in enumerate(closeness) if i not in placed and c["strong_gap"] <= edges[j]]
            if not members:
                continue
            placed |= set(members)
            n = sum(closeness[i]["pairs"] for i in members)
            agreed = sum((closeness[i]["agreement"] or 0) * closeness[i]["pairs"] for i in members)
            bins.append({"lower": float(edges[j - 1]), "upper": float(edges[j]), "model_pairs": len(members), "pairs": n,
                         "agreement": agreed / n if n else None,
                         "order_agreement": sum(closeness[i]["order_agrees"] for i in members) / len(members)})
        out.update(per_model=per_model, per_query=per_query, closeness=closeness, closeness_bins=bins)
        return out

    rng = np.random.default_rng(7)
    cases = []
    # 1. Scores: 6 common models (plus one on each side only), 25 queries, ~10% of cells missing per side.
    names = [f"m{i}" for i in range(6)]
    quality = np.linspace(3, 8, 6)
    ours, strong_scores = [], []
    for q in range(25):
        sid = f"{81 + q}_turn{1 + q % 2}"
        for m, base in zip(names, quality):
            x = base + rng.normal(scale=1.5)
            if rng.random() > 0.1:
                ours.append({"session_id": sid, "model_test": m, "score": float(np.clip(np.round((x + rng.normal(scale=1.2)) * 20) / 20, 1, 10))})
            if rng.random() > 0.1:
                strong_scores.append({"session_id": sid, "model_test": m, "score": float(np.clip(np.round(x), 1, 10))})
        ours.append({"session_id": sid, "model_test": "ours-only", "score": 5.0})
        strong_scores.append({"session_id": sid, "model_test": "gpt4-only", "score": 5.0})
    cases.append({"kind": "scores", "ours": ours, "strong": strong_scores, **analyse(ours, strong_scores=strong_scores)})
    # 2. Battles: 5 models, 20 queries, 4 random battles per query (either orientation, repeats allowed).
    names = [f"b{i}" for i in range(5)]
    strength = np.linspace(-1.5, 1.5, 5)
    ours, battles = [], []
    for q in range(20):
        sid = f"q{q:02d}"
        for m, st in zip(names, strength):
            if rng.random() > 0.1:
                ours.append({"session_id": sid, "model_test": m, "score": float(np.clip(np.round((5.5 + 1.5 * st + rng.normal(scale=1.5)) * 10) / 10, 1, 10))})
        for _ in range(4):
            i, j = rng.choice(5, size=2, replace=False)
            d = strength[i] - strength[j] + rng.normal(scale=1.0)
            w = "tie" if abs(d) < 0.3 else ("model_a" if d > 0 else "model_b")
            battles.append({"model_a": names[i], "model_b": names[j], "winner": w, "question_id": sid})
    battles.append({"model_a": "b0", "model_b": "arena-only", "winner": "model_a", "question_id": "q00"})
    cases.append({"kind": "battles", "ours": ours, "strong": battles, **analyse(ours, battles=battles)})
    write("strong.json", {"tie_margin": margin, "tolerance": 1e-10, "cases": cases})


def votes():
    """Seed 002's ten sampled verdicts (five per order): the distribution of the votes for A and the
    expected minority, from scipy's binomial."""
    cases = []
    for pf, ps in [(0.5, 0.5), (0.9, 0.3), (0.9, 0.85), (0.9, 0.2), (0.7, 0.4), (0.99, 0.02), (0.0, 1.0), (0.35, 0.6)]:
        a, b = stats.binom.pmf(range(6), 5, pf), stats.binom.pmf(range(6), 5, ps)
        split = np.convolve(a, b)
        minority = float(sum(p * min(x, 10 - x) for x, p in enumerate(split)))
        cases.append({"p_a_first": pf, "p_a_second": ps, "vote_split": split.tolist(), "inconsistency": minority})
    write("votes.json", {"tolerance": 1e-12, "cases": cases})


def decodings():
    """Seed 003's majority and median of N samples and seed 000's disagreement ratio, as exact
    expectations: the draws enumerated one sequence at a time (numpy's median, Python's counting of
    the most frequent answer, ties split evenly) and scipy's binomial for binary answers."""
    def tempered(p, t):
        logs = np.where(np.asarray(p) > 0, np.log(np.maximum(p, 1e-300)) / t, -np.inf)
        e = np.exp(logs - logs.max())
        return e / e.sum()

    def enumerate_draws(q, n):
        mode, median = np.zeros(len(q)), np.zeros(len(q))
        live = [i for i in range(len(q)) if q[i] > 0]
        for seq in itertools.product(live, repeat=n):
            pr = float(np.prod([q[i] for i in seq]))
            counts = np.bincount(seq, minlength=len(q))
            tops = np.flatnonzero(counts == counts.max())
            mode[tops] += pr / len(tops)
            s = sorted(seq)
            for i in ((s[n // 2],) if n % 2 else (s[n // 2 - 1], s[n // 2])):
                median[i] += pr / (1 if n % 2 else 2)
        return mode, median

    distributions = [
        [0.05, 0.1, 0.2, 0.3, 0.35],
        [0.0, 0.5, 0.0, 0.5, 0.0],
        [0.2, 0.2, 0.2, 0.2, 0.2],
        [0.01, 0.02, 0.03, 0.04, 0.1, 0.2, 0.3, 0.2, 0.05, 0.05],
    ]
    cases = []
    for p in distributions:
        for n, t in [(5, 1.0), (4, 0.7), (3, 2.0)]:
            q = tempered(p, t)
            mode, median = enumerate_draws(q, n)
            cases.append({"p": p, "samples": n, "temperature": t, "majority": mode.tolist(), "median": median.tolist()})
    binary = []
    for p in [0.5, 0.3, 0.8, 0.97, 0.0]:
        for n in [1, 3, 4, 5, 10]:
            majority = float(stats.binom.sf(n // 2, n, p) + (stats.binom.pmf(n // 2, n, p) / 2 if n % 2 == 0 else 0.0))
            binary.append({"p": p, "samples": n, "majority": majority, "disagreement": float(1 - stats.binom.pmf(n, n, p) - stats.binom.pmf(0, n, p))})
    write("decodings.json", {"tolerance": 1e-12, "distributions": cases, "binary": binary})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    correlations()
    kripp()
    ranking()
    supervised()
    meta()
    strong()
    votes()
    decodings()
    print("wrote", sorted(os.listdir(OUT)))
