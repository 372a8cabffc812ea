#!/usr/bin/env python3
"""Write the parity fixtures: a few real MT-Bench queries (with our checklists) and real answers.

Sources: benchmarks/mt-bench/queries.jsonl and data/mt_bench/lmsys_model_answers (Apache-2.0; python3 scripts/data/fetch.py fetches it).
Output: tests/fixtures/parity/{queries,responses}.jsonl (RocketEval format).
"""
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ANSWERS = os.path.join(ROOT, "data", "mt_bench", "lmsys_model_answers")
OUT = os.path.join(ROOT, "tests", "fixtures", "parity")

# (fixture name, question id, turn, answering model)
FIXTURES = [
    ("short", 101, 1, "llama-13b"),
    ("multiturn", 101, 2, "vicuna-13b-v1.3"),
    ("long", 149, 1, "llama-13b"),
]


def main():
    queries = {q["session_id"]: q for q in map(json.loads, open(os.path.join(ROOT, "benchmarks", "mt-bench", "queries.jsonl")))}
    qs, rs = [], []
    for name, qid, turn, model in FIXTURES:
        sid = f"{qid}_turn{turn}"
        q = dict(queries[sid])
        q = {k: q[k] for k in ("session_id", "conversation_input", "checklist", "references", "category")}
        qs.append(q)
        answer = next(a for a in map(json.loads, open(os.path.join(ANSWERS, f"{model}.jsonl"))) if a["question_id"] == qid)
        turns = answer["choices"][0]["turns"]
        users = [m["content"] for m in q["conversation_input"] if m["role"] == "user"]
        history = []
        for t in range(turn - 1):
            history += [users[t], turns[t]]
        rs.append({"session_id": sid, "chat_history": history + [users[turn - 1]], "output": [turns[turn - 1]], "generator": model, "fixture": name})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "queries.jsonl"), "w") as f:
        f.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in qs)
    with open(os.path.join(OUT, "responses.jsonl"), "w") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rs)
    print("wrote", len(qs), "fixtures to", OUT)


if __name__ == "__main__":
    main()
