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

model=qwen2.5-coder-0.5b
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = "--model" ] && model="${args[$((i + 1))]}"
done
setup_system
setup_wasm
setup_node
build_cli
fetch_models "$model"
./scripts/build-web.sh >&2  # its log on stderr: stdout is the table
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
./target/release/rocketjudge serve --dir . --port "$port" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/index.html" >/dev/null && break; sleep 0.1; done
node scripts/bench/browser-bench.mjs --origin "http://127.0.0.1:$port" "$@"
