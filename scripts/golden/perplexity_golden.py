#!/usr/bin/env python3
"""Golden mean token log-probabilities of responses from llama.cpp (llama-cpp-python), for seed 004's
perplexity score (`rocketjudge direct --instruction perplexity`, engine `response_logprob`).

For each model and each single-turn parity fixture: the query is the user's message in the model's
chat template (rendered with jinja2 as in llama_golden.py, generation prompt opened), tokenized by
llama.cpp with special tokens parsed; the response is tokenized as plain text and appended. llama.cpp
evaluates the whole sequence with logits for every position; the score is the mean over the response's
tokens of log softmax(logits)[token]. Also with flash attention and an f32 KV cache: the spread of
those settings is llama.cpp's own variation.

Usage: pip install llama-cpp-python==0.3.36 jinja2
       python3 scripts/golden/perplexity_golden.py [--threads 2]
"""
import argparse
import json
import os
import sys

import numpy as np
from llama_cpp import Llama
import llama_cpp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_golden import FIX, OUT, model_path, render, sha256  # noqa: E402

PLAN = {"smollm2-135m": ["short", "long"], "qwen2.5-coder-0.5b": ["short", "long"]}
VARIANTS = {"flash_attn": {"flash_attn": True}, "f32_kv_cache": {"type_k": 0, "type_v": 0}}


def mean_logprob(llm, context, answer):
    llm.reset()
    llm.eval(context + answer)
    logits = np.asarray(llm.scores[: len(context) + len(answer)], dtype=np.float64)
    rows = logits[len(context) - 1 : len(context) + len(answer) - 1]
    m = rows.max(axis=1, keepdims=True)
    logz = m[:, 0] + np.log(np.exp(rows - m).sum(axis=1))
    return float(np.mean(rows[np.arange(len(answer)), answer] - logz))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    queries = {q["session_id"]: q for q in map(json.loads, open(os.path.join(FIX, "queries.jsonl")))}
    responses = {r["fixture"]: r for r in map(json.loads, open(os.path.join(FIX, "responses.jsonl")))}
    out = {"generated_by": "scripts/golden/perplexity_golden.py", "llama_cpp_python": llama_cpp.__version__, "models": {}}
    for name, fixtures in PLAN.items():
        path = model_path(name)
        base = dict(model_path=path, n_ctx=4096, n_batch=512, n_threads=args.threads, verbose=False, logits_all=True)
        llm = Llama(**base)
        cases = []
        for fx in fixtures:
            r = responses[fx]
            q = queries[r["session_id"]]
            assert len(q["conversation_input"]) == 1, "single-turn fixtures only"
            user = q["conversation_input"][0]["content"]
            context = llm.tokenize(render(llm, user).encode(), add_bos=True, special=True)
            answer = llm.tokenize(r["output"][-1].encode(), add_bos=False, special=False)
            cases.append({"fixture": fx, "context_tokens": len(context), "answer_tokens": len(answer),
                          "mean_logprob": mean_logprob(llm, context, answer), "variants": {}, "_ids": (context, answer)})
        del llm
        for vname, cfg in VARIANTS.items():
            llm = Llama(**{**base, **cfg})
            for c in cases:
                c["variants"][vname] = mean_logprob(llm, *c["_ids"])
            del llm
        for c in cases:
            del c["_ids"]
            print(name, c["fixture"], c["answer_tokens"], "tokens, mean log p", round(c["mean_logprob"], 5), c["variants"], flush=True)
        out["models"][name] = {"sha256": sha256(path), "cases": cases}
    with open(os.path.join(OUT, "perplexity.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
