#!/usr/bin/env python3
"""Golden dequantization values: random ggml blocks decoded by gguf-py (llama.cpp's Python package).

Every bit pattern of the packed integers occurs; scale fields are random finite f16 values.
Usage: pip install gguf==0.19.0 numpy && python3 scripts/golden/quant_golden.py
"""
import json
import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "engine", "quant.json")

# (type, block bytes, byte offsets of f16 scale fields, blocks to write)
LAYOUTS = [
    (T.F16, 2, [0], 64),
    (T.BF16, 2, [], 64),
    (T.Q4_0, 18, [0], 3),
    (T.Q4_1, 20, [0, 2], 3),
    (T.Q5_0, 22, [0], 3),
    (T.Q5_1, 24, [0, 2], 3),
    (T.Q8_0, 34, [0], 3),
    (T.Q4_K, 144, [0, 2], 2),
    (T.Q5_K, 176, [0, 2], 2),
    (T.Q6_K, 210, [208], 2),
]


def main():
    rng = np.random.default_rng(7)
    cases = []
    for qtype, bb, f16_at, blocks in LAYOUTS:
        raw = bytearray(rng.integers(0, 256, size=bb * blocks, dtype=np.uint8).tobytes())
        for b in range(blocks):
            for off in f16_at:
                v = np.float16(rng.uniform(-0.1, 0.1))
                raw[b * bb + off:b * bb + off + 2] = v.tobytes()
        if qtype == T.BF16:  # keep values finite: clear exponent-all-ones patterns
            arr = np.frombuffer(bytes(raw), dtype=np.uint16).copy()
            arr &= 0xBFFF
            raw = bytearray(arr.tobytes())
        if qtype == T.F16:
            arr = np.frombuffer(bytes(raw), dtype=np.uint16).copy()
            arr &= 0xBBFF
            raw = bytearray(arr.tobytes())
        values = dequantize(np.frombuffer(bytes(raw), dtype=np.uint8), qtype).astype(np.float64).ravel()
        assert np.all(np.isfinite(values))
        cases.append({"type": qtype.name, "ggml_type": int(qtype), "hex": bytes(raw).hex(), "values": values.tolist()})
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/golden/quant_golden.py", "gguf_py": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0",
                   "tolerance_relative": 1e-6, "cases": cases}, f)
        f.write("\n")
    print("wrote", OUT, sum(len(c["values"]) for c in cases), "values")


if __name__ == "__main__":
    main()
