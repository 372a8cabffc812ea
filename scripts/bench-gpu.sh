#!/usr/bin/env bash
# The GPU benchmark in one command: on each judge, our engine on native wgpu (Vulkan, Metal or DX12) and
# on the CPU, llama.cpp beside each (all layers offloaded to its GPU backend for the GPU rows); the
# matrix products on the GPU against its dense f16 matrix peak (on cooperative matrices where it has them); the CPU engine's and llama.cpp's
# prefill at 1, 2, 4, … threads up to --threads (the first judge), with the buffer types llama.cpp's
# weights went to (AMX, CPU_REPACK); the tab's own wasm on the same GPU through Dawn under Node
# (scripts/bench/dawn-bench.mjs), set against native wgpu; and the browser's WebGPU on the hardware
# adapter for both engines (rocketjudge and wllama), in one table.
#
#   scripts/bench-gpu.sh [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--threads N] [--out DIR]
#                        [--budget SECONDS] [--total SECONDS] [--no-browser] [--offline] [-- BENCH ARGS...]
#
# The measurements run against a clock, --budget (default 480 s), in order of what a rare GPU session
# most needs: the GPU rows, the products on the GPU, the tab on Dawn, the CPU rows, the thread curve
# (most threads first); each gets what is left and is cut there, and what did not fit is listed
# under the table. The kernel tests and llama.cpp's build (when it must be built) come before the
# clock starts. --total bounds the whole script (a GPU machine's call has a limit): llama.cpp's
# build then gets at most half of it (past that the rows run without llama.cpp, and the table says
# so), and the budget shrinks to what is left but 30 s for the table. --models takes packaged names
# or GGUF paths. BENCH ARGS go to every `rocketjudge bench` (e.g. `-- --prefix-tokens 256 --items 2`
# for a quick run on a software adapter; `-- --reference none` builds and runs no llama.cpp). The
# table goes to stdout and DIR/table.md (default .cache/bench-gpu/), each run's JSON beside it.
#
# llama.cpp: llama-cpp-python 0.3.36 from python3 if importable, else built into .cache/gpu-llama with
# its GPU backend (CUDA where nvcc is found, Vulkan where glslc is, else the CPU only; the table says
# which). --offline (a machine with no network): nothing is installed or fetched; the binary is
# $RJ_BIN (default target/release/rocketjudge), the models are paths, llama.cpp is built from
# $LLAMA_SRC (the sdist; pip, cmake, ninja and scikit-build-core must be there) when python3 has
# none, with the wheels in $LLAMA_WHEELS that it needs and python3 lacks. On a machine with no GPU
# the wgpu rows run on the software adapter (lavapipe), which shows only that the script runs end to
# end.
#
# A machine that cannot get the judges either (no network, 64 MiB per transfer): scripts/gpu-kit.sh
# packs everything below in one carry and runs this there. By hand (how the H200 numbers of
# docs/measurements/speed.md were taken): here, `python3 scripts/bench/twin_gguf.py skeleton ~/.cache/rocketjudge/models/M.gguf
# M.skel` (a few MB each); carry the skeletons, a release binary and the sdist there; there,
# `python3 scripts/bench/twin_gguf.py fill M.skel M.gguf` and
# `RJ_BIN=./rocketjudge LLAMA_SRC=… scripts/bench-gpu.sh --offline --no-browser --models M.gguf,…`.
# RJ_WEBGPU_TESTS=target/release/deps/webgpu-… (the engine's WebGPU test binary, carried like the CLI)
# first checks the kernels on this adapter against the CPU engine, cooperative matrices included;
# the table's second line says whether they passed. RJ_ENGINE_TESTS=target/release/deps/
# rocketjudge_engine-… (the engine's unit tests: `cargo test --release -p rocketjudge-engine --lib
# --no-run`) checks this CPU's integer kernels the same way, AMX's tiles included where it has them.
# The Dawn rows need node, pkg/ (scripts/build-web.sh) and node_modules/webgpu (its package.json,
# index.js and dist/linux-x64: about 21 MB); carry those too, or the table says they were not run.
# The tab's CPU curve needs node and pkg-threads/ (RJ_NODE names a node that is not on the PATH).
# scripts/gpu-kit.sh packs all of it for a machine with no network, in one carry.
set -euo pipefail
cd "$(dirname "$0")/.."

