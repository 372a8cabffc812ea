#!/usr/bin/env python3
"""Inputs of the judge-quality report (issue #6), from the public data in data/ (python3 scripts/data/fetch.py fetches it).

Writes into OUT (default .cache/quality/inputs):
  queries.jsonl            the bundled MT-Bench queries with our checklists (all 160 turns)
  lmsys/<model>.jsonl      answers of the 31 original MT-Bench models (LMSYS), RocketEval format
  forks/<model>.jsonl      answers of FastChat-fork models, recovered from their GPT-4 judge prompts
  forks-labels.jsonl       those answers' GPT-4 single-answer scores (FastChat gpt-4_single lines)
  human-queries.jsonl      one query per human-labelled pair (the matched MT-Bench turn's checklist)
  human/<side>.jsonl       the pair's two answers as pseudo-models `answer_a` / `answer_b`
  human-pairs.json         Arena-format labels {model_a, model_b, winner, question_id}
    (LLMBar's 200 MT-Bench pairs, human majority, no ties; and the 60 judgelab gallery pairs of the
     MT-Bench human judgments, ties allowed, with GPT-4's verdicts in human-pairs-gpt4.json)

Subsets keep CPU runs under an hour: --questions picks question ids (default: one per category),
--fork-models how many fork models (those with all 160 turns judged), --human-pairs how many LLMBar pairs,
--gallery-pairs how many judgelab gallery pairs.
"""
import argparse
import glob
import gzip
import json
import os
import random
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "data")
DEFAULT_QUESTIONS = "81,91,101,111,121,131,141,151"


