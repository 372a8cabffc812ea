#!/usr/bin/env bash
# candle-core's quantized matrix product (the crate the starting design named for the CPU path) beside
# the engine's own kernels: the same random GGUF blocks of every weight type and the same shape, in one
# process — natively, then as WebAssembly in headless Chromium. A benchmark: it prints GFLOP/s and
# ratios and asserts nothing (the `differ` column shows the two products agree).
#
#   scripts/bench-candle.sh [--shape 512,1536,1536] [--threads N] [--repeat 3] [--native-only]
#
# Natively candle is built with `-C target-cpu=native`: its x86 kernels are chosen at compile time
# (cfg target_feature), so without it candle runs scalar code; ours pick theirs at run time either
# way. In the browser both run on one thread, with simd128 and relaxed-simd (as the tab's module).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

shape=512,1536,1536 threads=0 repeat=3 native_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --native-only) native_only=1; shift ;;
    *) echo "bench-candle.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$threads" = 0 ] && threads=$(nproc)
manifest=scripts/bench/candle-matmul/Cargo.toml
setup_system
setup_wasm
setup_node

echo "== native ($(grep -o -w -E 'avx2|avx512_vnni|avx_vnni|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' '))" >&2
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/candle-matmul-native \
  cargo build --release --quiet --locked --manifest-path "$manifest" >&2
target/candle-matmul-native/release/candle-matmul --shape "$shape" --threads "$threads" --repeat "$repeat"
[ -n "$native_only" ] && exit 0

echo "== WebAssembly in headless Chromium (one thread)" >&2
RUSTFLAGS='--cfg getrandom_backend="wasm_js" -C target-feature=+simd128,+relaxed-simd' CARGO_TARGET_DIR=target/candle-matmul \
  cargo build --release --quiet --locked --lib --target wasm32-unknown-unknown --manifest-path "$manifest" >&2
out=target/candle-matmul/web
wasm-bindgen --target web --out-dir "$out" target/candle-matmul/wasm32-unknown-unknown/release/candle_matmul.wasm
node scripts/bench/candle-matmul/browser.mjs --dir "$out" --shape "$shape" --repeat "$repeat"
