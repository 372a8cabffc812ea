#!/usr/bin/env python3
"""Report of the judge-design measurements (issue #13; seeds 001-004) for one judge, from the runs of
scripts/quality/knobs.sh. Writes docs/quality/knobs-JUDGE.json and .md (or $KNOBS_OUT and its .md).

  python3 scripts/quality/knobs.py JUDGE

Rankings come from `rocketjudge rank` on the run folders (every evaluation type x every aggregation);
instance-level numbers are computed here from the judgment lines. Decodings (seed 003) are re-applied
to the stored distributions as core/src/decoding.rs does (greedy, exact expectation, N samples at T).
Labels: GPT-4's MT-Bench single-answer scores of the 5 bundled models (40 first-turn responses), and
the human verdicts of LLMBar's MT-Bench pairs. Only numpy is needed (pip install numpy).
"""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RJ = os.environ.get("RJ", os.path.join(ROOT, "target", "release", "rocketjudge"))
SAMPLES, REPEATS = 10, 5
REFERENCE = "claude-3-5-sonnet-20240620"  # GPT-4's best of the five, as seed 001 uses a strong reference


# ---------- statistics ----------
def ranks(x):
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def pearson(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def spearman(a, b):
    return pearson(ranks(a), ranks(b))


def kendall(a, b):
    """Kendall's tau-b."""
    n, c, d, ta, tb = len(a), 0, 0, 0, 0
    for i in range(n):
        for j in range(i + 1, n):
            x, y = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
            if x == 0 and y == 0:
                continue
            if x == 0:
                ta += 1
            elif y == 0:
                tb += 1
            elif x == y:
                c += 1
            else:
                d += 1
    den = np.sqrt((c + d + ta) * (c + d + tb))
    return float((c - d) / den) if den else float("nan")


def alpha_interval(matrix):
    """Krippendorff's alpha (interval) for complete data: rows = units, columns = repeats."""
    m = np.asarray(matrix, float)
    n_units, k = m.shape
    do = sum(((u[:, None] - u[None, :]) ** 2).sum() / (k - 1) for u in m) / (n_units * k)
    allv = m.ravel()
    de = ((allv[:, None] - allv[None, :]) ** 2).sum() / (len(allv) * (len(allv) - 1))
    return float(1 - do / de) if de else float("nan")


def boot_ci(values, reps=1000, seed=7):
    values = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    means = [values[rng.integers(0, len(values), len(values))].mean() for _ in range(reps)]
    return [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def fisher_ci(r, n):
    """The 95% interval of a Pearson correlation by Fisher's z (approximate for small n)."""
    if n < 4 or not np.isfinite(r) or abs(r) >= 1:
        return [None, None]
    z, se = np.arctanh(r), 1.96 / np.sqrt(n - 3)
    return [float(np.tanh(z - se)), float(np.tanh(z + se))]


def paired_diff_ci(a, b, y, reps=2000, seed=11):
    """Pearson(a, y) - Pearson(b, y) over the same responses, with a percentile bootstrap interval that
    resamples the responses (both scores of a response move together)."""
    a, b, y = (np.asarray(v, float) for v in (a, b, y))
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(reps):
        i = rng.integers(0, len(y), len(y))
        d = pearson(a[i], y[i]) - pearson(b[i], y[i])
        if np.isfinite(d):
            diffs.append(d)
    return float(pearson(a, y) - pearson(b, y)), [float(np.quantile(diffs, 0.025)), float(np.quantile(diffs, 0.975))]


# ---------- decodings (core/src/decoding.rs) ----------
def tempered(p, t):
    p = np.asarray(p, float)
    with np.errstate(divide="ignore"):
        logs = np.log(p) / t
    logs -= logs[np.isfinite(logs)].max()
    e = np.where(np.isfinite(logs), np.exp(logs), 0.0)
    return e / e.sum()


def decode_binary(p, how, rng):
    if how == "greedy":
        return 1.0 if p > 0.5 else 0.0 if p < 0.5 else 0.5
    if how == "expected":
        return p
    t = float(how.split("@")[1])
    pt = tempered([p, 1 - p], t)[0]
    return float((rng.random(SAMPLES) < pt).mean())


def decode_digits(d, how, rng):
    d = np.asarray(d, float)
    if how == "greedy":
        return float(np.argmax(d))
    if how == "expected":
        return float((np.arange(len(d)) * d).sum() / d.sum())
    t = float(how.split("@")[1])
    return float(rng.choice(len(d), size=SAMPLES, p=tempered(d, t)).mean())


def spread(d):
    d = np.asarray(d, float)
    mu = (np.arange(len(d)) * d).sum()
    return float(np.sqrt((d * (np.arange(len(d)) - mu) ** 2).sum()))


# ---------- reading ----------
def jl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def folder_rows(folder):
    rows = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            rows.extend(jl(os.path.join(folder, name)))
    return rows


def rank_cli(folder, method, scores=False):
    args = [RJ, "rank", "--scores" if scores else "--judgments", folder, "--method", method, "--bootstrap", "0", "--format", "json"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {e["model"]: e["score"] for e in json.loads(out)}


def main():
    judge = sys.argv[1]
    runs = os.path.join(ROOT, ".cache", "quality", f"knobs-{judge}")
    inputs = os.path.join(ROOT, ".cache", "quality", "knobs-inputs")
    have = lambda name: os.path.isdir(os.path.join(runs, name)) and any(f.endswith(".jsonl") for f in os.listdir(os.path.join(runs, name)))
    report = {"judge": judge, "generated_by": "scripts/quality/knobs.py"}

    # Labels.
    gpt4 = {}
    for j in jl(os.path.join(ROOT, "benchmarks", "mt-bench", "gpt4-judged", "gpt-4_single.jsonl")):
        if j["turn"] == 1 and j["score"] >= 0:
            gpt4[(j["model"], f"{j['question_id']}_turn1")] = float(j["score"])
    human = {p["question_id"]: p["winner"] for p in json.load(open(os.path.join(inputs, "human-pairs.json")))}

    def credit(sid, pa):
        w = human[sid]
        pred = "model_a" if pa > 0.5 else "model_b" if pa < 0.5 else "tie"
        return 0.5 if pred == "tie" or w == "tie" else float(pred == w)

    def pair_accuracy(pa_by_sid):
        """Accuracy against the human verdicts: p(A) > 0.5 says A; a list of p(A) per pair is one
        battle each (seed 001's one battle per order), the pair's credit their mean."""
        hits = [np.mean([credit(sid, x) for x in pa]) if isinstance(pa, list) else credit(sid, pa) for sid, pa in pa_by_sid.items()]
        return float(np.mean(hits)), boot_ci(hits), len(hits)

    # ---- seed 001: every type x every aggregation, system level on the 5 models ----
    seed001 = {}
    if have("mt-pair"):
        pairs = folder_rows(os.path.join(runs, "mt-pair"))
        ref_dir = os.path.join(runs, f"mt-pair-ref-{REFERENCE}")
        os.makedirs(ref_dir, exist_ok=True)
        with open(os.path.join(ref_dir, "pairs.jsonl"), "w") as f:
            for p in pairs:
                if REFERENCE not in (p["model_a"], p["model_b"]):
                    continue
                if p["model_a"] == REFERENCE:  # seen from the other model: p(A) of the swapped pair
                    p = {**p, "model_a": p["model_b"], "model_b": REFERENCE, "p_a_first": 1 - p["p_a_second"], "p_a_second": 1 - p["p_a_first"]}
                f.write(json.dumps({**p, "reference": REFERENCE}) + "\n")
        models = sorted({m for m, _ in gpt4})
        truth = {m: np.mean([s for (mm, _), s in gpt4.items() if mm == m]) for m in models}
        types = {"pointwise checklist": ("mt-grade", False), "pointwise Direct": ("mt-direct-rocketeval", True),
                 "pairwise": ("mt-pair", False), f"pairwise vs reference ({REFERENCE})": (os.path.basename(ref_dir), False)}
        for tname, (folder, scores) in types.items():
            if not have(folder):
                continue
            for method in ["mean", "median", "winrate", "bt", "elo"]:
                r = rank_cli(os.path.join(runs, folder), method, scores)
                ms = [m for m in models if m in r]
                a, b = [r[m] for m in ms], [truth[m] for m in ms]
                # Closeness (seed 001 RQ2): model pairs ordered as GPT-4 orders them, close vs far apart.
                gaps = [(abs(truth[x] - truth[y]), np.sign(r[x] - r[y]) == np.sign(truth[x] - truth[y])) for i, x in enumerate(ms) for y in ms[i + 1:]]
                cut = np.median([g for g, _ in gaps])
                close = [ok for g, ok in gaps if g <= cut]
                far = [ok for g, ok in gaps if g > cut]
                seed001[f"{tname} | {method}"] = {"spearman": spearman(a, b), "kendall": kendall(a, b), "models": len(ms),
                                                   "close_pairs_agree": float(np.mean(close)), "far_pairs_agree": float(np.mean(far)) if far else None}
    # Base pairwise against the 5-point scale on the human pairs, in expectation and for the most
    # likely verdict, by `rank --pair-orders`'s two rules: the mean of the two orders (each order's
    # 5-point verdict as the first shown's share of the points), and seed 001's count per order
    # (much better 6 wins, better 2, tie 1 each; A/B: one battle per order).
    if have("human-pair-never") and have("human-pair-5point"):
        first_points = lambda p: 6 * p[0] + 2 * p[1] + p[2]
        second_points = lambda p: p[2] + 2 * p[3] + 6 * p[4]
        share = lambda p: first_points(p) / (first_points(p) + second_points(p))
        # Seed 001: A's points over both orders (A shown first, then second) against B's.
        counted = lambda v: (first_points(v[0]) + second_points(v[1])) / (first_points(v[0]) + second_points(v[1]) + second_points(v[0]) + first_points(v[1]))
        onehot = lambda p: [1.0 if i == int(np.argmax(p)) else 0.0 for i in range(5)]
        base = {p["session_id"]: p for p in folder_rows(os.path.join(runs, "human-pair-never"))}
        five = {p["session_id"]: p for p in folder_rows(os.path.join(runs, "human-pair-5point"))}
        common = sorted(set(base) & set(five))
        variants = {
            "base pairwise (A/B), mean of the orders, expectation": {s: (base[s]["p_a_first"] + base[s]["p_a_second"]) / 2 for s in common},
            "base pairwise (A/B), mean of the orders, greedy": {s: (float(base[s]["p_a_first"] > 0.5) + float(base[s]["p_a_second"] > 0.5)) / 2 for s in common},
            "base pairwise (A/B), one battle per order (seed 001)": {s: [base[s]["p_a_first"], base[s]["p_a_second"]] for s in common},
            "5-point, mean of the orders' shares, expectation": {s: (share(five[s]["verdicts"][0]) + 1 - share(five[s]["verdicts"][1])) / 2 for s in common},
            "5-point, mean of the orders' shares, greedy": {s: (share(onehot(five[s]["verdicts"][0])) + 1 - share(onehot(five[s]["verdicts"][1]))) / 2 for s in common},
            "5-point, counted per order (seed 001), expectation": {s: counted(five[s]["verdicts"]) for s in common},
            "5-point, counted per order (seed 001), greedy": {s: counted([onehot(v) for v in five[s]["verdicts"]]) for s in common},
        }
        seed001["_five_point"] = {}
        for name, v in variants.items():
            acc, ci, n = pair_accuracy(v)
            seed001["_five_point"][name] = {"accuracy": acc, "ci": ci, "pairs": n}
        seed001["_five_point_verdicts"] = {"mean distribution A first": np.mean([five[s]["verdicts"][0] for s in common], axis=0).tolist(),
                                           "mean distribution A second": np.mean([five[s]["verdicts"][1] for s in common], axis=0).tolist()}
    # Position consistency of every pairwise run made (a partial run of a slow judge has some only).
    seed001["_position_consistency"] = {}
    for folder in ["mt-pair", "human-pair-never", "human-pair-always", "human-pair-5point"]:
        if have(folder):
            ps = folder_rows(os.path.join(runs, folder))
            cons = [(p["p_a_first"] > 0.5) == (p["p_a_second"] > 0.5) and p["p_a_first"] != 0.5 for p in ps]
            first = np.mean([x for p in ps for x in (p["p_a_first"], 1 - p["p_a_second"])])
            seed001["_position_consistency"][folder] = {"pairs": len(ps), "consistent": float(np.mean(cons)), "p_first_shown_wins": float(first)}
    report["seed001"] = seed001

    # ---- seed 002: checklist use on the human pairs, pairwise and direct ----

    seed002 = {}
    if have("human-pair-never") and have("human-pair-always"):
        never = {p["session_id"]: p for p in folder_rows(os.path.join(runs, "human-pair-never"))}
        always = {p["session_id"]: p for p in folder_rows(os.path.join(runs, "human-pair-always"))}
        common = sorted(set(never) & set(always))
        pa = lambda p: (p["p_a_first"] + p["p_a_second"]) / 2
        x = {s: 10 * min(pa(never[s]), 1 - pa(never[s])) for s in common}
        rows = {"never": {s: pa(never[s]) for s in common}, "always": {s: pa(always[s]) for s in common}}
        for k in [1, 2, 3, 4, 5]:
            rows[f"selective k={k}"] = {s: pa(always[s]) if x[s] >= k else pa(never[s]) for s in common}
        seed002["pairwise"] = {}
        for name, v in rows.items():
            acc, ci, n = pair_accuracy(v)
            use = 1.0 if name == "always" else 0.0 if name == "never" else float(np.mean([x[s] >= int(name[-1]) for s in common]))
            seed002["pairwise"][name] = {"accuracy": acc, "ci": ci, "pairs": n, "checklist_rate": use}
    if have("human-direct-never") and have("human-direct-always"):
        dn = {(r["model_test"], r["session_id"]): r for r in folder_rows(os.path.join(runs, "human-direct-never"))}
        da = {(r["model_test"], r["session_id"]): r for r in folder_rows(os.path.join(runs, "human-direct-always"))}
        sids = sorted({s for _, s in dn if ("answer_a", s) in dn and ("answer_b", s) in dn and ("answer_a", s) in da and ("answer_b", s) in da})
        seed002["direct"] = {}
        for name, k in [("never", None), ("always", None)] + [(f"selective k={k}", k) for k in [0.5, 1.0, 1.5, 2.0, 2.5]]:
            def score(side, s):
                plain = dn[(side, s)]
                if name == "always" or (k is not None and spread(plain["digits"]) >= k):
                    return da[(side, s)]["score"], 1
                return plain["score"], 0
            v, used = {}, []
            for s in sids:
                (sa, ua), (sb, ub) = score("answer_a", s), score("answer_b", s)
                v[s] = 0.5 + 0.5 * np.sign(sa - sb)
                used += [ua, ub]
            acc, ci, n = pair_accuracy(v)
            seed002["direct"][name] = {"accuracy": acc, "ci": ci, "pairs": n, "checklist_rate": float(np.mean(used))}
    report["seed002"] = seed002

    # ---- seed 003: decodings (alignment and consistency across repeats); criteria given or not ----
    seed003 = {}
    decodings = ["greedy", "expected", "sample@1.0", "sample@0.5"]
    if have("human-pair-never"):
        never = folder_rows(os.path.join(runs, "human-pair-never"))
        out = {}
        for how in decodings:
            reps = []
            for rep in range(REPEATS if how.startswith("sample") else 1):
                rng = np.random.default_rng(1000 + rep)
                reps.append({p["session_id"]: (decode_binary(p["p_a_first"], how, rng) + decode_binary(p["p_a_second"], how, rng)) / 2 for p in never})
            accs = [pair_accuracy(r)[0] for r in reps]
            verdicts = np.array([[np.sign(r[s] - 0.5) for s in sorted(reps[0])] for r in reps])
            same = float(np.mean((verdicts == verdicts[0]).all(axis=0)))
            out[how] = {"accuracy": float(np.mean(accs)), "accuracy_sd": float(np.std(accs)), "same_verdict_all_repeats": same}
        seed003["human pairs, pairwise (plain)"] = out
    for folder, label in [("mt-direct-rocketeval", "MT-Bench Direct (RocketEval prompt)"), ("mt-grade", "MT-Bench checklist grading")]:
        if not have(folder):
            continue
        rows = [r for r in folder_rows(os.path.join(runs, folder)) if (r["model_test"], r["session_id"]) in gpt4]
        out = {}
        for how in decodings:
            reps = []
            for rep in range(REPEATS if how.startswith("sample") else 1):
                rng = np.random.default_rng(2000 + rep)
                if folder == "mt-grade":
                    reps.append([np.mean([decode_binary(p, how, rng) for p in r["norm_probability"]]) * 9 + 1 for r in rows])
                else:
                    reps.append([decode_digits(r["digits"], how, rng) for r in rows])
            labels = [gpt4[(r["model_test"], r["session_id"])] for r in rows]
            cors = [pearson(x, labels) for x in reps]
            out[how] = {"pearson": float(np.mean(cors)), "pearson_sd": float(np.std(cors)), "responses": len(rows),
                        "alpha_across_repeats": alpha_interval(np.array(reps).T) if len(reps) > 1 else 1.0}
        seed003[label] = out
    report["seed003"] = seed003

    # ---- seed 004: instruction levels and perplexity vs GPT-4's scores ----
    seed004 = {}
    level_scores = {}
    # The levels on 0-9, and (`-1-5`) on the papers' own 1-5 scale with seed 003's ends-only rubric.
    for level in ["perplexity", "generic", "criteria", "rubric", "rocketeval", "generic-1-5", "rubric-1-5", "rubric-ends-1-5"]:
        folder = f"mt-direct-{level}"
        if have(folder):
            rows = [r for r in folder_rows(os.path.join(runs, folder)) if (r["model_test"], r["session_id"]) in gpt4]
            x = [r["score"] for r in rows]
            y = [gpt4[(r["model_test"], r["session_id"])] for r in rows]
            level_scores[level] = {(r["model_test"], r["session_id"]): r["score"] for r in rows}
            seed004[level] = {"pearson": pearson(x, y), "pearson_ci": fisher_ci(pearson(x, y), len(rows)), "spearman": spearman(x, y), "responses": len(rows)}
    # The papers' contrasts, paired over the same responses: seed 003's criteria given vs not and its
    # "Score 1 & 5" vs every score described; seed 004's rubric vs generic.
    contrasts = {}
    for a, b in [("rubric", "generic"), ("rubric-1-5", "generic-1-5"), ("rubric-ends-1-5", "rubric-1-5"), ("perplexity", "generic")]:
        if a in level_scores and b in level_scores:
            keys = sorted(set(level_scores[a]) & set(level_scores[b]))
            d, ci = paired_diff_ci([level_scores[a][k] for k in keys], [level_scores[b][k] for k in keys], [gpt4[k] for k in keys])
            contrasts[f"{a} minus {b}"] = {"pearson_difference": d, "ci": ci, "responses": len(keys)}
    if contrasts:
        report["seed004_contrasts"] = contrasts
    if have("mt-grade"):
        rows = [r for r in folder_rows(os.path.join(runs, "mt-grade")) if (r["model_test"], r["session_id"]) in gpt4]
        x = [np.mean(r["norm_probability"]) * 9 + 1 for r in rows]
        y = [gpt4[(r["model_test"], r["session_id"])] for r in rows]
        seed004["checklist grading"] = {"pearson": pearson(x, y), "spearman": spearman(x, y), "responses": len(rows)}
    report["seed004"] = seed004

    # KNOBS_OUT: another file, for a partial rerun that must not replace the recorded tables.
    out_json = os.environ.get("KNOBS_OUT") or os.path.join(ROOT, "docs", "quality", f"knobs-{judge}.json")
    with open(out_json, "w") as f:
        json.dump(clean(report), f, indent=1)
        f.write("\n")
    with open(out_json[:-5] + ".md", "w") as f:
        f.write(markdown(report))
    print(markdown(report))


def clean(x):
    """NaN (a correlation of constant scores) as null: JSON has no NaN."""
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return None if isinstance(x, float) and np.isnan(x) else x


def fmt(x, d=3):
    if x is None:
        return "–"
    if isinstance(x, float) and np.isnan(x):
        return "undefined (every score equal)"
    return f"{x:+.{d}f}" if x < 0 else f"{x:.{d}f}"


def markdown(r):
    out = [f"### Judge-design knobs: {r['judge']}\n",
           "Made by `scripts/quality/knobs.sh JUDGE` and `scripts/quality/knobs.py JUDGE` (see their headers for the inputs).\n"]
    s1 = {k: v for k, v in r["seed001"].items() if not k.startswith("_")}
    if s1:
        out.append("**Seed 001 — evaluation type × aggregation**, system level on the 5 GPT-4-judged models (8 first turns), against GPT-4's mean score:\n")
        out.append("| type | aggregation | Spearman | Kendall | model pairs ordered as GPT-4: close / far |\n|---|---|---|---|---|")
        for k, v in s1.items():
            t, m = k.split(" | ")
            out.append(f"| {t} | {m} | {fmt(v['spearman'])} | {fmt(v['kendall'])} | {fmt(v['close_pairs_agree'], 2)} / {fmt(v['far_pairs_agree'], 2)} |")
        out.append("")
    pc = r["seed001"].get("_position_consistency", {})
    if pc:
        out.append("Position consistency (verdict kept when the two responses are swapped): " + "; ".join(
            f"{k}: {fmt(v['consistent'], 2)} of {v['pairs']} pairs, p(first shown wins) {fmt(v['p_first_shown_wins'], 2)}" for k, v in pc.items()) + "\n")
    fp = r["seed001"].get("_five_point", {})
    if fp:
        out.append("**Seed 001 — base vs 5-point pairwise**, LLMBar MT-Bench human pairs, by `rank --pair-orders`'s two rules (the mean of the orders; seed 001's count per order: much better 6 wins, better 2, tie 1 each):\n")
        out.append("| type | accuracy [95% CI] | pairs |\n|---|---|---|")
        for k, v in fp.items():
            out.append(f"| {k} | {fmt(v['accuracy'])} [{fmt(v['ci'][0], 2)}, {fmt(v['ci'][1], 2)}] | {v['pairs']} |")
        d = r["seed001"]["_five_point_verdicts"]
        out.append("\nMean verdict distribution (1 = first shown much better … 5 = second shown much better): " + "; ".join(
            f"{k}: " + ", ".join(f"{x:.2f}" for x in v) for k, v in d.items()) + "\n")
    for setting, rows in r["seed002"].items():
        out.append(f"**Seed 002 — checklist use, {setting} setting**, LLMBar MT-Bench human pairs:\n")
        out.append("| checklist | accuracy [95% CI] | checklist used |\n|---|---|---|")
        for k, v in rows.items():
            out.append(f"| {k} | {fmt(v['accuracy'])} [{fmt(v['ci'][0], 2)}, {fmt(v['ci'][1], 2)}] | {fmt(v['checklist_rate'], 2)} |")
        out.append("")
    for setting, rows in r["seed003"].items():
        out.append(f"**Seed 003 — decoding, {setting}** ({SAMPLES} samples per answer, {REPEATS} repeats):\n")
        if "pairwise" in setting:
            out.append("| decoding | accuracy (sd over repeats) | same verdict in every repeat |\n|---|---|---|")
            for k, v in rows.items():
                out.append(f"| {k} | {fmt(v['accuracy'])} ({fmt(v['accuracy_sd'])}) | {fmt(v['same_verdict_all_repeats'], 2)} |")
        else:
            out.append("| decoding | Pearson with GPT-4 (sd over repeats) | Krippendorff α across repeats |\n|---|---|---|")
            for k, v in rows.items():
                sd = "" if np.isnan(v["pearson"]) else f" ({fmt(v['pearson_sd'])})"
                out.append(f"| {k} | {fmt(v['pearson'])}{sd} | {fmt(v['alpha_across_repeats'])} |")
        out.append("")
    if r["seed004"]:
        out.append("**Seed 004 — instruction level** (Direct prompts; perplexity = no prompt), per response against GPT-4's scores:\n")
        out.append("| score | Pearson [95% CI, Fisher z] | Spearman | responses |\n|---|---|---|---|")
        for k, v in r["seed004"].items():
            ci = v.get("pearson_ci") or [None, None]
            band = f" [{fmt(ci[0], 2)}, {fmt(ci[1], 2)}]" if ci[0] is not None else ""
            out.append(f"| {k} | {fmt(v['pearson'])}{band} | {fmt(v['spearman'])} | {v['responses']} |")
        out.append("")
    if r.get("seed004_contrasts"):
        out.append("**Seeds 003/004 — contrasts**, the difference of the two levels' Pearson with GPT-4 over the same responses (bootstrap over responses):\n")
        out.append("| contrast | difference [95% CI] | responses |\n|---|---|---|")
        for k, v in r["seed004_contrasts"].items():
            out.append(f"| {k} | {fmt(v['pearson_difference'])} [{fmt(v['ci'][0], 2)}, {fmt(v['ci'][1], 2)}] | {v['responses']} |")
        out.append("")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
