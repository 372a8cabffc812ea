#!/usr/bin/env bash
# Run the app: build what it needs, fetch the default judges, serve on http://127.0.0.1:8080 with the
# MT-Bench demo preloaded. Options: PORT=8080.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh
source scripts/lib/build-cache.sh

setup_rust
setup_wasm
setup_node
seed_build_cache
build_cli
# The app recommends the 1.5B judge where WebGPU runs and the 0.5B otherwise; both are served locally.
fetch_models qwen2.5-coder-1.5b qwen2.5-coder-0.5b
./scripts/build-web.sh
port="${PORT:-8080}"
log "open http://127.0.0.1:$port/ (Ctrl-C to stop)"
exec ./target/release/rocketjudge serve --dir . --port "$port"