models=qwen2.5-coder-0.5b,qwen2.5-coder-1.5b
threads=$(nproc 2>/dev/null || sysctl -n hw.ncpu)
out=.cache/bench-gpu
browser=1
offline=0
budget=480
total=""
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --total) total=$2; shift 2 ;;
    --no-browser) browser=0; shift ;;
    --offline) offline=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench-gpu.sh: unknown argument $1 (see the comment at the top of the script)" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a model_list <<<"$models"
rj=${RJ_BIN:-target/release/rocketjudge}
mkdir -p "$out"
rm -f "$out/llama-missing.txt"
log() { echo "bench-gpu: $*" >&2; }
# The tab's rows run on Node: RJ_NODE, else the PATH's.
node=${RJ_NODE:-node}

if [ "$offline" = 0 ]; then
  source scripts/lib/setup.sh
  setup_system
  build_cli
  for m in "${model_list[@]}"; do [ -f "$m" ] || fetch_models "$m"; done
fi
[ -x "$rj" ] || { echo "bench-gpu.sh: no rocketjudge binary at $rj (build it, or set RJ_BIN)" >&2; exit 1; }

# Whether llama.cpp runs beside ours: not where BENCH ARGS say `--reference none`. The steps' labels
# name it only where it does.
beside=", with llama.cpp beside it"
[[ " ${extra[*]-} " != *" --reference none "* ]] || beside=""

