#!/usr/bin/env bash
# The GPU benchmark in one command: on each judge, our engine on native wgpu (Vulkan, Metal or DX12) and
# on the CPU, llama.cpp beside each (all layers offloaded to its GPU backend for the GPU rows); the
# tab's own wasm on the same GPU through Dawn under Node (scripts/bench/dawn-bench.mjs), set against
# native wgpu; and the browser's WebGPU on the hardware adapter for both engines (rocketjudge and
# wllama), in one table.
#
#   scripts/bench-gpu.sh [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--threads N] [--out DIR]
#                        [--no-browser] [--offline] [-- BENCH ARGS...]
#
# --models takes packaged names or GGUF paths. BENCH ARGS go to every `rocketjudge bench` (e.g.
# `-- --prefix-tokens 256 --items 2` for a quick run on a software adapter). The table goes to stdout
# and DIR/table.md (default .cache/bench-gpu/), each run's JSON beside it.
#
# llama.cpp: llama-cpp-python 0.3.36 from python3 if importable, else built into .cache/gpu-llama with
# its GPU backend (CUDA where nvcc is found, Vulkan where glslc is, else the CPU only; the table says
# which). --offline (a machine with no network): nothing is installed or fetched; the binary is
# $RJ_BIN (default target/release/rocketjudge), the models are paths, llama.cpp is built from
# $LLAMA_SRC (the sdist, a .tar.gz; pip, cmake, ninja and scikit-build-core must be there) when python3
# has none. On a machine with no GPU the wgpu rows run on the software adapter (lavapipe), which shows
# only that the script runs end to end.
#
# A machine that cannot get the judges either (how the H200 numbers of docs/measurements/speed.md were taken: no network,
# 64 MiB per transfer): here, `python3 scripts/bench/twin_gguf.py skeleton ~/.cache/rocketjudge/models/M.gguf
# M.skel` (a few MB each); carry the skeletons, a release binary and the sdist there; there,
# `python3 scripts/bench/twin_gguf.py fill M.skel M.gguf` and
# `RJ_BIN=./rocketjudge LLAMA_SRC=… scripts/bench-gpu.sh --offline --no-browser --models M.gguf,…`.
# The Dawn rows need node, pkg/ (scripts/build-web.sh) and node_modules/webgpu (its package.json,
# index.js and dist/linux-x64: about 21 MB); carry those too, or the table says they were not run.
set -euo pipefail
cd "$(dirname "$0")/.."

models=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b
threads=$(nproc 2>/dev/null || sysctl -n hw.ncpu)
out=.cache/bench-gpu
browser=1
offline=0
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-browser) browser=0; shift ;;
    --offline) offline=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench-gpu.sh: unknown argument $1 (see the comment at the top of the script)" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a model_list <<<"$models"
rj=${RJ_BIN:-target/release/rocketjudge}
mkdir -p "$out"
log() { echo "bench-gpu: $*" >&2; }

if [ "$offline" = 0 ]; then
  source scripts/lib/setup.sh
  setup_system
  build_cli
  for m in "${model_list[@]}"; do [ -f "$m" ] || fetch_models "$m"; done
fi
[ -x "$rj" ] || { echo "bench-gpu.sh: no rocketjudge binary at $rj (build it, or set RJ_BIN)" >&2; exit 1; }

# llama.cpp with its GPU backend, unless python3 already has llama-cpp-python.
if ! python3 -c 'import llama_cpp' 2>/dev/null; then
  site=$PWD/.cache/gpu-llama
  if ! PYTHONPATH=$site python3 -c 'import llama_cpp' 2>/dev/null; then
    if command -v nvcc >/dev/null; then backend="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=native"
    elif command -v glslc >/dev/null; then backend="-DGGML_VULKAN=on"
    else backend=""; fi
    log "building llama-cpp-python 0.3.36 into $site (${backend:-CPU only}; a few minutes)"
    if [ "$offline" = 1 ]; then
      [ -f "${LLAMA_SRC:-}" ] || { echo "bench-gpu.sh: --offline needs LLAMA_SRC=llama_cpp_python-0.3.36.tar.gz (or llama-cpp-python importable)" >&2; exit 1; }
      src=$LLAMA_SRC flags=(--no-build-isolation --no-index --no-deps)
    else
      src=llama-cpp-python==0.3.36 flags=()
    fi
    CMAKE_ARGS="$backend -DLLAVA_BUILD=OFF -DGGML_NATIVE=ON" CMAKE_BUILD_PARALLEL_LEVEL=$threads \
      python3 -m pip install --quiet --disable-pip-version-check --target "$site" ${flags[@]+"${flags[@]}"} "$src" >&2
  fi
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
fi

{
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) threads;" \
    "CPU flags: $(grep -m1 -o -w -E 'avx2|avx512f|avx512_vnni|avx_vnni|avx512_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  if command -v nvidia-smi >/dev/null; then echo "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"; fi
  echo "command: scripts/bench-gpu.sh --models $models --threads $threads ${extra[*]:+-- ${extra[*]}}"
} >"$out/machine.txt"

