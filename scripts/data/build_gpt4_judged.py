#!/usr/bin/env python3
"""The bundled GPT-4-judged demo set: five FastChat-fork models with GPT-4's single-answer scores, on the
same 8 MT-Bench questions × 2 turns as benchmarks/mt-bench/demo/ (one question per category).

Writes into benchmarks/mt-bench/gpt4-judged/:
  <model>.jsonl        RocketEval responses (turn 2 with the model's own turn 1 in `chat_history`, as in demo/)
  gpt-4_single.jsonl   FastChat single-answer judgments of exactly those models and sessions
                       (question_id, model, judge, score, turn, judgment; the judge prompt is dropped)

The answers are recovered from the GPT-4 judge prompts (`fork_answer` of scripts/quality/prepare.py), so the
responses are exactly what GPT-4 judged. Reads data/mt_bench/fork_gpt4_judgments (see data/SOURCES.md §3; python3 scripts/data/fetch.py fetches it).
Usage: python3 scripts/data/build_gpt4_judged.py [--out DIR]
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "quality"))
from prepare import DATA, DEFAULT_QUESTIONS, ROOT, fork_answer, jl, write_jsonl  # noqa: E402

# model -> the fork folder whose judgments are used; a wide spread of GPT-4 means on these 16 turns
# (gemini 8.7, claude-3.5-sonnet 8.6: a close pair; llama2 chat 6.4, llama2 base 4.1, gemma-SFT 2.7).
MODELS = {
    "gemini-1.5-flash": "Hameed92__FastChat",
    "claude-3-5-sonnet-20240620": "muhan421__fastchat-eval",
    "llama2_chat_7b": "don-tpanic__FastChat",
    "llama2_7b": "don-tpanic__FastChat",
    "gemma-SFT": "jtbwedgwood__FastChat",
}
KEEP = ("question_id", "model", "judge", "score", "turn", "judgment")
# Text of FastChat's judge prompts that must never end up inside a recovered answer.
RESIDUE = ("[The End of Assistant", "<|The Start of", "<|The End of", "### User:", "### Assistant A:", "[Instruction]")


def judgments(folder, model, qids):
    """(question_id, turn) -> judgment line of `model` in the fork folder, valid scores only."""
    out = {}
    for path in sorted(glob.glob(os.path.join(DATA, "mt_bench", "fork_gpt4_judgments", folder, "gpt-4_single*"))):
        for j in jl(path):
            if j["model"] == model and j["question_id"] in qids and (j.get("score") or -1) >= 0 and "user_prompt" in j:
                out.setdefault((j["question_id"], j["turn"]), (j, os.path.basename(path)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.normpath(ROOT), "benchmarks", "mt-bench", "gpt4-judged"))
    a = ap.parse_args()
    qids = [int(x) for x in DEFAULT_QUESTIONS.split(",")]
    queries = {q["session_id"]: q for q in jl(os.path.join(ROOT, "benchmarks", "mt-bench", "queries.jsonl"))}
    labels = []
    for model, folder in MODELS.items():
        js = judgments(folder, model, qids)
        rows = []
        for qid in qids:
            users = [m["content"] for m in queries[f"{qid}_turn2"]["conversation_input"] if m["role"] == "user"]
            for t in (1, 2):
                if (qid, t) not in js:
                    sys.exit(f"{model}: no valid GPT-4 judgment of question {qid} turn {t} in {folder}")
                j, src = js[(qid, t)]
                parsed = fork_answer(j)
                if parsed is None:
                    sys.exit(f"{model}: cannot recover the answer to {qid} turn {t} from the judge prompt ({folder}/{src})")
                answer, first = parsed
                for text in (answer,) if t == 1 else (answer, first):
                    if any(r in text for r in RESIDUE):
                        sys.exit(f"{model}: the answer recovered for {qid} turn {t} holds judge-prompt text")
                if not answer.strip():
                    # Kept: a real empty answer (llama2_7b, a base model, on 131 turn 1); GPT-4 gave it 1.
                    print(f"note: {model} gave an empty answer to {qid} turn {t} (GPT-4 score {j['score']})")
                hist = [] if t == 1 else [users[0], first]
                rows.append({"session_id": f"{qid}_turn{t}", "chat_history": hist + [users[t - 1]], "output": [answer], "generator": model})
                labels.append({k: j[k] for k in KEEP})
        write_jsonl(os.path.join(a.out, f"{model}.jsonl"), rows)
        mean = sum(l["score"] for l in labels if l["model"] == model) / len(rows)
        print(f"{model:28s} {len(rows)} responses, GPT-4 mean {mean:.2f}  ({folder}/{src})")
    write_jsonl(os.path.join(a.out, "gpt-4_single.jsonl"), labels)
    print(f"{len(labels)} judgments -> {a.out}")


if __name__ == "__main__":
    main()
