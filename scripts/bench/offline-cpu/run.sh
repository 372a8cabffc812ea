#!/usr/bin/env bash
# CPU benchmark of rocketjudge against llama.cpp on random-weight twins of the judges, for a machine
# with no network. Run from the repo root:   bash .cache/gpu-run/run.sh
#
#  1. fills twins of qwen2.5-coder-0.5b and -1.5b from the skeletons beside this script
#     (twin_gguf.py fill; numpy needed);
#  2. builds llama-cpp-python 0.3.36 (CPU only) from the stripped sdist beside this script with
#     pip --no-build-isolation --no-deps --no-index --target (scikit-build-core, cmake, ninja and a C++
#     compiler from the machine), then smoke-tests it on the first twin in a subprocess; on a crash or a
#     failed build it moves to the next flag set ("tier"):
#       native-noamx    GGML_NATIVE=ON, -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 in C/CXX flags
#       portable-avx512 GGML_NATIVE=OFF, AVX AVX2 FMA F16C AVX512 AVX512_VNNI AVX_VNNI on, AMX off
#       portable-avx2   GGML_NATIVE=OFF, defaults (AVX AVX2 FMA F16C BMI2), no AVX-512/VNNI/AMX
#                       (only tried while less than RUN_TIER3_BEFORE_S seconds have gone by)
#  3. `rocketjudge bench --model TWIN --backend cpu --threads 16 --repeat 2 --reference llama.cpp
#     --format json` per twin, 0.5B first (`--reference none` if no llama.cpp build survived, or a
#     rerun with it if the run with llama.cpp failed).
# Everything goes to $OUT (else .cache/gpu-run/out): run.log, machine.txt, build-*.log, smoke-*.log,
# M.cpu.json / M.cpu.stderr, summary.md. Twins and the build live in RUN_WORK (default
# .cache/gpu-run-work, outside the carried folder, so a rerun on a warm machine reuses the build).
#
# Knobs (environment): RUN_MODELS, RUN_THREADS (16), RUN_JOBS (16: CMAKE_BUILD_PARALLEL_LEVEL),
# RUN_BENCH_ARGS ("--repeat 2"), RUN_SKEL_DIR (extra folder searched for M.skel), RUN_WORK,
# RUN_TIERS ("native-noamx portable-avx512 portable-avx2"), RUN_REBUILD=1 (ignore a kept build),
# RUN_BENCH_TIMEOUT (300 s each), RJ_BIN (default: the stripped rocketjudge beside this script).
# RUN_DRY=1: a cheap local rehearsal: smollm2-135m, 2 threads, 2 build jobs, a short workload.
set -uo pipefail
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$PWD
OUTDIR=${OUT:-$B/out}
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/run.log") 2>&1

if [ "${RUN_DRY:-0}" = 1 ]; then
  : "${RUN_MODELS:=smollm2-135m}" "${RUN_THREADS:=2}" "${RUN_JOBS:=2}"
  : "${RUN_BENCH_ARGS:=--prefix-tokens 128 --items 2 --suffix-tokens 16 --repeat 1 --decode-tokens 8}"
fi
MODELS=${RUN_MODELS:-qwen2.5-coder-0.5b qwen2.5-coder-1.5b}
THREADS=${RUN_THREADS:-16}
JOBS=${RUN_JOBS:-16}
BENCH_ARGS=${RUN_BENCH_ARGS:---repeat 2}
WORK=${RUN_WORK:-$ROOT/.cache/gpu-run-work}
TIERS=${RUN_TIERS:-native-noamx portable-avx512 portable-avx2}
TIER3_BEFORE=${RUN_TIER3_BEFORE_S:-200}
BENCH_TIMEOUT=${RUN_BENCH_TIMEOUT:-300}
RJ=${RJ_BIN:-$B/rocketjudge}
SDIST=$B/llama_cpp_python-0.3.36.tar.gz
SITE=$WORK/llama-site
mkdir -p "$WORK/twins"

log() { echo "[$(date +%H:%M:%S) +${SECONDS}s] $*"; }
step() { # step NAME CMD...: run, print its time and exit status
  local name=$1 t0=$SECONDS rc
  shift
  log "BEGIN $name"
  "$@"
  rc=$?
  log "END $name: rc=$rc, $((SECONDS - t0))s"
  return $rc
}

log "run.sh in $ROOT; out=$OUTDIR work=$WORK models=[$MODELS] threads=$THREADS jobs=$JOBS bench args=[$BENCH_ARGS]${RUN_DRY:+ (RUN_DRY=$RUN_DRY)}"