def jl(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def between(text, start, end):
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    return None if j < 0 else text[i + len(start):j]


def fork_answer(j):
    """The judged answer (and for turn 2 the model's turn-1 answer) from a FastChat judge prompt."""
    p = j["user_prompt"]
    if j["turn"] == 1:
        a = between(p, "[The Start of Assistant's Answer]\n", "\n[The End of Assistant's Answer]")
        return (a, None) if a is not None else None
    conv = between(p, "<|The Start of Assistant A's Conversation with User|>\n\n", "\n\n<|The End of Assistant A's Conversation with User|>")
    if conv is None:
        return None
    parts = conv.split("### Assistant A:\n")
    if len(parts) != 3:
        return None
    a1 = parts[1].rsplit("\n\n### User:\n", 1)[0]
    return parts[2], a1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, ".cache", "quality", "inputs"))
    ap.add_argument("--questions", default=DEFAULT_QUESTIONS)
    ap.add_argument("--fork-models", type=int, default=12)
    ap.add_argument("--human-pairs", type=int, default=100)
    ap.add_argument("--gallery-pairs", type=int, default=1000, help="at most this many judgelab gallery pairs")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    qids = [int(x) for x in a.questions.split(",")] if a.questions != "all" else list(range(81, 161))
    rng = random.Random(a.seed)
    queries = {q["session_id"]: q for q in jl(os.path.join(ROOT, "benchmarks", "mt-bench", "queries.jsonl"))}
    write_jsonl(os.path.join(a.out, "queries.jsonl"), queries.values())
    sessions = [f"{q}_turn{t}" for q in qids for t in (1, 2)]

    # 1. LMSYS: the 31 original models.
    for path in sorted(glob.glob(os.path.join(DATA, "mt_bench", "lmsys_model_answers", "*.jsonl"))):
        model = os.path.basename(path)[:-6]
        rows = []
        for ans in jl(path):
            if ans["question_id"] not in qids:
                continue
            turns = ans["choices"][0]["turns"]
            users = [m["content"] for m in queries[f"{ans['question_id']}_turn2"]["conversation_input"] if m["role"] == "user"]
            for t in (1, 2):
                hist = [] if t == 1 else [users[0], turns[0]]
                rows.append({"session_id": f"{ans['question_id']}_turn{t}", "chat_history": hist + [users[t - 1]], "output": [turns[t - 1]], "generator": model})
        write_jsonl(os.path.join(a.out, "lmsys", f"{model}.jsonl"), rows)

    # 2. Fork models with GPT-4 single-answer scores.
    by_model = {}
    for path in glob.glob(os.path.join(DATA, "mt_bench", "fork_gpt4_judgments", "*", "gpt-4_single*")):
        for j in jl(path):
            if j.get("score", -1) is None or j.get("score", -1) < 0 or "user_prompt" not in j:
                continue
            by_model.setdefault(j["model"], {})[(j["question_id"], j["turn"])] = j
    complete = sorted(m for m, d in by_model.items() if len(d) == 160)
    chosen = sorted(rng.sample(complete, min(a.fork_models, len(complete))))
    labels = []
    for m in chosen:
        rows = []
        for qid in qids:
            for t in (1, 2):
                j = by_model[m][(qid, t)]
                parsed = fork_answer(j)
                if parsed is None:
                    continue
                answer, first = parsed
                users = [x["content"] for x in queries[f"{qid}_turn2"]["conversation_input"] if x["role"] == "user"]
                hist = [] if t == 1 else [users[0], first]
                rows.append({"session_id": f"{qid}_turn{t}", "chat_history": hist + [users[t - 1]], "output": [answer], "generator": m})
                labels.append({"question_id": qid, "model": m, "score": j["score"], "turn": t})
        write_jsonl(os.path.join(a.out, "forks", f"{m.replace('/', '_')}.jsonl"), rows)
    write_jsonl(os.path.join(a.out, "forks-labels.jsonl"), labels)

    # 3. Human-labelled pairs: LLMBar's MT-Bench subset (turn-1 questions) and judgelab's gallery.
    turn1 = {q["conversation_input"][0]["content"].strip(): q for s, q in queries.items() if s.endswith("_turn1")}
    hq, side_a, side_b, pairs, gpt4 = [], [], [], [], []
    llmbar = json.load(open(os.path.join(DATA, "llmbar", "Processed", "MT-Bench", "dataset.json")))
    matched = [(i, x) for i, x in enumerate(llmbar) if x["input"].strip() in turn1]
    for i, x in sorted(rng.sample(matched, min(a.human_pairs, len(matched)))):
        q = dict(turn1[x["input"].strip()])
        sid = f"llmbar-{i}"
        q["session_id"] = sid
        hq.append(q)
        side_a.append({"session_id": sid, "chat_history": [x["input"]], "output": [x["output_1"]], "generator": "answer_a"})
        side_b.append({"session_id": sid, "chat_history": [x["input"]], "output": [x["output_2"]], "generator": "answer_b"})
        pairs.append({"model_a": "answer_a", "model_b": "answer_b", "winner": "model_a" if x["label"] == 1 else "model_b", "question_id": sid})
    gallery = json.load(open(os.path.join(DATA, "mt_bench", "human_judgments", "judgelab_gallery.json")))
    for i, g in enumerate(gallery):
        if g["turn"] != 1:
            continue  # turn-2 pairs need each model's own turn-1 answer, which the gallery does not carry
        if len(gpt4) >= a.gallery_pairs:
            break
        q = dict(queries[f"{g['question_id']}_turn1"])
        sid = f"gallery-{i}"
        q["session_id"] = sid
        hq.append(q)
        side_a.append({"session_id": sid, "chat_history": [g["question"]], "output": [g["answer_a"]], "generator": "answer_a"})
        side_b.append({"session_id": sid, "chat_history": [g["question"]], "output": [g["answer_b"]], "generator": "answer_b"})
        pairs.append({"model_a": "answer_a", "model_b": "answer_b", "winner": g["human"], "question_id": sid})
        gpt4.append({"model_a": "answer_a", "model_b": "answer_b", "winner": g["gpt4"], "question_id": sid})
    write_jsonl(os.path.join(a.out, "human-queries.jsonl"), hq)
    write_jsonl(os.path.join(a.out, "human", "answer_a.jsonl"), side_a)
    write_jsonl(os.path.join(a.out, "human", "answer_b.jsonl"), side_b)
    with open(os.path.join(a.out, "human-pairs.json"), "w") as f:
        json.dump(pairs, f, indent=0)
    with open(os.path.join(a.out, "human-pairs-gpt4.json"), "w") as f:
        json.dump(gpt4, f, indent=0)
    print(f"{len(sessions)} sessions; 31 LMSYS models; {len(chosen)} fork models ({len(labels)} labels); "
          f"{len(pairs)} human pairs ({len(gpt4)} from the judgelab gallery) -> {a.out}")


if __name__ == "__main__":
    main()
