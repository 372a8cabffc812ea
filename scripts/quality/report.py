#!/usr/bin/env python3
"""Measure one judge's quality from its graded quality-report inputs (see run.sh).

Every number comes from the `rocketjudge` CLI (rank, score, meta); this script only arranges inputs
and collects results into docs/quality/<judge>.json and a markdown table.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RJ = os.environ.get("RJ", os.path.join(ROOT, "target", "release", "rocketjudge"))
IN = os.environ.get("QUALITY_INPUTS", os.path.join(ROOT, ".cache", "quality", "inputs"))
TAG = os.environ.get("QUALITY_TAG", "")
REFS = {
    "GPT-4 MT-Bench score (25 models)": os.path.join(ROOT, "benchmarks", "mt-bench", "reference-gpt4-mtbench.json"),
    "Chatbot Arena Elo, 2023-06 (14 models)": os.path.join(ROOT, "benchmarks", "mt-bench", "reference-arena-2023.json"),
}


def cli(*args):
    out = subprocess.run([RJ, *args, "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def subset(folder, names, ext):
    """A temporary folder holding links to the files of `names` in `folder` (`ext`, or .json for
    Direct scores written before `direct` wrote JSONL)."""
    d = tempfile.mkdtemp()
    for n in names:
        for e in (ext, "json"):
            src = os.path.join(folder, f"{n}.{e}")
            if os.path.exists(src):
                os.symlink(os.path.abspath(src), os.path.join(d, f"{n}.{e}"))
                break
    return d


def stems(folder):
    return sorted(f.rsplit(".", 1)[0] for f in os.listdir(folder))


def est(e):
    if e is None:
        return "–"
    s = f"{e['value']:.3f}"
    if e.get("lower") is not None:
        s += f" [{e['lower']:.2f}, {e['upper']:.2f}]"
    return s


def system(ranking_args, name):
    ranking = cli("rank", *ranking_args, "--bootstrap", "200")
    path = os.path.join(tempfile.mkdtemp(), f"{name}.json")
    with open(path, "w") as f:
        json.dump(ranking, f)
    out = {"ranking": ranking}
    for ref, rpath in REFS.items():
        out[ref] = cli("meta", "--ranking", path, "--reference", rpath, "--bootstrap", "1000")
    return out


def timing(path):
    """What timing.txt says, summed over passes: run.sh adds a line "grade G s[, direct D s] (when)" per
    pass (older runs wrote one "graded in G s"); merge.py writes "pooled from ..."."""
    if not os.path.exists(path):
        return None
    grade = direct = passes = 0
    other = []
    for line in open(path):
        m = re.match(r"(?:grade|graded in) (\d+) s(?:, direct (\d+) s)?", line.strip())
        if m:
            passes += 1
            grade += int(m.group(1))
            direct += int(m.group(2) or 0)
        elif line.strip():
            other.append(line.strip())
    if passes:
        other.append(f"graded in {grade} s" + (f", Direct in {direct} s" if direct else "") + (f" ({passes} passes)" if passes > 1 else ""))
    return "; ".join(other)


def main():
    judge = sys.argv[1]
    run = f"{judge}-{TAG}" if TAG else judge
    base = os.path.join(ROOT, ".cache", "quality", run)
    lmsys = stems(os.path.join(IN, "lmsys"))
    turns = {json.loads(l)["session_id"] for m in lmsys for l in open(os.path.join(IN, "lmsys", f"{m}.jsonl"))}
    fork_models = sorted({json.loads(l)["model"] for l in open(os.path.join(IN, "forks-labels.jsonl"))})
    judg = os.path.join(base, "judgments")
    rep = {"judge": judge, "timing": timing(os.path.join(base, "timing.txt"))}
    # System level: the 31 LMSYS models ranked by the judge, against GPT-4's MT-Bench scores and Arena Elo.
    lm_j = subset(judg, lmsys, "jsonl")
    rep["system_unsupervised_bt"] = system(["--judgments", lm_j], "bt")
    rep["system_unsupervised_mean"] = system(["--judgments", lm_j, "--method", "mean"], "mean")
    sup = tempfile.mkdtemp()
    subprocess.run([RJ, "score", "--judgments", judg, "--labels", os.path.join(IN, "forks-labels.jsonl"), "--train-models", ",".join(fork_models), "--out", sup], check=True, capture_output=True)
    rep["system_supervised_mean"] = system(["--scores", sup, "--method", "mean"], "sup")
    direct = os.path.join(base, "direct")
    if os.path.isdir(direct):
        rep["system_direct_mean"] = system(["--scores", subset(direct, lmsys, "jsonl"), "--method", "mean"], "direct")
    # Instance level against GPT-4's single-answer scores (fork models).
    fk_j = subset(judg, fork_models, "jsonl")
    rep["instance_gpt4"] = cli("meta", "--judgments", fk_j, "--labels", os.path.join(IN, "forks-labels.jsonl"), "--bootstrap", "1000")
    if os.path.isdir(direct):
        rep["instance_gpt4_direct"] = cli("meta", "--scores", subset(direct, fork_models, "jsonl"), "--labels", os.path.join(IN, "forks-labels.jsonl"), "--bootstrap", "1000")
    # Human-labelled pairs (LLMBar MT-Bench + judgelab gallery), and GPT-4's own agreement on the gallery.
    pairs = json.load(open(os.path.join(IN, "human-pairs.json")))
    llmbar = [p for p in pairs if p["question_id"].startswith("llmbar")]
    gallery = [p for p in pairs if p["question_id"].startswith("gallery")]
    for name, subset_pairs in [("human_llmbar", llmbar), ("human_gallery", gallery)]:
        if not os.path.isdir(os.path.join(base, "human")):
            break  # run with QUALITY_HUMAN=0
        path = os.path.join(tempfile.mkdtemp(), "pairs.json")
        json.dump(subset_pairs, open(path, "w"))
        rep[name] = cli("meta", "--judgments", os.path.join(base, "human"), "--pairs", path, "--bootstrap", "1000")["pairs"]
        if os.path.isdir(os.path.join(base, "direct-human")):
            rep[name + "_direct"] = cli("meta", "--scores", os.path.join(base, "direct-human"), "--pairs", path, "--tie-margin", "0.1", "--bootstrap", "1000")["pairs"]
    g4 = {p["question_id"]: p["winner"] for p in json.load(open(os.path.join(IN, "human-pairs-gpt4.json")))}
    rep["gpt4_vs_human_gallery"] = sum(1 for p in gallery if g4.get(p["question_id"]) == p["winner"]) / max(1, len(gallery))
    os.makedirs(os.path.join(ROOT, "docs", "quality"), exist_ok=True)
    with open(os.path.join(ROOT, "docs", "quality", f"{run}.json"), "w") as f:
        json.dump(rep, f, indent=1)
    md = [f"### {judge}", "", f"Subset: {len(lmsys)} LMSYS models and {len(fork_models)} fork models on {len(turns)} MT-Bench turns; {len(llmbar)} LLMBar and {len(gallery)} gallery human pairs. {rep['timing'] or ''}", "",
          "| measure | RocketEval (unsup.) | RocketEval (sup.) | Direct |", "|---|---|---|---|"]
    for ref in REFS:
        for kind, key in [("Spearman", "spearman"), ("Kendall", "kendall_tau_b")]:
            md.append(f"| system {kind} vs {ref} | {est(rep['system_unsupervised_mean'][ref][key])} | {est(rep['system_supervised_mean'][ref][key])} | {est(rep.get('system_direct_mean', {}).get(ref, {}).get(key))} |")
    ig, igd = rep["instance_gpt4"], rep.get("instance_gpt4_direct")
    md.append(f"| pairwise agreement with GPT-4 within a turn (ties count) | {est(ig['pairwise_vs_labels']['agreement'])} | – | {est(igd['pairwise_vs_labels']['agreement']) if igd else '–'} |")
    md.append(f"| Pearson of scores with GPT-4's | {est(ig['score_correlation']['pearson'])} | – | {est(igd['score_correlation']['pearson']) if igd else '–'} |")
    md.append(f"| Spearman of scores with GPT-4's | {est(ig['score_correlation']['spearman'])} | – | {est(igd['score_correlation']['spearman']) if igd else '–'} |")
    for name, label in [("human_llmbar", "LLMBar MT-Bench human pairs: accuracy (tie = ½)"), ("human_gallery", "MT-Bench human pairs (with ties): agreement")]:
        k = "accuracy" if "llmbar" in name else "agreement"
        d = rep.get(name + "_direct")
        if name not in rep:
            md.append(f"| {label} | not run | – | – |")
            continue
        md.append(f"| {label} | {est(rep[name][k])} | – | {est(d[k]) if d else '–'} |")
    md.append(f"| BT ranking, system Spearman vs GPT-4 MT-Bench | {est(rep['system_unsupervised_bt'][list(REFS)[0]]['spearman'])} | | |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(ROOT, "docs", "quality", f"{run}.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
