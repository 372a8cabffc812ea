#!/usr/bin/env python3
"""Random-weight judges for the architectures users bring and no packaged model covers.

Each is a small transformer (2 layers, 128-wide) with random weights around a *real* vocabulary
and chat template taken from llama.cpp's own tokenizer test files (models/ggml-vocab-*.gguf):

| file | architecture | vocabulary | what it exercises |
|---|---|---|---|
| random-llama3.gguf | llama | llama-bpe (Llama 3, 128 256 tokens) | Llama 3's pre-tokenizer, `rope_freqs.weight` (Llama 3.1+ RoPE scaling), GQA, tied output head |
| random-qwen3.gguf | qwen3 | qwen2 (151 936 tokens) | per-head Q/K RMSNorm, head size ≠ width / heads, NeoX RoPE, tied head |
| random-phi3.gguf | phi3 | phi-3 (SentencePiece, 32 064 tokens) | fused `attn_qkv` and gate+up `ffn_up`, Q scaled before the product, separate output head |

The weights come from numpy's legacy `RandomState` (its stream is frozen across numpy versions),
so the files are the same bytes wherever they are built; `scripts/golden/llama_golden.py` records
each file's SHA-256 next to llama.cpp's token ids and logits, and the parity test checks it first.

Usage (scripts/lib/setup.sh `fetch_llama_testdata` runs it; numpy and llama.cpp's gguf-py needed):
    random_judges.py --vocabs DIR_WITH_GGML_VOCABS --out DIR
"""
import argparse
import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

# Meta-Llama-3-8B-Instruct's chat template (the llama-bpe vocabulary file carries none).
LLAMA3_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

SPECS = {
    "random-llama3": dict(arch="llama", vocab="ggml-vocab-llama-bpe.gguf", seed=3, n_embd=128, n_head=4, n_head_kv=2,
                          head_dim=32, n_ff=256, rope_base=500000.0, rope_freqs=True, tied=True, template=LLAMA3_TEMPLATE,
                          add_bos=True),
    "random-qwen3": dict(arch="qwen3", vocab="ggml-vocab-qwen2.gguf", seed=4, n_embd=128, n_head=4, n_head_kv=2,
                         head_dim=48, n_ff=256, rope_base=1000000.0, qk_norm=True, tied=True),
    "random-phi3": dict(arch="phi3", vocab="ggml-vocab-phi-3.gguf", seed=5, n_embd=128, n_head=4, n_head_kv=4,
                        head_dim=32, n_ff=256, rope_base=10000.0, fused=True, tied=False),
}
N_LAYER = 2
EPS = 1e-5


def llama3_rope_factors(head_dim, base, factor=32.0, low=1.0, high=4.0, original=8192):
    """Llama 3.1's frequency factors, as convert_hf_to_gguf.py writes them into rope_freqs.weight."""
    freqs = 1.0 / base ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    low_wavelen, high_wavelen = original / low, original / high
    out = []
    for f in freqs:
        wavelen = 2 * np.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (original / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def copy_tokenizer(reader, writer, template):
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        main = field.types[0]
        if main == V.ARRAY:
            writer.add_key_value(name, field.contents(), V.ARRAY, sub_type=field.types[-1])
        else:
            writer.add_key_value(name, field.contents(), main)
    if template is not None:
        writer.add_key_value("tokenizer.chat_template", template, V.STRING)
    return len(reader.fields["tokenizer.ggml.tokens"].data)


def build(name, spec, vocabs, out_dir):
    rng = np.random.RandomState(spec["seed"])
    reader = gguf.GGUFReader(os.path.join(vocabs, spec["vocab"]))
    path = os.path.join(out_dir, name + ".gguf.tmp")
    w = gguf.GGUFWriter(path, spec["arch"])
    arch, e, hd = spec["arch"], spec["n_embd"], spec["head_dim"]
    nh, nkv, ff = spec["n_head"], spec["n_head_kv"], spec["n_ff"]
    w.add_string("general.name", name)
    for key, val, vt in [
        ("context_length", 4096, V.UINT32), ("embedding_length", e, V.UINT32), ("block_count", N_LAYER, V.UINT32),
        ("feed_forward_length", ff, V.UINT32), ("attention.head_count", nh, V.UINT32),
        ("attention.head_count_kv", nkv, V.UINT32), ("attention.layer_norm_rms_epsilon", EPS, V.FLOAT32),
        ("rope.freq_base", spec["rope_base"], V.FLOAT32), ("rope.dimension_count", hd, V.UINT32),
        ("attention.key_length", hd, V.UINT32), ("attention.value_length", hd, V.UINT32),
    ]:
        w.add_key_value(f"{arch}.{key}", val, vt)
    n_vocab = copy_tokenizer(reader, w, spec.get("template"))
    if "add_bos" in spec:
        w.add_key_value("tokenizer.ggml.add_bos_token", spec["add_bos"], V.BOOL)

    def matrix(tname, rows, cols):
        x = (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)
        q = gguf.quants.quantize(x, Q.Q8_0)
        w.add_tensor(tname, q, raw_shape=q.shape, raw_dtype=Q.Q8_0)

    def norm(tname, n, scale=1.0):
        w.add_tensor(tname, (scale * (1.0 + 0.2 * rng.standard_normal(n))).astype(np.float32))

    emb = rng.standard_normal((n_vocab, e)).astype(np.float32)
    q = gguf.quants.quantize(emb, Q.Q8_0)
    w.add_tensor("token_embd.weight", q, raw_shape=q.shape, raw_dtype=Q.Q8_0)
    # Yes/No logits a few units apart, so that p(Yes) stays away from 0 and 1 where it would hide
    # errors (the tied head's rows have unit size, a separate head's 1/√width).
    norm("output_norm.weight", e, scale=3.0 / np.sqrt(e) if spec["tied"] else 3.0)
    if not spec["tied"]:
        matrix("output.weight", n_vocab, e)
    if spec.get("rope_freqs"):
        w.add_tensor("rope_freqs.weight", llama3_rope_factors(hd, spec["rope_base"]))
    q_dim, kv_dim = nh * hd, nkv * hd
    for il in range(N_LAYER):
        b = f"blk.{il}."
        norm(b + "attn_norm.weight", e)
        if spec.get("fused"):
            matrix(b + "attn_qkv.weight", q_dim + 2 * kv_dim, e)
        else:
            matrix(b + "attn_q.weight", q_dim, e)
            matrix(b + "attn_k.weight", kv_dim, e)
            matrix(b + "attn_v.weight", kv_dim, e)
        if spec.get("qk_norm"):
            norm(b + "attn_q_norm.weight", hd)
            norm(b + "attn_k_norm.weight", hd)
        matrix(b + "attn_output.weight", e, q_dim)
        norm(b + "ffn_norm.weight", e)
        if spec.get("fused"):
            matrix(b + "ffn_up.weight", 2 * ff, e)
        else:
            matrix(b + "ffn_gate.weight", ff, e)
            matrix(b + "ffn_up.weight", ff, e)
        matrix(b + "ffn_down.weight", e, ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(path, os.path.join(out_dir, name + ".gguf"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocabs", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, spec in SPECS.items():
        if not os.path.exists(os.path.join(args.out, name + ".gguf")):
            build(name, spec, args.vocabs, args.out)
            print("wrote", os.path.join(args.out, name + ".gguf"), flush=True)


if __name__ == "__main__":
    main()