for m in "${model_list[@]}"; do
  name=$(basename "$m" .gguf)
  for backend in webgpu cpu; do
    log "$name on $backend, with llama.cpp beside it"
    "$rj" bench --model "$m" --backend "$backend" --threads "$threads" --format json ${extra[@]+"${extra[@]}"} >"$out/$name.$backend.json"
  done
  # What subgroup reductions buy: the same WebGPU run without them, where the device has them.
  rm -f "$out/$name.webgpu-no-subgroups.json"
  if grep -Eq '"backend": ?"webgpu: .*subgroups\)"' "$out/$name.webgpu.json"; then
    log "$name on webgpu without subgroup operations"
    # No llama.cpp run here (it was in the row above), unless BENCH ARGS already say which reference.
    no_reference=(--reference none)
    [[ " ${extra[*]-} " == *" --reference "* ]] && no_reference=()
    "$rj" bench --model "$m" --backend webgpu --no-subgroups ${no_reference[@]+"${no_reference[@]}"} --format json \
      ${extra[@]+"${extra[@]}"} >"$out/$name.webgpu-no-subgroups.json"
  fi
done

# The tab's wasm on the same GPU through Dawn, on the same workload (the same BENCH ARGS).
dawn_missing=""
command -v node >/dev/null || dawn_missing="node"
[ -d node_modules/webgpu ] || dawn_missing="${dawn_missing:+$dawn_missing, }node_modules/webgpu (npm ci)"
[ -f pkg/rocketjudge_wasm_bg.wasm ] || dawn_missing="${dawn_missing:+$dawn_missing, }pkg/ (scripts/build-web.sh)"
for m in "${model_list[@]}"; do
  name=$(basename "$m" .gguf)
  rm -f "$out/$name.dawn.json"
  [ -z "$dawn_missing" ] || continue
  file=$m
  [ -f "$file" ] || file=${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/models/$m.gguf
  log "$name: the tab's wasm on Dawn under Node"
  node scripts/bench/dawn-bench.mjs --model "$file" ${extra[@]+"${extra[@]}"} >"$out/$name.dawn.json" ||
    { log "$name on Dawn failed"; rm -f "$out/$name.dawn.json"; }
done
echo "${dawn_missing:+dawn: not run (missing: $dawn_missing)}" >"$out/dawn-missing.txt"

python3 - "$out" "${model_list[@]}" <<'EOF' | tee "$out/table.md"
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
print(open(os.path.join(out, "machine.txt")).read())
print("| judge | engine on | prefill tok/s | s/response | llama.cpp on | prefill tok/s | s/response | ours ÷ llama.cpp (prefill) |")
print("|---|---|---|---|---|---|---|---|")
for m in models:
    name = os.path.basename(m).removesuffix(".gguf")
    for backend in ("webgpu", "webgpu-no-subgroups", "cpu"):
        path = os.path.join(out, f"{name}.{backend}.json")
        if not os.path.exists(path):
            continue
        r = json.load(open(path))
        o, l = r["rocketjudge"], r.get("llama_cpp")
        st = (l or {}).get("settings")
        how = f" ({st['threads']} threads, flash attention {'on' if st['flash_attn'] else 'off'}, batch {st['n_batch']} (physical {st['n_ubatch']}))" if st else ""
        ref = [f"{l['llama_cpp_python']} {l.get('device', 'cpu')}{how}", f"{l['prefill_tokens_per_s']:.0f}", f"{l['seconds_per_response']:.3f}",
               f"×{r['ratio']['prefill_tokens_per_s']:.2f}"] if l else ["(no llama.cpp)", "–", "–", "–"]
        print("| " + " | ".join([name, o["backend"], f"{o['prefill_tokens_per_s']:.0f}", f"{o['seconds_per_response']:.3f}", *ref]) + " |")
w = json.load(open(os.path.join(out, f"{os.path.basename(models[0]).removesuffix('.gguf')}.webgpu.json")))["workload"]
print(f"\nworkload: prefix {w['prefix_tokens']} tokens + {w['items']} items × {w['suffix_tokens']:.0f} tokens, median of {w['repeat']}")

# The tab's path (its wasm on Dawn) against native wgpu on the same GPU and workload (target: ≥ 0.7×).
print("\n| judge | the tab's wasm on Dawn (node) | subgroups / shader-f16 / subgroup matrix offered | prefill tok/s | s/response | decode tok/s | native wgpu prefill tok/s | Dawn ÷ native (prefill) |")
print("|---|---|---|---|---|---|---|---|")
for m in models:
    name = os.path.basename(m).removesuffix(".gguf")
    path = os.path.join(out, f"{name}.dawn.json")
    if not os.path.exists(path):
        continue
    d = json.load(open(path))
    native = json.load(open(os.path.join(out, f"{name}.webgpu.json")))["rocketjudge"]
    f = d["features"]
    offered = " / ".join("yes" if any(k in x for x in f) else "no" for k in ("subgroups", "shader-f16", "subgroup-matrix"))
    dec = f"{d['decode_tokens_per_s']:.1f}" if d["decode_tokens_per_s"] else "–"
    print(f"| {name} | {d['backend']} | {offered} | {d['prefill_tokens_per_s']:.0f} | {d['seconds_per_response']:.3f} | {dec} | "
          f"{native['prefill_tokens_per_s']:.0f} | ×{d['prefill_tokens_per_s'] / native['prefill_tokens_per_s']:.2f} |")
print(open(os.path.join(out, "dawn-missing.txt")).read().strip())
EOF

if [ "$browser" = 1 ]; then
  if command -v node >/dev/null && [ "$offline" = 0 ]; then
    for m in "${model_list[@]}"; do
      log "$m in headless Chromium on the hardware adapter (rocketjudge and wllama)"
      ROCKETJUDGE_WEBGPU_ADAPTER=hardware scripts/bench-browser.sh --model "$m" --backends webgpu | tee -a "$out/table.md"
    done
  else
    echo "browser: not run (needs node, the npm packages and Chromium, which --offline cannot fetch)" | tee -a "$out/table.md"
  fi
fi