# ------------------------------------------------------------------ 0. the machine
AMX_NOFLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
machine() {
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "nproc: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "cpu flags (selected): $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|avx512vl|avx512_vnni|avx_vnni|avx512_bf16|avx512vbmi|amx_tile|amx_int8|amx_bf16|fma|f16c)$' | tr '\n' ' ')"
    command -v nvidia-smi >/dev/null && echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1)"
    echo "kernel: $(uname -r)"
    echo "python3: $(python3 --version 2>&1) at $(command -v python3)"
    echo "numpy: $(python3 -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)"
    echo "scikit-build-core: $(python3 -c 'import scikit_build_core; print(scikit_build_core.__version__)' 2>&1 | tail -1)"
    echo "pip: $(python3 -m pip --version 2>&1)"
    echo "cmake: $(cmake --version 2>&1 | head -1)"
    echo "ninja: $(ninja --version 2>&1)"
    echo "cc: $(cc --version 2>&1 | head -1); c++: $(c++ --version 2>&1 | head -1)"
    if echo 'int main(void){return 0;}' | cc $AMX_NOFLAGS -x c - -o "$WORK/amxflags-test" 2>/dev/null; then
      echo "cc accepts: $AMX_NOFLAGS"
    else
      echo "cc REJECTS: $AMX_NOFLAGS"
    fi
    echo "native compiler defines (cc -march=native): $(cc -march=native -dM -E -x c /dev/null 2>/dev/null | grep -oE '__(AVX512F|AVX512VNNI|AVXVNNI|AMX_TILE|AMX_INT8|AMX_BF16)__' | sort | tr '\n' ' ')"
    echo "rocketjudge: $RJ ($(stat -c %s "$RJ" 2>/dev/null) bytes, sha256 $(sha256sum "$RJ" 2>/dev/null | cut -c1-16), $("$RJ" --version 2>&1))"
    echo "bench: --backend cpu --threads $THREADS $BENCH_ARGS"
    echo "--- nproc"
    nproc
    echo "--- lscpu"
    lscpu 2>&1
  } >"$OUTDIR/machine.txt"
  sed -n '1,16p' "$OUTDIR/machine.txt"
}
step machine machine

# ------------------------------------------------------------------ 1. the twins
find_skel() {
  local d
  for d in "$B" ${RUN_SKEL_DIR:+"$RUN_SKEL_DIR"}; do
    [ -f "$d/$1.skel" ] && { echo "$d/$1.skel"; return 0; }
  done
  return 1
}
fill_twins() {
  local m skel ok=0
  for m in $MODELS; do
    skel=$(find_skel "$m") || { log "no skeleton $m.skel (looked in $B ${RUN_SKEL_DIR:-})"; ok=1; continue; }
    python3 "$B/twin_gguf.py" fill "$skel" "$WORK/twins/$m.gguf" || { log "fill of $m failed"; ok=1; }
  done
  return $ok
}
step fill-twins fill_twins

