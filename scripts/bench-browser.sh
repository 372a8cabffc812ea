#!/usr/bin/env bash
# The browser benchmark from the command line: rocketjudge and wllama side by side in headless
# Chromium (the app's "Benchmark this device" page, bench.html), on the same GGUF, threads and tokens.
# Prints prefix tokens/s, seconds per graded response and the ratios, for the CPU and WebGPU.
#
#   scripts/bench-browser.sh [--model qwen2.5-coder-0.5b] [--threads N] [--backends cpu,webgpu]
#                            [--prefix 1500] [--items 8] [--suffix 40] [--decode 64] [--repeat 2] [--json]
#
# WebGPU runs on SwiftShader here (a small workload: only that both engines run); on a machine with a
# GPU, ROCKETJUDGE_WEBGPU_ADAPTER=hardware lets Chromium use it. Native speed: `rocketjudge bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

serve_app_for_bench qwen2.5-coder-0.5b "$@"
node scripts/bench/browser-bench.mjs --origin "http://127.0.0.1:$port" "$@"
