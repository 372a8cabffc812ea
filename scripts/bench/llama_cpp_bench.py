#!/usr/bin/env python3
"""The `rocketjudge bench` workload through llama.cpp (llama-cpp-python), for a side-by-side reference.

Input (JSON file given as argv[1]): {"model": path, "threads": n, "prefix": [ids], "suffixes": [[ids]...],
"repeat": r, "decode_tokens": n, "first_token": id, "scratch": bool, "gpu_layers": n (-1: all, where the build has a GPU backend)}.
Prints one JSON object: the median over repeats of
  prefill_s   — the prefix evaluated once (llama.cpp's best: keep its KV cache),
  items_s     — each suffix evaluated on top of the cached prefix (KV truncated back after each),
  decode_s    — decode_tokens generated greedily on top of the prefix from first_token, one
                token per evaluation with its logits (end-of-generation does not stop it),
  scratch_s   — (if asked) each item evaluated from scratch, prefix included, as naive graders do.
"""
import json
import statistics

import numpy as np
import sys
import time

from llama_cpp import Llama


def main():
    cfg = json.load(open(sys.argv[1]))
    prefix, suffixes = cfg["prefix"], cfg["suffixes"]
    n_ctx = len(prefix) + max(max(len(s) for s in suffixes), cfg.get("decode_tokens", 0)) + 16
    llm = Llama(model_path=cfg["model"], n_ctx=max(n_ctx, 512), n_batch=512, n_threads=cfg["threads"],
                n_gpu_layers=cfg.get("gpu_layers", 0), verbose=False)
    llm.eval(prefix[:64])  # warm-up
    pre, items, decode, scratch = [], [], [], []
    n_decode = cfg.get("decode_tokens", 0)
    for _ in range(cfg["repeat"]):
        llm.reset()
        t = time.perf_counter()
        llm.eval(prefix)
        pre.append(time.perf_counter() - t)
        t = time.perf_counter()
        for s in suffixes:
            llm.n_tokens = len(prefix)
            llm.eval(s)
        items.append(time.perf_counter() - t)
        if n_decode:
            llm.n_tokens = len(prefix)
            t = time.perf_counter()
            tok = cfg["first_token"]
            for _ in range(n_decode):
                llm.eval([tok])
                tok = int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))))
            decode.append(time.perf_counter() - t)
        if cfg.get("scratch"):
            t = time.perf_counter()
            for s in suffixes:
                llm.reset()
                llm.eval(prefix + s)
            scratch.append(time.perf_counter() - t)
    import llama_cpp
    gpu = cfg.get("gpu_layers", 0) != 0 and llama_cpp.llama_supports_gpu_offload()
    out = {"llama_cpp_python": llama_cpp.__version__, "device": "gpu (all layers)" if gpu else "cpu", "prefill_s": statistics.median(pre), "items_s": statistics.median(items)}
    # Peak resident memory of this process, Python included: VmHWM (getrusage's ru_maxrss would also
    # count the parent's memory at the fork that started us, which Linux folds in at exec).
    try:
        hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        out["peak_rss_bytes"] = int(hwm.split()[1]) * 1024
    except (OSError, StopIteration):
        pass
    if decode:
        out["decode_s"] = statistics.median(decode)
    if scratch:
        out["scratch_s"] = statistics.median(scratch)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
