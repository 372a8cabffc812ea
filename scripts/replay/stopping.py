#!/usr/bin/env python3
"""How the stopping rule (`grade --until settled`) fares on many small runs: random subsets of K models
of a complete score file (e.g. GPT-4's MT-Bench grades), each replayed with `rocketjudge replay` in
the interleaved and adaptive orders. Prints, per order: how many (subset, seed) runs settle before
the end, the responses they stop at, and the pairs declared separated at the stop that the complete
run orders the other way (the false-settle rate).

    python3 scripts/replay/stopping.py SCORES QUERIES [--models 4] [--subsets 12] [--seeds 5] [--seed 0]

SCORES: RocketEval score files or a FastChat `*_single.jsonl` (`rocketjudge replay --scores`).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scores")
    ap.add_argument("queries")
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--subsets", type=int, default=12)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rj", default=os.environ.get("RJ", os.path.join(ROOT, "target/release/rocketjudge")))
    a = ap.parse_args()
    with open(a.scores, encoding="utf-8") as f:
        lines = [l for l in f if l.strip()]
    model_of = lambda l: json.loads(l).get("model") or json.loads(l)["model_test"]
    models = sorted({model_of(l) for l in lines})
    rng = random.Random(a.seed)
    subsets = [sorted(rng.sample(models, a.models)) for _ in range(a.subsets)]
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, subset in enumerate(subsets):
            path = os.path.join(tmp, f"subset-{k}.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(l for l in lines if model_of(l) in subset)
            out = subprocess.run(
                [a.rj, "replay", "--scores", path, "--queries", a.queries, "--orders", "interleaved,adaptive",
                 "--seeds", str(a.seeds), "--format", "json"],
                check=True, capture_output=True, text=True).stdout
            for s in json.loads(out):
                t = totals.setdefault(s["order"], {"runs": 0, "stops": [], "responses": s["responses"], "sep": 0, "false": 0})
                t["runs"] += len(s["to_settled"])
                t["stops"] += [x for x in s["to_settled"] if x is not None and x < s["responses"]]
                t["sep"] += s["separated_at_stop"]
                t["false"] += s["false_at_stop"]
    print(f"{a.subsets} random subsets of {a.models} of the {len(models)} models in {os.path.basename(a.scores)}, "
          f"{a.seeds} seeds each ({', '.join('+'.join(s) for s in subsets[:2])}, ...)")
    print("| order | runs that settle before the end | responses at the stop (median [range]) | pairs separated at the stop that the complete run reverses |")
    print("|---|---|---|---|")
    for order, t in totals.items():
        stops = t["stops"]
        where = (f"{statistics.median(stops):.0f} of {t['responses']} [{min(stops)}–{max(stops)}]" if stops else "–")
        rate = f"{100 * t['false'] / t['sep']:.1f}% ({t['false']}/{t['sep']})" if t["sep"] else "–"
        print(f"| {order} | {len(stops)} of {t['runs']} | {where} | {rate} |")


if __name__ == "__main__":
    main()
