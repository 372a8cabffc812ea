#!/usr/bin/env python3
"""Reference rankings of the MT-Bench models, for `rocketjudge meta` and the app's comparison view.

From data/arena_elo/ (bundled with the repository; arena_leaderboard_2023_snapshots.csv (transcribed from lmsys.org's
2023-06-22 leaderboard post; see data/SOURCES.md §9), with names mapped to the MT-Bench model ids:
  benchmarks/mt-bench/reference-arena-2023.json    Chatbot Arena Elo (14 models; no CIs published)
  benchmarks/mt-bench/reference-gpt4-mtbench.json  GPT-4's official MT-Bench score (25 models)
"""
import csv
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CSV = os.path.join(ROOT, "data", "arena_elo", "arena_leaderboard_2023_snapshots.csv")
OUT = os.path.join(ROOT, "benchmarks", "mt-bench")

NAMES = {
    "GPT-4": "gpt-4", "GPT-3.5-turbo": "gpt-3.5-turbo", "Claude-v1": "claude-v1", "Claude-instant-v1": "claude-instant-v1",
    "Vicuna-33B": "vicuna-33b-v1.3", "WizardLM-30B": "wizardlm-30b", "Guanaco-33B": "guanaco-33b", "Tulu-30B": "tulu-30b",
    "Guanaco-65B": "guanaco-65b", "OpenAssistant-LLaMA-30B": "oasst-sft-7-llama-30b", "PaLM-Chat-Bison-001": "palm-2-chat-bison-001",
    "Vicuna-13B": "vicuna-13b-v1.3", "MPT-30B-chat": "mpt-30b-chat", "WizardLM-13B": "wizardlm-13b", "Vicuna-7B": "vicuna-7b-v1.3",
    "Baize-v2-13B": "baize-v2-13b", "Nous-Hermes-13B": "nous-hermes-13b", "MPT-7B-Chat": "mpt-7b-chat",
    "GPT4All-13B-Snoozy": "gpt4all-13b-snoozy", "Koala-13B": "koala-13b", "MPT-30B-Instruct": "mpt-30b-instruct",
    "Falcon-40B-Instruct": "falcon-40b-instruct", "H2O-Oasst-OpenLLaMA-13B": "h2ogpt-oasst-open-llama-13b",
    "Alpaca-13B": "alpaca-13b", "ChatGLM-6B": "chatglm-6b",
}


def main():
    rows = [r for r in csv.DictReader(open(CSV)) if r["snapshot"] == "2023-06-22"]
    arena = [{"name": NAMES[r["model_as_listed"]], "rating": float(r["arena_elo"])} for r in rows if r["arena_elo"]]
    mtbench = [{"name": NAMES[r["model_as_listed"]], "rating": float(r["mt_bench_gpt4_score"])} for r in rows if r["mt_bench_gpt4_score"]]
    for name, data in [("reference-arena-2023.json", arena), ("reference-gpt4-mtbench.json", mtbench)]:
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(sorted(data, key=lambda e: -e["rating"]), f, indent=1)
            f.write("\n")
        print(name, len(data), "models")


if __name__ == "__main__":
    main()
