#!/usr/bin/env python3
"""Golden greedy continuations from llama.cpp (llama-cpp-python) for `crate/engine/tests/generate.rs`.

For each packaged judge and each parity fixture it is checked on (llama_golden.PLAN), the fixture's
user query is sent as the user's message in the model's chat template (rendered with jinja2, as
llama_golden.py does), tokenized by llama.cpp with special tokens parsed, and continued greedily
(the highest logit; llama.cpp's greedy sampler) for up to 64 tokens or an end-of-generation token.
Each step records the five highest logits, so that a test can show both candidates where our
continuation and llama.cpp's part.

The reference's own variation: the same greedy run with flash attention and with an f32 KV cache.
While a variant's tokens still equal the default's, every step compares the gap between the
default's top logit and its runner-up; the largest change of that gap across the variants is how far
llama.cpp's own equally legitimate settings move a near-tie.

Usage: pip install llama-cpp-python==0.3.36 jinja2
       python3 scripts/golden/generate_golden.py [--models smollm2-135m,...] [--threads 2]
Writes tests/golden/engine/generate-<model>.json.
"""
import argparse
import json
import os

import llama_cpp
import numpy as np
from llama_cpp import Llama

from llama_golden import FIX, OUT, PLAN, VARIANTS, model_path, render, sha256

MAX_NEW = 64
TOP = 5


def greedy(llm, prompt):
    """llama.cpp's greedy continuation of `prompt`: (tokens, per-step top logits as [id, logit])."""
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    llm.reset()
    llm.eval(prompt)
    tokens, steps = [], []
    for _ in range(MAX_NEW):
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        # The highest logit, the lowest id on a tie (argmax's first), as llama.cpp's greedy sampler.
        order = np.argsort(-logits, kind="stable")[:TOP]
        steps.append([[int(i), float(logits[i])] for i in order])
        tok = int(order[0])
        tokens.append(tok)
        if llama_cpp.llama_vocab_is_eog(vocab, tok):
            break
        llm.eval([tok])
    return tokens, steps


def gap_change(steps_a, tokens_a, steps_b, tokens_b):
    """The largest change, from run a to run b, of the gap between a's top logit and its runner-up,
    over the steps where both runs generated the same tokens so far."""
    worst = 0.0
    for k, (sa, sb) in enumerate(zip(steps_a, steps_b)):
        if tokens_a[:k] != tokens_b[:k]:
            break
        lb = dict((i, l) for i, l in sb)
        top_a = sa[0][1]
        top_b = lb.get(sa[0][0])
        for i, l in sa[1:2]:
            if top_b is not None and i in lb:
                worst = max(worst, abs((top_a - l) - (top_b - lb[i])))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(m for m in PLAN if not m.startswith("random-")))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    queries = {q["session_id"]: q for q in map(json.loads, open(os.path.join(FIX, "queries.jsonl")))}
    responses = [json.loads(l) for l in open(os.path.join(FIX, "responses.jsonl"))]
    for name in args.models.split(","):
        path = model_path(name)
        base = dict(model_path=path, n_ctx=4096, n_batch=512, n_threads=args.threads, verbose=False, logits_all=False)
        llm = Llama(**base)
        fixtures = []
        for r in (r for r in responses if r["fixture"] in PLAN[name]):
            content = queries[r["session_id"]]["conversation_input"][-1]["content"]
            prompt = llm.tokenize(render(llm, content).encode(), add_bos=True, special=True)
            tokens, steps = greedy(llm, prompt)
            text_tokens = tokens[:-1] if llama_cpp.llama_vocab_is_eog(llama_cpp.llama_model_get_vocab(llm.model), tokens[-1]) else tokens
            fixtures.append({"fixture": r["fixture"], "session_id": r["session_id"], "user_message": content, "prompt": prompt,
                             "tokens": tokens, "text": llm.detokenize(text_tokens).decode("utf-8", errors="replace"),
                             "steps": steps, "variants": {}})
            print(name, r["fixture"], len(prompt), "prompt tokens,", len(tokens), "generated:", repr(fixtures[-1]["text"][:80]), flush=True)
        del llm
        worst = 0.0
        for vname, cfg in VARIANTS.items():
            llm = Llama(**{**base, **cfg})
            for f in fixtures:
                tokens, steps = greedy(llm, f["prompt"])
                same = next((k for k, (a, b) in enumerate(zip(tokens, f["tokens"])) if a != b), min(len(tokens), len(f["tokens"])))
                f["variants"][vname] = {"tokens": tokens, "same_tokens": same}
                worst = max(worst, gap_change(f["steps"], f["tokens"], steps, tokens))
            del llm
        out = {
            "generated_by": "scripts/golden/generate_golden.py",
            "llama_cpp_python": llama_cpp.__version__,
            "model": name, "sha256": sha256(path), "threads": args.threads, "max_new": MAX_NEW,
            "reference_variation": worst,
            "variants": ["default", *VARIANTS],
            "fixtures": fixtures,
        }
        with open(os.path.join(OUT, f"generate-{name}.json"), "w") as f:
            json.dump(out, f)
            f.write("\n")
        print(name, "largest change of a logit gap across llama.cpp's settings:", round(worst, 4),
              "; variants' tokens equal to the default's:", [(f["fixture"], {v: x["same_tokens"] for v, x in f["variants"].items()}) for f in fixtures],
              flush=True)


if __name__ == "__main__":
    main()
