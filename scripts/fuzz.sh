#!/usr/bin/env bash
# Fuzz every parser of rocketjudge for a given time and print a table: executions, coverage, findings.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default: 60 s, every target)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and cargo-fuzz (installed with
# `cargo +nightly install cargo-fuzz` when missing). Seeds are built from real files into fuzz/corpus/
# (ignored by git) by fuzz/build_seeds.py the first time; fuzz/seeds/ (hand-made) and
# tests/fuzz-regressions/ (past findings) are read as extra seed directories. Findings land in
# fuzz/artifacts/<target>/; each one becomes a regression file under tests/fuzz-regressions/<target>/
# once fixed (replayed by `cargo test`, see docs/fuzzing.md). Logs: fuzz/artifacts/logs/<target>.log.
#
# Environment:
#   FUZZ_JOBS=1         targets fuzzed at the same time (one core each)
#   FUZZ_NICE=10        niceness of the fuzzers
#   FUZZ_SANITIZER=none none (safe Rust: fastest) or address
#   FUZZ_RSS_MB=512     libFuzzer -rss_limit_mb (and -malloc_limit_mb): more is an out-of-memory finding
#   FUZZ_TIMEOUT=10     libFuzzer -timeout: seconds one input may take before it is a timeout finding
#   FUZZ_SEEDS_ARGS=    extra arguments to fuzz/build_seeds.py (--models DIR, --data DIR)
#   FUZZ_REBUILD_SEEDS=1  rebuild the seed corpora even when fuzz/corpus/<target> exists
#
# Exit status: 0 when no target found anything, 1 otherwise.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SECS=${1:-60}
shift || true
JOBS=${FUZZ_JOBS:-1}
NICE=${FUZZ_NICE:-10}
SAN=${FUZZ_SANITIZER:-none}
RSS=${FUZZ_RSS_MB:-512}
TIMEOUT=${FUZZ_TIMEOUT:-10}

ALL=(gguf tokenizer chat_template rocketeval_queries rocketeval_responses rocketeval_judgments rocketeval_scores
  fastchat_questions fastchat_answers fastchat_judgments alpacaeval arena manifest checklist_reply)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

dict_of() {
  case $1 in
    gguf | tokenizer) echo gguf ;;
    chat_template) echo jinja ;;
    checklist_reply) echo checklist ;;
    *) echo json ;;
  esac
}
max_len_of() {
  case $1 in
    gguf) echo 262144 ;;
    tokenizer) echo 131072 ;;
    *) echo 65536 ;;
  esac
}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: needs a nightly toolchain: rustup toolchain install nightly" >&2
  exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz" >&2
  cargo +nightly install cargo-fuzz
fi

# Seed corpora from real files (model headers, MT-Bench, shared data), once.
for t in "${TARGETS[@]}"; do
  if [ -n "${FUZZ_REBUILD_SEEDS:-}" ] || [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
    # shellcheck disable=SC2086
    python3 fuzz/build_seeds.py ${FUZZ_SEEDS_ARGS:-}
    break
  fi
done

# Release build with debug assertions (overflow checks) and coverage instrumentation.
(cd fuzz && nice -n "$NICE" cargo +nightly fuzz build -s "$SAN" -a) >&2
TRIPLE=$(rustc +nightly -vV | sed -n 's/^host: //p')
BIN=$ROOT/fuzz/target/$TRIPLE/release
mkdir -p fuzz/artifacts/logs

run_one() {
  local t=$1
  local log=fuzz/artifacts/logs/$t.log
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  local dirs=("fuzz/corpus/$t")
  for d in "fuzz/seeds/$t" "tests/fuzz-regressions/$t"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  : >"fuzz/artifacts/$t/.started"
  local start=$SECONDS rc=0
  nice -n "$NICE" "$BIN/$t" "${dirs[@]}" \
    -max_total_time="$SECS" -timeout="$TIMEOUT" -rss_limit_mb="$RSS" -malloc_limit_mb="$RSS" \
    -max_len="$(max_len_of "$t")" -dict="fuzz/dict/$(dict_of "$t").dict" \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 -print_pcs=0 >"$log" 2>&1 || rc=$?
  echo "rc=$rc wall=$((SECONDS - start))" >>"$log"
}

echo "fuzzing ${#TARGETS[@]} target(s), ${SECS}s each, $JOBS at a time (sanitizer: $SAN, rss limit ${RSS} MB, timeout ${TIMEOUT}s)" >&2
T0=$SECONDS
running=0
for t in "${TARGETS[@]}"; do
  if [ ! -x "$BIN/$t" ]; then
    echo "fuzz.sh: unknown target $t (targets: ${ALL[*]})" >&2
    exit 2
  fi
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
WALL=$((SECONDS - T0))

stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }

printf '\n| %-20s | %12s | %8s | %6s | %8s | %8s | %6s | %8s | %s\n' target executions exec/s cov features corpus "rss MB" findings result
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s\n' "----------------------" "-------------" "---------" "-------" "---------" "---------" "-------" "---------" "-------"
TOTAL_EXECS=0
TOTAL_FIND=0
for t in "${TARGETS[@]}"; do
  log=fuzz/artifacts/logs/$t.log
  execs=$(stat number_of_executed_units "$log")
  rate=$(stat average_exec_per_sec "$log")
  rss=$(stat peak_rss_mb "$log")
  last=$(grep -E '(INITED|NEW|REDUCE|pulse|DONE).*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  finds=$(find "fuzz/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' -o -name 'slow-unit-*' \) -newer "fuzz/artifacts/$t/.started" | wc -l)
  rc=$(sed -n 's/^rc=\([0-9]*\).*/\1/p' "$log" | tail -1)
  result=ok
  if [ "${rc:-1}" != 0 ] || [ "$finds" -gt 0 ]; then
    result="FOUND (rc ${rc:-?}): $(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^ ]+' "$log" || echo see "$log")"
    [ "$finds" -eq 0 ] && finds=1
  fi
  TOTAL_EXECS=$((TOTAL_EXECS + ${execs:-0}))
  TOTAL_FIND=$((TOTAL_FIND + finds))
  printf '| %-20s | %12s | %8s | %6s | %8s | %8s | %6s | %8s | %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$finds" "$result"
done
printf '| %-20s | %12s | %8s | %6s | %8s | %8s | %6s | %8s | %s\n' TOTAL "$TOTAL_EXECS" "" "" "" "" "" "$TOTAL_FIND" "wall ${WALL}s"

if [ "$TOTAL_FIND" -gt 0 ]; then
  cat >&2 <<EOF

Findings are in fuzz/artifacts/<target>/ (logs in fuzz/artifacts/logs/). For each one:
  fuzz/target/$TRIPLE/release/<target> fuzz/artifacts/<target>/<file>      # reproduce
  (cd fuzz && cargo +nightly fuzz tmin -s $SAN <target> artifacts/<target>/<file>)   # minimize
  fix the parser, then commit the input as tests/fuzz-regressions/<target>/<name> (replayed by cargo test)
EOF
  exit 1
fi