# ------------------------------------------------------------------ 2. llama.cpp, CPU only
COMMON_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF"
tier_args() {
  case $1 in
    native-noamx)
      if grep -q '^cc accepts' "$OUTDIR/machine.txt"; then
        echo "-DGGML_NATIVE=ON -DCMAKE_C_FLAGS='$AMX_NOFLAGS' -DCMAKE_CXX_FLAGS='$AMX_NOFLAGS'"
      else # a compiler that knows no AMX cannot emit it either
        echo "-DGGML_NATIVE=ON"
      fi ;;
    portable-avx512)
      echo "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX_VNNI=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
    native-norepack) # the native build without the CPU backend's weight repacking (an earlier CPU-only build crashed at load)
      echo "$(tier_args native-noamx) -DGGML_CPU_REPACK=OFF" ;;
    native-norepack-noomp)
      echo "$(tier_args native-noamx) -DGGML_CPU_REPACK=OFF -DGGML_OPENMP=OFF" ;;
    portable-avx2)
      echo "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
    *) return 1 ;;
  esac
}
build_llama() { # build_llama TIER
  local args
  args="$COMMON_ARGS $(tier_args "$1")" || return 1
  rm -rf "$SITE"
  mkdir -p "$SITE"
  log "CMAKE_ARGS=$args CMAKE_BUILD_PARALLEL_LEVEL=$JOBS (log: build-$1.log)"
  CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS python3 -m pip install -v --disable-pip-version-check \
    --no-build-isolation --no-deps --no-index --no-cache-dir --target "$SITE" "$SDIST" >"$OUTDIR/build-$1.log" 2>&1
  local rc=$?
  if [ $rc != 0 ]; then
    tail -25 "$OUTDIR/build-$1.log"
    return $rc
  fi
  echo "$1" >"$SITE/TIER"
  echo "$args" >"$SITE/CMAKE_ARGS"
}
inspect_llama() { # what the CPU library was compiled with: AMX tile and VNNI instruction counts
  local lib=$SITE/llama_cpp/lib/libggml-cpu.so
  ls -la "$SITE/llama_cpp/lib/" 2>&1 | sed 's/^/  /'
  if command -v objdump >/dev/null && [ -f "$lib" ]; then
    objdump -d --no-show-raw-insn "$lib" >"$WORK/ggml-cpu.dis" 2>/dev/null
    echo "libggml-cpu.so: AMX instructions (ldtilecfg/tileloadd/tdpb*): $(grep -cE '\s(ldtilecfg|tileloadd|tileloaddt1|tdpb[a-z]+)\s' "$WORK/ggml-cpu.dis");" \
      "vpdpbusd: $(grep -c 'vpdpbusd' "$WORK/ggml-cpu.dis"); zmm uses: $(grep -c 'zmm' "$WORK/ggml-cpu.dis")"
  fi
  grep -oE '\-march=native|-mavx512[a-z]*|-mavxvnni|-mamx[a-z-]*|-mno-amx[a-z-]*' "$OUTDIR/build-$(cat "$SITE/TIER").log" 2>/dev/null | sort | uniq -c | sed 's/^/  compile flag seen: /' | head -20
}
smoke() { # smoke TIER: a tiny eval on the first twin, in a subprocess
  local twin rc
  twin=$WORK/twins/$(echo $MODELS | cut -d' ' -f1).gguf
  PYTHONPATH=$PYPATH timeout 180 python3 -X faulthandler "$B/llama_smoke.py" "$twin" "$THREADS" >"$OUTDIR/smoke-$1.log" 2>&1
  rc=$?
  cat "$OUTDIR/smoke-$1.log" | cut -c1-400
  if [ $rc != 0 ] && [ "${RUN_SIMULATE_CRASH:-}" != "$1" ] && command -v gdb >/dev/null; then
    log "smoke crashed (rc=$rc): a backtrace under gdb -> smoke-$1.gdb.txt"
    PYTHONPATH=$PYPATH timeout 120 gdb -q -batch -iex 'set debuginfod enabled off' -ex run -ex bt -ex 'x/6i $pc' \
      -ex 'info registers rip' --args "$PYEXE" "$B/llama_smoke.py" "$twin" "$THREADS" >"$OUTDIR/smoke-$1.gdb.txt" 2>&1
    grep -E '^#[0-9]|=>' "$OUTDIR/smoke-$1.gdb.txt" | head -15
  fi
  [ "${RUN_SIMULATE_CRASH:-}" = "$1" ] && { log "RUN_SIMULATE_CRASH=$1: treating the smoke test as crashed"; rc=139; }
  return $rc
}

PYEXE=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || command -v python3) # gdb needs the real binary, not a shim
PYPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
if ! python3 -c 'import jinja2, diskcache, typing_extensions, markupsafe' 2>/dev/null; then
  log "python3 lacks some of jinja2/diskcache/typing_extensions/markupsafe (llama_cpp imports them): adding $B/pydeps"
  PYPATH=$PYPATH:$B/pydeps
fi

LLAMA_TIER=none
LLAMA_NOTE=""
if ! python3 -c 'import scikit_build_core' 2>/dev/null || ! { command -v cmake >/dev/null || python3 -c 'import cmake' 2>/dev/null; }; then
  LLAMA_NOTE="no scikit-build-core or cmake on this machine: llama.cpp not built"
  log "$LLAMA_NOTE"
else
  kept=$(cat "$SITE/TIER" 2>/dev/null || true)
  if [ -n "$kept" ] && [ "${RUN_REBUILD:-0}" != 1 ] && [ "${RUN_SIMULATE_CRASH:-}" != "$kept" ]; then
    log "reusing the build kept in $SITE (tier $kept; RUN_REBUILD=1 to rebuild)"
    if step "smoke-$kept" smoke "$kept"; then LLAMA_TIER=$kept; else LLAMA_NOTE+=" kept $kept build: smoke test crashed;"; rm -rf "$SITE"; fi
  fi
  if [ "$LLAMA_TIER" = none ]; then
    for tier in $TIERS; do
      if [ "$tier" = portable-avx2 ] && [ "$SECONDS" -ge "$TIER3_BEFORE" ]; then
        log "skipping tier $tier: ${SECONDS}s gone (>= $TIER3_BEFORE)"
        LLAMA_NOTE+=" $tier skipped (time);"
        continue
      fi
      if ! step "build-$tier" build_llama "$tier"; then LLAMA_NOTE+=" $tier: build failed;"; continue; fi
      step "inspect-$tier" inspect_llama
      if step "smoke-$tier" smoke "$tier"; then LLAMA_TIER=$tier; break; fi
      LLAMA_NOTE+=" $tier: smoke test crashed;"
    done
  fi
