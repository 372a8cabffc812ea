#!/usr/bin/env python3
"""A speed twin of a GGUF judge: the same metadata, tokenizer, tensor names, shapes and quantization
types, with random weights. For benchmarks on machines the real file cannot reach (a lent GPU machine
with no network and a 64 MiB transfer limit): both engines do exactly the same work on a twin as on the
real model, since neither's speed depends on the weight values. Its scores mean nothing.

    twin_gguf.py skeleton MODEL.gguf OUT.skel   # the header (metadata + tensor table), a few MB
    twin_gguf.py fill OUT.skel OUT.gguf [--seed 0]   # header + random tensor data (numpy)

Quantized blocks get random quants and fixed small scales (no NaN or infinity anywhere); F32 tensors
named *norm* are ones, other F32/F16 tensors small normal values. `skeleton` needs only the standard
library; `fill` needs numpy.
"""
import argparse
import json
import os
import struct
import sys

MAGIC = b"RJTWIN1\n"
# ggml type id: (name, elements per block, bytes per block, offsets of the block's f16 scales)
TYPES = {
    0: ("F32", 1, 4, ()), 1: ("F16", 1, 2, ()), 30: ("BF16", 1, 2, ()),
    2: ("Q4_0", 32, 18, (0,)), 3: ("Q4_1", 32, 20, (0, 2)), 6: ("Q5_0", 32, 22, (0,)),
    7: ("Q5_1", 32, 24, (0, 2)), 8: ("Q8_0", 32, 34, (0,)),
    10: ("Q2_K", 256, 84, (80, 82)), 11: ("Q3_K", 256, 110, (108,)), 12: ("Q4_K", 256, 144, (0, 2)),
    13: ("Q5_K", 256, 176, (0, 2)), 14: ("Q6_K", 256, 210, (208,)),
}
SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


class Reader:
    def __init__(self, f):
        self.f = f

    def take(self, fmt):
        size = struct.calcsize("<" + fmt)
        data = self.f.read(size)
        if len(data) != size:
            sys.exit("not a complete GGUF file (it ends inside its header)")
        return struct.unpack("<" + fmt, data)[0]

    def string(self):
        return self.f.read(self.take("Q")).decode("utf-8", "replace")

    def value(self, vtype):
        if vtype in SCALAR:
            return self.take(SCALAR[vtype])
        if vtype == 8:
            return self.string()
        if vtype == 9:
            item, n = self.take("I"), self.take("Q")
            return [self.value(item) for _ in range(n)] if item in (8, 9) else self.f.read(n * struct.calcsize(SCALAR[item]))
        sys.exit(f"unknown GGUF value type {vtype}")


def skeleton(src, out):
    with open(src, "rb") as f:
        r = Reader(f)
        if f.read(4) != b"GGUF":
            sys.exit(f"{src} is not a GGUF file (no GGUF magic)")
        version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
        alignment = 32
        for _ in range(n_kv):
            key, vtype = r.string(), r.take("I")
            value = r.value(vtype)
            if key == "general.alignment":
                alignment = value
        tensors = []
        for _ in range(n_tensors):
            name = r.string()
            dims = [r.take("Q") for _ in range(r.take("I"))]
            ggml_type, offset = r.take("I"), r.take("Q")
            if ggml_type not in TYPES:
                sys.exit(f"{src}: tensor {name} has ggml type {ggml_type}, which this script does not know")
            _, block, size, _ = TYPES[ggml_type]
            n = 1
            for d in dims:
                n *= d
            tensors.append({"name": name, "type": ggml_type, "offset": offset, "nbytes": n // block * size})
        data_start = -(-f.tell() // alignment) * alignment
        f.seek(0)
        header = f.read(data_start)
    meta = json.dumps({"source": os.path.basename(src), "version": version, "data_start": data_start, "tensors": tensors}).encode()
    with open(out + ".tmp", "wb") as o:
        o.write(MAGIC + struct.pack("<Q", len(meta)) + meta + header)
    os.replace(out + ".tmp", out)
    print(f"{out}: {len(tensors)} tensors, {sum(t['nbytes'] for t in tensors) / 2**20:.0f} MiB of data to fill", file=sys.stderr)


def random_blocks(ggml_type, n, rng):
    """`n` blocks of a quantized type as bytes (n × block size): random quants, every f16 scale a
    small power of two."""
    import numpy as np

    _, block, size, scales = TYPES[ggml_type]
    data = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    small = np.float16(2.0**-9 if block == 32 else 2.0**-12).view(np.uint16)
    for at in scales:
        data[:, at:at + 2] = np.frombuffer(struct.pack("<H", int(small)), np.uint8)
    return data


def read_skeleton(skel):
    """A skeleton's tensor table (`meta`) and the judge's header bytes."""
    with open(skel, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            sys.exit(f"{skel} is not a twin skeleton (made by `twin_gguf.py skeleton`)")
        meta = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        return meta, f.read()


def fill(skel, out, seed):
    import numpy as np

    meta, header = read_skeleton(skel)
    rng = np.random.default_rng(seed)
    with open(out + ".tmp", "wb") as o:
        o.write(header)
        for t in sorted(meta["tensors"], key=lambda t: t["offset"]):
            o.write(b"\0" * (meta["data_start"] + t["offset"] - o.tell()))
            name, block, size, scales = TYPES[t["type"]]
            n = t["nbytes"] // size
            if name == "F32":
                data = np.ones(n, np.float32) if "norm" in t["name"] or "rope_freqs" in t["name"] else (0.02 * rng.standard_normal(n)).astype(np.float32)
            elif name in ("F16", "BF16"):
                data = (0.02 * rng.standard_normal(n)).astype(np.float16 if name == "F16" else np.float32)
                if name == "BF16":
                    data = (data.view(np.uint32) >> 16).astype(np.uint16)
            else:
                data = random_blocks(t["type"], n, rng)
            o.write(data.tobytes())
    os.replace(out + ".tmp", out)
    print(f"{out}: a random-weight twin of {meta['source']} ({os.path.getsize(out) / 2**20:.0f} MiB)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("skeleton")
    s.add_argument("model")
    s.add_argument("out")
    f = sub.add_parser("fill")
    f.add_argument("skeleton")
    f.add_argument("out")
    f.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.cmd == "skeleton":
        skeleton(a.model, a.out)
    else:
        fill(a.skeleton, a.out, a.seed)


if __name__ == "__main__":
    main()
