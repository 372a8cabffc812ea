#!/usr/bin/env bash
# Build what the web app serves: pkg/ (the wasm engine + its JS glue and TypeScript declarations) and
# web/vendor/ (third-party JS from npm, copied — never loaded from a CDN). Assumes scripts/lib/setup.sh
# has installed the toolchain (scripts/app.sh and scripts/test.sh call this after setup).
set -euo pipefail
cd "$(dirname "$0")/.."

features=""
if [ "${ROCKETJUDGE_WEB_FEATURES:-webgpu}" = "webgpu" ] && grep -q '^webgpu' crate/engine/Cargo.toml 2>/dev/null; then
  features="--features webgpu"
fi
echo "== building the wasm engine (release, simd128 $features)" >&2
# No debug info in the shipped module (the native release profile keeps line tables for profiling).
CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=debuginfo \
  cargo build --release -p rocketjudge-wasm --target wasm32-unknown-unknown $features
wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir pkg target/wasm32-unknown-unknown/release/rocketjudge_wasm.wasm
# No wasm-opt pass: Debian's binaryen (111) predates the reference-types output of current
# wasm-bindgen and produces a module that fails to instantiate. rustc's release build is already -O3.
mkdir -p web/vendor
# As .js: every static host serves that as JavaScript (not all know .mjs).
cp node_modules/echarts/dist/echarts.esm.min.mjs web/vendor/echarts.esm.min.js
cp node_modules/echarts/LICENSE web/vendor/echarts.LICENSE
ls -la pkg/*.wasm >&2