fi
if [ "$LLAMA_TIER" != none ]; then
  LLAMA_FLAGS="llama.cpp build: tier $LLAMA_TIER; CMAKE_ARGS=$(cat "$SITE/CMAKE_ARGS"); CMAKE_BUILD_PARALLEL_LEVEL=$JOBS${LLAMA_NOTE:+; earlier:$LLAMA_NOTE}"
  LLAMA_FLAGS+=$'\n'"$(inspect_llama 2>&1 | grep -v '^  ')"
else
  LLAMA_FLAGS="llama.cpp build: NONE;$LLAMA_NOTE (bench runs with --reference none)"
fi
{ echo "--- flags"; echo "$LLAMA_FLAGS"; } >>"$OUTDIR/machine.txt"
log "$LLAMA_FLAGS"

# ------------------------------------------------------------------ 3. the benchmarks
bench() { # bench MODEL
  local m=$1 twin=$WORK/twins/$1.gguf ref=llama.cpp rc
  [ -f "$twin" ] || { log "no twin for $m"; return 1; }
  [ "$LLAMA_TIER" = none ] && ref=none
  log "$RJ bench --model $twin --backend cpu --threads $THREADS $BENCH_ARGS --reference $ref --format json"
  # shellcheck disable=SC2086
  PYTHONPATH=$PYPATH timeout "$BENCH_TIMEOUT" "$RJ" bench --model "$twin" --backend cpu --threads "$THREADS" $BENCH_ARGS \
    --reference "$ref" --format json >"$OUTDIR/$m.cpu.json" 2>"$OUTDIR/$m.cpu.stderr"
  rc=$?
  tail -5 "$OUTDIR/$m.cpu.stderr"
  if [ $rc != 0 ] && [ $ref = llama.cpp ]; then
    log "bench with llama.cpp failed (rc=$rc): ours alone -> $m.cpu.noref.json"
    # shellcheck disable=SC2086
    timeout "$BENCH_TIMEOUT" "$RJ" bench --model "$twin" --backend cpu --threads "$THREADS" $BENCH_ARGS \
      --reference none --format json >"$OUTDIR/$m.cpu.noref.json" 2>"$OUTDIR/$m.cpu.noref.stderr"
    tail -5 "$OUTDIR/$m.cpu.noref.stderr"
  fi
  return $rc
}
for m in $MODELS; do
  step "bench-$m" bench "$m"
done

# ------------------------------------------------------------------ summary
python3 - "$OUTDIR" "$THREADS" $MODELS <<'EOF' | tee "$OUTDIR/summary.md"
import json, os, sys
out, threads, models = sys.argv[1], sys.argv[2], sys.argv[3:]
flags = open(os.path.join(out, "machine.txt")).read().split("--- flags\n")[-1].strip()
print(f"## rocketjudge vs llama.cpp, CPU backend, {threads} threads, random-weight twins\n")
print(flags + "\n")
print("| judge | ours on | ours prefill tok/s | ours s/resp | ours decode tok/s | llama.cpp prefill tok/s | llama.cpp s/resp | llama.cpp decode tok/s | prefill ratio | peak RSS ours/llama (MiB) |")
print("|---|---|---|---|---|---|---|---|---|---|")
f = lambda v, p=1: "–" if v is None else f"{v:.{p}f}"
mib = lambda v: "–" if v is None else f"{v / 2**20:,.0f}"
work = None
for m in models:
    r = None
    for name in (f"{m}.cpu.json", f"{m}.cpu.noref.json"):
        try:
            r = json.load(open(os.path.join(out, name)))
            break
        except (OSError, ValueError):
            pass
    if r is None:
        print(f"| {m} | (failed: see {m}.cpu.stderr) | | | | | | | | |")
        continue
    work = r.get("workload", work)
    o, l = r["rocketjudge"], r.get("llama_cpp") or {}
    ratio = (r.get("ratio") or {}).get("prefill_tokens_per_s")
    peak = o.get("prefill_fraction_of_peak")
    print(f"| {m} | {o.get('backend', '?')}{f', prefill {peak:.0%} of int8 peak' if peak else ''} | {f(o.get('prefill_tokens_per_s'))} | {f(o.get('seconds_per_response'), 3)} | {f(o.get('decode_tokens_per_s'))} | "
          f"{f(l.get('prefill_tokens_per_s'))} | {f(l.get('seconds_per_response'), 3)} | {f(l.get('decode_tokens_per_s'))} | "
          f"{'×' + f(ratio, 2) if ratio else '–'} | {mib(o.get('peak_rss_bytes'))} / {mib(l.get('peak_rss_bytes'))} |")
if work:
    print(f"\nworkload: {json.dumps(work)}")
EOF
for f in "$OUTDIR"/build-*.log; do # the verbose build logs are ~1.5 MB: keep them small for the trip back
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 262144 ] && gzip -f "$f"
done
log "done in ${SECONDS}s; files in $OUTDIR: $(ls "$OUTDIR" | tr '\n' ' ')"
