#!/usr/bin/env python3
"""Evaluation types side by side on one set of responses (issue #30): checklist grading, Direct and
chain-of-thought (`rocketjudge reason`) scores of the same judge, each against a reference ranking of
the models (MT-Bench's GPT-4 ratings by default).

  python3 scripts/quality/eval_types.py NAME=FOLDER ... [--reference benchmarks/mt-bench/reference-gpt4-mtbench.json]

Each FOLDER holds scores (`score --out` JSON arrays, `direct --out` and `reason --out` JSONL lines:
session_id, model_test, score; a reason line without a score is a response no reply of which could
be read).
Prints, per type: responses scored, the share of per-query model pairs ordered as the reference
orders the two models (a tie of scores counts one half; 95% bootstrap interval over queries, 2,000
replicates, seed 0), and the models' mean scores; then the Spearman correlation of every two types'
per-response scores (responses both scored). Only numpy is needed.
"""
import glob
import itertools
import json
import os
import sys

import numpy as np


def load(folder):
    rows = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.json*"))):
        text = open(f).read()
        records = json.loads(text) if f.endswith(".json") else [json.loads(l) for l in text.splitlines() if l.strip()]
        for r in records:
            rows[(r["model_test"], r["session_id"])] = r.get("score")
    return rows


def ranks(x):
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    for v in np.unique(x):  # ties share their mean rank
        r[x == v] = r[x == v].mean()
    return r


def spearman(a, b):
    return float(np.corrcoef(ranks(np.asarray(a, float)), ranks(np.asarray(b, float)))[0, 1])


def main():
    args = [a for a in sys.argv[1:] if "=" in a and not a.startswith("--")]
    ref_path = "benchmarks/mt-bench/reference-gpt4-mtbench.json"
    if "--reference" in sys.argv:
        ref_path = sys.argv[sys.argv.index("--reference") + 1]
    reference = {e.get("name", e.get("model")): e.get("rating", e.get("score")) for e in json.load(open(ref_path))}
    types = {name: load(folder) for name, folder in (a.split("=", 1) for a in args)}
    rng = np.random.default_rng(0)
    for name, rows in types.items():
        models = sorted({m for m, _ in rows if m in reference})
        queries = sorted({s for _, s in rows})
        per_query = []
        for q in queries:
            agree = []
            for a, b in itertools.combinations(models, 2):
                sa, sb = rows.get((a, q)), rows.get((b, q))
                if sa is None or sb is None:
                    continue
                want = np.sign(reference[a] - reference[b])
                got = np.sign(sa - sb)
                agree.append(0.5 if got == 0 else float(got == want))
            per_query.append(agree)
        flat = [x for a in per_query for x in a]
        boot = []
        for _ in range(2000):
            pick = rng.integers(0, len(per_query), len(per_query))
            sample = [x for i in pick for x in per_query[i]]
            boot.append(np.mean(sample))
        scored = sum(v is not None for v in rows.values())
        means = {m: np.mean([v for (mm, _), v in rows.items() if mm == m and v is not None]) for m in models}
        order = " > ".join(f"{m} {means[m]:.2f}" for m in sorted(models, key=lambda m: -means[m]))
        print(f"{name}: {scored} of {len(rows)} responses scored; pairs ordered as the reference: "
              f"{np.mean(flat):.3f} [{np.percentile(boot, 2.5):.3f}, {np.percentile(boot, 97.5):.3f}] (n = {len(flat)} pairs, "
              f"{len(queries)} queries); means: {order}")
    for (na, a), (nb, b) in itertools.combinations(types.items(), 2):
        keys = [k for k in a if a[k] is not None and b.get(k) is not None]
        print(f"{na} vs {nb}: Spearman {spearman([a[k] for k in keys], [b[k] for k in keys]):.3f} over {len(keys)} responses")


if __name__ == "__main__":
    main()
