#!/usr/bin/env bash
# The demo as a newcomer runs it, measured in headless Chromium: the bundled demo graded by a judge on
# the CPU engine in the tab, each response's tokens and seconds, the time left the page showed and the
# live leaderboard, until --responses are graded (scripts/bench/demo-run.mjs).
#
#   scripts/bench-demo.sh [--model qwen2.5-coder-0.5b] [--responses 40] [--threads N] [--out FILE.json]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

serve_app_for_bench qwen2.5-coder-0.5b "$@"
node scripts/bench/demo-run.mjs --origin "http://127.0.0.1:$port" "$@"
