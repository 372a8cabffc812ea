#!/usr/bin/env python3
"""Time the last step of a big sharded run: `rocketjudge merge` and `rank` on the shards of a
100,000-response run (synthetic judgments: 10 models x 10,000 queries, 5 items each, 16 shards, laid
out exactly as `grade --shard I/16` writes them, completion records included).

Usage: python3 scripts/cluster/merge-bench.py [--models 10] [--queries 10000] [--shards 16]
"""
import argparse, json, os, random, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/rocketjudge"))
    a = ap.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as d:
        shards = os.path.join(d, "shards")
        os.makedirs(shards)
        files, records = {}, [dict(shard=i, shards=a.shards, responses=a.models * a.queries, fingerprint="synthetic",
                                   judge="synthetic", files={}) for i in range(a.shards)]
        for m in range(a.models):
            skill = m / a.models
            for q in range(a.queries):
                k = m * a.queries + q
                i = k % a.shards
                name = f"model-{m}.shard-{i}-of-{a.shards}.jsonl"
                probs = [min(1.0, max(0.0, rng.random() * 0.6 + skill * 0.4)) for _ in range(5)]
                line = json.dumps(dict(session_id=f"q{q}", model_test=f"model-{m}", judge="synthetic", norm_probability=probs,
                                       judgment=["Yes" if p > 0.5 else "No" for p in probs]))
                files.setdefault(name, []).append(line + "\n")
                records[i]["files"].setdefault(name, []).append(dict(position=k, session_id=f"q{q}"))
        for name, lines in files.items():
            open(os.path.join(shards, name), "w").writelines(lines)
        for r in records:
            json.dump(r, open(os.path.join(shards, f".rocketjudge.shard-{r['shard']}-of-{a.shards}.done"), "w"))
        size = sum(os.path.getsize(os.path.join(shards, f)) for f in os.listdir(shards))
        out = os.path.join(d, "judgments")
        steps = [("merge", [a.bin, "merge", "--judgments", shards, "--out", out]),
                 ("rank (BT, 1000 bootstrap replicates)", [a.bin, "rank", "--judgments", out, "--format", "json"])]
        print(f"{a.models * a.queries} responses ({a.models} models x {a.queries} queries, 5 items), {a.shards} shards, {size / 1e6:.0f} MB")
        for what, cmd in steps:
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"{what}: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
