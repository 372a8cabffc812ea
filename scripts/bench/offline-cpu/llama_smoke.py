#!/usr/bin/env python3
"""Smoke test of a llama-cpp-python build: load a GGUF, evaluate 64 tokens (the bench's warm-up) and a
512-token batch (a prefill chunk, where the big-batch kernels run). Exits non-zero (or dies by a
signal) when the build is broken.   usage: llama_smoke.py MODEL.gguf THREADS"""
import sys
import time

import llama_cpp
from llama_cpp import Llama

model, threads = sys.argv[1], int(sys.argv[2])
print(f"llama_cpp {llama_cpp.__version__} from {llama_cpp.__file__}", flush=True)
try:
    print("system info:", llama_cpp.llama_print_system_info().decode(), flush=True)
except Exception as e:  # informational only
    print("system info: n/a", e, flush=True)
t = time.perf_counter()
llm = Llama(model_path=model, n_ctx=1024, n_batch=512, n_threads=threads, n_gpu_layers=0, verbose=False)
print(f"loaded in {time.perf_counter() - t:.2f}s; n_vocab {llm.n_vocab()}", flush=True)
ids = [(i * 7919 + 13) % min(llm.n_vocab(), 30000) + 100 for i in range(600)]
t = time.perf_counter()
llm.eval(ids[:64])
print(f"eval 64 tokens: {time.perf_counter() - t:.3f}s", flush=True)
llm.reset()
t = time.perf_counter()
llm.eval(ids[:512])
dt = time.perf_counter() - t
print(f"eval 512 tokens: {dt:.3f}s ({512 / dt:.0f} tok/s)", flush=True)
print("SMOKE OK", flush=True)