# llama.cpp with its GPU backend, unless python3 already has llama-cpp-python or no row would run it.
if [ -n "$beside" ] && ! python3 -c 'import llama_cpp' 2>/dev/null; then
  site=$PWD/.cache/gpu-llama
  if ! PYTHONPATH=$site python3 -c 'import llama_cpp' 2>/dev/null; then
    if command -v nvcc >/dev/null; then backend="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=native"
    elif command -v glslc >/dev/null; then backend="-DGGML_VULKAN=on"
    else backend=""; fi
    log "building llama-cpp-python 0.3.36 into $site (${backend:-CPU only}; a few minutes)"
    if [ "$offline" = 1 ]; then
      [ -f "${LLAMA_SRC:-}" ] || { echo "bench-gpu.sh: --offline needs LLAMA_SRC=llama_cpp_python-0.3.36.tar.gz (or llama-cpp-python importable)" >&2; exit 1; }
      # LLAMA_WHEELS: a folder of the wheels llama-cpp-python needs that python3 lacks (scripts/gpu-kit.sh packs diskcache).
      src=$LLAMA_SRC flags=(--no-build-isolation --no-index --no-deps)
      [ -z "${LLAMA_WHEELS:-}" ] || flags+=("$LLAMA_WHEELS"/*.whl)
    else
      src=llama-cpp-python==0.3.36 flags=()
    fi
    # Within --total, the build gets half of it; a build that fails or runs out leaves the rows
    # without llama.cpp (bench's reference is `auto`) rather than ending the script.
    limit=()
    [ -z "$total" ] || limit=(timeout $((total / 2)))
    CMAKE_ARGS="$backend -DLLAVA_BUILD=OFF -DGGML_NATIVE=ON" CMAKE_BUILD_PARALLEL_LEVEL=$threads \
      ${limit[@]+"${limit[@]}"} python3 -m pip install --quiet --disable-pip-version-check --target "$site" ${flags[@]+"${flags[@]}"} "$src" >&2 ||
      echo "llama.cpp: not built (its build failed${total:+ or ran past its $((total / 2)) s of --total $total}; its error is in the log): the rows have no llama.cpp beside them" >"$out/llama-missing.txt"
  fi
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
fi

# Correctness before speed, where the engine's WebGPU test binary was carried (RJ_WEBGPU_TESTS=
# target/release/deps/webgpu-…, from `cargo test --release --features webgpu --test webgpu --no-run`):
# its random-weight kernel tests on this adapter — the products of every weight type (on cooperative
# matrices too, where the device has them) and the attention — against the CPU engine.
if [ -n "${RJ_WEBGPU_TESTS:-}" ]; then
  log "the WebGPU kernels against the CPU engine on this adapter ($RJ_WEBGPU_TESTS)"
  verdict=passed
  "$RJ_WEBGPU_TESTS" --test-threads 1 --nocapture matmul_matches_cpu attention_matches_cpu >"$out/webgpu-tests.txt" 2>&1 || verdict=FAILED
  echo "WebGPU kernel tests on this adapter: $verdict; $(grep -E '^(cooperative matrices|subgroups|matmul, )' "$out/webgpu-tests.txt" | paste -sd ';')" \
    >"$out/webgpu-tests-summary.txt"
else
  echo "WebGPU kernel tests on this adapter: not run (set RJ_WEBGPU_TESTS to the carried test binary)" >"$out/webgpu-tests-summary.txt"
fi
if [ -n "${RJ_ENGINE_TESTS:-}" ]; then
  log "this CPU's integer kernels against the scalar reference, AMX's tiles against their emulation ($RJ_ENGINE_TESTS)"
  verdict=passed
  "$RJ_ENGINE_TESTS" --test-threads 1 --nocapture qmatmul >"$out/cpu-tests.txt" 2>&1 || verdict=FAILED
  echo "CPU kernel tests here: $verdict; $(grep -oE '(kernels on this CPU|AMX (tiles|not tested)).*' "$out/cpu-tests.txt" | paste -sd ';')" >>"$out/webgpu-tests-summary.txt"
else
  echo "CPU kernel tests here: not run (set RJ_ENGINE_TESTS to the carried test binary)" >>"$out/webgpu-tests-summary.txt"
fi

# AMX's tiles have run on no CPU before such a machine: one small product on them first, in a
# process of its own, so that a fault there costs this check, not every CPU row. Where it fails, the
# rest runs without them (ROCKETJUDGE_NO_AMX) and the table says so.
if grep -qw amx_int8 /proc/cpuinfo; then
  log "AMX's tiles on one small product first"
  if "$rj" bench --model "${model_list[0]}" --backend cpu --threads 2 --matmul 64,512,512 --reference none --prefix-tokens 16 \
    --items 1 --suffix-tokens 4 --decode-tokens 0 --repeat 1 --format json >"$out/amx-probe.json" 2>"$out/amx-probe.log"; then
    echo "AMX probe: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rocketjudge"].get("amx"))' "$out/amx-probe.json")" >>"$out/webgpu-tests-summary.txt"
  else
    rc=$?
    export ROCKETJUDGE_NO_AMX=1
    echo "AMX probe: FAILED (exit $rc, $(tail -c 300 "$out/amx-probe.log" | tr '\n' ' ')); the rest ran without the tiles" >>"$out/webgpu-tests-summary.txt"
  fi
fi

{
  # Threads per core: a "16-thread" machine of 8 cores gives 16 threads far less than ×16.
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) threads;" \
    "$(awk -F': ' '/^physical id/ { s[$2] } /^cpu cores/ { c = $2 } /^siblings/ { t = $2 } END { printf "%d socket(s), each %d cores and %d threads;", length(s), c, t }' /proc/cpuinfo)" \
    "CPU flags: $(grep -m1 -o -w -E 'avx2|avx512f|avx512_vnni|avx_vnni|avx512_bf16|amx_tile|amx_int8' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  if command -v nvidia-smi >/dev/null; then echo "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"; fi
  echo "command: scripts/bench-gpu.sh --models $models --threads $threads ${extra[*]:+-- ${extra[*]}}"
} >"$out/machine.txt"

# BENCH ARGS first where they name a flag, else ours: the same flag twice is an error to `bench`.
unless_given() {
  local flag=$1
  [[ " ${extra[*]-} " == *" $flag "* ]] || printf '%s\n' "$@"
}
# The rows beside the first of each judge run no llama.cpp (it ran there), unless BENCH ARGS say which.
mapfile -t none < <(unless_given --reference none)

# The measurements run against a clock (--budget, default 480 s: the 8 minutes a GPU machine's
# session allows them), the GPU's first: each step gets what is left of it (then it is cut), and a
# step that would start with less than 15 s left is not run; the table lists both.
t0=$SECONDS
if [ -n "$total" ] && [ $((total - SECONDS - 30)) -lt "$budget" ]; then budget=$((total - SECONDS - 30)); fi
: >"$out/skipped.txt"
# step LABEL FILE CMD...: CMD's output into FILE; where it fails or is cut, FILE is removed, FILE.failed
# left and LABEL listed, as where it is not run.
step() {
  local label=$1 file=$2 left
  shift 2
  rm -f "$file" "$file.failed"
  left=$((budget - (SECONDS - t0)))
  if [ "$left" -lt 15 ]; then
    log "$label: not run (the ${budget} s budget is spent)"
    echo "$label: not run, the ${budget} s budget was spent" >>"$out/skipped.txt"
    return 0
  fi
  log "$label"
  if ! timeout "$left" "$@" >"$file"; then
    log "$label failed or was cut at the budget"
    echo "$label: failed, or cut at the budget (its error is in the log)" >>"$out/skipped.txt"
    rm -f "$file"
    touch "$file.failed"
  fi
}

# 1. The GPU: each judge on native wgpu with llama.cpp beside it; what the GPU's matrix units buy
# (cooperative matrices: off by default until checked on a GPU; kept where the device ran them);
# what subgroup reductions buy (the same run without them, where the device has them).
for m in "${model_list[@]}"; do
  name=$(basename "$m" .gguf)
  step "$name on webgpu$beside" "$out/$name.webgpu.json" \
    "$rj" bench --model "$m" --backend webgpu --threads "$threads" --format json ${extra[@]+"${extra[@]}"}
  step "$name on webgpu with cooperative matrices where the device has them" "$out/$name.webgpu-coop.json" \
    "$rj" bench --model "$m" --backend webgpu --cooperative-matrix ${none[@]+"${none[@]}"} --format json ${extra[@]+"${extra[@]}"}
  grep -Eq '"backend": ?"webgpu: .*cooperative-matrix' "$out/$name.webgpu-coop.json" 2>/dev/null || rm -f "$out/$name.webgpu-coop.json"
  rm -f "$out/$name.webgpu-no-subgroups.json"
  if grep -Eq '"backend": ?"webgpu: .*subgroups\)"' "$out/$name.webgpu.json" 2>/dev/null; then
    step "$name on webgpu without subgroup operations" "$out/$name.webgpu-no-subgroups.json" \
      "$rj" bench --model "$m" --backend webgpu --no-subgroups ${none[@]+"${none[@]}"} --format json ${extra[@]+"${extra[@]}"}
  fi
done

# 2. The products on the GPU (target: ≥ 30 % of its dense f16 matrix peak; the table sets the best
# GEMM of each weight type against it), on the first judge's backend with a token workload. A
# software adapter (device type Cpu) gets a small shape: there the row only shows that it runs.
shape=512,4096,4096
grep -Eq '"backend": ?"webgpu: [^"]*, Cpu[;)]' "$out/$(basename "${model_list[0]}" .gguf).webgpu.json" 2>/dev/null && shape=64,512,512
mapfile -t few < <(unless_given --reference none; unless_given --prefix-tokens 16; unless_given --items 1; unless_given --suffix-tokens 4; unless_given --decode-tokens 0; unless_given --repeat 3)
step "matrix products ($shape) on webgpu" "$out/matmul.webgpu.json" \
  "$rj" bench --model "${model_list[0]}" --backend webgpu --cooperative-matrix --matmul "$shape" --format json \
  ${few[@]+"${few[@]}"} ${extra[@]+"${extra[@]}"}

# 3. The tab's wasm on the same GPU through Dawn, on the same workload (the same BENCH ARGS).
# gguf_file M: a judge's file (Node takes paths; `bench` also packaged names).
gguf_file() { if [ -f "$1" ]; then echo "$1"; else echo "${ROCKETJUDGE_CACHE:-$HOME/.cache/rocketjudge}/models/$1.gguf"; fi; }
dawn_missing=""
command -v "$node" >/dev/null || dawn_missing="node"
[ -d node_modules/webgpu ] || dawn_missing="${dawn_missing:+$dawn_missing, }node_modules/webgpu (npm ci)"
[ -f pkg/rocketjudge_wasm_bg.wasm ] || dawn_missing="${dawn_missing:+$dawn_missing, }pkg/ (scripts/build-web.sh)"
for m in "${model_list[@]}"; do
  name=$(basename "$m" .gguf)
  rm -f "$out/$name.dawn.json" "$out/$name.dawn.json.failed"
  [ -z "$dawn_missing" ] || continue
  step "$name: the tab's wasm on Dawn under Node" "$out/$name.dawn.json" \
    "$node" scripts/bench/dawn-bench.mjs --model "$(gguf_file "$m")" ${extra[@]+"${extra[@]}"}
done
echo "${dawn_missing:+dawn: not run (missing: $dawn_missing)}" >"$out/dawn-missing.txt"

# 4. The CPU: each judge with llama.cpp beside it; what the CPU's matrix units buy (where the run
# took AMX's tiles, the same on the VNNI kernel, and every weight type's product on both).
rm -f "$out"/matmul.cpu-*.json
amx_model=""
# cpu_products M: every weight type's M × 1536 · 1536 × 1536ᵀ product on AMX's tiles and on VNNI.
cpu_products() {
  for kernels in amx avx512-vnni; do
    step "matrix products ($1,1536,1536) on the CPU, int8 $kernels" "$out/matmul.cpu-$kernels.$1.json" \
      "$rj" bench --model "$amx_model" --backend cpu --threads "$threads" --cpu-kernels "int8 $kernels" --matmul "$1,1536,1536" --format json \
      ${few[@]+"${few[@]}"} ${extra[@]+"${extra[@]}"}
  done
}
for m in "${model_list[@]}"; do
  name=$(basename "$m" .gguf)
  step "$name on the CPU$beside" "$out/$name.cpu.json" \
    "$rj" bench --model "$m" --backend cpu --threads "$threads" --format json ${extra[@]+"${extra[@]}"}
  rm -f "$out/$name.cpu-vnni.json"
  if grep -Eq '"amx": ?"the products' "$out/$name.cpu.json" 2>/dev/null; then
    step "$name on the CPU without AMX (the VNNI kernel)" "$out/$name.cpu-vnni.json" \
      "$rj" bench --model "$m" --backend cpu --threads "$threads" --cpu-kernels "int8 avx512-vnni" ${none[@]+"${none[@]}"} --format json ${extra[@]+"${extra[@]}"}
    if [ -z "$amx_model" ]; then
      amx_model=$m
      cpu_products 512
    fi
  fi
done

# 5. Every CPU core: the CPU engine's prefill and decode and llama.cpp's at 1, 2, 4, … threads up to
# --threads, on the first judge (llama.cpp at exactly those threads: no pilot; 512 + 4 × 40 tokens,
# the workload of the Xeon's earlier curve, and 32 decoded),
# each with its speed-up over one thread; llama.cpp's weight buffer types say which of its kernels
# ran (AMX, CPU_REPACK); ours with each operation's time and how its parallel steps spread over the
# threads (--splits: the tasks' work, the busiest worker, the pool's own time), which says which
# operations keep threads waiting, and what the CPU itself gives those threads (--cpu-ceiling): the
# product kernel alone from the caches (prefill's bound) and a plain read of memory (decode's). One
# more run on one thread with the work split as for the most threads (--splits N): the speed-up the
# split alone allows there, beside the one measured. The most threads first: the point the target
# names, should the budget end the curve early.
curve=()
for ((t = 1; t < threads; t *= 2)); do curve+=("$t"); done
curve+=("$threads")
mapfile -t once < <(unless_given --repeat 1; unless_given --decode-tokens 32; unless_given --prefix-tokens 512; unless_given --items 4)
for ((i = ${#curve[@]} - 1; i >= 0; i--)); do
  t=${curve[i]}
  step "${model_list[0]} on the CPU with $t thread$([ "$t" = 1 ] || echo s)$beside" "$out/curve.$t.json" \
    "$rj" bench --model "${model_list[0]}" --backend cpu --threads "$t" --no-reference-pilot --splits --cpu-ceiling --format json \
    ${once[@]+"${once[@]}"} ${extra[@]+"${extra[@]}"}
done
echo "${curve[*]}" >"$out/curve.txt"
rm -f "$out/replay.json"
if [ "$threads" -gt 1 ]; then
  step "${model_list[0]} on one thread, the work split as for $threads and replayed" "$out/replay.json" \
    "$rj" bench --model "${model_list[0]}" --backend cpu --threads 1 --splits "$threads" ${none[@]+"${none[@]}"} --format json \
    ${once[@]+"${once[@]}"} ${extra[@]+"${extra[@]}"}
fi
# 6. The tab's CPU engine on every core: its threaded wasm on a pool of Node worker threads, started
# as the page starts it (dawn-bench.mjs --backend cpu --threads T; V8 as in Chromium, but Node's
# version of it), at the same points and on the same workload as ours, the most threads first.
tab_missing=""
command -v "$node" >/dev/null || tab_missing="node"
[ -f pkg-threads/rocketjudge_wasm_bg.wasm ] || tab_missing="${tab_missing:+$tab_missing, }pkg-threads/ (scripts/build-web.sh)"
for ((i = ${#curve[@]} - 1; i >= 0; i--)); do
  t=${curve[i]}
  rm -f "$out/tab-curve.$t.json" "$out/tab-curve.$t.json.failed"
  [ -z "$tab_missing" ] || continue
  step "the tab's CPU engine (its wasm) on $t Node worker thread$([ "$t" = 1 ] || echo s)" "$out/tab-curve.$t.json" \
    "$node" scripts/bench/dawn-bench.mjs --model "$(gguf_file "${model_list[0]}")" --backend cpu --threads "$t" \
    ${once[@]+"${once[@]}"} ${extra[@]+"${extra[@]}"}
done
echo "${tab_missing:+the CPU curve of the tab: not run (missing: $tab_missing)}" >"$out/tab-missing.txt"
# 7. Where AMX's tiles start to pay (amx::MIN_ROWS, 4 rows until measured): the products of fewer
# rows on both kernels, where the run took the tiles, the most rows first.
if [ -n "$amx_model" ]; then
  for rows in 64 16 4; do cpu_products "$rows"; done
fi
echo "measurements: $((SECONDS - t0)) s of a ${budget} s budget" >>"$out/skipped.txt"

python3 - "$out" "${model_list[@]}" <<'EOF' | tee "$out/table.md"
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
print(open(os.path.join(out, "machine.txt")).read())
print(open(os.path.join(out, "webgpu-tests-summary.txt")).read())
if os.path.exists(p := os.path.join(out, "llama-missing.txt")):
    print(open(p).read())
print("| judge | engine on | prefill tok/s | s/response | llama.cpp on | prefill tok/s | s/response | ours ÷ llama.cpp (prefill) |")
print("|---|---|---|---|---|---|---|---|")
for m in models:
    name = os.path.basename(m).removesuffix(".gguf")
    for backend in ("webgpu", "webgpu-coop", "webgpu-no-subgroups", "cpu", "cpu-vnni"):
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
def first_json(kind):
    """The first judge's JSON of this kind, if it ran."""
    path = os.path.join(out, f"{os.path.basename(models[0]).removesuffix('.gguf')}.{kind}.json")
    return json.load(open(path)) if os.path.exists(path) else None
cpu = first_json("cpu")
print(f"\nAMX: {(cpu['rocketjudge'].get('amx') or 'this CPU has none') if cpu else 'not measured (no CPU row)'}")
ran = first_json("webgpu") or cpu
if ran:
    w = ran["workload"]
    print(f"\nworkload: prefix {w['prefix_tokens']} tokens + {w['items']} items × {w['suffix_tokens']:.0f} tokens, median of {w['repeat']}")

# The tab's path (its wasm on Dawn) against native wgpu on the same GPU and workload (target: ≥ 0.7×).
print("\n| judge | the tab's wasm on Dawn (node) | subgroups / shader-f16 / subgroup matrix offered | prefill tok/s | s/response | decode tok/s | native wgpu prefill tok/s | Dawn ÷ native (prefill) |")
print("|---|---|---|---|---|---|---|---|")
for m in models:
    name = os.path.basename(m).removesuffix(".gguf")
    path = os.path.join(out, f"{name}.dawn.json")
    if os.path.exists(path + ".failed"):
        print(f"| {name} | failed: its error is in the log (no adapter Dawn takes? without a GPU, set VK_ICD_FILENAMES to SwiftShader's) | – | – | – | – | – | – |")
    if not os.path.exists(path):
        continue
    d = json.load(open(path))
    native_path = os.path.join(out, f"{name}.webgpu.json")
    native = json.load(open(native_path))["rocketjudge"] if os.path.exists(native_path) else None
    f = d["features"]
    offered = " / ".join("yes" if any(k in x for x in f) else "no" for k in ("subgroups", "shader-f16", "subgroup-matrix"))
    dec = f"{d['decode_tokens_per_s']:.1f}" if d["decode_tokens_per_s"] else "–"
    vs = [f"{native['prefill_tokens_per_s']:.0f}", f"×{d['prefill_tokens_per_s'] / native['prefill_tokens_per_s']:.2f}"] if native else ["–", "–"]
    print(f"| {name} | {d['backend']} | {offered} | {d['prefill_tokens_per_s']:.0f} | {d['seconds_per_response']:.3f} | {dec} | " + " | ".join(vs) + " |")
print(open(os.path.join(out, "dawn-missing.txt")).read().strip())

# Dense f16 matrix peaks with f32 accumulation (datasheets, without sparsity): the target's measure.
F16_PEAKS = [("H200 NVL", 835.0), ("H200", 989.0), ("H100 NVL", 835.0), ("H100 PCIE", 756.0), ("H100", 989.0), ("A100", 312.0)]
path = os.path.join(out, "matmul.webgpu.json")
if os.path.exists(path):
    r = json.load(open(path))
    s, backend = r["matmul"], r["rocketjudge"]["backend"]
    peak = next((p for k, p in F16_PEAKS if k in backend.upper()), None)
    print(f"\n| matrix products on {backend}: {s['m']}×{s['k']} · {s['n']}×{s['k']}ᵀ | GEMM GFLOP/s | of the dense f16 matrix peak{f' ({peak:.0f} TFLOP/s)' if peak else ''} | GEMV GB/s (weights) |")
    print("|---|---|---|---|")
    for t in s["types"]:
        share = f"{t['gemm_gflops'] / peak / 10:.1f} %" if peak else "unknown GPU"
        print(f"| {t['type']} | {t['gemm_gflops']:.0f} | {share} | {t['gemv_weight_gb_per_s']:.0f} |")
else:
    print("\nmatrix products: not run")
# AMX against VNNI on each weight type's product, at each number of rows that ran (M × 1536 · 1536 × 1536ᵀ).
cpu_mm = {}
for rows in (512, 64, 16, 4):
    for k in ("amx", "avx512-vnni"):
        if os.path.exists(p := os.path.join(out, f"matmul.cpu-{k}.{rows}.json")):
            cpu_mm.setdefault(rows, {})[k] = {t["type"]: t["gemm_gflops"] for t in json.load(open(p))["matmul"]["types"]}
if cpu_mm:
    ms = list(cpu_mm)
    print("\n| matrix products on the CPU, M × 1536 · 1536 × 1536ᵀ: type | " + " | ".join(f"M = {m}: AMX / VNNI GFLOP/s" for m in ms) + " |")
    print("|---|" + "---|" * len(ms))
    cell = lambda a, v: f"{a:.0f} / {v:.0f} (×{a / v:.2f})" if a and v else " / ".join(f"{g:.0f}" if g else "–" for g in (a, v))
    for t in next(iter(next(iter(cpu_mm.values())).values())):
        print(f"| {t} | " + " | ".join(cell(cpu_mm[m].get("amx", {}).get(t), cpu_mm[m].get("avx512-vnni", {}).get(t)) for m in ms) + " |")

curve = [int(t) for t in open(os.path.join(out, "curve.txt")).read().split()]
rows = {t: json.load(open(p)) for t in curve if os.path.exists(p := os.path.join(out, f"curve.{t}.json"))}
print(f"\n| {os.path.basename(models[0]).removesuffix('.gguf')} on the CPU: threads | ours prefill tok/s | × 1 thread | the kernel alone × 1 thread | llama.cpp prefill tok/s | × 1 thread | ours ÷ llama.cpp | ours decode tok/s | × 1 thread | a memory read × 1 thread | llama.cpp decode tok/s | × 1 thread | llama.cpp's weight buffers |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
one = rows.get(1) or {}
x = lambda v, base: f"×{v / base:.2f}" if v and base else "–"
n = lambda v: f"{v:.0f}" if v else "–"
get = lambda row, who, key: (row.get(who) or {}).get(key)
for t, r in rows.items():
    o, l = get(r, "rocketjudge", "prefill_tokens_per_s"), get(r, "llama_cpp", "prefill_tokens_per_s")
    od, ld = get(r, "rocketjudge", "decode_tokens_per_s"), get(r, "llama_cpp", "decode_tokens_per_s")
    ceiling = r.get("cpu_ceiling") or {}
    alone, read = (ceiling.get("compute_gmacs") or {}).get("speedup"), (ceiling.get("memory_gbs") or {}).get("speedup")
    bufs = ", ".join((r.get("llama_cpp") or {}).get("weight_buffers", [])) or "–"
    print(f"| {t} | {n(o)} | {x(o, get(one, 'rocketjudge', 'prefill_tokens_per_s'))} | {x(alone, 1)} | {n(l)} | {x(l, get(one, 'llama_cpp', 'prefill_tokens_per_s'))} | {x(o, l)} "
          f"| {n(od)} | {x(od, get(one, 'rocketjudge', 'decode_tokens_per_s'))} | {x(read, 1)} | {n(ld)} | {x(ld, get(one, 'llama_cpp', 'decode_tokens_per_s'))} | {bufs} |")
# Where the threads wait: each operation's milliseconds at each thread count (--op-times), and its
# speed-up at the most threads over one; the time outside every operation is serial. At the most
# threads (--splits): the work of its tasks against one thread's (what the machine adds), how evenly
# it fell (the work ÷ threads ÷ the busiest worker's), the pool's own time; and the speed-up the
# split alone allows there (the replay on one thread).
times = {t: r["rocketjudge"].get("op_times") for t, r in rows.items() if r["rocketjudge"].get("op_times")}
replay_path = os.path.join(out, "replay.json")
replay = json.load(open(replay_path))["rocketjudge"]["op_times"] if os.path.exists(replay_path) else None
if times:
    ts = list(times)
    per = lambda t: {**{o["op"]: o["seconds"] for o in times[t]["ops"]}, "outside every operation": times[t]["outside_s"]}
    split = lambda ot: {o["op"]: o.get("splits") or {} for o in ot["ops"]}
    ms = {t: per(t) for t in ts}
    top, first = split(times[ts[-1]]), split(times[ts[0]])
    allowed = {o["op"]: o["seconds"] / o["splits"]["bound_s"] for o in replay["ops"] if o["splits"]["bound_s"] > 0} if replay else {}
    print("\n| operation | " + " | ".join(f"ms at {t}" for t in ts) + f" | × at {ts[-1]} over {ts[0]} | work at {ts[-1]} ÷ at {ts[0]} | balance at {ts[-1]} | pool's own ms at {ts[-1]} | × the split allows at {curve[-1]} |")
    print("|---|" + "---|" * (len(ts) + 5))
    for op in ms[ts[0]]:
        cells = [f"{ms[t][op] * 1e3:.1f}" if op in ms[t] else "–" for t in ts]
        a, b = ms[ts[0]].get(op), ms[ts[-1]].get(op)
        s, s1 = top.get(op, {}), first.get(op, {})
        steps = s.get("regions", 0) > 0 and s.get("busiest_s", 0) > 0
        work = f"×{s['work_s'] / s1['work_s']:.2f}" if steps and s1.get("work_s") else "–"
        balance = f"{s['work_s'] / ts[-1] / s['busiest_s'] * 100:.0f} %" if steps else "–"
        pool = f"{(s['wall_s'] - s['busiest_s']) * 1e3:.1f}" if steps else "–"
        print(f"| {op} | " + " | ".join(cells) + f" | {f'×{a / b:.2f}' if a and b else '–'} | {work} | {balance} | {pool} | {f'×{allowed[op]:.2f}' if op in allowed else '–'} |")
    if replay:
        print(f"\nThe split alone allows a repetition ×{(replay['wall_s'] - replay['splits'].get('instrument_s', 0)) / replay['splits']['bound_s']:.2f} at {curve[-1]} threads (one thread, the work split as for {curve[-1]}, each task timed and replayed on {curve[-1]} workers).")
# The tab's CPU engine at the same thread counts, beside ours natively (the same workload).
tab = {t: json.load(open(p)) for t in curve if os.path.exists(p := os.path.join(out, f"tab-curve.{t}.json"))}
if tab:
    first = next(iter(tab.values()))
    print(f"\n| the tab's CPU engine (its wasm, Node {first['node']}): threads | the kernel that won the race | prefill tok/s | × 1 thread | decode tok/s | × 1 thread | native prefill tok/s | tab ÷ native (prefill) |")
    print("|---|---|---|---|---|---|---|---|")
    base = tab.get(1) or {}
    for t, d in tab.items():
        native = get(rows.get(t) or {}, "rocketjudge", "prefill_tokens_per_s")
        p, dec = d["prefill_tokens_per_s"], d["decode_tokens_per_s"]
        print(f"| {t} | {d['cpu_kernels']} | {n(p)} | {x(p, base.get('prefill_tokens_per_s'))} | {n(dec)} | {x(dec, base.get('decode_tokens_per_s'))} | {n(native)} | {x(p, native)} |")
print(open(os.path.join(out, "tab-missing.txt")).read().strip())
print()
print(open(os.path.join(out, "skipped.txt")).read().strip())
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
