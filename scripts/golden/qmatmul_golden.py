#!/usr/bin/env python3
"""Golden weight products from llama.cpp's own CPU kernels (ggml, through ctypes) for the integer
matmul tests (crate/engine/tests/qmatmul.rs).

For one real tensor of each weight type in the packaged models, the first rows of the weight times a
few activation rows: ggml's `mul_mat` on its CPU backend, which rounds the activations to 8 bits per
block (Q8_K / Q8_0 / Q8_1) and sums integer products. The activations are generated from integers
(xorshift) with one correctly rounded f32 division, so Rust regenerates them bit for bit.

Usage: pip install llama-cpp-python==0.3.36 gguf==0.19.0 numpy
       python3 scripts/golden/qmatmul_golden.py
Models are read from $ROCKETJUDGE_CACHE/models (default ~/.cache/rocketjudge/models).
"""
import ctypes
import json
import os

import gguf
import llama_cpp
import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "golden", "engine", "qmatmul.json")
CACHE = os.path.join(os.environ.get("ROCKETJUDGE_CACHE", os.path.expanduser("~/.cache/rocketjudge")), "models")

# (model, tensor): one of each weight type the packaged judges hold, with its largest K.
CASES = [
    ("qwen2.5-coder-1.5b", "blk.0.attn_q.weight"),    # Q4_K, K = 1536
    ("qwen2.5-coder-1.5b", "blk.0.ffn_down.weight"),  # Q6_K, K = 8960
    ("qwen2.5-coder-0.5b", "blk.0.ffn_up.weight"),    # Q5_0, K = 896
    ("qwen2.5-coder-0.5b", "blk.0.attn_v.weight"),    # Q8_0, K = 896
    ("qwen2.5-coder-0.5b", "blk.11.ffn_down.weight"),  # Q4_K, K = 4864
    ("smollm2-135m", "blk.0.ffn_up.weight"),          # Q4_1, K = 576
]
ROWS = 24  # weight rows (three groups of 8)
M = 5      # activation rows

lib = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
base = ctypes.CDLL(os.path.join(lib, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
cpu = ctypes.CDLL(os.path.join(lib, "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


base.ggml_init.restype = ctypes.c_void_p
base.ggml_init.argtypes = [InitParams]
base.ggml_new_tensor_2d.restype = ctypes.c_void_p
base.ggml_new_tensor_2d.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
base.ggml_get_data.restype = ctypes.c_void_p
base.ggml_get_data.argtypes = [ctypes.c_void_p]
base.ggml_mul_mat.restype = ctypes.c_void_p
base.ggml_mul_mat.argtypes = [ctypes.c_void_p] * 3
base.ggml_new_graph.restype = ctypes.c_void_p
base.ggml_new_graph.argtypes = [ctypes.c_void_p]
base.ggml_build_forward_expand.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
base.ggml_free.argtypes = [ctypes.c_void_p]
cpu.ggml_graph_compute_with_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]


def mul_mat(wtype, wbytes, n, k, x):
    """ggml_mul_mat(W[n, k], X[m, k]) on the CPU backend: Y[m, n]."""
    m = x.shape[0]
    ctx = base.ggml_init(InitParams(256 << 20, None, False))
    w = base.ggml_new_tensor_2d(ctx, wtype, k, n)
    ctypes.memmove(base.ggml_get_data(w), wbytes.ctypes.data, wbytes.nbytes)
    xt = base.ggml_new_tensor_2d(ctx, 0, k, m)  # GGML_TYPE_F32
    ctypes.memmove(base.ggml_get_data(xt), x.ctypes.data, x.nbytes)
    y = base.ggml_mul_mat(ctx, w, xt)
    graph = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(graph, y)
    cpu.ggml_graph_compute_with_ctx(ctx, graph, 1)
    out = np.ctypeslib.as_array(ctypes.cast(base.ggml_get_data(y), ctypes.POINTER(ctypes.c_float)), shape=(m, n)).copy()
    base.ggml_free(ctx)
    return out


def activations(m, k, seed):
    """xorshift32 integers in [−1000, 1000], divided by 997 in f32 (same as the Rust test)."""
    s = (seed * 2654435761 + 12345) & 0xFFFFFFFF
    out = np.empty(m * k, np.float32)
    for i in range(m * k):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        out[i] = np.float32((s % 2001) - 1000) / np.float32(997.0)
    return out.reshape(m, k)


def main():
    cases = []
    readers = {}
    for i, (model, name) in enumerate(CASES):
        path = os.path.join(CACHE, f"{model}.gguf")
        r = readers.setdefault(model, gguf.GGUFReader(path))
        t = next(t for t in r.tensors if t.name == name)
        k = int(t.shape[0])
        wbytes = np.ascontiguousarray(t.data[:ROWS])
        x = activations(M, k, seed=i + 1)
        y = mul_mat(int(t.tensor_type), wbytes, ROWS, k, x)
        cases.append({"model": model, "tensor": name, "type": t.tensor_type.name, "k": k, "rows": ROWS, "m": M, "seed": i + 1,
                      "y": [[float(v) for v in row] for row in y]})
        print(f"{model} {name} {t.tensor_type.name} k={k}")
    out = {"generated_by": "scripts/golden/qmatmul_golden.py", "llama_cpp_python": llama_cpp.__version__, "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
