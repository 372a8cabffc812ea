#!/usr/bin/env python3
"""Golden special-token behaviour of llama.cpp's tokenizer on its own test vocabularies.

For each vocabulary rocketjudge supports (llama.cpp's models/ggml-vocab-*.gguf, from the
llama-cpp-python sdist: see `fetch_llama_testdata` in scripts/lib/setup.sh), llama.cpp loads the
vocabulary alone and records:
  - texts built from special-token spellings the vocabulary has (end-of-generation, FIM, BOS/EOS,
    chat markers, `</s>`), tokenized with and without special-token parsing (no BOS);
  - every token llama.cpp counts as end-of-generation (`llama_vocab_is_eog`).
Output: tests/golden/engine/vocab-specials.json, read by crate/engine/tests/vocabs.rs.

Usage: pip install llama-cpp-python==0.3.36
       python3 scripts/golden/vocab_golden.py --vocabs ~/.cache/rocketjudge/llama-testdata/0.3.36/vocabs
"""
import argparse
import json
import os

import llama_cpp
from llama_cpp import Llama

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "golden", "engine", "vocab-specials.json")

VOCABS = ["command-r", "gpt-2", "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "refact", "starcoder"]

# Spellings llama.cpp looks for by text (src/llama-vocab.cpp: EOT, EOM, FIM and EOG detection),
# and common chat and sentence markers.
SPELLINGS = [
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "▁<PRE>", "<|fim_suffix|>", "<fim-suffix>",
    "<fim_suffix>", "<SUF>", "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "<|fim_pad|>", "<fim-pad>",
    "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<|file_sep|>", "<s>", "<unk>", "<pad>", "<|im_start|>", "<|user|>", "<|assistant|>", "<|system|>",
    "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|START_OF_TURN_TOKEN|>",
    "<|END_OF_TURN_TOKEN|>", "<|placeholder1|>",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocabs", required=True)
    args = ap.parse_args()
    out = {"generated_by": "scripts/golden/vocab_golden.py", "llama_cpp_python": llama_cpp.__version__, "vocabularies": []}
    for name in VOCABS:
        file = f"ggml-vocab-{name}.gguf"
        llm = Llama(model_path=os.path.join(args.vocabs, file), vocab_only=True, verbose=False)
        vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        n = llama_cpp.llama_vocab_n_tokens(vocab)
        text_of = {}
        for i in range(n):
            text_of.setdefault(llm._model.token_get_text(i), i)
        present = [s for s in SPELLINGS if s in text_of]
        texts = [f"a{s}b" for s in present] + [f"Hello {s} world" for s in present]
        if len(present) > 1:
            texts.append(" ".join(present) + "\n" + "".join(present))
        cases = [{"text": t,
                  "plain": llm.tokenize(t.encode(), add_bos=False, special=False),
                  "special": llm.tokenize(t.encode(), add_bos=False, special=True)} for t in texts]
        eog = [i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i)]
        out["vocabularies"].append({"file": file, "spellings": present, "eog": eog, "cases": cases})
        print(file, len(present), "spellings,", len(cases), "cases, eog", eog, flush=True)
        del llm
    with open(OUT, "w") as f:
        json.dump(out, f, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
