#!/usr/bin/env python3
"""The `rocketjudge bench` workload through llama.cpp (llama-cpp-python), for a side-by-side reference,
with llama.cpp at its best on this machine.

Input (JSON file given as argv[1]): {"model": path, "threads": n, "prefix": [ids], "suffixes": [[ids]...],
"repeat": r, "decode_tokens": n, "first_token": id, "scratch": bool, "gpu_layers": n (-1: all, where the build has a GPU backend),
"pilot": bool (default true)}.

Settings: on the CPU (gpu_layers 0) no op offload, so that a build with a GPU backend computes there
too (ggml's scheduler otherwise sends every product of at least 32 rows to the GPU whatever
n_gpu_layers says: GGML_OP_OFFLOAD_MIN_BATCH, default 32); one logical batch as long as the whole context (n_batch: the prefix is one evaluation), run
in physical batches of 512 (n_ubatch, llama.cpp's default: on a 2-core Zen 2 its prefill of a
1500-token prefix was 6-15 % faster than with one physical batch of the whole prefix), prompt and
generation on the same thread count (n_threads_batch = n_threads: llama-cpp-python would otherwise
prefill on every logical CPU, whatever `threads` says).

Choices: on the CPU a pilot times a piece of the prefix (PILOT_TOKENS) with `threads` and with one
thread, and the faster count runs the workload. The workload then runs twice, flash attention on and
off: on a CPU flash attention can make the prefix faster and the items on top of it slower. The run
with the faster response (prefix and items) is reported; where the other run prefilled faster, its
prefill is reported as best_prefill, so that each figure is llama.cpp's best for it. Without the pilot:
`threads`, flash attention off, one run.

Prints one JSON object: the settings, the pilot's and the runs' figures, and, for the reported run, the
median over repeats of
  prefill_s   — the prefix evaluated once (llama.cpp's best: keep its KV cache),
  items_s     — each suffix evaluated on top of the cached prefix (KV truncated back after each),
  decode_s    — decode_tokens generated greedily on top of the prefix from first_token, one
                token per evaluation with its logits (end-of-generation does not stop it),
  scratch_s   — (if asked) each item evaluated from scratch, prefix included, as naive graders do.
and weight_buffers: the buffer types llama.cpp put the weights in, as its log says at load ("CPU_REPACK":
its CPU kernels' repacked layouts; "AMX": the Intel AMX tiles' kernels; "CUDA0": a GPU), which tells
which of its kernels the figures come from.
"""
import json
import re
import statistics
import sys
import time

PILOT_TOKENS = 512
UBATCH = 512


def keep_log(llama_cpp):
    """Collect llama.cpp's log (all of it, whatever `verbose` says) into the returned list."""
    lines = []

    @llama_cpp.llama_log_callback
    def keep(level, text, user_data):
        lines.append(text.decode("utf-8", "replace"))

    llama_cpp.llama_log_set(keep, None)
    keep_log.callback = keep  # ctypes calls it later: keep it alive
    return lines


def weight_buffers(log):
    """The buffer types of the weights, from llama.cpp's "<type> model buffer size = …" lines."""
    return sorted(set(re.findall(r"(\S+) model buffer size", "".join(log))))


def thread_counts(cfg):
    """The thread counts the pilot tries, the configured one first (one thread too, on the CPU)."""
    if cfg.get("pilot", True) and cfg.get("gpu_layers", 0) == 0 and cfg["threads"] > 1:
        return [cfg["threads"], 1]
    return [cfg["threads"]]


def flash_attention(cfg):
    return (True, False) if cfg.get("pilot", True) else (False,)


def context_size(cfg):
    prefix, suffixes = cfg["prefix"], cfg["suffixes"]
    n_ctx = len(prefix) + max(max(len(s) for s in suffixes), cfg.get("decode_tokens", 0)) + 16
    return max(n_ctx, 512)


def load(Llama, cfg, threads, flash_attn):
    n_ctx = context_size(cfg)
    gpu_layers = cfg.get("gpu_layers", 0)
    # A CPU row stays on the CPU: a build with a GPU backend otherwise sends every product of 32 rows
    # or more to the GPU even with no layer there (ggml's op offload, on by default).
    offload = {} if gpu_layers else {"op_offload": False}
    return Llama(model_path=cfg["model"], n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=UBATCH, n_threads=threads,
                 n_threads_batch=threads, flash_attn=flash_attn, n_gpu_layers=gpu_layers, verbose=False,
                 **offload)


def pilot(Llama, cfg):
    """The faster thread count on a piece of the prefix, and each count's prefix tokens/s."""
    counts = thread_counts(cfg)
    if len(counts) == 1:
        return counts[0], []
    piece = cfg["prefix"][:PILOT_TOKENS]
    figures = []
    for threads in counts:
        llm = load(Llama, cfg, threads, False)
        llm.eval(piece[:16])  # warm-up
        llm.reset()
        t = time.perf_counter()
        llm.eval(piece)
        figures.append({"threads": threads, "tokens": len(piece), "prefix_tokens_per_s": len(piece) / (time.perf_counter() - t)})
        llm.close()
    return max(figures, key=lambda f: f["prefix_tokens_per_s"])["threads"], figures


def workload(llm, cfg):
    """The medians over cfg["repeat"] rounds of the workload's parts (seconds)."""
    import numpy as np

    prefix, suffixes = cfg["prefix"], cfg["suffixes"]
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
    out = {"prefill_s": statistics.median(pre), "items_s": statistics.median(items)}
    if decode:
        out["decode_s"] = statistics.median(decode)
    if scratch:
        out["scratch_s"] = statistics.median(scratch)
    return out


def main():
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    import llama_cpp
    from llama_cpp import Llama

    log = keep_log(llama_cpp)
    threads, figures = pilot(Llama, cfg)
    runs = []
    for fa in flash_attention(cfg):
        llm = load(Llama, cfg, threads, fa)
        settings = {"threads": threads, "flash_attn": fa, "n_batch": llm.n_batch, "n_ubatch": llm.context_params.n_ubatch}
        runs.append({"settings": settings, **workload(llm, cfg)})
        llm.close()
    best = min(runs, key=lambda r: r["prefill_s"] + r["items_s"])
    gpu = cfg.get("gpu_layers", 0) != 0 and llama_cpp.llama_supports_gpu_offload()
    out = {"llama_cpp_python": llama_cpp.__version__, "device": "gpu (all layers)" if gpu else "cpu",
           "pilot": figures, "runs": runs, "weight_buffers": weight_buffers(log), **best}
    faster = min(runs, key=lambda r: r["prefill_s"])
    if faster is not best:
        out["best_prefill"] = {"settings": faster["settings"], "prefill_s": faster["prefill_s"]}
    # Peak resident memory of this process, Python included: VmHWM (getrusage's ru_maxrss would also
    # count the parent's memory at the fork that started us, which Linux folds in at exec).
    try:
        with open("/proc/self/status") as f:
            hwm = next(l for l in f if l.startswith("VmHWM:"))
        out["peak_rss_bytes"] = int(hwm.split()[1]) * 1024
    except (OSError, StopIteration):
        pass
    print(json.dumps(out))


if __name__ == "__main__":
    main()
