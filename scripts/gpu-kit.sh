#!/usr/bin/env bash
# The GPU benchmark (scripts/bench-gpu.sh) on a machine that has no network and takes 64 MiB a call
# (the lent GPU machines): everything it runs, packed here into one carry, and unpacked and run there.
#
#   scripts/gpu-kit.sh pack [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b]
#   scripts/gpu-kit.sh run [--total SECONDS] [-- BENCH-GPU ARGS...]
#
# pack (here, with the network): builds the CLI with WebGPU, the engine's WebGPU and unit-test
# binaries, pkg/ and pkg-threads/ (scripts/build-web.sh), and packs them with the judges' skeletons
# (scripts/bench/twin_gguf.py: header and tokenizer; `run` fills in random weights), Node
# (fetch_node in scripts/lib/setup.sh: Node 24, whose V8 runs the tab's threaded build), Dawn's
# dawn.node (npm `webgpu`, linux-x64) and llama-cpp-python's sdist without what its build does not
# read (vocabularies, docs, tools, examples, tests: 77 MB → ~4 MB) into .cache/gpu-kit/kit.tar.xz,
# then checks the carry and the working tree together against the 64 MiB. It prints the call to make.
#
# run (there): unpacks pkg/, pkg-threads/ and node_modules/webgpu into the working tree (ignored
# paths) and the rest into .cache/gpu-kit-unpacked/, fills the twins, and runs scripts/bench-gpu.sh
# --offline --no-browser on them within --total (default 540 s: a call's 600 s limit, less
# unpacking); the table and every JSON go to $OUT (the device tool's folder that comes back), else
# .cache/bench-gpu. Arguments after -- go to bench-gpu.sh (e.g. `-- -- --reference none`).
set -euo pipefail
cd "$(dirname "$0")/.."

KIT=.cache/gpu-kit
DISKCACHE=diskcache==5.6.3
LIMIT_MIB=64
log() { echo "gpu-kit: $*" >&2; }

# The executable of a cargo test target (cargo test ARGS --no-run), from cargo's JSON messages.
test_binary() {
  cargo test --release --locked "$@" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
paths = [m["executable"] for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]]
print(paths[-1])'
}

