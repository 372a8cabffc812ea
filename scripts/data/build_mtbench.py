#!/usr/bin/env python3
"""Build the bundled MT-Bench benchmark (queries + demo responses) from data/mt_bench (python3 scripts/data/fetch.py fetches it).

Each MT-Bench question has two turns; as RocketEval does, each turn becomes one query
(`session_id` = "<question_id>_turn<k>"). Turn 2's `conversation_input` holds turn 1 with the
reference answer as the assistant message; when graded, a response's own `chat_history`
(the tested model's turn-1 answer) replaces it.

References: the corrected GPT-4 references (gpt-4-0125-preview, FastChat PR #3158) for the 30
math/reasoning/coding questions, GPT-4's own MT-Bench answers for the other 50.

Checklists are not made here: they live in checklists.jsonl (see README.md in the output folder)
and are merged in with --merge-checklists.

Usage: python3 scripts/data/build_mtbench.py [--data data/mt_bench] [--merge-checklists]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "benchmarks", "mt-bench")

# The demo subset: a few questions (one per category) and a few models of clearly different quality.
DEMO_QUESTIONS = [81, 91, 101, 111, 121, 131, 141, 151]
DEMO_MODELS = ["gpt-4", "gpt-3.5-turbo", "vicuna-13b-v1.3", "llama-13b"]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def answers_by_question(path):
    return {a["question_id"]: a["choices"][0]["turns"] for a in read_jsonl(path)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "mt_bench"))
    ap.add_argument("--merge-checklists", action="store_true")
    args = ap.parse_args()

    questions = read_jsonl(os.path.join(args.data, "questions", "question.jsonl"))
    corrected = answers_by_question(os.path.join(args.data, "questions", "reference_answer", "gpt-4-0125-preview.jsonl"))
    gpt4 = answers_by_question(os.path.join(args.data, "lmsys_model_answers", "gpt-4.jsonl"))

    checklists = {}
    if args.merge_checklists:
        for row in read_jsonl(os.path.join(OUT, "checklists.jsonl")):
            checklists[row["session_id"]] = row["checklist"]

    queries = []
    for q in questions:
        qid = q["question_id"]
        refs = corrected.get(qid) or gpt4[qid]
        source = "gpt-4-0125-preview (corrected reference)" if qid in corrected else "gpt-4 (MT-Bench answer)"
        for turn in (1, 2):
            conv = [{"role": "user", "content": q["turns"][0]}]
            if turn == 2:
                conv += [{"role": "assistant", "content": refs[0]}, {"role": "user", "content": q["turns"][1]}]
            sid = f"{qid}_turn{turn}"
            queries.append({
                "session_id": sid,
                "question_id": qid,
                "turn": turn,
                "category": q["category"],
                "conversation_input": conv,
                "references": {"gpt-4": refs[turn - 1]},
                "reference_source": source,
                "checklist": checklists.get(sid, []),
            })
    os.makedirs(OUT, exist_ok=True)
    write_jsonl(os.path.join(OUT, "queries.jsonl"), queries)

    demo_dir = os.path.join(OUT, "demo")
    os.makedirs(demo_dir, exist_ok=True)
    for model in DEMO_MODELS:
        answers = answers_by_question(os.path.join(args.data, "lmsys_model_answers", f"{model}.jsonl"))
        rows = []
        for qid in DEMO_QUESTIONS:
            q = next(x for x in questions if x["question_id"] == qid)
            turns = answers[qid]
            for turn in (1, 2):
                history = [] if turn == 1 else [q["turns"][0], turns[0]]
                rows.append({
                    "session_id": f"{qid}_turn{turn}",
                    "chat_history": history + [q["turns"][turn - 1]],
                    "output": [turns[turn - 1]],
                    "generator": model,
                })
        write_jsonl(os.path.join(demo_dir, f"{model}.jsonl"), rows)
    print(f"wrote {len(queries)} queries, {len(DEMO_MODELS)} demo response files to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
