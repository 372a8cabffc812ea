#!/usr/bin/env bash
# Build what the web app serves: pkg/ and pkg-threads/ (the wasm engine, single-threaded and on a
# pool of Web Workers, + their JS glue and TypeScript declarations) and
# web/vendor/ (third-party JS and wasm from npm, copied — never loaded from a CDN). Assumes scripts/lib/setup.sh
# has installed the toolchain (scripts/app.sh and scripts/test.sh call this after setup).
set -euo pipefail
cd "$(dirname "$0")/.."

features=""
if [ "${ROCKETJUDGE_WEB_FEATURES:-webgpu}" = "webgpu" ] && grep -q '^webgpu' crate/engine/Cargo.toml 2>/dev/null; then
  features="--features webgpu"
fi
# No debug info in the shipped modules (the native release profile keeps line tables for profiling).
export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=debuginfo
# ROCKETJUDGE_WASM_NAMES=1 keeps the function names, for profiling the tab (docs/measurements/speed.md).
names=--remove-name-section
[ -n "${ROCKETJUDGE_WASM_NAMES:-}" ] && names=
bindgen() { wasm-bindgen --target web $names --remove-producers-section --out-dir "$2" "$1"; }

echo "== building the wasm engine (release, simd128 $features): pkg/" >&2
# A target folder of its own (as the threaded build has): no lock shared with the native build, so
# scripts/test.sh builds the app while the native tests run.
cargo build --release -p rocketjudge-wasm --target wasm32-unknown-unknown $features --target-dir target/wasm
bindgen target/wasm/wasm32-unknown-unknown/release/rocketjudge_wasm.wasm pkg

# The threaded engine: shared memory and atomics need a std built with them (nightly -Z build-std,
# the toolchain pinned in scripts/lib/wasm-threads-toolchain), plus relaxed-simd's dot product. The
# page picks it where it is cross-origin isolated and the browser has relaxed SIMD.
toolchain=$(cat scripts/lib/wasm-threads-toolchain)
echo "== building the threaded wasm engine ($toolchain, atomics, relaxed-simd $features): pkg-threads/" >&2
# The linker arguments make the memory shared and imported (4 GiB at most) and export the
# thread-local storage symbols wasm-bindgen's thread support initializes in each worker.
link='-C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296 -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base'
RUSTFLAGS="--cfg getrandom_backend=\"wasm_js\" -C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128,+relaxed-simd $link" \
  cargo "+$toolchain" build --release -p rocketjudge-wasm --target wasm32-unknown-unknown -Z build-std=panic_abort,std \
  --features "threads${features:+,webgpu}" --target-dir target/wasm-threads
bindgen target/wasm-threads/wasm32-unknown-unknown/release/rocketjudge_wasm.wasm pkg-threads
# No wasm-opt pass: Debian's binaryen (111) predates the reference-types output of current
# wasm-bindgen and produces a module that fails to instantiate. rustc's release build is already -O3.
mkdir -p web/vendor
# As .js: every static host serves that as JavaScript (not all know .mjs).
cp node_modules/echarts/dist/echarts.esm.min.mjs web/vendor/echarts.esm.min.js
cp node_modules/echarts/LICENSE web/vendor/echarts.LICENSE
# wllama (llama.cpp compiled to wasm): only the benchmark page (bench.html) loads it, to time it beside
# our engine on the same device. A dev dependency: the grading app never uses it.
mkdir -p web/vendor/wllama
cp node_modules/@wllama/wllama/esm/index.js node_modules/@wllama/wllama/esm/wasm/wllama.wasm web/vendor/wllama/
cp node_modules/@wllama/wllama/LICENCE web/vendor/wllama/LICENSE
node -p "require('./node_modules/@wllama/wllama/package.json').version" > web/vendor/wllama/VERSION
ls -la pkg/*.wasm pkg-threads/*.wasm >&2