pack() {
  local models=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b
  while [ $# -gt 0 ]; do
    case $1 in
      --models) models=$2; shift 2 ;;
      *) echo "gpu-kit.sh pack: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  source scripts/lib/setup.sh
  setup_system
  setup_wasm
  setup_node
  build_cli
  local stage=$KIT/stage
  rm -rf "$KIT" && mkdir -p "$stage/bin" "$stage/models" "$stage/node_modules/webgpu/dist/linux-x64"

  log "the binaries (release, stripped)"
  cp target/release/rocketjudge "$stage/bin/rocketjudge"
  cp "$(test_binary -p rocketjudge-engine --features webgpu --test webgpu)" "$stage/bin/webgpu-tests"
  cp "$(test_binary -p rocketjudge-engine --lib)" "$stage/bin/engine-tests"
  strip "$stage"/bin/*
  ./scripts/build-web.sh
  cp -r pkg pkg-threads "$stage/"

  log "the judges' skeletons ($models)"
  local m
  IFS=, read -r -a list <<<"$models"
  fetch_models "${list[@]}"
  for m in "${list[@]}"; do
    python3 scripts/bench/twin_gguf.py skeleton "${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/models/$m.gguf" "$stage/models/$m.skel"
  done

  log "Node 24 (fetch_node) and Dawn (npm webgpu, linux-x64)"
  strip -o "$stage/bin/node" "$(fetch_node)"
  cp node_modules/webgpu/package.json node_modules/webgpu/index.js "$stage/node_modules/webgpu/"
  cp node_modules/webgpu/dist/linux-x64/dawn.node "$stage/node_modules/webgpu/dist/linux-x64/"

  log "llama-cpp-python's source, without what its build does not read"
  local tmp
  tmp=$(mktemp -d)
  fetch_llama_sdist "$tmp"
  tar -xzf "$tmp/$LLAMA_SDIST" -C "$tmp"
  local src=$tmp/${LLAMA_SDIST%.tar.gz} cpp
  cpp=$src/vendor/llama.cpp
  rm -rf "$src/.git" "$cpp/models" "$cpp/docs" "$cpp/tools" "$cpp/examples" "$cpp/tests" "$cpp/benches" "$cpp/media" \
    "$cpp/.github" "$cpp/gguf-py" "$cpp/conversion" "$cpp/pocs" "$cpp/.devops" "$cpp/app" "$cpp/skills" "$cpp/grammars" "$cpp/requirements"
  tar -C "$tmp" -cf - "${LLAMA_SDIST%.tar.gz}" | xz -T0 -6 >"$stage/${LLAMA_SDIST%.gz}.xz"
  # The one package llama-cpp-python imports that the GPU machines' Python lacks.
  mkdir -p "$stage/wheels"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --dest "$stage/wheels" "$DISKCACHE" >&2
  rm -rf "$tmp"

  log "packing (xz)"
  tar -C "$stage" -cf - . | xz -T0 -9 >"$KIT/kit.tar.xz"
  rm -rf "$stage"
  # The device tool carries the working tree (tracked files, and untracked ones git does not ignore)
  # with the carry: both count against the limit.
  local tree kit
  tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | du -cb --files0-from=- | tail -1 | cut -f1)
  kit=$(stat -c %s "$KIT/kit.tar.xz")
  python3 -c 'import sys; k, t, limit = map(int, sys.argv[1:]); m = 1 << 20
print(f"gpu-kit: the kit {k / m:.1f} MiB, the working tree {t / m:.1f} MiB: {(k + t) / m:.1f} of the {limit} MiB a call carries", file=sys.stderr)' "$kit" "$tree" "$LIMIT_MIB"
  [ $((kit + tree)) -le $((LIMIT_MIB * 1048576)) ] || { echo "gpu-kit.sh: over the $LIMIT_MIB MiB a call carries" >&2; exit 1; }
  echo "$models" >"$KIT/models"
  cat <<EOF
Carry it with the device tool (run): carry [".cache/gpu-kit"], command "scripts/gpu-kit.sh run",
timeout_s 600. The table comes back in \$OUT/table.md, each run's JSON and log beside it.
EOF
}

run() {
  local total=540 args=()
  while [ $# -gt 0 ]; do
    case $1 in
      --total) total=$2; shift 2 ;;
      --) shift; args=("$@"); break ;;
      *) echo "gpu-kit.sh run: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  [ -f "$KIT/kit.tar.xz" ] || { echo "gpu-kit.sh run: no $KIT/kit.tar.xz (scripts/gpu-kit.sh pack makes it; carry $KIT)" >&2; exit 1; }
  # Beside the kit, not in it: a kit folder that holds the filled twins (1.5 GB) cannot be carried.
  local started=$SECONDS out=${OUT:-.cache/bench-gpu} unpacked=$KIT-unpacked
  log "unpacking"
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  xz -dc -T0 "$KIT/kit.tar.xz" | tar -C "$unpacked" -xf -
  rm -rf pkg pkg-threads node_modules/webgpu && mkdir -p node_modules
  mv "$unpacked/pkg" "$unpacked/pkg-threads" . && mv "$unpacked/node_modules/webgpu" node_modules/
  local m twins=()
  IFS=, read -r -a list <<<"$(cat "$KIT/models")"
  for m in "${list[@]}"; do
    python3 scripts/bench/twin_gguf.py fill "$unpacked/models/$m.skel" "$unpacked/models/$m.gguf"
    twins+=("$unpacked/models/$m.gguf")
  done
  mkdir -p "$out"
  log "unpacked in $((SECONDS - started)) s; scripts/bench-gpu.sh within the $((total - (SECONDS - started))) s left of --total $total"
  set +e
  RJ_BIN=$unpacked/bin/rocketjudge RJ_WEBGPU_TESTS=$unpacked/bin/webgpu-tests RJ_ENGINE_TESTS=$unpacked/bin/engine-tests \
    RJ_NODE=$unpacked/bin/node LLAMA_SRC=$(ls "$unpacked"/llama_cpp_python-*.tar.xz) LLAMA_WHEELS=$unpacked/wheels \
    scripts/bench-gpu.sh --offline --no-browser --out "$out" --total $((total - (SECONDS - started))) \
    --models "$(IFS=,; echo "${twins[*]}")" ${args[@]+"${args[@]}"} 2>"$out/log.txt"
  local rc=$?
  set -e
  tail -n 20 "$out/log.txt" >&2
  return $rc
}

case ${1:-} in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: scripts/gpu-kit.sh pack [--models A,B] | run [--total SECONDS] [-- BENCH-GPU ARGS]" >&2; exit 2 ;;
esac
