#!/usr/bin/env python3
"""Small real inputs for the browser tests: 3 short MT-Bench queries (with our checklists) and the
LMSYS answers of 4 models to them (short answers keep grading fast on SwiftShader and the wasm CPU).
Output: tests/fixtures/browser/{queries.jsonl, responses/<model>.jsonl, fastchat/<model>.jsonl}."""
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ANSWERS = os.path.join(ROOT, "data", "mt_bench", "lmsys_model_answers")
OUT = os.path.join(ROOT, "tests", "fixtures", "browser")
SESSIONS = ["101_turn1", "104_turn1", "111_turn1"]
MODELS = ["gpt-4", "gpt-3.5-turbo", "llama-13b", "alpaca-13b"]


def main():
    queries = {q["session_id"]: q for q in map(json.loads, open(os.path.join(ROOT, "benchmarks", "mt-bench", "queries.jsonl")))}
    os.makedirs(os.path.join(OUT, "responses"), exist_ok=True)
    with open(os.path.join(OUT, "queries.jsonl"), "w") as f:
        for s in SESSIONS:
            q = {k: queries[s][k] for k in ("session_id", "category", "conversation_input", "checklist", "references")}
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    for m in MODELS:
        answers = {a["question_id"]: a for a in map(json.loads, open(os.path.join(ANSWERS, f"{m}.jsonl")))}
        with open(os.path.join(OUT, "responses", f"{m}.jsonl"), "w") as f:
            for s in SESSIONS:
                qid = int(s.split("_")[0])
                user = queries[s]["conversation_input"][0]["content"]
                out = answers[qid]["choices"][0]["turns"][0]
                f.write(json.dumps({"session_id": s, "chat_history": [user], "output": [out], "generator": m}, ensure_ascii=False) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
